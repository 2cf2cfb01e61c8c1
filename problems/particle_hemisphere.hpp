// A particle sliding off a frictionless sphere (docs/problems.md,
// "particle_hemisphere"; docs/contact.md, "Release"): the classic release
// problem. A particle of mass m starts at rest at angle theta0 from the
// top of a sphere of radius R under gravity and slides down its outside;
// the sphere is a unilateral contact, which the contact stage opens when
// its multiplier (the normal force) reaches zero.
//
//   T = m (vx^2 + vz^2) / 2,  V = m g z,
//   contact sphere: (x^2 + z^2 - R^2) / (2 R) >= 0   (J = the unit normal
//   on the sphere, so lambda is the normal force N).
//
// On the sphere, energy gives v^2 = 2 g R (cos theta0 - cos theta) and the
// normal force is N = m g cos theta - m v^2 / R = m g (3 cos theta -
// 2 cos theta0): the particle leaves at
//
//   cos theta* = (2/3) cos theta0    (2/3 from the top at rest),
//
// after which it flies free (its gap grows as (t - t*)^3 at first).
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem ParticleHemisphereProblem();

/// The release angle theta* from the top for a start at rest at theta0.
inline double ParticleHemisphereRelease(double theta0) {
  return std::acos(2.0 * std::cos(theta0) / 3.0);
}

}  // namespace daedalus::problems
