// MJCF import (docs/models.md, "MJCF"): a MuJoCo model file becomes a
// multibody description (multibody.hpp) in a ModelBuilder, with MuJoCo's
// coordinates. Parsed with Debian's libtinyxml2-dev (library
// daedalus_mjcf); this header names none of its types.
//
// The mapping (MuJoCo 2.2.2's semantics and its documented conventions):
//  - <worldbody> is the ground; each <body> is a body whose frame is the
//    MJCF body frame; a body without joints is welded to its parent, a body
//    with several joints gets one massless intermediate body per joint but
//    the last ("<body>:<joint>"), composed in order about each joint's
//    anchor as MuJoCo does;
//  - coordinates are MuJoCo's qpos and velocities its qvel, in its order:
//    hinge and slide joints one coordinate named after the joint, equal to
//    qpos (a joint's `ref` is its qpos at the body's pose in the file);
//    ball joints a quaternion "<joint>.w .. .z" whose velocities
//    "<joint>.wx .. .wz" are the angular velocity in the child body's
//    frame; free joints "<joint>_x, _y, _z" (the body's position in the
//    world, velocities in the world) and a quaternion (angular velocity in
//    the body frame) -- MuJoCo's qvel exactly;
//  - inertia from <inertial> (diaginertia with an orientation, or
//    fullinertia), or from the geoms (compiler inertiafromgeom; sphere,
//    capsule, cylinder, box, ellipsoid with density or mass, fromto) as
//    MuJoCo computes it, but kept as the exact tensor instead of principal
//    axes found by iteration;
//  - joint damping, stiffness/springref and armature; <motor> actuators
//    with joint transmission as input channels (column gear, value the
//    parameter ctrl_<actuator>, its range the ctrlrange and forcerange);
//    <equality> connect (a point-coincidence closure), weld (coincidence
//    and three orientation rows) and joint (a polynomial coupling);
//    <option gravity>; <default> classes and childclass; <include>;
//  - joint ranges become joint limits (hard unilateral contacts,
//    restitution 0: docs/contact.md, "Joint limits"), geoms the
//    bodies' geometry (multibody.hpp, Geometry).
// What cannot be honoured is refused with the file, line and element
// (tendons, muscles and other actuators, fluid forces, frictionloss, ...);
// what has no effect on the motion here (contact parameters, solver
// settings, visuals, sensors) is listed once per kind in Model::notes.
#pragma once

#include <Eigen/Core>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"

namespace daedalus::mjcf {

/// A joint of the model, in qpos order.
struct MjcfJoint {
  std::string name;  ///< as in the file (unnamed: "<body>_joint[k]")
  std::string type;  ///< "hinge", "slide", "ball" or "free"
  std::string body;
  int qpos = -1;  ///< first coordinate (q)
  int qvel = -1;  ///< first velocity (v)
  bool limited = false;
  double lower = 0.0, upper = 0.0;  ///< range [rad or m]; ball: [0, max angle]
  double damping = 0.0, stiffness = 0.0, springref = 0.0, armature = 0.0;
  double ref = 0.0;   ///< qpos at the file's pose (hinge, slide)
  std::string where;  ///< "file:line"
};

/// A <motor> actuator: an input channel named `name` with column gear
/// (on the joint's velocities) and value the parameter `parameter`.
struct MjcfActuator {
  std::string name, joint, parameter;
  double gear = 1.0;
  double lower = -std::numeric_limits<double>::infinity();  ///< its range
  double upper = std::numeric_limits<double>::infinity();
};

struct ImportOptions {
  /// How M and h are evaluated (multibody.hpp).
  mb::DynamicsForm dynamics = mb::DynamicsForm::kEnergy;
  /// Gravity g_W [m/s^2] instead of <option gravity>.
  std::optional<Eigen::Vector3d> gravity = std::nullopt;
  /// Import without the actuators that cannot be honoured (<position>,
  /// <velocity>, <general>, non-joint transmissions, ...) instead of
  /// refusing the file; each is named in the notes.
  bool skip_unsupported_actuators = false;
  /// Ground contacts (docs/contact.md, "Contact geometry"), as the URDF
  /// importer's: a ground plane z = ground_height and a contact between it
  /// and every colliding sphere and box geom of a moving body (a box by its
  /// 8 corners), Newton's ground_restitution, Coulomb's ground_mu (0:
  /// frictionless). Other geoms make no contact (noted). @throws
  /// std::invalid_argument (from Import) when no sphere or box moves.
  bool ground = false;
  double ground_height = 0.0;
  double ground_restitution = 0.0;
  double ground_mu = 0.0;
  /// Where the notes are printed as they are found (one line each);
  /// nullptr: only kept in Model::notes.
  std::ostream* notes = nullptr;
};

/// What was imported.
struct Model {
  std::string name;  ///< <mujoco model>
  std::string file;
  std::vector<MjcfJoint> joints;
  std::vector<MjcfActuator> actuators;
  /// The equality constraints as the model's constraint names.
  std::vector<std::string> equalities;
  /// The ground contacts (ImportOptions::ground), one per contact point.
  std::vector<std::string> contacts;
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  /// <option timestep>: reported, not used (the integrators choose their
  /// steps from the tolerances).
  double timestep = 0.002;
  /// MuJoCo's qpos0 (nq): the start, every joint at the file's pose.
  Eigen::VectorXd qpos0;
  /// What the import left out or changed, one line per kind:
  /// "file:line: <element attribute>: why (and N more)".
  std::vector<std::string> notes;
  mb::Kinematics kinematics;
  /// A paragraph for --help and reports: joints, limits, actuators,
  /// equalities, gravity, timestep.
  std::string Describe() const;
};

/// Parses the MJCF file `path` (with its <include> files, read relative to
/// its folder) and declares the model in `builder`: coordinates,
/// parameters ctrl_<actuator>, energies, springs, dampers, armature,
/// inputs and the equality constraints.
/// @throws std::invalid_argument naming the file, line and element for a
/// file that cannot be read or parsed, an unknown element or attribute, a
/// value that is not a finite number, an include loop, what is not
/// supported (listed in the header comment), a body that moves without
/// mass, an inertia that is not positive definite, a hinge range beyond
/// +-2 pi in radian mode.
Model Import(const std::string& path,
             ModelBuilder* builder,
             const ImportOptions& options = {});

/// The same for a document held in memory; `origin` names it in messages
/// and its folder is where <include> files are read from.
Model ImportString(const std::string& xml,
                   const std::string& origin,
                   ModelBuilder* builder,
                   const ImportOptions& options = {});

}  // namespace daedalus::mjcf
