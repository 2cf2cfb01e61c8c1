// Private to src/kkt: the state of SparseKktSolver (its Impl) and the
// helpers its paths share. The solver is spread over three sources by
// method: sparse_kkt.cpp (the public methods, the choice of method, the
// analysis and dispatch, and the sparse-cholesky and sparse-lu paths),
// sparse_schur.cpp (block-diagonal M: the block Schur complement) and
// sparse_redundant.cpp (dependent rows: SPQR and minimum-norm multipliers).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "daedalus/sparse_kkt.hpp"
#include "kkt/sparse_backend.hpp"

namespace daedalus {

namespace internal {

// Connected components of the graph of a symmetric pattern: the diagonal
// blocks of M up to a permutation.
std::vector<std::vector<int>> Components(const SparseMatrixD& M);

// Rows of J that depend on earlier ones, by rank-revealing sparse QR (SPQR)
// of J' with a threshold relative to the largest row norm of J.
std::vector<int> SparseDependentRows(const SparseMatrixD& J, double rel_tol);

// Whether A has the pattern recorded by CopyPattern (an analysis is redone
// only when the pattern changes).
inline bool SamePattern(const SparseMatrixD& A,
                        const std::vector<int>& outer,
                        const std::vector<int>& inner) {
  if (static_cast<size_t>(A.cols() + 1) != outer.size() ||
      static_cast<size_t>(A.nonZeros()) != inner.size())
    return false;
  return std::equal(outer.begin(), outer.end(), A.outerIndexPtr()) &&
         std::equal(inner.begin(), inner.end(), A.innerIndexPtr());
}

inline void CopyPattern(const SparseMatrixD& A,
                        std::vector<int>* outer,
                        std::vector<int>* inner) {
  outer->assign(A.outerIndexPtr(), A.outerIndexPtr() + A.cols() + 1);
  inner->assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
}

// ---- dense kernels for the small mass blocks of the schur path (also
// SolveMass).

// Cholesky L L' = A of a small k x k SPD matrix, row-major, in place (lower
// triangle), with the reciprocals of the diagonal of L stored on the
// diagonal (the solves multiply instead of dividing); false at a
// non-positive pivot. Reports the smallest and largest diagonal of L.
inline bool SmallCholesky(double* a, int k, double* dmin, double* dmax) {
  *dmin = HUGE_VAL;
  *dmax = 0.0;
  for (int j = 0; j < k; ++j) {
    double d = a[j * k + j];
    for (int p = 0; p < j; ++p) d -= a[j * k + p] * a[j * k + p];
    if (!(d > 0.0)) return false;
    d = std::sqrt(d);
    const double inv = 1.0 / d;
    a[j * k + j] = inv;
    *dmin = std::min(*dmin, d);
    *dmax = std::max(*dmax, d);
    for (int i = j + 1; i < k; ++i) {
      double s = a[i * k + j];
      for (int p = 0; p < j; ++p) s -= a[i * k + p] * a[j * k + p];
      a[i * k + j] = s * inv;
    }
  }
  return true;
}

// x <- L^-1 x (L from SmallCholesky).
inline void SmallForward(const double* L, int k, double* x) {
  for (int i = 0; i < k; ++i) {
    double s = x[i];
    for (int p = 0; p < i; ++p) s -= L[i * k + p] * x[p];
    x[i] = s * L[i * k + i];
  }
}

// x <- (L L')^-1 x.
inline void SmallSolve(const double* L, int k, double* x) {
  SmallForward(L, k, x);
  for (int i = k - 1; i >= 0; --i) {
    double s = x[i];
    for (int p = i + 1; p < k; ++p) s -= L[p * k + i] * x[p];
    x[i] = s * L[i * k + i];
  }
}

// Sparse L D L' of a symmetric matrix given by its upper triangle (CSC, rows
// sorted), in the order given (the caller applies a fill-reducing
// permutation once): symbolic analysis once per pattern, then an
// up-looking numeric factorization per call that reads the values in place
// (T. Davis's LDL algorithm, ACM TOMS 2005). Used for the Schur complement,
// whose per-call factorization CHOLMOD's general interface made a large
// share of a chain right-hand side.
class UpLookingLdl {
 public:
  // The symbolic pass runs the numeric algorithm's pattern logic once and
  // records, for each row k, the columns i of L that row k reaches (in the
  // order the elimination needs them) with the slot of L(k, i); the
  // numeric pass then replays that schedule without walking the
  // elimination tree.
  void Analyze(const SparseMatrixD& A);
  /// False unless every pivot is positive (the matrix is positive definite
  /// to working precision).
  bool Factorize(const SparseMatrixD& A);
  /// min D / max D (CHOLMOD's estimate for L D L').
  double Rcond() const;
  /// x <- A^-1 x.
  void Solve(double* x) const;

