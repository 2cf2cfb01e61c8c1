// A multibody description that compiles into the same Model a problem
// author would write by hand (docs/multibody.md).
//
// Bodies (mass, centre of mass, inertia about the centre of mass), frames
// (markers) fixed on bodies, a tree of joints from the ground outwards with
// one generalized coordinate per joint degree of freedom (q' = v), except
// that ball and free joints carry a unit quaternion (4 coordinates, 3
// velocities: the body-frame angular velocity, ModelBuilder::Quaternion),
// gravity, joint springs and dampers, point spring-dampers, applied forces,
// joint actuators as named input channels, prescribed joint motion as
// moving constraints and loop closures as named holonomic constraints.
// `AddTo` generates the templated kinetic-energy, potential-energy, force
// and constraint functions of a ModelBuilder, one energy term per body with
// the coordinates it touches declared, so M, h, J, the acceleration bias and
// every derivative come from the library's automatic differentiation
// unchanged. Frame notation: p_WF is the position of frame F's origin in
// the world W, R_WF its orientation, w_WF its angular velocity, v_WF the
// velocity of its origin; all expressed in W.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/model.hpp"

namespace daedalus::mb {

/// A quantity that depends on the model's parameters: a constant, a
/// parameter, or arithmetic of them (`PExpr(m) * l * l / 12.0`). Evaluated
/// at whatever scalar type the library differentiates with, so parameter
/// sensitivities see through it.
class PExpr {
 public:
  PExpr() : PExpr(0.0) {}
  PExpr(double constant);  // NOLINT(google-explicit-constructor)
  PExpr(Param parameter);  // NOLINT(google-explicit-constructor)

  /// The value for the parameter vector p (np).
  template <class S>
  S Eval(const VecX<S>& p) const {
    return EvalNode<S>(*node_, p);
  }
  /// True when the value is the constant 0 (such terms are left out).
  bool IsZero() const;
  /// True when the value is a constant (no parameter).
  bool IsConstant() const;
  /// The constant value. @pre IsConstant().
  double constant() const;
  /// The value at parameters p (np), for validation and messages.
  double Value(const Eigen::VectorXd& p) const { return Eval<double>(p); }

  enum class Op { kConst, kParam, kAdd, kSub, kMul, kDiv, kNeg, kSqrt };
  struct Node {
    Op op = Op::kConst;
    double value = 0.0;
    Eigen::Index param = -1;
    std::shared_ptr<const Node> a, b;
  };
  static PExpr Make(Op op, const PExpr& a, const PExpr& b = PExpr());

