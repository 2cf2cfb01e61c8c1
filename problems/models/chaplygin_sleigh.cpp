// Definitions of the models declared in chaplygin_sleigh.hpp, compiled once
// into a library (the headers are included by many tests).
#include "chaplygin_sleigh.hpp"

namespace daedalus::problems {

Problem ChaplyginSleighProblem() {
  ModelBuilder b("chaplygin_sleigh");
  b.Coordinates({"x", "y", "theta"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param I = b.Parameter("I", 0.5, ParamRange::Positive());
  const Param a = b.Parameter("a", 0.3);
  const Param v0 = b.Parameter("v0", 0.2);
  const Param w0 = b.Parameter("omega0", 1.5);
  b.KineticEnergy([=](const auto& x) {
    const auto gx = x.v[0] - x.p[a] * sin(x.q[2]) * x.v[2];
    const auto gy = x.v[1] + x.p[a] * cos(x.q[2]) * x.v[2];
    return 0.5 * x.p[m] * (gx * gx + gy * gy) + 0.5 * x.p[I] * x.v[2] * x.v[2];
  });
  b.Nonholonomic("knife", [](const auto& x) {
    return -sin(x.q[2]) * x.v[0] + cos(x.q[2]) * x.v[1];
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Chaplygin sleigh: a body on a knife edge that cannot slide sideways "
      "(one nonholonomic row), centre of mass a ahead of the edge; energy is "
      "conserved and the rotation decays as sech while the forward speed "
      "grows as tanh. Starts at forward speed v0, rate omega0.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector3d::Zero();
    s.v = Eigen::Vector3d(prm[v0], 0.0, prm[w0]);
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  // Smooth and nonstiff: Adams is the accurate choice.
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
