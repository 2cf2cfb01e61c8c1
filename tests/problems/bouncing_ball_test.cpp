// The bouncing ball (problems/bouncing_ball.hpp): every impact time and
// its derivatives with respect to the restitution e and the drop height h0
// against their closed forms, by forward sensitivities (dt_e/dp of each
// event, across the resets) and by adjoints (the functional t_impact at the
// k-th impact); the energy balance with the resets' work; the rows at a
// reset.
#include "bouncing_ball.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace bouncing_ball_test {

using problems::BouncingBallImpactTime;

// The issue's bound on t_k and its derivatives (issue 35): the runs at rtol
// 1e-12 meet it with two orders to spare (6e-11 at most, the h0
// derivative's floor: the initial state's tangent is a central difference
// of the problem's start, InitialStateTangent, good to 3e-11).
constexpr double kImpactTol = 1e-9;
constexpr int kImpacts = 10;

struct Ball {
  Problem p = problems::BouncingBallProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  double h0 = prm[p.model.ParameterIndex("h0")];
  double e = prm[p.model.ParameterIndex("e")];
  double g = prm[p.model.ParameterIndex("g")];
};

SimulationOptions Options(const Ball& b, Integrator i) {
  SimulationOptions o = b.p.defaults;
  o.integrator = i;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.sensitivity.parameters = {"e", "h0"};
  o.sensitivity.initial_tangent = InitialStateTangent(b.p, b.prm);
  return o;
}

using daedalus::testing::Keep;

class BouncingBallForward : public ::testing::TestWithParam<Integrator> {};

