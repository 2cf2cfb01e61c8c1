#include "daedalus/sparse_kkt.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SPQRSupport>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numeric>
#include <sstream>

#include "kkt/suitesparse_util.hpp"

namespace daedalus {

namespace {

using internal::Cholmod;
using internal::Klu;

// Connected components of the graph of a symmetric pattern: the diagonal
// blocks of M up to a permutation.
std::vector<std::vector<int>> Components(const SparseMatrixD& M) {
  const int n = static_cast<int>(M.cols());
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  for (int c = 0; c < n; ++c)
    for (SparseMatrixD::InnerIterator it(M, c); it; ++it) {
      const int a = find(c), b = find(static_cast<int>(it.row()));
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  std::vector<int> id(static_cast<size_t>(n), -1);
  std::vector<std::vector<int>> blocks;
  for (int c = 0; c < n; ++c) {
    const int r = find(c);
    if (id[r] < 0) {
      id[r] = static_cast<int>(blocks.size());
      blocks.emplace_back();
    }
    blocks[id[r]].push_back(c);
  }
  return blocks;
}

size_t LargestBlock(const SparseMatrixD& M) {
  size_t k = 0;
  for (const auto& b : Components(M)) k = std::max(k, b.size());
  return k;
}

bool SamePattern(const SparseMatrixD& A,
                 const std::vector<int>& outer,
                 const std::vector<int>& inner) {
  if (static_cast<size_t>(A.cols() + 1) != outer.size() ||
      static_cast<size_t>(A.nonZeros()) != inner.size())
    return false;
  return std::equal(outer.begin(), outer.end(), A.outerIndexPtr()) &&
         std::equal(inner.begin(), inner.end(), A.innerIndexPtr());
}

void CopyPattern(const SparseMatrixD& A,
                 std::vector<int>* outer,
                 std::vector<int>* inner) {
  outer->assign(A.outerIndexPtr(), A.outerIndexPtr() + A.cols() + 1);
  inner->assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
}

// Rows of J that depend on earlier ones, by rank-revealing sparse QR (SPQR)
// of J' with a threshold relative to the largest row norm of J.
std::vector<int> SparseDependentRows(const SparseMatrixD& J, double rel_tol) {
  std::vector<int> dep;
  if (J.rows() == 0) return dep;
  const SparseMatrixD Jt = J.transpose();
  double max_norm = 0.0;
  for (int c = 0; c < Jt.cols(); ++c)
    max_norm = std::max(max_norm, Jt.col(c).norm());
  Eigen::SPQR<SparseMatrixD> qr;
  qr.setPivotThreshold(rel_tol * (max_norm > 0.0 ? max_norm : 1.0));
  qr.compute(Jt);
  if (qr.info() != Eigen::Success)
    throw KktError(
        "rank-revealing QR (SPQR) of the constraint Jacobian failed");
  const auto perm = qr.colsPermutation();
  for (Eigen::Index k = qr.rank(); k < J.rows(); ++k)
    dep.push_back(static_cast<int>(perm.indices()[k]));
  std::sort(dep.begin(), dep.end());
  return dep;
}

// Cholesky L L' = A of a small k x k SPD matrix, row-major, in place (lower
// triangle), with the reciprocals of the diagonal of L stored on the
// diagonal (the solves multiply instead of dividing); false at a
// non-positive pivot. Reports the smallest and largest diagonal of L.
bool SmallCholesky(double* a, int k, double* dmin, double* dmax) {
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
void SmallForward(const double* L, int k, double* x) {
  for (int i = 0; i < k; ++i) {
    double s = x[i];
    for (int p = 0; p < i; ++p) s -= L[i * k + p] * x[p];
    x[i] = s * L[i * k + i];
  }
}

// x <- (L L')^-1 x.
void SmallSolve(const double* L, int k, double* x) {
  SmallForward(L, k, x);
  for (int i = k - 1; i >= 0; --i) {
    double s = x[i];
    for (int p = i + 1; p < k; ++p) s -= L[p * k + i] * x[p];
    x[i] = s * L[i * k + i];
  }
}

// The same with the block size fixed at compile time when K > 0 (the loops
// unroll; 3 for a planar body, 6 for a spatial one), from k when K = 0.
template <int K>
void SmallForwardK(const double* L, int k, double* x) {
  const int n = K > 0 ? K : k;
  for (int i = 0; i < n; ++i) {
    double s = x[i];
    for (int p = 0; p < i; ++p) s -= L[i * n + p] * x[p];
    x[i] = s * L[i * n + i];
  }
}
template <int K>
void SmallSolveK(const double* L, int k, double* x) {
  const int n = K > 0 ? K : k;
  SmallForwardK<K>(L, n, x);
  for (int i = n - 1; i >= 0; --i) {
    double s = x[i];
    for (int p = i + 1; p < n; ++p) s -= L[p * n + i] * x[p];
    x[i] = s * L[i * n + i];
  }
}

// One block of the Schur assembly: z_b = M_b^-1 f_b and S += W' W with W =
// L^-1 J_b' (k x m, column c from row c of J_b; j_src maps it to J's
// values, s_slot the m x m lower triangle of W' W to S's values).
template <int K>
void SchurBlock(const int* coords,
                int k,
                int m,
                const double* L,
                const int* j_src,
                const int* s_slot,
                const double* jv,
                const double* f,
                double* z,
                double* Wd,
                double* sv) {
  const int n = K > 0 ? K : k;
  double zb[kMaxSchurBlock];
  for (int i = 0; i < n; ++i) zb[i] = f[coords[i]];
  SmallSolveK<K>(L, n, zb);
  for (int i = 0; i < n; ++i) z[coords[i]] = zb[i];
  if (m == 0) return;
  for (int e = 0; e < n * m; ++e) Wd[e] = j_src[e] >= 0 ? jv[j_src[e]] : 0.0;
  for (int c = 0; c < m; ++c) SmallForwardK<K>(L, n, Wd + c * n);
  for (int a = 0; a < m; ++a)
    for (int c = 0; c <= a; ++c) {
      double d = 0.0;
      for (int i = 0; i < n; ++i) d += Wd[a * n + i] * Wd[c * n + i];
      sv[s_slot[a * m + c]] += d;
    }
}

// vdot_b = z_b + M_b^-1 y_b.
template <int K>
void BlockAccel(const int* coords,
                int k,
                const double* L,
                const double* y,
                const double* z,
                double* vdot) {
  const int n = K > 0 ? K : k;
  double yb[kMaxSchurBlock];
  for (int i = 0; i < n; ++i) yb[i] = y[coords[i]];
  SmallSolveK<K>(L, n, yb);
  for (int i = 0; i < n; ++i) vdot[coords[i]] = z[coords[i]] + yb[i];
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
  void Analyze(const SparseMatrixD& A) {
    n_ = static_cast<int>(A.cols());
    const int* Ap = A.outerIndexPtr();
    const int* Ai = A.innerIndexPtr();
    std::vector<int> parent(n_, -1), lnz(n_, 0), flag(n_, -1);
    for (int k = 0; k < n_; ++k) {
      flag[k] = k;
      for (int p = Ap[k]; p < Ap[k + 1]; ++p)
        for (int i = Ai[p]; i < k && flag[i] != k; i = parent[i]) {
          if (parent[i] == -1) parent[i] = k;
          ++lnz[i];
          flag[i] = k;
        }
    }
    lp_.assign(n_ + 1, 0);
    for (int k = 0; k < n_; ++k) lp_[k + 1] = lp_[k] + lnz[k];
    li_.assign(lp_[n_], 0);
    lx_.assign(lp_[n_], 0.0);
    d_.assign(n_, 0.0);
    y_.assign(n_, 0.0);
    sched_begin_.assign(n_ + 1, 0);
    sched_col_.clear();
    sched_slot_.clear();
    std::vector<int> pattern(n_), filled(n_, 0);
    std::fill(flag.begin(), flag.end(), -1);
    for (int k = 0; k < n_; ++k) {
      int top = n_;
      flag[k] = k;
      for (int p = Ap[k]; p < Ap[k + 1]; ++p) {
        int i = Ai[p];
        if (i > k) continue;
        int len = 0;
        for (; flag[i] != k; i = parent[i]) {
          pattern[len++] = i;
          flag[i] = k;
        }
        while (len > 0) pattern[--top] = pattern[--len];
      }
      for (; top < n_; ++top) {
        const int i = pattern[top];
        const int slot = lp_[i] + filled[i]++;
        li_[slot] = k;
        sched_col_.push_back(i);
        sched_slot_.push_back(slot);
      }
      sched_begin_[k + 1] = static_cast<int>(sched_col_.size());
    }
  }
  /// False unless every pivot is positive (the matrix is positive definite
  /// to working precision).
  bool Factorize(const SparseMatrixD& A) {
    const int* Ap = A.outerIndexPtr();
    const int* Ai = A.innerIndexPtr();
    const double* Ax = A.valuePtr();
    double* y = y_.data();
    for (int k = 0; k < n_; ++k) {
      for (int p = Ap[k]; p < Ap[k + 1]; ++p)
        if (Ai[p] <= k) y[Ai[p]] += Ax[p];
      double dk = y[k];
      y[k] = 0.0;
      for (int s = sched_begin_[k]; s < sched_begin_[k + 1]; ++s) {
        const int i = sched_col_[s], slot = sched_slot_[s];
        const double yi = y[i];
        y[i] = 0.0;
        for (int p = lp_[i]; p < slot; ++p) y[li_[p]] -= lx_[p] * yi;
        const double lki = yi / d_[i];
        dk -= lki * yi;
        lx_[slot] = lki;
      }
      if (!(dk > 0.0)) {
        std::fill(y_.begin(), y_.end(), 0.0);
        return false;
      }
      d_[k] = dk;
    }
    return true;
  }
  /// min D / max D (CHOLMOD's estimate for L D L').
  double Rcond() const {
    if (n_ == 0) return 1.0;
    const auto [lo, hi] = std::minmax_element(d_.begin(), d_.end());
    return *hi > 0.0 ? *lo / *hi : 0.0;
  }
  /// x <- A^-1 x.
  void Solve(double* x) const {
    for (int j = 0; j < n_; ++j)
      for (int p = lp_[j]; p < lp_[j + 1]; ++p) x[li_[p]] -= lx_[p] * x[j];
    for (int j = 0; j < n_; ++j) x[j] /= d_[j];
    for (int j = n_ - 1; j >= 0; --j)
      for (int p = lp_[j]; p < lp_[j + 1]; ++p) x[j] -= lx_[p] * x[li_[p]];
  }

 private:
  int n_ = 0;
  std::vector<int> lp_, li_, sched_begin_, sched_col_, sched_slot_;
  std::vector<double> lx_, d_, y_;
};

SparseMatrixD SelectRows(const SparseMatrixD& J, const std::vector<int>& rows) {
  std::vector<int> map(static_cast<size_t>(J.rows()), -1);
  for (size_t i = 0; i < rows.size(); ++i) map[rows[i]] = static_cast<int>(i);
  std::vector<Eigen::Triplet<double, int>> t;
  for (int c = 0; c < J.cols(); ++c)
    for (SparseMatrixD::InnerIterator it(J, c); it; ++it)
      if (map[it.row()] >= 0) t.emplace_back(map[it.row()], c, it.value());
  SparseMatrixD S(static_cast<Eigen::Index>(rows.size()), J.cols());
  S.setFromTriplets(t.begin(), t.end());
  return S;
}

}  // namespace

// ----------------------------------------------------------- resolution

KktMethod ResolveKktMethod(KktMethod requested,
                           const SparseMatrixD& M,
                           const SparseMatrixD& J) {
  (void)J;
  if (requested != KktMethod::kAuto) return requested;
  if (M.cols() < kDenseBelowNv) return KktMethod::kSchur;
  // Declared structure: several small mass blocks (bodies).
  const std::vector<std::vector<int>> blocks = Components(M);
  size_t largest = 0;
  for (const auto& b : blocks) largest = std::max(largest, b.size());
  if (blocks.size() > 1 && largest <= static_cast<size_t>(kMaxSchurBlock))
    return KktMethod::kSparseSchur;
  // A mass matrix that is mostly full gains nothing from sparse storage.
  const double density = static_cast<double>(M.nonZeros()) /
                         (static_cast<double>(M.rows()) * M.cols());
  return density > 0.25 ? KktMethod::kSchur : KktMethod::kSparseLu;
}

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

  // ---- schur: one dense block per connected component of M.
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
  Cholmod chol_s;
  // S permuted to CHOLMOD's fill-reducing order: Sp = P S P' (upper
  // triangle), row k of Sp is row s_perm[k] of S; factored in place by
  // ldl_sp.
  SparseMatrixD Sp;
  std::vector<int> s_perm;
  UpLookingLdl ldl_sp;
  Eigen::VectorXd rp;
  std::vector<double> W;  // k x m scratch, column c = L^-1 J(row c, block)'
  double mass_pivot_ratio = 1.0;
  // M's values at the last block factorization: a constant mass matrix
  // (ConstantBodyMass) is factored once, not per solve.
  std::vector<double> m_factored;
  // True when the last solve was a successful Schur solve: y = J' lambda.
  bool y_is_reaction = false;

  // ---- sparse-cholesky
  Cholmod chol_m;
  std::vector<int> s_outer, s_inner;

  // ---- sparse-lu: K = [M -J'; J 0], values gathered from M and J.
  SparseMatrixD K;
  std::vector<int> k_src;  // >= 0: M value; < 0: J value -(1 + idx)
  std::vector<double> k_sign;
  Klu klu;

  // ---- redundancy
  std::vector<int> dependent, independent;
  std::unique_ptr<SparseKktSolver> inner;
  Cholmod chol_g;  // G = J_ind J_ind'
  std::vector<int> g_outer, g_inner;
  std::string report;

  Eigen::VectorXd z, r, y, w, rhs, sol;
  Eigen::VectorXd f_ws, jv_ws;  // Solve(ws): f = Bu - h and J v

  std::string RowName(int i) const {
    return names ? names(i) : "row " + std::to_string(i);
  }
  std::string Where() const { return context ? " at " + context() : ""; }

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
  [[noreturn]] void ThrowDependent(const SparseMatrixD& J,
                                   const std::vector<int>& dep) const;
  [[noreturn]] void ThrowSingularMass(const std::vector<int>& coords) const;
};

void SparseKktSolver::Impl::ThrowDependent(const SparseMatrixD& J,
                                           const std::vector<int>& dep) const {
  std::ostringstream os;
  os << "constraint Jacobian has rank "
     << J.rows() - static_cast<long>(dep.size()) << " < " << J.rows() << " rows"
     << Where() << "; dependent constraint rows:";
  for (int i : dep) os << " '" << RowName(i) << "'";
  os << " (each depends on the other rows). Remove the redundant constraints, "
        "solve with --kkt qr (minimum-norm multipliers), or move the "
        "mechanism away from a singular configuration";
  throw KktError(os.str());
}

void SparseKktSolver::Impl::ThrowSingularMass(
    const std::vector<int>& coords) const {
  std::ostringstream os;
  os << "mass matrix is singular or not positive definite" << Where();
  if (!coords.empty()) {
    os << " in the block of coordinates";
    for (size_t i = 0; i < coords.size() && i < 12; ++i) os << " " << coords[i];
    if (coords.size() > 12) os << " ...";
  }
  os << ". Check the kinetic energy: every coordinate needs inertia";
  throw KktError(os.str());
}

void SparseKktSolver::Impl::Analyze(const SparseMatrixD& M,
                                    const SparseMatrixD& J) {
  nv = static_cast<int>(M.cols());
  nc = static_cast<int>(J.rows());
  if (M.rows() != nv || J.cols() != nv)
    throw std::invalid_argument(
        "SparseKktSolver: M is " + std::to_string(M.rows()) + " x " +
        std::to_string(M.cols()) + " and J is " + std::to_string(J.rows()) +
        " x " + std::to_string(J.cols()));
  if (method == KktMethod::kAuto || !analysed) {
    method = ResolveKktMethod(opt.method, M, J);
    // A small system on the sparse path still runs sparse (the dense
    // solver works on a Workspace): auto picks by structure here.
    if (method == KktMethod::kSchur || method == KktMethod::kFullLu)
      method = LargestBlock(M) <= static_cast<size_t>(kMaxSchurBlock)
                   ? KktMethod::kSparseSchur
                   : KktMethod::kSparseLu;
  }
  CopyPattern(M, &m_outer, &m_inner);
  CopyPattern(J, &j_outer, &j_inner);
  z.resize(nv);
  y.resize(nv);
  w.resize(nv);
  r.resize(nc);
  dependent.clear();
  independent.clear();
  inner.reset();
  switch (method) {
    case KktMethod::kSparseSchur:
      AnalyzeSchur(M, J);
      break;
    case KktMethod::kSparseLu:
      AnalyzeLu(M, J);
      break;
    case KktMethod::kSparseCholesky: {
      SparseMatrixD lower = M.triangularView<Eigen::Lower>();
      chol_m.Analyze(lower);
      s_outer.clear();
      break;
    }
    case KktMethod::kQr:
      break;  // analysed on the independent rows in SolveRedundant
    default:
      throw std::logic_error("SparseKktSolver: unresolved method");
  }
  ++analyses;
  analysed = true;
}

void SparseKktSolver::Impl::AnalyzeSchur(const SparseMatrixD& M,
                                         const SparseMatrixD& J) {
  const std::vector<std::vector<int>> comp = Components(M);
  blocks.assign(comp.size(), Block());
  block_of.assign(static_cast<size_t>(nv), -1);
  pos_in_block.assign(static_cast<size_t>(nv), -1);
  size_t kmax = 0, mmax = 0;
  for (size_t b = 0; b < comp.size(); ++b) {
    Block& B = blocks[b];
    B.coords = comp[b];
    if (B.coords.size() > static_cast<size_t>(kMaxSchurBlock))
      throw std::invalid_argument(
          "--kkt schur needs a block-diagonal mass matrix (blocks of at most " +
          std::to_string(kMaxSchurBlock) + " coordinates); this one has a " +
          "block of " + std::to_string(B.coords.size()) +
          ". Use --kkt sparse-lu or sparse-cholesky, or declare the kinetic "
          "energy per body (KineticEnergyTerm/BodyMassMatrix)");
    const int k = static_cast<int>(B.coords.size());
    for (int i = 0; i < k; ++i) {
      block_of[B.coords[i]] = static_cast<int>(b);
      pos_in_block[B.coords[i]] = i;
    }
    B.m_src.assign(static_cast<size_t>(k * k), -1);
    for (int j = 0; j < k; ++j)
      for (int e = M.outerIndexPtr()[B.coords[j]];
           e < M.outerIndexPtr()[B.coords[j] + 1]; ++e)
        B.m_src[pos_in_block[M.innerIndexPtr()[e]] * k + j] = e;
    B.L.assign(static_cast<size_t>(k * k), 0.0);
    kmax = std::max(kmax, B.coords.size());
  }
  // Rows of J touching each block, and each J value's row in its block.
  j_local.assign(static_cast<size_t>(J.nonZeros()), -1);
  for (Block& B : blocks) {
    for (int c : B.coords)
      for (SparseMatrixD::InnerIterator it(J, c); it; ++it)
        B.rows.push_back(static_cast<int>(it.row()));
    std::sort(B.rows.begin(), B.rows.end());
    B.rows.erase(std::unique(B.rows.begin(), B.rows.end()), B.rows.end());
    for (int c : B.coords)
      for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e)
        j_local[e] =
            static_cast<int>(std::lower_bound(B.rows.begin(), B.rows.end(),
                                              J.innerIndexPtr()[e]) -
                             B.rows.begin());
    mmax = std::max(mmax, B.rows.size());
    const int k = static_cast<int>(B.coords.size());
    B.j_src.assign(B.rows.size() * B.coords.size(), -1);
    for (int i = 0; i < k; ++i) {
      const int c = B.coords[i];
      for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e)
        B.j_src[j_local[e] * k + i] = e;
    }
  }
  m_factored.clear();
  // Pattern of S: every pair of rows that share a block (lower triangle,
  // plus the whole diagonal so that CHOLMOD sees every row).
  std::vector<Eigen::Triplet<double, int>> t;
  for (int i = 0; i < nc; ++i) t.emplace_back(i, i, 0.0);
  for (const Block& B : blocks)
    for (size_t a = 0; a < B.rows.size(); ++a)
      for (size_t c = 0; c <= a; ++c) t.emplace_back(B.rows[a], B.rows[c], 0.0);
  S.resize(nc, nc);
  S.setFromTriplets(t.begin(), t.end());
  S.makeCompressed();
  for (Block& B : blocks) {
    const size_t m = B.rows.size();
    B.s_slot.assign(m * m, -1);
    for (size_t a = 0; a < m; ++a)
      for (size_t c = 0; c <= a; ++c) {
        const int col = B.rows[c], row = B.rows[a];
        const int* begin = S.innerIndexPtr() + S.outerIndexPtr()[col];
        const int* end = S.innerIndexPtr() + S.outerIndexPtr()[col + 1];
        B.s_slot[a * m + c] = static_cast<int>(
            std::lower_bound(begin, end, row) - S.innerIndexPtr());
      }
  }
  W.assign(kmax * mmax, 0.0);
  if (nc == 0) return;
  // S is factored in CHOLMOD's fill-reducing order, applied here once:
  // the blocks assemble Sp = P S P' (upper triangle) directly, and an
  // up-looking L D L' with a fixed symbolic structure factors it in place
  // (no permuted or transposed copy per call). The block slots point into
  // Sp.
  s_perm = chol_s.Ordering(S);
  std::vector<int> iperm(static_cast<size_t>(nc));
  for (int k = 0; k < nc; ++k) iperm[s_perm[k]] = k;
  t.clear();
  for (int c = 0; c < nc; ++c)
    for (int e = S.outerIndexPtr()[c]; e < S.outerIndexPtr()[c + 1]; ++e) {
      const int a = iperm[S.innerIndexPtr()[e]], b = iperm[c];
      t.emplace_back(std::min(a, b), std::max(a, b), 0.0);
    }
  Sp.resize(nc, nc);
  Sp.setFromTriplets(t.begin(), t.end());
  Sp.makeCompressed();
  std::vector<int> to_sp(static_cast<size_t>(S.nonZeros()));
  for (int c = 0; c < nc; ++c)
    for (int e = S.outerIndexPtr()[c]; e < S.outerIndexPtr()[c + 1]; ++e) {
      const int a = iperm[S.innerIndexPtr()[e]], b = iperm[c];
      const int row = std::min(a, b), col = std::max(a, b);
      const int* begin = Sp.innerIndexPtr() + Sp.outerIndexPtr()[col];
      const int* end = Sp.innerIndexPtr() + Sp.outerIndexPtr()[col + 1];
      to_sp[e] = static_cast<int>(std::lower_bound(begin, end, row) -
                                  Sp.innerIndexPtr());
    }
  for (Block& B : blocks)
    for (int& slot : B.s_slot)
      if (slot >= 0) slot = to_sp[slot];
  ldl_sp.Analyze(Sp);
  rp.resize(nc);
}

