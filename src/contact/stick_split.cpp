#include "contact/stick_split.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace daedalus::internal {

namespace {

// Rank threshold of J_R (relative to its largest singular value).
constexpr double kRankTol = 1e-10;
// The barrier weight is divided by this factor per outer step, and the
// method stops when the duality gap bound (barrier parameter times
// weight, in units of the force scale) is below kGap.
constexpr double kWeightFactor = 10.0;
constexpr double kGap = 1e-13;
// A centring Newton loop ends at a decrement^2 below kDecrement or after
// kMaxNewton steps (the barrier's Newton converges quadratically near the
// central path: a handful per weight in practice).
constexpr double kDecrement = 1e-14;
constexpr int kMaxNewton = 60;

}  // namespace

void StickSplit::Prepare(const Eigen::MatrixXd& J,
                         std::vector<StickCone> cones) {
  Clear();
  cones_ = std::move(cones);
  at_.assign(static_cast<size_t>(J.rows()), -1);
  for (const StickCone& c : cones_) {
    for (int r : c.t) rows_.push_back(r);
    rows_.push_back(c.normal);
  }
  if (rows_.size() < 2) return;
  for (size_t i = 0; i < rows_.size(); ++i)
    at_[static_cast<size_t>(rows_[i])] = static_cast<int>(i);
  const Eigen::Index nr = static_cast<Eigen::Index>(rows_.size());
  Eigen::MatrixXd JR(nr, J.cols());
  for (Eigen::Index i = 0; i < nr; ++i)
    JR.row(i) = J.row(rows_[static_cast<size_t>(i)]);
  // The left null space of J_R: the columns of U beyond its rank.
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(JR, Eigen::ComputeFullU);
  const Eigen::VectorXd& sv = svd.singularValues();
  const double top = sv.size() > 0 ? sv[0] : 0.0;
  Eigen::Index rank = 0;
  for (Eigen::Index i = 0; i < sv.size(); ++i)
    if (sv[i] > kRankTol * top) ++rank;
  if (rank < nr) N_ = svd.matrixU().rightCols(nr - rank);
}

double StickSplit::MinMargin(const Eigen::VectorXd& lambda) const {
  double m = std::numeric_limits<double>::infinity();
  for (const StickCone& c : cones_) {
    double t2 = 0.0;
    for (int r : c.t) t2 += lambda[r] * lambda[r];
    m = std::min(m, c.mu * lambda[c.normal] - std::sqrt(t2));
  }
  return m;
}

