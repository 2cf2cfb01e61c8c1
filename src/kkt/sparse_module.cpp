// The shared module libdaedalus_sparse.so: CHOLMOD, KLU, SPQR and
// SUNDIALS's KLU linear solver behind kkt/sparse_backend.hpp. It is the
// only code of Daedalus that links the SuiteSparse stack; libdaedalus.a
// loads it on the first sparse factorization (kkt/sparse_backend.cpp).
// It uses nothing of libdaedalus, so that it loads into any executable
// built with the same Daedalus.
#include <cholmod.h>
#include <klu.h>
#include <sunlinsol/sunlinsol_klu.h>

#include <Eigen/SPQRSupport>
#include <stdexcept>
#include <string>

#include "kkt/sparse_backend.hpp"

namespace daedalus::internal {
namespace {

// CHOLMOD view of a compressed column-major matrix (no copy).
cholmod_sparse CholmodView(const SparseMatrixD& A, int stype) {
  cholmod_sparse s{};
  s.nrow = static_cast<size_t>(A.rows());
  s.ncol = static_cast<size_t>(A.cols());
  s.nzmax = static_cast<size_t>(A.nonZeros());
  s.p = const_cast<int*>(A.outerIndexPtr());
  s.i = const_cast<int*>(A.innerIndexPtr());
  s.nz = nullptr;
  s.x = const_cast<double*>(A.valuePtr());
  s.z = nullptr;
  s.stype = stype;
  s.itype = CHOLMOD_INT;
  s.xtype = CHOLMOD_REAL;
  s.dtype = CHOLMOD_DOUBLE;
  s.sorted = 1;
  s.packed = 1;
  return s;
}

cholmod_dense CholmodDenseView(const double* x, size_t n) {
  cholmod_dense d{};
  d.nrow = n;
  d.ncol = 1;
  d.nzmax = n;
  d.d = n;
  d.x = const_cast<double*>(x);
  d.z = nullptr;
  d.xtype = CHOLMOD_REAL;
  d.dtype = CHOLMOD_DOUBLE;
  return d;
}

// Analyze once per pattern, Factorize per call (numeric only), Solve with
// reused workspace.
class CholmodImpl final : public CholmodFactor {
 public:
  CholmodImpl() {
    cholmod_start(&c_);
    c_.print = 0;  // failures are reported by the caller, not printed
  }
  ~CholmodImpl() override {
    Free();
    cholmod_finish(&c_);
  }
  CholmodImpl(const CholmodImpl&) = delete;
  CholmodImpl& operator=(const CholmodImpl&) = delete;

  void Analyze(const SparseMatrixD& lower) override {
    Free();
    n_ = static_cast<size_t>(lower.rows());
    cholmod_sparse a = CholmodView(lower, -1);
    L_ = cholmod_analyze(&a, &c_);
    if (L_ == nullptr)
      throw std::runtime_error("CHOLMOD symbolic analysis failed (status " +
                               std::to_string(c_.status) + ")");
  }
  std::vector<int> Ordering(const SparseMatrixD& lower) override {
    Analyze(lower);
    const auto* p = static_cast<const int*>(L_->Perm);
    std::vector<int> perm(p, p + n_);
    Free();
    return perm;
  }
  bool Factorize(const SparseMatrixD& lower) override {
    cholmod_sparse a = CholmodView(lower, -1);
    const int ok = cholmod_factorize(&a, L_, &c_);
    return ok && c_.status == CHOLMOD_OK && L_->minor == L_->n;
  }
  double Rcond() override { return cholmod_rcond(L_, &c_); }
  void Solve(const Eigen::Ref<const Eigen::VectorXd>& b,
             Eigen::Ref<Eigen::VectorXd> x) override {
    bb_ = b;  // contiguous copy (storage reused across solves)
    cholmod_dense B = CholmodDenseView(bb_.data(), n_);
    if (!cholmod_solve2(CHOLMOD_A, L_, &B, nullptr, &X_, nullptr, &Y_, &E_,
                        &c_))
      throw std::runtime_error("CHOLMOD solve failed");
    x = Eigen::Map<const Eigen::VectorXd>(static_cast<double*>(X_->x),
                                          static_cast<Eigen::Index>(n_));
  }
  SparseMatrixD SolveSparse(const SparseMatrixD& B) override {
    cholmod_sparse b = CholmodView(B, 0);
    cholmod_sparse* x = cholmod_spsolve(CHOLMOD_A, L_, &b, &c_);
    if (x == nullptr) throw std::runtime_error("CHOLMOD sparse solve failed");
    const auto* p = static_cast<const int*>(x->p);
    const auto* i = static_cast<const int*>(x->i);
    const auto* v = static_cast<const double*>(x->x);
    const Eigen::Map<const SparseMatrixD> view(
        static_cast<Eigen::Index>(x->nrow), static_cast<Eigen::Index>(x->ncol),
        static_cast<Eigen::Index>(p[x->ncol]), p, i, v);
    SparseMatrixD out = view;
    cholmod_free_sparse(&x, &c_);
    return out;
  }

