// The Chaplygin sleigh: a rigid body (mass m, inertia I about its centre of
// mass G) on a horizontal plane, supported by a knife edge at the contact
// point P that cannot slide sideways; G lies a distance a ahead of P along
// the body axis (Bloch 2003, section 1.7; Neimark and Fufaev 1972).
// Coordinates: P = (x, y) and the heading theta;
//
//   G = P + a (cos th, sin th),  T = m |G'|^2 / 2 + I th'^2 / 2,
//   knife (nonholonomic): -sin th x' + cos th y' = 0.
//
// With the forward speed v = cos th x' + sin th y' and omega = th', the
// equations reduce to v' = a omega^2 and (I + m a^2) omega' = -m a v omega.
// Energy E = m v^2 / 2 + (I + m a^2) omega^2 / 2 is conserved, and with
// V^2 = 2E/m, k = m a V / (I + m a^2) and tanh c = v0 / V:
//
//   v(t) = V tanh(k t + c),   omega(t) = omega0 cosh c / cosh(k t + c):
//
// the sleigh straightens out and ends moving forward at speed V.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

inline Problem ChaplyginSleighProblem() {
  ModelBuilder b("chaplygin_sleigh");
  b.Coordinates({"x", "y", "theta"});
  const Param m = b.Parameter("m", 1.0);
  const Param I = b.Parameter("I", 0.5);
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
