// The multibody description (include/daedalus/multibody.hpp): parameter
// expressions, declarations with their checks, and AddTo, which generates
// the model's functions from the frozen tree.
#include "daedalus/multibody.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/names.hpp"

namespace daedalus::mb {

// ---- parameter expressions

PExpr::PExpr(double constant) {
  auto n = std::make_shared<Node>();
  n->op = Op::kConst;
  n->value = constant;
  node_ = std::move(n);
}

PExpr::PExpr(Param parameter) {
  if (parameter.index < 0)
    throw std::invalid_argument(
        "multibody: a parameter handle that was never declared (use the "
        "Param returned by ModelBuilder::Parameter)");
  auto n = std::make_shared<Node>();
  n->op = Op::kParam;
  n->param = parameter.index;
  node_ = std::move(n);
}

bool PExpr::IsConstant() const { return node_->op == Op::kConst; }
bool PExpr::IsZero() const { return IsConstant() && node_->value == 0.0; }
double PExpr::constant() const { return node_->value; }

PExpr PExpr::Make(Op op, const PExpr& a, const PExpr& b) {
  // Constant folding and the identities x + 0, x * 1, x * 0, 0 / x keep the
  // generated functions free of operations on known zeros and ones.
  const bool ca = a.IsConstant(), cb = b.IsConstant();
  const double va = ca ? a.constant() : 0.0, vb = cb ? b.constant() : 0.0;
  switch (op) {
    case Op::kAdd:
      if (ca && cb) return PExpr(va + vb);
      if (ca && va == 0.0) return b;
      if (cb && vb == 0.0) return a;
      break;
    case Op::kSub:
      if (ca && cb) return PExpr(va - vb);
      if (cb && vb == 0.0) return a;
      if (ca && va == 0.0) return Make(Op::kNeg, b);
      break;
    case Op::kMul:
      if (ca && cb) return PExpr(va * vb);
      if ((ca && va == 0.0) || (cb && vb == 0.0)) return PExpr(0.0);
      if (ca && va == 1.0) return b;
      if (cb && vb == 1.0) return a;
      break;
    case Op::kDiv:
      if (ca && cb) return PExpr(va / vb);
      if (ca && va == 0.0) return PExpr(0.0);
      if (cb && vb == 1.0) return a;
      break;
    case Op::kNeg:
      if (ca) return PExpr(-va);
      break;
    case Op::kSqrt:
      if (ca) return PExpr(std::sqrt(va));
      break;
    case Op::kConst:
    case Op::kParam:
      return a;
  }
  auto n = std::make_shared<Node>();
  n->op = op;
  n->a = a.node_;
  if (op != Op::kNeg && op != Op::kSqrt) n->b = b.node_;
  PExpr e;
  e.node_ = std::move(n);
  return e;
}

PExpr operator+(const PExpr& a, const PExpr& b) {
  return PExpr::Make(PExpr::Op::kAdd, a, b);
}
PExpr operator-(const PExpr& a, const PExpr& b) {
  return PExpr::Make(PExpr::Op::kSub, a, b);
}
PExpr operator*(const PExpr& a, const PExpr& b) {
  return PExpr::Make(PExpr::Op::kMul, a, b);
}
PExpr operator/(const PExpr& a, const PExpr& b) {
  return PExpr::Make(PExpr::Op::kDiv, a, b);
}
PExpr operator-(const PExpr& a) { return PExpr::Make(PExpr::Op::kNeg, a); }
PExpr sqrt(const PExpr& a) { return PExpr::Make(PExpr::Op::kSqrt, a); }

// ---- bodies and joints

BodySpec PlanarBody(PExpr mass, PVec com, PExpr izz) {
  BodySpec b;
  b.mass = std::move(mass);
  b.com = std::move(com);
  b.izz = std::move(izz);
  return b;
}

BodySpec SpatialBody(PExpr mass,
                     PVec com,
                     PExpr ixx,
                     PExpr iyy,
                     PExpr izz,
                     PExpr ixy,
                     PExpr ixz,
                     PExpr iyz) {
  BodySpec b;
  b.mass = std::move(mass);
  b.com = std::move(com);
  b.ixx = std::move(ixx);
  b.iyy = std::move(iyy);
  b.izz = std::move(izz);
  b.ixy = std::move(ixy);
  b.ixz = std::move(ixz);
  b.iyz = std::move(iyz);
  return b;
}

const char* ToString(JointType type) {
  switch (type) {
    case JointType::kRevolute:
      return "revolute";
    case JointType::kPrismatic:
      return "prismatic";
    case JointType::kPlanar:
      return "planar";
    case JointType::kUniversal:
      return "universal";
    case JointType::kWeld:
      return "weld";
    case JointType::kBall:
      return "ball";
    case JointType::kFree:
      return "free";
  }
  return "?";
}

namespace {

Eigen::Vector3d Unit(const Eigen::Vector3d& a, const char* what) {
  const double n = a.norm();
  if (!(n > 0.0) || !std::isfinite(n))
    throw std::invalid_argument(std::string("multibody: ") + what +
                                " axis must be a nonzero finite vector");
  // Exact unit axes stay exact (AxisRotation's elementary rotations).
  return n == 1.0 ? a : Eigen::Vector3d(a / n);
}

}  // namespace

Joint Joint::Revolute(const Eigen::Vector3d& axis) {
  Joint j;
  j.type = JointType::kRevolute;
  j.axis = Unit(axis, "revolute joint");
  return j;
}
Joint Joint::AbsoluteRevolute() {
  Joint j = Revolute();
  j.absolute = true;
  return j;
}
Joint Joint::Prismatic(const Eigen::Vector3d& axis) {
  Joint j;
  j.type = JointType::kPrismatic;
  j.axis = Unit(axis, "prismatic joint");
  return j;
}
Joint Joint::Planar() {
  Joint j;
  j.type = JointType::kPlanar;
  return j;
}
Joint Joint::Universal(const Eigen::Vector3d& axis1,
                       const Eigen::Vector3d& axis2) {
  Joint j;
  j.type = JointType::kUniversal;
  j.axis = Unit(axis1, "universal joint's first");
  j.axis2 = Unit(axis2, "universal joint's second");
  return j;
}
Joint Joint::Weld() { return Joint(); }
Joint Joint::Ball() {
  Joint j;
  j.type = JointType::kBall;
  return j;
}
Joint Joint::Free() {
  Joint j;
  j.type = JointType::kFree;
  return j;
}
Joint Joint::Named(std::vector<std::string> coordinate_names) const {
  Joint j = *this;
  j.names = std::move(coordinate_names);
  return j;
}
int Joint::num_coordinates() const {
  switch (type) {
    case JointType::kRevolute:
    case JointType::kPrismatic:
      return 1;
    case JointType::kUniversal:
      return 2;
    case JointType::kPlanar:
      return 3;
    case JointType::kWeld:
      return 0;
    case JointType::kBall:
      return 4;
    case JointType::kFree:
      return 7;
  }
  return 0;
}
int Joint::num_velocities() const {
  return has_quaternion() ? num_coordinates() - 1 : num_coordinates();
}
int Joint::num_names() const {
  if (type == JointType::kBall) return 1;
  if (type == JointType::kFree) return 4;
  return num_coordinates();
}

Eigen::Matrix3d RotationZ(double angle) {
  Eigen::Matrix3d r;
  r << std::cos(angle), -std::sin(angle), 0.0, std::sin(angle), std::cos(angle),
      0.0, 0.0, 0.0, 1.0;
  return r;
}

// ---- the description

Multibody::Multibody(Dimension dim)
    : tree_(std::make_shared<internal::MbTree>()) {
  tree_->dim = dim;
  tree_->bodies.push_back({"ground", BodySpec(), 0, -1, {}, {}, {}});
  tree_->frames.push_back(
      {"ground", 0, PVec(), Eigen::Matrix3d::Identity(), 0.0, false});
}

void Multibody::CheckName(const std::string& name, const char* what) const {
  if (name.empty())
    throw std::invalid_argument(std::string("multibody: a ") + what +
                                " needs a name");
  // Frame and body names are columns of the poses file (<frame>.x, ...).
  daedalus::internal::CheckName(name, what, "multibody");
  for (const auto& f : tree_->frames)
    if (f.name == name && std::string(what) == "frame")
      throw std::invalid_argument("multibody: frame '" + name +
                                  "' declared twice");
}

int Multibody::CheckFrame(FrameIndex f, const char* what) const {
  if (f.value < 0 || f.value >= static_cast<int>(tree_->frames.size()))
    throw std::invalid_argument(std::string("multibody: ") + what +
                                " is not a frame of this system");
  return f.value;
}

BodyIndex Multibody::AddBody(const std::string& name, const BodySpec& spec) {
  CheckName(name, "frame");
  const std::string where = "multibody: body '" + name + "': ";
  auto negative = [](const PExpr& e) {
    return e.IsConstant() && !(e.constant() >= 0.0);
  };
  if (negative(spec.mass) || negative(spec.izz) ||
      (tree_->dim == Dimension::kSpatial &&
       (negative(spec.ixx) || negative(spec.iyy))))
    throw std::invalid_argument(where +
                                "mass and moments of inertia must be >= 0");
  if (tree_->dim == Dimension::kPlanar &&
      !(spec.ixx.IsZero() && spec.iyy.IsZero() && spec.ixy.IsZero() &&
        spec.ixz.IsZero() && spec.iyz.IsZero() && spec.com.z.IsZero()))
    throw std::invalid_argument(
        where +
        "a planar system's body has only izz and an in-plane centre "
        "of mass; use PlanarBody");
  const int b = static_cast<int>(tree_->bodies.size());
  const int frame = static_cast<int>(tree_->frames.size());
  tree_->bodies.push_back({name, spec, frame, -1, {}, {}, {}});
  tree_->frames.push_back(
      {name, b, PVec(), Eigen::Matrix3d::Identity(), 0.0, false});
  return {b};
}

FrameIndex Multibody::BodyFrame(BodyIndex body) const {
  if (body.value < 0 || body.value >= static_cast<int>(tree_->bodies.size()))
    throw std::invalid_argument("multibody: not a body of this system");
  return {tree_->bodies[body.value].frame};
}

FrameIndex Multibody::AddFrame(const std::string& name,
                               BodyIndex body,
                               PVec position,
                               const Eigen::Matrix3d& rotation) {
  CheckName(name, "frame");
  if (body.value < 0 || body.value >= static_cast<int>(tree_->bodies.size()))
    throw std::invalid_argument("multibody: frame '" + name +
                                "' is on a body that is not in this system");
  internal::MbFrame f{name,     body.value, std::move(position),
                      rotation, 0.0,        !rotation.isIdentity(0.0)};
  if ((rotation.transpose() * rotation - Eigen::Matrix3d::Identity())
              .cwiseAbs()
              .maxCoeff() > 1e-12 ||
      !(rotation.determinant() > 0.0))
    throw std::invalid_argument("multibody: frame '" + name +
                                "': the rotation is not a proper rotation "
                                "matrix");
  if (tree_->dim == Dimension::kPlanar) {
    if (!f.position.z.IsZero() || rotation(2, 2) != 1.0)
      throw std::invalid_argument(
          "multibody: frame '" + name +
          "': a planar system's frames lie in the plane and rotate about z "
          "(use RotationZ and a zero z component)");
    f.angle = std::atan2(rotation(1, 0), rotation(0, 0));
  }
  tree_->frames.push_back(std::move(f));
  return {static_cast<int>(tree_->frames.size()) - 1};
}

JointIndex Multibody::AddJoint(const std::string& name,
                               const Joint& joint,
                               FrameIndex parent,
                               FrameIndex child) {
  daedalus::internal::CheckName(name, "joint", "multibody");
  const std::string where = "multibody: joint '" + name + "': ";
  for (const auto& j : tree_->joints)
    if (j.name == name)
      throw std::invalid_argument("multibody: joint '" + name +
                                  "' declared twice");
  const int pf = CheckFrame(parent, "the joint's parent frame");
  const int cf = CheckFrame(child, "the joint's child frame");
  const int pb = tree_->frames[pf].body, cb = tree_->frames[cf].body;
  if (cb == 0)
    throw std::invalid_argument(where + "the child frame is on the ground");
  if (tree_->bodies[cb].joint >= 0)
    throw std::invalid_argument(where + "body '" + tree_->bodies[cb].name +
                                "' already has a joint (joint '" +
                                tree_->joints[tree_->bodies[cb].joint].name +
                                "'); close a loop with a loop closure instead");
  if (pb != 0 && tree_->bodies[pb].joint < 0)
    throw std::invalid_argument(where + "the parent body '" +
                                tree_->bodies[pb].name +
                                "' has no joint yet; add the joints from the "
                                "ground outwards");
  const bool planar = tree_->dim == Dimension::kPlanar;
  if (planar) {
    if (joint.has_quaternion())
      throw std::invalid_argument(
          where + "a " + ToString(joint.type) +
          " joint rotates in space and needs a spatial system "
          "(Multibody(Dimension::kSpatial)); in a planar system use a "
          "revolute joint (ball) or a planar joint (free)");
    if (joint.type == JointType::kUniversal)
      throw std::invalid_argument(where +
                                  "a universal joint needs a spatial system");
    if (joint.type == JointType::kRevolute &&
        joint.axis != Eigen::Vector3d::UnitZ())
      throw std::invalid_argument(
          where + "a planar system's revolute joints turn about z");
    if (joint.type == JointType::kPrismatic && joint.axis[2] != 0.0)
      throw std::invalid_argument(
          where + "a planar system's prismatic axis lies in the plane");
  } else if (joint.absolute) {
    throw std::invalid_argument(where +
                                "absolute angles are for planar systems only");
  }
  const int n = joint.num_coordinates();
  const int nv = joint.num_velocities();
  std::vector<std::string> names = joint.names;
  if (names.empty()) {
    switch (joint.type) {
      case JointType::kRevolute:
        names = {name + "_angle"};
        break;
      case JointType::kPrismatic:
        names = {name + "_position"};
        break;
      case JointType::kPlanar:
        names = {name + "_x", name + "_y", name + "_angle"};
        break;
      case JointType::kUniversal:
        names = {name + "_angle1", name + "_angle2"};
        break;
      case JointType::kWeld:
        break;
      case JointType::kBall:
        names = {name};
        break;
      case JointType::kFree:
        names = {name + "_x", name + "_y", name + "_z", name};
        break;
    }
  }
  if (static_cast<int>(names.size()) != joint.num_names())
    throw std::invalid_argument(
        where + "a " + ToString(joint.type) + " joint takes " +
        std::to_string(joint.num_names()) +
        (joint.has_quaternion() ? " names (a quaternion takes one), "
                                : " coordinate names, ") +
        std::to_string(names.size()) + " given");
  internal::MbJoint j{name, joint, pf, cf, pb, cb, tree_->nq, n, tree_->nv, nv};
  const int index = static_cast<int>(tree_->joints.size());
  tree_->joints.push_back(j);
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string& s = names[k];
    if (joint.has_quaternion() && k + 1 == names.size()) {
      tree_->quaternions.emplace_back(
          static_cast<int>(tree_->coordinate_names.size()), s);
      for (const char* c : {".w", ".x", ".y", ".z"})
        tree_->coordinate_names.push_back(s + c);
      for (const char* c : {".wx", ".wy", ".wz"})
        tree_->velocity_names.push_back(s + c);
    } else {
      tree_->coordinate_names.push_back(s);
      tree_->velocity_names.push_back(s);
    }
  }
  tree_->nq += n;
  tree_->nv += nv;
  internal::MbBody& body = tree_->bodies[cb];
  body.joint = index;
  body.path = tree_->bodies[pb].path;
  body.path.push_back(index);
  body.coords = tree_->bodies[pb].coords;
  for (int k = 0; k < n; ++k) body.coords.push_back(j.first + k);
  std::sort(body.coords.begin(), body.coords.end());
  body.vels = tree_->bodies[pb].vels;
  for (int k = 0; k < nv; ++k) body.vels.push_back(j.vfirst + k);
  std::sort(body.vels.begin(), body.vels.end());
  return {index};
}

