// Definitions of the models declared in slider_crank_mb.hpp.
#include "slider_crank_mb.hpp"

#include <cmath>

#include "daedalus/multibody_output.hpp"

namespace daedalus::problems {

Problem SliderCrankMbProblem() {
  return SliderCrankMbProblemForm(mb::DynamicsForm::kEnergy);
}

Problem SliderCrankMbProblemForm(mb::DynamicsForm form) {
  ModelBuilder b("slider_crank_mb");
  const Param a = b.Parameter("a", 0.5, ParamRange::Positive());
  const Param J1 = b.Parameter("J1", 1.0, ParamRange::Positive());
  const Param m2 = b.Parameter("m2", 1.0, ParamRange::Positive());
  const Param J2 = b.Parameter("J2", 2.0, ParamRange::Positive());
  const Param k = b.Parameter("k", 1.0, ParamRange::NonNegative());
  const Param c = b.Parameter("c", 1.0, ParamRange::NonNegative());
  const Param l0 = b.Parameter("l0", 1.0);
  const Param F = b.Parameter("F", 1.0);

  using mb::PExpr;
  using mb::PVec;
  mb::Multibody s(mb::Dimension::kPlanar);
  const mb::BodyIndex crank =
      s.AddBody("crank", mb::PlanarBody(0.0, PVec(), J1));
  const mb::BodyIndex slider =
      s.AddBody("slider", mb::PlanarBody(m2, PVec(), 0.0));
  const mb::BodyIndex rod = s.AddBody("rod", mb::PlanarBody(0.0, PVec(), J2));
  const mb::FrameIndex crank_pin = s.AddFrame("crank_pin", crank, PVec(a, 0.0));
  const mb::FrameIndex crank_mid =
      s.AddFrame("crank_mid", crank, PVec(PExpr(a) / 2.0, 0.0));
  const mb::FrameIndex rod_pin = s.AddFrame("rod_pin", rod, PVec(-1.0, 0.0));
  const mb::FrameIndex rod_mid = s.AddFrame("rod_mid", rod, PVec(-0.5, 0.0));
  const mb::FrameIndex rod_end = s.AddFrame("rod_end", rod, PVec(1.0, 0.0));
  s.AddJoint("crank", mb::Joint::Revolute().Named({"q"}), s.world(),
             s.BodyFrame(crank));
  s.AddJoint("slider", mb::Joint::Prismatic().Named({"x"}), s.world(),
             s.BodyFrame(slider));
  s.AddJoint("rod", mb::Joint::Revolute().Named({"p"}), s.BodyFrame(slider),
             s.BodyFrame(rod));
  s.AddCoincidence("loop", crank_pin, rod_pin);
  s.AddSpringDamper("spring", crank_mid, rod_mid, k, l0, c);
  s.AddForce("F", rod_end, PVec(F, 0.0));
  const mb::Kinematics kin = std::move(s).AddTo(&b, form);

  // G: the time integral of the kinetic energy, as in slider_crank.
  const auto kinetic = [kin](const auto& x) { return kin.KineticEnergy(x); };
  b.Quadrature("G", kinetic);
  b.RunningFunctional("G", kinetic);

  Problem p;
  p.model = std::move(b).Build();
  p.side_outputs.push_back(mb::PosesFile(kin));
  p.description =
      "Slider-crank of slider_crank (SUNDIALS's idasSlCrank_dns) written as "
      "a multibody description: crank, slider and rod on revolute and "
      "prismatic joints, the loop as a point coincidence, a spring-damper "
      "between the midpoints and a force at the rod end.";
  p.initial = [a](const Eigen::VectorXd& params) {
    const double pp = std::asin(-params[a]);
    InitialState st;
    st.q = Eigen::Vector3d(M_PI / 2.0, std::cos(pp), pp);
    st.v = Eigen::Vector3d::Zero();
    return st;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.4;
  p.defaults.rtol = 1e-6;
  p.defaults.atol = 1e-7;
  p.defaults.formulation = Formulation::kGgl;
  p.defaults.integrator = Integrator::kIdas;
  return p;
}

}  // namespace daedalus::problems
