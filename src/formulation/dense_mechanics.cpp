// The dense evaluator's Mechanics: a Workspace (compiled programs or dual
// numbers), the dense KktSolver, the tangent workspace, and the projections
// of kkt/projection.cpp.
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <memory>
#include <vector>

#include "eval/chart.hpp"
#include "eval/compiled_model.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/tangent_kkt.hpp"

namespace daedalus::internal {

namespace {

class DenseMechanics final : public Mechanics {
 public:
  DenseMechanics(const Model& model, const SimulationOptions& o)
      : Mechanics(model), ws_(model), kkt_(model, o.kkt) {
    ws_.use_compiled = o.compiled;
    if (o.compiled) compiled_ = GetCompiled(model);
  }

  bool sparse() const override { return false; }
  void SetOpenRows(const std::vector<int>& rows) override {
    // Ascending, so that the evaluation finds a row by binary search.
    open_rows_ = rows;
    std::sort(open_rows_.begin(), open_rows_.end());
    ws_.open_rows = open_rows_;
    ws_.SetState(ws_.t, ws_.q, ws_.v);
  }
  void SetSlipRows(const std::vector<SlipRow>& slip) override {
    ws_.slip = slip;
    ws_.SetState(ws_.t, ws_.q, ws_.v);
  }
  const std::vector<SlipRow>& slip_rows() const override { return ws_.slip; }
  const CompiledModel* compiled() const override { return compiled_; }

  void SetParameters(const Eigen::VectorXd& p) override {
    ws_.SetParameters(p);
  }
  const Eigen::VectorXd& parameters() const override { return ws_.p; }
  void SetState(double t, const double* q, const double* v) override {
    ws_.SetState(t, Eigen::Map<const Eigen::VectorXd>(q, nq()),
                 Eigen::Map<const Eigen::VectorXd>(v, nv()));
  }
  void Evaluate(double t,
                const double* q,
                const double* v,
                const EvalRequest& req) override {
    SetState(t, q, v);
    EvaluateAll(&ws_, req);
  }

  bool Forward(double t,
               const double* q,
               const double* v,
               bool energies,
               Eigen::VectorXd* vdot) override {
    if (!HasForwardDynamics(model())) return false;
    SetState(t, q, v);
    EvaluateForward(&ws_, energies, vdot);
    return true;
  }

  void EvaluatePosition(double t,
                        const Eigen::VectorXd& q,
                        const Eigen::VectorXd& v) override {
    ws_.SetState(t, q, v);
    daedalus::EvaluatePosition(&ws_);
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
    return Point<double>{ws_.user_q(), ws_.v, ws_.t, ws_.p};
  }
  std::string DescribeState() const override {
    return daedalus::DescribeState(ws_);
  }
  Eigen::VectorXd ConstraintRates() const override { return ws_.J * ws_.v; }
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
    QuadratureIntegrands(L, ws_, lambda, stabilization_power, out);
  }
  void DaeResidual(const DaeLayout& L,
                   double t,
                   const double* y,
                   const double* yp,
                   double* res) override {
    EvalRequest req;
    req.bias = L.needs_bias();
    req.dynamics = EvalRequest::Dynamics::kResidual;
    req.vdot = yp + L.iv();
    Evaluate(t, y + L.iq(), y + L.iv(), req);
    Eigen::Map<Eigen::VectorXd> F(res, L.size());
    AssembleDae(L, ws_, Eigen::Map<const Eigen::VectorXd>(y, L.size()),
                Eigen::Map<const Eigen::VectorXd>(yp, L.size()), F);
  }
  Eigen::VectorXd GtMu(const DaeLayout& L, const double* y) const override {
    return internal::GtMu(L, ws_,
                          Eigen::Map<const Eigen::VectorXd>(y, L.size()));
  }
  double EnergyAlongQ(const Eigen::VectorXd& dq) override {
    return EnergyDerivativeAlongQ(&ws_, dq);
  }

  void SolveKkt(const Eigen::VectorXd& bias, KktResult* r) override {
    kkt_.Solve(ws_, bias, r);
  }
  void ResolveKkt(const Eigen::VectorXd& bias, KktResult* r) override {
    // The dense solver keeps the factors of M while M is unchanged; the
    // Schur complement is refactored (cheap at these sizes).
    kkt_.Solve(ws_, bias, r);
  }
  const std::vector<int>& dependent_rows() const override {
    return kkt_.dependent_rows();
  }
  void SolveMass(const Eigen::VectorXd& rhs, Eigen::VectorXd* x) override {
    x->resize(nv());
    kkt_.SolveMass(rhs, *x);
  }
  Eigen::MatrixXd DenseMass() const override { return ws_.M; }
  Eigen::MatrixXd DenseJacobian() const override { return ws_.J; }
  void JacobianRows(const std::vector<int>& rows,
                    Eigen::MatrixXd* out) const override {
    out->resize(static_cast<Eigen::Index>(rows.size()), ws_.J.cols());
    for (size_t i = 0; i < rows.size(); ++i)
      out->row(static_cast<Eigen::Index>(i)) = ws_.J.row(rows[i]);
  }