void SparseKktSolver::Impl::AnalyzeLu(const SparseMatrixD& M,
                                      const SparseMatrixD& J) {
  // Column c < nv: M's column then J's column (rows shifted by nv); column
  // nv + i: -(row i of J)'. Rows stay sorted within each column.
  const SparseMatrixD Jt = J.transpose();
  // Index of each Jt value in J's value array.
  std::vector<int> jt_src(static_cast<size_t>(Jt.nonZeros()));
  {
    std::vector<int> next(Jt.outerIndexPtr(), Jt.outerIndexPtr() + nc);
    for (int c = 0; c < nv; ++c)
      for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e)
        jt_src[next[J.innerIndexPtr()[e]]++] = e;
  }
  const int n = nv + nc;
  std::vector<int> outer(static_cast<size_t>(n + 1), 0), inner;
  k_src.clear();
  k_sign.clear();
  for (int c = 0; c < nv; ++c) {
    for (int e = M.outerIndexPtr()[c]; e < M.outerIndexPtr()[c + 1]; ++e) {
      inner.push_back(M.innerIndexPtr()[e]);
      k_src.push_back(e);
      k_sign.push_back(1.0);
    }
    for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e) {
      inner.push_back(nv + J.innerIndexPtr()[e]);
      k_src.push_back(-(1 + e));
      k_sign.push_back(1.0);
    }
    outer[c + 1] = static_cast<int>(inner.size());
  }
  for (int i = 0; i < nc; ++i) {
    for (int e = Jt.outerIndexPtr()[i]; e < Jt.outerIndexPtr()[i + 1]; ++e) {
      inner.push_back(Jt.innerIndexPtr()[e]);
      k_src.push_back(-(1 + jt_src[e]));
      k_sign.push_back(-1.0);
    }
    outer[nv + i + 1] = static_cast<int>(inner.size());
  }
  K.resize(n, n);
  K.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
  std::copy(outer.begin(), outer.end(), K.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), K.innerIndexPtr());
  klu.Analyze(K);
  rhs.resize(n);
  sol.resize(n);
}