int Multibody::Coordinate(JointIndex joint, int k) const {
  if (joint.value < 0 || joint.value >= static_cast<int>(tree_->joints.size()))
    throw std::invalid_argument("multibody: not a joint of this system");
  const internal::MbJoint& j = tree_->joints[joint.value];
  if (k < 0 || k >= j.nq)
    throw std::invalid_argument(
        "multibody: joint '" + j.name + "' has " + std::to_string(j.nq) +
        " coordinates; coordinate " + std::to_string(k) + " does not exist");
  return j.first + k;
}

int Multibody::Velocity(JointIndex joint, int k) const {
  if (joint.value < 0 || joint.value >= static_cast<int>(tree_->joints.size()))
    throw std::invalid_argument("multibody: not a joint of this system");
  const internal::MbJoint& j = tree_->joints[joint.value];
  if (k < 0 || k >= j.nv)
    throw std::invalid_argument(
        "multibody: joint '" + j.name + "' has " + std::to_string(j.nv) +
        " velocities; velocity " + std::to_string(k) + " does not exist");
  return j.vfirst + k;
}

int Multibody::ScalarCoordinate(JointIndex joint,
                                int k,
                                const char* what) const {
  const int i = Coordinate(joint, k);
  const internal::MbJoint& j = tree_->joints[joint.value];
  const int quaternion_start = j.spec.type == JointType::kFree ? 3 : 0;
  if (j.spec.has_quaternion() && k >= quaternion_start)
    throw std::invalid_argument(
        "multibody: joint '" + j.name + "': a " + what +
        " acts on one scalar coordinate; coordinate " + std::to_string(k) +
        " is part of the " + ToString(j.spec.type) +
        " joint's quaternion (a rotation has no scalar coordinate; write "
        "a potential of the quaternion with PotentialEnergyTerm, or a "
        "constraint, instead)");
  return i;
}

