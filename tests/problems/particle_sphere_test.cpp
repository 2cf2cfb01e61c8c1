// Seed 000, exercise 10: a particle on the sphere (spherical pendulum).
#include "particle_sphere.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace particle_sphere_test {

TEST(ParticleSphere, MultiplierMatchesAccelerationConsistency) {
  const Problem p = problems::ParticleSphereProblem();
  const double m = 1.0, R = 1.0, g = 9.81;
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const Sample& s0 = r.samples.front();
  const double lz0 = m * (s0.q[0] * s0.v[1] - s0.q[1] * s0.v[0]);
  ASSERT_GT(lz0, 1.0);
  for (const Sample& s : r.samples) {
    // lambda = -(m |v|^2 + r.F) / (2 R^2), F = (0, 0, -m g).
    const double expected =
        -(m * s.v.squaredNorm() - m * g * s.q[2]) / (2 * R * R);
    // Baumgarte adds 2 alpha (J v) + beta^2 Phi to the bias; lambda moves by
    // that over J M^-1 J' = 4 |r|^2 / m.
    const double bound =
        m / (4 * R * R) *
            (2 * o.baumgarte_alpha * s.drift_velocity +
             o.baumgarte_beta * o.baumgarte_beta * s.drift_position) +
        1e-10;
    EXPECT_NEAR(s.lambda[0], expected, bound) << s.t;
    // Rotation about the vertical is a symmetry and the radial reaction has
    // no vertical torque: L_z is conserved (global error at rtol 1e-11 over 5
    // s).
    EXPECT_NEAR(m * (s.q[0] * s.v[1] - s.q[1] * s.v[0]), lz0, 1e-8) << s.t;
    EXPECT_NEAR(s.energy, s0.energy, 1e-8) << s.t;
  }
  // No power on the stationary sphere.
  EXPECT_LT(std::abs(r.samples.back().constraint_work[0]), 1e-8);
  EXPECT_LT(r.summary.drift_position_max, 1e-8);
}

}  // namespace particle_sphere_test
}  // namespace
}  // namespace daedalus
