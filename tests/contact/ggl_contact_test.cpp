// Event-driven contact on IDAS with GGL, the stabilized index-2 form and
// IDAS's default (docs/contact.md, "Where it runs"): an open contact's
// rows are lambda_i = 0 and, for a holonomic contact, mu_k = 0 in place of
// its position row Phi_i = 0 (DaeForm::OpenRows), in the residual, the
// dense and KLU Newton matrices and the sensitivity residual; a switch
// restarts IDAS from the consistent (y+, y+') with mu = 0 and the KKT
// multipliers. Held to the closed forms and bounds the index-1 forms are
// (contact_problems_test, sparse_contact_test, contact_sensitivity_test):
//   bouncing_ball_contact: the 44 impacts before 8.5 s at their closed
//     forms within 1e-9 s, Newton's law at each, rest within 1e-6 s of
//     t_inf, lambda = m g at rest, the energy balance within 1e-9 J, on
//     dense LU and KLU, compiled and on dual numbers;
//   newtons_cradle: the simultaneous and the sequential impacts;
//   particle_hemisphere: the release at cos theta = (2/3) cos theta0;
//   a pendulum rod striking a wall: a closed bilateral row (its mu active)
//     beside the contact's, against the index-1 run;
//   golfer_3d_strike: quaternions, a bilateral loop, the tee opening at
//     the strike, against the Baumgarte run;
//   forward sensitivities: dt_k/de and dt_k/dh0 against their closed forms
//     (the adjoint on GGL: contact_sensitivity_test's ContactAdjoint);
//   refusals: index 3 (its restart transient). (Friction on GGL: the
//   rocking block in impact_friction_test, the planar switches in
//   friction_test.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "bouncing_ball_contact.hpp"
#include "daedalus/simulate.hpp"
#include "golfer_3d_strike.hpp"
#include "newtons_cradle.hpp"
#include "particle_hemisphere.hpp"
#include "pendulum_wall.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace ggl_contact_test {

using ::testing::HasSubstr;

// The issue's bounds (contact_problems_test): impacts within 1e-9 s of
// their closed forms, the energy residual within 1e-9 J, the rest within
// 1e-6 s before t_inf; velocities after an impulse LCP to round-off; the
// impact times' derivatives within 1e-8 (contact_sensitivity_test).
constexpr double kImpactTol = 1e-9;
constexpr double kEnergyTol = 1e-9;
constexpr double kIssueRestTol = 1e-6;
constexpr double kImpulseRoundOff = 1e-12;
constexpr double kClosedFormTol = 1e-8;

std::vector<ContactEvent> Impacts(const SimulationSummary& s) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "impact") out.push_back(e);
  return out;
}

SimulationOptions Ggl(SimulationOptions o) {
  o.integrator = Integrator::kIdas;
  o.formulation = Formulation::kGgl;
  return o;
}

struct Ball {
  Problem p = problems::BouncingBallContactProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  double m = prm[p.model.ParameterIndex("m")];
  double h0 = prm[p.model.ParameterIndex("h0")];
  double e = prm[p.model.ParameterIndex("e")];
  double g = prm[p.model.ParameterIndex("g")];
};

// (linear solver, compiled residual)
using BallCase = std::tuple<LinearSolver, bool>;
class GglBouncingBall : public ::testing::TestWithParam<BallCase> {};

TEST_P(GglBouncingBall, ImpactTimesLossesAndRestMatchClosedForms) {
  const Ball b;
  SimulationOptions o = Ggl(b.p.defaults);
  o.linear_solver = std::get<0>(GetParam());
  o.compiled = std::get<1>(GetParam());
  const SimulationSummary s = Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
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
    const double loss = 0.5 * b.m * u * u * (1.0 - b.e * b.e);
    EXPECT_NEAR(ev.energy_change, -loss, 1e-8 * loss) << "impact " << k;
  }
  EXPECT_NEAR(impacts[43].t, 8.49137402564769, kImpactTol);
  const double t1 = std::sqrt(2.0 * b.h0 / b.g);
  const double t_inf = t1 * (1.0 + b.e) / (1.0 - b.e);
  ASSERT_GT(s.contact.t_rest, 0.0);
  EXPECT_LE(s.contact.t_rest, t_inf);
  EXPECT_GE(s.contact.t_rest, t_inf - kIssueRestTol);
  EXPECT_FALSE(impacts.back().zeno.empty());
  const Sample& f = s.final;
  EXPECT_NEAR(f.q[0], 0.0, 1e-12);
  EXPECT_NEAR(f.v[0], 0.0, 1e-12);
  EXPECT_NEAR(f.lambda[0], b.m * b.g, 1e-9);
  EXPECT_NEAR(f.impact_work, -b.m * b.g * b.h0, 1e-9);
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  EXPECT_GE(s.contact.min_open_gap, -1e-12);
  EXPECT_GT(s.contact.min_closed_lambda, 0.0);
  std::printf(
      "ball ggl (%s, %s): %zu impacts, worst |t - exact| %.2e s over 44, "
      "t_inf - t_rest %.3e s, energy residual max %.2e J, %ld steps\n",
      o.linear_solver == LinearSolver::kKlu ? "klu" : "dense",
      o.compiled ? "compiled" : "dual numbers", impacts.size(), worst,
      t_inf - s.contact.t_rest, s.energy_residual_max, s.stats.steps);
}

