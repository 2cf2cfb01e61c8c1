// Housner's rocking block (docs/problems.md, "rocking_block";
// docs/contact.md, docs/friction.md): a rigid rectangular block of width
// 2b and height 2h rocks on its two bottom corners on a rough, rigid
// ground (G. W. Housner, "The behavior of inverted pendulum structures
// during earthquakes", Bull. Seismol. Soc. Am. 53(2), 403-417, 1963).
// Planar, coordinates (x, y, theta) of the centre and the tilt:
//
//   T = m (vx^2 + vy^2) / 2 + I w^2 / 2,  I = m (b^2 + h^2) / 3,
//   V = m g y,
//   corner left  (-b, -h): gap y - b sin(theta) - h cos(theta) >= 0,
//                slip vx + (b sin(theta) + h cos(theta)) w,
//   corner right ( b, -h): gap y + b sin(theta) - h cos(theta) >= 0,
//                slip vx + (h cos(theta) - b sin(theta)) w,
//
// each corner a contact with Newton's e = 0 and Coulomb's mu (1 by
// default: high enough that no corner slides). Released from rest tilted
// by theta0 on its left corner, it rocks about one corner, strikes with
// the other at theta = 0, and rocks on about that one. Housner's impact
// (angular momentum about the striking corner conserved, the struck
// corner sticking, the other lifting) gives the angular-velocity ratio
//
//   w+ / w- = 1 - (3/2) sin^2(alpha),   tan(alpha) = b / h
//
// (alpha the slenderness angle between the vertical and the diagonal
// through the centre; Housner 1963, eq. 10, for I_O = (4/3) m R^2,
// R^2 = b^2 + h^2). The defaults b = 0.1 m, h = 0.3 m give sin^2 alpha
// = 1/10 and the ratio 0.85 (the kinetic energy's 0.7225). The contact
// stage solves each impact as the frictional impulse LCP over both
// corners; the friction stage keeps the pivot sticking between impacts.
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem RockingBlockProblem();

/// Housner's angular-velocity ratio at an impact, 1 - 1.5 sin^2(alpha),
/// tan(alpha) = b / h (half width, half height).
inline double HousnerRatio(double b, double h) {
  const double s = std::sin(std::atan2(b, h));
  return 1.0 - 1.5 * s * s;
}

}  // namespace daedalus::problems
