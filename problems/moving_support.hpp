// Seed 003's moving support: a mass m carried vertically by a support whose
// height is prescribed, s(t) = s1 t + s2 t^2 / 2 (upward speed s1 and
// acceleration s2 at t = 0), with gravity g. One coordinate, the height y,
// and the prescribed motion as a moving (rheonomic) constraint
//
//   support: Phi(y, t) = y - s(t) = 0,   Phi_t = -s'(t).
//
// The support force is lambda = m (g + s2) (20.42 N for the seed's 2 kg,
// s2 = 0.4 m/s^2) and its power lambda y' = -lambda Phi_t is
// 20.42 * 0.3 = 6.126 W at t = 0, with no actuator on the mass: the
// constraint work equals the energy gained, m g s + m (s'^2 - s1^2) / 2.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

inline Problem MovingSupportProblem() {
  ModelBuilder b("moving_support");
  b.Coordinates({"y"});
  const Param m = b.Parameter("m", 2.0);
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
