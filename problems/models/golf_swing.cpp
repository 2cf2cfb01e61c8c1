// Definitions of the models declared in golf_swing.hpp, compiled once into a
// library (the headers are included by many tests).
#include "golf_swing.hpp"

namespace daedalus::problems {

Problem GolfSwingProblem() {
  using namespace golf_detail;
  ModelBuilder b("golf_swing");
  b.Coordinates({"theta_a", "theta_c", "eta"});
  const Params P = DeclareParams(b);

  b.KineticEnergy([=](const auto& x) { return SwingKineticEnergy(x, P); });
  b.PotentialEnergy([=](const auto& x) { return SwingPotentialEnergy(x, P); });
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
      [=](const auto& x) { return WristTorque(x, P); });
  b.Moving("hand_path", [=](const auto& x) {
    return x.q[0] - Psi(x.t, x.p[P.psi_top], x.p[P.psi_impact], x.p[P.t_down]);
  });
  b.Event("impact", [](const auto& x) { return x.q[1]; });
  // The clubhead's speed |r'(lc)| [m/s]: --functional clubhead_speed (at
  // the end of the run, which stops at impact) or clubhead_speed@impact.
  b.TerminalFunctional("clubhead_speed", [=](const auto& x) {
    return sqrt(ShaftPointVelocity(x, P, 1.0, 1.0).squaredNorm());
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
