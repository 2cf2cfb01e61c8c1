// Seed 004's planet: one orbit from r = 1 m at 1.5 m/s, GM = 4.
#include "planet.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace planet_test {

TEST(Planet, OneOrbitConservesMomentumAndEnergyAndCloses) {
  const Problem p = problems::PlanetProblem();
  const double period = problems::KeplerPeriod(4.0, 1.0, 1.5);
  SimulationOptions o = p.defaults;
  o.rtol = 1e-13;
  o.atol = 1e-15;
  o.t_end = period;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const Sample& s0 = r.samples.front();
  // The seed's start values.
  const double pphi0 = s0.q[0] * s0.q[0] * s0.v[1];
  EXPECT_NEAR(pphi0, 1.5, 1e-15);
  EXPECT_NEAR(s0.energy, -2.875, 1e-15);
  double dl = 0.0, de = 0.0;
  for (const Sample& s : r.samples) {
    dl = std::max(dl, std::abs(s.q[0] * s.q[0] * s.v[1] / pphi0 - 1.0));
    de = std::max(de, std::abs(s.energy / s0.energy - 1.0));
  }
  // Issue 7: below 1e-10 and 1e-9 relative (the seed's RK4: 2.3e-8 and
  // 7.3e-6).
  EXPECT_LT(dl, 1e-10);
  EXPECT_LT(de, 1e-9);
  EXPECT_GT(dl, 0.0);  // the check sees the integration error
  // The orbit closes after one period: back at apoapsis, one full turn.
  const Sample& f = r.samples.back();
  EXPECT_NEAR(f.t, period, 1e-12);
  EXPECT_NEAR(f.q[0], 1.0, 1e-9);
  EXPECT_NEAR(f.q[1], 2.0 * M_PI, 1e-9);
  EXPECT_NEAR(f.v[0], 0.0, 1e-8);
  // Periapsis a (1 - e) with a = 16/23, e = 1/a - 1: the orbit is an ellipse.
  double rmin = 1.0;
  for (const Sample& s : r.samples) rmin = std::min(rmin, s.q[0]);
  const double a = 4.0 / (2.0 * 2.875);
  EXPECT_NEAR(rmin, 2.0 * a - 1.0, 1e-4);  // sampled near, not at, periapsis
}

}  // namespace planet_test
}  // namespace
}  // namespace daedalus
