// Seed 004: the period of the pendulum at amplitude 1.5 rad, 2.33138 s,
// from problems/pendulum (Cartesian, rod as a constraint) against the
// complete elliptic integral T = 4 K(sin(theta0/2)) sqrt(l/g).
#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"
#include "pendulum.hpp"

namespace daedalus {
namespace {
namespace pendulum_period_test {

TEST(PendulumPeriod, MatchesEllipticIntegralAtAmplitudeOnePointFive) {
  // The seed's pendulum: 1 m, standard gravity.
  const double amplitude = 1.5, l = 1.0, g = 9.80665;
  const double exact =
      4.0 * testing::EllipticK(std::sin(amplitude / 2.0)) * std::sqrt(l / g);
  EXPECT_NEAR(exact, 2.33138, 5e-6);  // the seed's five decimals

  const Problem p = problems::PendulumProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("g")] = g;
  prm[p.model.ParameterIndex("l")] = l;
  SimulationOptions o = p.defaults;
  o.formulation = Formulation::kProjection;
  o.integrator = Integrator::kCvodesBdf;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.t_end = 2.2 * exact;  // four zero crossings of x
  o.output_step = 1e-3;
  const InitialState x0{
      Eigen::Vector2d(l * std::sin(amplitude), -l * std::cos(amplitude)),
      Eigen::Vector2d::Zero()};
  testing::Collector c;
  const SimulationSummary s = Simulate(p.model, x0, prm, o, &c);
  ASSERT_TRUE(s.ok) << s.error;
  const std::vector<double> t = testing::ZeroCrossings(
      c.samples, [](const Sample& x) { return x.q[0]; },
      [](const Sample& x) { return x.v[0]; });
  ASSERT_EQ(t.size(), 4u);
  // The first crossing is a quarter period; consecutive ones are half.
  EXPECT_NEAR(4.0 * t[0] / exact, 1.0, 1e-9);
  EXPECT_NEAR(2.0 * (t[3] - t[0]) / 3.0 / exact, 1.0, 1e-9);
}

}  // namespace pendulum_period_test
}  // namespace
}  // namespace daedalus
