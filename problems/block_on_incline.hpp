// A block on a rough incline (docs/problems.md, "block_on_incline";
// docs/friction.md): the friction angle. A block of mass m rests on a
// plane inclined at alpha; coordinates (s, n): s down the slope, n the
// height above the plane.
//
//   T = m (vs^2 + vn^2) / 2,  V = m g (n cos alpha - s sin alpha),
//   contact plane: n >= 0 (lambda_n = m g cos alpha),
//   friction plane_slip: vs (mu_static mu_s, mu_kinetic mu_k).
//
// Released at rest, it sticks when tan alpha <= mu_s (the friction force
// m g sin alpha lies inside the cone): it does not move at all, s = 0
// exactly (a sticking contact is a constraint, not a stiff spring: no
// creep). When tan alpha > mu_s it slides from t = 0 with
//
//   s(t) = a t^2 / 2,  a = g (sin alpha - mu_k cos alpha).
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem BlockOnInclineProblem();

}  // namespace daedalus::problems
