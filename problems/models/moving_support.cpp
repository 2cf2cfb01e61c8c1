// Definitions of the models declared in moving_support.hpp, compiled once into
// a library (the headers are included by many tests).
#include "moving_support.hpp"

namespace daedalus::problems {

Problem MovingSupportProblem() {
  ModelBuilder b("moving_support");
  b.Coordinates({"y"});
  const Param m = b.Parameter("m", 2.0, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81);
  const Param s1 = b.Parameter("s1", 0.3);
  const Param s2 = b.Parameter("s2", 0.4);
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v[0] * x.v[0]; });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[0]; });
  b.Moving("support", [=](const auto& x) {
    return x.q[0] - (x.p[s1] * x.t + 0.5 * x.p[s2] * x.t * x.t);
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 003's mass on a support moving up as s(t) = s1 t + s2 t^2 / 2: a "
      "moving constraint that supplies power (6.126 W at t = 0 for the "
      "defaults) with no actuator.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::VectorXd::Zero(1);
    s.v = Eigen::VectorXd::Constant(1, prm[s1]);
    return s;
  };
  p.defaults.t_end = 2.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  return p;
}

}  // namespace daedalus::problems