bool SparseKktSolver::Impl::SolveSchur(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  const double* mv = M.valuePtr();
  const double* jv = J.valuePtr();
  std::fill(Sp.valuePtr(), Sp.valuePtr() + Sp.nonZeros(), 0.0);
  double* sv = Sp.valuePtr();
  // Per block: L_b L_b' = M_b; W_b = L_b^-1 J_b'; S += W_b' W_b; and
  // z_b = M_b^-1 f_b. Blocks are small (3 x 3 for a planar body): plain
  // loops on preallocated storage.
  // The block factors are current when M has the values they were made
  // from (always, for a constant mass matrix).
  const bool refactor =
      m_factored.size() != static_cast<size_t>(M.nonZeros()) ||
      !std::equal(m_factored.begin(), m_factored.end(), mv);
  if (refactor) {
    double dmin = HUGE_VAL, dmax = 0.0;
    for (Block& B : blocks) {
      const int k = static_cast<int>(B.coords.size());
      double* L = B.L.data();
      for (int i = 0; i < k * k; ++i)
        L[i] = B.m_src[i] >= 0 ? mv[B.m_src[i]] : 0.0;
      double bmin = 0.0, bmax = 0.0;
      if (!SmallCholesky(L, k, &bmin, &bmax) ||
          !(bmin * bmin > opt.singular_tolerance * bmax * bmax)) {
        m_factored.clear();
        ThrowSingularMass(B.coords);
      }
      dmin = std::min(dmin, bmin);
      dmax = std::max(dmax, bmax);
    }
    mass_pivot_ratio = dmax > 0.0 ? (dmin / dmax) * (dmin / dmax) : 0.0;
    m_factored.assign(mv, mv + M.nonZeros());
  }
  for (const Block& B : blocks) {
    const int k = static_cast<int>(B.coords.size());
    const int m = static_cast<int>(B.rows.size());
    auto run = [&](auto block) {
      block(B.coords.data(), k, m, B.L.data(), B.j_src.data(), B.s_slot.data(),
            jv, f.data(), z.data(), W.data(), sv);
    };
    switch (k) {
      case 3:
        run(SchurBlock<3>);
        break;
      case 6:
        run(SchurBlock<6>);
        break;
      default:
        run(SchurBlock<0>);
    }
  }
  ++factorizations;
  if (nc == 0) {
    vdot = z;
    return true;
  }
  if (!ldl_sp.Factorize(Sp) || !(ldl_sp.Rcond() > opt.singular_tolerance))
    return false;
  // lambda = -S^-1 (b + J M^-1 f);  vdot = M^-1 (f + J' lambda).
  r.noalias() = J * z;
  r += bias;
  for (int k = 0; k < nc; ++k) rp[k] = -r[s_perm[k]];
  ldl_sp.Solve(rp.data());
  for (int k = 0; k < nc; ++k) lambda[s_perm[k]] = rp[k];
  y.noalias() = J.transpose() * lambda;
  y_is_reaction = true;
  for (const Block& B : blocks) {
    const int k = static_cast<int>(B.coords.size());
    switch (k) {
      case 3:
        BlockAccel<3>(B.coords.data(), k, B.L.data(), y.data(), z.data(),
                      vdot.data());
        break;
      case 6:
        BlockAccel<6>(B.coords.data(), k, B.L.data(), y.data(), z.data(),
                      vdot.data());
        break;
      default:
        BlockAccel<0>(B.coords.data(), k, B.L.data(), y.data(), z.data(),
                      vdot.data());
    }
  }
  return true;
}

