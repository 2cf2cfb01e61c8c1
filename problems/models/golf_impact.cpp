// Definitions of the model declared in golf_impact.hpp.
#include "golf_impact.hpp"

namespace daedalus::problems {

Problem GolfImpactProblem() {
  using namespace golf_detail;
  ModelBuilder b("golf_impact");
  b.Coordinates({"theta_a", "theta_c", "eta", "x_b", "y_b"});
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
  const Param mb = b.Parameter("m_ball", 0.04593, ParamRange::Positive());
  const Param rb = b.Parameter("r_ball", 0.021335, ParamRange::Positive());
  const Param rh = b.Parameter("r_head", 0.02, ParamRange::Positive());
  b.Parameter("e", 0.822, ParamRange::Between(0.0, 1.0));
  // Where golf_swing's head is when the club passes the vertical, moved by
  // r_ball + r_head along its velocity there (golf_impact.hpp).
  const Param xb0 = b.Parameter("x_ball", -0.4510153538851384);
  const Param yb0 = b.Parameter("y_ball", -1.53494989255577);

  // The shaft point at x = s / lc (shape value f), as in golf_swing.cpp.
  auto point = [=](const auto& x, double xi, double f) {
    using S = Scalar<decltype(x)>;
    const S s = xi * x.p[P.lc];
    Eigen::Matrix<S, 2, 1> r;
    r[0] = x.p[P.la] * sin(x.q[0]) + s * sin(x.q[1]) + x.q[2] * f * cos(x.q[1]);
    r[1] =
        -x.p[P.la] * cos(x.q[0]) - s * cos(x.q[1]) + x.q[2] * f * sin(x.q[1]);
    return r;
  };
  auto point_velocity = [=](const auto& x, double xi, double f) {
    using S = Scalar<decltype(x)>;
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
  };

  b.KineticEnergy([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S arm = x.p[P.ma] * x.p[P.la] * x.p[P.la] / 6.0 * x.v[0] * x.v[0];
    S shaft = S(0.0);
    for (int i = 0; i < 4; ++i)
      shaft += kGaussW[i] *
               point_velocity(x, kGaussX[i], Phi(kGaussX[i])).squaredNorm();
    shaft *= 0.5 * x.p[P.mc];
    const S head = 0.5 * x.p[P.mh] * point_velocity(x, 1.0, 1.0).squaredNorm();
    const S ball = 0.5 * x.p[mb] * (x.v[3] * x.v[3] + x.v[4] * x.v[4]);
    return arm + shaft + head + ball;
  });
  b.PotentialEnergy([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S arm = -0.5 * x.p[P.ma] * x.p[P.la] * cos(x.q[0]);
    S shaft = S(0.0);
    for (int i = 0; i < 4; ++i)
      shaft += kGaussW[i] * point(x, kGaussX[i], Phi(kGaussX[i]))[1];
    shaft *= x.p[P.mc];
    const S head = x.p[P.mh] * point(x, 1.0, 1.0)[1];
    const S ball = x.p[mb] * x.q[4];
    return x.p[P.g] * (arm + shaft + head + ball) +
           0.5 * x.p[P.k] * x.q[2] * x.q[2];
  });
  b.Damping([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> dm = MatX<S>::Zero(5, 5);
    dm(2, 2) = x.p[P.d];
    return dm;
  });
  b.Input(
      "wrist",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(5);
        c << -1.0, 1.0, 0.0, 0.0, 0.0;
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
  b.Moving("hand_path", Touches{{0}}, [=](const auto& x) {
    return x.q[0] - Psi(x.t, x.p[P.psi_top], x.p[P.psi_impact], x.p[P.t_down]);
  });
  // The strike: the distance between the head's and the ball's centres
  // less the two radii; its multiplier is the contact force.
  b.Holonomic("strike", [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const Eigen::Matrix<S, 2, 1> h = point(x, 1.0, 1.0);
    const S dx = h[0] - x.q[3], dy = h[1] - x.q[4];
    return sqrt(dx * dx + dy * dy) - x.p[rb] - x.p[rh];
  });
  b.Unilateral("strike", ContactLaw{.restitution_parameter = "e"});
  b.Holonomic("tee", Touches{{4}},
              [=](const auto& x) { return x.q[4] - x.p[yb0]; });
  b.Unilateral("tee", ContactLaw{});
  // The ball's speed along the line of play, -x [m/s]: after the strike
  // the ball slides along the tee's plane, so this is its speed; unlike
  // |v_b| it is differentiable at rest, before the strike.
  b.TerminalFunctional("ball_speed", [](const auto& x) { return -x.v[3]; });
  b.TerminalFunctional("clubhead_speed", [=](const auto& x) {
    return sqrt(point_velocity(x, 1.0, 1.0).squaredNorm());
  });

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "golf_swing's planar downswing striking a ball (45.93 g, 21.335 mm) "
      "on a tee: the strike is an event-driven contact with Newton's "
      "restitution e = 0.822, solved with the tee and the hand path as one "
      "impulse LCP; the club follows through after it. The ball's speed "
      "(functional ball_speed) and its gradient cross the impact.";
  p.initial = [P, xb0, yb0](const Eigen::VectorXd& prm) {
    InitialState s;
    const double top = prm[P.psi_top];
    s.q.resize(5);
    s.q << top, top + prm[P.cock], 0.0, prm[xb0], prm[yb0];
    s.v = Eigen::VectorXd::Zero(5);
    return s;
  };
  p.defaults.t_end = 0.32;
  p.defaults.output_step = 0.001;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
