// The bouncing ball as event-driven contact (docs/problems.md,
// "bouncing_ball_contact"; docs/contact.md): the ground is a unilateral
// constraint, gap y >= 0, with Newton's restitution e (the parameter e),
// instead of bouncing_ball's event and reset map. The contact stage finds
// each impact as the gap's root, applies Newton's law by its impulse LCP,
// books the energy lost as impact work, and closes the contact for good
// when the ball would rebound below the integrator's resolution (rising
// u+^2 / (2 g) no higher than atol, docs/contact.md "Accumulation
// (Zeno)"): the ball then rests on the ground with lambda = m g.
//
//   T = m vy^2 / 2,  V = m g y,  contact ground: y >= 0, e.
//
// The impact times are bouncing_ball's (BouncingBallImpactTime):
// t_k = t1 (1 + 2 (e + ... + e^(k-1))), t1 = sqrt(2 h0 / g), the 44th at
// 8.49137402564769 s for the defaults, accumulating at
// t_inf = t1 (1 + e) / (1 - e) = 8.5792... s. The impact at speed
// u_k = e^(k-1) sqrt(2 g h0) loses m u_k^2 (1 - e^2) / 2. The run goes on
// to t_end = 10 s, resting after the last resolved impact, at rtol 1e-12
// and atol 1e-14 (the energy balance within 1e-9 J over the ~100 flights).
#pragma once

#include "bouncing_ball.hpp"

namespace daedalus::problems {

Problem BouncingBallContactProblem();

/// The fixed accumulation speed this problem used before the resolution
/// criterion (ContactOptions::zeno_velocity, now an explicit override)
/// [m/s]: with it the ball rests up to 2 v / (g (1 - e)) = 2.04e-5 s
/// before t_inf, its last bounce 5e-12 m high, 500 times the problem's
/// atol; without it (the default) it rests within 1e-6 s of t_inf.
inline constexpr double kBallZenoVelocity = 1e-5;

}  // namespace daedalus::problems
