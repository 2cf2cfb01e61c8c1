// The four-bar linkage: a closed loop. The general crank-rocker conserves
// energy with workless loop reactions; the parallelogram case has a closed
// form (a compound pendulum).
#include "four_bar.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace four_bar_test {

TEST(FourBar, CrankRockerConservesEnergyWithWorklessLoop) {
  const Problem p = problems::FourBarProblem();
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  // The assembled start is on the manifold: no initial correction.
  EXPECT_LT(r.summary.initial_correction_position, 1e-14);
  EXPECT_LT(r.summary.initial_correction_velocity, 1e-13);
  double de = 0.0, work = 0.0, rate_change = 0.0;
  const Sample& s0 = r.samples.front();
  for (const Sample& s : r.samples) {
    de = std::max(de, std::abs(s.energy - s0.energy));
    work = std::max(work, std::abs(s.constraint_work.sum()));
    rate_change = std::max(rate_change, std::abs(s.v[0] - s0.v[0]));
  }
  // Energy scale about 20 J; global error at rtol 1e-11.
  EXPECT_LT(de, 1e-8);
  EXPECT_LT(work, 1e-8);
  EXPECT_LT(r.summary.drift_position_max, 1e-9);
  EXPECT_GT(rate_change, 1.0);  // gravity really exchanges energy
  // Crank-rocker (Grashof, shortest link the crank): the crank turns fully,
  // the rocker only swings.
  double rocker_lo = 10.0, rocker_hi = -10.0;
  for (const Sample& s : r.samples) {
    rocker_lo = std::min(rocker_lo, s.q[2]);
    rocker_hi = std::max(rocker_hi, s.q[2]);
  }
  EXPECT_GT(r.samples.back().q[0], 4 * M_PI);
  EXPECT_LT(rocker_hi - rocker_lo, M_PI / 2);
  // The loop reactions are real forces (order m g).
  EXPECT_GT(r.samples.back().lambda.cwiseAbs().maxCoeff(), 1.0);
}

// l1 = l3 and l2 = l0: the coupler translates (theta2 = pi/2), theta1 =
// theta3 = theta, and T = (m1 + m3) l^2 theta'^2 / 6 + m2 l^2 theta'^2 / 2,
// V = -(m1/2 + m2 + m3/2) g l cos theta: a pendulum with
// omega0^2 = (g / l) (m1/2 + m2 + m3/2) / (m1/3 + m2 + m3/3), whose period
// at amplitude th0 is 4 K(sin(th0/2)) / omega0.
TEST(FourBar, ParallelogramSwingsAsACompoundPendulum) {
  const Problem p = problems::FourBarProblem();
  const double l = 0.5, g = 9.81, th0 = 1.0;
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("l1")] = l;
  prm[p.model.ParameterIndex("l3")] = l;
  prm[p.model.ParameterIndex("l2")] = 1.0;
  prm[p.model.ParameterIndex("l0")] = 1.0;
  prm[p.model.ParameterIndex("theta1_0")] = th0;
  prm[p.model.ParameterIndex("omega1_0")] = 0.0;
  const double omega0 = std::sqrt(g / l * 2.0 / (5.0 / 3.0));  // unit masses
  const double period = 4.0 * testing::EllipticK(std::sin(th0 / 2.0)) / omega0;
  SimulationOptions o = p.defaults;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.output_step = 1e-3;
  o.t_end = 2.2 * period;
  const testing::Run r = testing::RunProblem(p, o, prm);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  double shape = 0.0;
  for (const Sample& s : r.samples) {
    shape = std::max(shape, std::abs(s.q[0] - s.q[2]));
    shape = std::max(shape, std::abs(s.q[1] - M_PI / 2.0));
  }
  EXPECT_LT(shape, 1e-9);
  const std::vector<double> t = testing::ZeroCrossings(
      r.samples, [](const Sample& x) { return x.q[0]; },
      [](const Sample& x) { return x.v[0]; });
  ASSERT_EQ(t.size(), 4u);
  // Same accuracy target as the simple pendulum at rtol 1e-12.
  EXPECT_NEAR(2.0 * (t[3] - t[0]) / 3.0 / period, 1.0, 1e-9);
}

TEST(FourBar, UnreachableAssemblyIsAClearError) {
  const Problem p = problems::FourBarProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("l2")] = 0.1;  // coupler far too short
  EXPECT_THROW(
      {
        try {
          p.initial(prm);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("theta1_0"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
}

}  // namespace four_bar_test
}  // namespace
}  // namespace daedalus
