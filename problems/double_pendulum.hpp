// Seed 004's double pendulum: two point bobs m1, m2 on massless rods l1, l2,
// the first hinged at a fixed pivot, in a vertical plane. Coordinates: the
// rod angles theta1, theta2 from the downward vertical. The Lagrangian is
// written from the bobs' Cartesian positions only,
//
//   r1 = l1 (sin th1, -cos th1),  r2 = r1 + l2 (sin th2, -cos th2),
//   L = m1 |r1'|^2 / 2 + m2 |r2'|^2 / 2 - g (m1 y1 + m2 y2),
//
// and Daedalus derives the equations (seed 004 compares them with the
// closed-form accelerations of its previous lesson). Defaults are the
// seed's: m1 = 1, m2 = 2, l1 = 1, l2 = 0.7, start (0.3, 0.2) rad at rest.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem DoublePendulumProblem();

}  // namespace daedalus::problems
