// The sparse evaluator's Mechanics: a SparseWorkspace (per-body sweeps,
// declared sparsity), the sparse KKT solvers (CHOLMOD, KLU, SPQR), the
// projections in the mass metric through those solvers, and the Newton
// preconditioner of formulation/sparse_newton.hpp.
//
// Tangents (forward sensitivities, exact Jacobians of the DAE residual,
// the consistent start's linearization) are evaluated by a dense shadow of
// the same model, the tangent workspace of the dense path: exact, at the
// cost of a dense evaluation per direction (O(nv^2) storage), which suits
// models up to a few hundred coordinates (docs/performance.md).
#include <Eigen/Cholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <memory>
#include <vector>

#include "daedalus/sparse_kkt.hpp"
#include "eval/chart.hpp"
#include "formulation/kkt_health.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/sparse_newton.hpp"
#include "formulation/tangent_kkt.hpp"

namespace daedalus::internal {

namespace {

KktOptions QuietRedundant(KktOptions k) {
  k.allow_redundant = true;  // projection solves are minimum-norm too
  return k;
}

class SparseMechanics final : public Mechanics {
 public:
  SparseMechanics(const Model& model, const SimulationOptions& o)
      : Mechanics(model),
        ws_(model),
        kkt_(o.kkt),
        proj_q_(QuietRedundant(o.kkt)),
        proj_v_(QuietRedundant(o.kkt)) {
    // The main solver reports redundancy once; the projections stay quiet.
    proj_q_.SetReportStream(nullptr);
    proj_v_.SetReportStream(nullptr);
    const std::vector<int> hrows = rows().holonomic_rows;
    const bool all = rows().all_holonomic();
    const Model m = model;
    proj_q_.SetRowNames(
        [m, hrows, all](int i) { return m.RowName(all ? i : hrows[i]); });
    proj_v_.SetRowNames([m](int i) { return m.RowName(i); });
    all_stationary_ =
        std::all_of(rows().stationary.begin(), rows().stationary.end(),
                    [](bool s) { return s; });
  }

  bool sparse() const override { return true; }
  void SetOpenRows(const std::vector<int>& rows) override {
    // The support matrix refuses event-driven contact on the sparse path.
    if (!rows.empty())
      throw std::logic_error(
          "event-driven contact runs on the dense evaluator only");
  }

  void SetParameters(const Eigen::VectorXd& p) override {
    ws_.SetParameters(p);
    if (shadow_) shadow_->SetParameters(p);
  }
  const Eigen::VectorXd& parameters() const override { return ws_.p; }
  void SetState(double t, const double* q, const double* v) override {
    ws_.SetState(t, Eigen::Map<const Eigen::VectorXd>(q, nq()),
                 Eigen::Map<const Eigen::VectorXd>(v, nv()));
  }
  void Evaluate(double t,
                const double* q,
                const double* v,
                const EvalRequest& /*req*/) override {
    // The sparse stages have no partial requests: everything, always.
    SetState(t, q, v);
    EvaluateSparseAll(&ws_);
  }

  void EvaluatePosition(double t,
                        const Eigen::VectorXd& q,
                        const Eigen::VectorXd& v) override {
    ws_.SetState(t, q, v);
    EvaluateSparsePosition(&ws_);
  }

  double t() const override { return ws_.t; }
  const Eigen::VectorXd& q() const override { return ws_.q; }
  const Eigen::VectorXd& v() const override { return ws_.v; }
  const Eigen::VectorXd& phi() const override { return ws_.phi; }
  const Eigen::VectorXd& vel_residual() const override {
    return ws_.vel_residual;
  }
  const Eigen::VectorXd& bias() const override { return ws_.bias; }
  double energy() const override { return ws_.energy; }
  Eigen::VectorXd AppliedForce() const override { return ws_.Bu - ws_.h; }
  Point<double> point() const override {
    // The user's q: quaternions normalized (eval/chart.hpp).
    if (model().quaternions().empty())
      return Point<double>{ws_.q, ws_.v, ws_.t, ws_.p};
    qn_ = ws_.q;
    NormalizeQuaternions(model().data(), qn_);
    return Point<double>{qn_, ws_.v, ws_.t, ws_.p};
  }
  std::string DescribeState() const override {
    return daedalus::DescribeState(ws_);
  }
  Eigen::VectorXd ConstraintRates() const override { return Rates(); }
  Eigen::VectorXd Reaction(const Eigen::VectorXd& lambda) const override {
    return ws_.J.transpose() * lambda;
  }

