// Event-driven contact on the catalogue's contact problems against their
// closed forms (docs/contact.md, docs/problems.md):
//   bouncing_ball_contact: every impact time (the 44th at
//     8.49137402564769 s), the energy lost at each impact, rest after the
//     accumulation time t_inf = t1 (1 + e) / (1 - e), the energy balance
//     with the impact work;
//   newtons_cradle: the simultaneous Newton impact of N touching balls,
//     ((2 - N) / N, 2 / N, ..., 2 / N) v0, and the sequential one of balls
//     set apart, (0, ..., 0, v0);
//   particle_hemisphere: the release at cos theta = (2/3) cos theta0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "bouncing_ball_contact.hpp"
#include "daedalus/simulate.hpp"
#include "newtons_cradle.hpp"
#include "particle_hemisphere.hpp"

namespace daedalus {
namespace {
namespace contact_problems_test {

// The bounds (issue 36): every impact within 1e-9 s of its closed
// form, the energy residual within 1e-9 J with the impact losses as work.
constexpr double kImpactTol = 1e-9;
constexpr double kEnergyTol = 1e-9;
// Velocities after one impulse LCP: round-off of a few dense solves.
constexpr double kImpulseRoundOff = 1e-12;

struct Keep : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

std::vector<ContactEvent> Impacts(const SimulationSummary& s) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "impact") out.push_back(e);
  return out;
}

struct Ball {
  Problem p = problems::BouncingBallContactProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  double m = prm[p.model.ParameterIndex("m")];
  double h0 = prm[p.model.ParameterIndex("h0")];
  double e = prm[p.model.ParameterIndex("e")];
  double g = prm[p.model.ParameterIndex("g")];
};

class BouncingBallContact : public ::testing::TestWithParam<Integrator> {};

TEST_P(BouncingBallContact, ImpactTimesLossesAndRestMatchClosedForms) {
  const Ball b;
  SimulationOptions o = b.p.defaults;
  o.integrator = GetParam();
  Keep keep;
  const SimulationSummary s =
      Simulate(b.p.model, b.p.initial(b.prm), b.prm, o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_TRUE(s.contact.event_driven);
  const std::vector<ContactEvent> impacts = Impacts(s);
  // Every impact before 8.5 s (44 of them) at its closed-form time.
  ASSERT_GE(impacts.size(), 44u);
  int before = 0;
  for (const ContactEvent& ev : impacts) before += ev.t < 8.5 ? 1 : 0;
  EXPECT_EQ(before, 44);
  for (int k = 1; k <= 44; ++k) {
    const ContactEvent& ev = impacts[static_cast<size_t>(k - 1)];
    const double exact = problems::BouncingBallImpactTime(k, b.h0, b.e, b.g).t;
    EXPECT_NEAR(ev.t, exact, kImpactTol) << "impact " << k;
    // Newton's law: u+ = -e u-, with u- = -e^(k-1) sqrt(2 g h0); the
    // impulse m (1 + e) |u-|, the loss m u-^2 (1 - e^2) / 2.
    const double u = std::pow(b.e, k - 1) * std::sqrt(2.0 * b.g * b.h0);
    ASSERT_EQ(ev.u_minus.size(), 1);
    EXPECT_NEAR(ev.u_minus[0], -u, 1e-8 * u) << "impact " << k;
    EXPECT_NEAR(ev.u_plus[0], b.e * u, 1e-8 * u) << "impact " << k;
    EXPECT_NEAR(ev.impulse[0], b.m * (1.0 + b.e) * u, 1e-8 * u);
    const double loss = 0.5 * b.m * u * u * (1.0 - b.e * b.e);
    EXPECT_NEAR(ev.energy_change, -loss, 1e-8 * loss) << "impact " << k;
  }
  EXPECT_NEAR(impacts[43].t, 8.49137402564769, kImpactTol);
  // Rest: the contact closed for good at the last impact, within the
  // accumulation threshold's bound 2 v_zeno / (g (1 - e)) of t_inf.
  const double t1 = std::sqrt(2.0 * b.h0 / b.g);
  const double t_inf = t1 * (1.0 + b.e) / (1.0 - b.e);
  const double bound = 2.0 * problems::kBallZenoVelocity / (b.g * (1.0 - b.e));
  ASSERT_GT(s.contact.t_rest, 0.0);
  EXPECT_LE(s.contact.t_rest, t_inf);
  EXPECT_GE(s.contact.t_rest, t_inf - bound);
  EXPECT_FALSE(impacts.back().zeno.empty());
  EXPECT_LT(impacts.size(), 250u);  // not a million events
  // At rest: y = 0, v = 0, lambda = m g; all the energy m g h0 went into
  // the impacts.
  const Sample& f = s.final;
  EXPECT_NEAR(f.q[0], 0.0, 1e-12);
  EXPECT_NEAR(f.v[0], 0.0, 1e-12);
  EXPECT_NEAR(f.lambda[0], b.m * b.g, 1e-9);
  EXPECT_NEAR(f.impact_work, -b.m * b.g * b.h0, 1e-9);
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  // The certificate: open gaps >= 0 within the root finder's location,
  // the closed multiplier positive.
  EXPECT_GE(s.contact.min_open_gap, -1e-12);
  EXPECT_GT(s.contact.min_closed_lambda, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Integrators,
                         BouncingBallContact,
                         ::testing::Values(Integrator::kCvodesBdf,
                                           Integrator::kCvodesAdams,
                                           Integrator::kIdas));

// The cradle's velocities after its impacts.
Eigen::VectorXd CradleAfter(int balls, double spacing) {
  const Problem p = problems::NewtonsCradleProblem(balls);
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("spacing")] = spacing;
  SimulationOptions o = p.defaults;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  return s.final.v;
}

TEST(NewtonsCradle, TouchingBallsTakeTheSimultaneousNewtonImpact) {
  for (int n : {3, 5}) {
    const Eigen::VectorXd v = CradleAfter(n, 0.0);
    const Eigen::VectorXd exact = problems::NewtonsCradleSimultaneous(n, 1.0);
    ASSERT_EQ(v.size(), n);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(v[i], exact[i], kImpulseRoundOff) << n << " balls, " << i;
  }
  // The 3-ball values of the issue: (-1/3, 2/3, 2/3) v0.
  const Eigen::VectorXd v3 = CradleAfter(3, 0.0);
  EXPECT_NEAR(v3[0], -1.0 / 3.0, kImpulseRoundOff);
  EXPECT_NEAR(v3[2], 2.0 / 3.0, kImpulseRoundOff);
}

TEST(NewtonsCradle, BallsSetApartStrikeOneAfterAnother) {
  for (int n : {3, 5}) {
    const Eigen::VectorXd v = CradleAfter(n, 1e-4);
    ASSERT_EQ(v.size(), n);
    for (int i = 0; i + 1 < n; ++i)
      EXPECT_NEAR(v[i], 0.0, kImpulseRoundOff) << n << " balls, " << i;
    EXPECT_NEAR(v[n - 1], 1.0, kImpulseRoundOff) << n << " balls";
  }
}

class ParticleHemisphere : public ::testing::TestWithParam<Integrator> {};

TEST_P(ParticleHemisphere, LeavesAtTwoThirdsOfTheStartingHeight) {
  const Problem p = problems::ParticleHemisphereProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double th0 = prm[p.model.ParameterIndex("theta0")];
  SimulationOptions o = p.defaults;
  o.integrator = GetParam();
  Keep keep;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.contact.releases, 1);
  EXPECT_EQ(s.contact.impacts, 0);
  const ContactEvent* rel = nullptr;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "release") rel = &e;
  ASSERT_NE(rel, nullptr);
  EXPECT_TRUE(rel->closed.empty());
  // The state at the release: the sample at its time.
  const Sample* at = nullptr;
  for (const Sample& smp : keep.samples)
    if (smp.t == rel->t) at = &smp;
  ASSERT_NE(at, nullptr);
  const double theta = std::atan2(at->q[0], at->q[1]);
  EXPECT_NEAR(std::cos(theta), 2.0 * std::cos(th0) / 3.0, 1e-9);
  EXPECT_NEAR(theta, problems::ParticleHemisphereRelease(th0), 1e-8);
  // On the sphere before, free after: the gap grows, the multiplier is 0.
  EXPECT_GT(s.final.q.norm(), 1.0);
  EXPECT_EQ(s.final.lambda[0], 0.0);
  EXPECT_LE(s.energy_residual_max, kEnergyTol);
  EXPECT_GE(s.contact.min_open_gap, -1e-12);
  EXPECT_GE(s.contact.min_closed_lambda, -1e-9);
}

INSTANTIATE_TEST_SUITE_P(Integrators,
                         ParticleHemisphere,
                         ::testing::Values(Integrator::kCvodesBdf,
                                           Integrator::kIdas));

}  // namespace contact_problems_test
}  // namespace
}  // namespace daedalus
