// The friction stage's tolerances on slip speeds and on the stick test
// (src/contact/friction_stage.cpp, docs/friction.md), with the
// measurements that set them.
#pragma once

#include <limits>

namespace daedalus::internal {

// A slip speed below kSlipResolution times the integrator's error weight
// of the velocities (atol + rtol |v| at the run's velocity scale), this
// fraction of an explicit ContactOptions::zeno_velocity, or round-off at
// the run's velocity scale counts as zero when a slip stops: the stick
// test decides then. At a slip witness's root the slip speed carries the
// interpolant's error and the root's location error times the tangential
// acceleration (estimated 11 m/s^2 times 1e-14 s = 1e-13 m/s for the
// spring-pulled block of friction_test.cpp, whose weight at rtol 1e-12
// and atol 1e-14 is 1e-14 m/s: at 1 it slipped a third time).
constexpr double kSlipVelocityFraction = 1e-3;
constexpr double kSlipResolution = 100.0;
constexpr double kSlipRoundOff = 64 * std::numeric_limits<double>::epsilon();
// Stick holds while |lambda_t| <= mu_s lambda_n (1 + kStickSlack): the
// multipliers' round-off (1e-15 relative) must not make a contact at rest
// below its friction angle slip, nor one at it stick.
constexpr double kStickSlack = 1e-12;

}  // namespace daedalus::internal
