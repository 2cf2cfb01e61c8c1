// Seed 004's Atwood machine, 3 kg and 1 kg: acceleration 4.90332 m/s^2
// from the Lagrangian, tension 14.71 N from the constrained form.
#include "atwood.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace atwood_test {

constexpr double kM1 = 3.0, kM2 = 1.0, kG = problems::kStandardGravity;

TEST(Atwood, ReducedAccelerationIsNewtons) {
  const Problem p = problems::AtwoodReducedProblem();
  const testing::Run r = testing::RunProblem(p, p.defaults);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const double a = (kM1 - kM2) * kG / (kM1 + kM2);
  EXPECT_NEAR(a, 4.90332, 5e-6);  // the seed's five decimals
  for (const Sample& s : r.samples) {
    EXPECT_NEAR(s.vdot[0], a, 1e-14);  // exact AD: round-off
    // Uniform acceleration from rest; global error of a quadratic at
    // rtol 1e-10.
    EXPECT_NEAR(s.q[0], 0.5 * a * s.t * s.t, 1e-9);
  }
}

TEST(Atwood, ConstrainedMultiplierIsTheRopeTension) {
  const Problem p = problems::AtwoodConstrainedProblem();
  const testing::Run r = testing::RunProblem(p, p.defaults);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const double a = (kM1 - kM2) * kG / (kM1 + kM2);
  const double tension = 2.0 * kM1 * kM2 * kG / (kM1 + kM2);
  EXPECT_NEAR(tension, 14.71, 5e-3);  // the seed's 14.71 N
  const SimulationOptions& o = p.defaults;
  for (const Sample& s : r.samples) {
    // Baumgarte adds db = 2 alpha (J v) + beta^2 Phi to the bias; with
    // J M^-1 J' = 1/m1 + 1/m2 = 4/3 that moves lambda by 3/4 db and the
    // accelerations by less than db.
    const double db = 2 * o.baumgarte_alpha * s.drift_velocity +
                      o.baumgarte_beta * o.baumgarte_beta * s.drift_position;
    EXPECT_NEAR(s.vdot[0], -a, db + 1e-13);
    EXPECT_NEAR(s.vdot[1], a, db + 1e-13);
    EXPECT_NEAR(s.lambda[0], tension, db + 1e-12);
    EXPECT_NEAR(s.q[0], -0.5 * a * s.t * s.t, 1e-9);
  }
  // The rope does work on each mass, but in total none: lambda (y1' + y2').
  EXPECT_LT(std::abs(r.samples.back().constraint_work[0]), 1e-9);
  EXPECT_LT(r.summary.energy_residual_max, 1e-9);
}

}  // namespace atwood_test
}  // namespace
}  // namespace daedalus