void Multibody::SetGravity(PVec g) {
  if (tree_->dim == Dimension::kPlanar && !g.z.IsZero())
    throw std::invalid_argument(
        "multibody: gravity of a planar system lies in the plane");
  tree_->gravity = std::move(g);
}

void Multibody::AddJointSpring(JointIndex joint,
                               PExpr stiffness,
                               PExpr rest,
                               int k) {
  tree_->springs.push_back({ScalarCoordinate(joint, k, "joint spring"),
                            std::move(stiffness), std::move(rest)});
}

void Multibody::AddJointDamper(JointIndex joint, PExpr c, int k) {
  tree_->dampers.push_back({Velocity(joint, k), std::move(c)});
}

void Multibody::AddSpringDamper(const std::string& name,
                                FrameIndex a,
                                FrameIndex b,
                                PExpr k,
                                PExpr rest,
                                PExpr c) {
  tree_->spring_dampers.push_back({name, CheckFrame(a, "spring end a"),
                                   CheckFrame(b, "spring end b"), std::move(k),
                                   std::move(rest), std::move(c)});
}

void Multibody::AddForce(const std::string& name,
                         FrameIndex frame,
                         PVec force) {
  if (tree_->dim == Dimension::kPlanar && !force.z.IsZero())
    throw std::invalid_argument("multibody: force '" + name +
                                "' of a planar system lies in the plane");
  tree_->forces.push_back(
      {name, CheckFrame(frame, "the force's frame"), std::move(force), false});
}

