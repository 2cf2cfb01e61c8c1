// Definitions of the model declared in golfer_3d.hpp.
#include "golfer_3d.hpp"

#include <Eigen/Geometry>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/multibody_output.hpp"
#include "daedalus/side_outputs.hpp"

namespace daedalus::problems {
namespace golfer_detail {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;

// Anthropometry: de Leva (1996), "Adjustments to Zatsiorsky-Seluyanov's
// segment inertia parameters", J. Biomech. 29(9):1223-1230, Table 4
// (males, body mass 73.0 kg, stature 1.741 m): segment mass [% of body
// mass], length [m], centre of mass [% of length from the proximal
// joint], radii of gyration [% of length] (sagittal, transverse,
// longitudinal). Masses, centres of mass and radii checked against two
// public reproductions of the table (docs/problems.md, golfer_3d); the
// lengths are unchecked.
constexpr double kBodyMass = 73.0;
struct Segment {
  double mass_pct, length, com_pct, r_sag, r_trans, r_long;
};
constexpr Segment kUpperArm{2.71, 0.2817, 57.72, 28.5, 26.9, 15.8};
constexpr Segment kForearm{1.62, 0.2689, 45.74, 27.6, 26.5, 12.1};
constexpr Segment kHand{0.61, 0.0862, 79.00, 62.8, 51.3, 40.1};
// Lower trunk (pelvis) and upper + middle trunk + head (the torso).
constexpr double kPelvisPct = 11.17;
constexpr double kTorsoPct = 15.96 + 16.33 + 6.94;

// Posture at address (docs/problems.md, "golfer_3d"): hip centre height,
// forward spine tilt, hip centre to the shoulder line along the spine,
// half the shoulder width, the lead shoulder raised (trail lowered) by
// kShoulderDrop, the lead arm's direction, the shaft's lie angle.
constexpr double kHipHeight = 0.95;
constexpr double kSpineTilt = 38.0 * M_PI / 180.0;
constexpr double kSpineLength = 0.50;
constexpr double kHalfShoulder = 0.17;
constexpr double kShoulderDrop = 0.05;
constexpr double kLie = 45.0 * M_PI / 180.0;

// A driver (docs/problems.md): length 1.14 m from the butt, the lead
// hand's grip point 0.05 m below the butt, the trail hand's 0.085 m below
// that; grip 0.050 kg over its first 0.25 m, shaft 0.065 kg uniform, head
// 0.200 kg with its centre of mass 0.025 m behind the shaft axis and a
// moment of inertia 4.5e-4 kg m^2 (about any axis through it); the flex
// hinge 0.40 m from the butt.
constexpr double kClubLength = 1.14;
constexpr double kButtToLeadGrip = 0.05;
constexpr double kGripGap = 0.085;
constexpr double kGripMass = 0.050, kGripLength = 0.25;
constexpr double kShaftMass = 0.065;
constexpr double kHeadMass = 0.200, kHeadOffset = 0.025, kHeadInertia = 4.5e-4;
constexpr double kHingeFromButt = 0.40;

// A part of a body: mass, centre of mass and inertia about it (world
// axes, which are the body's axes at address).
struct Part {
  double m;
  Vector3d c;
  Matrix3d I;
};
// A slender segment along unit d: transverse and longitudinal radii.
Matrix3d SegmentInertia(double m, const Vector3d& d, double rt, double rl) {
  const Matrix3d dd = d * d.transpose();
  return m * (rt * rt * (Matrix3d::Identity() - dd) + rl * rl * dd);
}
Part Combine(const std::vector<Part>& parts) {
  Part t{0.0, Vector3d::Zero(), Matrix3d::Zero()};
  for (const Part& p : parts) {
    t.m += p.m;
    t.c += p.m * p.c;
  }
  t.c /= t.m;
  for (const Part& p : parts) {
    const Vector3d r = p.c - t.c;
    t.I += p.I +
           p.m * (r.squaredNorm() * Matrix3d::Identity() - r * r.transpose());
  }
  return t;
}
mb::BodySpec Spec(const Part& p) {
  return mb::SpatialBody(p.m, mb::PVec(p.c.x(), p.c.y(), p.c.z()), p.I(0, 0),
                         p.I(1, 1), p.I(2, 2), p.I(0, 1), p.I(0, 2), p.I(1, 2));
}
// A de Leva segment from `start` along unit d (mass, centre of mass,
// inertia with the mean of the two transverse radii).
Part Limb(const Segment& s, const Vector3d& start, const Vector3d& d) {
  const double m = kBodyMass * s.mass_pct / 100.0;
  const double rt = 0.5 * (s.r_sag + s.r_trans) / 100.0 * s.length;
  const double rl = s.r_long / 100.0 * s.length;
  return {m, start + s.com_pct / 100.0 * s.length * d,
          SegmentInertia(m, d, rt, rl)};
}
mb::PVec P(const Vector3d& r) { return mb::PVec(r.x(), r.y(), r.z()); }

// The address pose in world coordinates.
struct Geometry {
  Vector3d hip, spine;          // hip centre, spine axis
  Vector3d sl, st;              // lead and trail shoulder centres
  Vector3d dl, el, wl, gl;      // lead arm direction, elbow, wrist, grip
  Vector3d ec, n, back;         // shaft axis, swing-plane normal, behind
  Vector3d butt, hinge, tip;    // club points
  Vector3d head, gt;            // clubhead centre of mass, trail grip point
  Vector3d et, wt, trail_axis;  // trail elbow, wrist, elbow axis
};

double HandGrip() { return kHand.com_pct / 100.0 * kHand.length; }

Geometry MakeGeometry() {
  Geometry g;
  g.hip = Vector3d(0.0, 0.0, kHipHeight);
  g.spine = Vector3d(std::sin(kSpineTilt), 0.0, std::cos(kSpineTilt));
  const Vector3d centre = g.hip + kSpineLength * g.spine;
  g.sl = centre + Vector3d(0.0, kHalfShoulder, kShoulderDrop);
  g.st = centre + Vector3d(0.0, -kHalfShoulder, -kShoulderDrop);
  g.dl = Vector3d(0.10, -0.24, -0.58).normalized();
  g.el = g.sl + kUpperArm.length * g.dl;
  g.wl = g.el + kForearm.length * g.dl;
  g.gl = g.wl + HandGrip() * g.dl;
  g.ec = Vector3d(std::cos(kLie), 0.0, -std::sin(kLie));
  g.n = g.dl.cross(g.ec).normalized();
  // Behind the face: against the target direction, across the shaft.
  const Vector3d y = Vector3d::UnitY();
  g.back = -(y - y.dot(g.ec) * g.ec).normalized();
  g.butt = g.gl - kButtToLeadGrip * g.ec;
  g.hinge = g.butt + kHingeFromButt * g.ec;
  g.tip = g.butt + kClubLength * g.ec;
  g.head = g.tip + kHeadOffset * g.back;
  g.gt = g.gl + kGripGap * g.ec;
  // The trail arm reaches the trail grip point with the elbow bent, the
  // elbow pointing down and back.
  const double l1 = kUpperArm.length;
  const double l2 = kForearm.length + HandGrip();
  const Vector3d r = g.gt - g.st;
  const double d = r.norm();
  const Vector3d u = r / d;
  const double a = (l1 * l1 - l2 * l2 + d * d) / (2.0 * d);
  Vector3d w = Vector3d(-0.3, -0.3, -1.0);
  w = (w - w.dot(u) * u).normalized();
  g.et = g.st + a * u + std::sqrt(l1 * l1 - a * a) * w;
  const Vector3d f = (g.gt - g.et).normalized();
  g.wt = g.et + kForearm.length * f;
  g.trail_axis = (g.et - g.st).normalized().cross(f).normalized();
  return g;
}

const Geometry& Geo() {
  static const Geometry g = MakeGeometry();
  return g;
}

// The club's parts: the butt body (grip and shaft to the hinge, origin at
// the lead grip point) and the tip body (shaft beyond the hinge and the
// head, origin at the hinge), in world axes at address.
Part ClubButt(const Geometry& g) {
  const double ms = kShaftMass * kHingeFromButt / kClubLength;
  return Combine(
      {{kGripMass, g.butt + 0.5 * kGripLength * g.ec - g.gl,
        SegmentInertia(kGripMass, g.ec, kGripLength / std::sqrt(12.0), 0.0)},
       {ms, g.butt + 0.5 * kHingeFromButt * g.ec - g.gl,
        SegmentInertia(ms, g.ec, kHingeFromButt / std::sqrt(12.0), 0.0)}});
}
Part ClubTip(const Geometry& g) {
  const double len = kClubLength - kHingeFromButt;
  const double ms = kShaftMass * len / kClubLength;
  return Combine(
      {{ms, 0.5 * len * g.ec,
        SegmentInertia(ms, g.ec, len / std::sqrt(12.0), 0.0)},
       {kHeadMass, g.head - g.hinge, kHeadInertia * Matrix3d::Identity()}});
}

// A rotation whose x axis is n and y axis the part of d across n.
Matrix3d FrameWithX(const Vector3d& n, const Vector3d& d) {
  Matrix3d r;
  const Vector3d y = (d - d.dot(n) * n).normalized();
  r.col(0) = n;
  r.col(1) = y;
  r.col(2) = n.cross(y);
  return r;
}

}  // namespace

Eigen::Vector3d BallPosition() { return Geo().head; }

double TipInertiaAboutHinge() {
  const Geometry& g = Geo();
  const Part tip = ClubTip(g);
  const Vector3d r = tip.c;
  const Matrix3d i = tip.I + tip.m * (r.squaredNorm() * Matrix3d::Identity() -
                                      r * r.transpose());
  return g.n.dot(i * g.n);
}

Eigen::Vector3d ClubheadVelocity(const mb::Kinematics& kin,
                                 const Eigen::VectorXd& q,
                                 const Eigen::VectorXd& v,
                                 const Eigen::VectorXd& p) {
  return kin.Velocity<double>(kin.Frame("clubhead"), q, v, p).v;
}

GripPowers GripPower(const mb::Kinematics& kin,
                     const Eigen::VectorXd& q,
                     const Eigen::VectorXd& v,
                     const Eigen::VectorXd& p,
                     const Eigen::Vector3d& lambda) {
  const Vector3d vh =
      kin.Velocity<double>(kin.Frame("trail_grip_hand"), q, v, p).v;
  const Vector3d vc =
      kin.Velocity<double>(kin.Frame("trail_grip_club"), q, v, p).v;
  return {-lambda.dot(vh), lambda.dot(vc)};
}

void AddHeadSpeed(ModelBuilder* b, const mb::Kinematics& kin) {
  const mb::FrameIndex head = kin.Frame("clubhead");
  b->TerminalFunctional("head_speed", [kin, head](const auto& x) {
    using S = Scalar<decltype(x)>;
    return sqrt(kin.Velocity<S>(head, x.q, x.v, x.p).v.squaredNorm());
  });
}

void AddStrikeFunctionals(ModelBuilder* b, const mb::Kinematics& kin) {
  const mb::FrameIndex head = kin.Frame("clubhead");
  const Vector3d ball = BallPosition();
  b->TerminalFunctional("head_dx", [kin, head, ball](const auto& x) {
    return kin.Pose(head, x).p[0] - ball.x();
  });
  b->TerminalFunctional("head_dz", [kin, head, ball](const auto& x) {
    return kin.Pose(head, x).p[2] - ball.z();
  });
  const std::vector<std::string>& names = kin.coordinate_names();
  auto coord = [&names](const std::string& name) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<int>(i);
    throw std::logic_error("golfer_3d: no coordinate " + name);
  };
  // Joint angles: the coordinates themselves (0 at address).
  const std::pair<const char*, const char*> angles[] = {
      {"pelvis_turn", "pelvis"},
      {"torso_turn", "torso"},
      {"lead_elbow_flexion", "lead_elbow"},
      {"wrist_cock", "wrist_cock"},
      {"trail_elbow_flexion", "trail_elbow"}};
  for (const auto& [functional, coordinate] : angles) {
    const int i = coord(coordinate);
    b->TerminalFunctional(functional, [i](const auto& x) { return x.q[i]; });
  }
  // The lead shoulder's rotation q = (w, x, y, z) from address, in its
  // frames' axes (x = n, y = the upper arm's axis): swing-twist about the
  // arm's axis y. The arm's axis turns by the swing angle s, cos s = R_yy =
  // 1 - 2 (x^2 + z^2) / |q|^2; the twist about it has cos = (w^2 - y^2) /
  // (w^2 + y^2). Both are smooth in q (no acos or atan2 at the address
  // orientation), and neither depends on q's sign.
  const int w = coord("lead_shoulder.w");
  b->TerminalFunctional("lead_arm_swing", [w](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S n2 = x.q[w] * x.q[w] + x.q[w + 1] * x.q[w + 1] +
                 x.q[w + 2] * x.q[w + 2] + x.q[w + 3] * x.q[w + 3];
    return S(2.0 * (x.q[w + 1] * x.q[w + 1] + x.q[w + 3] * x.q[w + 3]) / n2);
  });
  b->TerminalFunctional("lead_arm_twist_cos", [w](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S w2 = x.q[w] * x.q[w];
    const S y2 = x.q[w + 2] * x.q[w + 2];
    return S((w2 - y2) / (w2 + y2));
  });
}

