// URDF import with urdfdom (include/daedalus/urdf.hpp).
#include "daedalus/urdf.hpp"

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "import_guard.hpp"
#include "urdf_check.hpp"

namespace daedalus::urdf {

namespace {

// Collects urdfdom's messages (console_bridge) while parsing, so that an
// error names what urdfdom said instead of printing it to stderr.
class Collect : public console_bridge::OutputHandler {
 public:
  Collect() { console_bridge::useOutputHandler(this); }
  ~Collect() override { console_bridge::restorePreviousOutputHandler(); }
  Collect(const Collect&) = delete;
  Collect& operator=(const Collect&) = delete;
  void log(const std::string& text,
           console_bridge::LogLevel level,
           const char* /*filename*/,
           int /*line*/) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_WARN)
      text_ += (text_.empty() ? "" : "; ") + text;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

const char* const kSupported =
    "supported joint types: revolute, continuous, prismatic, fixed, "
    "floating";

Eigen::Matrix3d ToMatrix(const ::urdf::Rotation& r) {
  Eigen::Quaterniond qn(r.w, r.x, r.y, r.z);
  if (!(qn.norm() > 0.0)) return Eigen::Matrix3d::Identity();
  return qn.normalized().toRotationMatrix();
}

// The link's inertia checked and expressed in the link frame.
mb::BodySpec LinkBody(const ::urdf::Link& link, const std::string& where) {
  if (!link.inertial) return mb::SpatialBody(0.0, mb::PVec(), 0.0, 0.0, 0.0);
  const ::urdf::Inertial& in = *link.inertial;
  const std::string at = where + "link '" + link.name + "': ";
  if (!(std::isfinite(in.mass) && in.mass > 0.0))
    throw std::invalid_argument(
        at + "mass " + std::to_string(in.mass) +
        " must be positive; give <inertial><mass value> > 0 (or leave out "
        "<inertial> for a massless link)");
  Eigen::Matrix3d ic;
  ic << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
  if (!ic.allFinite())
    throw std::invalid_argument(at + "the inertia has a non-finite entry");
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(ic);
  const Eigen::Vector3d pm = eig.eigenvalues();  // ascending
  const double tol = 1e-12 * std::max(1.0, pm.cwiseAbs().maxCoeff());
  if (!(pm[0] > 0.0))
    throw std::invalid_argument(
        at + "the inertia tensor (ixx " + std::to_string(in.ixx) + ", iyy " +
        std::to_string(in.iyy) + ", izz " + std::to_string(in.izz) + ", ixy " +
        std::to_string(in.ixy) + ", ixz " + std::to_string(in.ixz) + ", iyz " +
        std::to_string(in.iyz) +
        ") is not positive definite (smallest principal moment " +
        std::to_string(pm[0]) +
        "); give positive principal moments about the centre of mass");
  if (pm[0] + pm[1] < pm[2] - tol)
    throw std::invalid_argument(
        at + "the principal moments " + std::to_string(pm[0]) + ", " +
        std::to_string(pm[1]) + ", " + std::to_string(pm[2]) +
        " violate the triangle inequality I1 + I2 >= I3: no mass "
        "distribution has them");
  const Eigen::Matrix3d r = ToMatrix(in.origin.rotation);
  const Eigen::Matrix3d i = r * ic * r.transpose();
  const ::urdf::Vector3& c = in.origin.position;
  return mb::SpatialBody(in.mass, mb::PVec(c.x, c.y, c.z), i(0, 0), i(1, 1),
                         i(2, 2), i(0, 1), i(0, 2), i(1, 2));
}

Eigen::Vector3d Axis(const ::urdf::Joint& j, const std::string& at) {
  const Eigen::Vector3d a(j.axis.x, j.axis.y, j.axis.z);
  if (!(a.allFinite() && a.norm() > 0.0))
    throw std::invalid_argument(at + "the axis must be a nonzero vector");
  return a / a.norm();
}

// The shapes of a link's <visual> and <collision> elements as geometry in
// its frame (multibody.hpp, Geometry: MuJoCo's size conventions).
void AddShapes(const ::urdf::Link& link,
               mb::BodyIndex body,
               mb::Multibody* system) {
  auto shape = [&](const ::urdf::GeometrySharedPtr& g, const ::urdf::Pose& o,
                   const std::string& name, bool collision,
                   const Eigen::Vector4d& rgba) {
    if (!g) return;
    mb::Geometry geo;
    geo.name = name;
    geo.collision = collision;
    geo.visual = !collision;
    geo.rgba = rgba;
    geo.position = Eigen::Vector3d(o.position.x, o.position.y, o.position.z);
    const Eigen::Quaterniond r(ToMatrix(o.rotation));
    geo.quaternion = Eigen::Vector4d(r.w(), r.x(), r.y(), r.z());
    switch (g->type) {
      case ::urdf::Geometry::SPHERE:
        geo.type = mb::GeometryType::kSphere;
        geo.size[0] = static_cast<const ::urdf::Sphere&>(*g).radius;
        break;
      case ::urdf::Geometry::BOX: {
        const ::urdf::Vector3& d = static_cast<const ::urdf::Box&>(*g).dim;
        geo.type = mb::GeometryType::kBox;
        geo.size = Eigen::Vector3d(d.x, d.y, d.z) / 2.0;
        break;
      }
      case ::urdf::Geometry::CYLINDER: {
        const auto& c = static_cast<const ::urdf::Cylinder&>(*g);
        geo.type = mb::GeometryType::kCylinder;
        geo.size = Eigen::Vector3d(c.radius, c.length / 2.0, 0.0);
        break;
      }
      case ::urdf::Geometry::MESH: {
        const auto& m = static_cast<const ::urdf::Mesh&>(*g);
        geo.type = mb::GeometryType::kMesh;
        geo.size = Eigen::Vector3d(m.scale.x, m.scale.y, m.scale.z);
        geo.mesh = m.filename;
        break;
      }
    }
    system->AddGeometry(body, geo);
  };
  for (size_t k = 0; k < link.visual_array.size(); ++k) {
    const ::urdf::Visual& v = *link.visual_array[k];
    Eigen::Vector4d rgba(0.5, 0.5, 0.5, 1.0);
    if (v.material)
      rgba = Eigen::Vector4d(v.material->color.r, v.material->color.g,
                             v.material->color.b, v.material->color.a);
    shape(v.geometry, v.origin,
          v.name.empty() ? link.name + "_visual" + std::to_string(k) : v.name,
          false, rgba);
  }
  for (size_t k = 0; k < link.collision_array.size(); ++k) {
    const ::urdf::Collision& c = *link.collision_array[k];
    shape(
        c.geometry, c.origin,
        c.name.empty() ? link.name + "_collision" + std::to_string(k) : c.name,
        true, Eigen::Vector4d(0.5, 0.5, 0.5, 0.4));
  }
}

struct Importer {
  const std::string where;  // "URDF file 'x': "
  const ImportOptions& options;
  mb::Multibody* system;
  Robot* robot;
  // Actuated joints: (joint, name, the <limit effort> or 0 when none).
  struct Actuated {
    mb::JointIndex joint;
    std::string name;
    double effort;
  };
  std::vector<Actuated> actuated;
  std::vector<std::pair<mb::JointIndex, double>> dampers;
  // Mimic joints: (joint, the joint it follows, multiplier, offset).
  struct Mimic {
    mb::JointIndex joint;
    std::string name, leader;
    double multiplier, offset;
  };
  std::vector<Mimic> mimics;
  std::vector<std::pair<std::string, mb::JointIndex>> by_name;

