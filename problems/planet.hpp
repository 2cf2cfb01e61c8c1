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

inline Problem PlanetProblem() {
  ModelBuilder b("planet");
  b.Coordinates({"r", "phi"});
  const Param m = b.Parameter("m", 1.0);
  const Param gm = b.Parameter("GM", 4.0);
  const Param r0 = b.Parameter("r0", 1.0);
  const Param speed = b.Parameter("speed", 1.5);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.q[0] * x.q[0] * x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([=](const auto& x) { return -x.p[gm] * x.p[m] / x.q[0]; });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 004's planet in polar coordinates (r, phi) about a fixed centre "
      "GM; starts at r0 with tangential speed 'speed' (an apoapsis when "
      "below circular speed). The default run is one orbital period.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector2d(prm[r0], 0.0);
    s.v = Eigen::Vector2d(0.0, prm[speed] / prm[r0]);
    return s;
  };
  p.defaults.t_end = KeplerPeriod(4.0, 1.0, 1.5);
  p.defaults.output_step = p.defaults.t_end / 200.0;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
