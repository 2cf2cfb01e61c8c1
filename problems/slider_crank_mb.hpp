// The slider-crank of slider_crank.hpp (SUNDIALS's idasSlCrank_dns) written
// as a multibody description (include/daedalus/multibody.hpp). Bodies:
//   crank  (mass 0, inertia J1 about its pivot at the origin), joint
//          "crank" (coordinate q) to the ground;
//   slider (mass m2), prismatic joint "slider" along x (coordinate x);
//   rod    (mass 0, inertia J2 about the slider pin), revolute joint "rod"
//          on the slider (coordinate p).
// Frames: crank pin at (a, 0) and crank midpoint at (a/2, 0) on the crank;
// rod pin at (-1, 0), rod midpoint at (-1/2, 0) and rod end at (1, 0) on the
// rod. The loop is a point coincidence rod pin - crank pin = 0 (rows x, y:
// loop_x and loop_y of the hand-derived model); the spring-damper (k, c,
// free length l0) joins the two midpoints; the force F acts along x at the
// rod end. Parameters, initial state, the quadrature G (the time integral
// of T) and the run defaults are those of slider_crank.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem SliderCrankMbProblem();
/// The same with M and h from the energies (kEnergy, the default above) or
/// from the recursive algorithms (kRecursive): `--dynamics energy|recursive`.
Problem SliderCrankMbProblemForm(mb::DynamicsForm form);

}  // namespace daedalus::problems