  Eigen::VectorXd StabilizedBias(Formulation f,
                                 double alpha,
                                 double beta) const override {
    return internal::StabilizedBias(ws_, f, alpha, beta, rows().holonomic);
  }
  void Integrands(const QuadLayout& L,
                  const Eigen::Ref<const Eigen::VectorXd>& lambda,
                  double stabilization_power,
                  Eigen::Ref<Eigen::VectorXd> out) const override {
    QuadratureIntegrandsAtRates(L, ws_, Rates(), lambda, stabilization_power,
                                out);
  }
  void IntegrandsSplit(const QuadLayout& L,
                       const Eigen::VectorXd& lambda,
                       const Eigen::VectorXd& applied,
                       Eigen::Ref<Eigen::VectorXd> out) override {
    const Eigen::VectorXd& jv = Rates();
    QuadratureIntegrandsAtRates(L, ws_, jv, lambda, (applied - lambda).dot(jv),
                                out);
  }
  void DaeResidual(const DaeLayout& L,
                   double t,
                   const double* y,
                   const double* yp,
                   double* res) override {
    Evaluate(t, y + L.iq(), y + L.iv(), EvalRequest{});
    Eigen::Map<Eigen::VectorXd> F(res, L.size());
    AssembleDae(L, ws_, Eigen::Map<const Eigen::VectorXd>(y, L.size()),
                Eigen::Map<const Eigen::VectorXd>(yp, L.size()), F);
  }
  Eigen::VectorXd GtMu(const DaeLayout& L, const double* y) const override {
    return internal::GtMu(L, ws_,
                          Eigen::Map<const Eigen::VectorXd>(y, L.size()));
  }
  double EnergyAlongQ(const Eigen::VectorXd& dq) override {
    return EnergyDerivativeAlongQ(&Shadow(), dq);
  }

  void SolveKkt(const Eigen::VectorXd& bias, KktResult* r) override {
    kkt_.Solve(ws_, bias, r);
  }
  void ResolveKkt(const Eigen::VectorXd& bias, KktResult* r) override {
    // Same M and J as the last solve: its factorizations serve again.
    f_ = ws_.Bu - ws_.h;
    r->vdot.resize(nv());
    r->lambda.resize(nc());
    kkt_.Resolve(f_, bias, r->vdot, r->lambda);
    r->reaction.noalias() = ws_.J.transpose() * r->lambda;
    jv_.noalias() = ws_.J * ws_.v;
    r->power = r->lambda.cwiseProduct(jv_);
    r->health.dependent_rows = kkt_.dependent_rows();
  }
  void IdealMultipliers(const Eigen::VectorXd& applied_bias,
                        const KktResult& applied,
                        KktResult* ideal) override {
    db_ = ws_.bias - applied_bias;
    ideal->lambda.resize(nc());
    kkt_.MultiplierChange(db_, ideal->lambda);
    ideal->lambda += applied.lambda;
  }
  const std::vector<int>& dependent_rows() const override {
    return kkt_.dependent_rows();
  }
  void SolveMass(const Eigen::VectorXd& rhs, Eigen::VectorXd* x) override {
    x->resize(nv());
    kkt_.SolveMass(ws_.M, rhs, *x);
  }
  Eigen::MatrixXd DenseMass() const override { return Eigen::MatrixXd(ws_.M); }
  Eigen::MatrixXd DenseJacobian() const override {
    return Eigen::MatrixXd(ws_.J);
  }

  ProjectionResult ProjectPositions(double t,
                                    Eigen::VectorXd* q,
                                    const Eigen::VectorXd& v,
                                    double tol,
                                    int max_iter) override;
  ProjectionResult ProjectVelocities(double t,
                                     const Eigen::VectorXd& q,
                                     Eigen::VectorXd* v) override;
  void ProjectErrorEstimate(Eigen::Ref<Eigen::VectorXd> eq,
                            Eigen::Ref<Eigen::VectorXd> ev) override;

