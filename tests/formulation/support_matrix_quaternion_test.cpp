// The support matrix's quaternion table (docs/support.md, "Models with
// quaternions"), run: every formulation x integrator x KKT path cell for
// integration, events, unilateral monitoring, forward and adjoint
// sensitivities, drift escalation, counterfactuals, state resets and
// sensitivities across them on a constrained
// model with a quaternion (a heavy top
// written as a free body pinned at a point, driven by a torque), compared
// with the reference combination (Baumgarte on CVODES BDF, dense, at rtol
// 1e-11) when internal::QuaternionCellRefusal says it runs, and refused
// before the run with that reason otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/analysis.hpp"
#include "daedalus/model.hpp"
#include "daedalus/quaternion.hpp"
#include "daedalus/simulate.hpp"
#include "formulation/support.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace support_matrix_quaternion_test {

using internal::Feature;
using internal::KktPath;
using ::testing::HasSubstr;

constexpr double kMass = 1.5;
const Eigen::Vector3d kPin(-0.1, 0.2, -0.7);  // centre of mass to the pin

// The pinned body (x, y, z, quaternion R; nq = 7, nv = 6), its energies
// and pin declared per block (the sparse path's structure), gravity g, a
// body-frame torque a sin(3 t) about its own axis, and optionally the
// event z = z_event (the centre of mass passing a height it reaches, in
// the reference run, at about 0.3 s) or the pin marked unilateral (its
// horizontal reactions change sign as the top precesses, which opens and
// closes violation intervals); or the event without stopping, its reset
// map reversing every velocity (which keeps the pin, the quaternion's
// norm and the energy).
Model PinnedTop(bool event,
                double z_event,
                bool unilateral = false,
                bool reset = false) {
  ModelBuilder b("support_pinned_top");
  b.Coordinates({"x", "y", "z"});
  b.Quaternion("R");
  const Param g = b.Parameter("g", 9.81);
  const Param a = b.Parameter("a", 2.0);
  b.KineticEnergyTerm(Touches{{0, 1, 2}}, [](const auto& s) {
    return 0.5 * kMass * (s.v[0] * s.v[0] + s.v[1] * s.v[1] + s.v[2] * s.v[2]);
  });
  b.KineticEnergyTerm(Touches{{3, 4, 5, 6}}, [](const auto& s) {
    return 0.5 * (0.2 * s.v[3] * s.v[3] + 0.3 * s.v[4] * s.v[4] +
                  0.1 * s.v[5] * s.v[5]);
  });
  b.PotentialEnergyTerm(Touches{{2}},
                        [=](const auto& s) { return kMass * s.p[g] * s.q[2]; });
  b.Holonomic(
      "pin", Touches{{0, 1, 2, 3, 4, 5, 6}},
      [](const auto& s) {
        using S = Scalar<decltype(s)>;
        const Vec3<S> p = Vec3<S>(s.q[0], s.q[1], s.q[2]) +
                          RotationAt(s.q, 3) * kPin.cast<S>();
        VecX<S> r(3);
        r << p.x(), p.y(), p.z();
        return r;
      },
      3, unilateral);
  b.Input(
      "motor",
      [](const auto& s) {
        using S = Scalar<decltype(s)>;
        VecX<S> col = VecX<S>::Zero(6);
        col[5] = 1.0;
        return col;
      },
      [=](const auto& s) { return s.p[a] * sin(3.0 * s.t); });
  b.Quadrature("height2", [](const auto& s) { return s.q[2] * s.q[2]; });
  b.Functional(
      "G", [](const auto& s) { return s.q[2] * s.q[2]; },
      [](const auto& s) { return s.q[0]; });
  if (event)
    b.Event("z_level", [z_event](const auto& s) { return s.q[2] - z_event; });
  if (reset) {
    b.Event(
        "z_level", [z_event](const auto& s) { return s.q[2] - z_event; },
        EventOptions{.stop = false});
    b.Reset("z_level", [](const auto& s) {
      using S = Scalar<decltype(s)>;
      VecX<S> out(13);
      out << s.q, -s.v;
      return out;
    });
  }
  return std::move(b).Build();
}

// Tilted 0.4 rad, spinning at 8 rad/s about its axis and precessing.
InitialState Start() {
  const Eigen::Vector4d q0(std::cos(0.2), std::sin(0.2), 0.0, 0.0);
  const Eigen::Vector3d w0(0.3, 1.0, 8.0);
  const Eigen::Matrix3d R0 = RotationAt<double>(Eigen::VectorXd(q0), 0);
  InitialState x;
  x.q.resize(7);
  x.v.resize(6);
  x.q << -R0 * kPin, q0;
  x.v << -R0 * w0.cross(kPin), w0;
  return x;
}