  ProjectionResult ProjectPositions(double t,
                                    Eigen::VectorXd* q,
                                    const Eigen::VectorXd& v,
                                    double tol,
                                    int max_iter) override {
    return daedalus::ProjectPositions(&ws_, t, q, v, tol, max_iter);
  }
  ProjectionResult ProjectVelocities(double t,
                                     const Eigen::VectorXd& q,
                                     Eigen::VectorXd* v) override {
    return daedalus::ProjectVelocities(&ws_, t, q, v);
  }
  void ProjectErrorEstimate(Eigen::Ref<Eigen::VectorXd> eq,
                            Eigen::Ref<Eigen::VectorXd> ev) override {
    Eigen::LLT<Eigen::MatrixXd> llt_m(ws_.M);
    std::vector<int> hrows;  // the current mode's (open contacts dropped)
    for (int r : rows().holonomic_rows)
      if (!is_open(r)) hrows.push_back(r);
    const auto& d = model().data();
    if (!d.quaternions.empty()) {
      // In chart coordinates (eval/chart.hpp), where J lives; back in q the
      // error has no component along a quaternion (its norm, which the
      // projection resets).
      Eigen::VectorXd exi(nv());
      ChartDirection(d, ws_.q, eq, exi);
      if (!hrows.empty()) {
        Eigen::MatrixXd G(static_cast<Eigen::Index>(hrows.size()), nv());
        for (size_t i = 0; i < hrows.size(); ++i)
          G.row(i) = ws_.J.row(hrows[i]);
        const Eigen::MatrixXd Y = llt_m.solve(G.transpose());
        exi -= Y * (G * Y).llt().solve(G * exi);
      }
      const Eigen::VectorXd q = ws_.q;
      CoordinateRates<double>(d, q, exi, eq);
    } else if (!hrows.empty()) {
      Eigen::MatrixXd G(static_cast<Eigen::Index>(hrows.size()), nv());
      for (size_t i = 0; i < hrows.size(); ++i) G.row(i) = ws_.J.row(hrows[i]);
      const Eigen::MatrixXd Y = llt_m.solve(G.transpose());
      const Eigen::VectorXd e = eq;
      eq = e - Y * (G * Y).llt().solve(G * e);
    }
    const Eigen::MatrixXd Jc = ClosedRows(ws_.J);
    if (Jc.rows() > 0) {
      const Eigen::MatrixXd Y = llt_m.solve(Jc.transpose());
      const Eigen::VectorXd e = ev;
      ev = e - Y * (Jc * Y).llt().solve(Jc * e);
    }
  }

  TangentWorkspace& Tangent(const Eigen::Ref<const Eigen::VectorXd>& dq,
                            const Eigen::Ref<const Eigen::VectorXd>& dv,
                            const Eigen::VectorXd& dp,
                            const EvalRequest& req,
                            double dt) override {
    TangentWorkspace& tws = Tws();
    tws.open_rows = ws_.open_rows;
    tws.slip = ws_.slip;
    SeedTangent(ws_, dq, dv, dp, &tws, dt);
    EvaluateAll(&tws, req);
    return tws;
  }
  void FactorTangentKkt() override {
    tangent_kkt_.Factor(ws_.M, ws_.J, ws_.open_rows, ws_.slip);
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
    return LinearizeConsistentStart(ws_, &Tws(), vdot, lambda, sp,
                                    initial_tangent);
  }
  InitialSensitivity LinearizeRestart(const Eigen::VectorXd& vdot,
                                      const Eigen::VectorXd& lambda,
                                      const Eigen::VectorXd& dq0,
                                      const Eigen::VectorXd& dv0,
                                      const Eigen::VectorXd& dp) override {
    return LinearizeConsistentTangent(ws_, &Tws(), vdot, lambda, dq0, dv0, dp);
  }

  KktHealthSample Health(bool details) override {
    if (open_rows_.empty()) return DenseKktHealth(ws_.M, ws_.J, details);
    // The current mode's rows; weak rows mapped back to the model's.
    KktHealthSample h = DenseKktHealth(ws_.M, ClosedRows(ws_.J), details);
    std::vector<int> closed;
    for (int r = 0; r < nc(); ++r)
      if (!is_open(r)) closed.push_back(r);
    for (int& r : h.weak_rows) r = closed[static_cast<size_t>(r)];
    return h;
  }

 private:
  // The rows of the current mode (open contacts dropped) of an nc-row
  // matrix.
  Eigen::MatrixXd ClosedRows(const Eigen::MatrixXd& A) const {
    if (open_rows_.empty()) return A;
    Eigen::MatrixXd out(A.rows() - static_cast<Eigen::Index>(open_rows_.size()),
                        A.cols());
    Eigen::Index k = 0;
    for (Eigen::Index r = 0; r < A.rows(); ++r)
      if (!is_open(static_cast<int>(r))) out.row(k++) = A.row(r);
    return out;
  }

  // The tangent workspace (sensitivities only), made on first use: its
  // dual-number nv x nv matrices cost 0.2 s to allocate and clear at 1000
  // coordinates, which runs without sensitivities never touch.
  TangentWorkspace& Tws() {
    if (!tws_) tws_ = std::make_unique<TangentWorkspace>(model());
    return *tws_;
  }
  Workspace ws_;
  std::unique_ptr<TangentWorkspace> tws_;
  KktSolver kkt_;
  TangentKkt tangent_kkt_;
  const CompiledModel* compiled_ = nullptr;
};

}  // namespace

std::unique_ptr<Mechanics> MakeDenseMechanics(const Model& model,
                                              const SimulationOptions& o) {
  return std::make_unique<DenseMechanics>(model, o);
}

}  // namespace daedalus::internal