  TangentWorkspace& Tangent(const Eigen::Ref<const Eigen::VectorXd>& dq,
                            const Eigen::Ref<const Eigen::VectorXd>& dv,
                            const Eigen::VectorXd& dp,
                            const EvalRequest& req,
                            double dt) override {
    Workspace& shadow = Shadow();
    SeedTangent(shadow, dq, dv, dp, tws_.get(), dt);
    EvaluateAll(tws_.get(), req);
    return *tws_;
  }
  void FactorTangentKkt() override {
    tangent_kkt_.Factor(Eigen::MatrixXd(ws_.M), Eigen::MatrixXd(ws_.J));
  }
  void SolveTangentKkt(const TangentWorkspace& tws,
                       const VecX<D1>& bias,
                       const Eigen::VectorXd& vdot,
                       const Eigen::VectorXd& lambda,
                       Eigen::VectorXd* dvdot,
                       Eigen::VectorXd* dlambda) override {
    tangent_kkt_.Solve(tws, bias, vdot, lambda, dvdot, dlambda);
  }
  InitialSensitivity LinearizeStart(
      const Eigen::VectorXd& vdot,
      const Eigen::VectorXd& lambda,
      const SensParameter& sp,
      const Eigen::MatrixXd& initial_tangent) override {
    Workspace& shadow = Shadow();
    EvaluateAll(&shadow);
    return LinearizeConsistentStart(shadow, tws_.get(), vdot, lambda, sp,
                                    initial_tangent);
  }
  InitialSensitivity LinearizeRestart(const Eigen::VectorXd& vdot,
                                      const Eigen::VectorXd& lambda,
                                      const Eigen::VectorXd& dq0,
                                      const Eigen::VectorXd& dv0,
                                      const Eigen::VectorXd& dp) override {
    Workspace& shadow = Shadow();
    EvaluateAll(&shadow);
    return LinearizeConsistentTangent(shadow, tws_.get(), vdot, lambda, dq0,
                                      dv0, dp);
  }

  KktHealthSample Health(bool details) override {
    return SparseKktHealth(ws_.M, ws_.J, details);
  }

  std::unique_ptr<NewtonPreconditioner> MakeNewtonPreconditioner(
      std::function<void(Eigen::VectorXd*)> bias) override {
    return std::make_unique<SparseNewtonPreconditioner>(
        &ws_, [bias](const SparseWorkspace&, Eigen::VectorXd* b) { bias(b); });
  }

 private:
  // J v at the evaluated state. With every row stationary (Phi_t = 0 by
  // declaration) that is the velocity stage's J v + Phi_t itself, to
  // round-off (a directional derivative against a sparse product): no
  // second pass over J at every right-hand side. Otherwise J v, as
  // vel_residual - Phi_t would cancel.
  const Eigen::VectorXd& Rates() const {
    if (all_stationary_) return ws_.vel_residual;
    rates_.noalias() = ws_.J * ws_.v;
    return rates_;
  }
  // The dense shadow at the sparse workspace's state, and its tangent
  // workspace: made on first use, so that a run without tangents (no
  // sensitivities, no IDAS Jacobian, no GGL correction power) does not
  // hold O(nv^2) dense matrices (1000-body chain: 575 MB and 2 s to
  // allocate).
  Workspace& Shadow() {
    if (!shadow_) {
      shadow_ = std::make_unique<Workspace>(model());
      shadow_->use_compiled = false;
      shadow_->SetParameters(ws_.p);
      tws_ = std::make_unique<TangentWorkspace>(model());
    }
    shadow_->SetState(ws_.t, ws_.q, ws_.v);
    return *shadow_;
  }

  // Rows G of J that the position projection uses (the holonomic ones).
  SparseMatrixD HolonomicJacobian() const;
  // x = M^-1 G' (G M^-1 G')^-1 rhs: the KKT solve with f = 0 and b = -rhs.
  void MetricCorrection(SparseKktSolver* solver,
                        const SparseMatrixD& G,
                        const Eigen::VectorXd& rhs,
                        Eigen::VectorXd* x);

