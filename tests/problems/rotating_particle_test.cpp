// Seed 000, exercise 3: a free particle seen from a rotating table.
#include "rotating_particle.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace rotating_particle_test {

constexpr double kM = 1.0, kOmega = 2.0;

double PTheta(const Sample& s) {
  return kM * s.q[0] * s.q[0] * (s.v[1] + kOmega);
}

// p_theta = m r^2 (theta' + Omega) and the Jacobi energy are conserved, and
// the inertial path is a straight line at constant speed.
TEST(RotatingParticle, CyclicMomentumJacobiEnergyAndStraightInertialPath) {
  const Problem p = problems::RotatingParticleProblem();
  SimulationOptions o = p.defaults;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  EXPECT_EQ(r.summary.energy_kind, "energy function v'p - L");
  const Sample& s0 = r.samples.front();
  // Inertial start: (r0, 0), velocity (r0', r0 (theta0' + Omega)).
  const double X0 = s0.q[0], VX = s0.v[0], VY = s0.q[0] * (s0.v[1] + kOmega);
  double worst_line = 0.0, worst_p = 0.0, change_naive = 0.0;
  for (const Sample& s : r.samples) {
    const double phi = s.q[1] + kOmega * s.t;  // inertial angle
    worst_line = std::max(worst_line,
                          std::hypot(s.q[0] * std::cos(phi) - (X0 + VX * s.t),
                                     s.q[0] * std::sin(phi) - VY * s.t));
    worst_p = std::max(worst_p, std::abs(PTheta(s) / PTheta(s0) - 1.0));
    // m r^2 theta' is not the conserved momentum.
    change_naive =
        std::max(change_naive, std::abs(s.q[0] * s.q[0] * s.v[1] - s0.v[1]));
    // The Jacobi integral m (r'^2 + r^2 theta'^2)/2 - m r^2 Omega^2 / 2.
    const double jacobi =
        0.5 * kM * (s.v[0] * s.v[0] + std::pow(s.q[0] * s.v[1], 2)) -
        0.5 * kM * std::pow(s.q[0] * kOmega, 2);
    EXPECT_NEAR(s.energy, jacobi, 1e-12 * std::max(1.0, std::abs(jacobi)));
  }
  // The particle travels about 7 m; rtol 1e-12 keeps the global error of
  // its position near 1e-10.
  EXPECT_LT(worst_line, 1e-9);
  EXPECT_LT(worst_p, 1e-10);
  EXPECT_GT(change_naive, 0.1);
  EXPECT_LT(r.summary.energy_residual_max, 1e-9);
}

// Table friction c: dp_theta/dt is the friction torque -c r^2 theta', whose
// integral is the quadrature friction_impulse; E falls by the damping loss.
TEST(RotatingParticle, TableFrictionMomentumAndEnergyBalance) {
  const Problem p = problems::RotatingParticleProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("c")] = 0.2;
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run r = testing::RunProblem(p, o, prm);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const Sample& s0 = r.samples.front();
  // Both sides carry the global error of the run, ~100 rtol relative.
  for (const Sample& s : r.samples)
    EXPECT_NEAR(PTheta(s) - PTheta(s0), s.quadratures[0],
                100 * o.rtol * std::max(1.0, std::abs(PTheta(s))))
        << s.t;
  // The particle lags the table (theta' < 0), so friction drags it along:
  // the impulse is positive and large.
  EXPECT_GT(r.samples.back().quadratures[0], 0.1);
  EXPECT_GT(r.samples.back().damping_loss, 0.1);
  // The Jacobi energy reaches tens of J as r grows (-m r^2 Omega^2 / 2);
  // the residual is its global error, ~100 rtol relative.
  double scale = 1.0;
  for (const Sample& s : r.samples) scale = std::max(scale, std::abs(s.energy));
  EXPECT_LT(r.summary.energy_residual_max, 100 * o.rtol * scale);
}

}  // namespace rotating_particle_test
}  // namespace
}  // namespace daedalus
