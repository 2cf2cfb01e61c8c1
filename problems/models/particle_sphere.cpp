// Definitions of the models declared in particle_sphere.hpp, compiled once into
// a library (the headers are included by many tests).
#include "particle_sphere.hpp"

namespace daedalus::problems {

Problem ParticleSphereProblem() {
  ModelBuilder b("particle_sphere");
  b.Coordinates({"x", "y", "z"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param R = b.Parameter("R", 1.0, ParamRange::Positive());
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
