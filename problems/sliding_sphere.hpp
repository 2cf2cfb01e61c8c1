// A sphere launched sliding on a rough plane (docs/problems.md,
// "sliding_sphere"; docs/friction.md): the classic billiard-ball problem.
// A solid sphere of mass m and radius r (inertia 2/5 m r^2) starts on a
// horizontal plane with speed v0 and no spin; kinetic friction (Coulomb,
// mu) decelerates it and spins it up until its contact point stops
// slipping, after which it rolls (sticks) at constant speed. Planar model,
// coordinates (x, z, theta):
//
//   T = m (vx^2 + vz^2) / 2 + (2/5) m r^2 w^2 / 2,  V = m g z,
//   contact ground: z - r >= 0 (normal force lambda_n),
//   friction ground_slip: the contact point's velocity vx + r w
//   (mu_static = mu_kinetic = mu).
//
// Slipping, vx' = -mu g and w' = -(5/2) mu g / r, so the slip speed
// vx + r w falls at (7/2) mu g and reaches zero at
//
//   t* = 2 v0 / (7 mu g),  vx(t*) = 5 v0 / 7,
//
// having lost 2/7 of the kinetic energy m v0^2 / 2: the friction work
// -mu m g * v0 t* / 2 = -m v0^2 / 7. Rolling needs no friction force on a
// flat plane: it sticks for good.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem SlidingSphereProblem();

/// The time the sphere starts rolling [s].
inline double SlidingSphereRollTime(double v0, double mu, double g) {
  return 2.0 * v0 / (7.0 * mu * g);
}

}  // namespace daedalus::problems
