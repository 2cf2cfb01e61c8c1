// Definitions of the model declared in andrews_squeezer.hpp, compiled once
// into a library (the headers are included by many tests).
#include "andrews_squeezer.hpp"

namespace daedalus::problems {

namespace {

// The parameter handles, in the Test Set's order and names.
struct AndrewsParams {
  Param m1, m2, m3, m4, m5, m6, m7;
  Param xa, ya, xb, yb, xc, yc, c0;
  Param i1, i2, i3, i4, i5, i6, i7;
  Param d, da, e, ea, rr, ra, l0;
  Param ss, sa, sb, sc, sd, ta, tb, u, ua, ub, zf, zt, fa, mom;
};

}  // namespace

Problem AndrewsSqueezerProblem() {
  ModelBuilder b("andrews_squeezer");
  b.Coordinates({"beta", "theta", "gamma", "phi", "delta", "omega", "epsilon"});
  const auto pos = ParamRange::Positive();
  AndrewsParams P;
  P.m1 = b.Parameter("m1", 0.04325, pos);
  P.m2 = b.Parameter("m2", 0.00365, pos);
  P.m3 = b.Parameter("m3", 0.02373, pos);
  P.m4 = b.Parameter("m4", 0.00706, pos);
  P.m5 = b.Parameter("m5", 0.07050, pos);
  P.m6 = b.Parameter("m6", 0.00706, pos);
  P.m7 = b.Parameter("m7", 0.05498, pos);
  P.xa = b.Parameter("xa", -0.06934);
  P.ya = b.Parameter("ya", -0.00227);
  P.xb = b.Parameter("xb", -0.03635);
  P.yb = b.Parameter("yb", 0.03273);
  P.xc = b.Parameter("xc", 0.014);
  P.yc = b.Parameter("yc", 0.072);
  P.c0 = b.Parameter("c0", 4530.0, ParamRange::NonNegative());
  P.i1 = b.Parameter("i1", 2.194e-6, pos);
  P.i2 = b.Parameter("i2", 4.410e-7, pos);
  P.i3 = b.Parameter("i3", 5.255e-6, pos);
  P.i4 = b.Parameter("i4", 5.667e-7, pos);
  P.i5 = b.Parameter("i5", 1.169e-5, pos);
  P.i6 = b.Parameter("i6", 5.667e-7, pos);
  P.i7 = b.Parameter("i7", 1.912e-5, pos);
  P.d = b.Parameter("d", 28e-3, pos);
  P.da = b.Parameter("da", 115e-4, pos);
  P.e = b.Parameter("e", 2e-2, pos);
  P.ea = b.Parameter("ea", 1421e-5, pos);
  P.rr = b.Parameter("rr", 7e-3, pos);
  P.ra = b.Parameter("ra", 92e-5, pos);
  P.l0 = b.Parameter("l0", 7785e-5, pos);
  P.ss = b.Parameter("ss", 35e-3, pos);
  P.sa = b.Parameter("sa", 1874e-5, pos);
  P.sb = b.Parameter("sb", 1043e-5, pos);
  P.sc = b.Parameter("sc", 18e-3, pos);
  P.sd = b.Parameter("sd", 2e-2, pos);
  P.ta = b.Parameter("ta", 2308e-5, pos);
  P.tb = b.Parameter("tb", 916e-5, pos);
  P.u = b.Parameter("u", 4e-2, pos);
  P.ua = b.Parameter("ua", 1228e-5, pos);
  P.ub = b.Parameter("ub", 449e-5, pos);
  P.zf = b.Parameter("zf", 2e-2, pos);
  P.zt = b.Parameter("zt", 4e-2, pos);
  P.fa = b.Parameter("fa", 1421e-5, pos);
  P.mom = b.Parameter("mom", 33e-3);

  // T = v' M(q) v / 2 with the Test Set's mass matrix: four blocks, on
  // (beta, theta), gamma, (phi, delta) and (omega, epsilon).
  b.KineticEnergy([=](const auto& x) {
    const auto& q = x.q;
    const auto& w = x.v;
    const auto& p = x.p;
    const auto m2 = p[P.m2], m4 = p[P.m4], m6 = p[P.m6];
    const auto da = p[P.da], rr = p[P.rr], zt = p[P.zt], u = p[P.u];
    const auto ee = p[P.e] - p[P.ea];   // e - ea
    const auto ff = p[P.zf] - p[P.fa];  // zf - fa
    const auto cth = cos(q[1]), sph = sin(q[3]), som = sin(q[5]);
    const auto M11 = p[P.m1] * p[P.ra] * p[P.ra] +
                     m2 * (rr * rr - 2.0 * da * rr * cth + da * da) + p[P.i1] +
                     p[P.i2];
    const auto M21 = m2 * (da * da - da * rr * cth) + p[P.i2];
    const auto M22 = m2 * da * da + p[P.i2];
    const auto M33 =
        p[P.m3] * (p[P.sa] * p[P.sa] + p[P.sb] * p[P.sb]) + p[P.i3];
    const auto M44 = m4 * ee * ee + p[P.i4];
    const auto M54 = m4 * (ee * ee + zt * ee * sph) + p[P.i4];
    const auto M55 = m4 * (zt * zt + 2.0 * zt * ee * sph + ee * ee) +
                     p[P.m5] * (p[P.ta] * p[P.ta] + p[P.tb] * p[P.tb]) +
                     p[P.i4] + p[P.i5];
    const auto M66 = m6 * ff * ff + p[P.i6];
    const auto M76 = m6 * (ff * ff - u * ff * som) + p[P.i6];
    const auto M77 = m6 * (ff * ff - 2.0 * u * ff * som + u * u) +
                     p[P.m7] * (p[P.ua] * p[P.ua] + p[P.ub] * p[P.ub]) +
                     p[P.i6] + p[P.i7];
    return 0.5 *
           (M11 * w[0] * w[0] + 2.0 * M21 * w[1] * w[0] + M22 * w[1] * w[1] +
            M33 * w[2] * w[2] + M44 * w[3] * w[3] + 2.0 * M54 * w[4] * w[3] +
            M55 * w[4] * w[4] + M66 * w[5] * w[5] + 2.0 * M76 * w[6] * w[5] +
            M77 * w[6] * w[6]);
  });
  // The spring between D, on the body hinged at B, and the fixed point C.
  b.PotentialEnergy([=](const auto& x) {
    const auto& p = x.p;
    const auto cg = cos(x.q[2]), sg = sin(x.q[2]);
    const auto dx = p[P.sd] * cg + p[P.sc] * sg + p[P.xb] - p[P.xc];
    const auto dy = p[P.sd] * sg - p[P.sc] * cg + p[P.yb] - p[P.yc];
    const auto stretch = sqrt(dx * dx + dy * dy) - p[P.l0];
    return 0.5 * p[P.c0] * stretch * stretch;
  });
  // The motor's constant torque on the crank beta.
  b.OtherLoads([=](const auto& x) {
    VecX<Scalar<decltype(x)>> f = VecX<Scalar<decltype(x)>>::Zero(7);
    f[0] = x.p[P.mom];
    return f;
  });
  // The point reached from O through beta and theta, common to the three
  // loops: (rr cos beta - d cos(beta + theta), rr sin beta - d sin(beta +
  // theta)).
  auto tip = [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const auto& q = x.q;
    const auto rr = x.p[P.rr], d = x.p[P.d];
    Eigen::Matrix<S, 2, 1> r;
    r << rr * cos(q[0]) - d * cos(q[0] + q[1]),
        rr * sin(q[0]) - d * sin(q[0] + q[1]);
    return r;
  };
  // Closed through gamma to the fixed point B.
  b.Holonomic(
      "loop_b",
      [=](const auto& x) {
        using S = Scalar<decltype(x)>;
        const auto ss = x.p[P.ss];
        Eigen::Matrix<S, 2, 1> g = tip(x);
        g[0] += -ss * sin(x.q[2]) - x.p[P.xb];
        g[1] += ss * cos(x.q[2]) - x.p[P.yb];
        return g;
      },
      2);
  // Closed through phi and delta to the fixed point A.
  b.Holonomic(
      "loop_a1",
      [=](const auto& x) {
        using S = Scalar<decltype(x)>;
        const auto e = x.p[P.e], zt = x.p[P.zt];
        const auto pd = x.q[3] + x.q[4];
        Eigen::Matrix<S, 2, 1> g = tip(x);
        g[0] += -e * sin(pd) - zt * cos(x.q[4]) - x.p[P.xa];
        g[1] += e * cos(pd) - zt * sin(x.q[4]) - x.p[P.ya];
        return g;
      },
      2);
  // Closed through omega and epsilon to the fixed point A.
  b.Holonomic(
      "loop_a2",
      [=](const auto& x) {
        using S = Scalar<decltype(x)>;
        const auto zf = x.p[P.zf], u = x.p[P.u];
        const auto oe = x.q[5] + x.q[6];
        Eigen::Matrix<S, 2, 1> g = tip(x);
        g[0] += -zf * cos(oe) - u * sin(x.q[6]) - x.p[P.xa];
        g[1] += -zf * sin(oe) + u * cos(x.q[6]) - x.p[P.ya];
        return g;
      },
      2);

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Andrews' squeezing mechanism (Schiehlen's seven-body benchmark; "
      "Hairer and Wanner, Solving ODEs II, VII.7) as the Test Set for IVP "
      "Solvers (Mazzia and Magherini, Bari) defines it: 7 angles, 6 "
      "holonomic loop rows, a constant torque mom = 0.033 N m on the crank "
      "and a spring (c0 = 4530 N/m, l0 = 0.07785 m); from the Test Set's "
      "consistent start to t = 0.03 s, where its published reference "
      "solution is given (docs/problems.md).";
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q.resize(7);
    s.q << -0.0617138900142764496358948458001, 0.0,
        0.455279819163070380255912382449, 0.222668390165885884674473185609,
        0.487364979543842550225598953530, -0.222668390165885884674473185609,
        1.23054744454982119249735015568;
    s.v = Eigen::VectorXd::Zero(7);
    return s;
  };
  p.defaults.t_end = 0.03;
  p.defaults.output_step = 1e-3;
  p.defaults.rtol = 1e-6;
  p.defaults.atol = 1e-7;
  p.defaults.formulation = Formulation::kGgl;
  p.defaults.integrator = Integrator::kIdas;
  return p;
}

}  // namespace daedalus::problems
