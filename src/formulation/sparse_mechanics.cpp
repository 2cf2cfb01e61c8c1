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
//
// The contact mode (docs/contact.md, "The stage"): open rows are zeroed in
// the workspace after every evaluation, as the dense evaluator's
// DropOpenRows does, and the KKT solves and projections run on the closed
// rows alone (a J of those rows, its pattern fixed per mode, whose values
// are gathered at each solve); the open rows' multipliers are 0. A run
// without open rows takes the unmasked path unchanged.
#include <Eigen/Cholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
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
    // Row i of the solvers' J is a row of the current mode.
    proj_q_.SetRowNames([this](int i) {
      return this->model().RowName(ModeHolonomicRows()[static_cast<size_t>(i)]);
    });
    proj_v_.SetRowNames(
        [this](int i) { return this->model().RowName(ModeRow(i)); });
    kkt_.SetRowNames(
        [this](int i) { return this->model().RowName(ModeRow(i)); });
    kkt_.SetContext([this] {
      return "model '" + this->model().name() + "', " +
             daedalus::DescribeState(ws_);
    });
    all_stationary_ =
        std::all_of(rows().stationary.begin(), rows().stationary.end(),
                    [](bool s) { return s; });
  }

  bool sparse() const override { return true; }
  void SetOpenRows(const std::vector<int>& rows) override;
  void SetSlipRows(const std::vector<SlipRow>& slip) override {
    if (!slip.empty())
      throw std::runtime_error(
          "model '" + model().name() + "': a contact started to slip (row '" +
          model().RowName(slip.front().row) + "', " +
          daedalus::DescribeState(ws_) +
          "): slipping friction (the nonsymmetric KKT system of "
          "docs/friction.md) runs on the dense evaluator only; sticking "
          "contacts run on the sparse one. Use --kkt dense");
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
    Mask();
  }

  void EvaluatePosition(double t,
                        const Eigen::VectorXd& q,
                        const Eigen::VectorXd& v) override {
    ws_.SetState(t, q, v);
    EvaluateSparsePosition(&ws_);
    Mask();
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
    if (open_rows_.empty()) {
      solved_masked_ = false;
      kkt_.Solve(ws_, bias, r);
      return;
    }
    // The closed rows alone: J_c's values gathered, lambda 0 on the rest.
    ws_.Require(Stage::kDynamics, "SparseMechanics::SolveKkt");
    for (size_t k = 0; k < jc_src_.size(); ++k)
      jc_.valuePtr()[k] = ws_.J.valuePtr()[jc_src_[k]];
    f_ = ws_.Bu - ws_.h;
    GatherClosed(bias, &bc_);
    r->vdot.resize(nv());
    lc_.resize(static_cast<Eigen::Index>(closed_.size()));
    kkt_.Solve(ws_.M, jc_, f_, bc_, r->vdot, lc_);
    FinishClosed(r);
  }
  void ResolveKkt(const Eigen::VectorXd& bias, KktResult* r) override {
    // Same M and J as the last solve: its factorizations serve again.
    f_ = ws_.Bu - ws_.h;
    r->vdot.resize(nv());
    if (!open_rows_.empty()) {
      GatherClosed(bias, &bc_);
      lc_.resize(static_cast<Eigen::Index>(closed_.size()));
      kkt_.Resolve(f_, bc_, r->vdot, lc_);
      FinishClosed(r);
      return;
    }
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
    if (!open_rows_.empty()) {
      GatherClosed(db_, &bc_);
      lc_.resize(bc_.size());
      kkt_.MultiplierChange(bc_, lc_);
      ideal->lambda = applied.lambda;
      for (size_t i = 0; i < closed_.size(); ++i)
        ideal->lambda[closed_[i]] += lc_[static_cast<Eigen::Index>(i)];
      return;
    }
    kkt_.MultiplierChange(db_, ideal->lambda);
    ideal->lambda += applied.lambda;
  }
  const std::vector<int>& dependent_rows() const override {
    // The last solve's rows (the mode may have changed since).
    if (!solved_masked_) return kkt_.dependent_rows();
    dependent_.clear();
    for (int i : kkt_.dependent_rows())
      dependent_.push_back(solved_rows_[static_cast<size_t>(i)]);
    return dependent_;
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
    if (open_rows_.empty()) return SparseKktHealth(ws_.M, ws_.J, details);
    // The current mode's rows; weak rows mapped back to the model's.
    KktHealthSample h = SparseKktHealth(ws_.M, ClosedJacobian(), details);
    for (int& r : h.weak_rows) r = closed_[static_cast<size_t>(r)];
    return h;
  }

  std::unique_ptr<NewtonPreconditioner> MakeNewtonPreconditioner(
      std::function<void(Eigen::VectorXd*)> bias) override {
    return std::make_unique<ModePreconditioner>(
        std::make_unique<SparseNewtonPreconditioner>(
            &ws_,
            [bias](const SparseWorkspace&, Eigen::VectorXd* b) { bias(b); }),
        &open_rows_);
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

  // The Newton preconditioner in the current mode: an open row is taken as
  // the preconditioner's dependent rows are, mu = 0 on its own (its row of
  // the Newton system is no constraint of the mode).
  class ModePreconditioner final : public NewtonPreconditioner {
   public:
    ModePreconditioner(std::unique_ptr<SparseNewtonPreconditioner> p,
                       const std::vector<int>* open)
        : p_(std::move(p)), open_(open) {}
    void Update(double t,
                const Eigen::VectorXd& q,
                const Eigen::VectorXd& v,
                const Eigen::VectorXd& a,
                const Eigen::VectorXd& lambda) override {
      p_->Update(t, q, v, a, lambda);
    }
    void SetDependentRows(const std::vector<int>& rows) override {
      if (open_->empty()) {
        p_->SetDependentRows(rows);
        return;
      }
      rows_ = rows;
      rows_.insert(rows_.end(), open_->begin(), open_->end());
      p_->SetDependentRows(rows_);
    }
    bool Factor(double gamma) override { return p_->Factor(gamma); }
    void Solve(const Eigen::Ref<const Eigen::VectorXd>& r,
               Eigen::Ref<Eigen::VectorXd> z) override {
      p_->Solve(r, z);
    }

   private:
    std::unique_ptr<SparseNewtonPreconditioner> p_;
    const std::vector<int>* open_;
    std::vector<int> rows_;
  };

  // Row i of the current mode's KKT system: a model row.
  int ModeRow(int i) const {
    return open_rows_.empty() ? i : closed_[static_cast<size_t>(i)];
  }
  // The holonomic rows of the current mode.
  const std::vector<int>& ModeHolonomicRows() const {
    return open_rows_.empty() ? rows().holonomic_rows : closed_holonomic_;
  }
  // Zeroes the open rows of the evaluated workspace (DropOpenRows of the
  // dense evaluator): Phi, Phi_t, J v + Phi_t, b and J's values.
  void Mask() {
    if (open_rows_.empty()) return;
    for (int r : open_rows_) {
      ws_.phi[r] = 0.0;
      ws_.phi_t[r] = 0.0;
      ws_.vel_residual[r] = 0.0;
      ws_.bias[r] = 0.0;
    }
    for (int e : open_slots_) ws_.J.valuePtr()[e] = 0.0;
  }
  // x's closed rows.
  void GatherClosed(const Eigen::VectorXd& x, Eigen::VectorXd* out) const {
    out->resize(static_cast<Eigen::Index>(closed_.size()));
    for (size_t i = 0; i < closed_.size(); ++i)
      (*out)[static_cast<Eigen::Index>(i)] = x[closed_[i]];
  }
  // J's closed rows at the evaluated state.
  const SparseMatrixD& ClosedJacobian() {
    for (size_t k = 0; k < jc_src_.size(); ++k)
      jc_.valuePtr()[k] = ws_.J.valuePtr()[jc_src_[k]];
    return jc_;
  }
  // lambda (nc, 0 on open rows) and what goes with it from the closed
  // rows' lc_.
  void FinishClosed(KktResult* r) {
    solved_masked_ = true;
    if (solved_rows_ != closed_) solved_rows_ = closed_;
    r->lambda.setZero(nc());
    for (size_t i = 0; i < closed_.size(); ++i)
      r->lambda[closed_[i]] = lc_[static_cast<Eigen::Index>(i)];
    r->reaction.noalias() = ws_.J.transpose() * r->lambda;
    jv_.noalias() = ws_.J * ws_.v;
    r->power = r->lambda.cwiseProduct(jv_);
    r->health.dependent_rows = dependent_rows();
  }

  SparseWorkspace ws_;
  SparseKktSolver kkt_, proj_q_, proj_v_;
  // The mode: the closed rows (ascending; empty while no row is open), the
  // closed holonomic ones, J's value slots on open rows, and the closed
  // rows' J (pattern per mode, value k from J's value jc_src_[k]).
  std::vector<int> closed_, closed_holonomic_, open_slots_, jc_src_;
  SparseMatrixD jc_;
  Eigen::VectorXd bc_, lc_;
  // The rows of the last KKT solve, when it was masked (its dependent rows
  // are indices into them).
  std::vector<int> solved_rows_;
  bool solved_masked_ = false;
  mutable std::vector<int> dependent_;
  std::unique_ptr<Workspace> shadow_;
  std::unique_ptr<TangentWorkspace> tws_;
  TangentKkt tangent_kkt_;
  Eigen::VectorXd f_, jv_, zero_f_, mu_, dx_, db_;
  mutable Eigen::VectorXd rates_, qn_;
  bool all_stationary_ = false;
};