 private:
  template <class S>
  static S EvalNode(const Node& n, const VecX<S>& p) {
    using std::sqrt;
    switch (n.op) {
      case Op::kConst:
        return S(n.value);
      case Op::kParam:
        return p[n.param];
      case Op::kAdd:
        return EvalNode<S>(*n.a, p) + EvalNode<S>(*n.b, p);
      case Op::kSub:
        return EvalNode<S>(*n.a, p) - EvalNode<S>(*n.b, p);
      case Op::kMul:
        return EvalNode<S>(*n.a, p) * EvalNode<S>(*n.b, p);
      case Op::kDiv:
        return EvalNode<S>(*n.a, p) / EvalNode<S>(*n.b, p);
      case Op::kNeg:
        return -EvalNode<S>(*n.a, p);
      case Op::kSqrt:
        return sqrt(EvalNode<S>(*n.a, p));
    }
    return S(0.0);
  }
  std::shared_ptr<const Node> node_;
};

PExpr operator+(const PExpr& a, const PExpr& b);
PExpr operator-(const PExpr& a, const PExpr& b);
PExpr operator*(const PExpr& a, const PExpr& b);
PExpr operator/(const PExpr& a, const PExpr& b);
PExpr operator-(const PExpr& a);
PExpr sqrt(const PExpr& a);

/// A vector of parameter expressions (x, y, z). Planar systems use x, y.
struct PVec {
  PExpr x, y, z;
  PVec() = default;
  PVec(PExpr x_in, PExpr y_in, PExpr z_in = PExpr())
      : x(std::move(x_in)), y(std::move(y_in)), z(std::move(z_in)) {}
  bool IsZero() const { return x.IsZero() && y.IsZero() && z.IsZero(); }
};

/// Whether every body moves in the world's x-y plane (rotations about z)
/// or in space.
enum class Dimension { kPlanar, kSpatial };

/// The inertia of a body: mass, centre of mass C in the body frame B, and
/// the inertia tensor about C expressed in B. A planar body uses only
/// `izz`, the moment of inertia about the axis through C normal to the
/// plane. Masses and inertias may be zero (an idealized massless or
/// point-like body) as long as the mass matrix stays positive definite.
struct BodySpec {
  PExpr mass;
  PVec com;
  PExpr ixx, iyy, izz, ixy, ixz, iyz;
};
/// A planar body: mass m [kg], centre of mass p_BC [m], inertia about C [kg
/// m^2].
BodySpec PlanarBody(PExpr mass, PVec com, PExpr izz);
/// A spatial body: mass, centre of mass p_BC and the symmetric inertia
/// tensor about C in B, given by its six entries.
BodySpec SpatialBody(PExpr mass,
                     PVec com,
                     PExpr ixx,
                     PExpr iyy,
                     PExpr izz,
                     PExpr ixy = PExpr(),
                     PExpr ixz = PExpr(),
                     PExpr iyz = PExpr());

/// Kind of a joint between a frame F on the parent body and a frame M on
/// the child body; at q = 0 (quaternions at the identity, w = 1), F and M
/// coincide.
enum class JointType {
  kRevolute,
  kPrismatic,
  kPlanar,
  kUniversal,
  kWeld,
  kBall,
  kFree
};
const char* ToString(JointType type);

/// A joint and its coordinates (docs/multibody.md, "Joints"):
///  - Revolute(a): R_FM = rotation by q about the unit axis a (in F); in a
///    planar system the axis is z. Coordinate `<joint>_angle` [rad].
///  - AbsoluteRevolute(): planar only; the coordinate is the angle of M in
///    the world, not relative to F (absolute angles, as in hand-derived
///    planar linkages); M's origin is F's origin.
///  - Prismatic(a): p_FM = q a, a a unit axis in F. `<joint>_position` [m].
///  - Planar(): p_FM = (x, y, 0) in F, R_FM = rotation by th about F's z.
///    `<joint>_x`, `<joint>_y`, `<joint>_angle`.
///  - Universal(a1, a2): R_FM = Rot(a1, q1) Rot(a2, q2), spatial only.
///    `<joint>_angle1`, `<joint>_angle2`.
///  - Weld(): no coordinate; M fixed at F.
///  - Ball(): spatial only; p_FM = 0 and R_FM the rotation of a unit
///    quaternion (ModelBuilder::Quaternion): coordinates `<joint>.w`,
///    `<joint>.x`, `<joint>.y`, `<joint>.z` (identity: w = 1) and three
///    velocities `<joint>.wx`, `<joint>.wy`, `<joint>.wz`, the angular
///    velocity of M relative to F expressed in M [rad/s] (not coordinate
///    derivatives: q' = q (x) (0, w) / 2). Names: one, the quaternion's.
///  - Free(): spatial only (a floating base, six degrees of freedom):
///    p_FM = (x, y, z) in F, coordinates `<joint>_x`, `<joint>_y`,
///    `<joint>_z` [m] whose velocities are their time derivatives (the
///    velocity of M's origin relative to F, in F), then a quaternion as for
///    Ball (`<joint>.w .. .z`, velocities `<joint>.wx .. .wz`, angular
///    velocity of M relative to F in M): nq = 7, nv = 6. Unlike
///    Pinocchio's and Featherstone's free-flyer, whose linear velocity is
///    expressed in M (p_FM' = R_FM v), the linear velocity here is in F.
///    Names: four, x, y, z and the quaternion's.
struct Joint {
  JointType type = JointType::kWeld;
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d axis2 = Eigen::Vector3d::UnitY();
  bool absolute = false;
  /// Coordinate names instead of the defaults above (one per coordinate).
  std::vector<std::string> names = {};

