// The Chaplygin sleigh: nonholonomic knife edge, energy conserved, and the
// closed-form decay of the rotation into forward motion.
#include "chaplygin_sleigh.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace chaplygin_sleigh_test {

TEST(ChaplyginSleigh, ForwardSpeedAndRateFollowTheClosedForm) {
  const Problem p = problems::ChaplyginSleighProblem();
  const double m = 1.0, I = 0.5, a = 0.3, v0 = 0.2, w0 = 1.5;
  const double J = I + m * a * a;
  const double V = std::sqrt(v0 * v0 + J / m * w0 * w0);
  const double k = m * a * V / J, c = std::atanh(v0 / V);
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const Sample& s0 = r.samples.front();
  EXPECT_NEAR(s0.energy, 0.5 * m * V * V, 1e-14);
  double worst = 0.0;
  for (const Sample& s : r.samples) {
    const double th = s.q[2];
    const double v = std::cos(th) * s.v[0] + std::sin(th) * s.v[1];
    const double lateral = -std::sin(th) * s.v[0] + std::cos(th) * s.v[1];
    worst = std::max(worst, std::abs(v - V * std::tanh(k * s.t + c)));
    worst = std::max(
        worst, std::abs(s.v[2] - w0 * std::cosh(c) / std::cosh(k * s.t + c)));
    EXPECT_LT(std::abs(lateral), 1e-10) << s.t;
    EXPECT_NEAR(s.energy, s0.energy, 1e-10) << s.t;
  }
  // Rates of order one over 10 s at rtol 1e-11.
  EXPECT_LT(worst, 1e-9);
  // By t = 10 the rotation has mostly decayed into forward speed.
  EXPECT_LT(r.samples.back().v[2], 0.1 * w0);
  EXPECT_LT(std::abs(r.samples.back().constraint_work[0]), 1e-10);
}

}  // namespace chaplygin_sleigh_test
}  // namespace
}  // namespace daedalus