INSTANTIATE_TEST_SUITE_P(
    Solvers,
    GglBouncingBall,
    ::testing::Values(BallCase{LinearSolver::kDense, true},
                      BallCase{LinearSolver::kDense, false},
                      BallCase{LinearSolver::kKlu, true},
                      BallCase{LinearSolver::kKlu, false}),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == LinearSolver::kKlu
                             ? "Klu"
                             : "DenseLu") +
             (std::get<1>(info.param) ? "Compiled" : "DualNumbers");
    });

// The cradle's velocities after its impacts on GGL (dense LU and KLU).
Eigen::VectorXd CradleAfter(int balls, double spacing, LinearSolver ls) {
  const Problem p = problems::NewtonsCradleProblem(balls);
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("spacing")] = spacing;
  SimulationOptions o = Ggl(p.defaults);
  o.linear_solver = ls;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  return s.final.v;
}

TEST(GglNewtonsCradle, SimultaneousAndSequentialImpacts) {
  for (LinearSolver ls : {LinearSolver::kDense, LinearSolver::kKlu}) {
    for (int n : {3, 5}) {
      const Eigen::VectorXd touching = CradleAfter(n, 0.0, ls);
      const Eigen::VectorXd exact = problems::NewtonsCradleSimultaneous(n, 1.0);
      ASSERT_EQ(touching.size(), n);
      for (int i = 0; i < n; ++i)
        EXPECT_NEAR(touching[i], exact[i], kImpulseRoundOff) << n << ", " << i;
      const Eigen::VectorXd apart = CradleAfter(n, 1e-4, ls);
      ASSERT_EQ(apart.size(), n);
      for (int i = 0; i + 1 < n; ++i)
        EXPECT_NEAR(apart[i], 0.0, kImpulseRoundOff) << n << ", " << i;
      EXPECT_NEAR(apart[n - 1], 1.0, kImpulseRoundOff) << n;
    }
  }
}

// A release on GGL: the witness reads the KKT multiplier at (q, v)
// (DaeForm::SampleState), as on the index-1 forms; after it the contact's
// rows are lambda = 0 and mu = 0, and the particle flies free.
TEST(GglParticleHemisphere, LeavesAtTwoThirdsOfTheStartingHeight) {
  const Problem p = problems::ParticleHemisphereProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double th0 = prm[p.model.ParameterIndex("theta0")];
  daedalus::testing::Keep keep;
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, Ggl(p.defaults), &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.contact.releases, 1);
  EXPECT_EQ(s.contact.impacts, 0);
  const ContactEvent* rel = nullptr;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "release") rel = &e;
  ASSERT_NE(rel, nullptr);
  const Sample* at = nullptr;
  for (const Sample& smp : keep.samples)
    if (smp.t == rel->t) at = &smp;
  ASSERT_NE(at, nullptr);
  const double theta = std::atan2(at->q[0], at->q[1]);
  EXPECT_NEAR(std::cos(theta), 2.0 * std::cos(th0) / 3.0, 1e-9);
  EXPECT_NEAR(theta, problems::ParticleHemisphereRelease(th0), 1e-8);
  // Free after: with the open contact's position row left as Phi = 0 the
  // particle stayed on the sphere (|q| = 1 + 3.9e-13 at the end, measured
  // with the mu_k = 0 row taken out); free it is 2.81 m out at t = 1.5 s.
  EXPECT_GT(s.final.q.norm(), 2.0);
  EXPECT_EQ(s.final.lambda[0], 0.0);
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  EXPECT_GE(s.contact.min_open_gap, -1e-12);
  EXPECT_GE(s.contact.min_closed_lambda, -1e-9);
  // The Baumgarte run on IDAS: measured 1.7e-11 s apart at the release
  // (sparse_contact_test's path agreement, 1e-10 s, bounds it), the end
  // state at t = 1.5 s 1.3e-10 m and 1.7e-10 m/s apart
  // (bound 1e-8: each run's integration error).
  SimulationOptions ob = Ggl(p.defaults);
  ob.formulation = Formulation::kBaumgarte;
  const SimulationSummary d = Simulate(p.model, p.initial(prm), prm, ob);
  ASSERT_TRUE(d.ok) << d.error;
  ASSERT_EQ(d.contact.releases, 1);
  EXPECT_NEAR(rel->t, d.contact.events.back().t, 1e-10);
  EXPECT_LT((s.final.q - d.final.q).norm(), 1e-8);
  EXPECT_LT((s.final.v - d.final.v).norm(), 1e-8);
}

