// URDF import with urdfdom (include/daedalus/urdf.hpp).
#include "daedalus/urdf.hpp"

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

struct Importer {
  const std::string where;  // "URDF file 'x': "
  const ImportOptions& options;
  mb::Multibody* system;
  Robot* robot;
  std::vector<std::pair<mb::JointIndex, std::string>> actuated;
  std::vector<std::pair<mb::JointIndex, double>> dampers;

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
      if (j.mimic)
        throw std::invalid_argument(
            at +
            "mimic joints are not supported (a mimic joint is a "
            "constraint between coordinates; declare it as a holonomic "
            "constraint of the model instead)");
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
        }
        if (j.dynamics) u.damping = j.dynamics->damping;
        if (!(std::isfinite(u.damping) && u.damping >= 0.0))
          throw std::invalid_argument(at + "<dynamics damping> " +
                                      std::to_string(u.damping) +
                                      " must be finite and >= 0");
        if (u.damping > 0.0 && options.damping)
          dampers.emplace_back(ji, u.damping);
        actuated.emplace_back(ji, j.name);
        robot->joints.push_back(u);
      }
      Below(cl, child);
    }
  }
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::invalid_argument("URDF file '" + path +
                                "' cannot be read; check the path given to "
                                "--model");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
    os << "\n";
  }
  return os.str();
}

Robot ImportString(const std::string& xml,
                   const std::string& origin,
                   ModelBuilder* builder,
                   const ImportOptions& options) {
  const std::string where = "URDF file '" + origin + "': ";
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
  robot.name = model->getName();
  robot.root = root->name;
  mb::Multibody system(mb::Dimension::kSpatial);
  system.SetGravity(mb::PVec(0.0, 0.0, -options.gravity));
  Importer imp{where, options, &system, &robot, {}, {}};
  robot.floating_base = options.floating_base;
  if (options.floating_base) {
    // The root link is a body on a free joint named after it, from the
    // world frame W to the root's link frame.
    const mb::BodyIndex base =
        system.AddBody(root->name, LinkBody(*root, where));
    system.AddJoint(root->name, mb::Joint::Free(), system.world(),
                    system.BodyFrame(base));
    imp.Below(*root, base);
  } else {
    imp.Below(*root, system.ground());
  }
  if (robot.joints.empty() && robot.floating.empty() && !options.floating_base)
    throw std::invalid_argument(where +
                                "the robot has no revolute, continuous, "
                                "prismatic or floating joint and a fixed "
                                "base: nothing moves");
  for (const auto& [joint, name] : imp.actuated) {
    const Param tau = builder->Parameter("tau_" + name, 0.0);
    system.AddActuator(name, joint, [tau](const auto& x) { return x.p[tau]; });
  }
  for (const auto& [joint, c] : imp.dampers) system.AddJointDamper(joint, c);
  robot.kinematics = std::move(system).AddTo(builder, options.dynamics);
  return robot;
}

Robot Import(const std::string& path,
             ModelBuilder* builder,
             const ImportOptions& options) {
  return ImportString(ReadFile(path), path, builder, options);
}

}  // namespace daedalus::urdf
