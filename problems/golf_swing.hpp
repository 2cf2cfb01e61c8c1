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

/// Declares golf_swing's 15 parameters on `b` (names, defaults and ranges
/// in the header comment above); golf_impact declares the same.
inline Params DeclareParams(ModelBuilder& b) {
  Params P;
  P.ma = b.Parameter("ma", 4.0, ParamRange::Positive());
  P.la = b.Parameter("la", 0.62, ParamRange::Positive());
  P.mc = b.Parameter("mc", 0.32, ParamRange::Positive());
  P.lc = b.Parameter("lc", 1.1, ParamRange::Positive());
  P.mh = b.Parameter("mh", 0.2, ParamRange::Positive());
  P.k = b.Parameter("k_shaft", 800.0, ParamRange::NonNegative());
  P.d = b.Parameter("d_shaft", 0.05, ParamRange::NonNegative());
  P.g = b.Parameter("g", 9.81);
  P.psi_top = b.Parameter("psi_top", 2.4);
  P.psi_impact = b.Parameter("psi_impact", -0.8);
  P.t_down = b.Parameter("T_down", 0.3, ParamRange::Positive());
  P.cock = b.Parameter("wrist_cock", 1.6);
  P.u_wrist = b.Parameter("u_wrist", -20.0);
  P.t_on = b.Parameter("t_on", 0.1, ParamRange::NonNegative());
  P.t_act = b.Parameter("T_act", 0.03, ParamRange::Positive());
  return P;
}

/// The shaft point at x = s / lc with mode shape value f = Phi(x): its
/// position H + s e(theta_c) + eta f n(theta_c) ...
template <class X>
Eigen::Matrix<Scalar<X>, 2, 1> ShaftPoint(const X& x,
                                          const Params& P,
                                          double xi,
                                          double f) {
  using S = Scalar<X>;
  const S s = xi * x.p[P.lc];
  Eigen::Matrix<S, 2, 1> r;
  r[0] = x.p[P.la] * sin(x.q[0]) + s * sin(x.q[1]) + x.q[2] * f * cos(x.q[1]);
  r[1] = -x.p[P.la] * cos(x.q[0]) - s * cos(x.q[1]) + x.q[2] * f * sin(x.q[1]);
  return r;
}

/// ... and its velocity r' = la wa n(ta) + s wc n(tc) + etad f n(tc)
/// - eta f wc e(tc).
template <class X>
Eigen::Matrix<Scalar<X>, 2, 1> ShaftPointVelocity(const X& x,
                                                  const Params& P,
                                                  double xi,
                                                  double f) {
  using S = Scalar<X>;
  const S la = x.p[P.la], lc = x.p[P.lc];
  const S ta = x.q[0], tc = x.q[1], eta = x.q[2];
  const S wa = x.v[0], wc = x.v[1], etad = x.v[2];
  const S s = xi * lc;
  Eigen::Matrix<S, 2, 1> v;
  v[0] = la * wa * cos(ta) + (s * wc + etad * f) * cos(tc) -
         eta * f * wc * sin(tc);
  v[1] = la * wa * sin(ta) + (s * wc + etad * f) * sin(tc) +
         eta * f * wc * cos(tc);
  return v;
}

/// The kinetic energy of the arm, the shaft (by the Gauss-Legendre rule)
/// and the head; coordinates 0..2 are theta_a, theta_c, eta.
template <class X>
Scalar<X> SwingKineticEnergy(const X& x, const Params& P) {
  using S = Scalar<X>;
  const S arm = x.p[P.ma] * x.p[P.la] * x.p[P.la] / 6.0 * x.v[0] * x.v[0];
  S shaft = S(0.0);
  for (int i = 0; i < 4; ++i)
    shaft +=
        kGaussW[i] *
        ShaftPointVelocity(x, P, kGaussX[i], Phi(kGaussX[i])).squaredNorm();
  shaft *= 0.5 * x.p[P.mc];  // (mc / lc) * lc for the [0, 1] weights
  const S head =
      0.5 * x.p[P.mh] * ShaftPointVelocity(x, P, 1.0, 1.0).squaredNorm();
  return arm + shaft + head;
}

/// Gravity's potential of the arm, the shaft and the head, and the shaft's
/// spring.
template <class X>
Scalar<X> SwingPotentialEnergy(const X& x, const Params& P) {
  using S = Scalar<X>;
  const S arm = -0.5 * x.p[P.ma] * x.p[P.la] * cos(x.q[0]);
  S shaft = S(0.0);
  for (int i = 0; i < 4; ++i)
    shaft += kGaussW[i] * ShaftPoint(x, P, kGaussX[i], Phi(kGaussX[i]))[1];
  shaft *= x.p[P.mc];
  const S head = x.p[P.mh] * ShaftPoint(x, P, 1.0, 1.0)[1];
  return x.p[P.g] * (arm + shaft + head) + 0.5 * x.p[P.k] * x.q[2] * x.q[2];
}

/// The wrist torque a(t): 0 before t_on, then u_wrist (1 - exp(-(t - t_on)
/// / T_act)); branch-free (IfPositive, dual.hpp), so the model compiles.
template <class X>
Scalar<X> WristTorque(const X& x, const Params& P) {
  using S = Scalar<X>;
  const S since = x.t - x.p[P.t_on];
  return IfPositive(
      since, S(x.p[P.u_wrist] * (1.0 - exp(-since / x.p[P.t_act]))), S(0.0));
}

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