struct Cell {
  Formulation f;
  Integrator i;
  KktPath path;
  Feature feature;
};

bool FixedStep(Integrator i) {
  return i == Integrator::kStormerVerlet || i == Integrator::kSymplecticEuler ||
         i == Integrator::kRattle;
}

// The alpha schemes' rtol in the cells (CellOptions).
#ifdef DAEDALUS_SANITIZER_BUILD
constexpr double kAlphaRtol = 1e-5;
#else
constexpr double kAlphaRtol = 1e-6;
#endif

bool Alpha(Integrator i) {
  return i == Integrator::kGeneralizedAlpha || i == Integrator::kHht;
}

SimulationOptions CellOptions(const Cell& c) {
  SimulationOptions o;
  o.formulation = c.f;
  o.integrator = c.i;
  o.kkt.method =
      c.path == KktPath::kDense ? KktMethod::kSchur : KktMethod::kSparseLu;
  o.t_end = 0.6;
  o.output_step = 0.05;
  o.rtol = 1e-8;
  o.atol = 1e-10;
  // Index 3's velocities are outside the error test (as in
  // support_matrix_test.cpp): rtol 1e-10 for the same comparison.
  if (c.f == Formulation::kIndex3) {
    o.rtol = 1e-10;
    o.atol = 1e-12;
  }
  if (FixedStep(c.i)) o.step = 1e-3;
  // Generalized-alpha and HHT (Lie-group update; second order, the error
  // held per unit step on the positions, so their steps go as rtol^(1/2)
  // and their global error as rtol): at the index-3 rtol 1e-10 they would
  // take some 10^5 steps a cell. At rtol 1e-6 their global error is
  // O(rtol) with a constant near or below 10
  // (tests/integrate/lie_alpha_test.cpp), compared at 1e-4 as in
  // support_matrix_test.cpp (100 rtol). The sanitizer build, where one
  // such cell took 33 s, runs them at rtol 1e-5 (a third of the steps),
  // compared at the same 100 rtol.
  if (Alpha(c.i)) {
    o.rtol = kAlphaRtol;
    o.atol = kAlphaRtol / 100;
  }
  if (c.feature == Feature::kForward) {
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.parameters = {"a", "g"};
  }
  if (c.feature == Feature::kAdjoint) {
    o.sensitivity.method = SensMethod::kAdjoint;
    o.sensitivity.parameters = {"a", "g"};
    // (A std::string: GCC 12 at -O3 reports a false -Wstringop-overflow
    // for the assignment of the literal here.)
    o.sensitivity.functional = std::string(1, 'G');
  }
  if (c.feature == Feature::kEventSensitivities) {
    // The method is set per run (support_matrix_test.cpp); G runs across
    // the reset.
    o.sensitivity.parameters = {"a", "g"};
    o.sensitivity.functional = std::string(1, 'G');
  }
  return o;
}

// The event's height: the centre of mass's at t = 0.3 in the reference
// run without it (its height changes there: checked).
double EventHeight() {
  static const double z = [] {
    const Model m = PinnedTop(false, 0.0);
    SimulationOptions o =
        CellOptions({Formulation::kBaumgarte, Integrator::kCvodesBdf,
                     KktPath::kDense, Feature::kNone});
    o.t_end = 0.3;
    o.rtol = 1e-11;
    o.atol = 1e-13;
    const SimulationSummary s = Simulate(m, Start(), m.default_parameters(), o);
    EXPECT_TRUE(s.ok) << s.error;
    EXPECT_GT(std::abs(s.final.v[2]), 1e-2) << "no crossing at 0.3 s";
    return s.final.q[2];
  }();
  return z;
}

Model CellModel(const Cell& c) {
  const bool event = c.feature == Feature::kEvents;
  const bool reset = c.feature == Feature::kResets ||
                     c.feature == Feature::kEventSensitivities;
  return PinnedTop(event, event || reset ? EventHeight() : 0.0,
                   c.feature == Feature::kFeasibility, reset);
}

