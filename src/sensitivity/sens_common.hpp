// Pieces of forward sensitivity analysis shared by the CVODES and IDAS
// adapters: the consistent initial sensitivities.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/sensitivity.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::internal {

/// The acceleration-level constraint right-hand side of the ODE forms:
/// b, plus the Baumgarte terms 2 alpha (J v + Phi_t) + beta^2 Phi
/// (holonomic rows) or alpha (A v + a) (nonholonomic rows). Templated on
/// the base scalar so that the tangent workspace linearizes it.
template <class S>
VecX<S> StabilizedBias(const BasicWorkspace<S>& ws,
                       const SimulationOptions& opt,
                       const std::vector<bool>& holonomic) {
  VecX<S> bias = ws.bias;
  if (opt.formulation == Formulation::kBaumgarte) {
    const double a = opt.baumgarte_alpha, b = opt.baumgarte_beta;
    for (Eigen::Index i = 0; i < bias.size(); ++i) {
      if (holonomic[i])
        bias[i] += S(2.0 * a) * ws.vel_residual[i] + S(b * b) * ws.phi[i];
      else
        bias[i] += S(a) * ws.vel_residual[i];
    }
  }
  return bias;
}

/// Linearized KKT solve at one state: factors
///   K = [ M  -J' ; J  0 ]
/// once, then maps a seeded tangent workspace to the tangents of the
/// accelerations and multipliers of the (stabilized) ODE form:
///   M dvdot - J' dlambda = -(dM vdot + dh - dBu - dJ' lambda)
///   J dvdot              = -(dJ vdot + d bias)
class KktTangent {
 public:
  void Factor(const Workspace& ws,
              const Eigen::VectorXd& vdot,
              const Eigen::VectorXd& lambda) {
    const Eigen::Index nv = ws.M.rows(), nc = ws.J.rows();
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(nv + nc, nv + nc);
    K.topLeftCorner(nv, nv) = ws.M;
    K.topRightCorner(nv, nc) = -ws.J.transpose();
    K.bottomLeftCorner(nc, nv) = ws.J;
    lu_.compute(K);
    vdot_ = vdot;
    lambda_ = lambda;
  }
  /// `tws` seeded and evaluated; `bias` its stabilized bias (tangent).
  void Solve(const TangentWorkspace& tws,
             const VecX<D1>& bias,
             Eigen::VectorXd* dvdot,
             Eigen::VectorXd* dlambda) const {
    const Eigen::Index nv = vdot_.size(), nc = lambda_.size();
    Eigen::VectorXd rhs(nv + nc);
    for (Eigen::Index i = 0; i < nv; ++i) {
      D1 acc = tws.h[i] - tws.Bu[i];
      for (Eigen::Index j = 0; j < nv; ++j) acc += tws.M(i, j) * vdot_[j];
      for (Eigen::Index k = 0; k < nc; ++k) acc -= tws.J(k, i) * lambda_[k];
      rhs[i] = -acc.d;
    }
    for (Eigen::Index k = 0; k < nc; ++k) {
      D1 acc = bias[k];
      for (Eigen::Index j = 0; j < nv; ++j) acc += tws.J(k, j) * vdot_[j];
      rhs[nv + k] = -acc.d;
    }
    const Eigen::VectorXd x = lu_.solve(rhs);
    *dvdot = x.head(nv);
    if (dlambda) *dlambda = x.tail(nc);
  }

 private:
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  Eigen::VectorXd vdot_, lambda_;
};

/// The header of a forward result: method, parameter names and the names
/// of the rows of `final` (coordinates, v_<coordinate>, lambda_<row>).
inline void StartForwardResult(const Model& model,
                               const std::vector<SensParameter>& sens,
                               SensitivityResult* sr) {
  sr->method = SensMethod::kForward;
  for (const auto& p : sens) sr->parameters.push_back(p.name);
  for (const auto& n : model.coordinate_names()) sr->components.push_back(n);
  for (const auto& n : model.coordinate_names())
    sr->components.push_back("v_" + n);
  for (int i = 0; i < model.nc(); ++i)
    sr->components.push_back("lambda_" + model.RowName(i));
}

