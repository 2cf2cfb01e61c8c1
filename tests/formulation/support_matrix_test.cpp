// The support matrix (src/formulation/support.hpp), run. Every cell
// formulation x integrator x KKT path x feature that the source says runs
// is run on a small constrained mechanism and compared with a reference
// combination on the same mechanism; every other cell must be refused
// before the run, with the source's reason, by Simulate() and by the
// command line (exit status 2, nothing written). docs/support.md must be
// what the source generates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/analysis.hpp"
#include "daedalus/model.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"
#include "formulation/support.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace support_matrix_test {

namespace fs = std::filesystem;
using internal::Feature;
using internal::KktPath;
using ::testing::HasSubstr;

// ------------------------------------------------------------ the model

// Two uniform links of 0.5 m and 0.5 kg each in maximal coordinates (x, y,
// theta per body, declared per body so that the sparse path sees block
// structure), a pivot and a revolute joint (two rows each), gravity g, a
// motor torque a sin(3 t) on the first link, released at rest straight at
// 0.3 rad. Optional: the event x1 = 0 (the second link's centre crosses
// the vertical through the pivot, about 0.4 s after the release) and the
// pivot marked unilateral (its horizontal reaction changes sign during the
// swing, which opens and closes violation intervals); or the event
// without stopping, its reset map reversing every velocity (which keeps
// the constraints and the energy: the chain swings back).
constexpr double kHalf = 0.125;  // half a link's length [m]
constexpr double kMass = 0.5;    // one link's mass [kg]

Model TestChain(bool event, bool unilateral, bool reset = false) {
  ModelBuilder b("support_chain");
  b.Coordinates({"x0", "y0", "theta0", "x1", "y1", "theta1"});
  const Param g = b.Parameter("g", 9.81);
  const Param a = b.Parameter("a", 0.3);
  for (int i = 0; i < 2; ++i) {
    const int x = 3 * i;
    b.ConstantBodyMass(Touches{{x, x + 1, x + 2}}, [](const Eigen::VectorXd&) {
      const double l = 2 * kHalf;
      return Eigen::Vector3d(kMass, kMass, kMass * l * l / 12.0)
          .asDiagonal()
          .toDenseMatrix();
    });
    b.PotentialEnergyTerm(Touches{{x + 1}}, [=](const auto& s) {
      return kMass * s.p[g] * s.q[x + 1];
    });
  }
  b.Holonomic(
      "pivot", Touches{{0, 1, 2}},
      [](const auto& s) {
        using S = Scalar<decltype(s)>;
        Eigen::Matrix<S, 2, 1> r;
        r << s.q[0] - kHalf * sin(s.q[2]), s.q[1] + kHalf * cos(s.q[2]);
        return r;
      },
      2, unilateral);
  b.Holonomic(
      "joint", Touches{{0, 1, 2, 3, 4, 5}},
      [](const auto& s) {
        using S = Scalar<decltype(s)>;
        Eigen::Matrix<S, 2, 1> r;
        r << (s.q[0] + kHalf * sin(s.q[2])) - (s.q[3] - kHalf * sin(s.q[5])),
            (s.q[1] - kHalf * cos(s.q[2])) - (s.q[4] + kHalf * cos(s.q[5]));
        return r;
      },
      2);
  b.Input(
      "motor",
      [](const auto& s) {
        using S = Scalar<decltype(s)>;
        VecX<S> col = VecX<S>::Zero(6);
        col[2] = 1.0;
        return col;
      },
      [=](const auto& s) { return s.p[a] * sin(3.0 * s.t); });
  b.Quadrature("height2", [](const auto& s) { return s.q[4] * s.q[4]; });
  b.Functional(
      "G", [](const auto& s) { return s.q[4] * s.q[4]; },
      [](const auto& s) { return s.q[3]; });
  if (event) b.Event("x1_zero", [](const auto& s) { return s.q[3]; });
  if (reset) {
    b.Event(
        "x1_zero", [](const auto& s) { return s.q[3]; },
        EventOptions{.stop = false});
    b.Reset("x1_zero", [](const auto& s) {
      using S = Scalar<decltype(s)>;
      VecX<S> out(12);
      out << s.q, -s.v;
      return out;
    });
  }
  return std::move(b).Build();
}