SimulationSummary Reference(Feature feature) {
  static std::mutex mu;
  static std::map<Feature, SimulationSummary> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(feature);
  if (it != cache.end()) return it->second;
  const Cell c{Formulation::kBaumgarte, Integrator::kCvodesBdf, KktPath::kDense,
               feature};
  SimulationOptions o = CellOptions(c);
  o.rtol = 1e-11;
  o.atol = 1e-13;
  if (feature == Feature::kEventSensitivities)
    o.sensitivity.method = SensMethod::kForward;
  const Model m = CellModel(c);
  SimulationSummary s = Simulate(m, Start(), m.default_parameters(), o);
  EXPECT_TRUE(s.ok) << "reference: " << s.error;
  cache[feature] = s;
  return s;
}

// As in support_matrix_test.cpp: the SUNDIALS cells at rtol 1e-8 stay
// within 1e-6 of the reference over 0.6 s; RATTLE at h = 1e-3 within its
// O(h^2) error, 1e-4; a fixed-step root is located linearly, to O(h);
// generalized-alpha and HHT at rtol 1e-6 within 100 rtol (their error,
// O(rtol), measured below 10 rtol), roots located by re-stepping.
double PositionTol(const Cell& c) {
  if (Alpha(c.i)) return 100 * kAlphaRtol;
  return FixedStep(c.i) ? 1e-4 : 1e-6;
}
double TimeTol(const Cell& c) {
  if (Alpha(c.i)) return 100 * kAlphaRtol;
  return FixedStep(c.i) ? 2e-3 : 1e-6;
}

// q and -q are the same rotation: compare sign-aligned.
double StateDistance(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  Eigen::VectorXd d = a - b;
  const Eigen::Vector4d s = a.segment<4>(3) + b.segment<4>(3);
  if (s.norm() < d.segment<4>(3).norm()) d.segment<4>(3) = s;
  return d.cwiseAbs().maxCoeff();
}

void ExpectAgrees(const SimulationSummary& s,
                  const SimulationSummary& ref,
                  const Cell& c) {
  const double tol = PositionTol(c);
  ASSERT_GT((ref.final.q - Start().q).cwiseAbs().maxCoeff(), 0.05);
  EXPECT_NEAR(s.final.t, ref.final.t, TimeTol(c));
  EXPECT_LT(StateDistance(s.final.q, ref.final.q), tol)
      << "q " << s.final.q.transpose() << "\nref " << ref.final.q.transpose();
  EXPECT_LT((s.final.v - ref.final.v).cwiseAbs().maxCoeff(), 100 * tol);
  EXPECT_LT(s.drift_quaternion_max, 1e-6);
  EXPECT_TRUE(s.final.reaction_power.allFinite());
  EXPECT_EQ(s.final.rank_J, 3);
  EXPECT_LT(s.energy_residual_max, 1e3 * tol);
}

// Keeps every sample of a run.
using daedalus::testing::Keep;

// The drift contract (--drift-tol with --drift-action escalate), as in
// support_matrix_test.cpp: at a tolerance between the drift of the cell's
// own run and that of the form it escalates to (both measured here, so
// that the escalation is certain) the run switches once and finishes
// within the contract; with nothing to escalate to, a tolerance just below
// the cell's own drift fails the run with the reason. Escalating cells run
// 20 s at rtol 1e-6 with weak Baumgarte gains (0.01/s): the index-1 forms'
// drift grows with time (to about 1e-3 at 10 s, 100 times the GGL run's,
// which stays at the interpolation error of its samples: 1e-5 at 10 s, 20
// s for the margin), the others 1 s, enough to fail at their own drift.
constexpr double kEscalationSpan = 20.0;  // [s]

