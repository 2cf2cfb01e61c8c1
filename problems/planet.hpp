// Seed 004's planet: a point mass m attracted by a fixed centre of strength
// GM, in polar coordinates (r, phi) in the plane of the orbit,
//
//   T = m (r'^2 + r^2 phi'^2) / 2,   V = -GM m / r.
//
// phi is cyclic, so p_phi = m r^2 phi' is conserved (Kepler's second law),
// and E = T + V is conserved. The default start, r = 1 m with tangential
// speed 1.5 m/s and GM = 4 m^3/s^2, gives p_phi = 1.5 and E = -2.875 J: an
// ellipse starting at its far end (apoapsis), semi-major axis
// a = GM m / (2 |E|), period 2 pi sqrt(a^3 / GM); the default run is one
// period, after which the orbit closes.
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// Period of the bound Kepler orbit from r0 with tangential speed `speed`.
inline double KeplerPeriod(double gm, double r0, double speed) {
  const double specific_energy = 0.5 * speed * speed - gm / r0;
  const double a = -gm / (2.0 * specific_energy);
  return 2.0 * M_PI * std::sqrt(a * a * a / gm);
}

Problem PlanetProblem();

}  // namespace daedalus::problems
