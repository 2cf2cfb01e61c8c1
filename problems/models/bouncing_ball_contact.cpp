// Definitions of the models declared in bouncing_ball_contact.hpp.
#include "bouncing_ball_contact.hpp"

namespace daedalus::problems {

Problem BouncingBallContactProblem() {
  ModelBuilder b("bouncing_ball_contact");
  b.Coordinates({"y"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  const Param h0 = b.Parameter("h0", 1.0, ParamRange::Positive());
  b.Parameter("e", 0.9, ParamRange::Between(0.0, 1.0));
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v[0] * x.v[0]; });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[0]; });
  // The gap to the ground; its multiplier is the normal force.
  b.Holonomic("ground", [](const auto& x) { return x.q[0]; });
  b.Unilateral("ground", ContactLaw{.restitution_parameter = "e"});

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "A ball dropped from rest at height h0 onto the ground as an "
      "event-driven contact (gap y >= 0, Newton's restitution e): impacts "
      "by the contact stage's impulse LCP, their energy loss booked as "
      "impact work, and rest on the ground after the impacts accumulate "
      "at t1 (1 + e) / (1 - e).";
  p.initial = [h0](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::VectorXd::Constant(1, prm[h0]);
    s.v = Eigen::VectorXd::Zero(1);
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