// A pendulum in Cartesian coordinates (a bilateral rod) striking a wall
// (pendulum_wall.hpp): the rod's row keeps its mu active through every
// mode while the wall's is replaced when open. GGL and Baumgarte on IDAS
// at the same tolerances: the same impacts, each run's energy balance
// within the bound.
TEST(GglPendulumWall, ImpactsAsTheIndexOneRunWithTheRodHeld) {
  const Problem p = contact_testing::PendulumWall();
  const Eigen::VectorXd prm = p.model.default_parameters();
  for (LinearSolver ls : {LinearSolver::kDense, LinearSolver::kKlu}) {
    SimulationOptions o = Ggl(p.defaults);
    o.linear_solver = ls;
    const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
    ASSERT_TRUE(s.ok) << s.error;
    SimulationOptions ob = o;
    ob.formulation = Formulation::kBaumgarte;
    const SimulationSummary d = Simulate(p.model, p.initial(prm), prm, ob);
    ASSERT_TRUE(d.ok) << d.error;
    const std::vector<ContactEvent> a = Impacts(s), c = Impacts(d);
    ASSERT_GE(a.size(), 4u);
    ASSERT_EQ(a.size(), c.size());
    double apart = 0.0;
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_NEAR(a[k].t, c[k].t, kImpactTol) << "impact " << k;
      apart = std::max(apart, std::abs(a[k].t - c[k].t));
    }
    // GGL holds the rod to round-off at every sample (the index-1 run's
    // drift is the integrator's).
    EXPECT_LT(std::abs(s.final.q.norm() - 1.0), 1e-12);
    EXPECT_LE(s.energy_residual_max, kEnergyTol);
    EXPECT_LE(d.energy_residual_max, kEnergyTol);
    EXPECT_GE(s.contact.min_open_gap, -1e-12);
    std::printf(
        "pendulum_wall (%s): %zu impacts, ggl - baumgarte %.2e s, energy "
        "residual max ggl %.2e J, baumgarte %.2e J\n",
        ls == LinearSolver::kKlu ? "klu" : "dense", a.size(), apart,
        s.energy_residual_max, d.energy_residual_max);
  }
}

