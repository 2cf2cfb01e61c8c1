// Definitions of the model declared in stiff_linkage.hpp, compiled once into
// a library (the headers are included by many tests).
#include "stiff_linkage.hpp"

namespace daedalus::problems {

Problem StiffLinkageProblem() {
  ModelBuilder b("stiff_linkage");
  b.Coordinates(
      {"theta1", "theta2", "x3", "theta4", "theta5", "theta6", "theta7", "y8"});
  stiff_linkage_detail::Params P;
  const auto pos = ParamRange::Positive();
  P.a = b.Parameter("a", 0.05, pos);
  P.b = b.Parameter("b", 0.2, pos);
  P.J1 = b.Parameter("J1", 5e-3, pos);
  P.m2 = b.Parameter("m2", 0.05, pos);
  P.m3 = b.Parameter("m3", 0.2, pos);
  P.xD = b.Parameter("xD", 0.6);
  P.yD = b.Parameter("yD", 0.4);
  P.l4 = b.Parameter("l4", 0.4, pos);
  P.lp = b.Parameter("lp", 0.3, pos);
  P.m4 = b.Parameter("m4", 2.0, pos);
  P.m5 = b.Parameter("m5", 20.0, pos);
  P.l7 = b.Parameter("l7", 0.15, pos);
  P.m7 = b.Parameter("m7", 1e-4, pos);
  P.m8 = b.Parameter("m8", 1e-4, pos);
  P.xG = b.Parameter("xG", 0.96);
  P.k = b.Parameter("k", 5e4, ParamRange::NonNegative());
  P.s0 = b.Parameter("s0", 0.4, pos);
  P.c = b.Parameter("c", 2.0, ParamRange::NonNegative());
  P.tau0 = b.Parameter("tau0", 30.0);
  P.Omega = b.Parameter("Omega", 1100.0, pos);
  P.g = b.Parameter("g", 9.81);
  P.th1 = b.Parameter("theta1_0", 0.0);
  P.w1 = b.Parameter("omega1_0", 1000.0);
  P.psi0 = b.Parameter("psi0", 0.05);

  b.KineticEnergy([=](const auto& x) {
    const auto& q = x.q;
    const auto& w = x.v;
    const auto a = x.p[P.a], bb = x.p[P.b], l4 = x.p[P.l4], lp = x.p[P.lp],
               l7 = x.p[P.l7];
    // Centre velocities: sums of l w e'(th), e' = (-sin, cos).
    const auto v2x = -a * sin(q[0]) * w[0] - 0.5 * bb * sin(q[1]) * w[1];
    const auto v2y = a * cos(q[0]) * w[0] + 0.5 * bb * cos(q[1]) * w[1];
    const auto v5x = -l4 * sin(q[3]) * w[3] - 0.5 * lp * sin(q[4]) * w[4];
    const auto v5y = l4 * cos(q[3]) * w[3] + 0.5 * lp * cos(q[4]) * w[4];
    const auto v7x = -l4 * sin(q[5]) * w[5] - 0.5 * l7 * sin(q[6]) * w[6];
    const auto v7y = l4 * cos(q[5]) * w[5] + 0.5 * l7 * cos(q[6]) * w[6];
    const auto m2 = x.p[P.m2], m4 = x.p[P.m4], m5 = x.p[P.m5], m7 = x.p[P.m7];
    return 0.5 * x.p[P.J1] * w[0] * w[0] +
           0.5 * m2 * (v2x * v2x + v2y * v2y + bb * bb / 12.0 * w[1] * w[1]) +
           0.5 * x.p[P.m3] * w[2] * w[2] +
           0.5 * (m4 * l4 * l4 / 3.0) * (w[3] * w[3] + w[5] * w[5]) +
           0.5 * m5 * (v5x * v5x + v5y * v5y + lp * lp / 12.0 * w[4] * w[4]) +
           0.5 * m7 * (v7x * v7x + v7y * v7y + l7 * l7 / 12.0 * w[6] * w[6]) +
           0.5 * x.p[P.m8] * w[7] * w[7];
  });
  // Piston-to-platform separation d = P - (x3, 0), shared by V and D.
  auto separation = [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S dx = x.p[P.xD] + x.p[P.l4] * cos(x.q[3]) - x.q[2];
    const S dy = x.p[P.yD] + x.p[P.l4] * sin(x.q[3]);
    return Eigen::Matrix<S, 2, 1>(dx, dy);
  };
  b.PotentialEnergy([=](const auto& x) {
    const auto& q = x.q;
    const auto l4 = x.p[P.l4], yD = x.p[P.yD];
    const auto y2 = x.p[P.a] * sin(q[0]) + 0.5 * x.p[P.b] * sin(q[1]);
    const auto y4 = yD + 0.5 * l4 * sin(q[3]);
    const auto y5 = yD + l4 * sin(q[3]) + 0.5 * x.p[P.lp] * sin(q[4]);
    const auto y6 = yD + 0.5 * l4 * sin(q[5]);
    const auto y7 = yD + l4 * sin(q[5]) + 0.5 * x.p[P.l7] * sin(q[6]);
    const auto gravity =
        x.p[P.g] * (x.p[P.m2] * y2 + x.p[P.m4] * (y4 + y6) + x.p[P.m5] * y5 +
                    x.p[P.m7] * y7 + x.p[P.m8] * q[7]);
    const auto stretch = separation(x).norm() - x.p[P.s0];
    return gravity + 0.5 * x.p[P.k] * stretch * stretch;
  });
  b.Damping([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const Eigen::Matrix<S, 2, 1> d = separation(x);
    const S s = d.norm();
    const S l4 = x.p[P.l4];
    Eigen::Matrix<S, 8, 1> g = Eigen::Matrix<S, 8, 1>::Zero();
    g[2] = -d[0] / s;  // ds/dx3
    g[3] = (-d[0] * l4 * sin(x.q[3]) + d[1] * l4 * cos(x.q[3])) / s;
    const Eigen::Matrix<S, 8, 8> D = x.p[P.c] * g * g.transpose();
    return D;
  });
  b.Input(
      "motor",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> col = VecX<Scalar<decltype(x)>>::Zero(8);
        col[0] = 1.0;
        return col;
      },
      [=](const auto& x) {
        return x.p[P.tau0] * (1.0 - x.v[0] / x.p[P.Omega]);
      });
  b.Holonomic(
      "crank_loop",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        r[0] = x.p[P.a] * cos(x.q[0]) + x.p[P.b] * cos(x.q[1]) - x.q[2];
        r[1] = x.p[P.a] * sin(x.q[0]) + x.p[P.b] * sin(x.q[1]);
        return r;
      },
      2);
  b.Holonomic(
      "platform_loop",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        const auto l4 = x.p[P.l4], lp = x.p[P.lp];
        r[0] = l4 * cos(x.q[3]) + lp * cos(x.q[4]) - l4 * cos(x.q[5]) - lp;
        r[1] = l4 * sin(x.q[3]) + lp * sin(x.q[4]) - l4 * sin(x.q[5]);
        return r;
      },
      2);
  b.Holonomic(
      "follower_loop",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        const auto l4 = x.p[P.l4], l7 = x.p[P.l7];
        r[0] = x.p[P.xD] + x.p[P.lp] + l4 * cos(x.q[5]) + l7 * cos(x.q[6]) -
               x.p[P.xG];
        r[1] = x.p[P.yD] + l4 * sin(x.q[5]) + l7 * sin(x.q[6]) - x.q[7];
        return r;
      },
      2);
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Fast, stiff planar mechanism (issue 19): a DC-motor-driven "
      "slider-crank at about 1e3 rad/s, its piston joined by a stiff "
      "spring-damper to a heavy parallelogram platform that carries a light "
      "follower rod and slider; three 2-row loops whose multipliers span "
      "about six orders of magnitude. Absolute angles from +x.";
  p.initial = [P](const Eigen::VectorXd& prm) {
    return stiff_linkage_detail::Assemble(P, prm);
  };
  p.defaults.t_end = 0.2;
  p.defaults.output_step = 5e-4;
  p.defaults.rtol = 1e-8;
  p.defaults.atol = 1e-8;
  p.defaults.formulation = Formulation::kGgl;
  p.defaults.integrator = Integrator::kIdas;
  return p;
}

}  // namespace daedalus::problems
