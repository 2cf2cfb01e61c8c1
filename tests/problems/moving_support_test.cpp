// Seed 003's moving support: 20.42 N, 6.126 W, and constraint work equal to
// the energy gained (issue 4).
#include "moving_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace moving_support_test {

TEST(MovingSupport, SupportForcePowerAndWorkEqualTheEnergyGained) {
  const Problem p = problems::MovingSupportProblem();
  const double m = 2.0, g = 9.81, s1 = 0.3, s2 = 0.4;
  const testing::Run r = testing::RunProblem(p, p.defaults);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const Sample& s0 = r.samples.front();
  // Seed 003: the support force and the power it supplies at t = 0.
  EXPECT_NEAR(s0.lambda[0], 20.42, 1e-12);
  EXPECT_NEAR(s0.power[0], 6.126, 1e-12);
  for (const Sample& s : r.samples) {
    const double height = s1 * s.t + 0.5 * s2 * s.t * s.t;
    const double rate = s1 + s2 * s.t;
    const double gained = m * g * height + 0.5 * m * (rate * rate - s1 * s1);
    // Quadratures and the sampled energy at rtol 1e-10 on a ~30 J scale.
    EXPECT_NEAR(s.energy - s0.energy, gained, 1e-8) << s.t;
    EXPECT_NEAR(s.constraint_work[0], gained, 1e-8) << s.t;
    // On the manifold lambda J v = -lambda Phi_t: both integrals agree.
    EXPECT_NEAR(s.ideal_constraint_work[0], gained, 1e-8) << s.t;
    EXPECT_NEAR(s.power[0], m * (g + s2) * rate, 1e-8) << s.t;
  }
  EXPECT_GT(r.samples.back().constraint_work[0], 20.0);  // nonzero
  EXPECT_LT(r.summary.energy_residual_max, 1e-8);
}

}  // namespace moving_support_test
}  // namespace
}  // namespace daedalus
