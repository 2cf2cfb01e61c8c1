#include "daedalus/checks.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>

namespace daedalus {

namespace {

D2 EvalL2(const internal::ModelData& d, const Point<D2>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f2(x);
  D2 l = d.kinetic.f2(x);
  if (d.potential) l -= d.potential.f2(x);
  return l;
}

// d2 L / dv_i dq_k at velocity w (inner tangent e_i on v, outer e_k on q).
double MixedVq(Workspace* ws, int i, int k, const Eigen::VectorXd& w) {
  const auto& d = ws->model().data();
  const int n = ws->model().nv();
  for (int j = 0; j < n; ++j) {
    ws->q2[j] = D2(D1(ws->q[j], 0.0), D1(j == k ? 1 : 0, 0.0));
    ws->v2[j] = D2(D1(w[j], j == i ? 1 : 0), D1(0.0, 0.0));
  }
  const D2 t2(D1(ws->t, 0.0), D1(0.0, 0.0));
  return EvalL2(d, Point<D2>{ws->q2, ws->v2, t2, ws->p2}).d.d;
}

}  // namespace

std::vector<Eigen::MatrixXd> MassMatrixDerivatives(Workspace* ws) {
  const int n = ws->model().nv();
  std::vector<Eigen::MatrixXd> dM(n, Eigen::MatrixXd::Zero(n, n));
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  // (M(q) e_j)_i differentiated in q_k; subtracting the value at v = 0
  // removes any term linear in v.
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < n; ++i) {
      const double base = MixedVq(ws, i, k, zero);
      for (int j = 0; j < n; ++j) {
        dM[k](i, j) = MixedVq(ws, i, k, Eigen::VectorXd::Unit(n, j)) - base;
      }
    }
  }
  return dM;
}

Eigen::MatrixXd ChristoffelMatrix(Workspace* ws) {
  const int n = ws->model().nv();
  const std::vector<Eigen::MatrixXd> dM = MassMatrixDerivatives(ws);
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        C(i, j) += 0.5 * (dM[k](i, j) + dM[j](i, k) - dM[i](j, k)) * ws->v[k];
  return C;
}

bool StructuralReport::ok(double tol) const {
  return symmetry_error <= tol && min_eigenvalue > 0.0 &&
         skew_error <= tol * std::max(1.0, skew_scale) &&
         energy_rate_error <=
             tol * std::max(1.0, std::abs(energy_rate) + std::abs(power_sum));
}

StructuralReport CheckStructure(Workspace* ws, const KktOptions& kkt) {
  StructuralReport rep;
  const int n = ws->model().nv();
  EvaluateAll(ws);
  rep.symmetry_error = (ws->M - ws->M.transpose()).cwiseAbs().maxCoeff();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(ws->M,
                                                    Eigen::EigenvaluesOnly);
  rep.min_eigenvalue = es.eigenvalues()[0];

  // Skew identity.
  const std::vector<Eigen::MatrixXd> dM = MassMatrixDerivatives(ws);
  Eigen::MatrixXd Mdot = Eigen::MatrixXd::Zero(n, n);
  for (int k = 0; k < n; ++k) Mdot += dM[k] * ws->v[k];
  const Eigen::MatrixXd C = ChristoffelMatrix(ws);
  const Eigen::MatrixXd S = Mdot - 2.0 * C;
  rep.skew_error = (S + S.transpose()).cwiseAbs().maxCoeff();
  rep.skew_scale = Mdot.cwiseAbs().maxCoeff() + C.cwiseAbs().maxCoeff();

  // Energy rate by AD of E = v'L_v - L along (v, vdot, 1), independent of
  // the assembled h.
  EvaluateAll(ws);
  KktSolver solver(ws->model(), kkt);
  KktResult r;
  solver.Solve(*ws, ws->bias, &r);
  const auto& d = ws->model().data();
  for (int j = 0; j < n; ++j)
    ws->q2[j] = D2(D1(ws->q[j], 0.0), D1(ws->v[j], 0.0));
  const D2 t2(D1(ws->t, 0.0), D1(1.0, 0.0));
  double edot = 0.0, ldot = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      ws->v2[j] = D2(D1(ws->v[j], j == i ? 1 : 0), D1(r.vdot[j], 0.0));
    const D2 l = EvalL2(d, Point<D2>{ws->q2, ws->v2, t2, ws->p2});
    // d/dt (v_i L_vi) = vdot_i L_vi + v_i d/dt L_vi
    edot += r.vdot[i] * l.v.d + ws->v[i] * l.d.d;
    ldot = l.d.v;
  }
  rep.energy_rate = edot - ldot;
  rep.power_sum = ws->v.dot(ws->Bu - ws->Dv + ws->Qr) + r.power.sum() - ws->L_t;
  rep.energy_rate_error = std::abs(rep.energy_rate - rep.power_sum);
  ws->SetState(ws->t, ws->q, ws->v);  // scratch was reused
  EvaluateAll(ws);
  return rep;
}

}  // namespace daedalus
