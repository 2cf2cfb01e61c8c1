// A planar golf downswing: an arm and a flexible club, with the hand path
// prescribed (seed 003: a prescribed hand path is an external power source
// in a reduced club model, and its boundary work must be reported).
//
// Shoulder fixed at the origin; angles counterclockwise from the downward
// vertical, e(th) = (sin th, -cos th), n(th) = de/dth = (cos th, sin th).
// Coordinates:
//   theta_a  arm angle: a uniform rod (mass ma, length la) from the shoulder
//            to the hand H = la e(theta_a);
//   theta_c  club angle: the club's rigid axis from the hand;
//   eta      shaft bending, one mode: the point at distance s along the
//            shaft sits at H + s e(theta_c) + eta phi(s) n(theta_c), with the
//            static cantilever shape phi(s) = (3 x^2 - x^3) / 2, x = s / lc
//            (phi(lc) = 1, so eta is the tip deflection [m]).
// The shaft (uniform, mass mc, length lc) and the clubhead (a point mass mh
// at s = lc) give
//   T = ma la^2 theta_a'^2 / 6 + int_0^lc (mc/lc) |r'(s)|^2 / 2 ds
//       + mh |r'(lc)|^2 / 2,
//   V = g (ma yA + int (mc/lc) y(s) ds + mh y(lc)) + k_shaft eta^2 / 2,
// with the shaft integrals by 4-point Gauss-Legendre quadrature, exact here
// (the integrands are polynomials of degree at most 6 in s). Modal damping
// d_shaft acts on eta.
//
// The hand path is the moving constraint
//   hand_path: theta_a - psi(t) = 0,
//   psi(t) = psi_top + (psi_impact - psi_top) S(t / T_down),
//   S(x) = 10 x^3 - 15 x^4 + 6 x^5 on [0, 1] (then held at 1),
// a circular arc of radius la that starts and ends at rest. Its multiplier
// is the shoulder torque that the prescribed motion needs, and its power
// lambda psi' = -lambda Phi_t is the energy the hand path feeds in.
//
// A wrist torque a(t) acts between arm and club (input 'wrist', torque a on
// the club and -a on the arm). It follows first-order activation
// a' = (u_c - a) / T_act for a step command u_c = u_wrist from t_on, whose
// exact solution is used: a = u_wrist (1 - exp(-(t - t_on) / T_act)) after
// t_on. (It is not an integrated state: actuator states are issue 7 item 1.)
//
// Impact is the event 'impact': the club passing the vertical
// (theta_c = 0); the run stops there and the clubhead speed is
// |r'(lc)| of the last sample (ClubheadSpeed below).
//
// The defaults are illustrative, not fitted to a golfer: arm 4 kg, 0.62 m;
// club 0.32 kg, 1.1 m, head 0.2 kg; shaft tip stiffness 800 N/m (first
// mode near 8.6 Hz with the head); the hand path sweeps from 2.4 rad at the
// top to -0.8 rad in 0.3 s; wrist torque -20 N m commanded from 0.1 s with
// a 30 ms activation time. Impact comes at t = 0.283 s with the clubhead
// at about 34 m/s and the shaft bent 3.3 cm; the hand path feeds in about
// 119 J and the wrist about 31 J.
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

namespace golf_detail {

struct Params {
  Param ma, la, mc, lc, mh, k, d, g, psi_top, psi_impact, t_down, cock, u_wrist,
      t_on, t_act;
};

/// Prescribed arm angle psi(t) (a smooth rest-to-rest quintic).
template <class S>
S Psi(const S& t, const S& top, const S& impact, const S& duration) {
  // Clamp (dual.hpp) is branch-free, so the model stays compilable.
  const S x = Clamp(S(t / duration), S(0.0), S(1.0));
  const S x3 = x * x * x;
  return top + (impact - top) * x3 * (10.0 - 15.0 * x + 6.0 * x * x);
}

/// 4-point Gauss-Legendre nodes and weights on [0, 1].
inline constexpr double kGaussX[4] = {0.0694318442029737, 0.3300094782075719,
                                      0.6699905217924281, 0.9305681557970263};
inline constexpr double kGaussW[4] = {0.1739274225687269, 0.3260725774312731,
                                      0.3260725774312731, 0.1739274225687269};

/// Shape of the shaft mode at x = s / lc.
inline double Phi(double x) { return 0.5 * (3.0 * x * x - x * x * x); }

}  // namespace golf_detail

Problem GolfSwingProblem();

/// Clubhead speed [m/s] at a sample of GolfSwingProblem with parameters
/// `prm` (la and lc by name).
inline double ClubheadSpeed(const Model& model,
                            const Eigen::VectorXd& prm,
                            const Eigen::VectorXd& q,
                            const Eigen::VectorXd& v) {
  const double la = prm[model.ParameterIndex("la")];
  const double lc = prm[model.ParameterIndex("lc")];
  const double vx = la * v[0] * std::cos(q[0]) +
                    (lc * v[1] + v[2]) * std::cos(q[1]) -
                    q[2] * v[1] * std::sin(q[1]);
  const double vy = la * v[0] * std::sin(q[0]) +
                    (lc * v[1] + v[2]) * std::sin(q[1]) +
                    q[2] * v[1] * std::cos(q[1]);
  return std::hypot(vx, vy);
}

}  // namespace daedalus::problems
