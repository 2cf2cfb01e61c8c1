// The one-step frictional contact problem of Moreau-Jean time stepping
// (moreau_jean.hpp, docs/moreau_jean.md) and its solver: on the local
// velocities u = W P + q of the step's active rows (W = J M^-1 J', the
// Delassus operator, symmetric positive semidefinite),
//
//   bilateral row:          u = 0                         (P free)
//   frictionless contact:   u_n >= 0,  P_n >= 0,  u_n P_n = 0
//   contact with friction:  Coulomb's law on the isotropic second-order
//                           cone |P_t| <= mu P_n (1 or 2 tangential rows):
//                           take-off (P = 0, u_n >= 0), stick (u = 0,
//                           |P_t| <= mu_s P_n) or slip (u_n = 0, P_t =
//                           -mu_k P_n u_t / |u_t|, |P_t| = mu_k P_n),
//
// with Newton's law folded into q (q_n = u_n,free + e u_n-: the target
// u_n+ + e u_n- >= 0). Solved by projected (block) Gauss-Seidel over the
// rows and contacts, each contact's local problem solved exactly
// (LocalConeSolve), after Jean, "The non-smooth contact dynamics method"
// (Comput. Methods Appl. Mech. Engrg. 177, 1999) and Acary and Brogliato,
// "Numerical Methods for Nonsmooth Dynamical Systems" (Springer 2008),
// chapter 12 (Siconos's NSGS).
#pragma once

#include <Eigen/Core>
#include <vector>

namespace daedalus::internal {

/// One block of unknowns: a bilateral row, or a contact (its normal row
/// first, then 0, 1 or 2 tangential rows).
struct ConeBlock {
  bool contact = false;
  int start = 0;  ///< first unknown
  int size = 1;   ///< 1, or 2 (planar friction) / 3 (cone) for a contact
  double mu_static = 0.0, mu_kinetic = 0.0;
};

struct ConeProblem {
  Eigen::MatrixXd W;  ///< m x m
  Eigen::VectorXd q;  ///< m: the free local velocities (normal rows shifted)
  std::vector<ConeBlock> blocks;
};

struct ConeSolution {
  Eigen::VectorXd P;  ///< m
  int iterations = 0;
  /// The last sweep's largest local velocity change max_i |W_ii dP_i|,
  /// over the velocity scale: 0 at an exact solution (a fixed point of
  /// the sweep).
  double residual = 0.0;
  bool converged = false;
};

/// Projected Gauss-Seidel from `warm` (m, or empty for zero) until a sweep
/// changes no block's local velocity by more than tol * scale, or
/// max_iter sweeps.
ConeSolution SolveCone(const ConeProblem& p,
                       const Eigen::VectorXd& warm,
                       double scale,
                       double tol,
                       int max_iter);

/// The exact solution of one contact's local problem u = W P + q (W k x
/// k, k = 2 or 3: normal first): take-off when q_n >= 0, else stick when
/// the impulse that makes u = 0 lies in the cone of mu_static, else slip
/// on the cone of mu_kinetic (the root alpha >= 0 of |P_t(alpha)| =
/// mu_k P_n(alpha) with (S + alpha I) P_t = r, S the tangential Schur
/// complement, found by bracketing and bisection to round-off).
Eigen::VectorXd LocalConeSolve(const Eigen::MatrixXd& W,
                               const Eigen::VectorXd& q,
                               double mu_static,
                               double mu_kinetic);

}  // namespace daedalus::internal
