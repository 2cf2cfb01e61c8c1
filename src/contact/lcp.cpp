#include "contact/lcp.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>

namespace daedalus::internal {

namespace {

int PopCount(unsigned m) {
  int c = 0;
  for (; m != 0u; m &= m - 1u) ++c;
  return c;
}

// z on the support `in` (A_SS z_S = -q_S, least squares for a singular
// A_SS), zero elsewhere; w = A z + q. Returns the violation of the
// complementarity conditions and its scale.
double TrySupport(const Eigen::MatrixXd& A,
                  const Eigen::VectorXd& q,
                  const std::vector<int>& in,
                  Eigen::VectorXd* z,
                  Eigen::VectorXd* w,
                  double* scale) {
  const Eigen::Index n = q.size();
  const Eigen::Index k = static_cast<Eigen::Index>(in.size());
  z->setZero(n);
  if (k > 0) {
    Eigen::MatrixXd Ass(k, k);
    Eigen::VectorXd qs(k);
    for (Eigen::Index i = 0; i < k; ++i) {
      qs[i] = q[in[static_cast<size_t>(i)]];
      for (Eigen::Index j = 0; j < k; ++j)
        Ass(i, j) = A(in[static_cast<size_t>(i)], in[static_cast<size_t>(j)]);
    }
    const Eigen::VectorXd zs = Ass.completeOrthogonalDecomposition().solve(-qs);
    for (Eigen::Index i = 0; i < k; ++i)
      (*z)[in[static_cast<size_t>(i)]] = zs[i];
  }
  *w = A * *z + q;
  *scale =
      std::max({(A.cwiseAbs() * z->cwiseAbs()).maxCoeff(),
                q.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min()});
  double viol = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    viol = std::max(viol, std::abs(std::min((*w)[i], (*z)[i])));
    viol = std::max({viol, -(*w)[i], -(*z)[i]});
  }
  return viol;
}

}  // namespace

LcpSolution SolveLcp(const Eigen::MatrixXd& A,
                     const Eigen::VectorXd& q,
                     const std::vector<bool>& prefer_zero) {
  LcpSolution out;
  const int n = static_cast<int>(q.size());
  out.z = Eigen::VectorXd::Zero(n);
  out.w = q;
  if (n == 0) {
    out.solved = true;
    out.method = "none";
    return out;
  }
  Eigen::VectorXd z, w;
  double scale = 0.0;
  auto accept = [&](double viol) {
    out.tolerance = kLcpTolerance * scale;
    if (viol > out.tolerance) return false;
    out.solved = true;
    out.z = z.cwiseMax(0.0);
    out.w = w;
    out.residual = viol;
    return true;
  };
  if (n <= kLcpEnumerationMax) {
    out.method = "enumeration";
    unsigned pref = 0;
    for (int i = 0; i < n && i < static_cast<int>(prefer_zero.size()); ++i)
      if (prefer_zero[static_cast<size_t>(i)]) pref |= 1u << i;
    std::vector<unsigned> masks(1u << n);
    for (unsigned m = 0; m < masks.size(); ++m) masks[m] = m;
    std::stable_sort(masks.begin(), masks.end(), [&](unsigned a, unsigned b) {
      const int pa = PopCount(a & pref), pb = PopCount(b & pref);
      if (pa != pb) return pa < pb;
      return PopCount(a) < PopCount(b);
    });
    double best = std::numeric_limits<double>::infinity();
    for (unsigned m : masks) {
      std::vector<int> in;
      for (int i = 0; i < n; ++i)
        if (m & (1u << i)) in.push_back(i);
      ++out.systems;
      const double viol = TrySupport(A, q, in, &z, &w, &scale);
      if (accept(viol)) return out;
      best = std::min(best, viol);
    }
    out.residual = best;
    return out;
  }
  // Murty's least-index principal pivoting: toggle the smallest index
  // whose z (in the support) or w (outside) is negative.
  out.method = "principal pivoting";
  std::vector<bool> support(static_cast<size_t>(n), false);
  const int max_iter = 50 * n * n;
  for (int it = 0; it < max_iter; ++it) {
    std::vector<int> in;
    for (int i = 0; i < n; ++i)
      if (support[static_cast<size_t>(i)]) in.push_back(i);
    ++out.systems;
    const double viol = TrySupport(A, q, in, &z, &w, &scale);
    if (accept(viol)) return out;
    out.residual = viol;
    const double tol = kLcpTolerance * scale;
    int pick = -1;
    for (int i = 0; i < n && pick < 0; ++i) {
      const bool s = support[static_cast<size_t>(i)];
      if ((s && z[i] < -tol) || (!s && w[i] < -tol)) pick = i;
    }
    if (pick < 0) break;  // no sign violation but no complementarity
    support[static_cast<size_t>(pick)] = !support[static_cast<size_t>(pick)];
  }
  return out;
}

}  // namespace daedalus::internal
