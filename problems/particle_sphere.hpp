// Seed 000, exercise 10: a particle of mass m on the sphere r'r = R^2 under
// gravity (applied force F = (0, 0, -m g)): a spherical pendulum in
// Cartesian coordinates (x, y, z),
//
//   T = m |r'|^2 / 2,  V = m g z,  sphere: Phi = r'r - R^2 = 0.
//
// The reaction is J' lambda = 2 lambda r. Acceleration consistency
// (r'r'' + |r'|^2 = 0 with m r'' = F + 2 lambda r) gives the multiplier
//
//   lambda = -(m |r'|^2 + r'F) / (2 R^2),
//
// and the reaction does no power on the stationary sphere (r'r' = 0). The
// vertical angular momentum m (x y' - y x') is conserved (rotation about z
// is a symmetry). Start: polar angle theta0 from the bottom in the x-z
// plane, with horizontal speed s0 along y.
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem ParticleSphereProblem();

}  // namespace daedalus::problems
