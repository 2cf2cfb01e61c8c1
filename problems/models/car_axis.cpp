// Definitions of the model declared in car_axis.hpp, compiled once into a
// library (the headers are included by many tests).
#include "car_axis.hpp"

#include <stdexcept>
#include <string>

namespace daedalus::problems {

Problem CarAxisProblem() {
  ModelBuilder b("car_axis");
  b.Coordinates({"xl", "yl", "xr", "yr"});
  const auto pos = ParamRange::Positive();
  const Param eps = b.Parameter("eps", 1e-2, pos);
  const Param M = b.Parameter("M", 10.0, pos);
  const Param L = b.Parameter("L", 1.0, pos);
  const Param L0 = b.Parameter("L0", 0.5, pos);
  const Param r = b.Parameter("r", 0.1, ParamRange::NonNegative());
  const Param w = b.Parameter("w", 10.0);
  const Param g = b.Parameter("g", 1.0);

  // The end mass k = M eps^2 / 2.
  auto mass = [=](const auto& x) { return 0.5 * x.p[M] * x.p[eps] * x.p[eps]; };
  b.KineticEnergy([=](const auto& x) {
    const auto& v = x.v;
    return 0.5 * mass(x) *
           (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
  });
  // The right wheel on the road: (xb, yb) at time t.
  auto wheel_y = [=](const auto& x) { return x.p[r] * sin(x.p[w] * x.t); };
  auto wheel_x = [=](const auto& x) {
    const auto yb = wheel_y(x);
    return sqrt(x.p[L] * x.p[L] - yb * yb);
  };
  b.PotentialEnergy([=](const auto& x) {
    const auto& q = x.q;
    const auto dxr = q[2] - wheel_x(x), dyr = q[3] - wheel_y(x);
    const auto sl = sqrt(q[0] * q[0] + q[1] * q[1]) - x.p[L0];
    const auto sr = sqrt(dxr * dxr + dyr * dyr) - x.p[L0];
    return 0.5 * (sl * sl + sr * sr) + mass(x) * x.p[g] * (q[1] + q[3]);
  });
  b.Moving("left_normal", [=](const auto& x) {
    return wheel_x(x) * x.q[0] + wheel_y(x) * x.q[1];
  });
  b.Holonomic("axis_length", [=](const auto& x) {
    const auto dx = x.q[0] - x.q[2], dy = x.q[1] - x.q[3];
    return dx * dx + dy * dy - x.p[L] * x.p[L];
  });

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "The car axis problem (Schneider and Rentrop; Hairer and Wanner, "
      "Solving ODEs II, VII.1) as the Test Set for IVP Solvers (Mazzia and "
      "Magherini, Bari) defines it: the ends of an axis of length L, each of "
      "mass eps^2 M / 2, on two springs, the right wheel moved by a bumpy "
      "road r sin(w t); 4 coordinates, a moving and a holonomic constraint; "
      "to t = 3, where its published reference solution is given "
      "(docs/problems.md).";
  // The Test Set's start, (0, L0, L, L0) with velocities (-L0/L, 0, -L0/L,
  // 0), consistent because r w = 1; in general J v + Phi_t = 0 at t = 0
  // needs xl' = xr' = -r w L0 / L, which is used here.
  p.initial = [L, L0, r, w](const Eigen::VectorXd& params) {
    const double l = params[L], l0 = params[L0], rw = params[r] * params[w];
    if (!(params[r] < l))
      throw std::invalid_argument(
          "car_axis: the road's amplitude r = " + std::to_string(params[r]) +
          " must be below the axis length L = " + std::to_string(l) +
          " (the right wheel is at xb = sqrt(L^2 - (r sin w t)^2)); lower "
          "--param r or raise --param L");
    InitialState s;
    s.q = Eigen::Vector4d(0.0, l0, l, l0);
    s.v = Eigen::Vector4d(-rw * l0 / l, 0.0, -rw * l0 / l, 0.0);
    return s;
  };
  p.defaults.t_end = 3.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-6;
  p.defaults.atol = 1e-7;
  p.defaults.formulation = Formulation::kGgl;
  p.defaults.integrator = Integrator::kIdas;
  return p;
}

}  // namespace daedalus::problems
