// The MJCF importer's stages (include/daedalus/mjcf.hpp): mjcf_parse.cpp
// reads the files (includes, default classes, every element with its file
// and line) into a Document; mjcf_inertia.cpp computes orientations and
// the bodies' inertias from geoms as MuJoCo does; mjcf_build.cpp turns the
// Document into a multibody description and a ModelBuilder's functions.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "daedalus/multibody.hpp"

namespace daedalus::mjcf::internal {

/// Where something was read: "file:line: <element>".
struct Where {
  std::string file;
  int line = 0;
  std::string element;
  /// "file:line: <element>: " (element with the attribute when given).
  std::string At(const std::string& attribute = "") const;
};

/// What the import leaves out or changes, kept once per kind with the
/// first place it was seen and a count.
class Notes {
 public:
  explicit Notes(std::ostream* echo) : echo_(echo) {}
  void Add(const std::string& key, const Where& where, const std::string& why);
  std::vector<std::string> Lines() const;

 private:
  struct Entry {
    std::string text;
    int count = 0;
  };
  std::vector<std::string> order_;
  std::map<std::string, Entry> entries_;
  std::ostream* echo_;
};

/// MuJoCo's <compiler> settings that change what is read.
struct Compiler {
  bool degree = true;  // angle="degree", MuJoCo's default
  std::string eulerseq = "xyz";
  bool autolimits = true;   // MuJoCo >= 2.3's default (2.2.2 refused instead)
  int inertiafromgeom = 2;  // 0 false, 1 true, 2 auto
  int group_lo = 0, group_hi = 5;
  double boundmass = 0.0, boundinertia = 0.0, settotalmass = -1.0;
  bool balanceinertia = false;
  bool discardvisual = false;
};

enum class JointKind { kHinge, kSlide, kBall, kFree };
const char* ToString(JointKind kind);

struct Geom {
  Where at;
  std::string name;
  mb::GeometryType type = mb::GeometryType::kSphere;
  Eigen::Vector3d size = Eigen::Vector3d::Zero();
  Eigen::Vector3d pos = Eigen::Vector3d::Zero();
  Eigen::Quaterniond quat = Eigen::Quaterniond::Identity();
  double mass = -1.0;  // < 0: not given (from density)
  double density = 1000.0;
  int group = 0;
  int contype = 1, conaffinity = 1;
  Eigen::Vector4d rgba = Eigen::Vector4d(0.5, 0.5, 0.5, 1.0);
  std::string mesh;  // mesh asset name (type mesh)
  bool hfield = false;
};

struct Joint {
  Where at;
  std::string name;
  JointKind kind = JointKind::kHinge;
  Eigen::Vector3d pos = Eigen::Vector3d::Zero();    // anchor in the body frame
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  // unit
  bool limited = false;
  double lower = 0.0, upper = 0.0;  // radians for hinge and ball
  double stiffness = 0.0, springref = 0.0, damping = 0.0, armature = 0.0;
  double ref = 0.0;
};

struct Inertial {
  Where at;
  double mass = 0.0;
  Eigen::Vector3d pos = Eigen::Vector3d::Zero();      // centre of mass in B
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // about it, in B
};

struct Body {
  Where at;
  std::string name;
  int parent = -1;
  Eigen::Vector3d pos = Eigen::Vector3d::Zero();  // in the parent's frame
  Eigen::Quaterniond quat = Eigen::Quaterniond::Identity();
  std::vector<Joint> joints;
  std::vector<Geom> geoms;
  std::optional<Inertial> inertial;
  std::vector<int> children;
  // Filled by the build: the pose in the world at qpos0.
  Eigen::Vector3d world_pos = Eigen::Vector3d::Zero();
  Eigen::Quaterniond world_quat = Eigen::Quaterniond::Identity();
};

struct Actuator {
  Where at;
  std::string name, kind, joint;  // kind: motor or general
  bool in_parent = false;         // jointinparent (the gear in the parent)
  Eigen::Matrix<double, 6, 1> gear = Eigen::Matrix<double, 6, 1>::Zero();
  double gain = 1.0;
  bool ctrllimited = false, forcelimited = false;
  double ctrl_lo = 0.0, ctrl_hi = 0.0, force_lo = 0.0, force_hi = 0.0;
};

struct Equality {
  Where at;
  std::string kind, name, obj1, obj2;  // kind: connect, weld, joint
  Eigen::Vector3d anchor = Eigen::Vector3d::Zero();
  bool relpose_given = false;
  Eigen::Vector3d rel_pos = Eigen::Vector3d::Zero();
  Eigen::Quaterniond rel_quat = Eigen::Quaterniond::Identity();
  double polycoef[5] = {0.0, 1.0, 0.0, 0.0, 0.0};
};

/// A whole model as read, bodies[0] the world.
struct Document {
  std::string model_name, file;
  Compiler compiler;
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  double timestep = 0.002;
  bool passive = true, equality = true, actuation = true;
  std::vector<Body> bodies;
  std::vector<Actuator> actuators;
  std::vector<Equality> equalities;
  // <mesh> assets: name -> (file, scale).
  std::map<std::string, std::pair<std::string, Eigen::Vector3d>> meshes;
  // <material> assets: name -> rgba.
  std::map<std::string, Eigen::Vector4d> materials;
};

/// Reads the MJCF text `xml` named `origin` and its includes into a
/// Document. @throws std::invalid_argument naming file, line and element.
Document Parse(const std::string& xml,
               const std::string& origin,
               bool skip_unsupported_actuators,
               Notes* notes);

// ---- mjcf_inertia.cpp

/// MuJoCo's mjuu_z2quat: the minimal rotation taking z to `vec` (not
/// normalized), or 180 degrees about x when vec is along -z.
Eigen::Quaterniond ZToVector(const Eigen::Vector3d& vec);
/// The rotation of MuJoCo's `euler` attribute for the sequence `seq`
/// (lower case: moving axes, upper case: fixed axes), angles in radians.
Eigen::Quaterniond EulerRotation(const Eigen::Vector3d& angles,
                                 const std::string& seq);
/// A geom's volume and its inertia about its centre, diagonal in its own
/// frame, for mass `m` (MuJoCo's mjCGeom::GetVolume and SetInertia).
double GeomVolume(const Geom& g);
Eigen::Vector3d GeomDiagonalInertia(const Geom& g, double m);
/// The mass, centre of mass (in B) and inertia about it (in B) of a body's
/// geoms in the compiler's inertiagrouprange (MuJoCo's GeomFrame), as one
/// exact tensor; nullopt when the body has no such geom.
/// @throws std::invalid_argument for a mesh or height field that would
/// contribute (their inertia needs the mesh), naming the geom.
std::optional<Inertial> InertiaFromGeoms(const Body& body,
                                         const Compiler& compiler,
                                         Notes* notes);

}  // namespace daedalus::mjcf::internal
