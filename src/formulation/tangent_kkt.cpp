#include "formulation/tangent_kkt.hpp"

#include <Eigen/Cholesky>

#include "eval/chart.hpp"

namespace daedalus::internal {

void TangentKkt::Factor(const Eigen::MatrixXd& M,
                        const Eigen::MatrixXd& J,
                        const std::vector<int>& open,
                        const std::vector<SlipRow>& slip) {
  const Eigen::Index nv = M.rows(), nc = J.rows();
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(nv + nc, nv + nc);
  K.topLeftCorner(nv, nv) = M;
  K.topRightCorner(nv, nc) = -J.transpose();
  K.bottomLeftCorner(nc, nv) = J;
  for (int r : open) K(nv + r, nv + r) = 1.0;
  for (const SlipRow& s : slip) {
    K.row(nv + s.row).setZero();
    K(nv + s.row, nv + s.row) = 1.0;
    K(nv + s.row, nv + s.normal) = s.mu * s.sigma;
  }
  lu_.compute(K);
}

void TangentKkt::Solve(const TangentWorkspace& tws,
                       const VecX<D1>& bias,
                       const Eigen::VectorXd& vdot,
                       const Eigen::VectorXd& lambda,
                       Eigen::VectorXd* dvdot,
                       Eigen::VectorXd* dlambda) const {
  const Eigen::Index nv = vdot.size(), nc = lambda.size();
  Eigen::VectorXd rhs(nv + nc);
  for (Eigen::Index i = 0; i < nv; ++i) {
    D1 acc = tws.h[i] - tws.Bu[i];
    for (Eigen::Index j = 0; j < nv; ++j) acc += tws.M(i, j) * vdot[j];
    for (Eigen::Index k = 0; k < nc; ++k) acc -= tws.J(k, i) * lambda[k];
    rhs[i] = -acc.d;
  }
  for (Eigen::Index k = 0; k < nc; ++k) {
    D1 acc = bias[k];
    for (Eigen::Index j = 0; j < nv; ++j) acc += tws.J(k, j) * vdot[j];
    rhs[nv + k] = -acc.d;
  }
  // A slipping row's equation lambda_t + mu sigma lambda_n = 0: its
  // tangent is d lambda_t + mu sigma d lambda_n = -sigma lambda_n d mu
  // (sigma is constant along a planar slip; a cone's direction is held,
  // docs/friction.md), d mu the tangent of mu's parameter, if any.
  for (const SlipRow& s : tws.slip) {
    double dmu = 0.0;
    if (s.mu_param >= 0) dmu = tws.p[s.mu_param].d;
    rhs[nv + s.row] = -s.sigma * lambda[s.normal] * dmu;
  }
  const Eigen::VectorXd x = lu_.solve(rhs);
  *dvdot = x.head(nv);
  if (dlambda) *dlambda = x.tail(nc);
}

InitialSensitivity LinearizeConsistentStart(
    Workspace& ws,
    TangentWorkspace* tws,
    const Eigen::VectorXd& vdot,
    const Eigen::VectorXd& lambda,
    const SensParameter& sp,
    const Eigen::MatrixXd& initial_tangent) {
  const int nq = ws.model().nq(), nv = ws.model().nv();
  const int np = ws.model().num_parameters();
  Eigen::VectorXd dq0 = Eigen::VectorXd::Zero(nq);
  Eigen::VectorXd dv0 = Eigen::VectorXd::Zero(nv);
  Eigen::VectorXd dp = Eigen::VectorXd::Zero(np);
  if (sp.kind == SensParameter::Kind::kInitialQ) dq0[sp.index] = 1.0;
  if (sp.kind == SensParameter::Kind::kInitialV) dv0[sp.index] = 1.0;
  if (sp.kind == SensParameter::Kind::kModel) {
    dp[sp.index] = 1.0;
    if (initial_tangent.cols() > sp.index) {
      dq0 = initial_tangent.col(sp.index).head(nq);
      dv0 = initial_tangent.col(sp.index).tail(nv);
    }
  }
  return LinearizeConsistentTangent(ws, tws, vdot, lambda, dq0, dv0, dp);
}

InitialSensitivity LinearizeConsistentTangent(Workspace& ws,
                                              TangentWorkspace* tws,
                                              const Eigen::VectorXd& vdot,
                                              const Eigen::VectorXd& lambda,
                                              Eigen::VectorXd dq0,
                                              const Eigen::VectorXd& dv0,
                                              const Eigen::VectorXd& dp) {
  const int nq = ws.model().nq(), nv = ws.model().nv(), nc = ws.model().nc();
  InitialSensitivity out;

  // Quaternions (eval/chart.hpp): the state's q is unit here (the start
  // normalizes it), and the functions see n(q). A direction along q only
  // changes the norm, which they do not see and the run's normalization
  // removes: d n(q0) / d q0 = (I - n n') / |q0| at the given q0, so a q0[i]
  // or an initial tangent is projected onto the tangent of the sphere
  // (exact for a unit q0; for a non-unit one the run normalizes it and the
  // sensitivity is that of the normalized start, off by the factor |q0|).
  const ModelData& d = ws.model().data();
  const bool chart = !d.quaternions.empty();
  if (chart) ProjectQuaternionTangent(d, ws.q, dq0);
  // The current mode's rows only (open contacts: docs/contact.md; a
  // slipping friction row is open but keeps its J row, docs/friction.md).
  tws->open_rows = ws.open_rows;
  tws->slip = ws.slip;

  // M^-1 J' S^-1 r by two solves with M and one with S (no inverse formed).
  // Without constraints there is nothing to correct, and no factorization:
  // Eigen's triangular solve with an nv x 0 right-hand side dereferences
  // its null data (UBSan: reference binding to null pointer).
  Eigen::MatrixXd MiJt;
  Eigen::LDLT<Eigen::MatrixXd> sf;
  if (nc > 0) {
    Eigen::MatrixXd Jc = ws.J;  // the constraints: no slipping row
    for (const SlipRow& s : ws.slip) Jc.row(s.row).setZero();
    MiJt = Eigen::LDLT<Eigen::MatrixXd>(ws.M).solve(Jc.transpose());
    Eigen::MatrixXd S = Jc * MiJt;
    for (int r : ws.open_rows) S(r, r) = 1.0;  // its J row is zero
    sf.compute(S);
  }
  auto correct = [&](const Eigen::VectorXd& r) -> Eigen::VectorXd {
    if (nc == 0) return Eigen::VectorXd::Zero(nv);
    return MiJt * sf.solve(r);
  };

  // Position: the linearized constraint residual along (dq0, dp) is
  // J dq0 + Phi_p dp (holonomic rows; nonholonomic rows have Phi = 0).
  SeedTangent(ws, dq0, dv0, dp, tws);
  EvaluatePosition(tws);
  Eigen::VectorXd dphi(nc);
  for (int i = 0; i < nc; ++i) dphi[i] = tws->phi[i].d;
  // The correction is a velocity-space (chart) direction dxi; in q it is
  // N(q) dxi (q (x) (0, dxi) / 2 on a quaternion, tangent to the sphere).
  const Eigen::VectorXd dxi = correct(dphi);
  if (chart) {
    Eigen::VectorXd dqc(nq);
    CoordinateRates<double>(d, ws.q, dxi, dqc);
    out.dq = dq0 - dqc;
  } else {
    out.dq = dq0 - dxi;
  }

  // Velocity: re-linearize at the corrected position tangent.
  SeedTangent(ws, out.dq, dv0, dp, tws);
  EvaluateAll(tws);
  Eigen::VectorXd dr(nc);
  for (int i = 0; i < nc; ++i) dr[i] = tws->vel_residual[i].d;
  out.dv = dv0 - correct(dr);

  // Accelerations and multipliers: the linearized KKT system (TangentKkt,
  // with the slipping rows' equations).
  SeedTangent(ws, out.dq, out.dv, dp, tws);
  EvaluateAll(tws);
  TangentKkt kkt;
  kkt.Factor(ws.M, ws.J, ws.open_rows, ws.slip);
  kkt.Solve(*tws, tws->bias, vdot, lambda, &out.dvdot, &out.dlambda);
  return out;
}

}  // namespace daedalus::internal
