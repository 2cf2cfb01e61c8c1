// The slider-crank of SUNDIALS's idasSlCrank_dns example, as a Daedalus
// problem. Coordinates: crank angle q, slider position x, connecting-rod
// angle p. A crank of half-length a and a rod of unit length are joined at
// the crank pin; a spring-damper (stiffness k, damping c, free length l0)
// acts between the crank's midpoint and the rod's midpoint, and a constant
// horizontal force F acts at the rod's far end.
//
//   T = (J1 qd^2 + m2 xd^2 + J2 pd^2) / 2
//   V = k (l - l0)^2 / 2
//   D = c (grad l)(grad l)'           (damper force -c ldot grad l)
//   Q_r = F grad(x + cos p) = (0, F, -F sin p)
//   loop_x: x - cos p - a cos q = 0
//   loop_y: -sin p - a sin q = 0
//   l^2 = x^2 - x (cos p + a cos q) + (1 + a^2) / 4 + a cos(p - q) / 2
//
// The quadrature G is the time integral of the kinetic energy, as in the
// example. Daedalus's multipliers are minus the example's
// (docs/conventions.md).
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem SliderCrankProblem();

}  // namespace daedalus::problems
