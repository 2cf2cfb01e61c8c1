// A 3-D golfer plus club written as a multibody description
// (include/daedalus/multibody.hpp), driven through a downswing by named
// joint actuators (docs/problems.md, "golfer_3d").
//
// World W: z up, the golfer faces +x, the target is along +y (a
// right-handed golfer: the lead arm is the left one, on the +y side). The
// legs are not modelled: the pelvis turns about the vertical through the
// hip centre on fixed legs. Every body frame is aligned with W at the
// address pose (all joint coordinates 0, quaternions the identity) and has
// its origin at its inboard joint centre, so the joint axes below are
// world directions at address.
//
// Tree (13 velocities, nq = 15):
//   pelvis          world -> pelvis, revolute about z             (1)
//   torso           pelvis -> torso, revolute about the spine axis,
//                   tilted forward by the spine angle               (1)
//   lead_shoulder   torso -> lead_upper_arm, ball (quaternion); its
//                   frames have x along the swing-plane normal n     (3)
//   lead_elbow      -> lead_forearm, revolute about n               (1)
//   lead_wrist      -> lead_hand, universal: cock about n, then roll
//                   about the shaft axis                            (2)
//   lead_grip       lead_hand -> club, weld (the lead hand's rigid grip)
//   shaft_flex      club -> club_tip, revolute about n at a hinge on the
//                   shaft, with a spring and a damper: one shaft bending
//                   mode of first frequency f_shaft with the butt clamped (1)
//   trail_shoulder  torso -> trail_upper_arm, ball                  (3)
//   trail_elbow     -> trail_forearm, revolute                      (1)
//   trail_wrist     trail_forearm -> trail_hand, weld
// and the loop closure `trail_grip` (point coincidence, 3 rows): the trail
// hand's grip point on the club's grip. Its multiplier is the force the
// hand applies to the club [N]; the forces on the two sides of the grip
// are equal and opposite, so their powers sum to lambda . (J v), zero for
// an ideal rigid grip (GripPowers below, seed 000).
//
// Actuators (input channels, torques [N m]): pelvis_drive, torso_drive,
// shoulder_drive_x and shoulder_drive_z (about the lead shoulder frames' x
// = n and z axes), wrist_drive (the cock), trail_elbow_drive. Each is a
// smooth pulse U (S((t - t_on) / T_rise) - S((t - t_off) / T_fall)),
// S(x) = x^3 (10 - 15 x + 6 x^2) on [0, 1]; the wrist's holds U_hold and
// ramps to U_wrist from t_wrist over T_release.
//
// Impact: the event `impact`, the clubhead's centre of mass passing the
// ball (its address position) along the target line y; the run stops
// there.
#pragma once

#include <Eigen/Core>
#include <functional>

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"
#include "daedalus/side_outputs.hpp"

