// Definitions of the models declared in rotating_particle.hpp, compiled once
// into a library (the headers are included by many tests).
#include "rotating_particle.hpp"

namespace daedalus::problems {

Problem RotatingParticleProblem() {
  ModelBuilder b("rotating_particle");
  b.Coordinates({"r", "theta"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
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