void Multibody::AddTorque(const std::string& name,
                          FrameIndex frame,
                          PVec torque) {
  if (tree_->dim == Dimension::kPlanar &&
      !(torque.x.IsZero() && torque.y.IsZero()))
    throw std::invalid_argument("multibody: torque '" + name +
                                "' of a planar system is about z only");
  internal::MbForce f{name, CheckFrame(frame, "the torque's frame"),
                      std::move(torque), true};
  tree_->forces.push_back(std::move(f));
}

void Multibody::AddActuatorFn(const std::string& name,
                              JointIndex joint,
                              int k,
                              daedalus::internal::ScalarFn value) {
  tree_->actuators.push_back({name, Velocity(joint, k), std::move(value)});
}

void Multibody::AddPrescribedFn(const std::string& name,
                                JointIndex joint,
                                int k,
                                daedalus::internal::ScalarFn motion) {
  CheckName(name, "prescribed motion");
  tree_->prescribed.push_back({name,
                               ScalarCoordinate(joint, k, "prescribed motion"),
                               std::move(motion)});
}

void Multibody::AddCoincidence(const std::string& name,
                               FrameIndex a,
                               FrameIndex b) {
  CheckName(name, "loop closure");
  internal::MbClosure c{name,
                        internal::ClosureType::kCoincident,
                        CheckFrame(a, "frame a"),
                        CheckFrame(b, "frame b"),
                        PExpr(),
                        {},
                        0};
  c.rows = tree_->dim == Dimension::kPlanar ? 2 : 3;
  tree_->closures.push_back(std::move(c));
}

