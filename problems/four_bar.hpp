// A four-bar linkage in a vertical plane: a closed kinematic loop. Ground
// pivots O = (0, 0) and C = (l0, 0); the crank (length l1) turns about O,
// the rocker (l3) about C, and the coupler (l2) joins the crank's tip A to
// the rocker's tip B. All three moving bars are uniform (masses m1, m2,
// m3). Coordinates are the three bar angles, each measured counterclockwise
// from the downward vertical, e(th) = (sin th, -cos th):
//
//   A = l1 e(th1),  B = A + l2 e(th2),  B = C + l3 e(th3),
//   loop (2 rows): l1 e(th1) + l2 e(th2) - l3 e(th3) - (l0, 0) = 0,
//   T = (m1 l1^2 / 3) th1'^2 / 2 + (m3 l3^2 / 3) th3'^2 / 2
//       + m2 |v_G2|^2 / 2 + (m2 l2^2 / 12) th2'^2 / 2,
//   v_G2 = l1 th1' e'(th1) + (l2 / 2) th2' e'(th2),  e' = (cos th, sin th),
//   V = g (m1 yG1 + m2 yG2 + m3 yG3).
//
// One degree of freedom (3 coordinates, 2 constraint rows). The defaults
// are a Grashof crank-rocker (l0, l1, l2, l3) = (1, 0.4, 1, 0.8): the crank
// turns fully (over six turns in the default 5 s from omega1_0 = 10 rad/s)
// while the rocker swings between about -0.93 and 0.20 rad. With l1 = l3 and
// l2 = l0 the linkage is a parallelogram: the coupler translates
// (th2 = pi/2) and th1 = th3 swings as a compound pendulum.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

namespace four_bar_detail {
struct Params {
  Param l0, l1, l2, l3, m1, m2, m3, g, th1, w1;
};

/// Assembles the open branch (B below the line A-C) from the crank angle
/// and rate: the loop closed exactly and J v = 0.
/// @throws std::invalid_argument when the bars cannot close at th1.
inline InitialState Assemble(const Params& P, const Eigen::VectorXd& prm) {
  const double l0 = prm[P.l0], l1 = prm[P.l1], l2 = prm[P.l2], l3 = prm[P.l3];
  const double th1 = prm[P.th1], w1 = prm[P.w1];
  const Eigen::Vector2d A(l1 * std::sin(th1), -l1 * std::cos(th1));
  const Eigen::Vector2d C(l0, 0.0);
  const Eigen::Vector2d AC = C - A;
  const double d = AC.norm();
  const double along = (l2 * l2 - l3 * l3 + d * d) / (2.0 * d);
  const double h2 = l2 * l2 - along * along;
  if (!(d > 0.0) || !(h2 >= 0.0)) {
    throw std::invalid_argument(
        "four_bar: the coupler (l2) and rocker (l3) cannot reach between the "
        "crank tip and the rocker pivot at theta1_0 = " +
        std::to_string(th1) + "; change the lengths or theta1_0");
  }
  const Eigen::Vector2d u = AC / d, n(-u[1], u[0]);
  const Eigen::Vector2d B = A + along * u - std::sqrt(h2) * n;
  const Eigen::Vector2d AB = B - A, CB = B - C;
  const double th2 = std::atan2(AB[0], -AB[1]);
  const double th3 = std::atan2(CB[0], -CB[1]);
  // Velocities: l2 e'(th2) w2 - l3 e'(th3) w3 = -l1 e'(th1) w1.
  Eigen::Matrix2d K;
  K << l2 * std::cos(th2), -l3 * std::cos(th3), l2 * std::sin(th2),
      -l3 * std::sin(th3);
  const Eigen::Vector2d rhs(-l1 * std::cos(th1) * w1, -l1 * std::sin(th1) * w1);
  const Eigen::Vector2d w23 = K.partialPivLu().solve(rhs);
  InitialState s;
  s.q = Eigen::Vector3d(th1, th2, th3);
  s.v = Eigen::Vector3d(w1, w23[0], w23[1]);
  return s;
}
}  // namespace four_bar_detail

inline Problem FourBarProblem() {
  ModelBuilder b("four_bar");
  b.Coordinates({"theta1", "theta2", "theta3"});
  four_bar_detail::Params P;
  P.l0 = b.Parameter("l0", 1.0);
  P.l1 = b.Parameter("l1", 0.4);
  P.l2 = b.Parameter("l2", 1.0);
  P.l3 = b.Parameter("l3", 0.8);
  P.m1 = b.Parameter("m1", 1.0);
  P.m2 = b.Parameter("m2", 1.0);
  P.m3 = b.Parameter("m3", 1.0);
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
