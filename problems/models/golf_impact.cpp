// Definitions of the model declared in golf_impact.hpp.
#include "golf_impact.hpp"

namespace daedalus::problems {

Problem GolfImpactProblem() {
  using namespace golf_detail;
  ModelBuilder b("golf_impact");
  b.Coordinates({"theta_a", "theta_c", "eta", "x_b", "y_b"});
  const Params P = DeclareParams(b);
  const Param mb = b.Parameter("m_ball", 0.04593, ParamRange::Positive());
  const Param rb = b.Parameter("r_ball", 0.021335, ParamRange::Positive());
  const Param rh = b.Parameter("r_head", 0.02, ParamRange::Positive());
  b.Parameter("e", 0.822, ParamRange::Between(0.0, 1.0));
  // Where golf_swing's head is when the club passes the vertical, moved by
  // r_ball + r_head along its velocity there (golf_impact.hpp).
  const Param xb0 = b.Parameter("x_ball", -0.4510153538851384);
  const Param yb0 = b.Parameter("y_ball", -1.53494989255577);

  b.KineticEnergy([=](const auto& x) {
    return SwingKineticEnergy(x, P) +
           0.5 * x.p[mb] * (x.v[3] * x.v[3] + x.v[4] * x.v[4]);
  });
  b.PotentialEnergy([=](const auto& x) {
    return SwingPotentialEnergy(x, P) + x.p[P.g] * x.p[mb] * x.q[4];
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
      [=](const auto& x) { return WristTorque(x, P); });
  b.Moving("hand_path", Touches{{0}}, [=](const auto& x) {
    return x.q[0] - Psi(x.t, x.p[P.psi_top], x.p[P.psi_impact], x.p[P.t_down]);
  });
  // The strike: the distance between the head's and the ball's centres
  // less the two radii; its multiplier is the contact force.
  b.Holonomic("strike", [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const Eigen::Matrix<S, 2, 1> h = ShaftPoint(x, P, 1.0, 1.0);
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
    return sqrt(ShaftPointVelocity(x, P, 1.0, 1.0).squaredNorm());
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
