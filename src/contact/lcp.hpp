// The one-step problem of the contact stage (docs/contact.md, "The
// LCPs"): the linear complementarity problem
//
//   w = A z + q,   w >= 0,   z >= 0,   w' z = 0,
//
// with A (n x n) the Delassus operator J_C W J_C' of the candidate
// contacts (symmetric positive semidefinite; definite when the contact
// normals are independent) and q the free normal accelerations (the
// acceleration LCP) or the Newton-law velocities (the impulse LCP).
//
// Solved by enumeration of the complementary index sets for n <= 12 (at
// most 4096 principal systems; exact, and it finds the solution of a
// semidefinite A that a pivoting rule may cycle on), by Murty's
// least-index principal pivoting above (finite for a P-matrix: Murty,
// "Note on a Bard-type scheme for solving the complementarity problem",
// Opsearch 11, 1974). Acceptance: every component of min(w, z) within
// `tol` of 0 in absolute value and w, z >= -tol, where tol = kLcpTolerance
// times the problem's scale (|A| |z| + |q|, max-norm): 1e-10 is far above
// the round-off of the small dense solves (about 1e-15 relative) and far
// below any physical normal acceleration or velocity the runs resolve.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

namespace daedalus::internal {

inline constexpr double kLcpTolerance = 1e-10;
/// Above this size the enumeration gives way to principal pivoting.
inline constexpr int kLcpEnumerationMax = 12;

struct LcpSolution {
  bool solved = false;
  Eigen::VectorXd z, w;
  /// max |min(w_i, z_i)| and the negative parts of w and z (max-norm).
  double residual = 0.0;
  /// The tolerance the solution was accepted at (absolute).
  double tolerance = 0.0;
  std::string method;  ///< "enumeration" or "principal pivoting"
  /// Principal systems solved.
  int systems = 0;
};

/// Solves the LCP (A, q). `prefer_zero` (n, or empty) breaks ties of a
/// degenerate problem: among the index sets that solve it, the enumeration
/// first tries those that leave the flagged components out of the support
/// (z_i = 0), then the smaller supports. Never throws; `solved` false when
/// no complementary solution exists to the tolerance (the caller names
/// the contacts).
LcpSolution SolveLcp(const Eigen::MatrixXd& A,
                     const Eigen::VectorXd& q,
                     const std::vector<bool>& prefer_zero = {});

}  // namespace daedalus::internal
