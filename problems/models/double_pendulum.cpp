// Definitions of the models declared in double_pendulum.hpp, compiled once into
// a library (the headers are included by many tests).
#include "double_pendulum.hpp"

namespace daedalus::problems {

Problem DoublePendulumProblem() {
  ModelBuilder b("double_pendulum");
  b.Coordinates({"theta1", "theta2"});
  const Param m1 = b.Parameter("m1", 1.0, ParamRange::Positive());
  const Param m2 = b.Parameter("m2", 2.0, ParamRange::Positive());
  const Param l1 = b.Parameter("l1", 1.0, ParamRange::Positive());
  const Param l2 = b.Parameter("l2", 0.7, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81);
  const Param th1 = b.Parameter("theta1_0", 0.3);
  const Param th2 = b.Parameter("theta2_0", 0.2);
  b.Lagrangian([=](const auto& x) {
    // Bob velocities by the chain rule from the positions above.
    const auto vx1 = x.p[l1] * cos(x.q[0]) * x.v[0];
    const auto vy1 = x.p[l1] * sin(x.q[0]) * x.v[0];
    const auto vx2 = vx1 + x.p[l2] * cos(x.q[1]) * x.v[1];
    const auto vy2 = vy1 + x.p[l2] * sin(x.q[1]) * x.v[1];
    const auto kinetic = 0.5 * x.p[m1] * (vx1 * vx1 + vy1 * vy1) +
                         0.5 * x.p[m2] * (vx2 * vx2 + vy2 * vy2);
    const auto y1 = -x.p[l1] * cos(x.q[0]);
    const auto y2 = y1 - x.p[l2] * cos(x.q[1]);
    return kinetic - x.p[g] * (x.p[m1] * y1 + x.p[m2] * y2);
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 004's double pendulum (point bobs, angles from the downward "
      "vertical) from its Lagrangian written in the bobs' positions; starts "
      "at rest from (theta1_0, theta2_0).";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector2d(prm[th1], prm[th2]);
    s.v = Eigen::Vector2d::Zero();
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