// golfer_3d_strike on GGL (quaternions: the residual on dual numbers; a
// bilateral loop, trail_grip, whose mu is active throughout): the tee,
// closed from the start with its mu active, opens at the strike, where
// its mu_k = 0 replaces its position row. Against the Baumgarte run on
// IDAS at the problem's rtol 1e-8: measured 3.6e-10 s apart at the strike
// and 5.0e-9 (relative) on the ball's speed, each run's own integration
// error; the bounds are 1e-8 s and 1e-7. The energy balance within
// golfer_3d's bound, 10 rtol of the input work (measured 5.3e-6 J on GGL,
// 7.0e-6 J on Baumgarte, of 453 J).
TEST(GglGolfer3dStrike, StrikesAsTheBaumgarteRunWithTheTeeOpening) {
  DAEDALUS_RELEASE_BUILD_ONLY("golfer_3d's whole downswing, twice");
  const problems::Golfer3dStrike g = problems::MakeGolfer3dStrike();
  const Problem& p = g.problem;
  const Eigen::VectorXd prm = p.model.default_parameters();
  const SimulationOptions o = Ggl(p.defaults);
  SimulationOptions ob = o;
  ob.formulation = Formulation::kBaumgarte;
  daedalus::testing::Keep keep;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  const SimulationSummary d = Simulate(p.model, p.initial(prm), prm, ob);
  ASSERT_TRUE(d.ok) << d.error;
  const std::vector<ContactEvent> a = Impacts(s), c = Impacts(d);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(a[0].t, c[0].t, 1e-8);
  int tee = 0;  // the tee's row: the rows of the constraints before it
  for (const auto& con : p.model.constraints()) {
    if (con.name == "tee") break;
    tee += con.rows;
  }
  ASSERT_LT(tee, p.model.nc());
  EXPECT_EQ(a[0].impulse[tee], 0.0);
  EXPECT_GT(a[0].u_plus[tee], 0.0);  // the tee opens at the strike
  auto speed = [](const SimulationSummary& r) {
    for (const FunctionalValue& f : r.functionals)
      if (f.name == "ball_speed") return f.value;
    ADD_FAILURE() << "no ball_speed";
    return 0.0;
  };
  EXPECT_NEAR(speed(s), speed(d), 1e-7 * speed(d));
  double work = 0.0;
  for (Eigen::Index k = 0; k < keep.samples.back().input_work.size(); ++k)
    work += std::abs(keep.samples.back().input_work[k]);
  EXPECT_LT(s.energy_residual_max, 10.0 * o.rtol * work);
  EXPECT_GE(s.contact.min_open_gap, -1e-9);
  std::printf(
      "golfer_3d_strike ggl: strike %.3e s from baumgarte's, ball speed "
      "%.2e relative, energy residual %.2e J (baumgarte %.2e J) of %.1f J "
      "input work\n",
      a[0].t - c[0].t, speed(s) / speed(d) - 1.0, s.energy_residual_max,
      d.energy_residual_max, work);
}

// Forward sensitivities across the impacts on GGL: each impact time's
// derivatives along e and h0 against their closed forms
// (contact_sensitivity_test's bound, k = 1..10). The mu of an open contact
// and its sensitivity are zero (the sensitivity residual's row).
TEST(GglBallSensitivities, ImpactTimesMatchTheClosedForm) {
  const Ball b;
  for (LinearSolver ls : {LinearSolver::kDense, LinearSolver::kKlu}) {
    SimulationOptions o = Ggl(b.p.defaults);
    o.linear_solver = ls;
    o.t_end = 6.0;  // 11 impacts, far from the accumulation
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.parameters = {"e", "h0"};
    o.sensitivity.initial_tangent = InitialStateTangent(b.p, b.prm);
    const SimulationSummary s =
        Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
    ASSERT_TRUE(s.ok) << s.error;
    std::vector<EventRecord> impacts;
    for (const EventRecord& e : s.events)
      if (e.name == "contact_impact") impacts.push_back(e);
    ASSERT_GE(impacts.size(), 10u);
    double worst = 0.0;
    for (int k = 1; k <= 10; ++k) {
      const auto exact = problems::BouncingBallImpactTime(k, b.h0, b.e, b.g);
      const EventRecord& ev = impacts[static_cast<size_t>(k - 1)];
      EXPECT_NEAR(ev.t, exact.t, kImpactTol) << "impact " << k;
      ASSERT_EQ(ev.dt_dp.size(), 2) << "impact " << k;
      EXPECT_NEAR(ev.dt_dp[0], exact.dt_de, kClosedFormTol) << "impact " << k;
      EXPECT_NEAR(ev.dt_dp[1], exact.dt_dh0, kClosedFormTol) << "impact " << k;
      worst = std::max({worst, std::abs(ev.dt_dp[0] - exact.dt_de),
                        std::abs(ev.dt_dp[1] - exact.dt_dh0)});
    }
    std::printf("ball ggl sensitivities (%s): worst |dt_k/dp - exact| %.2e\n",
                ls == LinearSolver::kKlu ? "klu" : "dense", worst);
  }
}

// What stays refused, each naming the way out.
TEST(GglContact, RefusalsNameTheirReasons) {
  const Ball b;
  SimulationOptions o = Ggl(b.p.defaults);
  o.t_end = 0.1;
  // Index 3: its multipliers' transient after each restart.
  SimulationOptions i3 = o;
  i3.formulation = Formulation::kIndex3;
  EXPECT_THAT([&] { Simulate(b.p.model, b.p.initial(b.prm), b.prm, i3); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::AllOf(HasSubstr("index3"), HasSubstr("transient"),
                                   HasSubstr("--formulation ggl"))));
}

}  // namespace ggl_contact_test
}  // namespace
}  // namespace daedalus
