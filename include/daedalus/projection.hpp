// Projection onto the constraint manifold (docs/formulations.md).
//
// Positions: Gauss-Newton in the mass metric,
//   q <- q - M^-1 J' (J M^-1 J')^-1 Phi(q, t),  repeated until |Phi| < tol;
// velocities: the M-orthogonal projection
//   v <- v - M^-1 J' (J M^-1 J')^-1 (J v + Phi_t).
// Nonholonomic rows take part in the velocity projection only.
#pragma once

#include <Eigen/Core>

#include "daedalus/dynamics.hpp"

namespace daedalus {

struct ProjectionResult {
  bool converged = false;
  int iterations = 0;
  double residual = 0.0;    ///< final max-norm of the projected residual
  double correction = 0.0;  ///< 2-norm of the total correction
};

/// Projects q (in place) onto Phi(q, t) = 0 for the holonomic rows.
/// Uses ws as scratch (its state is left at the projected q).
/// @throws KktError if M is singular or J rank deficient on the way.
ProjectionResult ProjectPositions(Workspace* ws,
                                  double t,
                                  Eigen::VectorXd* q,
                                  const Eigen::VectorXd& v,
                                  double tol,
                                  int max_iter);

/// Projects v (in place) onto J v + Phi_t = 0 (all rows) at (t, q).
ProjectionResult ProjectVelocities(Workspace* ws,
                                   double t,
                                   const Eigen::VectorXd& q,
                                   Eigen::VectorXd* v);

}  // namespace daedalus
