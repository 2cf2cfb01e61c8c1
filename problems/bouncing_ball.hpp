// A ball dropped from rest at height h0 bouncing on the ground with
// Newton's restitution coefficient e: the test problem of state resets at
// events and their sensitivities (docs/problems.md, "bouncing_ball";
// docs/sensitivities.md, "Resets").
//
//   T = m vy^2 / 2,  V = m g y,  event impact: y = 0 falling,
//   reset at impact: vy+ = -e vy-.
//
// Closed forms (BouncingBallImpactTime below): the first impact at
// t1 = sqrt(2 h0 / g) with speed u = sqrt(2 g h0); after the k-th the ball
// leaves at e^k u and is back after 2 e^k u / g, so
//
//   t_k = t1 (1 + 2 (e + e^2 + ... + e^(k-1))),
//
// accumulating at t_inf = t1 (1 + e) / (1 - e) (8.5792... s for the
// defaults). Runs stop before it (t_end 6 s, 11 impacts): past it the impacts
// accumulate (Zeno), which event-driven integration of resets alone does
// not resolve.
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem BouncingBallProblem();

/// t_k, dt_k/de and dt_k/dh0 in closed form (k >= 1).
struct BouncingBallImpact {
  double t = 0.0, dt_de = 0.0, dt_dh0 = 0.0;
};
inline BouncingBallImpact BouncingBallImpactTime(int k,
                                                 double h0,
                                                 double e,
                                                 double g) {
  const double t1 = std::sqrt(2.0 * h0 / g);
  // S = e + e^2 + ... + e^(k-1) and dS/de.
  double S = 0.0, dS = 0.0, ek = 1.0;
  for (int j = 1; j < k; ++j) {
    dS += j * ek;  // d(e^j)/de = j e^(j-1)
    ek *= e;
    S += ek;
  }
  BouncingBallImpact out;
  out.t = t1 * (1.0 + 2.0 * S);
  out.dt_de = 2.0 * t1 * dS;
  out.dt_dh0 = out.t / (2.0 * h0);  // t is proportional to sqrt(h0)
  return out;
}

}  // namespace daedalus::problems