  SparseWorkspace ws_;
  SparseKktSolver kkt_, proj_q_, proj_v_;
  std::unique_ptr<Workspace> shadow_;
  std::unique_ptr<TangentWorkspace> tws_;
  TangentKkt tangent_kkt_;
  Eigen::VectorXd f_, jv_, zero_f_, mu_, dx_, db_;
  mutable Eigen::VectorXd rates_, qn_;
  bool all_stationary_ = false;
};

SparseMatrixD SparseMechanics::HolonomicJacobian() const {
  if (rows().all_holonomic()) return ws_.J;
  const std::vector<int>& hrows = rows().holonomic_rows;
  std::vector<int> map(static_cast<size_t>(nc()), -1);
  for (size_t i = 0; i < hrows.size(); ++i) map[hrows[i]] = static_cast<int>(i);
  std::vector<Eigen::Triplet<double, int>> t;
  for (int c = 0; c < ws_.J.cols(); ++c)
    for (SparseMatrixD::InnerIterator it(ws_.J, c); it; ++it)
      if (map[it.row()] >= 0) t.emplace_back(map[it.row()], c, it.value());
  SparseMatrixD G(static_cast<Eigen::Index>(hrows.size()), nv());
  G.setFromTriplets(t.begin(), t.end());
  return G;
}

void SparseMechanics::MetricCorrection(SparseKktSolver* solver,
                                       const SparseMatrixD& G,
                                       const Eigen::VectorXd& rhs,
                                       Eigen::VectorXd* x) {
  zero_f_.setZero(nv());
  x->resize(nv());
  mu_.resize(G.rows());
  solver->Solve(ws_.M, G, zero_f_, -rhs, *x, mu_);
}

ProjectionResult SparseMechanics::ProjectPositions(double t,
                                                   Eigen::VectorXd* q,
                                                   const Eigen::VectorXd& v,
                                                   double tol,
                                                   int max_iter) {
  // Gauss-Newton in the mass metric to max |Phi| <= tol (holonomic rows).
  ProjectionResult res;
  const Eigen::VectorXd q_start = *q;
  const std::vector<int>& hrows = rows().holonomic_rows;
  // Unit quaternions first (their norm is not a constraint row: the
  // corrections below move along the chart, which keeps it).
  const ModelData& d = model().data();
  NormalizeQuaternions(d, *q);
  if (hrows.empty()) {
    res.correction = (*q - q_start).norm();
    res.converged = true;
    return res;
  }
  Eigen::VectorXd phi(static_cast<Eigen::Index>(hrows.size()));
  for (int it = 0; it <= max_iter; ++it) {
    ws_.SetState(t, *q, v);
    EvaluateSparsePosition(&ws_);
    for (size_t i = 0; i < hrows.size(); ++i) phi[i] = ws_.phi[hrows[i]];
    res.residual = phi.cwiseAbs().maxCoeff();
    res.iterations = it;
    if (res.residual <= tol) {
      res.converged = true;
      break;
    }
    if (it == max_iter) break;
    EvaluateSparseVelocity(&ws_);
    EvaluateSparseDynamics(&ws_);
    MetricCorrection(&proj_q_, HolonomicJacobian(), phi, &dx_);
    // G is Phi_q N (nv columns): the correction is a chart direction.
    if (d.quaternions.empty())
      *q -= dx_;
    else
      Retract(d, -dx_, *q);
    if (!q->allFinite()) break;
  }
  res.correction = (*q - q_start).norm();
  return res;
}

ProjectionResult SparseMechanics::ProjectVelocities(double t,
                                                    const Eigen::VectorXd& q,
                                                    Eigen::VectorXd* v) {
  // v <- v - M^-1 J' (J M^-1 J')^-1 (J v + Phi_t): exact in one step.
  ProjectionResult res;
  res.converged = true;
  if (nc() == 0) return res;
  ws_.SetState(t, q, *v);
  EvaluateSparseAll(&ws_);
  MetricCorrection(&proj_v_, ws_.J, ws_.vel_residual, &dx_);
  *v -= dx_;
  res.correction = dx_.norm();
  res.iterations = 1;
  return res;
}

void SparseMechanics::ProjectErrorEstimate(Eigen::Ref<Eigen::VectorXd> eq,
                                           Eigen::Ref<Eigen::VectorXd> ev) {
  Eigen::VectorXd d;
  const ModelData& md = model().data();
  if (!md.quaternions.empty()) {
    // In chart coordinates, where J lives; back in q the error has no
    // component along a quaternion (its norm, which the projection
    // resets). As the dense path (dense_mechanics.cpp).
    Eigen::VectorXd exi(nv());
    ChartDirection(md, ws_.q, eq, exi);
    if (!rows().holonomic_rows.empty()) {
      const SparseMatrixD G = HolonomicJacobian();
      MetricCorrection(&proj_q_, G, G * exi, &d);
      exi -= d;
    }
    const Eigen::VectorXd q = ws_.q;
    CoordinateRates<double>(md, q, exi, eq);
  } else if (!rows().holonomic_rows.empty()) {
    const SparseMatrixD G = HolonomicJacobian();
    const Eigen::VectorXd e = eq;
    MetricCorrection(&proj_q_, G, G * e, &d);
    eq = e - d;
  }
  if (nc() > 0) {
    const Eigen::VectorXd e = ev;
    MetricCorrection(&proj_v_, ws_.J, ws_.J * e, &d);
    ev = e - d;
  }
}

}  // namespace

std::unique_ptr<Mechanics> MakeSparseMechanics(const Model& model,
                                               const SimulationOptions& o) {
  return std::make_unique<SparseMechanics>(model, o);
}

}  // namespace daedalus::internal