void SetSwingDefaults(Problem* p, const mb::Kinematics& kin, double t_end) {
  p->side_outputs.push_back(mb::PosesFile(kin));
  p->side_outputs.push_back(SwingFile(kin));
  p->defaults.t_end = t_end;
  p->defaults.output_step = 0.001;
  p->defaults.rtol = 1e-8;
  p->defaults.atol = 1e-10;
  p->defaults.formulation = Formulation::kBaumgarte;
  p->defaults.integrator = Integrator::kCvodesBdf;
}

}  // namespace golfer_detail

namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using golfer_detail::Geometry;

struct Params {
  Param g, f_shaft, zeta_shaft, k_elbow, c_elbow, k_roll, c_roll, c_shoulder,
      c_trail, pelvis0, torso0, shoulder0x, shoulder0y, shoulder0z, cock0,
      u_pelvis, u_torso, u_shoulder_x, u_shoulder_z, u_wrist, u_hold, u_trail,
      t_torso, t_shoulder, t_wrist, t_trail, t_rise, t_release, t_pelvis_off,
      t_torso_off, t_shoulder_off, t_fall;
};

// The posture at the top of the backswing and the actuators' magnitudes
// and timings are the design of bench/golfer_search.py (docs/problems.md,
// "golfer_3d"): the head strikes the ball at about 41 m/s.
Params DeclareParameters(ModelBuilder* b) {
  Params P;
  const ParamRange pos = ParamRange::Positive();
  const ParamRange nonneg = ParamRange::NonNegative();
  P.g = b->Parameter("g", 9.81);
  P.f_shaft = b->Parameter("f_shaft", 4.5, pos);
  P.zeta_shaft = b->Parameter("zeta_shaft", 0.02, nonneg);
  P.k_elbow = b->Parameter("k_elbow", 100.0, nonneg);
  P.c_elbow = b->Parameter("c_elbow", 0.2, nonneg);
  P.k_roll = b->Parameter("k_roll", 20.0, nonneg);
  P.c_roll = b->Parameter("c_roll", 0.1, nonneg);
  P.c_shoulder = b->Parameter("c_shoulder", 0.1, nonneg);
  P.c_trail = b->Parameter("c_trail", 0.1, nonneg);
  P.pelvis0 = b->Parameter("pelvis0", -0.9);
  P.torso0 = b->Parameter("torso0", -0.6982);
  P.shoulder0x = b->Parameter("shoulder0_x", -0.6412);
  P.shoulder0y = b->Parameter("shoulder0_y", 0.0);
  P.shoulder0z = b->Parameter("shoulder0_z", -1.408);
  P.cock0 = b->Parameter("cock0", 0.6681);
  P.u_pelvis = b->Parameter("U_pelvis", 222.2);
  P.u_torso = b->Parameter("U_torso", 152.1);
  P.u_shoulder_x = b->Parameter("U_shoulder_x", 30.34);
  P.u_shoulder_z = b->Parameter("U_shoulder_z", 129.1);
  P.u_wrist = b->Parameter("U_wrist", -47.88);
  P.u_hold = b->Parameter("U_hold", 0.0);
  P.u_trail = b->Parameter("U_trail", 0.0);
  P.t_torso = b->Parameter("t_torso", 0.02828, nonneg);
  P.t_shoulder = b->Parameter("t_shoulder", 0.04685, nonneg);
  P.t_wrist = b->Parameter("t_wrist", 0.1419, nonneg);
  P.t_trail = b->Parameter("t_trail", 0.10, nonneg);
  P.t_rise = b->Parameter("T_rise", 0.08612, pos);
  P.t_release = b->Parameter("T_release", 0.1051, pos);
  P.t_pelvis_off = b->Parameter("t_pelvis_off", 0.1158, nonneg);
  P.t_torso_off = b->Parameter("t_torso_off", 0.1175, nonneg);
  P.t_shoulder_off = b->Parameter("t_shoulder_off", 0.1347, nonneg);
  P.t_fall = b->Parameter("T_fall", 0.118, pos);
  return P;
}

}  // namespace