bool SparseKktSolver::Impl::SolveCholesky(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  const SparseMatrixD lower = M.triangularView<Eigen::Lower>();
  if (!chol_m.Factorize(lower) || !(chol_m.Rcond() > opt.singular_tolerance))
    ThrowSingularMass({});
  ++factorizations;
  chol_m.Solve(f, z);
  if (nc == 0) {
    vdot = z;
    return true;
  }
  // S = J M^-1 J' through a sparse solve with the sparse right side J'.
  const SparseMatrixD Y = chol_m.SolveSparse(J.transpose());
  SparseMatrixD Sfull = J * Y;
  S = Sfull.triangularView<Eigen::Lower>();
  S.makeCompressed();
  if (!SamePattern(S, s_outer, s_inner)) {
    chol_s.Analyze(S);
    CopyPattern(S, &s_outer, &s_inner);
  }
  if (!chol_s.Factorize(S) || !(chol_s.Rcond() > opt.singular_tolerance))
    return false;
  r.noalias() = J * z;
  r += bias;
  r = -r;
  chol_s.Solve(r, lambda);
  y.noalias() = J.transpose() * lambda;
  y += f;
  chol_m.Solve(y, w);
  vdot = w;
  return true;
}

bool SparseKktSolver::Impl::SolveLu(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  double* kv = K.valuePtr();
  const double* mv = M.valuePtr();
  const double* jv = J.valuePtr();
  for (size_t e = 0; e < k_src.size(); ++e)
    kv[e] = k_src[e] >= 0 ? mv[k_src[e]] : k_sign[e] * jv[-(k_src[e] + 1)];
  ++factorizations;
  // KLU's reciprocal condition estimate; the threshold is scaled down as in
  // the dense full-LU path since the indefinite matrix is less well
  // conditioned than its blocks.
  if (!klu.Factor(K, opt.singular_tolerance * 1e-2)) {
    // Singular: dependent rows of J, or M singular on the motions the
    // constraints allow.
    if (!SparseDependentRows(J, opt.rank_tolerance).empty()) return false;
    std::ostringstream os;
    os << "KKT matrix is singular although the constraint Jacobian has full "
          "row rank"
       << Where()
       << ": the mass matrix is singular on motions the constraints allow. "
          "Check the kinetic energy: every coordinate needs inertia";
    throw KktError(os.str());
  }
  rhs.head(nv) = f;
  rhs.tail(nc) = -bias;
  klu.Solve(rhs, &sol);
  vdot = sol.head(nv);
  lambda = sol.tail(nc);
  return true;
}

