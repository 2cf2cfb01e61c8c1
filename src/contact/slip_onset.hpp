// The consistent direction of a slip that starts from rest on a 3D
// friction cone (docs/friction.md, "Slip onset"), for the friction stage.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// A contact slipping from rest: its two tangential rows and its slip
/// direction, updated in place.
struct SlipOnset {
  int rows[2] = {-1, -1};
  Eigen::Vector2d* dir = nullptr;
  std::string name;  // the contact's, for the error
};

/// Kinetic friction opposes the slip, so the tangential acceleration a_t =
/// J_t vdot + b_t in the slip mode is alpha d with alpha >= 0 for the
/// slip direction d. Starting from the directions given (the stick test's
/// -lambda_t), the fixed point d <- a_t / |a_t| (the consistent slip onset
/// of Pfeiffer and Glocker 1996, ch. 7): `apply` puts the directions into
/// `mech`'s mode after each update. At most 20 iterations, a direction
/// converged at 1 - cos < 1e-12 (round-off of a_t's direction); one whose
/// a_t vanishes is kept.
/// @throws std::runtime_error naming the contacts whose acceleration still
/// points against their direction after the iterations (no consistent
/// onset found: its friction would drive the slip).
void ConsistentOnsets(Mechanics* mech,
                      double t,
                      const Eigen::VectorXd& q,
                      const Eigen::VectorXd& v,
                      const std::vector<SlipOnset>& onsets,
                      const std::function<void()>& apply);

}  // namespace daedalus::internal