golfer_detail::GolferDescription golfer_detail::DeclareGolfer(ModelBuilder* b) {
  using golfer_detail::Part;
  using mb::Joint;
  using mb::PExpr;
  using mb::PVec;
  namespace gd = golfer_detail;
  const Geometry& g = gd::Geo();
  const Params P = DeclareParameters(b);
  GolferDescription out;
  mb::Multibody& s = out.system;
  s.SetGravity(PVec(0.0, 0.0, -PExpr(P.g)));

  // Bodies (frames at their inboard joint centres, world axes at address).
  const double pelvis_m = gd::kBodyMass * gd::kPelvisPct / 100.0;
  const double torso_m = gd::kBodyMass * gd::kTorsoPct / 100.0;
  const mb::BodyIndex pelvis = s.AddBody(
      "pelvis", gd::Spec({pelvis_m, Vector3d(0.0, 0.0, 0.04),
                          gd::SegmentInertia(pelvis_m, Vector3d::UnitZ(),
                                             0.583 * 0.1457, 0.587 * 0.1457)}));
  const mb::BodyIndex torso = s.AddBody(
      "torso",
      gd::Spec({torso_m, 0.33 * g.spine,
                gd::SegmentInertia(torso_m, g.spine, std::sqrt(1.5 / torso_m),
                                   std::sqrt(0.45 / torso_m))}));
  const mb::BodyIndex lua =
      s.AddBody("lead_upper_arm",
                gd::Spec(gd::Limb(gd::kUpperArm, Vector3d::Zero(), g.dl)));
  const mb::BodyIndex lfa = s.AddBody(
      "lead_forearm", gd::Spec(gd::Limb(gd::kForearm, Vector3d::Zero(), g.dl)));
  const mb::BodyIndex lhand = s.AddBody(
      "lead_hand", gd::Spec(gd::Limb(gd::kHand, Vector3d::Zero(), g.dl)));
  const mb::BodyIndex club = s.AddBody("club", gd::Spec(gd::ClubButt(g)));
  const Part tip = gd::ClubTip(g);
  const mb::BodyIndex club_tip = s.AddBody("club_tip", gd::Spec(tip));
  const Vector3d dua = (g.et - g.st).normalized();
  const Vector3d dfa = (g.gt - g.et).normalized();
  const mb::BodyIndex tua =
      s.AddBody("trail_upper_arm",
                gd::Spec(gd::Limb(gd::kUpperArm, Vector3d::Zero(), dua)));
  const mb::BodyIndex tfa = s.AddBody(
      "trail_forearm", gd::Spec(gd::Limb(gd::kForearm, Vector3d::Zero(), dfa)));
  const mb::BodyIndex thand = s.AddBody(
      "trail_hand", gd::Spec(gd::Limb(gd::kHand, Vector3d::Zero(), dfa)));

  // Frames.
  const Matrix3d rn = gd::FrameWithX(g.n, g.dl);
  const mb::FrameIndex hip = s.AddFrame("hip_centre", s.ground(), gd::P(g.hip));
  const mb::FrameIndex lead_socket =
      s.AddFrame("lead_shoulder_socket", torso, gd::P(g.sl - g.hip), rn);
  const mb::FrameIndex lead_ball =
      s.AddFrame("lead_shoulder_ball", lua, PVec(), rn);
  const mb::FrameIndex lead_elbow =
      s.AddFrame("lead_elbow_centre", lua, gd::P(g.el - g.sl));
  const mb::FrameIndex lead_wrist =
      s.AddFrame("lead_wrist_centre", lfa, gd::P(g.wl - g.el));
  const mb::FrameIndex lead_grip =
      s.AddFrame("lead_grip", lhand, gd::P(g.gl - g.wl));
  s.AddFrame("butt", club, gd::P(g.butt - g.gl));
  const mb::FrameIndex hinge = s.AddFrame("hinge", club, gd::P(g.hinge - g.gl));
  const mb::FrameIndex trail_grip_club =
      s.AddFrame("trail_grip_club", club, gd::P(g.gt - g.gl));
  s.AddFrame("shaft_tip", club_tip, gd::P(g.tip - g.hinge));
  s.AddFrame("clubhead", club_tip, gd::P(g.head - g.hinge));
  const mb::FrameIndex trail_socket =
      s.AddFrame("trail_shoulder_socket", torso, gd::P(g.st - g.hip));
  const mb::FrameIndex trail_elbow =
      s.AddFrame("trail_elbow_centre", tua, gd::P(g.et - g.st));
  const mb::FrameIndex trail_wrist =
      s.AddFrame("trail_wrist_centre", tfa, gd::P(g.wt - g.et));
  const mb::FrameIndex trail_grip_hand =
      s.AddFrame("trail_grip_hand", thand, gd::P(g.gt - g.wt));

  // Joints.
  const mb::JointIndex j_pelvis =
      s.AddJoint("pelvis", Joint::Revolute(Vector3d::UnitZ()).Named({"pelvis"}),
                 hip, s.BodyFrame(pelvis));
  const mb::JointIndex j_torso =
      s.AddJoint("torso", Joint::Revolute(g.spine).Named({"torso"}),
                 s.BodyFrame(pelvis), s.BodyFrame(torso));
  const mb::JointIndex j_lsh =
      s.AddJoint("lead_shoulder", Joint::Ball().Named({"lead_shoulder"}),
                 lead_socket, lead_ball);
  const mb::JointIndex j_lel =
      s.AddJoint("lead_elbow", Joint::Revolute(g.n).Named({"lead_elbow"}),
                 lead_elbow, s.BodyFrame(lfa));
  const mb::JointIndex j_wrist = s.AddJoint(
      "lead_wrist",
      Joint::Universal(g.n, g.ec).Named({"wrist_cock", "wrist_roll"}),
      lead_wrist, s.BodyFrame(lhand));
  s.AddJoint("lead_grip", Joint::Weld(), lead_grip, s.BodyFrame(club));
  const mb::JointIndex j_flex =
      s.AddJoint("shaft_flex", Joint::Revolute(g.n).Named({"shaft_flex"}),
                 hinge, s.BodyFrame(club_tip));
  const mb::JointIndex j_tsh =
      s.AddJoint("trail_shoulder", Joint::Ball().Named({"trail_shoulder"}),
                 trail_socket, s.BodyFrame(tua));
  const mb::JointIndex j_tel = s.AddJoint(
      "trail_elbow", Joint::Revolute(g.trail_axis).Named({"trail_elbow"}),
      trail_elbow, s.BodyFrame(tfa));
  s.AddJoint("trail_wrist", Joint::Weld(), trail_wrist, s.BodyFrame(thand));

  // Passive elements: the shaft mode (k = I (2 pi f)^2, c = 2 zeta I 2 pi
  // f, I the tip's inertia about the hinge), the lead elbow and wrist roll
  // held by springs, dampers on the unactuated shoulder axes and the trail
  // arm.
  const double i_tip = gd::TipInertiaAboutHinge();
  const PExpr f = P.f_shaft;
  s.AddJointSpring(j_flex, PExpr(4.0 * M_PI * M_PI * i_tip) * f * f);
  s.AddJointDamper(j_flex, PExpr(4.0 * M_PI * i_tip) * PExpr(P.zeta_shaft) * f);
  s.AddJointSpring(j_lel, P.k_elbow);
  s.AddJointDamper(j_lel, P.c_elbow);
  s.AddJointSpring(j_wrist, P.k_roll, PExpr(), 1);
  s.AddJointDamper(j_wrist, P.c_roll, 1);
  s.AddJointDamper(j_lsh, P.c_shoulder, 1);
  for (int k = 0; k < 3; ++k) s.AddJointDamper(j_tsh, P.c_trail, k);
  s.AddJointDamper(j_tel, P.c_trail);

  // Actuators.
  auto ramp = [](const auto& x, Param on, Param rise) {
    using S = Scalar<decltype(x)>;
    return gd::Ramp<S>((x.t - x.p[on]) / x.p[rise]);
  };
  // A smooth pulse: on from t_on over T_rise, off from t_off over T_fall.
  auto pulse = [ramp](const auto& x, Param on, Param rise, Param off,
                      Param fall) {
    return ramp(x, on, rise) - ramp(x, off, fall);
  };
  s.AddActuator("pelvis_drive", j_pelvis, [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S on = gd::Ramp<S>(x.t / x.p[P.t_rise]);
    return S(x.p[P.u_pelvis] * (on - ramp(x, P.t_pelvis_off, P.t_fall)));
  });
  s.AddActuator("torso_drive", j_torso, [=](const auto& x) {
    return x.p[P.u_torso] *
           pulse(x, P.t_torso, P.t_rise, P.t_torso_off, P.t_fall);
  });
  s.AddActuator(
      "shoulder_drive_x", j_lsh,
      [=](const auto& x) {
        return x.p[P.u_shoulder_x] *
               pulse(x, P.t_shoulder, P.t_rise, P.t_shoulder_off, P.t_fall);
      },
      0);
  s.AddActuator(
      "shoulder_drive_z", j_lsh,
      [=](const auto& x) {
        return x.p[P.u_shoulder_z] *
               pulse(x, P.t_shoulder, P.t_rise, P.t_shoulder_off, P.t_fall);
      },
      2);
  s.AddActuator(
      "wrist_drive", j_wrist,
      [=](const auto& x) {
        return x.p[P.u_hold] + (x.p[P.u_wrist] - x.p[P.u_hold]) *
                                   ramp(x, P.t_wrist, P.t_release);
      },
      0);
  s.AddActuator("trail_elbow_drive", j_tel, [=](const auto& x) {
    return x.p[P.u_trail] * ramp(x, P.t_trail, P.t_rise);
  });

  s.AddCoincidence("trail_grip", trail_grip_hand, trail_grip_club);

  out.club_tip = club_tip;
  out.head_in_tip = g.head - g.hinge;
  out.g = P.g;
  out.initial = [P, trail_socket, trail_grip_club, g](
                    const mb::Kinematics& kin, const Eigen::VectorXd& prm) {
    InitialState st;
    Eigen::VectorXd q = kin.Neutral();
    const auto& tree = kin.tree();
    auto coord = [&](const std::string& name) {
      for (size_t i = 0; i < tree.coordinate_names.size(); ++i)
        if (tree.coordinate_names[i] == name) return static_cast<int>(i);
      throw std::logic_error("golfer_3d: no coordinate " + name);
    };
    q[coord("pelvis")] = prm[P.pelvis0];
    q[coord("torso")] = prm[P.torso0];
    // The lead shoulder's rotation vector in its frames' axes (x = n).
    const Vector3d rv(prm[P.shoulder0x], prm[P.shoulder0y], prm[P.shoulder0z]);
    const double angle = rv.norm();
    const Vector3d axis =
        angle > 0.0 ? Vector3d(rv / angle) : Vector3d::UnitX();
    const int ls = coord("lead_shoulder.w");
    q[ls] = std::cos(0.5 * angle);
    q.segment<3>(ls + 1) = std::sin(0.5 * angle) * axis;
    q[coord("wrist_cock")] = prm[P.cock0];
    // The trail arm reaches the trail grip point with its elbow below the
    // shoulder-to-hand line (as at address).
    const Vector3d sh = kin.Pose<double>(trail_socket, q, prm).p;
    const Vector3d gp = kin.Pose<double>(trail_grip_club, q, prm).p;
    const Matrix3d rt = kin.Pose<double>(kin.Frame("torso"), q, prm).R;
    const double l1 = golfer_detail::kUpperArm.length;
    const double l2 =
        golfer_detail::kForearm.length + golfer_detail::HandGrip();
    const Vector3d r = gp - sh;
    const double d = r.norm();
    if (!(d < l1 + l2) || !(d > std::abs(l1 - l2))) {
      std::ostringstream msg;
      msg << "golfer_3d: the trail hand cannot reach the grip at the top "
             "of the backswing: shoulder to grip "
          << d << " m, the arm reaches " << std::abs(l1 - l2) << " to "
          << l1 + l2 << " m; change pelvis0, torso0, shoulder0 or cock0";
      throw std::invalid_argument(msg.str());
    }
    const Vector3d u = r / d;
    const double along = (l1 * l1 - l2 * l2 + d * d) / (2.0 * d);
    Vector3d w(-0.3, -0.3, -1.0);
    w = (w - w.dot(u) * u).normalized();
    const Vector3d e = sh + along * u + std::sqrt(l1 * l1 - along * along) * w;
    const Vector3d d1 = (e - sh) / l1, f1 = (gp - e) / l2;
    const Vector3d n1 = d1.cross(f1).normalized();
    const Vector3d d0 = (g.et - g.st).normalized();
    const Vector3d f0 = (g.gt - g.et).normalized();
    const Vector3d n0 = g.trail_axis;
    Matrix3d a1, a0;
    a1 << d1, n1, d1.cross(n1);
    a0 << d0, n0, d0.cross(n0);
    const Matrix3d r_ua = a1 * a0.transpose();
    const Eigen::Quaterniond qt(Matrix3d(rt.transpose() * r_ua));
    const int ts = coord("trail_shoulder.w");
    q[ts] = qt.w();
    q[ts + 1] = qt.x();
    q[ts + 2] = qt.y();
    q[ts + 3] = qt.z();
    const Vector3d f0r = r_ua * f0;
    q[coord("trail_elbow")] = std::atan2(n1.dot(f0r.cross(f1)), f0r.dot(f1));
    st.q = q;
    st.v = Eigen::VectorXd::Zero(kin.nv());
    return st;
  };
  return out;
}