void Multibody::AddDistance(const std::string& name,
                            FrameIndex a,
                            FrameIndex b,
                            PExpr d) {
  CheckName(name, "loop closure");
  tree_->closures.push_back({name,
                             internal::ClosureType::kDistance,
                             CheckFrame(a, "frame a"),
                             CheckFrame(b, "frame b"),
                             std::move(d),
                             {},
                             1});
}

void Multibody::AddPointOnLine(const std::string& name,
                               FrameIndex point,
                               FrameIndex line,
                               const Eigen::Vector3d& dir) {
  CheckName(name, "loop closure");
  const Eigen::Vector3d d = Unit(dir, ("point-on-line '" + name + "'").c_str());
  internal::MbClosure c{name,
                        internal::ClosureType::kPointOnLine,
                        CheckFrame(point, "the point"),
                        CheckFrame(line, "the line's frame"),
                        PExpr(),
                        {},
                        1};
  if (tree_->dim == Dimension::kPlanar) {
    if (d[2] != 0.0)
      throw std::invalid_argument("multibody: point-on-line '" + name +
                                  "': the direction lies in the plane");
    c.normals.push_back(Eigen::Vector3d(-d[1], d[0], 0.0));
  } else {
    // Two unit normals spanning the plane orthogonal to d.
    const Eigen::Vector3d t = std::abs(d[0]) < 0.9 ? Eigen::Vector3d::UnitX()
                                                   : Eigen::Vector3d::UnitY();
    const Eigen::Vector3d n1 = d.cross(t).normalized();
    c.normals = {n1, d.cross(n1)};
    c.rows = 2;
  }
  tree_->closures.push_back(std::move(c));
}

