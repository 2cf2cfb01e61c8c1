// MJCF import (include/daedalus/mjcf.hpp): a parsed Document
// (mjcf_internal.hpp) becomes a multibody description with MuJoCo's
// coordinates, declared in a ModelBuilder.
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <map>
#include <numbers>
#include <set>
#include <sstream>
#include <stdexcept>

#include "daedalus/mjcf.hpp"
#include "import_guard.hpp"
#include "mjcf_internal.hpp"

namespace daedalus::mjcf {

namespace {

using internal::Body;
using internal::Document;
using internal::Equality;
using internal::JointKind;
using internal::Notes;
using internal::Where;

constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL

mb::PVec Vec(const Eigen::Vector3d& v) { return mb::PVec(v[0], v[1], v[2]); }

// Runs a declaration, naming the MJCF element when the description refuses
// it (a duplicate name, a bad value).
template <class F>
auto At(const Where& w, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(w.At() + e.what());
  }
}

// A body's mass and inertia after the compiler's settings, checked.
internal::Inertial BodyInertia(const Body& b,
                               const internal::Compiler& c,
                               Notes* notes) {
  internal::Inertial in;
  in.at = b.at;
  std::optional<internal::Inertial> geoms;
  const bool from_geoms =
      c.inertiafromgeom == 1 || (c.inertiafromgeom == 2 && !b.inertial);
  if (from_geoms) geoms = internal::InertiaFromGeoms(b, c, notes);
  if (geoms) {
    in = *geoms;
  } else if (b.inertial) {
    in = *b.inertial;
  }
  in.mass = std::max(in.mass, c.boundmass);
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(in.inertia);
  Eigen::Vector3d pm = eig.eigenvalues();  // ascending
  const std::string at = (b.inertial && !geoms ? b.inertial->at : b.at).At();
  if (c.boundinertia > 0.0 && pm.minCoeff() < c.boundinertia) {
    pm = pm.cwiseMax(c.boundinertia);
    in.inertia =
        eig.eigenvectors() * pm.asDiagonal() * eig.eigenvectors().transpose();
  }
  const double scale = std::max(1.0, pm.cwiseAbs().maxCoeff());
  if (pm[0] < -1e-12 * scale)
    throw std::invalid_argument(
        at + "the inertia tensor is not positive definite (principal " +
        "moments " + std::to_string(pm[0]) + ", " + std::to_string(pm[1]) +
        ", " + std::to_string(pm[2]) +
        "); give positive principal moments about the centre of mass "
        "(diaginertia, or a fullinertia with positive eigenvalues)");
  if (pm[0] + pm[1] < pm[2] - 1e-12 * scale) {
    if (!c.balanceinertia)
      throw std::invalid_argument(
          at + "the principal moments " + std::to_string(pm[0]) + ", " +
          std::to_string(pm[1]) + ", " + std::to_string(pm[2]) +
          " violate A + B >= C: no mass distribution has them; fix the "
          "inertia (or set the compiler's balanceinertia='true', as MuJoCo "
          "asks)");
    in.inertia = Eigen::Matrix3d::Identity() * pm.sum() / 3.0;
  }
  return in;
}

// The normal n of the plane in which the joints from the world to bodies i1
// and i2 move them, when they do: every hinge axis along n, every slide
// axis normal to it, no ball or free joint. A loop closed between such
// bodies has its components along n constant, so a coincidence's row along
// n has a gradient that vanishes everywhere: an exact constraint keeps the
// two in-plane rows (MuJoCo's soft constraints tolerate the third).
std::optional<Eigen::Vector3d> PlaneOf(const std::vector<Body>& bodies,
                                       int i1,
                                       int i2) {
  std::optional<Eigen::Vector3d> n;
  std::vector<Eigen::Vector3d> slides;
  for (int start : {i1, i2})
    for (int i = start; i > 0; i = bodies[static_cast<size_t>(i)].parent) {
      const Body& b = bodies[static_cast<size_t>(i)];
      for (const internal::Joint& j : b.joints) {
        if (j.kind == JointKind::kBall || j.kind == JointKind::kFree)
          return std::nullopt;
        const Eigen::Vector3d a = b.world_quat * j.axis;
        if (j.kind == JointKind::kSlide) {
          slides.push_back(a);
        } else if (!n) {
          n = a;
        } else if (a.cross(*n).norm() > 1e-12) {
          return std::nullopt;
        }
      }
    }
  if (!n) return std::nullopt;
  for (const Eigen::Vector3d& a : slides)
    if (std::abs(a.dot(*n)) > 1e-12) return std::nullopt;
  return n;
}

// True when a moving body has neither mass nor a massive static child
// (MuJoCo's check: "mass and inertia of moving bodies must be larger than
// mjMINVAL").
bool Massless(const internal::Inertial& in) {
  const Eigen::Vector3d pm =
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(in.inertia).eigenvalues();
  return in.mass < kMinVal || pm.minCoeff() < kMinVal;
}

}  // namespace