void SparseKktSolver::Impl::SolveRedundant(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  // The dependent set is found once and kept while the independent rows
  // stay independent (the inner solve says when they do not).
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!inner) {
      dependent = SparseDependentRows(J, opt.rank_tolerance);
      independent.clear();
      for (int i = 0, d = 0; i < nc; ++i) {
        if (d < static_cast<int>(dependent.size()) && dependent[d] == i)
          ++d;
        else
          independent.push_back(i);
      }
      KktOptions io = opt;
      io.method = KktMethod::kAuto;
      io.allow_redundant = false;
      inner = std::make_unique<SparseKktSolver>(io);
      auto outer_names = names;
      const std::vector<int> ind = independent;
      inner->SetRowNames([outer_names, ind](int i) {
        return outer_names ? outer_names(ind[i])
                           : "row " + std::to_string(ind[i]);
      });
      inner->SetContext(context);
      g_outer.clear();
      if (!dependent.empty() && report.empty()) {
        std::ostringstream os;
        os << "redundant constraints: rank of J is "
           << nc - static_cast<int>(dependent.size()) << " < " << nc
           << " rows; dependent rows:";
        for (int i : dependent) os << " '" << RowName(i) << "'";
        os << "; solving for the unique accelerations with minimum-norm "
              "multipliers (individual multipliers of redundant constraints "
              "are not unique; J' lambda is)";
        report = os.str();
        if (report_stream) *report_stream << "daedalus: " << report << "\n";
      }
    }
    const SparseMatrixD Ji = SelectRows(J, independent);
    Eigen::VectorXd bi(static_cast<Eigen::Index>(independent.size()));
    for (size_t i = 0; i < independent.size(); ++i)
      bi[i] = bias[independent[i]];
    Eigen::VectorXd li(bi.size());
    try {
      inner->Solve(M, Ji, f, bi, vdot, li);
    } catch (const KktError&) {
      if (attempt == 0 && !dependent.empty()) {
        inner.reset();  // the dependent set changed: find it again
        continue;
      }
      throw;
    }
    lambda.setZero();
    for (size_t i = 0; i < independent.size(); ++i)
      lambda[independent[i]] = li[i];
    if (dependent.empty()) return;

    // Consistency: the dependent rows must hold at the solution.
    const SparseMatrixD Jd = SelectRows(J, dependent);
    const Eigen::VectorXd bd = [&] {
      Eigen::VectorXd v(static_cast<Eigen::Index>(dependent.size()));
      for (size_t i = 0; i < dependent.size(); ++i) v[i] = bias[dependent[i]];
      return v;
    }();
    const Eigen::VectorXd res = Jd * vdot + bd;
    // Scale: the size of the terms that cancel in J_d vdot + b_d (a
    // mechanism at rest has b ~ 0 but J_d vdot is a sum of large terms),
    // with a floor of 64 eps for systems where everything vanishes (a
    // projection on the manifold).
    const Eigen::VectorXd terms =
        SparseMatrixD(Jd.cwiseAbs()) * vdot.cwiseAbs() + bd.cwiseAbs();
    const double scale = std::max(terms.maxCoeff(), 1.0);
    const double allowed = opt.consistency_tolerance * terms.maxCoeff() +
                           64 * std::numeric_limits<double>::epsilon() * scale;
    if (res.cwiseAbs().maxCoeff() > allowed) {
      std::ostringstream os;
      os.precision(3);
      os << "contradictory constraints" << Where() << ": rows";
      for (int i : dependent) os << " '" << RowName(i) << "'";
      os << " depend linearly on the others but their equations disagree "
            "(acceleration-level residual "
         << std::scientific << res.cwiseAbs().maxCoeff()
         << " against terms of size " << terms.maxCoeff()
         << "); no motion satisfies all constraints. Remove or correct one "
            "of them";
      throw KktError(os.str());
    }
    // Minimum-norm multipliers: J_d = C J_i; the null space of J' is
    // spanned by N = [-C'; I], and projecting lambda0 = [li; 0] off it gives
    // mu = (C C' + I)^-1 C li, lambda_i = li - C' mu, lambda_d = mu.
    SparseMatrixD G = Ji * SparseMatrixD(Ji.transpose());
    SparseMatrixD Gl = G.triangularView<Eigen::Lower>();
    Gl.makeCompressed();
    if (!SamePattern(Gl, g_outer, g_inner)) {
      chol_g.Analyze(Gl);
      CopyPattern(Gl, &g_outer, &g_inner);
    }
    if (!chol_g.Factorize(Gl))
      throw KktError(
          "redundant constraints: J_i J_i' is not positive "
          "definite" +
          Where());
    const Eigen::MatrixXd JiJd = Ji * Eigen::MatrixXd(Jd.transpose());
    Eigen::MatrixXd Ct(JiJd.rows(), JiJd.cols());
    for (Eigen::Index c = 0; c < JiJd.cols(); ++c) {
      chol_g.Solve(JiJd.col(c), Ct.col(c));
    }
    const Eigen::Index nd = Ct.cols();
    const Eigen::MatrixXd A =
        Ct.transpose() * Ct + Eigen::MatrixXd::Identity(nd, nd);
    const Eigen::VectorXd mu = A.llt().solve(Ct.transpose() * li);
    const Eigen::VectorXd li_min = li - Ct * mu;
    for (size_t i = 0; i < independent.size(); ++i)
      lambda[independent[i]] = li_min[i];
    for (size_t i = 0; i < dependent.size(); ++i) lambda[dependent[i]] = mu[i];
    return;
  }
}