void SparseMechanics::SetOpenRows(const std::vector<int>& rows) {
  open_rows_ = rows;
  std::sort(open_rows_.begin(), open_rows_.end());
  open_rows_.erase(std::unique(open_rows_.begin(), open_rows_.end()),
                   open_rows_.end());
  closed_.clear();
  closed_holonomic_.clear();
  open_slots_.clear();
  jc_src_.clear();
  // Invalidates the evaluated state, as the dense evaluator's does.
  ws_.SetState(ws_.t, ws_.q, ws_.v);
  if (open_rows_.empty()) {
    jc_ = SparseMatrixD();
    return;
  }
  std::vector<int> map(static_cast<size_t>(nc()), -1);
  for (int r = 0; r < nc(); ++r) {
    if (std::binary_search(open_rows_.begin(), open_rows_.end(), r)) continue;
    map[r] = static_cast<int>(closed_.size());
    closed_.push_back(r);
  }
  for (int r : Mechanics::rows().holonomic_rows)
    if (map[r] >= 0) closed_holonomic_.push_back(r);
  // J's pattern is the workspace's, fixed when it was built.
  const SparseMatrixD& J = ws_.J;
  std::vector<int> outer(static_cast<size_t>(nv() + 1), 0), inner;
  for (int c = 0; c < nv(); ++c) {
    for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e) {
      const int r = map[J.innerIndexPtr()[e]];
      if (r < 0) {
        open_slots_.push_back(e);
      } else {
        inner.push_back(r);
        jc_src_.push_back(e);
      }
    }
    outer[c + 1] = static_cast<int>(inner.size());
  }
  jc_.resize(static_cast<Eigen::Index>(closed_.size()), nv());
  jc_.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
  std::copy(outer.begin(), outer.end(), jc_.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), jc_.innerIndexPtr());
  std::fill(jc_.valuePtr(), jc_.valuePtr() + jc_.nonZeros(), 0.0);
}

