// The four-bar linkage of four_bar.hpp written as a multibody description
// (include/daedalus/multibody.hpp): three uniform bars as planar bodies,
// revolute joints at the ground pivots O = (0, 0) and C = (l0, 0), the
// coupler on the crank tip with an absolute-angle revolute joint, and the
// loop closed by a point-coincidence constraint between the coupler's tip
// and the rocker's tip. Coordinates, parameters, initial state and run
// defaults are those of four_bar, so the generated M, h, J and the
// trajectory agree with the hand-derived model to round-off
// (tests/multibody/catalogue_mb_test.cpp).
//
// Bodies (frames at the pivot ends, bars along the body's -y axis, so that a
// bar at angle th points along e(th) = (sin th, -cos th)):
//   crank   m1, C at (0, -l1/2), I_C = m1 l1^2 / 12, joint "crank" (theta1)
//   coupler m2, C at (0, -l2/2), I_C = m2 l2^2 / 12, joint "coupler" (theta2)
//   rocker  m3, C at (0, -l3/2), I_C = m3 l3^2 / 12, joint "rocker" (theta3)
//   loop:   p(coupler tip) - p(rocker tip) = 0, 2 rows.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"
#include "four_bar.hpp"

namespace daedalus::problems {

Problem FourBarMbProblem();
/// The same with M and h from the energies (kEnergy, the default above) or
/// from the recursive algorithms (kRecursive; the coupler's absolute angle
/// enters through the constant map to relative angles): `--dynamics
/// energy|recursive`.
Problem FourBarMbProblemForm(mb::DynamicsForm form);

/// The description alone, added to `b` (after the parameters `P` are
/// declared): for tests that query its kinematics.
mb::Kinematics FourBarMbSystem(
    const four_bar_detail::Params& P,
    ModelBuilder* b,
    mb::DynamicsForm form = mb::DynamicsForm::kEnergy);

}  // namespace daedalus::problems
