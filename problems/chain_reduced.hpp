// The chain of chain.hpp in reduced coordinates: the N joint angles
// q_0 (link 0 from the hanging vertical) and q_i (link i relative to link
// i-1), so link i has the absolute angle theta_i = q_0 + ... + q_i. No
// constraints; the mass matrix is dense (every joint moves every link
// beyond it). Centre of link i:
//   x_i = sum_{j<i} l sin theta_j + l/2 sin theta_i,
//   y_i = -(sum_{j<i} l cos theta_j + l/2 cos theta_i).
// Same links, gravity, and release state (straight at 0.3 rad, at rest),
// so that both formulations of one system can be compared.
//
// Two forms of the same equations (`chain_reduced --dynamics`): `energy`
// writes the kinetic and potential energies by hand (M and h by automatic
// differentiation, O(N^3) per evaluation, so at most 200 links);
// `recursive` (the default) builds the chain with the multibody
// description (revolute joints in the plane) and takes the recursive
// algorithms: the right-hand side is the planar articulated-body
// algorithm, O(N) (docs/performance.md), up to 2000 links.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "chain.hpp"
#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// The largest chains each form accepts (see above).
inline constexpr int kChainReducedEnergyMax = 200;
inline constexpr int kChainReducedMax = 2000;

/// The energy form (hand-written energies).
Problem ChainReducedProblem(int n);
/// Either form (kAuto: the recursive one from mb::kAutoRecursiveVelocities
/// links). @throws std::invalid_argument for n < 1, n above the
/// form's limit (the message names --dynamics recursive for the energy
/// form).
Problem ChainReducedProblem(int n, mb::DynamicsForm form);

/// Tip of the reduced chain from its joint angles.
inline Eigen::Vector2d ChainReducedTip(const Eigen::VectorXd& q,
                                       double length = 1.0) {
  const double l = length / static_cast<double>(q.size());
  double th = 0.0;
  Eigen::Vector2d tip(0.0, 0.0);
  for (Eigen::Index i = 0; i < q.size(); ++i) {
    th += q[i];
    tip += l * Eigen::Vector2d(std::sin(th), -std::cos(th));
  }
  return tip;
}

}  // namespace daedalus::problems