TEST_P(BouncingBallForward, ImpactTimesAndTheirDerivativesMatchClosedForms) {
  const Ball b;
  SimulationOptions o = Options(b, GetParam());
  o.sensitivity.method = SensMethod::kForward;
  Keep keep;
  const SimulationSummary s =
      Simulate(b.p.model, b.p.initial(b.prm), b.prm, o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GE(s.events.size(), static_cast<size_t>(kImpacts));
  for (int k = 1; k <= kImpacts; ++k) {
    const auto exact = BouncingBallImpactTime(k, b.h0, b.e, b.g);
    const EventRecord& ev = s.events[static_cast<size_t>(k - 1)];
    EXPECT_EQ(ev.name, "impact");
    EXPECT_EQ(ev.occurrence, k);
    EXPECT_TRUE(ev.reset);
    EXPECT_FALSE(ev.stopped);
    EXPECT_FALSE(ev.grazing);
    EXPECT_NEAR(ev.t, exact.t, kImpactTol) << "impact " << k;
    ASSERT_EQ(ev.dt_dp.size(), 2);
    EXPECT_NEAR(ev.dt_dp[0], exact.dt_de, kImpactTol) << "impact " << k;
    EXPECT_NEAR(ev.dt_dp[1], exact.dt_dh0, kImpactTol) << "impact " << k;
    // The reset takes (1 - e^2) of the kinetic energy at impact, which is
    // m g h0 e^(2(k-1)).
    const double m = b.prm[b.p.model.ParameterIndex("m")];
    const double before = m * b.g * b.h0 * std::pow(b.e, 2 * (k - 1));
    EXPECT_NEAR(ev.energy_change, -(1 - b.e * b.e) * before, 1e-9);
    EXPECT_EQ(ev.reset_correction_position, 0.0);  // no constraint to keep
  }
  EXPECT_GT(s.final.reset_work, -b.h0 * b.g * 1.0);
  EXPECT_LT(s.final.reset_work, -0.5 * b.h0 * b.g);
  // The residual E - E0 - (work + reset work) stays integration error.
  EXPECT_LT(s.energy_residual_max, 1e-9);
  // Each reset writes the state before and after it at the same time:
  // the velocity reversed and scaled by e.
  int pairs = 0;
  for (size_t i = 1; i < keep.samples.size(); ++i) {
    if (keep.samples[i].t != keep.samples[i - 1].t) continue;
    ++pairs;
    EXPECT_NEAR(keep.samples[i].v[0], -b.e * keep.samples[i - 1].v[0], 1e-12);
    EXPECT_LT(keep.samples[i - 1].v[0], -1.0);
  }
  EXPECT_EQ(pairs, static_cast<int>(s.events.size()));
}

INSTANTIATE_TEST_SUITE_P(Integrators,
                         BouncingBallForward,
                         ::testing::Values(Integrator::kCvodesBdf,
                                           Integrator::kCvodesAdams,
                                           Integrator::kIdas),
                         [](const auto& info) {
                           std::string n = ToString(info.param);
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

class BouncingBallAdjoint : public ::testing::TestWithParam<Integrator> {};

// G = t at the k-th impact: its adjoint gradient across k - 1 resets is
// (dt_k/de, dt_k/dh0).
TEST_P(BouncingBallAdjoint, GradientOfTheKthImpactTimeMatchesClosedForm) {
  const Ball b;
  for (int k = 1; k <= kImpacts; ++k) {
    SimulationOptions o = Options(b, GetParam());
    o.sensitivity.method = SensMethod::kAdjoint;
    o.sensitivity.functional = "t_impact@impact#" + std::to_string(k);
    const SimulationSummary s =
        Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
    ASSERT_TRUE(s.ok) << s.error;
    const auto exact = BouncingBallImpactTime(k, b.h0, b.e, b.g);
    EXPECT_NEAR(s.sensitivities.functional_value, exact.t, kImpactTol);
    ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
    const Eigen::VectorXd& grad = s.sensitivities.functionals[0].second;
    EXPECT_NEAR(grad[0], exact.dt_de, kImpactTol) << "impact " << k;
    EXPECT_NEAR(grad[1], exact.dt_dh0, kImpactTol) << "impact " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Integrators,
                         BouncingBallAdjoint,
                         ::testing::Values(Integrator::kCvodesBdf,
                                           Integrator::kIdas),
                         [](const auto& info) {
                           std::string n = ToString(info.param);
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// The height after the third bounce, at the end of the run: forward and
// adjoint agree, through three resets and the event-time terms of each.
TEST(BouncingBall, ForwardAndAdjointAgreeOnAFunctionalAfterResets) {
  const Ball b;
  SimulationOptions o = Options(b, Integrator::kCvodesBdf);
  o.t_end = 2.5;
  o.sensitivity.functional = "height";
  o.sensitivity.method = SensMethod::kForward;
  const SimulationSummary f = Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
  o.sensitivity.method = SensMethod::kAdjoint;
  const SimulationSummary a = Simulate(b.p.model, b.p.initial(b.prm), b.prm, o);
  ASSERT_TRUE(f.ok) << f.error;
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_EQ(f.events.size(), 3u);
  ASSERT_EQ(f.sensitivities.functionals.size(), 1u);
  const Eigen::VectorXd gf = f.sensitivities.functionals[0].second;
  const Eigen::VectorXd ga = a.sensitivities.functionals[0].second;
  ASSERT_GT(gf.cwiseAbs().minCoeff(), 0.1);
  EXPECT_LT((gf - ga).cwiseAbs().maxCoeff(), 1e-8);
  // And the height itself against the closed form: after the third impact
  // at t3 the ball leaves at e^3 sqrt(2 g h0).
  const auto t3 = BouncingBallImpactTime(3, b.h0, b.e, b.g);
  const double u = std::pow(b.e, 3) * std::sqrt(2 * b.g * b.h0);
  const double dt = o.t_end - t3.t;
  EXPECT_NEAR(f.sensitivities.functional_value, u * dt - 0.5 * b.g * dt * dt,
              1e-9);
  EXPECT_NEAR(a.sensitivities.functional_value,
              f.sensitivities.functional_value, 1e-9);
  // Its gradient: y = u (T - t3) - g (T - t3)^2 / 2 with u and t3
  // depending on e and h0; dy/dp = u_p (T - t3) - (u - g (T - t3)) t3_p.
  const double vel = u - b.g * dt;
  const double du_de = 3 * std::pow(b.e, 2) * std::sqrt(2 * b.g * b.h0);
  const double du_dh0 = u / (2 * b.h0);
  EXPECT_NEAR(gf[0], du_de * dt - vel * t3.dt_de, 1e-8);
  EXPECT_NEAR(gf[1], du_dh0 * dt - vel * t3.dt_dh0, 1e-8);
}

}  // namespace bouncing_ball_test
}  // namespace
}  // namespace daedalus
