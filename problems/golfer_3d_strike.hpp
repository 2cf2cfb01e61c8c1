// golfer_3d's downswing striking a ball (issue 36; docs/problems.md,
// "golfer_3d_strike"): the golfer, club and actuators of golfer_3d.hpp
// (golfer_detail::DeclareGolfer, unchanged) and a ball on a tee where the
// clubhead arrives, with the run going on through the strike into the
// follow-through.
//
// The ball: the heaviest and smallest ball the Rules of Golf allow, 45.93
// g and 21.335 mm in radius (the Equipment Rules on the ball: a weight of
// at most 1.620 oz, a diameter of at least 1.680 in), as golf_impact
// uses. It is a point mass on three prismatic joints from the world
// (coordinates ball_x, ball_y, ball_z: its centre in W [m]; two massless
// carriages carry the first two): its spin is out of scope. Both contacts
// are frictionless and pass through its centre, so nothing here would spin
// it; a real face's loft and friction give a drive its backspin.
//
// Two event-driven contacts between spheres (docs/contact.md, "Contact
// geometry"):
//   strike: the clubhead, a sphere of radius r_head = 0.02 m about the
//           head's centre of mass (as golf_impact's head, about the
//           shaft's tip there), against the ball: gap |c_H - c_B| - r_head
//           - r_ball >= 0, Newton's restitution e = 0.822, the limit the
//           Rules of Golf set on a driver face's coefficient of
//           restitution (0.830 with the test's tolerance of 0.008);
//   tee:    the ball against the ground plane z = z_tee (the plane through
//           the ball's lowest point at rest), e = 0: the ball rests on its
//           tee (multiplier m_ball g). The tee and the ground beyond it
//           are one frictionless plane.
//
// Where the ball sits: at golfer_3d's `impact` (the head's centre of mass
// crossing the ball's address line, t = 0.3219 s at 41 m/s) the head's
// centre moved by r_head + r_ball along its velocity, so that the strike
// is central (StrikeBallAddress; the test recomputes it from a golfer_3d
// run). The head reaches it at golfer_3d's impact; until then the ball
// does not move and the golfer swings as in golfer_3d.
//
// The strike is the contact stage's impulse LCP over the strike and the
// closed tee, with the trail_grip loop (bilateral) eliminated. The club is
// not free: the shaft, the hands, the arms and the body add to the head's
// effective mass along the strike's normal n. The strike's entry of the
// Delassus operator is A_ss = 1 / m_eff + 1 / m_ball (the club's and the
// ball's inverse masses along n), and m_eff is at least the head's 0.2 kg:
// the head's kinetic energy is a part of the club's. The ball leaves along
// n (upwards: the head is rising at impact), the tee lets it go, and it
// flies.
//
// Terminal functionals (docs/sensitivities.md; their gradients cross the
// strike, docs/contact.md "Sensitivities"):
//   ball_speed       sqrt(|v_B|^2 + 2 g (z_B - z_0)) [m/s]: the ball's
//                    launch speed, exactly, at any time after the strike
//                    while it flies (its energy per unit mass is constant
//                    in flight; z_0 its height on the tee);
//   launch_angle     atan2(sqrt(v_z^2 + 2 g (z_B - z_0)), |v_xy|) [rad]:
//                    the launch's elevation (the vertical launch speed
//                    from the same energy, the horizontal velocity
//                    unchanged in flight);
//   launch_direction atan2(v_x, v_y) [rad]: the horizontal direction from
//                    the target line (+y), positive to its right (+x,
//                    away from the golfer, who faces +x);
//   head_speed       the clubhead's speed [m/s] (golfer_3d's).
// The launch figures hold until the ball lands on the plane (after the
// run's end: the flight lasts longer than the follow-through).
#pragma once

#include <Eigen/Core>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"
#include "golfer_3d.hpp"

namespace daedalus::problems {

/// The problem and the kinematics of its description.
struct Golfer3dStrike {
  Problem problem;
  mb::Kinematics kin;
};
/// M and h as golfer_3d's (mb::DynamicsForm; kAuto takes the recursive
/// form, the description having quaternions).
Golfer3dStrike MakeGolfer3dStrike(
    mb::DynamicsForm form = mb::DynamicsForm::kAuto);
/// `golfer_3d_strike --dynamics auto|energy|recursive`.
Problem Golfer3dStrikeProblemForm(mb::DynamicsForm form);

namespace strike_detail {

/// The Rules of Golf's heaviest, smallest ball [kg], [m]; the clubhead's
/// sphere [m]; the Rules' limit on a driver's restitution.
inline constexpr double kBallMass = 0.04593;
inline constexpr double kBallRadius = 0.021335;
inline constexpr double kHeadRadius = 0.02;
inline constexpr double kDriverRestitution = 0.822;

/// The ball's centre at rest on its tee, c_0 in W [m] (golfer_3d_strike.hpp:
/// golfer_3d's head at impact moved by kHeadRadius + kBallRadius along its
/// velocity).
Eigen::Vector3d StrikeBallAddress();

/// A ball declared by DeclareBall: its first coordinate and velocity
/// (ball_x; ball_y and ball_z follow), its sphere, its parameters.
struct Ball {
  int q = -1, v = -1;
  mb::GeometryIndex sphere;
  Param mass, restitution;
};

/// Declares in `b` the parameters m_ball (kBallMass) and e
/// (kDriverRestitution, the strike's restitution for the contacts
/// declared with StrikeLaw), in `s` the ball (a point mass with a sphere
/// of kBallRadius on the prismatic joints ball_x, ball_y, ball_z from the
/// world, so that its coordinates are its centre in W) and its tee (the
/// ground plane `tee_plane` at address.z() - kBallRadius, the contact
/// `tee`, e = 0), and in `b` the terminal functionals ball_speed,
/// launch_angle and launch_direction (golfer_3d_strike.hpp) with `g` the
/// gravity parameter and `address` the ball's place at rest.
Ball DeclareBall(ModelBuilder* b,
                 mb::Multibody* s,
                 Param g,
                 const Eigen::Vector3d& address);

/// The strike's law: Newton's restitution, the parameter e.
ContactLaw StrikeLaw();

/// A sphere of radius r at p_BG = `position` on its body, for collision.
mb::Geometry CollisionSphere(const std::string& name,
                             double r,
                             const Eigen::Vector3d& position);

}  // namespace strike_detail
}  // namespace daedalus::problems
