// N spheres dropped in a box (docs/problems.md, "spheres_in_box";
// docs/moreau_jean.md): a scene of many contacts for Moreau-Jean time
// stepping beside the event-driven default. Each sphere (radius r, mass m,
// translations only: frictionless contacts exert no torque on a sphere)
// has coordinates (x_i, y_i, z_i); the box is [0, L] x [0, L] with its
// floor at z = 0 and no lid. Every gap is a unilateral constraint of the
// model with Newton's restitution e (parameter e):
//
//   floor_i, wall_x0_i, wall_xL_i, wall_y0_i, wall_yL_i (one row each):
//                      z_i - r, x_i - r, L - r - x_i, y_i - r, L - r - y_i
//   pair_i_j:          |p_i - p_j| - 2 r         (every pair, i < j)
//
// so N spheres declare 5 N + N (N - 1) / 2 contact rows (100 spheres: 500
// wall rows and 4950 pair rows). The spheres start at rest on a jittered
// grid of layers of up to 9 (3 x 3, centres 2.2 r apart) and fall under
// gravity for t_end = 1 s. The default is 18 spheres (2 layers, 90 wall
// rows and 153 pair rows, 54 coordinates: within the compiled evaluator's
// 60): the run's cost is the dense evaluation of every contact row's
// Jacobian at every step, O(rows x coordinates), on dual numbers above 60
// coordinates (100 spheres: 5450 rows x 300 coordinates, about 2 s a
// step), docs/moreau_jean.md.
//
//   T = m sum |v_i|^2 / 2,  V = m g sum z_i.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// `spheres` >= 1.
Problem SpheresInBoxProblem(int spheres);

}  // namespace daedalus::problems