  // Declares the joints below `link` (whose body is `body`), depth first.
  void Below(const ::urdf::Link& link, mb::BodyIndex body) {
    for (const auto& jp : link.child_joints) {
      const ::urdf::Joint& j = *jp;
      const std::string at = where + "joint '" + j.name + "': ";
      const auto it = std::find_if(
          link.child_links.begin(), link.child_links.end(),
          [&](const auto& l) { return l->name == j.child_link_name; });
      if (it == link.child_links.end())
        throw std::invalid_argument(at + "its child link '" +
                                    j.child_link_name + "' is not declared");
      const ::urdf::Link& cl = **it;
      mb::Joint spec;
      std::string type;
      switch (j.type) {
        case ::urdf::Joint::REVOLUTE:
          type = "revolute";
          spec = mb::Joint::Revolute(Axis(j, at));
          break;
        case ::urdf::Joint::CONTINUOUS:
          type = "continuous";
          spec = mb::Joint::Revolute(Axis(j, at));
          break;
        case ::urdf::Joint::PRISMATIC:
          type = "prismatic";
          spec = mb::Joint::Prismatic(Axis(j, at));
          break;
        case ::urdf::Joint::FIXED:
          spec = mb::Joint::Weld();
          break;
        case ::urdf::Joint::FLOATING:
          type = "floating";
          spec = mb::Joint::Free();
          break;
        case ::urdf::Joint::PLANAR:
          throw std::invalid_argument(at + "planar joints are not supported; " +
                                      kSupported);
        default:
          throw std::invalid_argument(at + "unknown joint type; " + kSupported);
      }
      if (j.dynamics && j.dynamics->friction != 0.0)
        throw std::invalid_argument(
            at +
            "<dynamics friction> is not supported (Coulomb friction is "
            "not smooth); remove it or set it to 0");
      const ::urdf::Pose& o = j.parent_to_joint_origin_transform;
      const mb::FrameIndex origin =
          system->AddFrame(j.name + "_origin", body,
                           mb::PVec(o.position.x, o.position.y, o.position.z),
                           ToMatrix(o.rotation));
      const mb::BodyIndex child = system->AddBody(cl.name, LinkBody(cl, where));
      AddShapes(cl, child, system);
      if (type.empty()) {
        system->AddJoint(j.name, spec, origin, system->BodyFrame(child));
        robot->fixed.push_back(j.name);
      } else if (type == "floating") {
        // Six degrees of freedom, not actuated: coordinates <joint>_x, _y,
        // _z and the quaternion <joint>.w .. .z (multibody.hpp, Free).
        system->AddJoint(j.name, spec, origin, system->BodyFrame(child));
        robot->floating.push_back(j.name);
      } else {
        const mb::JointIndex ji = system->AddJoint(
            j.name, spec.Named({j.name}), origin, system->BodyFrame(child));
        UrdfJoint u;
        u.name = j.name;
        u.type = type;
        u.parent = link.name;
        u.child = cl.name;
        u.coordinate = system->Coordinate(ji);
        u.velocity_index = system->Velocity(ji);
        if (j.limits) {
          u.has_position_limits = type != "continuous";
          u.lower = j.limits->lower;
          u.upper = j.limits->upper;
          u.effort = j.limits->effort;
          u.velocity = j.limits->velocity;
          if (u.has_position_limits && !(u.lower <= u.upper))
            throw std::invalid_argument(
                at + "limit lower " + std::to_string(u.lower) +
                " is above upper " + std::to_string(u.upper));
          // lower = upper (0 = 0 when <limit> gives only effort and
          // velocity, the attributes' defaults) would lock the joint
          // between two contacts with opposite normals: read as no
          // position limit, and said (a locked joint is type="fixed").
          if (u.has_position_limits && u.lower == u.upper) {
            u.has_position_limits = false;
            const std::string note =
                "joint '" + j.name +
                "': <limit> lower = upper = " + std::to_string(u.lower) +
                " (the defaults when lower and upper are absent) is read "
                "as no position limit; declare a locked joint "
                "type=\"fixed\"";
            robot->notes.push_back(note);
            if (options.notes) *options.notes << "urdf: " << note << "\n";
          }
        }
        if (u.has_position_limits)
          system->SetJointLimits(ji,
                                 mb::JointLimits{{u.lower}, {u.upper}, 0.0});
        if (j.dynamics) u.damping = j.dynamics->damping;
        if (!(std::isfinite(u.damping) && u.damping >= 0.0))
          throw std::invalid_argument(at + "<dynamics damping> " +
                                      std::to_string(u.damping) +
                                      " must be finite and >= 0");
        if (u.damping > 0.0 && options.damping)
          dampers.emplace_back(ji, u.damping);
        if (j.mimic) {
          // A mimic joint follows its leader through a constraint; it is
          // not an input channel.
          u.mimic = j.mimic->joint_name;
          u.multiplier = j.mimic->multiplier;
          u.offset = j.mimic->offset;
          mimics.push_back({ji, j.name, u.mimic, u.multiplier, u.offset});
        } else {
          actuated.push_back({ji, j.name, u.effort});
        }
        by_name.emplace_back(j.name, ji);
        robot->joints.push_back(u);
      }
      Below(cl, child);
    }
  }
};

}  // namespace

std::string Robot::Describe() const {
  std::ostringstream os;
  os << "robot '" << name << "', root link '" << root << "' "
     << (floating_base
             ? "floating (a free joint '" + root + "': coordinates " + root +
                   "_x, _y, _z and " + "the quaternion " + root + ".w .. .z)"
             : std::string("fixed to the world"))
     << "; " << joints.size() << " joint coordinates";
  if (!fixed.empty()) os << ", " << fixed.size() << " fixed joints";
  if (!contacts.empty())
    os << ", " << contacts.size() << " ground contact points";
  if (!floating.empty()) os << ", " << floating.size() << " floating joints";
  os << ":\n";
  for (const UrdfJoint& j : joints) {
    os << "  " << j.name << " (" << j.type << ", " << j.parent << " -> "
       << j.child << ")";
    if (j.has_position_limits)
      os << " position in [" << j.lower << ", " << j.upper << "]";
    if (j.effort > 0.0) os << " |effort| <= " << j.effort;
    if (j.velocity > 0.0) os << " |velocity| <= " << j.velocity;
    if (j.damping > 0.0) os << " damping " << j.damping;
    if (!j.mimic.empty())
      os << " mimics " << j.mimic << " (x " << j.multiplier << " + " << j.offset
         << ", constraint mimic_" << j.name << ")";
    os << "\n";
  }
  if (!contacts.empty()) {
    os << "  ground contacts:";
    for (const std::string& c : contacts) os << " " << c;
    os << "\n";
  }
  return os.str();
}

Robot ImportString(const std::string& xml,
                   const std::string& origin,
                   ModelBuilder* builder,
                   const ImportOptions& options) {
  const std::string where = "URDF file '" + origin + "': ";
  // First the text and tinyxml2's reading of it (urdf_check.hpp): what
  // urdfdom would crash on, misreport or ignore, named with its line.
  const internal::UrdfCheck check = internal::CheckUrdf(xml, origin);
  if (options.notes)
    for (const std::string& n : check.notes)
      *options.notes << "urdf: " << n << "\n";
  ::urdf::ModelInterfaceSharedPtr model;
  std::string said;
  {
    const Collect collect;
    model = ::urdf::parseURDF(xml);
    said = collect.text();
  }
  if (!model)
    throw std::invalid_argument(where + "urdfdom cannot parse it" +
                                (said.empty() ? std::string() : ": " + said) +
                                " (" + kSupported + ")");
  const ::urdf::LinkConstSharedPtr root = model->getRoot();
  if (!root) throw std::invalid_argument(where + "it has no root link");
  Robot robot;
  robot.notes = check.notes;
  robot.name = model->getName();
  robot.root = root->name;
  mb::Multibody system(mb::Dimension::kSpatial);
  system.SetGravity(mb::PVec(0.0, 0.0, -options.gravity));
  Importer imp{where, options, &system, &robot, {}, {}, {}, {}};
  robot.floating_base = options.floating_base;
  if (options.floating_base) {
    // The root link is a body on a free joint named after it, from the
    // world frame W to the root's link frame.
    const mb::BodyIndex base =
        system.AddBody(root->name, LinkBody(*root, where));
    AddShapes(*root, base, &system);
    system.AddJoint(root->name, mb::Joint::Free(), system.world(),
                    system.BodyFrame(base));
    imp.Below(*root, base);
  } else {
    AddShapes(*root, system.ground(), &system);
    imp.Below(*root, system.ground());
  }
  if (robot.joints.empty() && robot.floating.empty() && !options.floating_base)
    throw std::invalid_argument(where +
                                "the robot has no revolute, continuous, "
                                "prismatic or floating joint and a fixed "
                                "base: nothing moves");
  for (const Importer::Actuated& a : imp.actuated) {
    // The URDF's effort limit bounds the torque (force) a run may ask for:
    // --param tau_<joint>=1e20 collapsed the step at t = 0 and hung; it is
    // now refused at the start, naming the bound.
    const ParamRange range = a.effort > 0.0 && std::isfinite(a.effort)
                                 ? ParamRange::Between(-a.effort, a.effort)
                                 : ParamRange();
    const Param tau = builder->Parameter("tau_" + a.name, 0.0, range);
    system.AddActuator(a.name, a.joint,
                       [tau](const auto& x) { return x.p[tau]; });
  }
  for (const auto& [joint, c] : imp.dampers) system.AddJointDamper(joint, c);
  // Mimic joints: q_joint = multiplier q_leader + offset, each a holonomic
  // constraint "mimic_<joint>" (declared once the coordinates are).
  std::vector<std::pair<int, int>> mimic_coords;
  for (const auto& m : imp.mimics) {
    const auto leader =
        std::find_if(imp.by_name.begin(), imp.by_name.end(),
                     [&](const auto& b) { return b.first == m.leader; });
    if (leader == imp.by_name.end())
      throw std::invalid_argument(
          where + "joint '" + m.name + "': <mimic joint=\"" + m.leader +
          "\"> names no revolute, continuous or prismatic joint of the robot");
    if (m.leader == m.name)
      throw std::invalid_argument(where + "joint '" + m.name +
                                  "' mimics itself");
    mimic_coords.emplace_back(system.Coordinate(m.joint),
                              system.Coordinate(leader->second));
  }
  if (options.ground) {
    const mb::GeometryIndex plane =
        system.AddGroundPlane("ground", options.ground_height);
    ContactLaw law;
    law.restitution = options.ground_restitution;
    law.mu_static = options.ground_mu;
    std::vector<std::string> skipped;
    try {
      robot.contacts = system.AddGroundContacts(plane, law, &skipped);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + "ground contacts: " + e.what());
    }
    if (!skipped.empty()) {
      std::string note = where +
                         "ground contacts: " + std::to_string(skipped.size()) +
                         " collision shapes are not spheres or boxes and "
                         "make no contact:";
      for (const std::string& k : skipped) note += " " + k + ";";
      robot.notes.push_back(note);
      if (options.notes) *options.notes << "urdf: " << note << "\n";
    }
    if (robot.contacts.empty())
      throw std::invalid_argument(
          where +
          "ground contacts asked for, but no link that moves has a "
          "<collision> sphere or box (the contact pairs supported: sphere "
          "and box corners against the ground plane)");
  }
  robot.kinematics = std::move(system).AddTo(builder, options.dynamics);
  for (size_t k = 0; k < imp.mimics.size(); ++k) {
    const int i = mimic_coords[k].first, l = mimic_coords[k].second;
    const double mult = imp.mimics[k].multiplier, off = imp.mimics[k].offset;
    const std::string name = "mimic_" + imp.mimics[k].name;
    builder->Holonomic(name, Touches{{std::min(i, l), std::max(i, l)}},
                       [i, l, mult, off](const auto& x) {
                         return x.q[i] - mult * x.q[l] - off;
                       });
    robot.mimics.push_back(name);
  }
  return robot;
}

Robot Import(const std::string& path,
             ModelBuilder* builder,
             const ImportOptions& options) {
  return ImportString(mb::internal::ReadModelFile(path, "URDF", "--model"),
                      path, builder, options);
}

}  // namespace daedalus::urdf