std::string Model::Describe() const {
  std::ostringstream os;
  os << "MJCF model '" << name << "' (" << file << "): " << joints.size()
     << " joints";
  if (!actuators.empty()) os << ", " << actuators.size() << " motors";
  if (!equalities.empty()) os << ", " << equalities.size() << " equalities";
  if (!contacts.empty())
    os << ", " << contacts.size() << " ground contact points";
  os << "; gravity (" << gravity[0] << ", " << gravity[1] << ", " << gravity[2]
     << ") m/s^2; <option timestep> " << timestep
     << " s (not used: the integrator's tolerances set the steps):\n";
  for (const MjcfJoint& j : joints) {
    os << "  " << j.name << " (" << j.type << ", body " << j.body << ", qpos "
       << j.qpos << ")";
    if (j.limited) os << " range [" << j.lower << ", " << j.upper << "]";
    if (j.damping > 0.0) os << " damping " << j.damping;
    if (j.stiffness > 0.0)
      os << " stiffness " << j.stiffness << " springref " << j.springref;
    if (j.armature > 0.0) os << " armature " << j.armature;
    os << "\n";
  }
  int limited = 0;
  for (const MjcfJoint& j : joints) limited += j.limited ? 1 : 0;
  if (limited > 0)
    os << "  joint limits: " << limited
       << " joints have a range: joint limits, contacts limit:<joint>:lower "
          "and :upper (restitution 0; --no-joint-limits frees them)\n";
  for (const MjcfActuator& a : actuators)
    os << "  motor " << a.name << " on " << a.joint << ", gear " << a.gear
       << ", value ctrl_" << a.name << " in [" << a.lower << ", " << a.upper
       << "]\n";
  for (const std::string& e : equalities) os << "  equality " << e << "\n";
  return os.str();
}

