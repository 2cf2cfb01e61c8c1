// Definitions of the models declared in woodpecker_toy.hpp.
#include "woodpecker_toy.hpp"

namespace daedalus::problems {

Problem WoodpeckerToyProblem() {
  ModelBuilder b("woodpecker_toy");
  b.Coordinates({"y", "phi_M", "phi_S"});
  // Glocker 1995 (as in Siconos's and cardillo's examples) [kg, m, N m].
  const double mM = 0.0003, JM = 5.0e-9, mS = 0.0045, JS = 7.0e-7;
  const double c = 0.0056, g = 9.81;
  const double r0 = 0.0025, rM = 0.0031, hM = 0.0058, lM = 0.01;
  const double lG = 0.015, hS = 0.02, lS = 0.0201;
  b.Parameter("mu", 0.3, ParamRange::Positive());
  b.Parameter("e", 0.5);
  b.KineticEnergy([=](const auto& x) {
    const auto& u = x.v;
    return 0.5 * ((mS + mM) * u[0] * u[0] + (JM + mS * lM * lM) * u[1] * u[1] +
                  (JS + mS * lG * lG) * u[2] * u[2]) +
           mS * lM * u[0] * u[1] + mS * lG * u[0] * u[2] +
           mS * lM * lG * u[1] * u[2];
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto d = x.q[1] - x.q[2];
    return (mS + mM) * g * x.q[0] + mS * g * (lM * x.q[1] + lG * x.q[2]) +
           0.5 * c * d * d;
  });
  b.Holonomic("beak",
              [=](const auto& x) { return lM + lG - lS - r0 - hS * x.q[2]; });
  b.Holonomic("sleeve_lower",
              [=](const auto& x) { return rM - r0 + hM * x.q[1]; });
  b.Holonomic("sleeve_upper",
              [=](const auto& x) { return rM - r0 - hM * x.q[1]; });
  b.Nonholonomic("beak_slip", [=](const auto& x) {
    return x.v[0] + lM * x.v[1] + (lG - lS) * x.v[2];
  });
  b.Nonholonomic("sleeve_lower_slip",
                 [=](const auto& x) { return x.v[0] + rM * x.v[1]; });
  b.Nonholonomic("sleeve_upper_slip",
                 [=](const auto& x) { return x.v[0] + rM * x.v[1]; });
  b.Unilateral("beak", ContactLaw{.restitution_parameter = "e",
                                  .friction = "beak_slip",
                                  .mu_static_parameter = "mu",
                                  .mu_kinetic_parameter = "mu"});
  for (const char* s : {"sleeve_lower", "sleeve_upper"})
    b.Unilateral(s, ContactLaw{.friction = std::string(s) + "_slip",
                               .mu_static_parameter = "mu",
                               .mu_kinetic_parameter = "mu"});
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Glocker and Pfeiffer's woodpecker toy (sleeve on a pole, bird on a "
      "torsional spring; beak and sleeve contacts with Coulomb friction mu "
      "and impacts, the beak's e): a limit cycle of period about 0.146 s.";
  p.initial = [=](const Eigen::VectorXd&) {
    InitialState s;
    // cardillo's start, the sleeve's angle on its lower contact.
    s.q = Eigen::Vector3d(0.0, -(rM - r0) / hM, -0.2788);
    s.v = Eigen::Vector3d(-0.3411, 0.0, -7.4583);
    return s;
  };
  p.defaults.t_end = 0.5;
  p.defaults.output_step = 1e-3;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
