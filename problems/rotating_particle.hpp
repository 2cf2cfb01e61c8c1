// Seed 000, exercise 3: a free planar particle of mass m described in polar
// coordinates (r, theta) of a frame (a table) rotating at the constant rate
// Omega,
//
//   L = m (r'^2 + r^2 (theta' + Omega)^2) / 2.
//
// theta is cyclic; its momentum p_theta = m r^2 (theta' + Omega) is the
// inertial angular momentum (not m r^2 theta'). L has no explicit time, so
// the energy function E = v'p - L = m (r'^2 + r^2 theta'^2) / 2
// - m r^2 Omega^2 / 2 (the Jacobi integral, not the laboratory kinetic
// energy) is conserved. The motion seen from the inertial frame is a
// straight line at constant speed.
//
// Optional table friction c: a force -c times the velocity relative to the
// table, i.e. damping D = c diag(1, r^2). Then dp_theta/dt = -c r^2 theta'
// (the friction torque, integrated as the quadrature friction_impulse) and
// dE/dt = -v'D v.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

inline Problem RotatingParticleProblem() {
  ModelBuilder b("rotating_particle");
  b.Coordinates({"r", "theta"});
  const Param m = b.Parameter("m", 1.0);
  const Param omega = b.Parameter("Omega", 2.0);
  const Param c = b.Parameter("c", 0.0);
  const Param r0 = b.Parameter("r0", 1.0);
  const Param rd0 = b.Parameter("rdot0", 0.5);
  const Param thd0 = b.Parameter("thetadot0", 0.3);
  b.Lagrangian([=](const auto& x) {
    const auto w = x.v[1] + x.p[omega];
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.q[0] * x.q[0] * w * w);
  });
  b.Damping([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> d = MatX<S>::Zero(2, 2);
    d(0, 0) = x.p[c];
    d(1, 1) = x.p[c] * x.q[0] * x.q[0];
    return d;
  });
  // Angular impulse of the friction torque, int -c r^2 theta' dt.
  b.Quadrature("friction_impulse", [=](const auto& x) {
    return -x.p[c] * x.q[0] * x.q[0] * x.v[1];
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 000's free particle in polar coordinates of a table rotating at "
      "Omega; p_theta = m r^2 (theta' + Omega) and the Jacobi energy are "
      "conserved; c > 0 adds table friction (quadrature friction_impulse is "
      "its angular impulse).";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector2d(prm[r0], 0.0);
    s.v = Eigen::Vector2d(prm[rd0], prm[thd0]);
    return s;
  };
  p.defaults.t_end = 3.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