void ExpectEscalatesOrFails(const Model& m,
                            const Eigen::VectorXd& p,
                            SimulationOptions o,
                            const Cell& c) {
  std::string cannot;
  const Formulation to = internal::EscalationTarget(o, &cannot);
  o.t_end = cannot.empty() ? kEscalationSpan : 1.0;
  o.rtol = o.atol = 1e-6;
  o.output_step = 0.05;
  o.baumgarte_alpha = o.baumgarte_beta = 0.01;
  Keep plain_samples;
  const SimulationSummary plain = Simulate(m, Start(), p, o, &plain_samples);
  ASSERT_TRUE(plain.ok) << plain.error;
  const double own =
      std::max(plain.drift_position_max, plain.drift_velocity_max);
  ASSERT_GT(own, 0.0);
  o.drift_action = DriftAction::kEscalate;
  if (!cannot.empty()) {
    o.drift_tol = 0.5 * own;
    const SimulationSummary s = Simulate(m, Start(), p, o);
    EXPECT_FALSE(s.ok);
    EXPECT_THAT(s.error, HasSubstr("exceeds --drift-tol"));
    EXPECT_THAT(s.error, HasSubstr(cannot));
    EXPECT_TRUE(s.escalations.empty());
    return;
  }
  SimulationOptions target = o;
  target.formulation = to;
  const SimulationSummary strong = Simulate(m, Start(), p, target);
  ASSERT_TRUE(strong.ok) << strong.error;
  const double enforced =
      std::max(strong.drift_position_max, strong.drift_velocity_max);
  ASSERT_GT(own, 100 * enforced)
      << "the escalation target does not drift less on this run ("
      << ToString(c.f) << ": " << own << ", " << ToString(to) << ": "
      << enforced << ")";
  o.drift_tol = std::sqrt(own * enforced);
  Keep samples;
  const SimulationSummary s = Simulate(m, Start(), p, o, &samples);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.escalations.size(), 1u);
  const Escalation& e = s.escalations[0];
  EXPECT_EQ(e.from, c.f);
  EXPECT_EQ(e.to, to);
  EXPECT_GT(e.drift, o.drift_tol);
  EXPECT_LE(std::max(s.final.drift_position, s.final.drift_velocity),
            o.drift_tol);
  // Up to the switch the run is the plain one, sample for sample.
  size_t k = 0;
  for (; k < samples.samples.size() && samples.samples[k].t <= e.t; ++k)
    EXPECT_EQ(samples.samples[k].q, plain_samples.samples[k].q)
        << "t = " << samples.samples[k].t;
  EXPECT_GT(k, 1u);
  EXPECT_NEAR(s.final.t, kEscalationSpan, 1e-12);
}

class QuaternionSupportMatrix : public ::testing::TestWithParam<Cell> {};

