// Newton's cradle as event-driven contact (docs/problems.md,
// "newtons_cradle"; docs/contact.md, "Impacts"): N equal balls of mass m
// and diameter d on a line (the strings left out: the impacts take no
// time), ball 1 moving at v0 towards the others, which rest in a row.
// Each neighbour pair is a contact, gap x_(i+1) - x_i - d >= 0, with
// Newton's restitution e.
//
//   T = m (v_1^2 + ... + v_N^2) / 2,  no potential,
//   contacts c_i_(i+1): x_(i+1) - x_i - d >= 0, e.
//
// With the resting balls touching (`spacing` 0) ball 1 strikes a chain of
// closed contacts: the stage solves one impulse LCP over all N - 1 of
// them, and for e = 1 its solution is
//
//   v+ = ((2 - N) / N, 2 / N, ..., 2 / N) v0
//
// (3 balls: (-1/3, 2/3, 2/3) v0; 5 balls: (-3/5, 2/5, 2/5, 2/5, 2/5) v0),
// which conserves momentum and, for e = 1, energy, but is not the cradle
// one watches. With the resting balls a little apart (`spacing` > 0) the
// impacts are sequential, two balls at a time, and the last ball leaves
// with v0: (0, ..., 0, v0), the observed motion, which the simultaneous
// Newton law cannot give (Brogliato, "Nonsmooth Mechanics", 3rd ed. 2016,
// section 6.2; Acary and Brogliato 2008, section 4.3).
#pragma once

#include <Eigen/Core>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// `balls` >= 2.
Problem NewtonsCradleProblem(int balls);

/// The velocities after ball 1 strikes a touching row of N - 1 balls at
/// v0 with e = 1 (the LCP solution, all contacts pushing).
inline Eigen::VectorXd NewtonsCradleSimultaneous(int balls, double v0) {
  Eigen::VectorXd v = Eigen::VectorXd::Constant(balls, 2.0 * v0 / balls);
  v[0] = (2.0 - balls) * v0 / balls;
  return v;
}

}  // namespace daedalus::problems