SideOutput golfer_detail::SwingFile(const mb::Kinematics& kin) {
  SideOutput swing;
  swing.suffix = "swing.csv";
  swing.open = [kin](const std::string& path, const Eigen::VectorXd& params) {
    const std::vector<std::string> cols = {
        "head_x",          "head_y",        "head_z",       "head_speed",
        "grip_force_x",    "grip_force_y",  "grip_force_z", "grip_power_hand",
        "grip_power_club", "grip_power_sum"};
    const mb::FrameIndex head = kin.Frame("clubhead");
    return std::make_unique<TableWriter>(
        path, cols,
        [kin, params, head](const Sample& smp, std::vector<double>* row) {
          const Vector3d x = kin.Pose<double>(head, smp.q, params).p;
          const Vector3d v =
              golfer_detail::ClubheadVelocity(kin, smp.q, smp.v, params);
          const Vector3d lam = smp.lambda.head<3>();
          const golfer_detail::GripPowers gp =
              golfer_detail::GripPower(kin, smp.q, smp.v, params, lam);
          for (double c : {x.x(), x.y(), x.z(), v.norm(), lam.x(), lam.y(),
                           lam.z(), gp.hand, gp.club, gp.hand + gp.club})
            row->push_back(c);
        });
  };
  swing.summary_json =
      R"({"kind": "golf swing", "content": "clubhead centre of mass position )"
      R"([m] and speed [m/s]; trail_grip multiplier (the force on the club )"
      R"([N]) and its power on the trail hand, on the club and their sum )"
      R"([W]"})";
  return swing;
}

