// Event-driven contact on the sparse KKT path (docs/contact.md, "Where it
// runs"; src/formulation/sparse_mechanics.cpp): the mode's open rows are
// dropped from the sparse KKT solves, projections and Newton
// preconditioner. The catalogue's contact problems run there against the
// closed forms the dense path is held to (contact_problems_test,
// impact_friction_test) and against the dense path itself:
//   bouncing_ball_contact: the 44 impacts before 8.5 s at their closed-form
//     times (the 44th at 8.49137402564769 s) within 1e-9 s, Newton's law at
//     each, rest within 5e-6 s of t_inf, lambda = m g at rest, on CVODES
//     BDF and Adams with the unstabilized, baumgarte and projection forms;
//   newtons_cradle: the simultaneous Newton impact of N touching balls and
//     the sequential one of balls set apart, to round-off;
//   rocking_block: Housner's ratio at every impact, the pivot sticking
//     (frictional rows, a redundant tangential row at rest);
//   particle_hemisphere: the release at cos theta = (2/3) cos theta0;
//   IDAS with KLU (dense KKT path): the ball and the cradle, an open
//     contact's row lambda_i = 0 in the KLU pattern; the impact times'
//     sensitivities;
//   refusals: IDAS and sensitivities on the sparse path; a slip ends the
//     run with the way out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <vector>

#include "block_on_incline.hpp"
#include "bouncing_ball_contact.hpp"
#include "contact/lcp.hpp"
#include "daedalus/simulate.hpp"
#include "newtons_cradle.hpp"
#include "particle_hemisphere.hpp"
#include "rocking_block.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace sparse_contact_test {

using ::testing::HasSubstr;

// The bounds (contact_problems_test): impacts within 1e-9 s of
// their closed forms, the energy residual within 1e-9 J.
constexpr double kImpactTol = 1e-9;
constexpr double kEnergyTol = 1e-9;
constexpr double kRestTol = 5e-6;
constexpr double kImpulseRoundOff = 1e-12;
// Sparse against dense, the same problem at the same options: the KKT
// solves differ by round-off and the Newton iterations differ (the sparse
// path's GMRES with its preconditioner, the dense path's direct solve), so
// the step sequences differ and each run carries its own integration
// error (rtol 1e-12 on the ball and the block, 1e-10 on the cradle).
// Measured on the ball (BDF, baumgarte, sparse-lu): the 44 resolved
// impacts within 2.0e-11 s of the dense run's; the rebounds below them,
// 1e-9 m high and less, within the integrator's error on the gap only
// (7e-7 s apart by the 140th), so they are not compared.
constexpr double kPathAgreement = 1e-10;
// The rocking block between impacts rocks about its pivot as an inverted
// pendulum, which grows each run's own error from impact to impact:
// against a dense run at rtol 1e-13, the 45th impact of the dense run at
// the defaults (rtol 1e-12) is 6.3e-9 s off, the sparse run's 8.4e-9 s,
// and the two are 2.1e-9 s apart (the 6th: 7.7e-10, 8.8e-10 and 1.1e-10
// s). The bound is that error's size, not the ball's.
constexpr double kRockingAgreement = 1e-8;

std::vector<ContactEvent> Impacts(const SimulationSummary& s) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "impact") out.push_back(e);
  return out;
}

SimulationOptions Sparse(SimulationOptions o) {
  o.kkt.method = KktMethod::kSparseLu;
  return o;
}

// The first `count` switches of two runs (all: -1) agree one by one.
void ExpectSameSwitches(const SimulationSummary& sparse,
                        const SimulationSummary& dense,
                        double tol,
                        int count = -1) {
  size_t n = sparse.contact.events.size();
  if (count < 0)
    ASSERT_EQ(n, dense.contact.events.size());
  else
    n = static_cast<size_t>(count);
  ASSERT_GE(sparse.contact.events.size(), n);
  ASSERT_GE(dense.contact.events.size(), n);
  for (size_t k = 0; k < n; ++k) {
    const ContactEvent& a = sparse.contact.events[k];
    const ContactEvent& b = dense.contact.events[k];
    EXPECT_EQ(a.kind, b.kind) << "event " << k;
    EXPECT_NEAR(a.t, b.t, tol) << "event " << k << " (" << a.kind << ")";
  }
}