// ------------------------------------------------------ SparseKktSolver

SparseKktSolver::SparseKktSolver(KktOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->opt = options;
}
SparseKktSolver::~SparseKktSolver() = default;
SparseKktSolver::SparseKktSolver(SparseKktSolver&&) noexcept = default;
SparseKktSolver& SparseKktSolver::operator=(SparseKktSolver&&) noexcept =
    default;

void SparseKktSolver::SetRowNames(std::function<std::string(int)> names) {
  impl_->names = std::move(names);
}
void SparseKktSolver::SetContext(std::function<std::string()> context) {
  impl_->context = std::move(context);
}
void SparseKktSolver::SetReportStream(std::ostream* os) {
  impl_->report_stream = os;
}
KktMethod SparseKktSolver::method() const { return impl_->method; }
const std::vector<int>& SparseKktSolver::dependent_rows() const {
  return impl_->dependent;
}
const std::string& SparseKktSolver::redundancy_report() const {
  return impl_->report;
}
long SparseKktSolver::num_factorizations() const {
  return impl_->factorizations;
}
long SparseKktSolver::num_analyses() const { return impl_->analyses; }

void SparseKktSolver::Solve(const SparseMatrixD& M,
                            const SparseMatrixD& J,
                            const Eigen::Ref<const Eigen::VectorXd>& f,
                            const Eigen::Ref<const Eigen::VectorXd>& bias,
                            Eigen::Ref<Eigen::VectorXd> vdot,
                            Eigen::Ref<Eigen::VectorXd> lambda) {
  Impl& im = *impl_;
  if (!im.analysed || !SamePattern(M, im.m_outer, im.m_inner) ||
      !SamePattern(J, im.j_outer, im.j_inner))
    im.Analyze(M, J);
  if (f.size() != im.nv || bias.size() != im.nc || vdot.size() != im.nv ||
      lambda.size() != im.nc)
    throw std::invalid_argument(
        "SparseKktSolver::Solve: f, bias, vdot, lambda must have nv = " +
        std::to_string(im.nv) + " and nc = " + std::to_string(im.nc) + " rows");
  const bool redundant_ok =
      im.opt.allow_redundant || im.method == KktMethod::kQr;
  if (im.method == KktMethod::kQr || im.inner) {
    im.SolveRedundant(M, J, f, bias, vdot, lambda);
    return;
  }
  bool ok = false;
  switch (im.method) {
    case KktMethod::kSparseSchur:
      ok = im.SolveSchur(M, J, f, bias, vdot, lambda);
      break;
    case KktMethod::kSparseCholesky:
      ok = im.SolveCholesky(M, J, f, bias, vdot, lambda);
      break;
    case KktMethod::kSparseLu:
      ok = im.SolveLu(M, J, f, bias, vdot, lambda);
      break;
    default:
      throw std::logic_error("SparseKktSolver: unresolved method");
  }
  if (ok) {
    im.dependent.clear();
    return;
  }
  // The constraint part is singular: dependent rows.
  const std::vector<int> dep = SparseDependentRows(J, im.opt.rank_tolerance);
  if (!redundant_ok || dep.empty()) {
    if (dep.empty())
      throw KktError(
          "KKT system is singular or ill-conditioned (reciprocal "
          "condition below " +
          std::to_string(im.opt.singular_tolerance) + ")" + im.Where() +
          " although no constraint row is dependent at rank "
          "tolerance " +
          std::to_string(im.opt.rank_tolerance) +
          "; the mechanism is near a singular configuration");
    im.ThrowDependent(J, dep);
  }
  im.SolveRedundant(M, J, f, bias, vdot, lambda);
}

