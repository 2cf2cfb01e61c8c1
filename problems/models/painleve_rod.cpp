// Definitions of the models declared in painleve_rod.hpp.
#include "painleve_rod.hpp"

namespace daedalus::problems {

Problem PainleveRodProblem() {
  ModelBuilder b("painleve_rod");
  b.Coordinates({"x", "y", "theta"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param l = b.Parameter("l", 0.5, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  b.Parameter("mu", 0.3, ParamRange::Positive());
  const Param th0 =
      b.Parameter("theta0", std::atan(2.0), ParamRange::Between(0.0, 1.5));
  const Param v0 = b.Parameter("v0", 1.0, ParamRange::Positive());
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]) +
           x.p[m] * x.p[l] * x.p[l] * x.v[2] * x.v[2] / 6.0;
  });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1]; });
  b.Holonomic("end", [=](const auto& x) {
    using std::sin;
    return x.q[1] - x.p[l] * sin(x.q[2]);
  });
  b.Nonholonomic("end_slip", [=](const auto& x) {
    using std::sin;
    return x.v[0] + x.p[l] * sin(x.q[2]) * x.v[2];
  });
  b.Unilateral("end", ContactLaw{.friction = "end_slip",
                                 .mu_static_parameter = "mu",
                                 .mu_kinetic_parameter = "mu"});
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Painleve's rod: a uniform rod whose lower end slides on a rough plane "
      "towards -x at theta0 = atan 2; for mu > 4/3 no contact force is "
      "consistent and the start is reported as a Painleve configuration.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector3d(prm[l] * std::cos(prm[th0]),
                          prm[l] * std::sin(prm[th0]), prm[th0]);
    s.v = Eigen::Vector3d(-prm[v0], 0.0, 0.0);
    return s;
  };
  p.defaults.t_end = 0.2;
  p.defaults.output_step = 0.005;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
