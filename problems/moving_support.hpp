// Seed 003's moving support: a mass m carried vertically by a support whose
// height is prescribed, s(t) = s1 t + s2 t^2 / 2 (upward speed s1 and
// acceleration s2 at t = 0), with gravity g. One coordinate, the height y,
// and the prescribed motion as a moving (rheonomic) constraint
//
//   support: Phi(y, t) = y - s(t) = 0,   Phi_t = -s'(t).
//
// The support force is lambda = m (g + s2) (20.42 N for the seed's 2 kg,
// s2 = 0.4 m/s^2) and its power lambda y' = -lambda Phi_t is
// 20.42 * 0.3 = 6.126 W at t = 0, with no actuator on the mass: the
// constraint work equals the energy gained, m g s + m (s'^2 - s1^2) / 2.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem MovingSupportProblem();

}  // namespace daedalus::problems
