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

Problem FourBarProblem();

}  // namespace daedalus::problems