  static Joint Revolute(const Eigen::Vector3d& axis = Eigen::Vector3d::UnitZ());
  static Joint AbsoluteRevolute();
  static Joint Prismatic(
      const Eigen::Vector3d& axis = Eigen::Vector3d::UnitX());
  static Joint Planar();
  static Joint Universal(
      const Eigen::Vector3d& axis1 = Eigen::Vector3d::UnitX(),
      const Eigen::Vector3d& axis2 = Eigen::Vector3d::UnitY());
  static Joint Weld();
  static Joint Ball();
  static Joint Free();
  /// The same joint with its coordinates named `names` (one per scalar
  /// coordinate, one per quaternion: Ball 1, Free 4).
  Joint Named(std::vector<std::string> coordinate_names) const;
  /// Number of coordinates nq (0 to 3; Ball 4, Free 7).
  int num_coordinates() const;
  /// Number of velocities nv (= nq except Ball 3, Free 6).
  int num_velocities() const;
  /// Number of names Named() takes.
  int num_names() const;
  /// True for the joints with a quaternion (Ball, Free).
  bool has_quaternion() const {
    return type == JointType::kBall || type == JointType::kFree;
  }
};

/// Position limits of a joint's scalar coordinates (docs/multibody.md,
/// "Joint limits and geometry"): `lower[k] <= q_k <= upper[k]` for the
/// joint's coordinate k (one entry per scalar coordinate; a free joint's
/// three translations), -inf or +inf where a side is unbounded, and the
/// coefficient of restitution of an impact on a limit (0: plastic).
/// AddTo declares each finite bound as a unilateral constraint with a
/// ContactLaw (restitution, ContactLaw::joint the joint's name), a gap
/// `limit:<joint>:lower` = q_k - lower[k] >= 0 and `limit:<joint>:upper` =
/// upper[k] - q_k >= 0 (`limit:<coordinate>:...` on a joint with several
/// limited coordinates): event-driven contacts, open while the joint is
/// inside its range (docs/contact.md, "Joint limits"). They are also
/// reported (Kinematics::tree(), MechanismJson). `--no-joint-limits`
/// (WithoutJointLimits) removes them from the model.
struct JointLimits {
  std::vector<double> lower, upper;
  double restitution = 0.0;
};

/// Shapes of geometry attached to bodies (MuJoCo's conventions).
enum class GeometryType {
  kSphere,
  kCapsule,
  kCylinder,
  kBox,
  kEllipsoid,
  kPlane,
  kMesh
};
/// "sphere", "capsule", "cylinder", "box", "ellipsoid", "plane", "mesh".
const char* ToString(GeometryType type);
/// The number of entries of Geometry::size a shape uses (1, 2 or 3).
int GeometrySizeCount(GeometryType type);

/// A shape G fixed on a body B, for drawing and for collision (the
/// description records it; it changes no dynamics until a contact names it,
/// Multibody::AddContact). `size` in MuJoCo's
/// conventions, in metres: sphere [r]; capsule and cylinder [r,
/// half-length] along G's z axis; box [hx, hy, hz] (half sizes);
/// ellipsoid [rx, ry, rz]; plane [half x, half y, grid spacing] (0: infinite
/// along that side); mesh [sx, sy, sz], the scale of the mesh file `mesh`.
struct Geometry {
  std::string name;
  GeometryType type = GeometryType::kSphere;
  Eigen::Vector3d size = Eigen::Vector3d::Zero();
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  ///< p_BG in B
  /// R_BG as a unit quaternion (w, x, y, z).
  Eigen::Vector4d quaternion = Eigen::Vector4d(1.0, 0.0, 0.0, 0.0);
  Eigen::Vector4d rgba = Eigen::Vector4d(0.5, 0.5, 0.5, 1.0);
  bool collision = false;  ///< a collision shape
  bool visual = true;      ///< drawn
  std::string mesh = {};   ///< the mesh file (kMesh)
};

/// Handles returned by the Multibody declarations.
struct BodyIndex {
  int value = -1;
};
struct FrameIndex {
  int value = -1;
};
struct JointIndex {
  int value = -1;
};
struct GeometryIndex {
  int value = -1;
};

/// The rotation by `angle` [rad] about z (frame offsets in planar systems).
Eigen::Matrix3d RotationZ(double angle);

namespace internal {

struct MbBody {
  std::string name;
  BodySpec spec;
  int frame = 0;            // the body frame B
  int joint = -1;           // inboard joint; -1 for the ground
  std::vector<int> path;    // joints from the ground to this body
  std::vector<int> coords;  // coordinates of those joints, sorted (q)
  std::vector<int> vels;    // their velocities, sorted (v)
};
struct MbFrame {
  std::string name;
  int body = 0;
  PVec position;                                           // p_BF in B
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();  // R_BF
  double angle = 0.0;    // planar: the angle of R_BF
  bool rotated = false;  // R_BF is not the identity
};
struct MbJoint {
  std::string name;
  Joint spec;
  int parent_frame = -1, child_frame = -1;
  int parent_body = -1, child_body = -1;
  int first = 0;  // first coordinate (q)
  int nq = 0;
  int vfirst = 0;  // first velocity (v)
  int nv = 0;
};
struct MbSpring {  // joint spring V = k (q_i - rest)^2 / 2
  int coord;       // q index
  PExpr k, rest;
};
struct MbDamper {  // joint damper, D_ii += c
  int coord;       // v index
  PExpr c;
};
struct MbSpringDamper {  // between the origins of two frames
  std::string name;
  int a, b;
  PExpr k, rest, c;
};
struct MbForce {  // a force f_W at a frame's origin, or a torque on its body
  std::string name;
  int frame;
  PVec force;  // world components
  bool torque = false;
};
enum class ClosureType {
  kCoincident,
  kDistance,
  kPointOnLine,
  kPointOnPlane,
  kRelativeAngle,
  kConstantAngle
};
struct MbClosure {
  std::string name;
  ClosureType type;
  int a, b;     // frames; for line/plane: a is the point, b the line/plane
  PExpr value;  // distance, angle, or cos(angle) for kConstantAngle
  // Directions in b's frame: the line's normals or the plane's normal;
  // kConstantAngle: the axis on a (in a's frame), then the axis on b.
  std::vector<Eigen::Vector3d> normals;
  int rows = 1;
};
struct MbActuator {
  std::string name;
  int coord;  // v index
  daedalus::internal::ScalarFn value;
};
struct MbPrescribed {
  std::string name;
  int coord;  // q index
  daedalus::internal::ScalarFn motion;
};

struct MbLimits {  // position limits of a joint's scalar coordinates
  int joint;
  JointLimits limits;
};
struct MbGeometry {  // a shape on a body
  int body;
  Geometry geometry;
};
// One contact point between two shapes (Multibody::AddContact): side A is
// a point of frame `frame_a` (its origin moved by `offset_a`, in the
// frame) with a radius (a sphere's centre, a box corner, a frame's
// origin); side B a plane (origin `offset_b`, unit normal and tangents in
// frame_b) or a sphere (centre `offset_b`, `radius_b`).
struct MbContact {
  std::string name;      // the gap constraint
  std::string friction;  // the tangential-velocity constraint, or empty
  int frame_a = 0, frame_b = 0;
  Eigen::Vector3d offset_a = Eigen::Vector3d::Zero();
  Eigen::Vector3d offset_b = Eigen::Vector3d::Zero();
  double radius_a = 0.0, radius_b = 0.0;
  bool plane = true;
  Eigen::Vector3d normal_b = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d tangent1_b = Eigen::Vector3d::UnitX();
  Eigen::Vector3d tangent2_b = Eigen::Vector3d::UnitY();
  ContactLaw law;
};
struct MbArmature {  // a rotor inertia on one velocity, T += a v_k^2 / 2
  int joint;
  int vel;  // v index
  PExpr value;
};

/// The frozen description shared by the generated functions.
struct MbTree {
  Dimension dim = Dimension::kPlanar;
  std::vector<MbBody> bodies;  // bodies[0] is the ground
  std::vector<MbFrame> frames;
  std::vector<MbJoint> joints;
  PVec gravity;
  std::vector<MbSpring> springs;
  std::vector<MbDamper> dampers;
  std::vector<MbSpringDamper> spring_dampers;
  std::vector<MbForce> forces;
  std::vector<MbClosure> closures;
  std::vector<MbActuator> actuators;
  std::vector<MbPrescribed> prescribed;
  std::vector<MbArmature> armatures;
  std::vector<MbLimits> limits;
  std::vector<MbGeometry> geometries;
  std::vector<MbContact> contacts;
  std::vector<std::string> coordinate_names;  // nq
  std::vector<std::string> velocity_names;    // nv
  // The quaternions: index in q of each one's "w" and its name.
  std::vector<std::pair<int, std::string>> quaternions;
  int nq = 0;
  int nv = 0;
};

}  // namespace internal

class Kinematics;  // multibody_kinematics.hpp

/// How a model built from a description gets M and h (docs/multibody.md):
///  - kEnergy: automatic differentiation of the per-body kinetic and
///    potential energies (any description);
///  - kRecursive: the tree's recursive algorithms (multibody_dynamics.hpp:
///    CRBA for M, RNEA for the Coriolis, centrifugal and gravity forces),
///    plus the springs' forces; every joint type, ball and free included.
///  - kAuto: kRecursive for a description with ball or free joints (the
///    energy form of a model with quaternions runs on dual numbers, not on
///    compiled programs) or with kAutoRecursiveVelocities velocities or
///    more, kEnergy otherwise (docs/performance.md, "Multibody models:
///    build and compile time": the recursive form is 8x cheaper per
///    evaluation than the compiled energy form at 12 links and 15x at 24).
/// Both give the same M and h to round-off; the energies still give the
/// reported energy.
enum class DynamicsForm { kEnergy, kRecursive, kAuto };
inline constexpr int kAutoRecursiveVelocities = 12;
const char* ToString(DynamicsForm form);
/// "energy", "recursive" or "auto". @throws std::invalid_argument naming
/// the valid names.
DynamicsForm DynamicsFormFromString(const std::string& name);

/// A multibody system being declared. Bodies and frames first, then the
/// joints from the ground outwards (a joint's parent body must already be
/// connected), then forces and closures; `AddTo` compiles it into a
/// ModelBuilder.
class Multibody {
 public:
  explicit Multibody(Dimension dim);

