// A fast, stiff planar mechanism built to be hard for the DAE forms
// (issue 19): a motor-driven high-speed slider-crank, a heavy slow
// parallelogram platform coupled to its piston by a stiff spring-damper,
// and a very light follower linkage on the platform. Three closed loops,
// eight coordinates, six constraint rows, two degrees of freedom; the loop
// reactions span about six orders of magnitude (the piston's rows carry
// kilonewtons, the follower's millinewtons) and the crank turns at about
// 1e3 rad/s. The design is this project's own; the seven-body squeezer of
// Andrews (Hairer and Wanner 1996, IV.10; Schiehlen 1990) inspired the
// brief, not the geometry.
//
// Vertical plane, gravity along -y; every angle is absolute, measured
// counterclockwise from +x, e(th) = (cos th, sin th), e'(th) = (-sin, cos).
// Coordinates q = (th1, th2, x3, th4, th5, th6, th7, y8):
//   th1  crank about O = (0, 0), length a, balanced (centre of mass at O,
//        inertia J1 about O), driven by a DC motor (input 'motor'):
//        torque tau0 (1 - th1' / Omega);
//   th2  connecting rod (uniform, m2, length b) from the crank pin
//        A = a e(th1) to the piston;
//   x3   piston (m3) sliding on the line y = 0;
//   th4  left rocker (uniform, m4, length l4) about D = (xD, yD);
//   th5  platform (uniform, m5, length lp) from P = D + l4 e(th4);
//   th6  right rocker (uniform, m6 = m4, length l4) about E = D + (lp, 0);
//   th7  light follower rod (uniform, m7, length l7) from the right
//        rocker's tip Q = E + l4 e(th6);
//   y8   light follower slider (m8) on the vertical guide x = xG.
// Loops (2 rows each):
//   crank:    a e(th1) + b e(th2) - (x3, 0) = 0
//   platform: l4 e(th4) + lp e(th5) - l4 e(th6) - (lp, 0) = 0
//   follower: Q + l7 e(th7) - (xG, y8) = 0
// A spring-damper (stiffness k, free length s0, damping c) joins the piston
// (x3, 0) to the platform's end P: V_s = k (s - s0)^2 / 2, s = |P - (x3, 0)|,
// Rayleigh matrix c (grad s)(grad s)'. The initial state puts the crank at
// th1_0 turning at omega1_0, the platform swung by psi0 from hanging
// (th4 = th6 = -pi/2 + psi0, th5 = 0) at rest, the follower on its upper
// branch (th7 in (0, pi/2)); Assemble() closes the loops exactly.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

namespace stiff_linkage_detail {

struct Params {
  Param a, b, J1, m2, m3, xD, yD, l4, lp, m4, m5, l7, m7, m8, xG;
  Param k, s0, c, tau0, Omega, g, th1, w1, psi0;
};

/// The closed, velocity-consistent initial state (see the file comment).
/// @throws std::invalid_argument when a loop cannot close.
inline InitialState Assemble(const Params& P, const Eigen::VectorXd& prm) {
  const double a = prm[P.a], b = prm[P.b], l4 = prm[P.l4], lp = prm[P.lp];
  const double l7 = prm[P.l7], xD = prm[P.xD], yD = prm[P.yD];
  const double th1 = prm[P.th1], w1 = prm[P.w1];
  if (!(a < b)) {
    throw std::invalid_argument(
        "stiff_linkage: the crank (a = " + std::to_string(a) +
        ") must be shorter than the connecting rod (b = " + std::to_string(b) +
        ") for the crank to turn fully; change a or b");
  }
  const double th2 = -std::asin(a * std::sin(th1) / b);
  const double x3 = a * std::cos(th1) + b * std::cos(th2);
  // a cos th1 w1 + b cos th2 w2 = 0 (the y row, differentiated).
  const double w2 = -a * std::cos(th1) * w1 / (b * std::cos(th2));
  const double x3d = -a * std::sin(th1) * w1 - b * std::sin(th2) * w2;
  const double th4 = -M_PI / 2.0 + prm[P.psi0];
  const double qx = xD + lp + l4 * std::cos(th4);
  const double qy = yD + l4 * std::sin(th4);
  const double cx = (prm[P.xG] - qx) / l7;
  if (!(cx > 0.0 && cx < 1.0)) {
    throw std::invalid_argument(
        "stiff_linkage: the follower rod (l7 = " + std::to_string(l7) +
        ") cannot reach the guide x = xG from the right rocker's tip at "
        "x = " +
        std::to_string(qx) +
        " on its upper branch; need 0 < xG - x_Q < l7: change xG, l7 or "
        "psi0");
  }
  const double th7 = std::acos(cx);
  const double y8 = qy + l7 * std::sin(th7);
  InitialState s;
  s.q.resize(8);
  s.q << th1, th2, x3, th4, 0.0, th4, th7, y8;
  s.v.resize(8);
  s.v << w1, w2, x3d, 0.0, 0.0, 0.0, 0.0, 0.0;
  return s;
}
}  // namespace stiff_linkage_detail

Problem StiffLinkageProblem();

}  // namespace daedalus::problems