TEST_P(QuaternionSupportMatrix, RunsAndAgreesOrIsRefused) {
  const Cell c = GetParam();
  const std::string why =
      internal::QuaternionCellRefusal(c.f, c.i, c.path, c.feature);
  const Model m = CellModel(c);
  const Eigen::VectorXd p = m.default_parameters();
  SimulationOptions o = CellOptions(c);
  // A refused "sensitivities at events" cell gives the forward
  // sensitivities' reason (internal::CellRefusal).
  if (c.feature == Feature::kEventSensitivities)
    o.sensitivity.method = SensMethod::kForward;
  if (!why.empty()) {
    EXPECT_THAT(
        [&] { Simulate(m, Start(), p, o); },
        ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr(why)));
    return;
  }
  const SimulationSummary ref = Reference(c.feature);
  switch (c.feature) {
    case Feature::kNone: {
      const SimulationSummary s = Simulate(m, Start(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      EXPECT_EQ(s.evaluator.find("sparse path") != std::string::npos,
                c.path == KktPath::kSparse)
          << s.evaluator;
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kEvents: {
      const SimulationSummary s = Simulate(m, Start(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      ASSERT_EQ(ref.events.size(), 1u);
      ASSERT_EQ(s.events.size(), 1u);
      EXPECT_NEAR(ref.events[0].t, 0.3, 1e-6);
      EXPECT_NEAR(s.events[0].t, ref.events[0].t, TimeTol(c));
      if (!FixedStep(c.i)) ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kFeasibility: {
      // The pin's three rows watched as unilateral: the same violation
      // intervals as the reference's, opening and closing at the same
      // times (to the cell's time tolerance).
      const SimulationSummary s = Simulate(m, Start(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      EXPECT_EQ(s.unilateral_rows, 3);
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
    case Feature::kDriftEscalation:
      ExpectEscalatesOrFails(m, p, o, c);
      break;
    case Feature::kForward: {
      const SimulationSummary s = Simulate(m, Start(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      const Eigen::MatrixXd& S = s.sensitivities.final;
      const Eigen::MatrixXd& R = ref.sensitivities.final;
      ASSERT_EQ(S.rows(), R.rows());
      ASSERT_GT(R.cwiseAbs().maxCoeff(), 1e-2);
      // The state's rows (nq + nv = 13; the multipliers' rows come from
      // the linearized KKT system at the final state).
      const double scale = R.cwiseAbs().maxCoeff();
      EXPECT_LT((S.topRows(13) - R.topRows(13)).cwiseAbs().maxCoeff(),
                100 * PositionTol(c) * scale)
          << "sens\n"
          << S << "\nref\n"
          << R;
      ExpectAgrees(s, ref, c);
      break;
    }
    case Feature::kAdjoint: {
      const SimulationSummary s = Simulate(m, Start(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
      const Eigen::VectorXd grad = s.sensitivities.functionals[0].second;
      // As support_matrix_test.cpp: dG/dp = d(int z^2)/dp + d x(T)/dp from
      // the reference combination's forward sensitivities (the quadrature
      // height2 is G's running part; x is row 0).
      const SimulationSummary fwd = Reference(Feature::kForward);
      Eigen::VectorXd height2;
      for (const auto& [name, d] : fwd.sensitivities.quadratures)
        if (name == "height2") height2 = d;
      ASSERT_EQ(height2.size(), 2);
      const Eigen::VectorXd expected =
          height2 + fwd.sensitivities.final.row(0).transpose();
      ASSERT_GT(expected.cwiseAbs().maxCoeff(), 1e-3);
      EXPECT_LT((grad - expected).cwiseAbs().maxCoeff(),
                1e-4 * expected.cwiseAbs().maxCoeff())
          << grad.transpose() << " vs " << expected.transpose();
      ExpectAgrees(s, ref, c);
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
          BranchedZtcfFrom(m, Start(), p, ro, 0.3, {"motor"});
      const BranchedCounterfactual b =
          BranchedZtcfFrom(m, Start(), p, o, 0.3, {"motor"});
      ASSERT_TRUE(b.original.ok) << b.original.error;
      ASSERT_TRUE(b.counterfactual.ok) << b.counterfactual.error;
      ASSERT_GT(r.max_position_difference, 1e-3);  // the motor matters
      EXPECT_NEAR(b.max_position_difference, r.max_position_difference,
                  2 * PositionTol(c));
      EXPECT_LT(
          StateDistance(b.counterfactual.final.q, r.counterfactual.final.q),
          PositionTol(c));
      break;
    }
    case Feature::kResets: {
      // The reset reverses the motion at the event and keeps the energy.
      const SimulationSummary s = Simulate(m, Start(), p, o);
      ASSERT_TRUE(s.ok) << s.error;
      ASSERT_GE(ref.events.size(), 1u);
      ASSERT_EQ(s.events.size(), ref.events.size());
      for (size_t k = 0; k < s.events.size(); ++k) {
        EXPECT_TRUE(s.events[k].reset);
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
      const Eigen::MatrixXd& R = ref.sensitivities.final;
      const double scale = R.cwiseAbs().maxCoeff();
      if (methods.find("forward") != std::string::npos) {
        o.sensitivity.method = SensMethod::kForward;
        const SimulationSummary s = Simulate(m, Start(), p, o);
        ASSERT_TRUE(s.ok) << s.error;
        ASSERT_EQ(s.events.size(), ref.events.size());
        for (size_t k = 0; k < s.events.size(); ++k)
          EXPECT_LT(
              (s.events[k].dt_dp - ref.events[k].dt_dp).cwiseAbs().maxCoeff(),
              100 * PositionTol(c) * ref.events[k].dt_dp.cwiseAbs().maxCoeff());
        EXPECT_LT((s.sensitivities.final.topRows(13) - R.topRows(13))
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
        const SimulationSummary s = Simulate(m, Start(), p, o);
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
    default:
      break;
  }
}

// Every cell in the release build (720). The sanitizer build, where
// the first 400 took 197 s, runs a pairwise covering array as
// support_matrix_test does: integrator i and feature x (indices) meet in one
// cell, with formulation (i + x) mod 5 and KKT path (i + x) mod 2, so every
// pair of formulation, integrator, feature and path occurs (72 cells); the
// release build checks the numbers of all of them.
std::vector<Cell> QuaternionCells() {
#ifdef DAEDALUS_SANITIZER_BUILD
  constexpr bool kCovering = true;
#else
  constexpr bool kCovering = false;
#endif
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
          if (kCovering && (s % forms.size() != fi ||
                            (p == KktPath::kSparse) != (s % 2 == 1)))
            continue;
          cells.push_back({forms[fi], integrators[ii], p, features[xi]});
        }
  return cells;
}

std::string Name(const ::testing::TestParamInfo<Cell>& info) {
  const Cell& c = info.param;
  std::ostringstream os;
  os << ToString(c.f) << '_' << ToString(c.i) << '_'
     << internal::ToString(c.path) << '_' << static_cast<int>(c.feature);
  std::string s = os.str();
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(QuaternionCells,
                         QuaternionSupportMatrix,
                         ::testing::ValuesIn(QuaternionCells()),
                         Name);

}  // namespace support_matrix_quaternion_test
}  // namespace
}  // namespace daedalus
