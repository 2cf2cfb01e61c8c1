#include "formulation/kkt_health.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/SPQRSupport>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

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

struct Ritz {
  double value = 0.0;
  Eigen::VectorXd vector;
};

// The largest eigenvalue of the symmetric operator `apply` (n x n), with
// its Ritz vector, from a fixed start vector (reproducible).
Ritz LargestEigenvalue(int n,
                       const std::function<void(const Eigen::VectorXd&,
                                                Eigen::VectorXd*)>& apply) {
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
  for (int j = 0; j < k; ++j) {
    apply(V.col(j), &w);
    alpha[j] = V.col(j).dot(w);
    // Full reorthogonalization (twice is enough: Kahan-Parlett).
    for (int pass = 0; pass < 2; ++pass)
      w -= V.leftCols(j + 1) * (V.leftCols(j + 1).transpose() * w);
    if (j + 1 == k) break;
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
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(T);
  Ritz r;
  r.value = es.eigenvalues()[m - 1];
  r.vector = (V.leftCols(m) * es.eigenvectors().col(m - 1)).normalized();
  return r;
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
  Eigen::SPQR<SparseMatrixD> qr;
  qr.setPivotThreshold(1e-10);
  qr.compute(Jt);
  if (qr.info() != Eigen::Success) return 0;
  return static_cast<int>(qr.rank());
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
  const SparseMatrixD Jt = J.transpose();
  const SparseMatrixD Y = llt_m.solve(Jt);
  const SparseMatrixD S = J * Y;
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
        nc, [&](const Eigen::VectorXd& x, Eigen::VectorXd* y) { *y = Ss * x; });
    const Ritz inv = LargestEigenvalue(
        nc, [&](const Eigen::VectorXd& x, Eigen::VectorXd* y) {
          *y = ldlt_s.solve(x);
        });
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
          nc, [&](const Eigen::VectorXd& x, Eigen::VectorXd* y) {
            *y = ldlt_u.solve(x);
          });
      h.sigma_min = inv.value > 0.0 ? 1.0 / inv.value : 0.0;
    }
  }
  return h;
}

}  // namespace daedalus::internal
