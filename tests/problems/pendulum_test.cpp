// The Cartesian pendulum of cvsPendulum_dns: g makes the period 2 s, so the
// bob released at (1, 0) is back there at rest at every even time.
#include "pendulum.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace daedalus {
namespace {

TEST(PendulumProblem, ReturnsToStartAfterWholePeriods) {
  const Problem p = problems::PendulumProblem();
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-11;
  o.t_end = 10.0;
  o.integrator =
      Integrator::kCvodesAdams;  // nonstiff: Adams is the accurate choice
  o.output_step = 1.0;
  const SimulationSummary s =
      Simulate(p.model, p.initial(p.model.default_parameters()),
               p.model.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  // Five periods; the error grows with the phase error of the integration.
  EXPECT_NEAR(s.final.q[0], 1.0, 1e-7);
  EXPECT_NEAR(s.final.q[1], 0.0, 1e-5);
  EXPECT_NEAR(s.final.v.norm(), 0.0, 1e-4);
  EXPECT_LT(s.drift_position_max, 1e-9);
  // E is about 14 J; a global error ~100 times rtol relative to it.
  EXPECT_LT(s.energy_residual_max, 100 * o.rtol * 14.0);
  // Stationary rod: its work vanishes up to drift.
  EXPECT_LT(std::abs(s.final.constraint_work[0]), 1e-7);
}

}  // namespace
}  // namespace daedalus
