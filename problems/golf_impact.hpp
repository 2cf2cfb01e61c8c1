// The planar golf downswing of golf_swing.hpp striking a ball (issue 36,
// docs/problems.md "golf_impact"): the same arm on its prescribed hand
// path, flexible club and wrist torque, and a ball (a sphere of mass
// m_ball, radius r_ball: 45.93 g and 21.335 mm, the heaviest and smallest
// ball the Rules of Golf allow) at rest
// on a tee where the clubhead arrives when the club is vertical.
//
// Coordinates: theta_a, theta_c, eta as in golf_swing.hpp, and the ball's
// centre (x_b, y_b). Two event-driven contacts (docs/contact.md):
//   strike: |r_head - r_ball| - (r_ball + r_head) >= 0, Newton's
//           restitution e = 0.822 (the limit the Rules of Golf set for a
//           driver's face, 0.830 with the test's tolerance of 0.008);
//   tee:    y_b - y_ball >= 0, e = 0: the ball rests on its tee, and the
//           tee and the ground beyond it are one frictionless plane at the
//           ball's height, along which the struck ball slides.
// The head is a sphere of radius r_head about the shaft's tip (a round
// face; a flat face would need the face's orientation in the gap).
//
// The ball sits along the clubhead's path at the moment the club passes
// the vertical (golf_swing's impact, t = 0.2833 s, head speed 33.98 m/s):
// its default position (x_ball, y_ball) is the head's position there
// moved by r_ball + r_head along the head's velocity, so that the strike
// is central. The impulse law (the contact stage's impulse LCP over the
// strike, the closed tee and the hand path) gives the ball its speed;
// a free head of mass mh would give it (1 + e) mh / (mh + m_ball) times the
// head's approach speed (smash factor 1.482). The club is not free: the
// shaft, the wrist and the hand path add to the head's effective mass
// along the strike's normal, m_eff = 1 / (n' J M^-1 J' n) restricted to
// the hand path (GolfImpactSmashFactor below).
//
// The run goes on after the strike (the follow-through) to t_end; the
// ball's speed along the line of play (-x; it slides along the tee's plane
// after the strike) is the terminal functional ball_speed, whose gradient
// (--sens ..., --functional ball_speed) crosses the impact
// (docs/contact.md, "Sensitivities").
#pragma once

#include "golf_swing.hpp"

namespace daedalus::problems {

Problem GolfImpactProblem();

/// The smash factor of a free head of mass mh striking a ball of mass mb
/// at rest centrally, with Newton's restitution e: the ball's speed over
/// the head's, (1 + e) mh / (mh + mb).
inline double FreeHeadSmashFactor(double mh, double mb, double e) {
  return (1.0 + e) * mh / (mh + mb);
}

}  // namespace daedalus::problems
