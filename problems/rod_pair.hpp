// Seed 000's two uniform rods (worked examples 1 and 2): rod 1 hinged at a
// fixed base, rod 2 hinged to rod 1's far end, in a vertical plane, with a
// base motor u1 (on rod 1, reacting on the ground) and an elbow motor u2
// (on rod 2, reacting on rod 1), and optional viscous hinge dampers b1, b2.
//
// Three descriptions of the same physical system (--coordinates):
//
//   absolute  alpha1, alpha2: each rod's angle counterclockwise from the
//             downward vertical. With e(a) = (sin a, -cos a), the centres
//             are r_C1 = l1 e(a1)/2 and r_C2 = l1 e(a1) + l2 e(a2)/2;
//             T = sum m_i |v_Ci|^2 / 2 + (m_i l_i^2 / 12) adot_i^2 / 2,
//             V = sum m_i g y_Ci,
//             Q = (u1 - u2, u2)            (virtual work u1 da1 + u2 (da2 -
//             da1)), D = [[b1 + b2, -b2], [-b2, b2]].
//   relative  q1 = alpha1 - pi/2 (rod 1 from the horizontal), q2 = alpha2 -
//             alpha1 (the elbow angle); Q = (u1, u2), D = diag(b1, b2).
//   maximal   (x1, y1, a1, x2, y2, a2): each rod's centre and angle as a free
//             planar body, the hinges as holonomic constraints
//             base:  r_C1 - l1 e(a1)/2 = 0                       (2 rows)
//             elbow: r_C1 + l1 e(a1)/2 - r_C2 + l2 e(a2)/2 = 0  (2 rows)
//             with the motors and dampers on a1, a2 as in `absolute`.
//
// Default start (seed 000): alpha = (0.6, -0.2) rad, alphadot = (0.3, -0.4)
// rad/s, for 5 s, unit masses and lengths, g = 9.81, u = (0.2, -0.1) N m.
// For constant torques the motor work is W = u1 dalpha1 + u2 (dalpha2 -
// dalpha1), so E - E0 - W = 0 along the exact motion (damping off).
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// Seed 000's start: absolute angles and rates (alpha1, alpha2, alphadot1,
/// alphadot2).
inline constexpr double kRodPairStart[4] = {0.6, -0.2, 0.3, -0.4};

namespace rod_pair_detail {

struct Params {
  Param m1, m2, l1, l2, g, u1, u2, b1, b2;
};

inline Params Declare(ModelBuilder& b) {
  Params p;
  p.m1 = b.Parameter("m1", 1.0);
  p.m2 = b.Parameter("m2", 1.0);
  p.l1 = b.Parameter("l1", 1.0);
  p.l2 = b.Parameter("l2", 1.0);
  p.g = b.Parameter("g", 9.81);
  p.u1 = b.Parameter("u1", 0.2);
  p.u2 = b.Parameter("u2", -0.1);
  p.b1 = b.Parameter("b1", 0.0);
  p.b2 = b.Parameter("b2", 0.0);
  return p;
}

/// A constant 2-vector column of generalized force at coordinates (i, j) of
/// an n-coordinate model: ci at i, cj at j.
inline auto Column(int n, int i, double ci, int j, double cj) {
  return [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    VecX<S> c = VecX<S>::Zero(n);
    c[i] += ci;
    c[j] += cj;
    return c;
  };
}

/// The hinge dampers acting on the absolute angles at coordinates (i, j).
inline auto AbsoluteDamping(int n, int i, int j, Param b1, Param b2) {
  return [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> d = MatX<S>::Zero(n, n);
    d(i, i) = x.p[b1] + x.p[b2];
    d(i, j) = -x.p[b2];
    d(j, i) = -x.p[b2];
    d(j, j) = x.p[b2];
    return d;
  };
}

inline std::string Description(const std::string& form) {
  return "Seed 000's two uniform rods under gravity with a base motor u1 and "
         "an elbow motor u2 (constant torques, parameters) and optional "
         "hinge dampers b1, b2, in " +
         form +
         ". Start alpha = (0.6, -0.2) rad, alphadot = (0.3, -0.4) rad/s "
         "(angles from the downward vertical), 5 s.";
}

inline void Defaults(Problem* p) {
  p->defaults.t_end = 5.0;
  p->defaults.output_step = 0.01;
  p->defaults.rtol = 1e-9;
  p->defaults.atol = 1e-11;
  // Smooth and nonstiff (the pendulum frequencies are a few rad/s).
  p->defaults.integrator = Integrator::kCvodesAdams;
}

}  // namespace rod_pair_detail

/// Absolute angles alpha1, alpha2 from the downward vertical.
Problem RodPairAbsoluteProblem();

/// Relative coordinates: q1 = alpha1 - pi/2, q2 = alpha2 - alpha1.
Problem RodPairRelativeProblem();

/// Maximal coordinates: two free planar bodies (x1, y1, a1, x2, y2, a2)
/// joined by two revolute joints written as holonomic constraints.
Problem RodPairMaximalProblem();

/// The three forms behind `rod_pair --coordinates absolute|relative|maximal`.
ProblemVariants RodPairVariants();

}  // namespace daedalus::problems