SparseMatrixD SparseMechanics::HolonomicJacobian() const {
  if (rows().all_holonomic() && open_rows_.empty()) return ws_.J;
  const std::vector<int>& hrows = ModeHolonomicRows();
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
  const std::vector<int>& hrows = ModeHolonomicRows();
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
    Mask();
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
  Mask();
  if (!open_rows_.empty()) {
    if (closed_.empty()) return res;  // no row of the mode
    GatherClosed(ws_.vel_residual, &bc_);
    MetricCorrection(&proj_v_, ClosedJacobian(), bc_, &dx_);
  } else {
    MetricCorrection(&proj_v_, ws_.J, ws_.vel_residual, &dx_);
  }
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
    if (!ModeHolonomicRows().empty()) {
      const SparseMatrixD G = HolonomicJacobian();
      MetricCorrection(&proj_q_, G, G * exi, &d);
      exi -= d;
    }
    const Eigen::VectorXd q = ws_.q;
    CoordinateRates<double>(md, q, exi, eq);
  } else if (!ModeHolonomicRows().empty()) {
    const SparseMatrixD G = HolonomicJacobian();
    const Eigen::VectorXd e = eq;
    MetricCorrection(&proj_q_, G, G * e, &d);
    eq = e - d;
  }
  if (nc() > 0 && open_rows_.empty()) {
    const Eigen::VectorXd e = ev;
    MetricCorrection(&proj_v_, ws_.J, ws_.J * e, &d);
    ev = e - d;
  } else if (!closed_.empty()) {
    const SparseMatrixD& Jc = ClosedJacobian();
    const Eigen::VectorXd e = ev;
    MetricCorrection(&proj_v_, Jc, Jc * e, &d);
    ev = e - d;
  }
}

}  // namespace

std::unique_ptr<Mechanics> MakeSparseMechanics(const Model& model,
                                               const SimulationOptions& o) {
  return std::make_unique<SparseMechanics>(model, o);
}

}  // namespace daedalus::internal