 private:
  int n_ = 0;
  std::vector<int> lp_, li_, sched_begin_, sched_col_, sched_slot_;
  std::vector<double> lx_, d_, y_;
};

}  // namespace internal

// --------------------------------------------------------------- Impl

struct SparseKktSolver::Impl {
  KktOptions opt;
  KktMethod method = KktMethod::kAuto;
  bool analysed = false;
  long factorizations = 0, analyses = 0;
  std::function<std::string(int)> names;
  std::function<std::string()> context;
  std::ostream* report_stream = &std::clog;
  std::vector<int> m_outer, m_inner, j_outer, j_inner;
  int nv = 0, nc = 0;

  // ---- schur (sparse_schur.cpp): one dense block per connected component
  // of M.
  struct Block {
    std::vector<int> coords;  // k
    std::vector<int> rows;    // m rows of J touching the block
    std::vector<int> m_src;   // k x k: index into M's values, or -1
    std::vector<int> s_slot;  // m x m (lower, i >= j): index into S's values
    std::vector<int> j_src;   // m x k: index into J's values, or -1
    std::vector<double> L;    // k x k Cholesky factor, row-major lower
  };
  std::vector<Block> blocks;
  std::vector<int> block_of, pos_in_block;  // per coordinate
  std::vector<int> j_local;                 // per J value: row in its block
  SparseMatrixD S;                          // nc x nc, lower triangle
  internal::Cholmod chol_s;
  // S permuted to CHOLMOD's fill-reducing order: Sp = P S P' (upper
  // triangle), row k of Sp is row s_perm[k] of S; factored in place by
  // ldl_sp.
  SparseMatrixD Sp;
  std::vector<int> s_perm;
  internal::UpLookingLdl ldl_sp;
  Eigen::VectorXd rp;
  std::vector<double> W;  // k x m scratch, column c = L^-1 J(row c, block)'
  double mass_pivot_ratio = 1.0;
  // M's values at the last block factorization: a constant mass matrix
  // (ConstantBodyMass) is factored once, not per solve.
  std::vector<double> m_factored;
  // True when the last solve was a successful Schur solve: y = J' lambda.
  bool y_is_reaction = false;

  // ---- sparse-cholesky (sparse_kkt.cpp)
  internal::Cholmod chol_m;
  std::vector<int> s_outer, s_inner;

  // ---- sparse-lu (sparse_kkt.cpp): K = [M -J'; J 0], values gathered from
  // M and J.
  SparseMatrixD K;
  std::vector<int> k_src;  // >= 0: M value; < 0: J value -(1 + idx)
  std::vector<double> k_sign;
  internal::Klu klu;

  // ---- redundancy (sparse_redundant.cpp)
  std::vector<int> dependent, independent;
  std::unique_ptr<SparseKktSolver> inner;
  // |M^-1 f| + |M^-1 J_i' lambda_i| at the last redundant Solve, when its
  // consistency check needed them (else empty): the accelerations that
  // cancel in vdot, a scale of that check.
  Eigen::VectorXd cancel_acc;
  internal::Cholmod chol_g;  // G = J_ind J_ind'
  std::vector<int> g_outer, g_inner;
  std::string report;

  Eigen::VectorXd z, r, y, w, rhs, sol;
  Eigen::VectorXd zero_f, scratch_v;  // MultiplierChange off the schur path
  Eigen::VectorXd f_ws, jv_ws;        // Solve(ws): f = Bu - h and J v

  // ---- Resolve: the last Solve, if it succeeded, left its factors in
  // place; J (nc x nv) is copied because Resolve is not given it (pattern
  // at Analyze, values at every successful Solve).
  bool solved = false;
  SparseMatrixD j_last;

  std::string RowName(int i) const {
    return names ? names(i) : "row " + std::to_string(i);
  }
  std::string Where() const { return context ? " at " + context() : ""; }

