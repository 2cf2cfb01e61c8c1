// Definitions of the models declared in pendulum.hpp, compiled once into a
// library (the headers are included by many tests).
#include "pendulum.hpp"

namespace daedalus::problems {

Problem PendulumProblem() {
  ModelBuilder b("pendulum");
  b.Coordinates({"x", "y"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param l = b.Parameter("l", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", kPendulumGravity);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1]; });
  b.Holonomic("rod", [=](const auto& x) {
    return x.q[0] * x.q[0] + x.q[1] * x.q[1] - x.p[l] * x.p[l];
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Planar pendulum in Cartesian coordinates (x, y) with the rod as a "
      "holonomic constraint x^2 + y^2 = l^2; released at rest from (l, 0).";
  p.initial = [l](const Eigen::VectorXd& params) {
    InitialState s;
    s.q = Eigen::Vector2d(params[l], 0.0);
    s.v = Eigen::Vector2d::Zero();
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.01;
  return p;
}

}  // namespace daedalus::problems
