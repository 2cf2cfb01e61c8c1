// A test model shared by the contact tests (contact_sensitivity_test,
// ggl_contact_test): a pendulum rod striking a wall.
#pragma once

#include <Eigen/Core>
#include <utility>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::contact_testing {

// A pendulum in Cartesian coordinates (a bilateral rod) striking a wall:
// the impact map's Jacobians carry the bilateral rows (J_B dv = 0, the
// rod's impulse mu) and their derivatives (dJ_B, the wall's position as
// a parameter of the gap), which the ball and the cradle (constant M and
// J, no bilateral row) do not.
//   T = m (vx^2 + vy^2) / 2,  V = m g y,
//   rod: (x^2 + y^2 - L^2) / 2 = 0,   wall: x - xw >= 0, e.
inline Problem PendulumWall() {
  ModelBuilder b("pendulum_wall");
  b.Coordinates({"x", "y"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  const Param L = b.Parameter("L", 1.0, ParamRange::Positive());
  const Param xw = b.Parameter("xw", -0.3);
  const Param th0 = b.Parameter("theta0", 1.0);
  b.Parameter("e", 0.8, ParamRange::Between(0.0, 1.0));
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v.squaredNorm(); });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1]; });
  b.Holonomic("rod", [=](const auto& x) {
    return 0.5 * (x.q.squaredNorm() - x.p[L] * x.p[L]);
  });
  b.Holonomic("wall", [=](const auto& x) { return x.q[0] - x.p[xw]; });
  b.Unilateral("wall", ContactLaw{.restitution_parameter = "e"});
  // A functional whose running integrand jumps at the impacts.
  b.Functional(
      "G", [](const auto& x) { return x.q[0] * x.q[0] + x.v[1] * x.v[1]; },
      [](const auto& x) { return x.q[0] * x.q[1]; });
  Problem p;
  p.model = std::move(b).Build();
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector2d(prm[L] * std::sin(prm[th0]),
                          -prm[L] * std::cos(prm[th0]));
    s.v = Eigen::Vector2d::Zero();
    return s;
  };
  p.defaults.t_end = 6.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::contact_testing
