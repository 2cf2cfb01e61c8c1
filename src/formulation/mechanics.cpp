#include "formulation/mechanics.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>

namespace daedalus::internal {

ConstraintRows::ConstraintRows(const Model& m)
    : nc(m.nc()), holonomic(m.nc(), true), stationary(m.nc(), false) {
  for (int ci = 0; ci < m.num_constraints(); ++ci) {
    const auto& c = m.constraints()[ci];
    for (int r = 0; r < c.rows; ++r) {
      const int row = m.constraint_row(ci) + r;
      if (c.kind == ConstraintKind::kNonholonomic)
        holonomic[row] = false;
      else
        holonomic_rows.push_back(row);
      stationary[row] = c.kind == ConstraintKind::kHolonomic;
    }
  }
}

Mechanics::Mechanics(const Model& model) : model_(model), rows_(model) {}
Mechanics::~Mechanics() = default;

// dense_mechanics.cpp, sparse_mechanics.cpp
std::unique_ptr<Mechanics> MakeDenseMechanics(const Model& model,
                                              const SimulationOptions& o);
std::unique_ptr<Mechanics> MakeSparseMechanics(const Model& model,
                                               const SimulationOptions& o);

std::unique_ptr<Mechanics> MakeMechanics(const Model& model,
                                         const SimulationOptions& options,
                                         bool sparse) {
  return sparse ? MakeSparseMechanics(model, options)
                : MakeDenseMechanics(model, options);
}

KktHealthSample DenseKktHealth(const Eigen::MatrixXd& M,
                               const Eigen::MatrixXd& J,
                               bool details) {
  // Conditioning of J M^-1 J' and rank of J. The Schur complement is
  // Jacobi-scaled (D S D, D = diag(S)^-1/2) so that its condition number
  // does not depend on the units in which each constraint is written; J's
  // rows are normalized for the same reason before its rank is taken.
  KktHealthSample h;
  const Eigen::Index nc = J.rows();
  if (nc == 0) return h;
  const Eigen::LLT<Eigen::MatrixXd> llt(M);
  const Eigen::MatrixXd S = J * llt.solve(J.transpose());
  const Eigen::VectorXd diag = S.diagonal();
  Eigen::VectorXd d(nc);
  bool zero_row = llt.info() != Eigen::Success;
  for (Eigen::Index i = 0; i < nc; ++i) {
    zero_row |= !(diag[i] > 0.0);
    d[i] = diag[i] > 0.0 ? 1.0 / std::sqrt(diag[i]) : 0.0;
  }
  const Eigen::MatrixXd Ss = d.asDiagonal() * S * d.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Ss);
  const Eigen::VectorXd& ev = es.eigenvalues();
  h.rcond =
      zero_row || !(ev[nc - 1] > 0.0) ? 0.0 : std::max(ev[0], 0.0) / ev[nc - 1];
  if (h.rcond >= kNearSingularRcond) {
    // J M^-1 J' is positive definite (M is, its Cholesky succeeded), so J
    // has full row rank: for the SVD below to find a smaller rank, M would
    // have to be numerically singular itself.
    h.rank_J = static_cast<int>(nc);
  } else {
    Eigen::MatrixXd Jn = J;
    for (Eigen::Index i = 0; i < nc; ++i) {
      const double n = Jn.row(i).norm();
      if (n > 0.0) Jn.row(i) /= n;
    }
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(Jn);
    // Relative to the largest singular value (about 1 after the row
    // normalization): far above round-off, far below any well-posed
    // mechanism's smallest singular value.
    svd.setThreshold(1e-10);
    h.rank_J = static_cast<int>(svd.rank());
  }
  if (details) {
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eu(
        S, Eigen::EigenvaluesOnly);
    h.sigma_min = std::max(eu.eigenvalues()[0], 0.0);
    // The smallest eigenvector of the scaled complement combines the rows
    // that are close to dependent; components above 0.3 of a unit vector
    // name them (two equally involved rows have 0.71 each).
    for (Eigen::Index i = 0; i < nc; ++i)
      if (std::abs(es.eigenvectors()(i, 0)) > 0.3)
        h.weak_rows.push_back(static_cast<int>(i));
  }
  return h;
}

}  // namespace daedalus::internal