/// SUNDIALS's difference-quotient sensitivities perturb the parameter
/// array itself, so they apply to model parameters only: fills `plist`
/// (their indices) and `pbar` (|p|, 1 where p = 0, the perturbation scale)
/// and returns an error text naming an initial-condition parameter (empty
/// when all are model parameters).
inline std::string DqParameters(const std::vector<SensParameter>& sens,
                                const Eigen::VectorXd& p,
                                std::vector<int>* plist,
                                Eigen::VectorXd* pbar) {
  for (const auto& sp : sens) {
    if (sp.kind != SensParameter::Kind::kModel)
      return "sensitivity parameter '" + sp.name +
             "': difference quotients (--sens-dq) need model parameters; "
             "initial conditions use the exact (default) sensitivity "
             "equations";
    plist->push_back(sp.index);
  }
  *pbar = p.cwiseAbs();
  for (Eigen::Index i = 0; i < pbar->size(); ++i)
    if ((*pbar)[i] == 0.0) (*pbar)[i] = 1.0;
  return "";
}

/// Initial sensitivities of one parameter at a consistent start.
struct InitialSensitivity {
  Eigen::VectorXd dq, dv, dvdot, dlambda;
};

/// Linearizes the consistent initialization at the consistent state held by
/// `ws` (all stages evaluated, accelerations `vdot` and multipliers
/// `lambda` from the KKT solve) along parameter `sp`:
///   dq = P (dq0) - M^-1 J' S^-1 Phi_p dp     (mass-metric projection)
///   dv = dv0 - M^-1 J' S^-1 d(J v + Phi_t)   (velocity projection)
/// with S = J M^-1 J', then (dvdot, dlambda) from the linearized KKT system.
/// Exact when the given initial state is consistent (the projection is the
/// identity there and its derivative is the projector).
inline InitialSensitivity LinearizeInitialState(
    Workspace& ws,
    TangentWorkspace* tws,
    const Eigen::VectorXd& vdot,
    const Eigen::VectorXd& lambda,
    const SensParameter& sp,
    const Eigen::MatrixXd& initial_tangent) {
  const int nq = ws.model().nq(), nv = ws.model().nv(), nc = ws.model().nc();
  const int np = ws.model().num_parameters();
  InitialSensitivity out;
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

  // M^-1 J' S^-1 r by two solves with M and one with S (no inverse formed).
  Eigen::LDLT<Eigen::MatrixXd> mf(ws.M);
  const Eigen::MatrixXd MiJt = mf.solve(ws.J.transpose());
  Eigen::LDLT<Eigen::MatrixXd> sf(ws.J * MiJt);
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
  out.dq = dq0 - correct(dphi);

  // Velocity: re-linearize at the corrected position tangent.
  SeedTangent(ws, out.dq, dv0, dp, tws);
  EvaluateAll(tws);
  Eigen::VectorXd dr(nc);
  for (int i = 0; i < nc; ++i) dr[i] = tws->vel_residual[i].d;
  out.dv = dv0 - correct(dr);

  // Accelerations and multipliers: linearized KKT system
  //   M dvdot - J' dlambda = -(dM vdot + dh - dBu - dJ' lambda)
  //   J dvdot              = -(dJ vdot + db)
  SeedTangent(ws, out.dq, out.dv, dp, tws);
  EvaluateAll(tws);
  Eigen::VectorXd r1(nv), r2(nc);
  for (int i = 0; i < nv; ++i) {
    D1 acc = tws->h[i] - tws->Bu[i];
    for (int j = 0; j < nv; ++j) acc += tws->M(i, j) * vdot[j];
    for (int k = 0; k < nc; ++k) acc -= tws->J(k, i) * lambda[k];
    r1[i] = -acc.d;
  }
  for (int k = 0; k < nc; ++k) {
    D1 acc = tws->bias[k];
    for (int j = 0; j < nv; ++j) acc += tws->J(k, j) * vdot[j];
    r2[k] = -acc.d;
  }
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(nv + nc, nv + nc);
  K.topLeftCorner(nv, nv) = ws.M;
  K.topRightCorner(nv, nc) = -ws.J.transpose();
  K.bottomLeftCorner(nc, nv) = ws.J;
  Eigen::VectorXd rhs(nv + nc);
  rhs << r1, r2;
  const Eigen::VectorXd x = K.partialPivLu().solve(rhs);
  out.dvdot = x.head(nv);
  out.dlambda = x.tail(nc);
  return out;
}

}  // namespace daedalus::internal
