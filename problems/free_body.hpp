// A torque-free asymmetric rigid body: the intermediate-axis instability
// (the "tennis racket" or Dzhanibekov effect). Its orientation is a unit
// quaternion R (4 coordinates) and its velocity the angular velocity w in
// the body's principal frame (3 velocities): nq = 4, nv = 3,
// q' = R (0, w) / 2 (docs/conventions.md, "Velocities").
//
//   T = (I1 w1^2 + I2 w2^2 + I3 w3^2) / 2,  no potential, no constraints,
//
// with I1 < I2 < I3. Spun about the intermediate axis 2 with a small
// perturbation eps on the others, the body flips over periodically; the
// energy T and the world angular momentum R I w are conserved exactly, and
// |w| stays on the intersection of the energy and momentum ellipsoids.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem FreeBodyProblem();

}  // namespace daedalus::problems
