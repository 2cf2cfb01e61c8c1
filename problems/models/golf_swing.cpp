// Definitions of the models declared in golf_swing.hpp, compiled once into a
// library (the headers are included by many tests).
#include "golf_swing.hpp"

namespace daedalus::problems {

Problem GolfSwingProblem() {
  using namespace golf_detail;
  ModelBuilder b("golf_swing");
  b.Coordinates({"theta_a", "theta_c", "eta"});
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

  // Velocity of the shaft point at x = s / lc (shape value f = phi(x)).
  auto point_velocity = [=](const auto& x, double xi, double f) {
    using S = Scalar<decltype(x)>;
    const S la = x.p[P.la], lc = x.p[P.lc];
    const S ta = x.q[0], tc = x.q[1], eta = x.q[2];
    const S wa = x.v[0], wc = x.v[1], etad = x.v[2];
    const S s = xi * lc;
    // r' = la wa n(ta) + s wc n(tc) + etad f n(tc) - eta f wc e(tc)
    Eigen::Matrix<S, 2, 1> v;
    v[0] = la * wa * cos(ta) + (s * wc + etad * f) * cos(tc) -
           eta * f * wc * sin(tc);
    v[1] = la * wa * sin(ta) + (s * wc + etad * f) * sin(tc) +
           eta * f * wc * cos(tc);
    return v;
  };
  auto point_height = [=](const auto& x, double xi, double f) {
    const auto s = xi * x.p[P.lc];
    return -x.p[P.la] * cos(x.q[0]) - s * cos(x.q[1]) +
           x.q[2] * f * sin(x.q[1]);
  };

  b.KineticEnergy([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S arm = x.p[P.ma] * x.p[P.la] * x.p[P.la] / 6.0 * x.v[0] * x.v[0];
    S shaft = S(0.0);
    for (int i = 0; i < 4; ++i)
      shaft += kGaussW[i] *
               point_velocity(x, kGaussX[i], Phi(kGaussX[i])).squaredNorm();
    shaft *= 0.5 * x.p[P.mc];  // (mc / lc) * lc for the [0, 1] weights
    const S head = 0.5 * x.p[P.mh] * point_velocity(x, 1.0, 1.0).squaredNorm();
    return arm + shaft + head;
  });
  b.PotentialEnergy([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S arm = -0.5 * x.p[P.ma] * x.p[P.la] * cos(x.q[0]);
    S shaft = S(0.0);
    for (int i = 0; i < 4; ++i)
      shaft += kGaussW[i] * point_height(x, kGaussX[i], Phi(kGaussX[i]));
    shaft *= x.p[P.mc];
    const S head = x.p[P.mh] * point_height(x, 1.0, 1.0);
    return x.p[P.g] * (arm + shaft + head) + 0.5 * x.p[P.k] * x.q[2] * x.q[2];
  });
  b.Damping([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> dm = MatX<S>::Zero(3, 3);
    dm(2, 2) = x.p[P.d];
    return dm;
  });
  b.Input(
      "wrist",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(3);
        c << -1.0, 1.0, 0.0;
        return c;
      },
      [=](const auto& x) {
        using S = Scalar<decltype(x)>;
        const S since = x.t - x.p[P.t_on];
        // 0 before t_on, branch-free (IfPositive, dual.hpp): compilable.
        return IfPositive(
            since, S(x.p[P.u_wrist] * (1.0 - exp(-since / x.p[P.t_act]))),
            S(0.0));
      });
  b.Moving("hand_path", [=](const auto& x) {
    return x.q[0] - Psi(x.t, x.p[P.psi_top], x.p[P.psi_impact], x.p[P.t_down]);
  });
  b.Event("impact", [](const auto& x) { return x.q[1]; });
  // The clubhead's speed |r'(lc)| [m/s]: --functional clubhead_speed (at
  // the end of the run, which stops at impact) or clubhead_speed@impact.
  b.TerminalFunctional("clubhead_speed", [=](const auto& x) {
    return sqrt(point_velocity(x, 1.0, 1.0).squaredNorm());
  });
  // The clubhead's horizontal position [m] (the shoulder at 0): where the
  // ball must be at impact (docs/optimal_control.md, head_x@impact).
  b.TerminalFunctional("head_x", [=](const auto& x) {
    return x.p[P.la] * sin(x.q[0]) + x.p[P.lc] * sin(x.q[1]) +
           x.q[2] * cos(x.q[1]);
  });

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Planar golf downswing: arm (theta_a) on a prescribed hand path "
      "(moving constraint hand_path), club (theta_c) with one flexible "
      "shaft mode (eta), wrist torque with first-order activation from "
      "t_on; stops at impact (club vertical). The hand path's constraint "
      "work is the energy it feeds in.";
  p.initial = [P](const Eigen::VectorXd& prm) {
    InitialState s;
    const double top = prm[P.psi_top];
    s.q = Eigen::Vector3d(top, top + prm[P.cock], 0.0);
    s.v = Eigen::Vector3d::Zero();
    return s;
  };
  p.defaults.t_end = 0.6;
  p.defaults.output_step = 0.001;
  p.defaults.rtol = 1e-9;
  p.defaults.atol = 1e-11;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