Golfer3d MakeGolfer3d(mb::DynamicsForm form) {
  ModelBuilder b("golfer_3d");
  golfer_detail::GolferDescription d = golfer_detail::DeclareGolfer(&b);
  const mb::Kinematics kin = std::move(d.system).AddTo(&b, form);

  const mb::FrameIndex head = kin.Frame("clubhead");
  const double ball_y = golfer_detail::BallPosition().y();
  b.Event("impact", [kin, head, ball_y](const auto& x) {
    return kin.Pose(head, x).p[1] - ball_y;
  });
  golfer_detail::AddHeadSpeed(&b, kin);
  golfer_detail::AddStrikeFunctionals(&b, kin);

  Golfer3d out;
  Problem& p = out.problem;
  p.model = std::move(b).Build();
  p.description =
      "A 3-D golfer plus driver (13 velocities): pelvis and torso turns, "
      "lead shoulder ball joint, elbow and wrist (cock and roll), the club "
      "with one shaft bending mode, and a trail arm (ball shoulder, elbow) "
      "whose hand closes a loop on the grip (point coincidence "
      "trail_grip). Driven from the top of the backswing by the named "
      "actuators pelvis_drive, torso_drive, shoulder_drive, wrist_drive, "
      "trail_elbow_drive; stops at the event impact (the clubhead passing "
      "the ball along the target line). Writes the poses "
      "(golfer_3d.poses.csv) and golfer_3d.swing.csv: the clubhead's "
      "position and speed, the grip force and the powers it delivers to "
      "the trail hand and to the club.";
  p.initial = [kin, initial = d.initial](const Eigen::VectorXd& prm) {
    return initial(kin, prm);
  };
  golfer_detail::SetSwingDefaults(&p, kin, 0.5);
  out.kin = kin;
  return out;
}

Problem Golfer3dProblem() { return MakeGolfer3d().problem; }

Problem Golfer3dProblemForm(mb::DynamicsForm form) {
  return MakeGolfer3d(form).problem;
}

}  // namespace daedalus::problems