  Dimension dimension() const { return tree_->dim; }
  /// The ground (world) body and its frame W.
  BodyIndex ground() const { return {0}; }
  FrameIndex world() const { return {0}; }

  /// Adds a body; its body frame B is also a frame named `name`.
  /// @throws std::invalid_argument for a duplicate name, a constant
  /// negative mass or inertia, or a spatial inertia in a planar system.
  BodyIndex AddBody(const std::string& name, const BodySpec& spec);
  /// The body frame B of `body`.
  FrameIndex BodyFrame(BodyIndex body) const;
  /// A frame (marker) F fixed on `body` at p_BF with orientation R_BF (a
  /// rotation about z in planar systems: RotationZ).
  FrameIndex AddFrame(
      const std::string& name,
      BodyIndex body,
      PVec position,
      const Eigen::Matrix3d& rotation = Eigen::Matrix3d::Identity());

  /// Connects the body of frame `child` (M) to the body of frame `parent`
  /// (F). The child body must not have a joint yet and the parent must be
  /// the ground or an already connected body: the joints form a tree and
  /// their coordinates are numbered in declaration order.
  JointIndex AddJoint(const std::string& name,
                      const Joint& joint,
                      FrameIndex parent,
                      FrameIndex child);
  /// Index of coordinate `k` of `joint` in q.
  int Coordinate(JointIndex joint, int k = 0) const;
  /// Index of velocity `k` of `joint` in v (the index in q less one per
  /// quaternion declared before it; a ball's velocities are its angular
  /// velocity components, a free joint's the translations then those).
  int Velocity(JointIndex joint, int k = 0) const;