void SparseKktSolver::Solve(const SparseWorkspace& ws,
                            const Eigen::Ref<const Eigen::VectorXd>& bias,
                            KktResult* out) {
  ws.Require(Stage::kDynamics, "SparseKktSolver::Solve");
  if (!impl_->names) {
    const Model model = ws.model();
    impl_->names = [model](int i) { return model.RowName(i); };
  }
  if (!impl_->context) {
    const SparseWorkspace* w = &ws;
    impl_->context = [w] {
      return "model '" + w->model().name() + "', " + DescribeState(*w);
    };
  }
  const Eigen::Index nv = ws.M.rows(), nc = ws.J.rows();
  out->vdot.resize(nv);
  out->lambda.resize(nc);
  Impl& im = *impl_;
  im.f_ws = ws.Bu - ws.h;
  im.y_is_reaction = false;
  Solve(ws.M, ws.J, im.f_ws, bias, out->vdot, out->lambda);
  if (im.y_is_reaction)
    out->reaction = im.y;  // the Schur solve formed J' lambda already
  else
    out->reaction.noalias() = ws.J.transpose() * out->lambda;
  im.jv_ws.noalias() = ws.J * ws.v;
  out->power = out->lambda.cwiseProduct(im.jv_ws);
  out->health.dependent_rows = im.dependent;
}

void SparseKktSolver::SolveMass(const SparseMatrixD& M,
                                const Eigen::Ref<const Eigen::VectorXd>& rhs,
                                Eigen::Ref<Eigen::VectorXd> x) {
  Impl& im = *impl_;
  if (im.analysed && im.method == KktMethod::kSparseSchur &&
      SamePattern(M, im.m_outer, im.m_inner)) {
    for (const Impl::Block& B : im.blocks) {
      const int k = static_cast<int>(B.coords.size());
      double xb[kMaxSchurBlock];
      for (int i = 0; i < k; ++i) xb[i] = rhs[B.coords[i]];
      SmallSolve(B.L.data(), k, xb);
      for (int i = 0; i < k; ++i) x[B.coords[i]] = xb[i];
    }
    return;
  }
  Cholmod c;
  const SparseMatrixD lower = M.triangularView<Eigen::Lower>();
  c.Analyze(lower);
  if (!c.Factorize(lower)) im.ThrowSingularMass({});
  c.Solve(rhs, x);
}

}  // namespace daedalus
