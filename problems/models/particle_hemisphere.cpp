// Definitions of the models declared in particle_hemisphere.hpp.
#include "particle_hemisphere.hpp"

namespace daedalus::problems {

Problem ParticleHemisphereProblem() {
  ModelBuilder b("particle_hemisphere");
  b.Coordinates({"x", "z"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param R = b.Parameter("R", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  const Param th0 = b.Parameter("theta0", 0.1, ParamRange::Between(0.0, 1.5));
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v.squaredNorm(); });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1]; });
  b.Holonomic("sphere", [=](const auto& x) {
    return (x.q.squaredNorm() - x.p[R] * x.p[R]) / (2.0 * x.p[R]);
  });
  b.Unilateral("sphere", ContactLaw{.restitution = 0.0});
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "A particle sliding from rest at theta0 off a frictionless sphere of "
      "radius R: the contact opens when the normal force reaches zero, at "
      "cos theta = (2/3) cos theta0, and the particle flies free.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector2d(prm[R] * std::sin(prm[th0]),
                          prm[R] * std::cos(prm[th0]));
    s.v = Eigen::Vector2d::Zero();
    return s;
  };
  p.defaults.t_end = 1.5;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