InitialState Release() {
  const double th = 0.3;
  InitialState x;
  x.q.resize(6);
  x.v = Eigen::VectorXd::Zero(6);
  for (int i = 0; i < 2; ++i) {
    x.q[3 * i] = (2 * i + 1) * kHalf * std::sin(th);
    x.q[3 * i + 1] = -(2 * i + 1) * kHalf * std::cos(th);
    x.q[3 * i + 2] = th;
  }
  return x;
}

// ---------------------------------------------------------- the cells

struct Cell {
  Formulation f;
  Integrator i;
  KktPath path;
  Feature feature;
};

std::string Name(const Cell& c) {
  std::string s = std::string(ToString(c.f)) + "_" + ToString(c.i) + "_" +
                  internal::ToString(c.path) + "_";
  switch (c.feature) {
    case Feature::kNone:
      s += "plain";
      break;
    case Feature::kEvents:
      s += "events";
      break;
    case Feature::kFeasibility:
      s += "feasibility";
      break;
    case Feature::kForward:
      s += "forward";
      break;
    case Feature::kAdjoint:
      s += "adjoint";
      break;
    case Feature::kDriftEscalation:
      s += "escalation";
      break;
    case Feature::kCounterfactual:
      s += "counterfactual";
      break;
    case Feature::kResets:
      s += "resets";
      break;
    case Feature::kEventSensitivities:
      s += "event_sens";
      break;
  }
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

// Every cell in the release build. The sanitizer build (-O0, ASan, 10 to
// 50 times slower) runs a pairwise covering array instead: integrator i
// and feature x (indices) meet in exactly one cell, whose formulation is
// (i + x) mod 5 and KKT path (i + x) mod 2. Every pair of formulation,
// integrator, feature and KKT path then occurs at least once (for fixed i
// the 9 features give all 5 formulations and both paths; for fixed x the 8
// integrators do), in 72 cells instead of 720: the code paths the
// sanitizers watch are those of the pairs, and the numbers of every cell
// are checked by the release build. (The one alpha cell that runs here,
// index3_hht_sparse_feasibility, is the slowest: 61 s, against 24 ms in
// release, on either path: its iteration matrix, evaluated at every step,
// is n tangent sweeps of the chain's energies on nested dual numbers.)
std::vector<Cell> AllCells(bool covering_array) {
  const std::vector<Formulation> forms = {
      Formulation::kUnstabilized, Formulation::kBaumgarte,
      Formulation::kProjection, Formulation::kGgl, Formulation::kIndex3};
  const std::vector<Integrator> integrators = {Integrator::kCvodesBdf,
                                               Integrator::kCvodesAdams,
                                               Integrator::kIdas,
                                               Integrator::kStormerVerlet,
                                               Integrator::kSymplecticEuler,
                                               Integrator::kRattle,
                                               Integrator::kGeneralizedAlpha,
                                               Integrator::kHht};
  const std::vector<Feature> features = {Feature::kNone,
                                         Feature::kEvents,
                                         Feature::kFeasibility,
                                         Feature::kForward,
                                         Feature::kAdjoint,
                                         Feature::kDriftEscalation,
                                         Feature::kCounterfactual,
                                         Feature::kResets,
                                         Feature::kEventSensitivities};
  std::vector<Cell> cells;
  for (size_t fi = 0; fi < forms.size(); ++fi)
    for (size_t ii = 0; ii < integrators.size(); ++ii)
      for (size_t xi = 0; xi < features.size(); ++xi)
        for (KktPath p : {KktPath::kDense, KktPath::kSparse}) {
          const size_t s = ii + xi;
          if (covering_array && s % forms.size() != fi) continue;
          if (covering_array && (p == KktPath::kSparse) != (s % 2 == 1))
            continue;
          cells.push_back({forms[fi], integrators[ii], p, features[xi]});
        }
  return cells;
}

// The cells this build integrates: all of them in release, the covering
// array under the sanitizers.
std::vector<Cell> CellsToRun() {
#ifdef DAEDALUS_SANITIZER_BUILD
  return AllCells(true);
#else
  return AllCells(false);
#endif
}

bool FixedStep(Integrator i) {
  return i == Integrator::kStormerVerlet || i == Integrator::kSymplecticEuler ||
         i == Integrator::kRattle;
}

bool Alpha(Integrator i) {
  return i == Integrator::kGeneralizedAlpha || i == Integrator::kHht;
}

// The options of a cell: 0.6 s (the event falls inside), rtol 1e-8 and
// atol 1e-10 for the SUNDIALS integrators, a 1e-3 s step for the fixed-step
// ones. The IDAS forms run with their defaults: the multipliers weighed by
// the step in the Newton test (docs/formulations.md, "Scaling of the
// algebraic unknowns"; before it, GGL's corrector stalled on this chain at
// t = 0 and the cells set --multiplier-atol 1).
SimulationOptions CellOptions(const Cell& c) {
  SimulationOptions o;
  o.formulation = c.f;
  o.integrator = c.i;
  o.kkt.method =
      c.path == KktPath::kDense ? KktMethod::kSchur : KktMethod::kSparseSchur;
  o.t_end = 0.6;
  o.output_step = 0.05;
  o.rtol = 1e-8;
  o.atol = 1e-10;
  // Index 3 keeps only the positions in the local error test (velocities
  // and multipliers are resolved one and two orders less, src/integrate/
  // idas.cpp), so its global error is well above the tolerance: on this
  // chain against the reference, 2.5e-5 at rtol 1e-6, 1.8e-5 at 1e-7,
  // 3.7e-6 at 1e-8 and below 1e-6 from 1e-9 (atol = rtol / 100). It runs
  // at rtol 1e-10 here, where the same 1e-6 comparison applies.
  if (c.f == Formulation::kIndex3) {
    o.rtol = 1e-10;
    o.atol = 1e-12;
  }
  // The forward cells on IDAS run with the defaults too: the staggered
  // corrector (the default there) converges the state before the
  // sensitivities. The simultaneous one needed --multiplier-atol 1 on the
  // index-1 forms.
  if (FixedStep(c.i)) o.step = 1e-3;
  // Generalized-alpha and HHT (second order, error per unit step on the
  // positions: their steps grow as rtol^(1/2)): rtol 1e-6 keeps their
  // global error on this chain near 1e-5 (at rtol 1e-7 every cell passed
  // a 1e-5 comparison, at 2.4 s a cell; docs/formulations.md).
  if (Alpha(c.i)) {
    o.rtol = 1e-6;
    o.atol = 1e-8;
  }
  if (c.feature == Feature::kForward) {
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.parameters = {"a", "g"};
  }
  if (c.feature == Feature::kAdjoint) {
    o.sensitivity.method = SensMethod::kAdjoint;
    o.sensitivity.parameters = {"a", "g"};
    // (std::string: g++ 12 -O3 reports a false -Wstringop-overflow on the
    // literal's assignment once this function is inlined, GCC bug 105651.)
    o.sensitivity.functional = std::string("G");
  }
  if (c.feature == Feature::kEventSensitivities) {
    // The method is set per run (the cell runs forward, adjoint or both:
    // internal::EventSensitivityCell). G runs across the reset.
    o.sensitivity.parameters = {"a", "g"};
    o.sensitivity.functional = std::string("G");
  }
  return o;
}

Model CellModel(const Cell& c) {
  return TestChain(c.feature == Feature::kEvents,
                   c.feature == Feature::kFeasibility,
                   c.feature == Feature::kResets ||
                       c.feature == Feature::kEventSensitivities);
}

// The reference combination: Baumgarte on CVODES BDF, dense, at rtol 1e-11
// (its error is three orders below the cells').
SimulationSummary Reference(Feature feature) {
  static std::mutex mu;
  static std::map<Feature, SimulationSummary> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(feature);
  if (it != cache.end()) return it->second;
  Cell c{Formulation::kBaumgarte, Integrator::kCvodesBdf, KktPath::kDense,
         feature};
  SimulationOptions o = CellOptions(c);
  o.rtol = 1e-11;
  o.atol = 1e-13;
  if (feature == Feature::kAdjoint) {
    // The adjoint's reference is the forward gradient of the same G.
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.functional.clear();
  }
  // Across the resets: the forward sensitivities, dt_e/dp and G's gradient.
  if (feature == Feature::kEventSensitivities)
    o.sensitivity.method = SensMethod::kForward;
  const Model m = CellModel(c);
  SimulationSummary s = Simulate(m, Release(), m.default_parameters(), o);
  EXPECT_TRUE(s.ok) << "reference: " << s.error;
  cache[feature] = s;
  return s;
}

// How closely a cell must agree with the reference: the SUNDIALS cells run
// at rtol 1e-8, whose global error over 0.6 s of this motion stays below
// 1e-6; RATTLE's global error with h = 1e-3 is O(h^2) with a constant of
// order the squared frequencies, below 1e-4; the fixed-step schemes locate
// roots by linear interpolation between steps, to O(h).
double PositionTol(const Cell& c) {
  if (Alpha(c.i)) return 1e-4;
  return FixedStep(c.i) ? 1e-4 : 1e-6;
}
double TimeTol(const Cell& c) {
  if (Alpha(c.i)) return 1e-4;
  return FixedStep(c.i) ? 2e-3 : 1e-6;
}

// Cells that run but fail on this mechanism for a known numerical reason
// (internal::KnownDefect, docs/support.md).
bool KnownDefect(const Cell& c) {
  return !internal::KnownDefect(c.f, c.i).empty();
}

class SupportMatrix : public ::testing::TestWithParam<Cell> {};

// Keeps every sample of a run.
using daedalus::testing::Keep;

void ExpectAgrees(const SimulationSummary& s,
                  const SimulationSummary& ref,
                  const Cell& c) {
  const double tol = PositionTol(c);
  // The chain moves: the comparison is not between two rest states.
  ASSERT_GT((ref.final.q - Release().q).cwiseAbs().maxCoeff(), 0.05);
  EXPECT_NEAR(s.final.t, ref.final.t, TimeTol(c));
  EXPECT_LT((s.final.q - ref.final.q).cwiseAbs().maxCoeff(), tol)
      << "q " << s.final.q.transpose() << "\nref " << ref.final.q.transpose();
  EXPECT_LT((s.final.v - ref.final.v).cwiseAbs().maxCoeff(), 10 * tol);
  // Every diagnostic the run reports is finite (no placeholders).
  EXPECT_TRUE(s.final.reaction_power.allFinite());
  EXPECT_TRUE(s.final.input_power.allFinite());
  EXPECT_GT(s.final.kkt_rcond, 0.0);
  EXPECT_EQ(s.final.rank_J, 4);
  EXPECT_LT(s.energy_residual_max, 1e3 * tol);
}

TEST_P(SupportMatrix, RunsAndAgreesOrIsRefused) {
  const Cell c = GetParam();
  const std::string why = internal::CellRefusal(c.f, c.i, c.path, c.feature);
  const Model m = CellModel(c);
  const Eigen::VectorXd p = m.default_parameters();
  SimulationOptions o = CellOptions(c);
  // A refused "sensitivities at events" cell gives the forward
  // sensitivities' reason (internal::CellRefusal).
  if (c.feature == Feature::kEventSensitivities)
    o.sensitivity.method = SensMethod::kForward;
  if (!why.empty()) {
    // Refused before the run, with the source's reason.
    EXPECT_THAT(
        [&] { Simulate(m, Release(), p, o); },
        ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr(why)));
    return;
  }
  if (KnownDefect(c)) {
    const SimulationSummary s = Simulate(m, Release(), p, o);
    EXPECT_FALSE(s.ok)
        << "the known defect is gone: remove it from "
           "internal::KnownDefect and regenerate docs/support.md";
    EXPECT_THAT(s.error, HasSubstr("IDASolve failed"));
    return;
  }
  const SimulationSummary ref = Reference(c.feature);
  switch (c.feature) {
    case Feature::kNone: {
      const SimulationSummary s = Simulate(m, Release(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      EXPECT_EQ(s.formulation, c.f);
      EXPECT_EQ(s.integrator, c.i);
      EXPECT_EQ(s.evaluator.find("sparse path") != std::string::npos,
                c.path == KktPath::kSparse)
          << s.evaluator;
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kEvents: {
      const SimulationSummary s = Simulate(m, Release(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      ASSERT_EQ(ref.events.size(), 1u);
      ASSERT_EQ(s.events.size(), 1u);
      EXPECT_EQ(s.events[0].name, "x1_zero");
      EXPECT_TRUE(s.events[0].stopped);
      EXPECT_GT(ref.events[0].t, 0.1);
      EXPECT_LT(ref.events[0].t, 0.6);
      EXPECT_NEAR(s.events[0].t, ref.events[0].t, TimeTol(c));
      if (FixedStep(c.i)) {
        // A fixed-step run stops at the step after the root: its state is
        // off by up to one step of motion.
        EXPECT_LT(
            (s.final.q - ref.final.q).cwiseAbs().maxCoeff(),
            PositionTol(c) + TimeTol(c) * ref.final.v.cwiseAbs().maxCoeff());
        break;
      }
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kFeasibility: {
      const SimulationSummary s = Simulate(m, Release(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      EXPECT_EQ(s.unilateral_rows, 2);
      ASSERT_FALSE(ref.violations.empty());
      ASSERT_EQ(s.violations.size(), ref.violations.size());
      for (size_t k = 0; k < s.violations.size(); ++k) {
        EXPECT_EQ(s.violations[k].name, ref.violations[k].name);
        EXPECT_NEAR(s.violations[k].t_start, ref.violations[k].t_start,
                    TimeTol(c));
        EXPECT_NEAR(s.violations[k].t_end, ref.violations[k].t_end, TimeTol(c));
      }
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kForward: {
      const SimulationSummary s = Simulate(m, Release(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      const Eigen::MatrixXd& S = s.sensitivities.final;
      const Eigen::MatrixXd& R = ref.sensitivities.final;
      ASSERT_EQ(S.rows(), R.rows());
      ASSERT_EQ(S.cols(), 2);
      ASSERT_GT(R.cwiseAbs().maxCoeff(), 1e-2);
      // Positions and velocities (rows 0..11) to the state's tolerance
      // relative to the sensitivities' size; multipliers (rows 12..15) are
      // reported from the linearized KKT system at the final state.
      const double scale = R.cwiseAbs().maxCoeff();
      EXPECT_LT((S - R).cwiseAbs().maxCoeff(), 100 * PositionTol(c) * scale)
          << "sens\n"
          << S << "\nref\n"
          << R;
      // height2 and the functional G's running integral.
      ASSERT_EQ(s.sensitivities.quadratures.size(), 2u);
      for (size_t k = 0; k < 2; ++k)
        EXPECT_LT((s.sensitivities.quadratures[k].second -
                   ref.sensitivities.quadratures[k].second)
                      .cwiseAbs()
                      .maxCoeff(),
                  100 * PositionTol(c) * scale);
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kAdjoint: {
      const SimulationSummary s = Simulate(m, Release(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
      const Eigen::VectorXd grad = s.sensitivities.functionals[0].second;
      // dG/dp = d(int y1^2)/dp + d x1(T)/dp from the reference's forward
      // sensitivities (x1 is row 3).
      const Eigen::VectorXd expected =
          ref.sensitivities.quadratures[0].second +
          ref.sensitivities.final.row(3).transpose();
      ASSERT_GT(expected.cwiseAbs().maxCoeff(), 1e-3);
      EXPECT_LT((grad - expected).cwiseAbs().maxCoeff(),
                1e-4 * expected.cwiseAbs().maxCoeff())
          << grad.transpose() << " vs " << expected.transpose();
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kDriftEscalation: {
      // The contract at a tolerance between the drift of the cell's own
      // run and that of the form it escalates to (measured here, so that
      // the escalation is certain), or, with nothing to escalate to, just
      // below the cell's own drift (so that the contract must fail the
      // run). Thirty seconds at rtol 1e-6 with weak Baumgarte gains
      // (0.01/s): the index-1 forms' drift grows with time, the enforcing
      // forms' stays at the interpolation error of their output samples.
      o.t_end = 30.0;
      o.rtol = o.atol = 1e-6;
      o.output_step = 0.1;
      o.baumgarte_alpha = o.baumgarte_beta = 0.01;
      // Generalized-alpha and HHT have nothing to escalate to and fail at
      // their own drift whatever the tolerance: rtol 1e-3 keeps their 30 s
      // short (at 1e-6 it took 150 s).
      if (Alpha(c.i)) o.rtol = o.atol = 1e-3;
      Keep plain_samples;
      const SimulationSummary plain =
          Simulate(m, Release(), p, o, &plain_samples);
      ASSERT_TRUE(plain.ok) << plain.error;
      const double own =
          std::max(plain.drift_position_max, plain.drift_velocity_max);
      ASSERT_GT(own, 0.0);
      std::string cannot;
      const Formulation to = internal::EscalationTarget(o, &cannot);
      o.drift_action = DriftAction::kEscalate;
      if (!cannot.empty()) {
        o.drift_tol = 0.5 * own;
        const SimulationSummary s = Simulate(m, Release(), p, o);
        EXPECT_FALSE(s.ok);
        EXPECT_THAT(s.error, HasSubstr("exceeds --drift-tol"));
        EXPECT_THAT(s.error, HasSubstr(cannot));
        EXPECT_TRUE(s.escalations.empty());
        break;
      }
      SimulationOptions target = o;
      target.formulation = to;
      const SimulationSummary strong = Simulate(m, Release(), p, target);
      ASSERT_TRUE(strong.ok) << strong.error;
      const double enforced =
          std::max(strong.drift_position_max, strong.drift_velocity_max);
      ASSERT_GT(own, 100 * enforced)
          << "the escalation target does not drift less on this run";
      o.drift_tol = std::sqrt(own * enforced);
      Keep samples;
      const SimulationSummary s = Simulate(m, Release(), p, o, &samples);
      ASSERT_TRUE(s.ok) << s.error;
      ASSERT_EQ(s.escalations.size(), 1u);
      const Escalation& e = s.escalations[0];
      EXPECT_EQ(e.from, c.f);
      EXPECT_EQ(e.to, to);
      EXPECT_GT(e.drift, o.drift_tol);
      EXPECT_LE(s.drift_position_max, e.drift);
      EXPECT_LE(std::max(s.final.drift_position, s.final.drift_velocity),
                o.drift_tol);
      // Up to the switch the run is the plain one, sample for sample.
      size_t k = 0;
      for (; k < samples.samples.size() && samples.samples[k].t <= e.t; ++k)
        EXPECT_EQ(samples.samples[k].q, plain_samples.samples[k].q)
            << "t = " << samples.samples[k].t;
      EXPECT_GT(k, 1u);
      EXPECT_NEAR(s.final.t, 30.0, 1e-12);
      break;
    }
    case Feature::kResets: {
      const SimulationSummary s = Simulate(m, Release(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      // The reset acts (the chain swings back through the start) and
      // keeps the energy: the balance's residual stays integration error.
      ASSERT_GE(ref.events.size(), 1u);
      ASSERT_EQ(s.events.size(), ref.events.size());
      for (size_t k = 0; k < s.events.size(); ++k) {
        EXPECT_TRUE(s.events[k].reset);
        EXPECT_FALSE(s.events[k].stopped);
        EXPECT_NEAR(s.events[k].t, ref.events[k].t, TimeTol(c));
        EXPECT_LT(std::abs(s.events[k].energy_change), 1e3 * PositionTol(c));
      }
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kEventSensitivities: {
      const std::string methods =
          internal::EventSensitivityCell(c.f, c.i, c.path);
      ASSERT_GE(ref.events.size(), 1u);
      ASSERT_EQ(ref.events[0].dt_dp.size(), 2);
      ASSERT_GT(ref.events[0].dt_dp.cwiseAbs().maxCoeff(), 1e-3);
      ASSERT_EQ(ref.sensitivities.functionals.size(), 1u);
      const Eigen::VectorXd ref_grad = ref.sensitivities.functionals[0].second;
      ASSERT_GT(ref_grad.cwiseAbs().maxCoeff(), 1e-3);
      const double scale = ref.sensitivities.final.cwiseAbs().maxCoeff();
      if (methods.find("forward") != std::string::npos) {
        o.sensitivity.method = SensMethod::kForward;
        const SimulationSummary s = Simulate(m, Release(), p, o);
        ASSERT_TRUE(s.ok) << s.error;
        ASSERT_EQ(s.events.size(), ref.events.size());
        for (size_t k = 0; k < s.events.size(); ++k)
          EXPECT_LT(
              (s.events[k].dt_dp - ref.events[k].dt_dp).cwiseAbs().maxCoeff(),
              100 * PositionTol(c) * ref.events[k].dt_dp.cwiseAbs().maxCoeff())
              << "event " << k << ": " << s.events[k].dt_dp.transpose()
              << " vs " << ref.events[k].dt_dp.transpose();
        EXPECT_LT((s.sensitivities.final - ref.sensitivities.final)
                      .cwiseAbs()
                      .maxCoeff(),
                  100 * PositionTol(c) * scale);
        ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
        EXPECT_LT((s.sensitivities.functionals[0].second - ref_grad)
                      .cwiseAbs()
                      .maxCoeff(),
                  100 * PositionTol(c) * ref_grad.cwiseAbs().maxCoeff());
        ExpectAgrees(s, ref, c);
      }
      const bool adjoint = methods.find("adjoint") != std::string::npos;
      if (adjoint) {
        o.sensitivity.method = SensMethod::kAdjoint;
        const SimulationSummary s = Simulate(m, Release(), p, o);
        ASSERT_TRUE(s.ok) << s.error;
        ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
        EXPECT_LT((s.sensitivities.functionals[0].second - ref_grad)
                      .cwiseAbs()
                      .maxCoeff(),
                  1e-4 * ref_grad.cwiseAbs().maxCoeff())
            << s.sensitivities.functionals[0].second.transpose() << " vs "
            << ref_grad.transpose();
      }
      break;
    }
    case Feature::kCounterfactual: {
      // A branch without the motor from t = 0.3 s, against the reference
      // combination's branch.
      SimulationOptions ro =
          CellOptions({Formulation::kBaumgarte, Integrator::kCvodesBdf,
                       KktPath::kDense, Feature::kNone});
      ro.rtol = 1e-11;
      ro.atol = 1e-13;
      const BranchedCounterfactual r =
          BranchedZtcfFrom(m, Release(), p, ro, 0.3, {"motor"});
      const BranchedCounterfactual b =
          BranchedZtcfFrom(m, Release(), p, o, 0.3, {"motor"});
      ASSERT_TRUE(b.original.ok) << b.original.error;
      ASSERT_TRUE(b.counterfactual.ok) << b.counterfactual.error;
      ASSERT_GT(r.max_position_difference, 1e-3);  // the motor matters
      EXPECT_NEAR(b.max_position_difference, r.max_position_difference,
                  2 * PositionTol(c));
      EXPECT_LT((b.counterfactual.final.q - r.counterfactual.final.q)
                    .cwiseAbs()
                    .maxCoeff(),
                PositionTol(c));
      EXPECT_EQ(b.counterfactual.final.input_work[0], 0.0);
      break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cells,
                         SupportMatrix,
                         ::testing::ValuesIn(CellsToRun()),
                         [](const ::testing::TestParamInfo<Cell>& info) {
                           return Name(info.param);
                         });

// The command line refuses the same cells before anything is written
// (exit status 2), with the reason, for a problem executable's model.
TEST(SupportMatrixCli, RefusedCellsExitTwoAndWriteNothing) {
  Problem problem;
  problem.model = TestChain(false, false);
  problem.initial = [](const Eigen::VectorXd&) { return Release(); };
  const fs::path dir = fs::temp_directory_path() / "daedalus_support_cli";
  int refused = 0;
  // Every cell of the full matrix: a refusal exits before integrating, so
  // the sanitizer build checks all of them too.
  for (const Cell& c : AllCells(false)) {
    if (c.feature != Feature::kNone && c.feature != Feature::kForward) continue;
    const std::string why = internal::CellRefusal(c.f, c.i, c.path, c.feature);
    if (why.empty()) continue;
    fs::remove_all(dir);
    std::vector<std::string> args = {
        "support_cli",
        "--formulation",
        ToString(c.f),
        "--integrator",
        ToString(c.i),
        "--kkt",
        c.path == KktPath::kDense ? "dense" : "schur",
        "--output-dir",
        dir.string(),
        "--quiet"};
    if (FixedStep(c.i)) args.insert(args.end(), {"--step", "0.001"});
    if (c.feature == Feature::kForward)
      args.insert(args.end(), {"--sens", "a"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStderr();
    const int status = run(problem, static_cast<int>(argv.size()), argv.data());
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, 2) << Name(c);
    EXPECT_THAT(err, HasSubstr(why)) << Name(c);
    EXPECT_FALSE(fs::exists(dir) && !fs::is_empty(dir)) << Name(c);
    ++refused;
  }
  EXPECT_GT(refused, 20);
}

// docs/support.md is the table the source generates
// (build/tests/support_table writes it).
TEST(SupportMatrixDocs, TableIsGeneratedFromTheSource) {
  std::ifstream in(std::string(DAEDALUS_SOURCE_DIR) + "/docs/support.md");
  ASSERT_TRUE(in) << "docs/support.md is missing: build/tests/support_table "
                     "> docs/support.md";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), internal::SupportTableMarkdown())
      << "docs/support.md is stale: build/tests/support_table > "
         "docs/support.md";
}

}  // namespace support_matrix_test
}  // namespace
}  // namespace daedalus