struct Ball {
  Problem p = problems::BouncingBallContactProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  double m = prm[p.model.ParameterIndex("m")];
  double h0 = prm[p.model.ParameterIndex("h0")];
  double e = prm[p.model.ParameterIndex("e")];
  double g = prm[p.model.ParameterIndex("g")];
};

using BallCase = std::tuple<Integrator, Formulation, KktMethod>;
class SparseBouncingBall : public ::testing::TestWithParam<BallCase> {};

TEST_P(SparseBouncingBall, ImpactTimesMatchClosedFormsAndTheDensePath) {
  const Ball b;
  SimulationOptions o = b.p.defaults;
  o.integrator = std::get<0>(GetParam());
  o.formulation = std::get<1>(GetParam());
  SimulationOptions os = o;
  os.kkt.method = std::get<2>(GetParam());
  const SimulationSummary s =
      Simulate(b.p.model, b.p.initial(b.prm), b.prm, os);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_TRUE(s.contact.event_driven);
  const std::vector<ContactEvent> impacts = Impacts(s);
  ASSERT_GE(impacts.size(), 44u);
  int before = 0;
  for (const ContactEvent& ev : impacts) before += ev.t < 8.5 ? 1 : 0;
  EXPECT_EQ(before, 44);
  double worst = 0.0;
  for (int k = 1; k <= 44; ++k) {
    const ContactEvent& ev = impacts[static_cast<size_t>(k - 1)];
    const double exact = problems::BouncingBallImpactTime(k, b.h0, b.e, b.g).t;
    EXPECT_NEAR(ev.t, exact, kImpactTol) << "impact " << k;
    worst = std::max(worst, std::abs(ev.t - exact));
    const double u = std::pow(b.e, k - 1) * std::sqrt(2.0 * b.g * b.h0);
    ASSERT_EQ(ev.u_minus.size(), 1);
    EXPECT_NEAR(ev.u_minus[0], -u, 1e-8 * u) << "impact " << k;
    EXPECT_NEAR(ev.u_plus[0], b.e * u, 1e-8 * u) << "impact " << k;
  }
  EXPECT_NEAR(impacts[43].t, 8.49137402564769, kImpactTol);
  const double t1 = std::sqrt(2.0 * b.h0 / b.g);
  const double t_inf = t1 * (1.0 + b.e) / (1.0 - b.e);
  ASSERT_GT(s.contact.t_rest, 0.0);
  EXPECT_LE(s.contact.t_rest, t_inf);
  EXPECT_GE(s.contact.t_rest, t_inf - kRestTol);
  EXPECT_NEAR(s.final.q[0], 0.0, 1e-12);
  EXPECT_NEAR(s.final.v[0], 0.0, 1e-12);
  EXPECT_NEAR(s.final.lambda[0], b.m * b.g, 1e-9);
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  EXPECT_GE(s.contact.min_open_gap, -1e-12);
  // The dense path at the same options: the same events.
  const SimulationSummary d = Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
  ASSERT_TRUE(d.ok) << d.error;
  // The start, then the 44 resolved impacts.
  ExpectSameSwitches(s, d, kPathAgreement, 45);
  double apart = 0.0;
  for (int k = 0; k < 45; ++k)
    apart = std::max(apart,
                     std::abs(s.contact.events[k].t - d.contact.events[k].t));
  std::printf(
      "bouncing ball sparse (%s, %s, %s): %zu impacts, worst "
      "|t - exact| %.2e s over 44, sparse - dense %.2e s, t_rest %.12g s "
      "(dense %.12g)\n",
      ToString(o.integrator), ToString(o.formulation), ToString(os.kkt.method),
      impacts.size(), worst, apart, s.contact.t_rest, d.contact.t_rest);
}

