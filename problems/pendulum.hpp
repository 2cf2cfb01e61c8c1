// Planar pendulum in Cartesian coordinates: a point mass m on a massless rod
// of length l from a fixed pivot at the origin, gravity g along -y.
//
//   T = m (vx^2 + vy^2) / 2,  V = m g y,  rod: x^2 + y^2 - l^2 = 0.
//
// Defaults follow SUNDIALS's cvsPendulum_dns example: m = l = 1 and g chosen
// so that the period of the swing released horizontally at rest from
// (x, y) = (l, 0) is 2 s.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// g for which the pendulum released from the horizontal has period 2 s
/// (cvsPendulum_dns.c's GRAV).
inline constexpr double kPendulumGravity =
    13.750371636040745654980191559621114395801712;

Problem PendulumProblem();

}  // namespace daedalus::problems
