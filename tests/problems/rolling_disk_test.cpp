// The vertical rolling disk: nonholonomic, with first integrals.
#include "rolling_disk.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace rolling_disk_test {

constexpr double kM = 1.0, kR = 0.5;

// Without torques: heading rate, spin rate and energy are constant, and the
// contact point runs on the circle of radius R theta' / phi'.
TEST(RollingDisk, FirstIntegralsAndCircularPath) {
  const Problem p = problems::RollingDiskProblem();
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const double phid = 0.5, thd = 2.0, rho = kR * thd / phid;
  double worst = 0.0;
  const Sample& s0 = r.samples.front();
  for (const Sample& s : r.samples) {
    // The reactions act on x, y and theta but not on phi.
    EXPECT_NEAR(s.v[2], phid, 1e-12) << s.t;
    EXPECT_NEAR(s.v[3], thd, 1e-9) << s.t;
    EXPECT_NEAR(s.energy, s0.energy, 1e-9) << s.t;
    const double phi = phid * s.t;
    worst = std::max(worst, std::hypot(s.q[0] - rho * std::sin(phi),
                                       s.q[1] - rho * (1.0 - std::cos(phi))));
  }
  // 10 s, about 10 m of path, rtol 1e-11.
  EXPECT_LT(worst, 1e-8);
  // Rolling reactions do no work.
  EXPECT_LT(std::abs(r.samples.back().constraint_work.sum()), 1e-9);
  EXPECT_LT(r.summary.drift_velocity_max, 1e-9);
}

// An axle torque tau: the rolling reaction adds m R^2 to the spin inertia,
// (m R^2 / 2 + m R^2) theta'' = tau, and E gains exactly the input work.
TEST(RollingDisk, AxleTorqueSpinsUpTheRollingInertia) {
  const Problem p = problems::RollingDiskProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  const double tau = 0.1;
  prm[p.model.ParameterIndex("tau_theta")] = tau;
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run r = testing::RunProblem(p, o, prm);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const double inertia = 1.5 * kM * kR * kR;
  for (const Sample& s : r.samples) {
    EXPECT_NEAR(s.v[3], 2.0 + tau * s.t / inertia, 1e-9) << s.t;
    EXPECT_NEAR(s.vdot[3], tau / inertia, 1e-9) << s.t;
  }
  const Sample& f = r.samples.back();
  EXPECT_NEAR(f.input_work[1], tau * f.q[3], 1e-8);  // tau times the turn
  EXPECT_NEAR(f.energy - r.samples.front().energy, f.input_work.sum(), 1e-8);
  EXPECT_GT(f.input_work[1], 1.0);
}

}  // namespace rolling_disk_test
}  // namespace
}  // namespace daedalus
