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
inline Problem RodPairAbsoluteProblem() {
  using namespace rod_pair_detail;
  ModelBuilder b("rod_pair_absolute");
  b.Coordinates({"alpha1", "alpha2"});
  const Params P = Declare(b);
  b.KineticEnergy([=](const auto& x) {
    const auto l1 = x.p[P.l1], l2 = x.p[P.l2];
    const auto w1 = x.v[0], w2 = x.v[1];
    // Centre velocities: d/dt of l1 e(a1)/2 and l1 e(a1) + l2 e(a2)/2, with
    // de/da = (cos a, sin a).
    const auto v1x = 0.5 * l1 * cos(x.q[0]) * w1;
    const auto v1y = 0.5 * l1 * sin(x.q[0]) * w1;
    const auto v2x = l1 * cos(x.q[0]) * w1 + 0.5 * l2 * cos(x.q[1]) * w2;
    const auto v2y = l1 * sin(x.q[0]) * w1 + 0.5 * l2 * sin(x.q[1]) * w2;
    return 0.5 * x.p[P.m1] * (v1x * v1x + v1y * v1y) +
           0.5 * x.p[P.m2] * (v2x * v2x + v2y * v2y) +
           0.5 * (x.p[P.m1] * l1 * l1 / 12.0) * w1 * w1 +
           0.5 * (x.p[P.m2] * l2 * l2 / 12.0) * w2 * w2;
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto y1 = -0.5 * x.p[P.l1] * cos(x.q[0]);
    const auto y2 = -x.p[P.l1] * cos(x.q[0]) - 0.5 * x.p[P.l2] * cos(x.q[1]);
    return x.p[P.g] * (x.p[P.m1] * y1 + x.p[P.m2] * y2);
  });
  b.Input("u1", Column(2, 0, 1.0, 1, 0.0),
          [=](const auto& x) { return x.p[P.u1]; });
  b.Input("u2", Column(2, 0, -1.0, 1, 1.0),
          [=](const auto& x) { return x.p[P.u2]; });
  b.Damping(AbsoluteDamping(2, 0, 1, P.b1, P.b2));
  Problem p;
  p.model = std::move(b).Build();
  p.description = Description("absolute angles (alpha1, alpha2)");
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::Vector2d(kRodPairStart[0], kRodPairStart[1]);
    s.v = Eigen::Vector2d(kRodPairStart[2], kRodPairStart[3]);
    return s;
  };
  Defaults(&p);
  return p;
}

