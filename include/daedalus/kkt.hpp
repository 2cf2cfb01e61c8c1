// The KKT acceleration/multiplier solve (docs/conventions.md):
//
//   [ M  -J' ] [ vdot   ]   [ B u - h ]
//   [ J   0  ] [ lambda ] = [   -b    ]
//
// M: nv x nv mass matrix, J: nc x nv constraint Jacobian, b: nc bias with
// J vdot + b = 0. Seed 000 writes the first row as  Q - c - G.
// The generalized reaction is J' lambda and the power of constraint i is
// lambda_i (J_i v).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"

namespace daedalus {

/// How the KKT system is solved (docs/conventions.md, docs/performance.md).
/// The sparse methods run on the sparse path (sparse_kkt.hpp); KktSolver,
/// which works on dense matrices, runs each as its dense counterpart
/// (schur and sparse-cholesky as kSchur, sparse-lu as kFullLu).
enum class KktMethod {
  kSchur,           ///< "dense": Cholesky of M, then of J M^-1 J'
  kFullLu,          ///< "full-lu": dense LU of the whole (nv+nc) system
  kAuto,            ///< "auto": chosen by size and structure (default)
  kSparseSchur,     ///< "schur": J M^-1 J' by CHOLMOD, M block diagonal
  kSparseLu,        ///< "sparse-lu": KLU on the whole augmented system
  kSparseCholesky,  ///< "sparse-cholesky": CHOLMOD on M, then on J M^-1 J'
  kQr,  ///< "qr": rank-revealing; redundant constraints get minimum-norm
        ///< multipliers (dense: complete orthogonal decomposition; sparse:
        ///< SPQR on J')
};
const char* ToString(KktMethod m);
/// @throws std::invalid_argument listing the valid names.
KktMethod KktMethodFromString(const std::string& s);
/// True for the methods that run on the sparse path.
bool IsSparseMethod(KktMethod m);

struct KktOptions {
  KktMethod method = KktMethod::kAuto;
  /// Redundant (linearly dependent but consistent) constraints: false makes
  /// them a KktError naming the dependent rows; true solves for the unique
  /// accelerations with the minimum-norm multipliers and reports the
  /// dependent rows once (kQr always does). Contradictory constraints are
  /// an error either way.
  bool allow_redundant = false;
  /// Relative threshold of the rank decision for J: singular values (pivots
  /// of the rank-revealing factorization) below rank_tolerance times the
  /// largest count as zero. 1e-6 = sqrt(singular_tolerance) matches the
  /// point where the Schur complement J M^-1 J' (whose singular values are
  /// those of J squared) is declared singular, so the two decisions agree;
  /// it is far above round-off, above the O(drift) singular values of a
  /// redundant mechanism slightly off its manifold, and below those of a
  /// well-posed mechanism away from a singular configuration.
  double rank_tolerance = 1e-6;
  /// Consistency of dependent rows: the residual of the dependent equations
  /// at the minimum-norm solution, relative to the size of the right-hand
  /// side, above which the constraints are contradictory. sqrt(eps) ~ 1.5e-8
  /// accepts the round-off of consistent rows and the O(drift) mismatch of
  /// a redundant mechanism slightly off its manifold; a true contradiction
  /// is O(1).
  double consistency_tolerance = 1.5e-8;
  /// Compute rank(J) and condition estimates on every solve (costs an SVD
  /// of J; off in the integrator's inner loop).
  bool compute_health = false;
  /// Relative threshold below which a pivot of M or of the Schur complement
  /// counts as zero: 1e-12 sits well above round-off (~1e-16 times the
  /// condition) and far below any physically meaningful inertia ratio.
  double singular_tolerance = 1e-12;
};

struct KktHealth {
  int rank_J = -1;            ///< numerical rank of J (-1: not computed)
  double rcond_M = -1.0;      ///< reciprocal condition estimate of M
  double rcond_schur = -1.0;  ///< same for J M^-1 J'
  double min_eig_M = 0.0;     ///< smallest eigenvalue of M (health only)
  double sigma_min_J = 0.0;   ///< smallest singular value of J
  /// Rows found dependent (redundant constraints solved with minimum-norm
  /// multipliers); empty when J has full row rank.
  std::vector<int> dependent_rows;
};

struct KktResult {
  Eigen::VectorXd vdot;      ///< nv accelerations
  Eigen::VectorXd lambda;    ///< nc multipliers
  Eigen::VectorXd reaction;  ///< nv generalized reaction J' lambda
  Eigen::VectorXd power;     ///< nc per-row constraint power lambda_i J_i v
  KktHealth health;
};

/// Thrown when M is singular or J is rank deficient; the message names the
/// state and the constraints involved.
class KktError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Solves KKT systems for one model; holds the factorizations so that
/// their storage is reused from call to call.
class KktSolver {
 public:
  explicit KktSolver(const Model& model, KktOptions options = KktOptions());

  const KktOptions& options() const { return options_; }

  /// Solves at the state held by `ws` (all stages evaluated). `bias`
  /// overrides ws.bias (stabilized formulations); pass ws.bias otherwise.
  /// @throws KktError for a singular M or rank-deficient J.
  void Solve(const Workspace& ws,
             const Eigen::Ref<const Eigen::VectorXd>& bias,
             KktResult* out);

  /// Solves M x = rhs with the factorization of M from the last Solve.
  void SolveMass(const Eigen::Ref<const Eigen::VectorXd>& rhs,
                 Eigen::Ref<Eigen::VectorXd> x) const;

  /// The dependent rows found by the last solve that met redundant
  /// constraints (empty otherwise).
  const std::vector<int>& dependent_rows() const;

 private:
  struct Impl;
  KktOptions options_;
  std::shared_ptr<Impl> impl_;
};

/// Rows of J (nc x nv) that depend linearly on the others, by column-pivoted
/// QR of J' with relative threshold `tol` (empty when J has full row rank).
std::vector<int> DependentRows(const Eigen::MatrixXd& J, double tol = 1e-10);

/// Convenience: evaluates all stages at (t, q, v) and solves.
KktResult SolveKktAt(Workspace* ws,
                     double t,
                     const Eigen::VectorXd& q,
                     const Eigen::VectorXd& v,
                     const KktOptions& options = KktOptions());

}  // namespace daedalus