StickSplit::Result StickSplit::Best(const Eigen::VectorXd& lambda) const {
  Result out;
  out.lambda = lambda;
  out.margin = MinMargin(lambda);
  if (!active() || cones_.empty()) return out;
  const Eigen::Index k = N_.cols(), n = k + 1;  // x = (z, s)
  const Eigen::Index nr = static_cast<Eigen::Index>(rows_.size());
  Eigen::VectorXd l0(nr);
  for (Eigen::Index i = 0; i < nr; ++i) l0[i] = lambda[rows_[size_t(i)]];
  double scale = l0.cwiseAbs().maxCoeff();
  if (!(scale > 0.0)) scale = 1.0;
  l0 /= scale;
  // Lower bounds of the normals: >= 0, or where the solve left one
  // slightly negative (round-off of a closed contact's lambda_n), there.
  std::vector<double> lo;
  double s0 = std::numeric_limits<double>::infinity();
  for (const StickCone& c : cones_) {
    const int in = at_[size_t(c.normal)];
    lo.push_back(std::min(0.0, l0[in]) - 1e-12);
    double t2 = 0.0;
    for (int r : c.t) t2 += l0[at_[size_t(r)]] * l0[at_[size_t(r)]];
    s0 = std::min(s0, c.mu * l0[in] - std::sqrt(t2));
  }
  const double cap = std::max(s0, 0.0) + 1.0;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  x[k] = s0 - 1e-3;
  const double nu = 3.0 * static_cast<double>(cones_.size()) + 1.0;

  // The barrier B(x) and, when asked, its gradient and Hessian; +inf
  // outside the domain.
  auto barrier = [&](const Eigen::VectorXd& y, Eigen::VectorXd* g,
                     Eigen::MatrixXd* H) {
    const Eigen::VectorXd l = l0 + N_ * y.head(k);
    const double s = y[k];
    if (g) g->setZero(n), H->setZero(n, n);
    double B = 0.0;
    for (size_t ci = 0; ci < cones_.size(); ++ci) {
      const StickCone& c = cones_[ci];
      const int in = at_[size_t(c.normal)];
      const double u = c.mu * l[in] - s;
      double w2 = 0.0;
      for (int r : c.t) w2 += l[at_[size_t(r)]] * l[at_[size_t(r)]];
      const double gap = u * u - w2, dn = l[in] - lo[ci];
      if (!(u > 0.0) || !(gap > 0.0) || !(dn > 0.0))
        return std::numeric_limits<double>::infinity();
      B -= std::log(gap) + std::log(dn);
      if (!g) continue;
      // Rows of d(u, w, l_n)/dx, and the barrier's derivatives in them:
      // -log(u^2 - |w|^2): grad (-2u, 2w)/gap, Hessian
      // grad grad' + diag(-2, 2, ...)/gap ... as (1/gap^2) q q' - D/gap.
      const Eigen::Index m = static_cast<Eigen::Index>(c.t.size()) + 1;
      Eigen::MatrixXd D = Eigen::MatrixXd::Zero(m, n);
      Eigen::VectorXd a(m);
      D.row(0).head(k) = c.mu * N_.row(in);
      D(0, k) = -1.0;
      a[0] = u;
      for (size_t j = 0; j < c.t.size(); ++j) {
        const int it = at_[size_t(c.t[j])];
        D.row(Eigen::Index(j) + 1).head(k) = N_.row(it);
        a[Eigen::Index(j) + 1] = l[it];
      }
      Eigen::VectorXd q = 2.0 * a;  // gradient of gap in (u, w) ...
      q.tail(m - 1) *= -1.0;        // ... is (2u, -2w)
      Eigen::MatrixXd Hc = q * q.transpose() / (gap * gap);
      Hc(0, 0) -= 2.0 / gap;
      for (Eigen::Index j = 1; j < m; ++j) Hc(j, j) += 2.0 / gap;
      *g -= D.transpose() * (q / gap);
      H->noalias() += D.transpose() * Hc * D;
      Eigen::VectorXd dnorm = Eigen::VectorXd::Zero(n);
      dnorm.head(k) = N_.row(in).transpose();
      *g -= dnorm / dn;
      H->noalias() += dnorm * dnorm.transpose() / (dn * dn);
    }
    if (!(cap - s > 0.0)) return std::numeric_limits<double>::infinity();
    B -= std::log(cap - s);
    if (g) {
      (*g)[k] += 1.0 / (cap - s);
      (*H)(k, k) += 1.0 / ((cap - s) * (cap - s));
    }
    return B;
  };

  Eigen::VectorXd g(n), step(n);
  Eigen::MatrixXd H(n, n);
  for (double tau = 1.0; tau * nu > kGap; tau /= kWeightFactor) {
    for (int it = 0; it < kMaxNewton; ++it) {
      const double B = barrier(x, &g, &H);
      const double f = -x[k] + tau * B;
      Eigen::VectorXd grad = tau * g;
      grad[k] -= 1.0;
      Eigen::MatrixXd Hess = tau * H;
      Hess.diagonal().array() += 1e-14 * Hess.diagonal().cwiseAbs().maxCoeff();
      step = -Hess.ldlt().solve(grad);
      const double dec = -grad.dot(step);
      ++out.newton;
      if (!(dec > kDecrement)) break;
      double alpha = 1.0;
      for (int ls = 0; ls < 60; ++ls, alpha *= 0.5) {
        const Eigen::VectorXd y = x + alpha * step;
        const double fy = -y[k] + tau * barrier(y, nullptr, nullptr);
        if (fy <= f - 0.25 * alpha * dec) {
          x = y;
          break;
        }
      }
    }
  }
  const Eigen::VectorXd l = (l0 + N_ * x.head(k)) * scale;
  for (Eigen::Index i = 0; i < nr; ++i) out.lambda[rows_[size_t(i)]] = l[i];
  const double best = MinMargin(out.lambda);
  // Keep the solve's split unless the optimum improves on it.
  if (best >= out.margin) {
    out.margin = best;
  } else {
    out.lambda = lambda;
  }
  return out;
}

}  // namespace daedalus::internal
