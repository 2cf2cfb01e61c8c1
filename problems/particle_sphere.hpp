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

inline Problem ParticleSphereProblem() {
  ModelBuilder b("particle_sphere");
  b.Coordinates({"x", "y", "z"});
  const Param m = b.Parameter("m", 1.0);
  const Param R = b.Parameter("R", 1.0);
  const Param g = b.Parameter("g", 9.81);
  const Param th0 = b.Parameter("theta0", 1.0);
  const Param s0 = b.Parameter("s0", 2.5);
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v.squaredNorm(); });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[2]; });
  b.Holonomic("sphere", [=](const auto& x) {
    return x.q.squaredNorm() - x.p[R] * x.p[R];
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 000's particle on the sphere |r| = R under gravity (a spherical "
      "pendulum) in Cartesian coordinates, the sphere as a holonomic "
      "constraint with reaction 2 lambda r; starts at polar angle theta0 "
      "from the bottom with horizontal speed s0.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector3d(prm[R] * std::sin(prm[th0]), 0.0,
                          -prm[R] * std::cos(prm[th0]));
    s.v = Eigen::Vector3d(0.0, prm[s0], 0.0);
    return s;
  };
  p.defaults.t_end = 5.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  // Baumgarte on Adams: accurate for this smooth, nonstiff motion (GGL on
  // IDAS stalls at these tolerances, see docs/problems.md).
  p.defaults.formulation = Formulation::kBaumgarte;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
