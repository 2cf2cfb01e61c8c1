// Definitions of the model declared in heavy_top.hpp.
#include "heavy_top.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "daedalus/multibody_output.hpp"
#include "daedalus/side_outputs.hpp"

namespace daedalus::problems {
namespace heavy_top_detail {
namespace {

// I3^2 w3^2 - 4 I1 m g l cos theta, refused when negative.
double Discriminant(double m,
                    double l,
                    double I1,
                    double I3,
                    double g,
                    double theta,
                    double spin) {
  const double mgl = m * g * l;
  const double d = I3 * I3 * spin * spin - 4.0 * I1 * mgl * std::cos(theta);
  if (!(d >= 0.0)) {
    const double need = std::sqrt(4.0 * I1 * mgl * std::cos(theta)) / I3;
    std::ostringstream msg;
    msg << "heavy_top: no steady precession at theta0 = " << theta
        << " rad with spin = " << spin
        << " rad/s: it needs spin^2 >= 4 I1 m g l cos(theta0) / I3^2, "
           "|spin| >= "
        << need << " rad/s here (a slower top nutates and falls); raise "
        << "--param spin or choose theta0 >= pi/2";
    throw std::invalid_argument(msg.str());
  }
  return d;
}

}  // namespace

double SteadyPrecessionRate(double m,
                            double l,
                            double I1,
                            double I3,
                            double g,
                            double theta,
                            double spin) {
  const double d = Discriminant(m, l, I1, I3, g, theta, spin);
  const double s = spin >= 0.0 ? 1.0 : -1.0;
  // The rationalized slow root: no cancellation, finite at cos theta = 0.
  return 2.0 * m * g * l / (I3 * spin + s * std::sqrt(d));
}

double FastPrecessionRate(double m,
                          double l,
                          double I1,
                          double I3,
                          double g,
                          double theta,
                          double spin) {
  const double d = Discriminant(m, l, I1, I3, g, theta, spin);
  const double c = std::cos(theta);
  if (c == 0.0)
    throw std::invalid_argument(
        "heavy_top: at theta = pi/2 the steady precession has one root "
        "(the slow one)");
  const double s = spin >= 0.0 ? 1.0 : -1.0;
  return (I3 * spin + s * std::sqrt(d)) / (2.0 * I1 * c);
}

Params DeclareParameters(ModelBuilder* b) {
  Params P;
  P.m = b->Parameter("m", 0.5, ParamRange::Positive());
  P.l = b->Parameter("l", 0.1, ParamRange::Positive());
  P.I1 = b->Parameter("I1", 0.008, ParamRange::Positive());
  P.I3 = b->Parameter("I3", 0.004, ParamRange::Positive());
  P.g = b->Parameter("g", 9.81);
  // Open interval: the Euler angles are singular at theta = 0 and pi.
  P.theta0 = b->Parameter("theta0", 0.5, ParamRange{0.0, M_PI, true, true});
  P.spin = b->Parameter("spin", 60.0);
  return P;
}

mb::Kinematics System(const Params& P, ModelBuilder* b, mb::DynamicsForm form) {
  using mb::PExpr;
  using mb::PVec;
  const PExpr m = P.m, l = P.l, I1 = P.I1, I3 = P.I3, g = P.g;
  mb::Multibody s(mb::Dimension::kSpatial);
  s.SetGravity(PVec(0.0, 0.0, -g));
  const PExpr zero;
  const mb::BodyIndex ring1 = s.AddBody(
      "precession_ring", mb::SpatialBody(zero, PVec(), zero, zero, zero));
  const mb::BodyIndex ring2 = s.AddBody(
      "nutation_ring", mb::SpatialBody(zero, PVec(), zero, zero, zero));
  const PExpr ic = I1 - m * l * l;  // transverse, about the centre of mass
  const mb::BodyIndex top =
      s.AddBody("top", mb::SpatialBody(m, PVec(0.0, 0.0, l), ic, ic, I3));
  // Drawing markers (scripts/plot draws a body as a line through its
  // frames in this order, and traces the last one): tip, the rim, the
  // centre of mass.
  const PExpr r = sqrt(2.0 * I3 / m);
  s.AddFrame("rim_1", top, PVec(r, 0.0, l));
  s.AddFrame("rim_2", top, PVec(0.0, r, l));
  s.AddFrame("rim_3", top, PVec(-r, 0.0, l));
  s.AddFrame("rim_4", top, PVec(0.0, -r, l));
  s.AddFrame("com", top, PVec(0.0, 0.0, l));
  s.AddJoint("precession",
             mb::Joint::Revolute(Eigen::Vector3d::UnitZ()).Named({"psi"}),
             s.world(), s.BodyFrame(ring1));
  s.AddJoint("nutation",
             mb::Joint::Revolute(Eigen::Vector3d::UnitX()).Named({"theta"}),
             s.BodyFrame(ring1), s.BodyFrame(ring2));
  s.AddJoint("spin",
             mb::Joint::Revolute(Eigen::Vector3d::UnitZ()).Named({"phi"}),
             s.BodyFrame(ring2), s.BodyFrame(top));
  return std::move(s).AddTo(b, form);
}

}  // namespace heavy_top_detail

Problem HeavyTopProblem() {
  return HeavyTopProblemForm(mb::DynamicsForm::kEnergy);
}

Problem HeavyTopProblemForm(mb::DynamicsForm form) {
  ModelBuilder b("heavy_top");
  const heavy_top_detail::Params P = heavy_top_detail::DeclareParameters(&b);
  const mb::Kinematics kin = heavy_top_detail::System(P, &b, form);
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Symmetric heavy top with its tip fixed at the origin, gravity along "
      "-z, as a multibody description: Z-X-Z Euler angles psi (precession), "
      "theta (nutation), phi (spin) as three revolute joints, the two "
      "intermediate rings massless. Starts in steady precession (the slow "
      "root) at theta0 with spin w3 = psi' cos theta + phi' about the "
      "symmetry axis; --v0 psi=... starts it nutating. Writes the body "
      "poses (heavy_top.poses.csv) and the generalized momenta p = dL/dv "
      "(heavy_top.momenta.csv: p_psi and p_phi are conserved).";
  p.initial = [P](const Eigen::VectorXd& prm) {
    const double m = prm[P.m], l = prm[P.l], I1 = prm[P.I1], I3 = prm[P.I3];
    const double g = prm[P.g], th = prm[P.theta0], w3 = prm[P.spin];
    if (!(I1 > m * l * l)) {
      std::ostringstream msg;
      msg << "heavy_top: I1 = " << I1
          << " kg m^2 (about the tip) must exceed m l^2 = " << m * l * l
          << ": the inertia about the centre of mass, I1 - m l^2, must be "
             "positive; raise --param I1 or lower m or l";
      throw std::invalid_argument(msg.str());
    }
    const double psid =
        heavy_top_detail::SteadyPrecessionRate(m, l, I1, I3, g, th, w3);
    InitialState st;
    st.q = Eigen::Vector3d(0.0, th, 0.0);
    st.v = Eigen::Vector3d(psid, 0.0, w3 - psid * std::cos(th));
    return st;
  };
  p.side_outputs.push_back(mb::PosesFile(kin));
  p.side_outputs.push_back(MomentaFile(p.model));
  p.defaults.t_end = 5.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.formulation = Formulation::kBaumgarte;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
