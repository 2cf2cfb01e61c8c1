// URDF import (docs/multibody.md, "URDF"): a robot description file becomes
// a multibody description (multibody.hpp) in a ModelBuilder. Parsed by
// Debian's liburdfdom-dev (urdfdom 3); this header names none of its types.
//
// The mapping:
//  - the root link is the ground (a fixed base: its frame is the world W,
//    z up, gravity -g e_z), or with ImportOptions::floating_base a body on
//    a free joint (multibody.hpp, Joint::Free) from W named after the root
//    link: coordinates <root>_x, _y, _z (position of the root's frame in
//    W, velocities their derivatives) and the quaternion <root>.w .. .z
//    (velocities <root>.wx .. .wz, the angular velocity in the root
//    frame), start at the identity; every other link is a body whose frame is
//    the link frame, with mass, centre of mass and inertia from <inertial> (the
//    inertia tensor, given about the centre of mass in the <inertial><origin>
//    frame, is rotated into the link frame);
//  - every joint connects a frame at <origin> on the parent link to the
//    child link's frame; revolute and continuous joints are
//    Joint::Revolute(axis), prismatic joints Joint::Prismatic(axis), fixed
//    joints Joint::Weld(), floating joints Joint::Free() (not actuated);
//    the coordinate is named after the joint;
//  - every revolute, continuous or prismatic joint is actuated: an input
//    channel named after the joint, with the constant value of the
//    parameter `tau_<joint>` (default 0) [N m or N];
//  - <dynamics damping> becomes a joint damper (friction is refused);
//  - <limit> lower/upper, effort and velocity are kept in UrdfJoint, and
//    lower/upper declared as the joint's limits (multibody.hpp,
//    JointLimits, restitution 0): two unilateral contacts per joint,
//    limit:<joint>:lower and limit:<joint>:upper, enforced by the
//    event-driven contact stage (docs/contact.md, "Joint limits");
//    --no-joint-limits (WithoutJointLimits) runs without them;
//  - <mimic joint multiplier offset> is the holonomic constraint
//    "mimic_<joint>": q_joint - multiplier q_leader - offset = 0 (the mimic
//    joint is then not an input channel);
//  - <visual> and <collision> shapes (box, cylinder, sphere, mesh) are the
//    links' geometry (multibody.hpp, Geometry), visual or collision; with
//    ImportOptions::ground the collision spheres and boxes are contacts
//    against a ground plane;
//  - the file is first read by tinyxml2 (element depth, names, numbers,
//    the tree), and the elements URDF does not define (<gazebo>,
//    <transmission>, unknown ones) are listed once per kind in
//    Robot::notes.
// Planar joints are refused with a message naming them. Models
// with a floating base or joint run in either dynamics form.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"

namespace daedalus::urdf {

/// A joint of the robot with a coordinate, in coordinate order.
struct UrdfJoint {
  std::string name;           ///< joint (and coordinate and input channel) name
  std::string type;           ///< "revolute", "continuous" or "prismatic"
  std::string parent, child;  ///< link names
  /// Position limits [rad or m]; has_position_limits false for continuous
  /// joints and joints without <limit>.
  bool has_position_limits = false;
  double lower = 0.0, upper = 0.0;
  double effort = 0.0;    ///< |u| bound [N m or N]; 0: none given
  double velocity = 0.0;  ///< |v| bound [rad/s or m/s]; 0: none given
  double damping = 0.0;   ///< viscous damping [N m s/rad or N s/m]
  int coordinate = -1;    ///< index in q
  int velocity_index =
      -1;  ///< index in v (q's index less 1 with a floating base)
  /// <mimic>: the joint this one follows, q = multiplier q_mimic + offset
  /// (the constraint "mimic_<name>"); empty when it moves freely.
  std::string mimic;
  double multiplier = 1.0, offset = 0.0;
};

struct ImportOptions {
  /// Magnitude of gravity along -z of the world [m/s^2].
  double gravity = 9.81;
  /// Declare joint dampers from <dynamics damping>.
  bool damping = true;
  /// The root link floats: a body on a free joint (6 velocities) instead
  /// of the ground.
  bool floating_base = false;
  /// How M and h are evaluated (multibody.hpp).
  mb::DynamicsForm dynamics = mb::DynamicsForm::kEnergy;
  /// Ground contacts (docs/contact.md, "Contact geometry"): a ground plane
  /// z = ground_height (normal +z) and a contact between it and every
  /// <collision> sphere and box of a moving link (Multibody::
  /// AddGroundContacts: a box by its 8 corners), event-driven, with
  /// Newton's ground_restitution in [0, 1] and Coulomb's ground_mu >= 0
  /// (0: frictionless; else the tangential rows <contact>:slip, static =
  /// kinetic). Other collision shapes (cylinders, meshes) are listed in
  /// Robot::notes. @throws std::invalid_argument (from Import) when no
  /// collision sphere or box moves.
  bool ground = false;
  double ground_height = 0.0;
  double ground_restitution = 0.0;
  double ground_mu = 0.0;
  /// Where the elements the import does not read are listed as they are
  /// found (once per kind); nullptr: only in Robot::notes.
  std::ostream* notes = nullptr;
};

/// What was imported.
struct Robot {
  std::string name;                   ///< <robot name>
  std::string root;                   ///< the root link (the ground)
  std::vector<UrdfJoint> joints;      ///< movable joints, coordinate order
  std::vector<std::string> fixed;     ///< fixed joints (welds)
  std::vector<std::string> floating;  ///< floating joints (free joints)
  bool floating_base = false;         ///< the root link is on a free joint
  /// The mimic constraints' names ("mimic_<joint>").
  std::vector<std::string> mimics;
  /// The ground contacts (ImportOptions::ground), one per contact point.
  std::vector<std::string> contacts;
  /// The elements the import did not read, one line per kind:
  /// "URDF file 'x', line 12: <gazebo> in <robot>: ... (and 3 more)".
  std::vector<std::string> notes;
  mb::Kinematics kinematics;
  /// One line per joint: name, type, limits, for --help and reports.
  std::string Describe() const;
};

/// Parses the URDF file `path` and declares its robot in `builder`
/// (coordinates, parameters tau_<joint>, energies, dampers, inputs).
/// @throws std::invalid_argument naming the file and the link or joint for
/// an unreadable file, a file urdfdom cannot parse (with its message), an
/// unsupported joint type (with the supported ones), a
/// negative or zero mass, an inertia that is not positive definite or
/// violates the triangle inequality.
Robot Import(const std::string& path,
             ModelBuilder* builder,
             const ImportOptions& options = {});

/// The same for a URDF document held in memory; `origin` names it in
/// messages.
Robot ImportString(const std::string& xml,
                   const std::string& origin,
                   ModelBuilder* builder,
                   const ImportOptions& options = {});

}  // namespace daedalus::urdf