  // Solve's work: analysis when the pattern changed, the method's solve,
  // and the redundant fallback.
  void Dispatch(const SparseMatrixD& M,
                const SparseMatrixD& J,
                const Eigen::Ref<const Eigen::VectorXd>& f,
                const Eigen::Ref<const Eigen::VectorXd>& bias,
                Eigen::Ref<Eigen::VectorXd> vdot,
                Eigen::Ref<Eigen::VectorXd> lambda);
  void Analyze(const SparseMatrixD& M, const SparseMatrixD& J);
  void AnalyzeSchur(const SparseMatrixD& M, const SparseMatrixD& J);
  void AnalyzeLu(const SparseMatrixD& M, const SparseMatrixD& J);
  // The core solves return false when the constraint part is singular
  // (dependent rows); a singular M throws.
  bool SolveSchur(const SparseMatrixD& M,
                  const SparseMatrixD& J,
                  const Eigen::Ref<const Eigen::VectorXd>& f,
                  const Eigen::Ref<const Eigen::VectorXd>& bias,
                  Eigen::Ref<Eigen::VectorXd> vdot,
                  Eigen::Ref<Eigen::VectorXd> lambda);
  bool SolveCholesky(const SparseMatrixD& M,
                     const SparseMatrixD& J,
                     const Eigen::Ref<const Eigen::VectorXd>& f,
                     const Eigen::Ref<const Eigen::VectorXd>& bias,
                     Eigen::Ref<Eigen::VectorXd> vdot,
                     Eigen::Ref<Eigen::VectorXd> lambda);
  bool SolveLu(const SparseMatrixD& M,
               const SparseMatrixD& J,
               const Eigen::Ref<const Eigen::VectorXd>& f,
               const Eigen::Ref<const Eigen::VectorXd>& bias,
               Eigen::Ref<Eigen::VectorXd> vdot,
               Eigen::Ref<Eigen::VectorXd> lambda);
  void SolveRedundant(const SparseMatrixD& M,
                      const SparseMatrixD& J,
                      const Eigen::Ref<const Eigen::VectorXd>& f,
                      const Eigen::Ref<const Eigen::VectorXd>& bias,
                      Eigen::Ref<Eigen::VectorXd> vdot,
                      Eigen::Ref<Eigen::VectorXd> lambda);
  // The solves with the factors in place, shared by Solve and Resolve (J
  // is the caller's matrix in Solve, j_last in Resolve). SchurSolves
  // starts from z = M^-1 f.
  void SchurSolves(const SparseMatrixD& J,
                   const Eigen::Ref<const Eigen::VectorXd>& bias,
                   Eigen::Ref<Eigen::VectorXd> vdot,
                   Eigen::Ref<Eigen::VectorXd> lambda);
  void CholeskySolves(const SparseMatrixD& J,
                      const Eigen::Ref<const Eigen::VectorXd>& f,
                      const Eigen::Ref<const Eigen::VectorXd>& bias,
                      Eigen::Ref<Eigen::VectorXd> vdot,
                      Eigen::Ref<Eigen::VectorXd> lambda);
  void LuSolves(const Eigen::Ref<const Eigen::VectorXd>& f,
                const Eigen::Ref<const Eigen::VectorXd>& bias,
                Eigen::Ref<Eigen::VectorXd> vdot,
                Eigen::Ref<Eigen::VectorXd> lambda);
  // After the inner solve on the independent rows Ji (multipliers li):
  // lambda, the consistency of the dependent rows and the minimum-norm
  // multipliers; factor_g: factor G = Ji Ji' (false: reuse its factor);
  // M, f: Solve's (Resolve: none, the last Solve's cancel_acc serves).
  void FinishRedundant(const SparseMatrixD& J,
                       const SparseMatrixD& Ji,
                       const Eigen::Ref<const Eigen::VectorXd>& bias,
                       const Eigen::VectorXd& li,
                       Eigen::Ref<Eigen::VectorXd> vdot,
                       Eigen::Ref<Eigen::VectorXd> lambda,
                       bool factor_g,
                       const SparseMatrixD* M = nullptr,
                       const Eigen::Ref<const Eigen::VectorXd>* f = nullptr);
  // Resolve's paths (cholesky and lu call their *Solves directly).
  void ResolveSchur(const Eigen::Ref<const Eigen::VectorXd>& f,
                    const Eigen::Ref<const Eigen::VectorXd>& bias,
                    Eigen::Ref<Eigen::VectorXd> vdot,
                    Eigen::Ref<Eigen::VectorXd> lambda);
  void ResolveRedundant(const Eigen::Ref<const Eigen::VectorXd>& f,
                        const Eigen::Ref<const Eigen::VectorXd>& bias,
                        Eigen::Ref<Eigen::VectorXd> vdot,
                        Eigen::Ref<Eigen::VectorXd> lambda);
  [[noreturn]] void ThrowDependent(const SparseMatrixD& J,
                                   const std::vector<int>& dep) const;
  [[noreturn]] void ThrowSingularMass(const std::vector<int>& coords) const;
};

}  // namespace daedalus
