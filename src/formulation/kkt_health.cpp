#include "formulation/kkt_health.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "kkt/sparse_backend.hpp"

namespace daedalus::internal {

namespace {

// Lanczos steps for one extreme eigenvalue. With full reorthogonalization
// the largest Ritz value after k steps of a symmetric operator approaches
// the largest eigenvalue from below with an error that decays like a
// Chebyshev polynomial of degree k in the gap ratio (Golub & Van Loan,
// Matrix Computations, 4th ed., sec. 10.1.5): 60 steps give the three or
// more significant digits a condition estimate needs even for the
// clustered spectra of long chains (checked against the dense eigenvalues
// in tests/formulation/kkt_health_test.cpp).
constexpr int kLanczosSteps = 60;
// The iteration stops earlier when the largest Ritz value moves by less
// than this, relative, over five steps (checked from step 10): Ritz values
// converge monotonically and, once separated, geometrically, so the
// remaining error is of the order of the last change, far below the three
// digits needed. The 1000-body chain converges in 20 to 30 steps.
constexpr double kLanczosTolerance = 1e-9;

struct Ritz {
  double value = 0.0;
  Eigen::VectorXd vector;
};

// The largest eigenvalue of the symmetric operator `apply` (n x n), with
// its Ritz vector when `vector`, from a fixed start vector (reproducible).
// Without the vector the basis is kept orthogonal by the three-term
// recurrence alone: the lost orthogonality only makes converged Ritz
// values reappear as copies and leaves the extreme one accurate (Paige
// 1976; Golub & Van Loan sec. 10.3), at O(n) work a step instead of the
// O(n j) of full reorthogonalization, which made the condition estimate
// the largest per-sample cost on long chains.
Ritz LargestEigenvalue(
    int n,
    const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd*)>& apply,
    bool vector) {
  const int k = std::min(n, kLanczosSteps);
  Eigen::MatrixXd V(n, k);
  Eigen::VectorXd alpha = Eigen::VectorXd::Zero(k),
                  beta = Eigen::VectorXd::Zero(k);
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  Eigen::VectorXd x(n), w(n);
  for (int i = 0; i < n; ++i) x[i] = u(gen);
  V.col(0) = x.normalized();
  int m = k;
  double theta_prev = 0.0;
  for (int j = 0; j < k; ++j) {
    apply(V.col(j), &w);
    alpha[j] = V.col(j).dot(w);
    if (vector) {
      // Full reorthogonalization (twice is enough: Kahan-Parlett).
      for (int pass = 0; pass < 2; ++pass)
        w -= V.leftCols(j + 1) * (V.leftCols(j + 1).transpose() * w);
    } else {
      w -= alpha[j] * V.col(j);
      if (j > 0) w -= beta[j - 1] * V.col(j - 1);
    }
    if (j + 1 == k) break;
    if (j + 1 >= 10 && (j + 1) % 5 == 0) {
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tri;
      tri.computeFromTridiagonal(alpha.head(j + 1), beta.head(j),
                                 Eigen::EigenvaluesOnly);
      const double theta = tri.eigenvalues()[j];
      if (std::abs(theta - theta_prev) <= kLanczosTolerance * std::abs(theta)) {
        m = j + 1;
        break;
      }
      theta_prev = theta;
    }
    beta[j] = w.norm();
    if (!(beta[j] > 1e-14 * std::abs(alpha[j]))) {
      m = j + 1;  // an invariant subspace: its Ritz values are exact
      break;
    }
    V.col(j + 1) = w / beta[j];
  }
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(m, m);
  for (int j = 0; j < m; ++j) {
    T(j, j) = alpha[j];
    if (j + 1 < m) T(j, j + 1) = T(j + 1, j) = beta[j];
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(
      T, vector ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
  Ritz r;
  r.value = es.eigenvalues()[m - 1];
  if (vector)
    r.vector = (V.leftCols(m) * es.eigenvectors().col(m - 1)).normalized();
  return r;
}

// W = L^-1 B for a sparse lower-triangular L (compressed columns) and a
// sparse B, column by column by Gilbert and Peierls's method (Davis,
// Direct Methods for Sparse Linear Systems, SIAM 2006, sec. 3.2): the
// nonzeros of each column of W are the nodes reachable in L's graph from
// those of B's column, found by depth-first search and solved in
// topological order, so the work is proportional to the flops (Eigen's
// sparse-sparse triangular solve scans all n rows per column).
SparseMatrixD LowerSolveSparse(const SparseMatrixD& L, const SparseMatrixD& B) {
  const int n = static_cast<int>(L.rows());
  const int* Lp = L.outerIndexPtr();
  const int* Li = L.innerIndexPtr();
  const double* Lx = L.valuePtr();
  std::vector<int> mark(static_cast<size_t>(n), -1), order, stack, pos;
  order.reserve(static_cast<size_t>(n));
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<Eigen::Triplet<double, int>> t;
  for (int c = 0; c < B.outerSize(); ++c) {
    order.clear();
    for (SparseMatrixD::InnerIterator it(B, c); it; ++it) {
      const int root = static_cast<int>(it.row());
      if (mark[root] == c) continue;
      // Iterative depth-first search; nodes finish in reverse topological
      // order.
      stack.assign(1, root);
      pos.assign(1, Lp[root]);
      mark[root] = c;
      while (!stack.empty()) {
        const int j = stack.back();
        int& p = pos.back();
        bool pushed = false;
        for (; p < Lp[j + 1]; ++p) {
          const int i = Li[p];
          if (i > j && mark[i] != c) {
            mark[i] = c;
            ++p;
            stack.push_back(i);
            pos.push_back(Lp[i]);
            pushed = true;
            break;
          }
        }
        if (!pushed) {
          order.push_back(j);
          stack.pop_back();
          pos.pop_back();
        }
      }
    }
    for (SparseMatrixD::InnerIterator it(B, c); it; ++it)
      x[it.row()] = it.value();
    for (auto k = order.rbegin(); k != order.rend(); ++k) {
      const int j = *k;
      double diag = 0.0;
      for (int p = Lp[j]; p < Lp[j + 1]; ++p)
        if (Li[p] == j) diag = Lx[p];
      x[j] /= diag;
      for (int p = Lp[j]; p < Lp[j + 1]; ++p)
        if (Li[p] > j) x[Li[p]] -= Lx[p] * x[j];
    }
    for (const int j : order) {
      if (x[j] != 0.0) t.emplace_back(j, c, x[j]);
      x[j] = 0.0;
    }
  }
  SparseMatrixD W(n, B.cols());
  W.setFromTriplets(t.begin(), t.end());
  return W;
}

// Rank of J (rows normalized) by SPQR on J', relative threshold 1e-10 as on
// the dense path.
int SparseRank(const SparseMatrixD& J) {
  Eigen::VectorXd norms = Eigen::VectorXd::Zero(J.rows());
  for (int c = 0; c < J.outerSize(); ++c)
    for (SparseMatrixD::InnerIterator it(J, c); it; ++it)
      norms[it.row()] += it.value() * it.value();
  Eigen::VectorXd scale(J.rows());
  for (Eigen::Index i = 0; i < J.rows(); ++i)
    scale[i] = norms[i] > 0.0 ? 1.0 / std::sqrt(norms[i]) : 0.0;
  const SparseMatrixD Jt = (scale.asDiagonal() * J).transpose();
  int rank = 0;
  std::vector<int> perm;
  if (!internal::SparseModule().QrRank(Jt, 1e-10, &rank, &perm)) return 0;
  return rank;
}

}  // namespace

KktHealthSample SparseKktHealth(const SparseMatrixD& M,
                                const SparseMatrixD& J,
                                bool details) {
  const int nc = static_cast<int>(J.rows());
  if (nc <= kDenseHealthRows)
    return DenseKktHealth(Eigen::MatrixXd(M), Eigen::MatrixXd(J), details);

  KktHealthSample h;
  // S = J M^-1 J' (sparse when M is block diagonal), then D S D with
  // D = diag(S)^-1/2.
  Eigen::SimplicialLLT<SparseMatrixD> llt_m(M);
  if (llt_m.info() != Eigen::Success) {
    h.rcond = 0.0;
    h.rank_J = SparseRank(J);
    return h;
  }
  // With P M P' = L L': S = W' W, W = L^-1 P J', by a sparse triangular
  // solve that follows the sparsity of J' (a block-diagonal M keeps W as
  // sparse as J'). Solving M Y = J' through dense panels, or with Eigen's
  // sparse-sparse triangular solve, cost 30 ms a sample on the 1000-body
  // chain.
  const SparseMatrixD PJt = llt_m.permutationP() * SparseMatrixD(J.transpose());
  const SparseMatrixD W =
      LowerSolveSparse(SparseMatrixD(llt_m.matrixL().nestedExpression()), PJt);
  const SparseMatrixD S = SparseMatrixD(W.transpose()) * W;
  const Eigen::VectorXd diag = S.diagonal();
  Eigen::VectorXd d(nc);
  bool zero_row = false;
  for (int i = 0; i < nc; ++i) {
    zero_row |= !(diag[i] > 0.0);
    d[i] = diag[i] > 0.0 ? 1.0 / std::sqrt(diag[i]) : 0.0;
  }
  const SparseMatrixD Ss = d.asDiagonal() * S * d.asDiagonal();
  Eigen::SimplicialLDLT<SparseMatrixD> ldlt_s;
  if (!zero_row) ldlt_s.compute(Ss);
  if (zero_row || ldlt_s.info() != Eigen::Success ||
      !(ldlt_s.vectorD().minCoeff() > 0.0)) {
    h.rcond = 0.0;
  } else {
    const Ritz top = LargestEigenvalue(
        nc, [&](const Eigen::VectorXd& x, Eigen::VectorXd* y) { *y = Ss * x; },
        false);
    // The weak rows come from the smallest eigenvector: with details only.
    const Ritz inv = LargestEigenvalue(
        nc,
        [&](const Eigen::VectorXd& x, Eigen::VectorXd* y) {
          *y = ldlt_s.solve(x);
        },
        details);
    h.rcond = top.value > 0.0 && inv.value > 0.0
                  ? std::min(1.0, 1.0 / (inv.value * top.value))
                  : 0.0;
    if (details) {
      for (int i = 0; i < nc; ++i)
        if (std::abs(inv.vector[i]) > 0.3) h.weak_rows.push_back(i);
    }
  }
  h.rank_J = h.rcond >= kNearSingularRcond ? nc : SparseRank(J);
  if (details) {
    Eigen::SimplicialLDLT<SparseMatrixD> ldlt_u(S);
    if (ldlt_u.info() == Eigen::Success && ldlt_u.vectorD().minCoeff() > 0.0) {
      const Ritz inv = LargestEigenvalue(
          nc,
          [&](const Eigen::VectorXd& x, Eigen::VectorXd* y) {
            *y = ldlt_u.solve(x);
          },
          false);
      h.sigma_min = inv.value > 0.0 ? 1.0 / inv.value : 0.0;
    }
  }
  return h;
}

}  // namespace daedalus::internal
