// KKT health on the sparse path (src/formulation/kkt_health.hpp): the
// Lanczos estimate of the reciprocal condition of the Jacobi-scaled
// J M^-1 J' against the dense eigenvalues, and the rank of J by SPQR against
// the dense SVD, on maximal-coordinate chains beyond kDenseHealthRows rows.
#include "formulation/kkt_health.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>

#include "chain.hpp"
#include "daedalus/sparse_dynamics.hpp"

namespace daedalus {
namespace {
namespace kkt_health_test {

// The chain's M and J at its release state, evaluated sparsely.
void ChainSystem(int bodies, SparseMatrixD* M, SparseMatrixD* J) {
  const Problem p = problems::ChainProblem(bodies);
  SparseWorkspace ws(p.model);
  ws.SetParameters(p.model.default_parameters());
  const InitialState x = p.initial(p.model.default_parameters());
  ws.SetState(0.0, x.q, x.v);
  EvaluateSparseAll(&ws);
  *M = ws.M;
  *J = ws.J;
}

TEST(SparseKktHealth, LanczosMatchesTheDenseEigenvalues) {
  for (int bodies : {40, 100}) {
    SparseMatrixD M, J;
    ChainSystem(bodies, &M, &J);
    ASSERT_GT(J.rows(), internal::kDenseHealthRows);
    const internal::KktHealthSample s = internal::SparseKktHealth(M, J, true);
    const internal::KktHealthSample d =
        internal::DenseKktHealth(Eigen::MatrixXd(M), Eigen::MatrixXd(J), true);
    // A long chain's Schur complement is ill-conditioned like a discrete
    // Laplacian (rcond falls like 1/N^2): far from 1, far from 0.
    ASSERT_LT(d.rcond, 1e-2);
    ASSERT_GT(d.rcond, 1e-7);
    // Both extreme eigenvalues converge from inside the spectrum within
    // the 60 Lanczos steps (the smallest on the inverse, where it is the
    // best separated). The contract (kkt_health.cpp) is three significant
    // digits, what a condition estimate needs; measured: agreement to
    // 5e-13 at 40 bodies (80 rows), 1.0e-5 at 100 bodies (200 rows, where
    // 60 steps no longer span the space and the largest eigenvalue of the
    // clustered upper spectrum is still converging).
    EXPECT_NEAR(s.rcond / d.rcond, 1.0, 1e-3) << bodies << " bodies";
    EXPECT_EQ(s.rank_J, J.rows());
    // The smallest eigenvalue of the unscaled S: measured 6e-13, 1.7e-12.
    EXPECT_NEAR(s.sigma_min / d.sigma_min, 1.0, 1e-9);
    EXPECT_EQ(s.weak_rows, d.weak_rows);
    // Without details (every sample) the Lanczos basis is not
    // reorthogonalized: the extreme eigenvalues stay as accurate.
    const internal::KktHealthSample f = internal::SparseKktHealth(M, J, false);
    EXPECT_NEAR(f.rcond / d.rcond, 1.0, 1e-3) << bodies << " bodies";
    EXPECT_EQ(f.rank_J, J.rows());
  }
}

TEST(SparseKktHealth, DependentRowsGiveZeroConditionAndTheRank) {
  SparseMatrixD M, J;
  ChainSystem(40, &M, &J);
  // Append copies of the first and the last row: two dependent rows.
  std::vector<Eigen::Triplet<double, int>> t;
  for (int c = 0; c < J.outerSize(); ++c)
    for (SparseMatrixD::InnerIterator it(J, c); it; ++it) {
      t.emplace_back(static_cast<int>(it.row()), c, it.value());
      if (it.row() == 0)
        t.emplace_back(static_cast<int>(J.rows()), c, it.value());
      if (it.row() == J.rows() - 1)
        t.emplace_back(static_cast<int>(J.rows()) + 1, c, it.value());
    }
  SparseMatrixD Jr(J.rows() + 2, J.cols());
  Jr.setFromTriplets(t.begin(), t.end());
  const internal::KktHealthSample s = internal::SparseKktHealth(M, Jr, false);
  const internal::KktHealthSample d =
      internal::DenseKktHealth(Eigen::MatrixXd(M), Eigen::MatrixXd(Jr), false);
  EXPECT_LT(s.rcond, kNearSingularRcond);
  EXPECT_LT(d.rcond, kNearSingularRcond);
  EXPECT_EQ(d.rank_J, J.rows());
  EXPECT_EQ(s.rank_J, J.rows());
}

}  // namespace kkt_health_test
}  // namespace
}  // namespace daedalus
