// The SuiteSparse stack (CHOLMOD, KLU, SPQR, and SUNDIALS's KLU linear
// solver) behind one small interface, implemented in the shared module
// libdaedalus_sparse.so (kkt/sparse_module.cpp) and loaded on first use
// (model/dynamic_module.hpp). A problem that never takes a sparse path
// never maps KLU, CHOLMOD, METIS, LAPACK, BLAS, gfortran or OpenMP, so its
// process starts in a few milliseconds (docs/performance.md).
//
// Both sides are built by the same compiler from the same sources, so the
// interface passes Eigen and standard-library types; the ABI version below
// changes with any change to it, and a module of another version is
// refused with a message.
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nvector.h>

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "daedalus/sparse_dynamics.hpp"

namespace daedalus::internal {

/// Bumped with every change to the classes below.
inline constexpr int kSparseModuleAbi = 1;
/// The module's entry point: `extern "C" const SparseBackend*
/// daedalus_sparse_backend(int abi)`, null for another ABI version.
inline constexpr const char* kSparseModuleEntry = "daedalus_sparse_backend";

/// Sparse Cholesky L L' = P A P' of a symmetric positive definite matrix
/// given by its lower triangle (CHOLMOD).
class CholmodFactor {
 public:
  virtual ~CholmodFactor() = default;
  /// Symbolic analysis of the pattern; throws std::runtime_error.
  virtual void Analyze(const SparseMatrixD& lower) = 0;
  /// The fill-reducing permutation of the analysis (perm[k] = original
  /// index of row k); leaves no factor behind.
  virtual std::vector<int> Ordering(const SparseMatrixD& lower) = 0;
  /// Numeric factorization; false when not positive definite.
  virtual bool Factorize(const SparseMatrixD& lower) = 0;
  /// Rough reciprocal condition estimate (min/max diagonal of L, squared).
  virtual double Rcond() = 0;
  /// x = A^-1 b (n).
  virtual void Solve(const Eigen::Ref<const Eigen::VectorXd>& b,
                     Eigen::Ref<Eigen::VectorXd> x) = 0;
  /// X = A^-1 B for a sparse B (n x k).
  virtual SparseMatrixD SolveSparse(const SparseMatrixD& B) = 0;
};

/// Sparse LU of a square unsymmetric matrix (KLU: BTF + AMD ordering,
/// refactorization with the previous pivots while they stay good).
class KluFactor {
 public:
  virtual ~KluFactor() = default;
  virtual void Analyze(const SparseMatrixD& A) = 0;
  /// False when A is singular or its reciprocal condition estimate is
  /// below rcond_min.
  virtual bool Factor(const SparseMatrixD& A, double rcond_min) = 0;
  virtual void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) = 0;
};

/// What the module provides.
class SparseBackend {
 public:
  virtual ~SparseBackend() = default;
  virtual std::unique_ptr<CholmodFactor> NewCholmod() const = 0;
  virtual std::unique_ptr<KluFactor> NewKlu() const = 0;
  /// Rank-revealing sparse QR (SPQR) of A with the given pivot threshold:
  /// the numerical rank and the column permutation (perm[k] = original
  /// column of the k-th pivot column). False when SPQR fails.
  virtual bool QrRank(const SparseMatrixD& A,
                      double pivot_threshold,
                      int* rank,
                      std::vector<int>* perm) const = 0;
  /// SUNDIALS's KLU linear solver on the CSC matrix A (SUNLinSol_KLU);
  /// null when it cannot be created.
  virtual SUNLinearSolver NewKluLinearSolver(N_Vector y,
                                             SUNMatrix A,
                                             SUNContext ctx) const = 0;
};

/// The loaded module (loaded on the first call, thread-safe); throws
/// std::runtime_error naming the file, why it could not be loaded and how
/// to fix it.
const SparseBackend& SparseModule();

/// CHOLMOD through the module, loaded when first analysed: a member of a
/// solver that never runs costs nothing.
class Cholmod {
 public:
  void Analyze(const SparseMatrixD& lower) { get().Analyze(lower); }
  std::vector<int> Ordering(const SparseMatrixD& lower) {
    return get().Ordering(lower);
  }
  bool Factorize(const SparseMatrixD& lower) { return get().Factorize(lower); }
  double Rcond() { return get().Rcond(); }
  void Solve(const Eigen::Ref<const Eigen::VectorXd>& b,
             Eigen::Ref<Eigen::VectorXd> x) {
    get().Solve(b, x);
  }
  SparseMatrixD SolveSparse(const SparseMatrixD& B) {
    return get().SolveSparse(B);
  }

 private:
  CholmodFactor& get() {
    if (!impl_) impl_ = SparseModule().NewCholmod();
    return *impl_;
  }
  std::unique_ptr<CholmodFactor> impl_;
};

/// KLU through the module, loaded when first analysed.
class Klu {
 public:
  void Analyze(const SparseMatrixD& A) { get().Analyze(A); }
  bool Factor(const SparseMatrixD& A, double rcond_min) {
    return get().Factor(A, rcond_min);
  }
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) {
    get().Solve(b, x);
  }

 private:
  KluFactor& get() {
    if (!impl_) impl_ = SparseModule().NewKlu();
    return *impl_;
  }
  std::unique_ptr<KluFactor> impl_;
};

}  // namespace daedalus::internal