namespace internal {

Model Build(Document doc,
            Notes* notes,
            ModelBuilder* builder,
            const ImportOptions& options) {
  Model out;
  out.name = doc.model_name;
  out.file = doc.file;
  out.gravity = options.gravity ? *options.gravity : doc.gravity;
  out.timestep = doc.timestep;
  std::vector<Body>& bodies = doc.bodies;
  // Names: bodies and joints as MuJoCo has them, the unnamed named after
  // their index or body; each unique.
  std::map<std::string, int> body_index, joint_body;
  for (size_t i = 1; i < bodies.size(); ++i) {
    Body& b = bodies[i];
    if (b.name.empty()) b.name = "body" + std::to_string(i);
    if (!body_index.emplace(b.name, static_cast<int>(i)).second)
      throw std::invalid_argument(b.at.At() + "a second body named '" + b.name +
                                  "'; body names are unique");
    for (size_t k = 0; k < b.joints.size(); ++k) {
      Joint& j = b.joints[k];
      if (j.name.empty())
        j.name = b.name + "_joint" +
                 (b.joints.size() > 1 ? std::to_string(k) : std::string());
      if (!joint_body.emplace(j.name, static_cast<int>(i)).second)
        throw std::invalid_argument(j.at.At() + "a second joint named '" +
                                    j.name + "'; joint names are unique");
    }
  }
  // World poses at qpos0 (the file's pose), for the equalities.
  for (size_t i = 1; i < bodies.size(); ++i) {
    Body& b = bodies[i];
    const Body& p = bodies[static_cast<size_t>(b.parent)];
    b.world_quat = (p.world_quat * b.quat).normalized();
    b.world_pos = p.world_pos + p.world_quat * b.pos;
  }
  // Inertias, then MuJoCo's settotalmass and its check of moving bodies.
  std::vector<Inertial> inertia(bodies.size());
  for (size_t i = 1; i < bodies.size(); ++i)
    inertia[i] = BodyInertia(bodies[i], doc.compiler, notes);
  if (doc.compiler.settotalmass > 0.0) {
    double total = 0.0;
    for (size_t i = 1; i < bodies.size(); ++i) total += inertia[i].mass;
    if (total > kMinVal)
      for (size_t i = 1; i < bodies.size(); ++i) {
        inertia[i].mass *= doc.compiler.settotalmass / total;
        inertia[i].inertia *= doc.compiler.settotalmass / total;
      }
  }
  for (size_t i = 1; i < bodies.size(); ++i) {
    const Body& b = bodies[i];
    if (b.joints.empty() || !Massless(inertia[i])) continue;
    bool carried = false;
    for (int c : b.children)
      carried |= bodies[static_cast<size_t>(c)].joints.empty() &&
                 !Massless(inertia[static_cast<size_t>(c)]);
    if (!carried)
      throw std::invalid_argument(
          b.at.At() + "a moving body (joint '" + b.joints[0].name +
          "') without mass or without inertia (mass " +
          std::to_string(inertia[i].mass) + "; " +
          (b.inertial        ? std::string("its <inertial>")
           : b.geoms.empty() ? std::string("no <inertial>, no geoms")
                             : std::string("its geoms")) +
          "): its acceleration is undefined; give it an <inertial pos mass "
          "diaginertia> or a geom with a volume (MuJoCo refuses it too)");
  }

  mb::Multibody s(mb::Dimension::kSpatial);
  s.SetGravity(Vec(out.gravity));
  std::vector<mb::BodyIndex> handle(bodies.size());
  handle[0] = s.ground();
  std::vector<std::pair<mb::JointIndex, const Joint*>> declared;
  for (size_t i = 1; i < bodies.size(); ++i) {
    const Body& b = bodies[i];
    const mb::BodyIndex parent = handle[static_cast<size_t>(b.parent)];
    const Inertial& in = inertia[i];
    const Eigen::Matrix3d& I = in.inertia;
    const mb::BodySpec spec =
        mb::SpatialBody(in.mass, Vec(in.pos), I(0, 0), I(1, 1), I(2, 2),
                        I(0, 1), I(0, 2), I(1, 2));
    // The pose of the next joint's frame, relative to `at_body`.
    mb::BodyIndex at_body = parent;
    Eigen::Vector3d pos = b.pos;
    Eigen::Quaterniond quat = b.quat;
    if (b.joints.empty()) {
      handle[i] = At(b.at, [&] { return s.AddBody(b.name, spec); });
      At(b.at, [&] {
        const mb::FrameIndex f = s.AddFrame(b.name + "_origin", parent,
                                            Vec(pos), quat.toRotationMatrix());
        return s.AddJoint(b.name + "_weld", mb::Joint::Weld(), f,
                          s.BodyFrame(handle[i]));
      });
    }
    for (size_t k = 0; k < b.joints.size(); ++k) {
      const Joint& j = b.joints[k];
      const bool last = k + 1 == b.joints.size();
      if (j.kind == JointKind::kFree && (b.joints.size() > 1 || b.parent != 0))
        throw std::invalid_argument(
            j.at.At() +
            "a free joint must be the only joint of a body of the "
            "<worldbody> (MuJoCo's rule: its qpos is the body's pose in the "
            "world)");
      if (j.kind == JointKind::kBall && !last)
        throw std::invalid_argument(
            j.at.At() +
            "a ball joint followed by other joints in the same body is not "
            "supported (MuJoCo expresses its velocity in the final body "
            "frame); put the other joints in a child body");
      const mb::BodyIndex child = At(j.at, [&] {
        return last
                   ? s.AddBody(b.name, spec)
                   : s.AddBody(b.name + ":" + j.name,
                               mb::SpatialBody(0.0, mb::PVec(), 0.0, 0.0, 0.0));
      });
      if (last) handle[i] = child;
      mb::Joint spec_j;
      Eigen::Vector3d anchor = j.pos;
      Eigen::Quaterniond turn = Eigen::Quaterniond::Identity();
      switch (j.kind) {
        case JointKind::kHinge:
          spec_j = mb::Joint::Revolute(j.axis).Named({j.name});
          // qpos = ref at the file's pose: the parent frame turned by -ref.
          turn = Eigen::AngleAxisd(-j.ref, j.axis);
          break;
        case JointKind::kSlide:
          spec_j = mb::Joint::Prismatic(j.axis).Named({j.name});
          anchor -= j.ref * j.axis;
          break;
        case JointKind::kBall:
          spec_j = mb::Joint::Ball().Named({j.name});
          break;
        case JointKind::kFree:
          spec_j = mb::Joint::Free();
          break;
      }
      const mb::JointIndex ji = At(j.at, [&] {
        if (j.kind == JointKind::kFree)
          return s.AddJoint(j.name, spec_j, s.world(), s.BodyFrame(child));
        const mb::FrameIndex f =
            s.AddFrame(j.name + "_origin", at_body, Vec(pos + quat * anchor),
                       (quat * turn).toRotationMatrix());
        const mb::FrameIndex m =
            j.pos.isZero(0.0)
                ? s.BodyFrame(child)
                : s.AddFrame(j.name + "_anchor", child, Vec(j.pos));
        return s.AddJoint(j.name, spec_j, f, m);
      });
      declared.emplace_back(ji, &j);
      at_body = child;
      pos.setZero();
      quat.setIdentity();
      // Springs, dampers, armature and limits.
      const int nv = spec_j.num_velocities();
      At(j.at, [&] {
        if (j.stiffness > 0.0 && doc.passive) {
          if (j.kind == JointKind::kBall || j.kind == JointKind::kFree)
            throw std::invalid_argument(
                "stiffness on a " + std::string(ToString(j.kind)) +
                " joint (a spring on its rotation) is not supported; remove "
                "it");
          s.AddJointSpring(ji, j.stiffness, j.springref);
        }
        for (int v = 0; v < nv; ++v) {
          if (j.damping > 0.0 && doc.passive)
            s.AddJointDamper(ji, j.damping, v);
          if (j.armature > 0.0) s.AddJointArmature(ji, j.armature, v);
        }
        if (j.limited && j.kind != JointKind::kBall)
          s.SetJointLimits(ji, mb::JointLimits{{j.lower}, {j.upper}, 0.0});
      });
      MjcfJoint r;
      r.name = j.name;
      r.type = ToString(j.kind);
      r.body = b.name;
      r.qpos = s.Coordinate(ji);
      r.qvel = s.Velocity(ji);
      r.limited = j.limited;
      r.lower = j.lower;
      r.upper = j.upper;
      r.damping = j.damping;
      r.stiffness = j.stiffness;
      r.springref = j.springref;
      r.armature = j.armature;
      r.ref = j.ref;
      r.where = j.at.file + ":" + std::to_string(j.at.line);
      out.joints.push_back(r);
    }
  }
  // Geometry: every geom on its body (the world's on the ground).
  int colliding = 0;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const Body& b = bodies[i];
    for (size_t k = 0; k < b.geoms.size(); ++k) {
      const Geom& g = b.geoms[k];
      if (g.hfield) {
        notes->Add("geom.hfield", g.at,
                   "height fields are not recorded as geometry");
        continue;
      }
      if (g.type == mb::GeometryType::kPlane && i > 0 &&
          !bodies[i].joints.empty())
        throw std::invalid_argument(g.at.At() +
                                    "a plane only belongs to a static body "
                                    "(MuJoCo's rule)");
      colliding += (g.contype != 0 || g.conaffinity != 0) ? 1 : 0;
      mb::Geometry geo;
      geo.name = g.name.empty() ? b.name + "_geom" + std::to_string(k) : g.name;
      geo.type = g.type;
      geo.size = g.size;
      geo.position = g.pos;
      geo.quaternion =
          Eigen::Vector4d(g.quat.w(), g.quat.x(), g.quat.y(), g.quat.z());
      geo.rgba = g.rgba.cwiseMax(0.0).cwiseMin(1.0);
      geo.collision = g.contype != 0 || g.conaffinity != 0;
      geo.visual = g.group < 3;  // MuJoCo draws groups 0, 1, 2
      if (g.type == mb::GeometryType::kMesh)
        geo.mesh = doc.meshes.at(g.mesh).first;
      At(g.at, [&] { s.AddGeometry(handle[i], geo); });
    }
  }
  if (options.ground) {
    ContactLaw law;
    law.restitution = options.ground_restitution;
    law.mu_static = options.ground_mu;
    std::vector<std::string> skipped;
    out.contacts = s.AddGroundContacts(
        s.AddGroundPlane("ground", options.ground_height), law, &skipped);
    if (!skipped.empty())
      notes->Add("ground", bodies[0].at,
                 std::to_string(skipped.size()) +
                     " colliding geoms are not spheres or boxes and make no "
                     "ground contact (the first: " +
                     skipped.front() + ")");
    if (out.contacts.empty())
      throw std::invalid_argument(
          doc.file +
          ": ground contacts asked for, but no moving body has a colliding "
          "sphere or box geom (the contact pairs supported: sphere and box "
          "corners against the ground plane)");
  } else if (colliding > 1) {
    notes->Add("contacts", bodies[0].at,
               std::to_string(colliding) +
                   " geoms can collide (contype/conaffinity): contacts are "
                   "not simulated, bodies pass through each other and the "
                   "floor; the geoms are recorded as geometry (--ground "
                   "makes spheres and boxes contacts with a ground plane)");
  }
  for (const MjcfJoint& j : out.joints)
    if (j.limited) {
      notes->Add("limits", bodies[0].at,
                 "joint ranges are joint limits, enforced as hard "
                 "unilateral contacts (restitution 0), not MuJoCo's soft "
                 "limit constraints (solref, solimp, margin); "
                 "--no-joint-limits runs without them");
      break;
    }
  // Connect and weld equalities: closures between frames on the bodies.
  auto body_of = [&](const std::string& name, const Where& at) -> int {
    if (name.empty() || name == "world") return 0;
    const auto it = body_index.find(name);
    if (it == body_index.end())
      throw std::invalid_argument(at.At() + "no body named '" + name + "'");
    return it->second;
  };
  std::vector<const Equality*> couplings;
  for (size_t e = 0; e < doc.equalities.size() && doc.equality; ++e) {
    const Equality& q = doc.equalities[e];
    const std::string name =
        q.name.empty() ? q.kind + std::to_string(e) : q.name;
    if (q.kind == "joint") {
      couplings.push_back(&q);
      continue;
    }
    const int i1 = body_of(q.obj1, q.at), i2 = body_of(q.obj2, q.at);
    if (i1 == i2)
      throw std::invalid_argument(q.at.At() + "body1 and body2 are the same");
    const Body& b1 = bodies[static_cast<size_t>(i1)];
    const Body& b2 = bodies[static_cast<size_t>(i2)];
    At(q.at, [&] {
      if (q.kind == "connect") {
        // The anchor on body1, and the same point on body2 at qpos0.
        const Eigen::Vector3d w = b1.world_pos + b1.world_quat * q.anchor;
        const Eigen::Vector3d on2 =
            b2.world_quat.inverse() * (w - b2.world_pos);
        const mb::FrameIndex a = s.AddFrame(
            name + "_anchor1", handle[static_cast<size_t>(i1)], Vec(q.anchor));
        const mb::FrameIndex c = s.AddFrame(
            name + "_anchor2", handle[static_cast<size_t>(i2)], Vec(on2));
        if (const auto n = PlaneOf(bodies, i1, i2)) {
          // A planar loop: the point on the line through the anchor along
          // n, two rows.
          s.AddPointOnLine(name, c, a, b1.world_quat.inverse() * *n);
          notes->Add("equality.planar." + name, q.at,
                     "the loop moves in the plane normal to (" +
                         std::to_string((*n)[0]) + ", " +
                         std::to_string((*n)[1]) + ", " +
                         std::to_string((*n)[2]) +
                         "): the coincidence's row along the normal is "
                         "identically zero, so the constraint keeps the two "
                         "in-plane rows");
        } else {
          s.AddCoincidence(name, a, c);
        }
      } else {
        // Body2's anchor point and frame held at a pose fixed on body1:
        // relpose, or their pose at qpos0.
        Eigen::Vector3d rel_pos = q.rel_pos;
        Eigen::Quaterniond rel_quat = q.rel_quat;
        if (!q.relpose_given) {
          const Eigen::Vector3d w = b2.world_pos + b2.world_quat * q.anchor;
          rel_pos = b1.world_quat.inverse() * (w - b1.world_pos);
          rel_quat = b1.world_quat.inverse() * b2.world_quat;
        }
        const mb::FrameIndex a =
            s.AddFrame(name + "_pose1", handle[static_cast<size_t>(i1)],
                       Vec(rel_pos), rel_quat.normalized().toRotationMatrix());
        const mb::FrameIndex c = s.AddFrame(
            name + "_pose2", handle[static_cast<size_t>(i2)], Vec(q.anchor));
        const double right = std::numbers::pi / 2;
        if (const auto n = PlaneOf(bodies, i1, i2)) {
          // A planar weld: two in-plane rows and the angle about n.
          const Eigen::Vector3d na = (b1.world_quat * rel_quat).inverse() * *n;
          const Eigen::Vector3d u = na.unitOrthogonal();
          s.AddPointOnLine(name, c, a, na);
          s.AddConstantAngle(name + "_angle", a, u, c, na.cross(u), right);
        } else {
          s.AddCoincidence(name, a, c);
          const Eigen::Vector3d x = Eigen::Vector3d::UnitX(),
                                y = Eigen::Vector3d::UnitY(),
                                z = Eigen::Vector3d::UnitZ();
          s.AddConstantAngle(name + "_rx", a, y, c, z, right);
          s.AddConstantAngle(name + "_ry", a, z, c, x, right);
          s.AddConstantAngle(name + "_rz", a, x, c, y, right);
        }
      }
    });
    out.equalities.push_back(name);
  }
  if (!doc.equality && !doc.equalities.empty())
    notes->Add("flag.equality", doc.equalities[0].at,
               "equalities disabled by <option><flag>: left out");
  // Motors: input channels with column gear on the joint's velocities and
  // value the parameter ctrl_<name> (the control), its range the
  // ctrlrange and forcerange (force = gain ctrl).
  struct Channel {
    std::string name, param;
    int vel, nv;
    Eigen::Matrix<double, 6, 1> column;
    double lower, upper;
  };
  std::vector<Channel> channels;
  for (size_t k = 0; k < doc.actuators.size(); ++k) {
    const Actuator& a = doc.actuators[k];
    if (!doc.actuation) {
      notes->Add("flag.actuation", a.at,
                 "actuation disabled by <option><flag>: no input channels");
      break;
    }
    const auto jt =
        std::find_if(declared.begin(), declared.end(),
                     [&](const auto& d) { return d.second->name == a.joint; });
    if (jt == declared.end())
      throw std::invalid_argument(a.at.At() + "no joint named '" + a.joint +
                                  "'");
    MjcfActuator r;
    r.name = a.name.empty() ? "actuator" + std::to_string(k) : a.name;
    r.joint = a.joint;
    r.parameter = "ctrl_" + r.name;
    r.gear = a.gear[0];
    if (a.ctrllimited) {
      r.lower = a.ctrl_lo;
      r.upper = a.ctrl_hi;
    }
    if (a.forcelimited && a.gain > 0.0) {
      r.lower = std::max(r.lower, a.force_lo / a.gain);
      r.upper = std::min(r.upper, a.force_hi / a.gain);
    }
    const Joint& j = *jt->second;
    if ((j.kind == JointKind::kFree || j.kind == JointKind::kBall) &&
        a.in_parent)
      throw std::invalid_argument(a.at.At("jointinparent") +
                                  "a gear in the parent's frame on a ball or "
                                  "free joint is not supported; use joint=");
    Channel c{r.name,  r.parameter, s.Velocity(jt->first), 0, a.gear * a.gain,
              r.lower, r.upper};
    c.nv = j.kind == JointKind::kFree ? 6 : j.kind == JointKind::kBall ? 3 : 1;
    channels.push_back(c);
    out.actuators.push_back(r);
  }
  // The model's functions; then the inputs and the joint couplings, which
  // the builder takes beside the description.
  std::vector<std::pair<int, int>> coupled;  // (q of joint1, q of joint2)
  for (const Equality* q : couplings) {
    auto find = [&](const std::string& name)
        -> const std::pair<mb::JointIndex, const Joint*>* {
      for (const auto& d : declared)
        if (d.second->name == name) return &d;
      return nullptr;
    };
    const auto* j1 = find(q->obj1);
    const auto* j2 = q->obj2.empty() ? nullptr : find(q->obj2);
    if (!j1 || (!q->obj2.empty() && !j2))
      throw std::invalid_argument(q->at.At() + "no joint named '" +
                                  (j1 ? q->obj2 : q->obj1) + "'");
    for (const auto* j : {j1, j2})
      if (j && (j->second->kind == JointKind::kBall ||
                j->second->kind == JointKind::kFree))
        throw std::invalid_argument(q->at.At() +
                                    "a joint equality couples hinge and slide "
                                    "joints only (MuJoCo's rule)");
    coupled.emplace_back(s.Coordinate(j1->first),
                         j2 ? s.Coordinate(j2->first) : -1);
  }
  out.kinematics = std::move(s).AddTo(builder, options.dynamics);
  const int nv = out.kinematics.tree().nv;
  for (const Channel& c : channels) {
    ParamRange range;
    range.lower = c.lower;
    range.upper = c.upper;
    const double start = std::clamp(0.0, c.lower, c.upper);
    const Param p = builder->Parameter(c.param, start, range);
    Eigen::VectorXd column = Eigen::VectorXd::Zero(nv);
    for (int k = 0; k < c.nv; ++k) column[c.vel + k] = c.column[k];
    builder->Input(
        c.name,
        [column](const auto& x) {
          using S = Scalar<decltype(x)>;
          return VecX<S>(column.cast<S>());
        },
        [p](const auto& x) { return x.p[p]; });
  }
  for (size_t k = 0; k < couplings.size(); ++k) {
    const Equality& q = *couplings[k];
    const std::string name =
        q.name.empty() ? "joint" + std::to_string(&q - doc.equalities.data())
                       : q.name;
    const int i1 = coupled[k].first, i2 = coupled[k].second;
    // qpos0 of each joint: its ref.
    double ref1 = 0.0, ref2 = 0.0;
    for (const MjcfJoint& j : out.joints) {
      if (j.qpos == i1) ref1 = j.ref;
      if (j.qpos == i2) ref2 = j.ref;
    }
    std::array<double, 5> c;
    for (int i = 0; i < 5; ++i) c[static_cast<size_t>(i)] = q.polycoef[i];
    std::vector<int> touches = {i1};
    if (i2 >= 0) touches = {std::min(i1, i2), std::max(i1, i2)};
    // y - y0 = a0 + a1 (x - x0) + ... + a4 (x - x0)^4 (MuJoCo's joint
    // equality; without joint2, y - y0 = a0).
    builder->Holonomic(name, Touches{touches},
                       [i1, i2, ref1, ref2, c](const auto& x) {
                         using S = Scalar<decltype(x)>;
                         S phi = x.q[i1] - ref1 - c[0];
                         if (i2 >= 0) {
                           const S d = x.q[i2] - ref2;
                           S power = d;
                           for (size_t i = 1; i < 5; ++i) {
                             if (c[i] != 0.0) phi = phi - c[i] * power;
                             power = power * d;
                           }
                         }
                         return phi;
                       });
    out.equalities.push_back(name);
  }
  // The start: MuJoCo's qpos0.
  out.qpos0 = out.kinematics.Neutral();
  for (size_t i = 1; i < bodies.size(); ++i)
    for (const Joint& j : bodies[i].joints) {
      const MjcfJoint& r =
          *std::find_if(out.joints.begin(), out.joints.end(),
                        [&](const MjcfJoint& x) { return x.name == j.name; });
      if (j.kind == JointKind::kHinge || j.kind == JointKind::kSlide)
        out.qpos0[r.qpos] = j.ref;
      if (j.kind == JointKind::kFree) {
        out.qpos0.segment<3>(r.qpos) = bodies[i].pos;
        out.qpos0.segment<4>(r.qpos + 3) =
            Eigen::Vector4d(bodies[i].quat.w(), bodies[i].quat.x(),
                            bodies[i].quat.y(), bodies[i].quat.z());
      }
    }
  out.notes = notes->Lines();
  return out;
}

}  // namespace internal

Model ImportString(const std::string& xml,
                   const std::string& origin,
                   ModelBuilder* builder,
                   const ImportOptions& options) {
  Notes notes(options.notes);
  internal::Document doc =
      internal::Parse(xml, origin, options.skip_unsupported_actuators, &notes);
  return internal::Build(std::move(doc), &notes, builder, options);
}

Model Import(const std::string& path,
             ModelBuilder* builder,
             const ImportOptions& options) {
  return ImportString(mb::internal::ReadModelFile(path, "MJCF", "--model"),
                      path, builder, options);
}

}  // namespace daedalus::mjcf