INSTANTIATE_TEST_SUITE_P(
    Combinations,
    SparseBouncingBall,
    ::testing::Values(BallCase{Integrator::kCvodesBdf, Formulation::kBaumgarte,
                               KktMethod::kSparseLu},
                      BallCase{Integrator::kCvodesAdams,
                               Formulation::kBaumgarte, KktMethod::kSparseLu},
                      BallCase{Integrator::kCvodesBdf,
                               Formulation::kUnstabilized,
                               KktMethod::kSparseSchur},
                      BallCase{Integrator::kCvodesBdf, Formulation::kProjection,
                               KktMethod::kSparseCholesky},
                      BallCase{Integrator::kCvodesBdf, Formulation::kBaumgarte,
                               KktMethod::kQr}));

// The cradle's final velocities on the sparse path, and the dense run's.
struct CradleRuns {
  Eigen::VectorXd sparse, dense;
};
CradleRuns Cradle(int balls, double spacing) {
  const Problem p = problems::NewtonsCradleProblem(balls);
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("spacing")] = spacing;
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, Sparse(p.defaults));
  const SimulationSummary d =
      Simulate(p.model, p.initial(prm), prm, p.defaults);
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_TRUE(d.ok) << d.error;
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  ExpectSameSwitches(s, d, kPathAgreement);
  return {s.final.v, d.final.v};
}

TEST(SparseNewtonsCradle, SimultaneousAndSequentialImpactsAsOnTheDensePath) {
  for (int n : {3, 5}) {
    const CradleRuns touching = Cradle(n, 0.0);
    const Eigen::VectorXd exact = problems::NewtonsCradleSimultaneous(n, 1.0);
    ASSERT_EQ(touching.sparse.size(), n);
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(touching.sparse[i], exact[i], kImpulseRoundOff)
          << n << ", " << i;
      EXPECT_NEAR(touching.sparse[i], touching.dense[i], kImpulseRoundOff);
    }
    const CradleRuns apart = Cradle(n, 1e-4);
    ASSERT_EQ(apart.sparse.size(), n);
    for (int i = 0; i + 1 < n; ++i)
      EXPECT_NEAR(apart.sparse[i], 0.0, kImpulseRoundOff) << n << ", " << i;
    EXPECT_NEAR(apart.sparse[n - 1], 1.0, kImpulseRoundOff) << n;
  }
}

// Housner's rocking block: two frictional corners, the pivot sticking
// between impacts, at rest on both with a redundant tangential row.
TEST(SparseRockingBlock, HousnersRatioAndTheDensePathsSwitches) {
  const Problem p = problems::RockingBlockProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double b = prm[p.model.ParameterIndex("b")];
  const double h = prm[p.model.ParameterIndex("h")];
  const double ratio = problems::HousnerRatio(b, h);
  SimulationOptions o = p.defaults;
  o.t_end = 2.5;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, Sparse(o));
  ASSERT_TRUE(s.ok) << s.error;
  int impacts = 0, resolved = 0;  // resolved: the events before the tail
  for (const ContactEvent& ev : s.contact.events) {
    if (ev.kind == "impact") {
      ++impacts;
      const double wm = (ev.u_minus[1] - ev.u_minus[0]) / (2.0 * b);
      const double wp = (ev.u_plus[1] - ev.u_plus[0]) / (2.0 * b);
      if (std::abs(wm) < 1e-3) break;  // the accumulation's tail
      EXPECT_NEAR(wp / wm, ratio, 1e-10) << "impact " << impacts;
    }
    ++resolved;
  }
  EXPECT_GE(impacts, 4);
  EXPECT_NEAR(s.final.energy_residual, 0.0, 1e-9);
  const double mg = prm[p.model.ParameterIndex("m")] * 9.81;
  ASSERT_GT(s.contact.t_rest, 0.0);
  EXPECT_NEAR(s.final.lambda[0], 0.5 * mg, 1e-9 * mg);
  EXPECT_NEAR(s.final.lambda[1], 0.5 * mg, 1e-9 * mg);
  EXPECT_LT(s.final.v.norm(), 1e-12);
  for (const FrictionContactReport& f : s.contact.friction)
    EXPECT_EQ(f.stick_to_slip, 0) << f.contact;
  const SimulationSummary d = Simulate(p.model, p.initial(prm), prm, o);
  ASSERT_TRUE(d.ok) << d.error;
  ExpectSameSwitches(s, d, kRockingAgreement, resolved);
  std::printf("rocking block sparse: %d impacts, %d events compared\n", impacts,
              resolved);
}

