// Definitions of the models declared in block_on_incline.hpp.
#include "block_on_incline.hpp"

namespace daedalus::problems {

Problem BlockOnInclineProblem() {
  ModelBuilder b("block_on_incline");
  b.Coordinates({"s", "n"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  const Param alpha = b.Parameter("alpha", 0.3, ParamRange::Between(0.0, 1.5));
  b.Parameter("mu_s", 0.4, ParamRange::Positive());
  b.Parameter("mu_k", 0.3, ParamRange::Positive());
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v.squaredNorm(); });
  b.PotentialEnergy([=](const auto& x) {
    using std::cos;
    using std::sin;
    return x.p[m] * x.p[g] *
           (x.q[1] * cos(x.p[alpha]) - x.q[0] * sin(x.p[alpha]));
  });
  b.Holonomic("plane", [](const auto& x) { return x.q[1]; });
  b.Nonholonomic("plane_slip", [](const auto& x) { return x.v[0]; });
  b.Unilateral("plane", ContactLaw{.friction = "plane_slip",
                                   .mu_static_parameter = "mu_s",
                                   .mu_kinetic_parameter = "mu_k"});
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "A block released at rest on a plane inclined at alpha with Coulomb "
      "friction (mu_s, mu_k): below the friction angle (tan alpha <= mu_s) "
      "it sticks and does not move at all; above, it slides with "
      "a = g (sin alpha - mu_k cos alpha).";
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::Vector2d::Zero();
    s.v = Eigen::Vector2d::Zero();
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.1;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
