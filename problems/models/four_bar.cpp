// Definitions of the models declared in four_bar.hpp, compiled once into a
// library (the headers are included by many tests).
#include "four_bar.hpp"

namespace daedalus::problems {

Problem FourBarProblem() {
  ModelBuilder b("four_bar");
  b.Coordinates({"theta1", "theta2", "theta3"});
  four_bar_detail::Params P;
  P.l0 = b.Parameter("l0", 1.0, ParamRange::Positive());
  P.l1 = b.Parameter("l1", 0.4, ParamRange::Positive());
  P.l2 = b.Parameter("l2", 1.0, ParamRange::Positive());
  P.l3 = b.Parameter("l3", 0.8, ParamRange::Positive());
  P.m1 = b.Parameter("m1", 1.0, ParamRange::Positive());
  P.m2 = b.Parameter("m2", 1.0, ParamRange::Positive());
  P.m3 = b.Parameter("m3", 1.0, ParamRange::Positive());
  P.g = b.Parameter("g", 9.81);
  P.th1 = b.Parameter("theta1_0", 0.0);
  P.w1 = b.Parameter("omega1_0", 10.0);
  b.KineticEnergy([=](const auto& x) {
    const auto l1 = x.p[P.l1], l2 = x.p[P.l2], l3 = x.p[P.l3];
    const auto& w = x.v;
    const auto vgx = l1 * cos(x.q[0]) * w[0] + 0.5 * l2 * cos(x.q[1]) * w[1];
    const auto vgy = l1 * sin(x.q[0]) * w[0] + 0.5 * l2 * sin(x.q[1]) * w[1];
    return 0.5 * (x.p[P.m1] * l1 * l1 / 3.0) * w[0] * w[0] +
           0.5 * (x.p[P.m3] * l3 * l3 / 3.0) * w[2] * w[2] +
           0.5 * x.p[P.m2] * (vgx * vgx + vgy * vgy) +
           0.5 * (x.p[P.m2] * l2 * l2 / 12.0) * w[1] * w[1];
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto y1 = -0.5 * x.p[P.l1] * cos(x.q[0]);
    const auto y2 = -x.p[P.l1] * cos(x.q[0]) - 0.5 * x.p[P.l2] * cos(x.q[1]);
    const auto y3 = -0.5 * x.p[P.l3] * cos(x.q[2]);
    return x.p[P.g] * (x.p[P.m1] * y1 + x.p[P.m2] * y2 + x.p[P.m3] * y3);
  });
  b.Holonomic(
      "loop",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        r[0] = x.p[P.l1] * sin(x.q[0]) + x.p[P.l2] * sin(x.q[1]) -
               x.p[P.l3] * sin(x.q[2]) - x.p[P.l0];
        r[1] = -x.p[P.l1] * cos(x.q[0]) - x.p[P.l2] * cos(x.q[1]) +
               x.p[P.l3] * cos(x.q[2]);
        return r;
      },
      2);
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Four-bar linkage (crank l1, coupler l2, rocker l3, ground l0) of "
      "uniform bars under gravity, angles from the downward vertical, the "
      "loop as a 2-row holonomic constraint; assembled on the open branch "
      "from theta1_0 with crank rate omega1_0.";
  p.initial = [P](const Eigen::VectorXd& prm) {
    return four_bar_detail::Assemble(P, prm);
  };
  p.defaults.t_end = 5.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-9;
  p.defaults.atol = 1e-11;
  // Baumgarte on Adams: accurate for this smooth, nonstiff motion (GGL on
  // IDAS stalls at these tolerances, see docs/problems.md).
  p.defaults.formulation = Formulation::kBaumgarte;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