  /// Uniform gravity g_W [m/s^2] acting on every body's centre of mass.
  void SetGravity(PVec g);
  /// A linear spring on coordinate `k` of `joint`: V = stiffness (q_k -
  /// rest)^2 / 2. Not on a quaternion's coordinates (refused).
  void AddJointSpring(JointIndex joint,
                      PExpr stiffness,
                      PExpr rest = PExpr(),
                      int k = 0);
  /// A viscous damper on velocity `k` of `joint`: the generalized force
  /// -c v_k enters the model's damping D (reported as damping loss). On a
  /// ball's angular velocity it is the body-frame torque -c w_k.
  void AddJointDamper(JointIndex joint, PExpr c, int k = 0);
  /// A rotor inertia (MuJoCo's armature) on velocity `k` of `joint`: the
  /// kinetic energy gains armature v_k^2 / 2 and M its diagonal entry
  /// (k, k), without gyroscopic coupling (the reflected inertia of a
  /// geared motor). On the recursive form it is added to CRBA's M, and the
  /// O(nv) forward route is not used (multibody_dynamics.hpp's algorithms
  /// are those of the rigid bodies).
  void AddJointArmature(JointIndex joint, PExpr armature, int k = 0);
  /// Declares the position limits of `joint` (JointLimits: one lower and
  /// one upper bound per scalar coordinate, lower <= upper, restitution in
  /// [0, 1]), enforced as contacts (JointLimits). Refused on a ball joint
  /// and on a weld, and for lower >= upper (equal bounds lock the joint:
  /// use Joint::Weld()) or NaN, naming the joint.
  void SetJointLimits(JointIndex joint, JointLimits limits);
  /// Attaches the shape `geometry` to `body` (the ground included).
  /// @throws std::invalid_argument for a size that is not positive and
  /// finite where the shape uses it, or a quaternion that is not of unit
  /// norm.
  GeometryIndex AddGeometry(BodyIndex body, Geometry geometry);
  /// The geometry named `name`. @throws std::invalid_argument when there
  /// is none or several (listing the names).
  GeometryIndex FindGeometry(const std::string& name) const;