/// Relative coordinates: q1 = alpha1 - pi/2, q2 = alpha2 - alpha1.
inline Problem RodPairRelativeProblem() {
  using namespace rod_pair_detail;
  ModelBuilder b("rod_pair_relative");
  b.Coordinates({"q1", "q2"});
  const Params P = Declare(b);
  b.KineticEnergy([=](const auto& x) {
    const auto l1 = x.p[P.l1], l2 = x.p[P.l2];
    const auto w1 = x.v[0], w2 = x.v[0] + x.v[1];  // absolute rod rates
    const auto s1 = sin(x.q[0]), c1 = cos(x.q[0]);
    const auto s12 = sin(x.q[0] + x.q[1]), c12 = cos(x.q[0] + x.q[1]);
    // Centres at l1 (c1, s1)/2 and l1 (c1, s1) + l2 (c12, s12)/2.
    const auto v1x = -0.5 * l1 * s1 * w1, v1y = 0.5 * l1 * c1 * w1;
    const auto v2x = -l1 * s1 * w1 - 0.5 * l2 * s12 * w2;
    const auto v2y = l1 * c1 * w1 + 0.5 * l2 * c12 * w2;
    return 0.5 * x.p[P.m1] * (v1x * v1x + v1y * v1y) +
           0.5 * x.p[P.m2] * (v2x * v2x + v2y * v2y) +
           0.5 * (x.p[P.m1] * l1 * l1 / 12.0) * w1 * w1 +
           0.5 * (x.p[P.m2] * l2 * l2 / 12.0) * w2 * w2;
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto y1 = 0.5 * x.p[P.l1] * sin(x.q[0]);
    const auto y2 =
        x.p[P.l1] * sin(x.q[0]) + 0.5 * x.p[P.l2] * sin(x.q[0] + x.q[1]);
    return x.p[P.g] * (x.p[P.m1] * y1 + x.p[P.m2] * y2);
  });
  b.Input("u1", Column(2, 0, 1.0, 1, 0.0),
          [=](const auto& x) { return x.p[P.u1]; });
  b.Input("u2", Column(2, 0, 0.0, 1, 1.0),
          [=](const auto& x) { return x.p[P.u2]; });
  b.Damping([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> d = MatX<S>::Zero(2, 2);
    d(0, 0) = x.p[P.b1];
    d(1, 1) = x.p[P.b2];
    return d;
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description = Description(
      "relative coordinates (q1 = alpha1 - pi/2 from the horizontal, q2 = "
      "alpha2 - alpha1 the elbow angle)");
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::Vector2d(kRodPairStart[0] - M_PI / 2.0,
                          kRodPairStart[1] - kRodPairStart[0]);
    s.v =
        Eigen::Vector2d(kRodPairStart[2], kRodPairStart[3] - kRodPairStart[2]);
    return s;
  };
  Defaults(&p);
  return p;
}

/// Maximal coordinates: two free planar bodies (x1, y1, a1, x2, y2, a2)
/// joined by two revolute joints written as holonomic constraints.
inline Problem RodPairMaximalProblem() {
  using namespace rod_pair_detail;
  ModelBuilder b("rod_pair_maximal");
  b.Coordinates({"x1", "y1", "a1", "x2", "y2", "a2"});
  const Params P = Declare(b);
  b.KineticEnergy([=](const auto& x) {
    const auto& w = x.v;
    const auto i1 = x.p[P.m1] * x.p[P.l1] * x.p[P.l1] / 12.0;
    const auto i2 = x.p[P.m2] * x.p[P.l2] * x.p[P.l2] / 12.0;
    return 0.5 * x.p[P.m1] * (w[0] * w[0] + w[1] * w[1]) +
           0.5 * i1 * w[2] * w[2] +
           0.5 * x.p[P.m2] * (w[3] * w[3] + w[4] * w[4]) +
           0.5 * i2 * w[5] * w[5];
  });
  b.PotentialEnergy([=](const auto& x) {
    return x.p[P.g] * (x.p[P.m1] * x.q[1] + x.p[P.m2] * x.q[4]);
  });
  b.Holonomic(
      "base",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        r[0] = x.q[0] - 0.5 * x.p[P.l1] * sin(x.q[2]);
        r[1] = x.q[1] + 0.5 * x.p[P.l1] * cos(x.q[2]);
        return r;
      },
      2);
  b.Holonomic(
      "elbow",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        r[0] = x.q[0] + 0.5 * x.p[P.l1] * sin(x.q[2]) -
               (x.q[3] - 0.5 * x.p[P.l2] * sin(x.q[5]));
        r[1] = x.q[1] - 0.5 * x.p[P.l1] * cos(x.q[2]) -
               (x.q[4] + 0.5 * x.p[P.l2] * cos(x.q[5]));
        return r;
      },
      2);
  b.Input("u1", Column(6, 2, 1.0, 5, 0.0),
          [=](const auto& x) { return x.p[P.u1]; });
  b.Input("u2", Column(6, 2, -1.0, 5, 1.0),
          [=](const auto& x) { return x.p[P.u2]; });
  b.Damping(AbsoluteDamping(6, 2, 5, P.b1, P.b2));
  Problem p;
  p.model = std::move(b).Build();
  p.description = Description(
      "maximal coordinates (each rod's centre and angle, two revolute joints "
      "as holonomic constraints 'base' and 'elbow')");
  p.initial = [P](const Eigen::VectorXd& prm) {
    const double l1 = prm[P.l1], l2 = prm[P.l2];
    const double a1 = kRodPairStart[0], a2 = kRodPairStart[1];
    const double w1 = kRodPairStart[2], w2 = kRodPairStart[3];
    InitialState s;
    s.q.resize(6);
    s.v.resize(6);
    s.q << 0.5 * l1 * std::sin(a1), -0.5 * l1 * std::cos(a1), a1,
        l1 * std::sin(a1) + 0.5 * l2 * std::sin(a2),
        -l1 * std::cos(a1) - 0.5 * l2 * std::cos(a2), a2;
    s.v << 0.5 * l1 * std::cos(a1) * w1, 0.5 * l1 * std::sin(a1) * w1, w1,
        l1 * std::cos(a1) * w1 + 0.5 * l2 * std::cos(a2) * w2,
        l1 * std::sin(a1) * w1 + 0.5 * l2 * std::sin(a2) * w2, w2;
    return s;
  };
  Defaults(&p);
  // Baumgarte on Adams, like the reduced forms: at rtol 1e-9 it meets the
  // same balance as they do (projection needs BDF, whose lower order costs
  // an order of magnitude in accuracy here; GGL on IDAS stalls at these
  // tolerances, see docs/problems.md).
  p.defaults.formulation = Formulation::kBaumgarte;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

/// The three forms behind `rod_pair --coordinates absolute|relative|maximal`.
inline ProblemVariants RodPairVariants() {
  ProblemVariants v;
  v.option = "coordinates";
  v.variants = {{"absolute", RodPairAbsoluteProblem},
                {"relative", RodPairRelativeProblem},
                {"maximal", RodPairMaximalProblem}};
  return v;
}

}  // namespace daedalus::problems
