#include "contact/contact_problems.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>

namespace daedalus::internal {

namespace {

Eigen::MatrixXd Rows(const Eigen::MatrixXd& J, const std::vector<int>& rows) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), J.cols());
  for (size_t i = 0; i < rows.size(); ++i)
    out.row(static_cast<Eigen::Index>(i)) = J.row(rows[i]);
  return out;
}

}  // namespace

ContactOperator::ContactOperator(const AllRows& x,
                                 const std::vector<int>& contacts,
                                 const std::vector<int>& bilateral)
    : c_(contacts), b_(bilateral) {
  const Eigen::Index nv = x.M.rows();
  // M is symmetric positive definite (the KKT solve has checked it).
  Minv_ = x.M.llt().solve(Eigen::MatrixXd::Identity(nv, nv));
  W_ = Minv_;
  if (!b_.empty()) {
    const Eigen::MatrixXd JB = Rows(x.J, b_);
    YB_ = Minv_ * JB.transpose();
    // Pseudo-inverse: redundant bilateral rows keep their minimum-norm
    // multipliers, as the KKT solve does with --allow-redundant.
    SBinv_ = (JB * YB_).completeOrthogonalDecomposition().pseudoInverse();
    W_ -= YB_ * SBinv_ * YB_.transpose();
  }
  const Eigen::MatrixXd JC = Rows(x.J, c_);
  WJt_ = W_ * JC.transpose();
  A_ = JC * WJt_;
  A_ = 0.5 * (A_ + A_.transpose());  // symmetric to round-off
}

Eigen::VectorXd ContactOperator::FreeAcceleration(const AllRows& x) const {
  Eigen::VectorXd a = W_ * x.f;
  if (!b_.empty()) {
    Eigen::VectorXd bB(static_cast<Eigen::Index>(b_.size()));
    for (size_t i = 0; i < b_.size(); ++i)
      bB[static_cast<Eigen::Index>(i)] = x.b[b_[i]];
    a -= YB_ * (SBinv_ * bB);
  }
  Eigen::VectorXd out(static_cast<Eigen::Index>(c_.size()));
  for (size_t i = 0; i < c_.size(); ++i)
    out[static_cast<Eigen::Index>(i)] = x.J.row(c_[i]).dot(a) + x.b[c_[i]];
  return out;
}

std::vector<int> IndependentRows(const Eigen::MatrixXd& J,
                                 const std::vector<int>& base,
                                 const std::vector<int>& extra) {
  std::vector<int> rows = base, kept;
  auto rank = [&](const std::vector<int>& r) {
    if (r.empty()) return Eigen::Index{0};
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Rows(J, r).transpose());
    qr.setThreshold(1e-10);
    return qr.rank();
  };
  Eigen::Index have = rank(rows);
  for (int r : extra) {
    rows.push_back(r);
    const Eigen::Index now = rank(rows);
    if (now > have) {
      kept.push_back(r);
      have = now;
    } else {
      rows.pop_back();
    }
  }
  return kept;
}

}  // namespace daedalus::internal