  /// Contact between shapes (docs/contact.md, "Contact geometry"): each
  /// contact point is a unilateral gap constraint (its exact signed
  /// distance, a function of q) with the ContactLaw `law` (Newton's
  /// restitution, or restitution_parameter), event-driven by the contact
  /// stage; with mu_static > 0 (or mu_static_parameter) also Coulomb
  /// friction: the tangential-velocity constraint `<contact>:slip` (2 rows
  /// along the plane's x and y axes in space, 1 row in a planar system)
  /// named by law.friction. Supported pairs, either order: sphere-plane
  /// (`name`), box-plane (one contact per box corner, `name:+x+y-z` with
  /// the corner's signs in the box's frame; 8 corners in space, 4 in a
  /// planar system), sphere-sphere (`name`). A plane's normal is its z
  /// axis in space and its y axis in a planar system (a line of the
  /// plane); a sphere in a planar system is a disk of the plane.
  /// @throws std::invalid_argument naming the contact and both shapes for
  /// another pair (listing the supported ones), two shapes on one body, a
  /// law whose restitution lies outside [0, 1] or whose mu is negative,
  /// law.friction or law.joint set (AddContact fills them), a planar
  /// geometry rotated out of the plane. Returns the contacts' names.
  std::vector<std::string> AddContact(const std::string& name,
                                      GeometryIndex a,
                                      GeometryIndex b,
                                      const ContactLaw& law = {});
  /// A point contact: the origin of `point` against the plane `plane`.
  std::vector<std::string> AddContact(const std::string& name,
                                      FrameIndex point,
                                      GeometryIndex plane,
                                      const ContactLaw& law = {});
  /// The ground plane: a plane geometry `name` on the ground at `height`
  /// [m] whose normal points up, +z in space (the plane z = height), +y in
  /// a planar system (the line y = height).
  GeometryIndex AddGroundPlane(const std::string& name = "ground",
                               double height = 0.0);
  /// Contacts between `plane` and every collision sphere and box
  /// (Geometry::collision) on a body that moves, each named
  /// `<geometry>:<plane>` (AddContact). The collision shapes of other
  /// kinds are left out and listed in `*skipped` (when not null). Returns
  /// the contacts' names.
  std::vector<std::string> AddGroundContacts(
      GeometryIndex plane,
      const ContactLaw& law,
      std::vector<std::string>* skipped = nullptr);
  /// A spring-damper between the origins of frames a and b, length l =
  /// |p_WB - p_WA|: V = k (l - rest)^2 / 2, and a dashpot force -c l' along
  /// the line (damping D += c (dl/dq)(dl/dq)').
  void AddSpringDamper(const std::string& name,
                       FrameIndex a,
                       FrameIndex b,
                       PExpr k,
                       PExpr rest,
                       PExpr c = PExpr());
  /// A force f_W (world components, constant or parametric) applied at the
  /// origin of `frame`: the generalized load J_p' f_W (other loads Q_r).
  void AddForce(const std::string& name, FrameIndex frame, PVec force);
  /// A torque t_W (world components) on the body of `frame`: the
  /// generalized load J_w' t_W (other loads Q_r). Planar systems: (0, 0,
  /// t_z).
  void AddTorque(const std::string& name, FrameIndex frame, PVec torque);
  /// A joint actuator: named input channel `name` acting on velocity `k`
  /// of `joint` (column e_k of B; on a ball's angular velocity a torque
  /// about M's axis k), with the value u(t, q, v, p) given as a
  /// generic lambda of a Point like any model function.
  template <class F>
  void AddActuator(const std::string& name,
                   JointIndex joint,
                   F value,
                   int k = 0) {
    AddActuatorFn(name, joint, k, daedalus::internal::MakeScalarFn(value));
  }
  /// Prescribed motion of coordinate `k` of `joint`: the moving constraint
  /// `name`, q_k - s(t, p) = 0, with s a generic lambda of a Point (it may
  /// read x.t and x.p only). Its multiplier is the driving force or torque.
  /// Not on a quaternion's coordinates (refused).
  template <class F>
  void Prescribe(const std::string& name, JointIndex joint, F s, int k = 0) {
    AddPrescribedFn(name, joint, k, daedalus::internal::MakeScalarFn3(s));
  }

