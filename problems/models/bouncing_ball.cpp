// Definitions of the models declared in bouncing_ball.hpp.
#include "bouncing_ball.hpp"

namespace daedalus::problems {

Problem BouncingBallProblem() {
  ModelBuilder b("bouncing_ball");
  b.Coordinates({"y"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  const Param h0 = b.Parameter("h0", 1.0, ParamRange::Positive());
  const Param e = b.Parameter("e", 0.9, ParamRange::Between(0.0, 1.0));
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v[0] * x.v[0]; });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[0]; });
  b.Event(
      "impact", [](const auto& x) { return x.q[0]; },
      EventOptions{.direction = EventDirection::kFalling, .stop = false});
  b.Reset("impact", [=](const auto& x) {
    VecX<Scalar<decltype(x)>> out(2);
    out << x.q[0], -x.p[e] * x.v[0];
    return out;
  });
  // The time of the event the functional is taken at: --functional
  // t_impact@impact#k gives t_k and its gradient.
  b.TerminalFunctional("t_impact", [](const auto& x) { return x.t; });
  // The ball's height and speed at the end of the run (or at an event).
  b.TerminalFunctional("height", [](const auto& x) { return x.q[0]; });
  b.TerminalFunctional("speed", [](const auto& x) { return x.v[0]; });

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "A ball dropped from rest at height h0 bouncing on the ground with "
      "restitution e: the event impact (y = 0, falling) resets vy to "
      "-e vy. Every impact time has a closed form; the run ends before "
      "the impacts accumulate at t1 (1 + e) / (1 - e).";
  p.initial = [h0](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::VectorXd::Constant(1, prm[h0]);
    s.v = Eigen::VectorXd::Zero(1);
    return s;
  };
  p.defaults.t_end = 6.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesBdf;
  return p;
}

}  // namespace daedalus::problems