// A release on the sparse path (closed to open, the multiplier's witness):
// the particle leaves the hemisphere at cos theta = (2/3) cos theta0, as
// contact_problems_test holds the dense path to, and at the dense run's
// instant.
TEST(SparseParticleHemisphere, LeavesAtTwoThirdsOfTheStartingHeight) {
  const Problem p = problems::ParticleHemisphereProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double th0 = prm[p.model.ParameterIndex("theta0")];
  daedalus::testing::Keep keep;
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, Sparse(p.defaults), &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.contact.releases, 1);
  EXPECT_EQ(s.contact.impacts, 0);
  const ContactEvent* rel = nullptr;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "release") rel = &e;
  ASSERT_NE(rel, nullptr);
  // The state at the release: the sample at its time (contact_problems_
  // test's bounds).
  const Sample* at = nullptr;
  for (const Sample& smp : keep.samples)
    if (smp.t == rel->t) at = &smp;
  ASSERT_NE(at, nullptr);
  const double theta = std::atan2(at->q[0], at->q[1]);
  EXPECT_NEAR(std::cos(theta), 2.0 * std::cos(th0) / 3.0, 1e-9);
  EXPECT_NEAR(theta, problems::ParticleHemisphereRelease(th0), 1e-8);
  EXPECT_GT(s.final.q.norm(), 1.0);  // free after
  EXPECT_EQ(s.final.lambda[0], 0.0);
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  const SimulationSummary d =
      Simulate(p.model, p.initial(prm), prm, p.defaults);
  ASSERT_TRUE(d.ok) << d.error;
  ExpectSameSwitches(s, d, kPathAgreement);
  std::printf("particle hemisphere sparse: release at %.15g s (dense %.15g)\n",
              rel->t, d.contact.events.back().t);
}

// IDAS with KLU (--linear-solver klu): an open contact's residual row
// lambda_i = 0 has its diagonal in the Newton matrix's pattern
// (DaeForm::AddContactDiagonals), on the compiled Jacobian (the ball's
// native kernels) and on the dual-number one. The same closed forms as
// IDAS with dense LU, and the same switches as that run: the two Newton
// solvers factor the same matrix.
TEST(IdasKlu, BouncingBallAndCradleAsWithDenseLu) {
  const Ball b;
  for (bool compiled : {true, false}) {
    SimulationOptions o = b.p.defaults;
    o.integrator = Integrator::kIdas;
    o.compiled = compiled;
    SimulationOptions ok = o;
    ok.linear_solver = LinearSolver::kKlu;
    const SimulationSummary s =
        Simulate(b.p.model, b.p.initial(b.prm), b.prm, ok);
    ASSERT_TRUE(s.ok) << s.error;
    const std::vector<ContactEvent> impacts = Impacts(s);
    ASSERT_GE(impacts.size(), 44u);
    for (int k = 1; k <= 44; ++k)
      EXPECT_NEAR(impacts[static_cast<size_t>(k - 1)].t,
                  problems::BouncingBallImpactTime(k, b.h0, b.e, b.g).t,
                  kImpactTol)
          << "impact " << k << (compiled ? " compiled" : " dual numbers");
    EXPECT_NEAR(s.final.lambda[0], b.m * b.g, 1e-9);
    EXPECT_LE(s.energy_residual_max, kEnergyTol);
    const SimulationSummary d =
        Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
    ASSERT_TRUE(d.ok) << d.error;
    ExpectSameSwitches(s, d, kPathAgreement, 45);
  }
  for (int n : {3, 5}) {
    const Problem p = problems::NewtonsCradleProblem(n);
    const Eigen::VectorXd prm = p.model.default_parameters();
    SimulationOptions o = p.defaults;
    o.integrator = Integrator::kIdas;
    o.linear_solver = LinearSolver::kKlu;
    const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
    ASSERT_TRUE(s.ok) << s.error;
    const Eigen::VectorXd exact = problems::NewtonsCradleSimultaneous(n, 1.0);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(s.final.v[i], exact[i], kImpulseRoundOff) << n << ", " << i;
  }
}

