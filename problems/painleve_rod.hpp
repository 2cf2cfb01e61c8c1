// Painleve's rod (docs/problems.md, "painleve_rod"; docs/friction.md):
// a uniform rod of mass m and length 2 l whose lower end A slides on a
// rough plane (Coulomb, mu). Coordinates (x, y, theta): its centre and
// its angle above the plane; I = m l^2 / 3.
//
//   contact end: y - l sin theta >= 0,
//   friction end_slip: A's velocity vx + l sin(theta) w.
//
// Slipping (A moving towards -x, sigma = -1), A's normal acceleration is
//
//   y_A'' = -g + l sin(theta) w^2 + (lambda_n / m) (1 + 3 cos^2 theta
//                                    - 3 mu sin theta cos theta),
//
// whose coefficient of lambda_n is <= 0 when mu >= (1 + 3 cos^2 theta) /
// (3 sin theta cos theta), smallest, 4/3, at tan theta = 2. There, with
// w = 0 (a free normal acceleration -g), no normal force is consistent:
// the start is reported as inconsistent (naming the contact and mu) for
// mu > 4/3; for smaller mu the rod slides and falls.
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem PainleveRodProblem();

/// The coefficient of lambda_n / m in A's normal acceleration while it
/// slips towards -x at angle theta.
inline double PainleveRodNormalCoefficient(double theta, double mu) {
  return 1.0 + 3.0 * std::cos(theta) * std::cos(theta) -
         3.0 * mu * std::sin(theta) * std::cos(theta);
}

}  // namespace daedalus::problems