namespace daedalus::problems {

/// The problem and the kinematics of its description.
struct Golfer3d {
  Problem problem;
  mb::Kinematics kin;
};
/// M and h by automatic differentiation of the per-body energies (kEnergy,
/// the default) or by the recursive algorithms (kRecursive: CRBA and RNEA
/// on the tree, the loop closed by the KKT solve as in both forms).
Golfer3d MakeGolfer3d(mb::DynamicsForm form = mb::DynamicsForm::kEnergy);
Problem Golfer3dProblem();
/// `golfer_3d --dynamics energy|recursive`.
Problem Golfer3dProblemForm(mb::DynamicsForm form);

namespace golfer_detail {

/// The quintic rest-to-rest ramp S(x) = x^3 (10 - 15 x + 6 x^2), x clamped
/// to [0, 1].
template <class S>
S Ramp(S x) {
  if (x < 0.0) x = S(0.0);
  if (x > 1.0) x = S(1.0);
  return x * x * x * (10.0 - 15.0 * x + 6.0 * x * x);
}

/// The clubhead's centre of mass at address [m] (the ball).
Eigen::Vector3d BallPosition();

/// Velocity of the clubhead's centre of mass v_WH [m/s].
Eigen::Vector3d ClubheadVelocity(const mb::Kinematics& kin,
                                 const Eigen::VectorXd& q,
                                 const Eigen::VectorXd& v,
                                 const Eigen::VectorXd& p);

/// The powers of the trail-grip closure forces [W]: `hand` the power of
/// -lambda on the trail hand's grip point, `club` that of +lambda on the
/// club's grip point, both from the frames' velocities (the velocity
/// recursion, not the closure's J). hand + club = lambda . (v_club -
/// v_hand) = lambda . (J v), zero for a rigid grip.
struct GripPowers {
  double hand = 0.0, club = 0.0;
};
GripPowers GripPower(const mb::Kinematics& kin,
                     const Eigen::VectorXd& q,
                     const Eigen::VectorXd& v,
                     const Eigen::VectorXd& p,
                     const Eigen::Vector3d& lambda);

/// The clamped-butt first bending frequency [Hz] of the lumped shaft mode
/// (the club_tip's inertia about the hinge, the spring k = I (2 pi f)^2)
/// is f_shaft by construction; this returns the inertia I [kg m^2].
double TipInertiaAboutHinge();

/// golfer_3d's description before Multibody::AddTo, for the problems built
/// on it (golfer_3d_strike.hpp). DeclareGolfer declares golfer_3d's
/// parameters in the builder and its bodies, frames, joints, passive
/// elements, actuators and the trail_grip closure in `system`, in
/// golfer_3d's order: a problem that adds bodies, joints, contacts and
/// parameters after them keeps golfer_3d's coordinates, velocities,
/// parameters and constraint rows first, with their indices.
struct GolferDescription {
  mb::Multibody system{mb::Dimension::kSpatial};
  /// The club's tip body (the shaft beyond the flex hinge and the head);
  /// its frame has its origin at the hinge, world axes at address.
  mb::BodyIndex club_tip;
  /// p_TH: the clubhead's centre of mass in club_tip's frame [m].
  Eigen::Vector3d head_in_tip = Eigen::Vector3d::Zero();
  /// The gravity parameter `g` [m/s^2].
  Param g;
  /// The golfer at rest at the top of the backswing, for the model `kin`
  /// describes (its nq and nv; coordinates that are not the golfer's stay
  /// at kin.Neutral()).
  std::function<InitialState(const mb::Kinematics& kin,
                             const Eigen::VectorXd& params)>
      initial;
};
GolferDescription DeclareGolfer(ModelBuilder* b);

/// The side file `swing.csv` (the clubhead's position and speed, the
/// trail_grip force and its powers; golfer_3d.hpp) of a model built on
/// DeclareGolfer, whose first three constraint rows are trail_grip's.
SideOutput SwingFile(const mb::Kinematics& kin);

/// The terminal functional `head_speed`: the clubhead's speed |v_WH| [m/s]
/// (--functional head_speed, or head_speed@impact).
void AddHeadSpeed(ModelBuilder* b, const mb::Kinematics& kin);

/// The functionals of the optimization (docs/optimal_control.md,
/// "golfer_3d"): `head_dx`, `head_dz`, the clubhead's centre of mass minus
/// the ball's position along x and z [m] (the event `impact` fixes y); the
/// joint angles [rad] `pelvis_turn`, `torso_turn` (on the pelvis),
/// `lead_elbow_flexion`, `wrist_cock`, `trail_elbow_flexion` (the
/// coordinates, 0 at address); the lead shoulder's rotation from address
/// split into swing and twist about the upper arm's axis: `lead_arm_swing`
/// = 1 - cos(swing angle) and `lead_arm_twist_cos` = cos(twist angle).
void AddStrikeFunctionals(ModelBuilder* b, const mb::Kinematics& kin);

/// golfer_3d's run defaults (Baumgarte on CVODES BDF, rtol 1e-8, atol
/// 1e-10, output every 1 ms) up to `t_end` [s], and its side files: the
/// poses and SwingFile.
void SetSwingDefaults(Problem* p, const mb::Kinematics& kin, double t_end);

}  // namespace golfer_detail
}  // namespace daedalus::problems
