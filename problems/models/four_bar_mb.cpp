// Definitions of the models declared in four_bar_mb.hpp.
#include "four_bar_mb.hpp"

#include "daedalus/multibody_output.hpp"

namespace daedalus::problems {

mb::Kinematics FourBarMbSystem(const four_bar_detail::Params& P,
                               ModelBuilder* b,
                               mb::DynamicsForm form) {
  using mb::PExpr;
  using mb::PVec;
  const PExpr l0 = P.l0, l1 = P.l1, l2 = P.l2, l3 = P.l3;
  const PExpr m1 = P.m1, m2 = P.m2, m3 = P.m3, g = P.g;
  mb::Multibody s(mb::Dimension::kPlanar);
  s.SetGravity(PVec(0.0, -g));
  const mb::BodyIndex crank = s.AddBody(
      "crank", mb::PlanarBody(m1, PVec(0.0, -l1 / 2.0), m1 * l1 * l1 / 12.0));
  const mb::BodyIndex coupler = s.AddBody(
      "coupler", mb::PlanarBody(m2, PVec(0.0, -l2 / 2.0), m2 * l2 * l2 / 12.0));
  const mb::BodyIndex rocker = s.AddBody(
      "rocker", mb::PlanarBody(m3, PVec(0.0, -l3 / 2.0), m3 * l3 * l3 / 12.0));
  const mb::FrameIndex pivot_c =
      s.AddFrame("rocker_pivot", s.ground(), PVec(l0, 0.0));
  const mb::FrameIndex crank_tip =
      s.AddFrame("crank_tip", crank, PVec(0.0, -l1));
  const mb::FrameIndex coupler_tip =
      s.AddFrame("coupler_tip", coupler, PVec(0.0, -l2));
  const mb::FrameIndex rocker_tip =
      s.AddFrame("rocker_tip", rocker, PVec(0.0, -l3));
  s.AddJoint("crank", mb::Joint::Revolute().Named({"theta1"}), s.world(),
             s.BodyFrame(crank));
  // Absolute angles, as in four_bar: theta2 is the coupler's angle in the
  // world, not relative to the crank.
  s.AddJoint("coupler", mb::Joint::AbsoluteRevolute().Named({"theta2"}),
             crank_tip, s.BodyFrame(coupler));
  s.AddJoint("rocker", mb::Joint::Revolute().Named({"theta3"}), pivot_c,
             s.BodyFrame(rocker));
  s.AddCoincidence("loop", rocker_tip, coupler_tip);
  return std::move(s).AddTo(b, form);
}

Problem FourBarMbProblem() {
  return FourBarMbProblemForm(mb::DynamicsForm::kEnergy);
}

Problem FourBarMbProblemForm(mb::DynamicsForm form) {
  ModelBuilder b("four_bar_mb");
  four_bar_detail::Params P;
  P.l0 = b.Parameter("l0", 1.0, ParamRange::Positive());
  P.l1 = b.Parameter("l1", 0.4, ParamRange::Positive());
  P.l2 = b.Parameter("l2", 1.0, ParamRange::Positive());
  P.l3 = b.Parameter("l3", 0.8, ParamRange::Positive());
  P.m1 = b.Parameter("m1", 1.0, ParamRange::Positive());
  P.m2 = b.Parameter("m2", 1.0, ParamRange::Positive());
  P.m3 = b.Parameter("m3", 1.0, ParamRange::Positive());
  P.g = b.Parameter("g", 9.81);
  P.th1 = b.Parameter("theta1_0", 0.0);
  P.w1 = b.Parameter("omega1_0", 10.0);
  const mb::Kinematics kin = FourBarMbSystem(P, &b, form);
  Problem p;
  p.model = std::move(b).Build();
  p.side_outputs.push_back(mb::PosesFile(kin));
  p.description =
      "Four-bar linkage of four_bar written as a multibody description: "
      "three uniform bars on revolute joints (the coupler's angle absolute), "
      "the loop closed by a point coincidence; same parameters, start and "
      "defaults as four_bar.";
  p.initial = [P](const Eigen::VectorXd& prm) {
    return four_bar_detail::Assemble(P, prm);
  };
  p.defaults.t_end = 5.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-9;
  p.defaults.atol = 1e-11;
  p.defaults.formulation = Formulation::kBaumgarte;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
