// Sparse KKT solvers (docs/conventions.md for the system, docs/performance.md
// for the choice):
//
//   [ M  -J' ] [ vdot   ]   [ f  ]      f = B u - h
//   [ J   0  ] [ lambda ] = [ -b ]
//
// with M (nv x nv, both triangles stored) and J (nc x nv) sparse:
//   schur            M block diagonal (blocks found from its pattern):
//                    dense Cholesky per block, S = J M^-1 J' assembled in a
//                    fixed pattern, CHOLMOD on S;
//   sparse-cholesky  any sparse SPD M: CHOLMOD on M, S = J M^-1 J' by a
//                    sparse solve, CHOLMOD on S;
//   sparse-lu        KLU on the whole augmented matrix;
//   qr               redundant constraints: dependent rows of J by SPQR on J'
//                    (once), the system solved on the independent rows, the
//                    dependent rows checked for consistency, and the
//                    multipliers made minimum-norm.
// Every path analyses the pattern (symbolic factorization) at the first
// solve and refactorizes numerically afterwards; Resolve reuses the last
// factorization for new right-hand sides. No SuiteSparse type appears
// here; the factorizations live behind a pointer.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "daedalus/kkt.hpp"
#include "daedalus/sparse_dynamics.hpp"

namespace daedalus {

/// The method `requested` resolves to for a system with this M and J: auto
/// gives dense below kDenseBelowNv velocities; schur when M has several
/// diagonal blocks (bodies) of at most kMaxSchurBlock coordinates;
/// otherwise dense for a mostly full M and sparse-lu for a sparse one.
KktMethod ResolveKktMethod(KktMethod requested,
                           const SparseMatrixD& M,
                           const SparseMatrixD& J);
/// Crossover of the auto choice, measured by bench/chain_bench.cpp
/// (docs/performance.md): the sparse Schur solve of the chain is faster
/// than the dense one from nv = 6 (N = 2 bodies) on.
inline constexpr int kDenseBelowNv = 6;
/// Largest mass block the schur path factors densely.
inline constexpr int kMaxSchurBlock = 64;

/// Sparse KKT solver for one pattern of M and J.
class SparseKktSolver {
 public:
  /// options.method: kAuto, kSparseSchur, kSparseLu, kSparseCholesky or kQr.
  explicit SparseKktSolver(KktOptions options = KktOptions());
  ~SparseKktSolver();
  SparseKktSolver(SparseKktSolver&&) noexcept;
  SparseKktSolver& operator=(SparseKktSolver&&) noexcept;

  /// Solves the system above into vdot (nv) and lambda (nc).
  /// @throws KktError for a singular M, dependent rows (unless redundancy is
  /// allowed) or contradictory rows, naming them through row_names.
  void Solve(const SparseMatrixD& M,
             const SparseMatrixD& J,
             const Eigen::Ref<const Eigen::VectorXd>& f,
             const Eigen::Ref<const Eigen::VectorXd>& bias,
             Eigen::Ref<Eigen::VectorXd> vdot,
             Eigen::Ref<Eigen::VectorXd> lambda);

  /// Solves at the state of `ws` (all stages evaluated) with bias `bias`
  /// (nc); fills vdot, lambda, reaction J' lambda and per-row power.
  void Solve(const SparseWorkspace& ws,
             const Eigen::Ref<const Eigen::VectorXd>& bias,
             KktResult* out);

  /// Solves the same KKT system as the last successful Solve (the same M
  /// and J values) for new right-hand sides f (nv) and bias (nc), into vdot
  /// (nv) and lambda (nc), reusing that solve's factorizations; no method
  /// refactors:
  ///   schur            the block Cholesky factors of M and the L D L'
  ///                    factor of S = J M^-1 J' (no allocation);
  ///   sparse-cholesky  the CHOLMOD factors of M and S (CHOLMOD's solves
  ///                    allocate work space on every call);
  ///   sparse-lu        the KLU factors of the augmented matrix (no
  ///                    allocation);
  ///   qr (and the redundant fallback of the others) the inner solver's
  ///                    factors on the independent rows and that of
  ///                    J_i J_i'; the consistency check of the dependent
  ///                    rows and the minimum-norm multipliers are redone
  ///                    (they allocate, as in Solve).
  /// The solver keeps a copy of J's values, so M and J need not outlive
  /// Solve.
  /// @pre M and J have the values of the last successful Solve.
  /// @throws std::logic_error if no Solve has succeeded yet or the last one
  /// threw; std::invalid_argument (a logic_error) if the sizes differ from
  /// that solve's nv and nc; KktError (qr) if the new bias makes the
  /// dependent rows contradictory.
  void Resolve(const Eigen::Ref<const Eigen::VectorXd>& f,
               const Eigen::Ref<const Eigen::VectorXd>& bias,
               Eigen::Ref<Eigen::VectorXd> vdot,
               Eigen::Ref<Eigen::VectorXd> lambda);

  /// The change of the multipliers when the bias changes by `dbias` and f
  /// stays: dlambda = -(J M^-1 J')^-1 dbias (minimum-norm on the
  /// independent rows with redundant constraints), by the factors of the
  /// last Solve. On the schur path one triangular solve pair with the
  /// factor of J M^-1 J' (no M solves, no accelerations): what the ideal
  /// multipliers of a Baumgarte run cost at every right-hand side. Other
  /// methods go through Resolve with f = 0.
  /// @pre as Resolve; @throws as Resolve.
  void MultiplierChange(const Eigen::Ref<const Eigen::VectorXd>& dbias,
                        Eigen::Ref<Eigen::VectorXd> dlambda);

  /// Solves M x = rhs with the mass factorization of the last solve
  /// (schur and sparse-cholesky; sparse-lu and qr factor M on demand).
  void SolveMass(const SparseMatrixD& M,
                 const Eigen::Ref<const Eigen::VectorXd>& rhs,
                 Eigen::Ref<Eigen::VectorXd> x);

  /// Names rows in error messages and the redundancy report.
  void SetRowNames(std::function<std::string(int)> names);
  /// Where errors say they happened (e.g. the model and its state).
  void SetContext(std::function<std::string()> context);

  /// Where the one-time redundancy report goes (std::clog by default;
  /// nullptr: only redundancy_report()).
  void SetReportStream(std::ostream* os);

  /// The method in use (auto resolved at the first solve).
  KktMethod method() const;
  /// Rows found dependent (redundant); empty when J has full row rank.
  const std::vector<int>& dependent_rows() const;
  /// The one-time report of dependent rows ("" if there were none).
  const std::string& redundancy_report() const;
  /// Numeric factorizations done and symbolic analyses done.
  long num_factorizations() const;
  long num_analyses() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace daedalus
