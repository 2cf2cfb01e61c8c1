#include "contact/cone_solver.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

namespace daedalus::internal {

namespace {

constexpr double kConeEps = std::numeric_limits<double>::epsilon();
// The impulse that makes the local velocity zero is accepted (stick) when
// it does so to this fraction of the local velocity scale: the 3 x 3
// solve's round-off is ~1e-16 relative; a semidefinite W whose range
// misses -q leaves a residual of order |q|.
constexpr double kStickResidual = 1e-12;
// Bisection steps on alpha: each halves the bracket, so 200 reach any
// double-precision bracket from one 1e300 wide.
constexpr int kMaxBisections = 200;

// P_t(alpha) = (S + alpha I)^-1 r and P_n(alpha) = -(q_n + W_tn . P_t) /
// W_nn on the slip branch u_n = 0, u_t = -alpha' P_t.
struct SlipBranch {
  Eigen::MatrixXd S;
  Eigen::VectorXd r, wtn;
  double qn = 0.0, wnn = 0.0, mu = 0.0;
  void At(double alpha, Eigen::VectorXd* pt, double* pn) const {
    const Eigen::Index k = S.rows();
    const Eigen::MatrixXd A = S + alpha * Eigen::MatrixXd::Identity(k, k);
    *pt = A.completeOrthogonalDecomposition().solve(r);
    *pn = -(qn + wtn.dot(*pt)) / wnn;
  }
  double Phi(double alpha) const {
    Eigen::VectorXd pt;
    double pn = 0.0;
    At(alpha, &pt, &pn);
    return pt.norm() - mu * pn;
  }
};

}  // namespace

Eigen::VectorXd LocalConeSolve(const Eigen::MatrixXd& W,
                               const Eigen::VectorXd& q,
                               double mu_static,
                               double mu_kinetic) {
  const Eigen::Index k = q.size();
  Eigen::VectorXd P = Eigen::VectorXd::Zero(k);
  const double wnn = W(0, 0);
  // Take-off: the free normal velocity already separates (or the row
  // cannot push: a zero normal).
  if (!(q[0] < 0.0) || !(wnn > 0.0)) return P;
  // Stick: u = W P + q = 0 with P in the cone of mu_static.
  const Eigen::VectorXd stick = W.completeOrthogonalDecomposition().solve(-q);
  const double qscale = q.cwiseAbs().maxCoeff();
  const bool solves =
      stick.allFinite() &&
      (W * stick + q).cwiseAbs().maxCoeff() <= kStickResidual * qscale;
  if (solves && stick[0] >= 0.0 &&
      stick.tail(k - 1).norm() <= mu_static * stick[0])
    return stick;
  // Slip on the cone of mu_kinetic (frictionless when it is 0).
  if (!(mu_kinetic > 0.0)) {
    P[0] = -q[0] / wnn;
    return P;
  }
  SlipBranch b;
  b.wtn = W.block(1, 0, k - 1, 1);
  b.S = W.bottomRightCorner(k - 1, k - 1) - b.wtn * b.wtn.transpose() / wnn;
  b.r = -q.tail(k - 1) + b.wtn * (q[0] / wnn);
  b.qn = q[0];
  b.wnn = wnn;
  b.mu = mu_kinetic;
  Eigen::VectorXd pt;
  double pn = 0.0;
  if (b.Phi(0.0) <= 0.0) {
    // Inside the kinetic cone with u = 0 (mu_kinetic > mu_static): stick.
    b.At(0.0, &pt, &pn);
    if (pn >= 0.0) {
      P[0] = pn;
      P.tail(k - 1) = pt;
      return P;
    }
  }
  // phi(0) > 0 (the stick impulse leaves the cone, or pulls) and phi(inf)
  // = mu q_n / W_nn < 0: a root in between.
  double lo = 0.0;
  double hi = std::max(b.S.trace(), wnn);
  for (int i = 0; i < kMaxBisections && b.Phi(hi) >= 0.0; ++i) {
    lo = hi;
    hi *= 4.0;
  }
  for (int i = 0; i < kMaxBisections && hi - lo > 2.0 * kConeEps * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (b.Phi(mid) >= 0.0)
      lo = mid;
    else
      hi = mid;
  }
  b.At(hi, &pt, &pn);
  pn = std::max(pn, 0.0);
  // On the cone to round-off: |P_t| = mu_k P_n.
  const double nt = pt.norm();
  if (nt > 0.0) pt *= mu_kinetic * pn / nt;
  P[0] = pn;
  P.tail(k - 1) = pt;
  return P;
}

ConeSolution SolveCone(const ConeProblem& p,
                       const Eigen::VectorXd& warm,
                       double scale,
                       double tol,
                       int max_iter) {
  const Eigen::Index m = p.q.size();
  ConeSolution s;
  s.P = warm.size() == m ? warm : Eigen::VectorXd::Zero(m);
  Eigen::VectorXd u(m);
  const double vs = std::max(scale, std::numeric_limits<double>::min());
  for (int it = 1; it <= max_iter; ++it) {
    // The local velocities afresh each sweep (no drift of the updates).
    u.noalias() = p.W * s.P;
    u += p.q;
    double change = 0.0;
    for (const ConeBlock& b : p.blocks) {
      const int i = b.start, k = b.size;
      Eigen::VectorXd pnew(k);
      if (k == 1) {
        const double wii = p.W(i, i);
        if (!(wii > 0.0)) continue;  // a zero row: no impulse moves it
        pnew[0] = s.P[i] - u[i] / wii;
        if (b.contact) pnew[0] = std::max(pnew[0], 0.0);
      } else {
        const Eigen::MatrixXd Wii = p.W.block(i, i, k, k);
        const Eigen::VectorXd ql = u.segment(i, k) - Wii * s.P.segment(i, k);
        pnew = LocalConeSolve(Wii, ql, b.mu_static, b.mu_kinetic);
      }
      const Eigen::VectorXd dp = pnew - s.P.segment(i, k);
      if (dp.cwiseAbs().maxCoeff() == 0.0) continue;
      u.noalias() += p.W.middleCols(i, k) * dp;
      s.P.segment(i, k) = pnew;
      change =
          std::max(change, (p.W.block(i, i, k, k) * dp).cwiseAbs().maxCoeff());
    }
    s.iterations = it;
    s.residual = change / vs;
    if (!std::isfinite(s.residual)) return s;
    if (s.residual <= tol) {
      s.converged = true;
      return s;
    }
  }
  return s;
}

}  // namespace daedalus::internal