 private:
  void Free() {
    if (L_) cholmod_free_factor(&L_, &c_);
    if (X_) cholmod_free_dense(&X_, &c_);
    if (Y_) cholmod_free_dense(&Y_, &c_);
    if (E_) cholmod_free_dense(&E_, &c_);
  }
  cholmod_common c_{};
  cholmod_factor* L_ = nullptr;
  cholmod_dense *X_ = nullptr, *Y_ = nullptr, *E_ = nullptr;
  Eigen::VectorXd bb_;
  size_t n_ = 0;
};

class KluImpl final : public KluFactor {
 public:
  KluImpl() {
    klu_defaults(&c_);
    c_.halt_if_singular = 1;
  }
  ~KluImpl() override { Free(); }
  KluImpl(const KluImpl&) = delete;
  KluImpl& operator=(const KluImpl&) = delete;

  void Analyze(const SparseMatrixD& A) override {
    Free();
    n_ = static_cast<int>(A.rows());
    sym_ = klu_analyze(n_, const_cast<int*>(A.outerIndexPtr()),
                       const_cast<int*>(A.innerIndexPtr()), &c_);
    if (sym_ == nullptr)
      throw std::runtime_error("KLU symbolic analysis failed (status " +
                               std::to_string(c_.status) + ")");
  }
  bool Factor(const SparseMatrixD& A, double rcond_min) override {
    int* ap = const_cast<int*>(A.outerIndexPtr());
    int* ai = const_cast<int*>(A.innerIndexPtr());
    double* ax = const_cast<double*>(A.valuePtr());
    if (num_ != nullptr) {
      // Same pivot sequence as before; redo the pivoting if it degraded.
      if (klu_refactor(ap, ai, ax, sym_, num_, &c_) && c_.status == KLU_OK &&
          klu_rcond(sym_, num_, &c_) && c_.rcond > rcond_min)
        return true;
      klu_free_numeric(&num_, &c_);
    }
    num_ = klu_factor(ap, ai, ax, sym_, &c_);
    if (num_ == nullptr || c_.status != KLU_OK) {
      if (num_) klu_free_numeric(&num_, &c_);
      return false;
    }
    klu_rcond(sym_, num_, &c_);
    return c_.rcond > rcond_min;
  }
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) override {
    *x = b;
    if (!klu_solve(sym_, num_, n_, 1, x->data(), &c_))
      throw std::runtime_error("KLU solve failed");
  }

 private:
  void Free() {
    if (num_) klu_free_numeric(&num_, &c_);
    if (sym_) klu_free_symbolic(&sym_, &c_);
  }
  klu_common c_{};
  klu_symbolic* sym_ = nullptr;
  klu_numeric* num_ = nullptr;
  int n_ = 0;
};

class Backend final : public SparseBackend {
 public:
  std::unique_ptr<CholmodFactor> NewCholmod() const override {
    return std::make_unique<CholmodImpl>();
  }
  std::unique_ptr<KluFactor> NewKlu() const override {
    return std::make_unique<KluImpl>();
  }
  bool QrRank(const SparseMatrixD& A,
              double pivot_threshold,
              int* rank,
              std::vector<int>* perm) const override {
    Eigen::SPQR<SparseMatrixD> qr;
    qr.setPivotThreshold(pivot_threshold);
    qr.compute(A);
    if (qr.info() != Eigen::Success) return false;
    *rank = static_cast<int>(qr.rank());
    const auto p = qr.colsPermutation();
    perm->assign(p.indices().data(), p.indices().data() + p.size());
    return true;
  }
  SUNLinearSolver NewKluLinearSolver(N_Vector y,
                                     SUNMatrix A,
                                     SUNContext ctx) const override {
    return SUNLinSol_KLU(y, A, ctx);
  }
};

}  // namespace
}  // namespace daedalus::internal

extern "C" __attribute__((visibility("default")))
const daedalus::internal::SparseBackend*
daedalus_sparse_backend(int abi) {
  static const daedalus::internal::Backend backend;
  return abi == daedalus::internal::kSparseModuleAbi ? &backend : nullptr;
}
