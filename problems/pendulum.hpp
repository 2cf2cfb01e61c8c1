// Planar pendulum in Cartesian coordinates: a point mass m on a massless rod
// of length l from a fixed pivot at the origin, gravity g along -y.
//
//   T = m (vx^2 + vy^2) / 2,  V = m g y,  rod: x^2 + y^2 - l^2 = 0.
//
// Defaults follow SUNDIALS's cvsPendulum_dns example: m = l = 1 and g chosen
// so that the period of the swing released horizontally at rest from
// (x, y) = (l, 0) is 2 s.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// g for which the pendulum released from the horizontal has period 2 s
/// (cvsPendulum_dns.c's GRAV).
inline constexpr double kPendulumGravity =
    13.750371636040745654980191559621114395801712;

inline Problem PendulumProblem() {
  ModelBuilder b("pendulum");
  b.Coordinates({"x", "y"});
  const Param m = b.Parameter("m", 1.0);
  const Param l = b.Parameter("l", 1.0);
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
