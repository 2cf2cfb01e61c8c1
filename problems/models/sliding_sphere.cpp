// Definitions of the models declared in sliding_sphere.hpp.
#include "sliding_sphere.hpp"

namespace daedalus::problems {

Problem SlidingSphereProblem() {
  ModelBuilder b("sliding_sphere");
  b.Coordinates({"x", "z", "theta"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param r = b.Parameter("r", 0.1, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  b.Parameter("mu", 0.2, ParamRange::Positive());
  const Param v0 = b.Parameter("v0", 3.0);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]) +
           0.2 * x.p[m] * x.p[r] * x.p[r] * x.v[2] * x.v[2];
  });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1]; });
  b.Holonomic("ground", [=](const auto& x) { return x.q[1] - x.p[r]; });
  // The contact point's velocity along the plane.
  b.Nonholonomic("ground_slip",
                 [=](const auto& x) { return x.v[0] + x.p[r] * x.v[2]; });
  b.Unilateral("ground", ContactLaw{.friction = "ground_slip",
                                    .mu_static_parameter = "mu",
                                    .mu_kinetic_parameter = "mu"});
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "A solid sphere launched sliding at v0 without spin on a rough plane "
      "(Coulomb friction mu as the contact's stick/slip modes): it rolls "
      "from t* = 2 v0 / (7 mu g) at 5 v0 / 7, having lost 2/7 of its kinetic "
      "energy to the friction work.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector3d(0.0, prm[r], 0.0);
    s.v = Eigen::Vector3d(prm[v0], 0.0, 0.0);
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