  /// Loop closures: named holonomic constraints (docs/multibody.md).
  /// Point coincidence, Phi = p_WB - p_WA: 2 rows (planar) or 3 rows.
  void AddCoincidence(const std::string& name, FrameIndex a, FrameIndex b);
  /// Distance, Phi = |p_WB - p_WA| - d [m] (its multiplier is the tension).
  void AddDistance(const std::string& name,
                   FrameIndex a,
                   FrameIndex b,
                   PExpr d);
  /// The origin of `point` on the line through the origin of `line` along
  /// the direction `dir` (in line's frame): Phi = n_W . (p_WP - p_WL) for
  /// the normals n of the line, 1 row (planar) or 2 rows (spatial).
  void AddPointOnLine(const std::string& name,
                      FrameIndex point,
                      FrameIndex line,
                      const Eigen::Vector3d& dir);
  /// The origin of `point` on the plane through the origin of `plane` with
  /// normal `normal` (in plane's frame): Phi = n_W . (p_WP - p_WS), 1 row.
  /// Spatial systems only.
  void AddPointOnPlane(const std::string& name,
                       FrameIndex point,
                       FrameIndex plane,
                       const Eigen::Vector3d& normal);
  /// Planar systems: the angle of b relative to a is `angle`, Phi = th_WB -
  /// th_WA - angle [rad] (the multiplier is the torque).
  void AddRelativeAngle(const std::string& name,
                        FrameIndex a,
                        FrameIndex b,
                        PExpr angle = PExpr());
  /// The angle between the unit axis `axis_a` fixed in frame a and
  /// `axis_b` fixed in frame b stays `angle` [rad] (Simbody's constant
  /// angle): Phi = (R_WA axis_a) . (R_WB axis_b) - cos(angle), 1 row. Its
  /// gradient vanishes at angle 0 or pi; use it with axes kept
  /// perpendicular (angle pi/2) and the relative angle as a coordinate.
  void AddConstantAngle(const std::string& name,
                        FrameIndex a,
                        const Eigen::Vector3d& axis_a,
                        FrameIndex b,
                        const Eigen::Vector3d& axis_b,
                        double angle);

  /// Declares the coordinates, energies (one kinetic and one gravity term
  /// per body, one term per spring, each with the coordinates it touches),
  /// damping, loads, inputs and constraints in `builder`, and returns the
  /// kinematics of the frozen system. Call once, before Build(); the
  /// builder must not declare coordinates or energies itself (other
  /// energy terms, constraints, quadratures are allowed), nor Damping or
  /// OtherLoads when the description has dampers or forces (a model has
  /// one of each, and the builder keeps the last one given).
  /// @throws std::invalid_argument for a body without a joint.
  /// With DynamicsForm::kRecursive, M and h come from the recursive
  /// algorithms (every joint type).
  Kinematics AddTo(ModelBuilder* builder,
                   DynamicsForm form = DynamicsForm::kEnergy) &&;

 private:
  void AddActuatorFn(const std::string& name,
                     JointIndex joint,
                     int k,
                     daedalus::internal::ScalarFn value);
  void AddPrescribedFn(const std::string& name,
                       JointIndex joint,
                       int k,
                       daedalus::internal::ScalarFn motion);
  int CheckFrame(FrameIndex f, const char* what) const;
  std::vector<std::string> AddContactPoints(
      const std::string& name,
      internal::MbContact c,
      const std::vector<std::pair<std::string, Eigen::Vector3d>>& points,
      const ContactLaw& law,
      const std::string& shape_a,
      const std::string& shape_b,
      int body_a,
      int body_b);
  int ScalarCoordinate(JointIndex joint, int k, const char* what) const;
  void CheckName(const std::string& name, const char* what) const;
  std::shared_ptr<internal::MbTree> tree_;
  std::vector<std::string> constraint_names_;
};

}  // namespace daedalus::mb

#include "daedalus/multibody_kinematics.hpp"  // IWYU pragma: export
