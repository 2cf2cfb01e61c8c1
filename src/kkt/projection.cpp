#include "daedalus/projection.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <algorithm>
#include <limits>
#include <sstream>
#include <vector>

#include "daedalus/kkt.hpp"
#include "eval/chart.hpp"
#include "kkt/singularity.hpp"

namespace daedalus {

namespace {

bool IsOpenRow(const Workspace& ws, int r) {
  return std::find(ws.open_rows.begin(), ws.open_rows.end(), r) !=
         ws.open_rows.end();
}

// The holonomic rows of the current mode (open contacts dropped).
std::vector<int> HolonomicRows(const Workspace& ws) {
  const Model& model = ws.model();
  std::vector<int> rows;
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = model.constraints()[ci];
    if (c.kind == ConstraintKind::kNonholonomic) continue;
    for (int r = 0; r < c.rows; ++r)
      if (!IsOpenRow(ws, model.constraint_row(ci) + r))
        rows.push_back(model.constraint_row(ci) + r);
  }
  return rows;
}

// Mass matrix only (stage 3 needs velocities; positions suffice for M).
void EvaluateMass(Workspace* ws) { EvaluateAll(ws); }

// dx = M^-1 G' (G M^-1 G')^-1 r for the rows G of J.
Eigen::VectorXd MetricCorrection(const Workspace& ws,
                                 const Eigen::MatrixXd& G,
                                 const Eigen::VectorXd& r,
                                 const std::vector<int>& rows) {
  Eigen::LLT<Eigen::MatrixXd> llt_m(ws.M);
  // Also a mass matrix that is positive but singular to working precision
  // (a subnormal mass: M^-1 overflows and the Schur complement reads as
  // rank deficient): reciprocal condition below 1e-15, about 5 ulps. The
  // squared ratio of the Cholesky factor's extreme diagonal entries bounds
  // it from above; Eigen's rcond() estimate overflows on a subnormal pivot
  // (it returns 0.5 for diag(1, 5e-324, 2)).
  bool m_ok = llt_m.info() == Eigen::Success;
  if (m_ok && ws.M.rows() > 0) {
    const Eigen::VectorXd d = llt_m.matrixLLT().diagonal();
    const double ratio = d.minCoeff() / d.maxCoeff();
    m_ok = ratio * ratio > 1e-15 && llt_m.rcond() > 1e-15;
  }
  if (!m_ok) {
    throw KktError("model '" + ws.model().name() +
                   "': mass matrix is singular or not positive definite during "
                   "projection at " +
                   DescribeState(ws) +
                   internal::SingularMassDetail(ws.model(), ws.M, 1e-15));
  }
  const Eigen::MatrixXd Y = llt_m.solve(G.transpose());
  const Eigen::MatrixXd S = G * Y;
  Eigen::LLT<Eigen::MatrixXd> llt_s(S);
  if (llt_s.info() != Eigen::Success || llt_s.rcond() < 1e-12) {
    // Dependent rows that agree (a box resting on four corners of a face:
    // 4 gap rows of rank 3; a redundant closure): the minimum-norm
    // correction, as the sparse path's projections and the KKT solver with
    // KktOptions::allow_redundant give (whether dependent rows may run at
    // all is the KKT solve's decision). S = G M^-1 G' squares G's singular
    // values: the threshold 1e-12 is KktOptions::rank_tolerance (1e-6)
    // squared; the rows agree when the residual of S z = r is within
    // KktOptions::consistency_tolerance (1.5e-8) of the terms' size.
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
    cod.setThreshold(1e-12);
    cod.compute(S);
    const Eigen::VectorXd z = cod.solve(r);
    const double res = (S * z - r).cwiseAbs().maxCoeff();
    const double terms =
        (S.cwiseAbs() * z.cwiseAbs() + r.cwiseAbs()).maxCoeff();
    if (cod.rank() > 0 && z.allFinite() &&
        res <= 1.5e-8 * terms + 64 * std::numeric_limits<double>::epsilon() *
                                    std::max(terms, 1.0))
      return Y * z;
    // Name the dependent rows (indices into G map to model rows via `rows`).
    // 1e-10: DependentRows' default relative threshold.
    throw KktError("model '" + ws.model().name() +
                   "': constraint Jacobian is rank deficient during "
                   "projection at " +
                   DescribeState(ws) +
                   internal::RankDeficiencyDetail(ws.model(), G, rows, 1e-10));
  }
  return Y * llt_s.solve(r);
}

}  // namespace

ProjectionResult ProjectPositions(Workspace* ws,
                                  double t,
                                  Eigen::VectorXd* q,
                                  const Eigen::VectorXd& v,
                                  double tol,
                                  int max_iter) {
  ProjectionResult res;
  const std::vector<int> rows = HolonomicRows(*ws);
  const Eigen::VectorXd q_start = *q;
  // Unit quaternions first (their norm is not a constraint row: the
  // corrections below move along the chart, which keeps it).
  internal::NormalizeQuaternions(ws->model().data(), *q);
  if (rows.empty()) {
    res.correction = (*q - q_start).norm();
    res.converged = true;
    return res;
  }
  const Eigen::Index m = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd G(m, ws->model().nv());
  Eigen::VectorXd r(m);
  for (int it = 0; it <= max_iter; ++it) {
    ws->SetState(t, *q, v);
    EvaluatePosition(ws);
    for (Eigen::Index i = 0; i < m; ++i) {
      G.row(i) = ws->J.row(rows[i]);
      r[i] = ws->phi[rows[i]];
    }
    res.residual = r.cwiseAbs().maxCoeff();
    res.iterations = it;
    if (res.residual <= tol) {
      res.converged = true;
      break;
    }
    if (it == max_iter) break;
    EvaluateMass(ws);
    // G is Phi_q N (nv columns): the correction is a chart direction.
    internal::Retract(ws->model().data(), -MetricCorrection(*ws, G, r, rows),
                      *q);
    if (!q->allFinite()) break;
  }
  res.correction = (*q - q_start).norm();
  ws->SetState(t, *q, v);
  return res;
}

ProjectionResult ProjectVelocities(Workspace* ws,
                                   double t,
                                   const Eigen::VectorXd& q,
                                   Eigen::VectorXd* v) {
  ProjectionResult res;
  const Eigen::VectorXd v_start = *v;
  if (ws->model().nc() == 0) {
    res.converged = true;
    return res;
  }
  // J v + Phi_t is affine in v, so one correction is exact.
  ws->SetState(t, q, *v);
  EvaluateAll(ws);
  std::vector<int> all;
  for (int i = 0; i < ws->model().nc(); ++i)
    if (!IsOpenRow(*ws, i)) all.push_back(i);
  if (!all.empty()) {
    Eigen::MatrixXd G(static_cast<Eigen::Index>(all.size()), ws->model().nv());
    Eigen::VectorXd r(G.rows());
    for (Eigen::Index i = 0; i < G.rows(); ++i) {
      G.row(i) = ws->J.row(all[static_cast<size_t>(i)]);
      r[i] = ws->vel_residual[all[static_cast<size_t>(i)]];
    }
    *v -= MetricCorrection(*ws, G, r, all);
  }
  ws->SetState(t, q, *v);
  EvaluatePosition(ws);
  EvaluateVelocity(ws);
  res.residual = ws->vel_residual.cwiseAbs().maxCoeff();
  res.iterations = 1;
  res.converged = true;
  res.correction = (*v - v_start).norm();
  return res;
}

}  // namespace daedalus