void Multibody::AddPointOnPlane(const std::string& name,
                                FrameIndex point,
                                FrameIndex plane,
                                const Eigen::Vector3d& normal) {
  CheckName(name, "loop closure");
  if (tree_->dim == Dimension::kPlanar)
    throw std::invalid_argument(
        "multibody: point-on-plane '" + name +
        "' needs a spatial system (in a planar one use AddPointOnLine)");
  tree_->closures.push_back({name,
                             internal::ClosureType::kPointOnPlane,
                             CheckFrame(point, "the point"),
                             CheckFrame(plane, "the plane's frame"),
                             PExpr(),
                             {Unit(normal, "point-on-plane normal")},
                             1});
}

void Multibody::AddRelativeAngle(const std::string& name,
                                 FrameIndex a,
                                 FrameIndex b,
                                 PExpr angle) {
  CheckName(name, "loop closure");
  if (tree_->dim != Dimension::kPlanar)
    throw std::invalid_argument("multibody: relative angle '" + name +
                                "' is for planar systems");
  tree_->closures.push_back({name,
                             internal::ClosureType::kRelativeAngle,
                             CheckFrame(a, "frame a"),
                             CheckFrame(b, "frame b"),
                             std::move(angle),
                             {},
                             1});
}

void Multibody::AddConstantAngle(const std::string& name,
                                 FrameIndex a,
                                 const Eigen::Vector3d& axis_a,
                                 FrameIndex b,
                                 const Eigen::Vector3d& axis_b,
                                 double angle) {
  CheckName(name, "loop closure");
  if (!std::isfinite(angle))
    throw std::invalid_argument("multibody: constant angle '" + name +
                                "': the angle must be finite");
  const Eigen::Vector3d ua = Unit(axis_a, "constant-angle");
  const Eigen::Vector3d ub = Unit(axis_b, "constant-angle");
  if (tree_->dim == Dimension::kPlanar && (ua[2] != 0.0 || ub[2] != 0.0))
    throw std::invalid_argument("multibody: constant angle '" + name +
                                "': a planar system's axes lie in the plane");
  tree_->closures.push_back({name,
                             internal::ClosureType::kConstantAngle,
                             CheckFrame(a, "frame a"),
                             CheckFrame(b, "frame b"),
                             PExpr(std::cos(angle)),
                             {ua, ub},
                             1});
}

// ---- kinematics lookups

FrameIndex Kinematics::Frame(const std::string& name) const {
  std::string all;
  for (size_t f = 0; f < tree_->frames.size(); ++f) {
    if (tree_->frames[f].name == name) return {static_cast<int>(f)};
    all += (f ? " " : "") + tree_->frames[f].name;
  }
  throw std::invalid_argument("multibody: no frame '" + name +
                              "'; frames are: " + all);
}

BodyIndex Kinematics::Body(const std::string& name) const {
  std::string all;
  for (size_t b = 0; b < tree_->bodies.size(); ++b) {
    if (tree_->bodies[b].name == name) return {static_cast<int>(b)};
    all += (b ? " " : "") + tree_->bodies[b].name;
  }
  throw std::invalid_argument("multibody: no body '" + name +
                              "'; bodies are: " + all);
}

}  // namespace daedalus::mb
