// The shipped humanoid (problems/data/humanoid.urdf) standing on the ground
// on box feet (issue 37; docs/problems.md, "humanoid_standing").
//
// Model: the URDF on a floating base ("pelvis", a free joint) with a
// <collision> box 0.22 x 0.10 x 0.06 m under each foot, the box of the
// foot's own inertia (centre (0.05, 0, -0.04) in the foot frame), added to
// the file's text before the import (one source for the robot: the file
// stays the one the urdf problem, the tests and bench/ read); a ground
// plane z = 0 with Coulomb friction mu = 0.8 (static = kinetic), restitution
// 0; the joint limits as in the file. Each box is 8 corner contacts (the
// sole's 4 close), each with 2 sticking rows.
//
// Standing pose q*: knees bent by 2 a, hips and ankles pitched by -a (a =
// 0.1 rad, so that every joint is inside its limits: the knees' and elbows'
// lower/upper limit is 0), elbows at -0.3 rad, every other joint 0, the
// feet flat, the pelvis at the height where the soles touch z = 0.
//
// Control: one input channel per joint, "hold_<joint>",
//
//   u = tau* - M_r (omega^2 (q_J - q*_J) + 2 zeta omega v_J),
//
// tau* the exact static-equilibrium torques at q* (inverse statics below),
// M_r the joints' inertia matrix seen from the ground at q* (T' M T, T the
// joints-to-velocities map of the feet-on-the-ground motions: the base
// follows the joints), omega = stand_omega (16 pi rad/s: 8 Hz) and zeta =
// stand_zeta (1): every mode of the standing body a critically damped
// oscillator at omega, well above gravity's destabilizing rate (the model
// file says why not a diagonal gain). The URDF's own channels tau_<joint>
// stay (0 by default): a user's extra torque.
//
// Inverse statics at q*, v = 0: M vdot + h = B u + J' lambda with vdot = 0.
// The 6 rows of the floating base have no input, so the contact forces
// alone must hold them: J_b' lambda = h_b. The split chosen (documented):
// no tangential force (gravity is vertical, nothing needs one) and the
// minimum-norm normal forces of the 8 sole corners (complete orthogonal
// decomposition, no inverse formed): the forces are affine in the corners'
// positions, equal left and right for this symmetric pose, and each foot's
// share is also the per-foot minimum-norm split the KKT solve of the run
// picks (docs/contact.md, "Redundant contact rows"). Then tau* = (h - J'
// lambda) on the joints' rows. Since J' is injective on the two feet's
// wrenches (the feet move independently), the run reproduces each foot's
// wrench: with these torques the closed mode is an exact equilibrium.
//
// Centre of pressure: the total contact wrench is unique even though its
// split among a foot's corners is not; about a point of the ground (z = 0)
// the tangential forces (in the plane) have no horizontal moment, so the
// CoP of the total wrench is sum_k lambda_k p_k / sum_k lambda_k over the
// closed corners, and it does not depend on the split. At rest it is the
// ground projection of the centre of mass. The support polygon is the
// convex hull of the closed corners; its margin is the CoP's distance to
// the nearest edge (positive inside).
//
// Push (parameter push_impulse [N s], default 0): at t = 0 a horizontal
// impulse P along +x on the pelvis's origin, the velocity jump of the
// closed-contact impact map (all closed rows held: dv = M^-1 (J_p' P + J'
// Lambda), J dv = 0), so the run starts from the equilibrium pose with that
// velocity.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"
#include "daedalus/urdf.hpp"

namespace daedalus::problems {

/// The humanoid's URDF text with the two feet's <collision> boxes
/// ("left_sole", "right_sole") inserted. @throws std::invalid_argument
/// naming the file when it cannot be read or has no left_foot/right_foot
/// link.
std::string HumanoidWithFeetUrdf(const std::string& path);

/// The standing humanoid and what its construction computed.
struct HumanoidStanding {
  Problem problem;
  urdf::Robot robot;
  Eigen::VectorXd q_stand;  ///< nq: the standing pose
  /// Per joint (robot.joints order): the equilibrium torques [N m].
  Eigen::VectorXd tau_stand;
  /// The joints' inertia matrix seen from the ground, M_r = T' M T at
  /// q_stand [kg m^2] (nj x nj, robot.joints order): the PD gains are
  /// omega^2 M_r and 2 zeta omega M_r.
  Eigen::MatrixXd inertia;
  /// The sole corners' contacts (4 per foot, left first), their normal
  /// rows in the model, their corner points in the foot frames and the
  /// inverse statics' normal forces [N].
  std::vector<std::string> corners;
  std::vector<int> normal_rows;
  std::vector<Eigen::Vector3d> corner_local;
  std::vector<mb::FrameIndex> corner_frame;  ///< the foot frames
  Eigen::VectorXd lambda_stand;
  double mass = 0.0, weight = 0.0;  ///< [kg], m g [N]
  /// max |J_b' lambda - h_b| and max |B tau - (h - J' lambda)| [N, N m]
  /// of the inverse statics (round-off).
  double base_residual = 0.0, joint_residual = 0.0;
};

/// Builds it from the URDF at `path`. @throws std::invalid_argument as
/// HumanoidWithFeetUrdf and urdf::Import; std::runtime_error when the
/// inverse statics does not balance the base (a pose whose centre of mass
/// is outside the feet).
HumanoidStanding MakeHumanoidStanding(const std::string& path);

/// The default file: problems/data/humanoid.urdf of the source tree
/// (compiled in).
std::string HumanoidUrdfPath();

/// The catalogue problem: MakeHumanoidStanding(HumanoidUrdfPath()).problem.
Problem HumanoidStandingProblem();

/// The standing measures at one state.
struct StandingMeasures {
  /// max over the sole corners of |p_k(q) - p_k(q_stand)| [m].
  double drift = 0.0;
  /// (sum of the sole corners' normal forces - m g) / (m g).
  double reaction_error = 0.0;
  Eigen::Vector2d cop = Eigen::Vector2d::Zero();  ///< [m], ground plane
  Eigen::Vector2d com = Eigen::Vector2d::Zero();  ///< CoM's projection
  /// Signed distance of the CoP to the support polygon's nearest edge
  /// [m], positive inside; -inf with fewer than 3 closed corners.
  double cop_margin = 0.0;
  int closed = 0;                        ///< corners with lambda_n > 0
  double left_fz = 0.0, right_fz = 0.0;  ///< [N]
};
StandingMeasures MeasureStanding(const HumanoidStanding& h,
                                 const Eigen::VectorXd& q,
                                 const Eigen::VectorXd& lambda,
                                 const Eigen::VectorXd& params);

/// Signed distance of `x` to the boundary of the convex hull of `points`
/// (positive inside, negative outside); -inf for fewer than 3 points or a
/// degenerate hull.
double ConvexHullMargin(std::vector<Eigen::Vector2d> points,
                        const Eigen::Vector2d& x);

}  // namespace daedalus::problems
