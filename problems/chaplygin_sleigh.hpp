// The Chaplygin sleigh: a rigid body (mass m, inertia I about its centre of
// mass G) on a horizontal plane, supported by a knife edge at the contact
// point P that cannot slide sideways; G lies a distance a ahead of P along
// the body axis (Bloch 2003, section 1.7; Neimark and Fufaev 1972).
// Coordinates: P = (x, y) and the heading theta;
//
//   G = P + a (cos th, sin th),  T = m |G'|^2 / 2 + I th'^2 / 2,
//   knife (nonholonomic): -sin th x' + cos th y' = 0.
//
// With the forward speed v = cos th x' + sin th y' and omega = th', the
// equations reduce to v' = a omega^2 and (I + m a^2) omega' = -m a v omega.
// Energy E = m v^2 / 2 + (I + m a^2) omega^2 / 2 is conserved, and with
// V^2 = 2E/m, k = m a V / (I + m a^2) and tanh c = v0 / V:
//
//   v(t) = V tanh(k t + c),   omega(t) = omega0 cosh c / cosh(k t + c):
//
// the sleigh straightens out and ends moving forward at speed V.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem ChaplyginSleighProblem();

}  // namespace daedalus::problems
