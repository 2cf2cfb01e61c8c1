// The schur method of SparseKktSolver: M block diagonal (one dense block
// per connected component of its pattern), dense Cholesky per block, and
// S = J M^-1 J' assembled in a fixed pattern and factored by an up-looking
// L D L' in a fill-reducing order chosen once.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kkt/sparse_kkt_impl.hpp"

namespace daedalus {

namespace {

using internal::Components;
using internal::SmallCholesky;

// SmallForward and SmallSolve (sparse_kkt_impl.hpp) with the block size
// fixed at compile time when K > 0 (the loops unroll; 3 for a planar body,
// 6 for a spatial one), from k when K = 0.
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

// z_b = M_b^-1 f_b (L from SmallCholesky).
template <int K>
void BlockSolve(
    const int* coords, int k, const double* L, const double* f, double* z) {
  const int n = K > 0 ? K : k;
  double zb[kMaxSchurBlock];
  for (int i = 0; i < n; ++i) zb[i] = f[coords[i]];
  SmallSolveK<K>(L, n, zb);
  for (int i = 0; i < n; ++i) z[coords[i]] = zb[i];
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
  BlockSolve<K>(coords, n, L, f, z);
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

}  // namespace

namespace internal {

void UpLookingLdl::Analyze(const SparseMatrixD& A) {
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

bool UpLookingLdl::Factorize(const SparseMatrixD& A) {
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

double UpLookingLdl::Rcond() const {
  if (n_ == 0) return 1.0;
  const auto [lo, hi] = std::minmax_element(d_.begin(), d_.end());
  return *hi > 0.0 ? *lo / *hi : 0.0;
}

void UpLookingLdl::Solve(double* x) const {
  for (int j = 0; j < n_; ++j)
    for (int p = lp_[j]; p < lp_[j + 1]; ++p) x[li_[p]] -= lx_[p] * x[j];
  for (int j = 0; j < n_; ++j) x[j] /= d_[j];
  for (int j = n_ - 1; j >= 0; --j)
    for (int p = lp_[j]; p < lp_[j + 1]; ++p) x[j] -= lx_[p] * x[li_[p]];
}

}  // namespace internal

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
  SchurSolves(J, bias, vdot, lambda);
  y_is_reaction = true;
  return true;
}

void SparseKktSolver::Impl::SchurSolves(
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  // lambda = -S^-1 (b + J M^-1 f);  vdot = M^-1 (f + J' lambda).
  r.noalias() = J * z;
  r += bias;
  for (int k = 0; k < nc; ++k) rp[k] = -r[s_perm[k]];
  ldl_sp.Solve(rp.data());
  for (int k = 0; k < nc; ++k) lambda[s_perm[k]] = rp[k];
  y.noalias() = J.transpose() * lambda;
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
}

void SparseKktSolver::Impl::ResolveSchur(
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  // z = M^-1 f by the block factors of the last solve; then the same solves
  // with its factor of S, on preallocated storage only (a hot path).
  for (const Block& B : blocks) {
    const int k = static_cast<int>(B.coords.size());
    switch (k) {
      case 3:
        BlockSolve<3>(B.coords.data(), k, B.L.data(), f.data(), z.data());
        break;
      case 6:
        BlockSolve<6>(B.coords.data(), k, B.L.data(), f.data(), z.data());
        break;
      default:
        BlockSolve<0>(B.coords.data(), k, B.L.data(), f.data(), z.data());
    }
  }
  if (nc == 0) {
    vdot = z;
    return;
  }
  SchurSolves(j_last, bias, vdot, lambda);
}

}  // namespace daedalus