// Forward sensitivities on IDAS with KLU: each impact time's derivative
// along e against its closed form (contact_sensitivity_test's bound, 1e-8,
// for k = 1..10; e does not move the start, so no initial tangent).
TEST(IdasKlu, ImpactTimeSensitivitiesMatchTheClosedForm) {
  const Ball b;
  SimulationOptions o = b.p.defaults;
  o.integrator = Integrator::kIdas;
  o.linear_solver = LinearSolver::kKlu;
  o.t_end = 6.0;  // 11 impacts, far from the accumulation
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"e"};
  const SimulationSummary s = Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
  ASSERT_TRUE(s.ok) << s.error;
  std::vector<EventRecord> impacts;
  for (const EventRecord& e : s.events)
    if (e.name == "contact_impact") impacts.push_back(e);
  ASSERT_GE(impacts.size(), 10u);
  for (int k = 1; k <= 10; ++k) {
    const auto exact = problems::BouncingBallImpactTime(k, b.h0, b.e, b.g);
    const EventRecord& ev = impacts[static_cast<size_t>(k - 1)];
    EXPECT_NEAR(ev.t, exact.t, kImpactTol) << "impact " << k;
    ASSERT_EQ(ev.dt_dp.size(), 1) << "impact " << k;
    EXPECT_NEAR(ev.dt_dp[0], exact.dt_de, 1e-8) << "impact " << k;
  }
}

// What the sparse path refuses, each with its way out.
TEST(SparseContact, RefusalsAndTheSlipNameTheDensePath) {
  const Ball b;
  SimulationOptions o = Sparse(b.p.defaults);
  o.t_end = 0.1;
  o.integrator = Integrator::kIdas;
  EXPECT_THAT([&] { Simulate(b.p.model, b.p.initial(b.prm), b.prm, o); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("--kkt dense")));
  o.integrator = Integrator::kCvodesBdf;
  o.sensitivity.method = SensMethod::kAdjoint;
  EXPECT_THAT([&] { Simulate(b.p.model, b.p.initial(b.prm), b.prm, o); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("--kkt dense")));
  // A block that slides down its incline: slipping friction is the dense
  // evaluator's; the sparse run ends at the slip, naming the row.
  const Problem p = problems::BlockOnInclineProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("alpha")] = 0.6;  // tan 0.6 = 0.68 > mu_s 0.4
  const SimulationSummary d =
      Simulate(p.model, p.initial(prm), prm, p.defaults);
  ASSERT_TRUE(d.ok) << d.error;
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, Sparse(p.defaults));
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error,
              ::testing::AllOf(HasSubstr("slip"), HasSubstr("--kkt dense")));
}

}  // namespace sparse_contact_test
}  // namespace
}  // namespace daedalus
