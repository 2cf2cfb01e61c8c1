#include "formulation/ode_form.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "eval/chart.hpp"
#include "formulation/roots.hpp"
#include "model/invoke.hpp"

namespace daedalus::internal {

OdeForm::OdeForm(Mechanics* mech, const SimulationOptions& options)
    : mech_(mech),
      opt_(options),
      kind_(options.formulation),
      nq_(mech->nq()),
      nv_(mech->nv()),
      nc_(mech->nc()),
      layout_(mech->model()) {
  if (kind_ != Formulation::kUnstabilized && kind_ != Formulation::kBaumgarte &&
      kind_ != Formulation::kProjection)
    throw std::logic_error(std::string("OdeForm: ") + ToString(kind_) +
                           " is not an ODE form");
  split_ = kind_ == Formulation::kBaumgarte && nc_ > 0;
  // The O(nv) forward dynamics for the right-hand side: no constraints (so
  // no KKT system), no sensitivities (their tangents need M) and the dense
  // evaluator (Mechanics::Forward).
  forward_ = HasForwardDynamics(mech->model()) &&
             options.sensitivity.method == SensMethod::kNone && !mech->sparse();
  // The sparse evaluator's Newton systems (BDF, and Adams with
  // sensitivities) are solved by GMRES with this preconditioner.
  if (mech->sparse()) {
    newton_ = mech->MakeNewtonPreconditioner([this](Eigen::VectorXd* b) {
      *b = mech_->StabilizedBias(kind_, opt_.baumgarte_alpha,
                                 opt_.baumgarte_beta);
    });
  }
}

void OdeForm::Accelerations(double t, const double* y, bool energies) {
  if (forward_) {
    if (!mech_->Forward(t, y, y + nq_, energies, &r_.vdot))
      throw std::logic_error("OdeForm: the forward route went away");
    r_.lambda.resize(0);
    applied_bias_.resize(0);
    ideal_valid_ = false;
    return;
  }
  KktAccelerations(t, y);
}

void OdeForm::KktAccelerations(double t, const double* y) {
  if (dq_params_) mech_->SetParameters(*dq_params_);
  mech_->Evaluate(t, y, y + nq_);
  applied_bias_ =
      mech_->StabilizedBias(kind_, opt_.baumgarte_alpha, opt_.baumgarte_beta);
  mech_->SolveKkt(applied_bias_, &r_);
  ideal_valid_ = false;
}

const Eigen::VectorXd& OdeForm::Reported() {
  if (!split_) return r_.lambda;
  if (!ideal_valid_) {
    mech_->IdealMultipliers(applied_bias_, r_, &ideal_);
    ideal_valid_ = true;
  }
  return ideal_.lambda;
}

void OdeForm::Rhs(double t, const double* y, double* ydot) {
  Accelerations(t, y, /*energies=*/false);
  Eigen::Map<Eigen::VectorXd> yd(ydot, nq_ + nv_);
  if (nq_ == nv_ && mech_->model().quaternions().empty()) {
    yd.head(nq_) = mech_->v();
  } else {
    CoordinateRates<double>(mech_->model().data(), mech_->q(), mech_->v(),
                            yd.head(nq_));
  }
  yd.tail(nv_) = r_.vdot;
}

void OdeForm::IntegrandsHere(Eigen::Ref<Eigen::VectorXd> out) {
  const Eigen::VectorXd& lambda = Reported();
  // Power of the stabilization share of the applied multipliers,
  // (lambda_applied - lambda_reported)' J v (zero unless Baumgarte).
  if (split_)
    mech_->IntegrandsSplit(layout_, lambda, r_.lambda, out);
  else
    mech_->Integrands(layout_, lambda, 0.0, out);
}

std::vector<int> OdeForm::LiveQuadratures() const {
  const auto& d = mech_->model().data();
  const ConstraintRows& rows = mech_->rows();
  std::vector<int> live;
  for (int i = 0; i < layout_.size(); ++i) {
    // A stationary holonomic row does no ideal work (Phi_t = 0 is checked
    // at every evaluation); absent damping and loads do none; only
    // Baumgarte has a stabilization power (projection's stabilization work
    // comes from its jumps).
    const bool dead =
        (i == layout_.damping() && !d.damping) ||
        (i == layout_.other() && !d.other_loads) ||
        (i >= layout_.ideal() && i < layout_.ideal() + layout_.nc &&
         rows.stationary[i - layout_.ideal()]) ||
        (i == layout_.stabilization() && !split_) ||
        // The energies of an InertialFn model do not depend on t.
        (i == layout_.time() && static_cast<bool>(d.inertial_dynamics));
    if (!dead) live.push_back(i);
  }
  return live;
}

void OdeForm::Roots(double t,
                    const double* y,
                    const RootSet& roots,
                    double* g) {
  if (!roots.NeedsMultipliers()) {
    // The events and the open contacts' gaps read (t, q, v, p) alone: no
    // evaluation of the model and no KKT solve. They were about a quarter
    // of the bouncing ball's instructions at its 5410 root evaluations
    // (docs/contact.md, the cost targets). Everything that reads the
    // mechanics' evaluated quantities evaluates its own state first.
    if (dq_params_) mech_->SetParameters(*dq_params_);
    mech_->SetState(t, y, y + nq_);
    roots.Evaluate(*mech_, Eigen::VectorXd(), g);
    return;
  }
  Accelerations(t, y);
  roots.Evaluate(*mech_, Reported(), g);
}

void OdeForm::Project(double t, const double* y, double* corr, double* err) {
  Eigen::Map<const Eigen::VectorXd> Y(y, nq_ + nv_);
  Eigen::VectorXd q = Y.head(nq_), v = Y.tail(nv_);
  // Energy before the projection.
  mech_->Evaluate(t, q, v);
  const double e_before = mech_->energy();
  // Gauss-Newton to round-off: it converges quadratically, so a handful of
  // iterations reach |Phi| ~ 1e-15; failing that, let CVODES retry.
  const ProjectionResult pr = mech_->ProjectPositions(t, &q, v, 1e-13, 8);
  if (!pr.converged) {
    throw std::runtime_error("position projection did not converge (|Phi| = " +
                             std::to_string(pr.residual) + ")");
  }
  mech_->ProjectVelocities(t, q, &v);
  mech_->Evaluate(t, q, v);
  const double e_after = mech_->energy();
  Eigen::Map<Eigen::VectorXd> c(corr, nq_ + nv_);
  c.head(nq_) = q - Y.head(nq_);
  c.tail(nv_) = v - Y.tail(nv_);
  // Error projection: remove the components of the local error estimate
  // normal to the manifold (in the mass metric), as cvsPendulum_dns does.
  if (err != nullptr) {
    Eigen::Map<Eigen::VectorXd> e(err, nq_ + nv_);
    mech_->ProjectErrorEstimate(e.head(nq_), e.tail(nv_));
  }
  while (!jumps_.empty() && jumps_.back().first >= t) jumps_.pop_back();
  jumps_.emplace_back(t, e_after - e_before);
}

void OdeForm::ProjectSample(double t, double* y) {
  Eigen::Map<Eigen::VectorXd> Y(y, nq_ + nv_);
  Eigen::VectorXd q = Y.head(nq_), v = Y.tail(nv_);
  mech_->Evaluate(t, q, v);
  // The same tolerance and iteration limit as the step projection.
  const ProjectionResult pr = mech_->ProjectPositions(t, &q, v, 1e-13, 8);
  if (!pr.converged) return;
  mech_->ProjectVelocities(t, q, &v);
  Y.head(nq_) = q;
  Y.tail(nv_) = v;
}

double OdeForm::ProjectionWork(double t) const {
  double w = 0.0;
  for (const auto& j : jumps_)
    if (j.first <= t) w += j.second;
  return w;
}

bool OdeForm::EscalateToProjection(double t,
                                   double energy_before,
                                   Eigen::VectorXd* q,
                                   Eigen::VectorXd* v,
                                   std::string* why) {
  const ProjectionResult pp = mech_->ProjectPositions(
      t, q, *v, 1e-13, opt_.initial_projection_max_iter);
  if (!pp.converged) {
    *why = "the position projection did not converge";
    return false;
  }
  mech_->ProjectVelocities(t, *q, v);
  mech_->Evaluate(t, *q, *v);
  jumps_.emplace_back(t, mech_->energy() - energy_before);
  kind_ = Formulation::kProjection;
  split_ = false;
  return true;
}

void OdeForm::PrepareTangents(double t, const double* y) {
  KktAccelerations(t, y);
  mech_->FactorTangentKkt();
  if (split_) {
    // The tangents need the ideal accelerations too: the whole system.
    mech_->ResolveKkt(mech_->bias(), &ideal_);
    ideal_valid_ = true;
  }
}

void OdeForm::Tangent(const double* s,
                      const Eigen::VectorXd& dp,
                      Eigen::VectorXd* dvdot,
                      Eigen::VectorXd* dlambda_applied,
                      Eigen::VectorXd* dlambda_reported) {
  TangentWorkspace& tws =
      mech_->Tangent(Eigen::Map<const Eigen::VectorXd>(s, nq_),
                     Eigen::Map<const Eigen::VectorXd>(s + nq_, nv_), dp);
  tws_ = &tws;
  Eigen::VectorXd dl;
  mech_->SolveTangentKkt(
      tws,
      internal::StabilizedBias(tws, kind_, opt_.baumgarte_alpha,
                               opt_.baumgarte_beta, mech_->rows().holonomic),
      r_.vdot, r_.lambda, dvdot, &dl);
  if (dlambda_reported) {
    if (split_) {
      Eigen::VectorXd unused;
      mech_->SolveTangentKkt(tws, tws.bias, ideal_.vdot, ideal_.lambda, &unused,
                             dlambda_reported);
    } else {
      *dlambda_reported = dl;
    }
  }
  if (dlambda_applied) *dlambda_applied = std::move(dl);
}

void OdeForm::RateTangent(const double* s, double* out) const {
  const Eigen::Map<const Eigen::VectorXd> dq(s, nq_), dv(s + nq_, nv_);
  Eigen::Map<Eigen::VectorXd> o(out, nq_);
  const ModelData& d = mech_->model().data();
  if (d.quaternions.empty()) {
    o = dv;
    return;
  }
  // q' = N(q) v is formed from the raw q (Rhs, mech_->q()), so its tangent
  // is the exact derivative of that map; the tangent of the accelerations
  // (Tangent) is taken through n(q), which the dual numbers differentiate.
  CoordinateRatesTangent(d, mech_->q(), mech_->v(), dq, dv, o);
}

void OdeForm::IntegrandTangent(const Eigen::VectorXd& dlambda_applied,
                               const Eigen::VectorXd& dlambda_reported,
                               Eigen::Ref<Eigen::VectorXd> out) {
  const TangentWorkspace& tws = *tws_;
  const Eigen::VectorXd& reported = Reported();
  VecX<D1> lam(nc_), app(nc_), q(layout_.size());
  for (int k = 0; k < nc_; ++k) {
    lam[k] = D1(reported[k], dlambda_reported[k]);
    app[k] = D1(r_.lambda[k], dlambda_applied[k]);
  }
  D1 stab(0.0);
  if (split_) stab = (app - lam).dot(tws.J * tws.v);
  QuadratureIntegrands(layout_, tws, lam, stab, q);
  for (Eigen::Index k = 0; k < q.size(); ++k) out[k] = q[k].d;
}

void OdeForm::UserIntegrandTangent(double t,
                                   const double* y,
                                   const double* s,
                                   const Eigen::VectorXd& dp,
                                   Eigen::Ref<Eigen::VectorXd> out) const {
  out.setZero();
  const ModelData& d = mech_->model().data();
  if (layout_.nuq == 0) return;
  const Eigen::VectorXd& p = mech_->parameters();
  VecX<D1> q(nq_), v(nv_), pd(p.size());
  for (int j = 0; j < nq_; ++j) q[j] = D1(y[j], s[j]);
  for (int j = 0; j < nv_; ++j) v[j] = D1(y[nq_ + j], s[nq_ + j]);
  for (Eigen::Index j = 0; j < p.size(); ++j)
    pd[j] = D1(p[j], dp.size() > 0 ? dp[j] : 0.0);
  const Point<D1> x{UserCoordinates(d, q, nv_), v, D1(t), pd};
  for (int k = 0; k < layout_.nuq; ++k)
    out[layout_.user() + k] = Invoke(d.quadratures[k].second, x).d;
}

void OdeForm::StateJacobian(double t, const double* y, Eigen::MatrixXd* fy) {
  KktAccelerations(t, y);
  mech_->FactorTangentKkt();
  const int n = nq_ + nv_;
  fy->setZero(n, n);
  Eigen::VectorXd s = Eigen::VectorXd::Zero(n), none, da;
  // q' = N(q) v (eval/chart.hpp; the identity block for nq = nv).
  CoordinateRatesJacobian(mech_->model().data(), mech_->q(), mech_->v(),
                          fy->topLeftCorner(nq_, nq_),
                          fy->topRightCorner(nq_, nv_));
  for (int j = 0; j < n; ++j) {
    s[j] = 1.0;
    Tangent(s.data(), none, &da, nullptr, nullptr);
    fy->col(j).tail(nv_) = da;
    s[j] = 0.0;
  }
}

void OdeForm::PreconditionerSetup(double t,
                                  const double* y,
                                  bool jok,
                                  double gamma) {
  if (!jok) {
    KktAccelerations(t, y);
    const Eigen::Map<const Eigen::VectorXd> Y(y, nq_ + nv_);
    newton_->Update(t, Y.head(nq_), Y.tail(nv_), r_.vdot, r_.lambda);
  }
  newton_->SetDependentRows(mech_->dependent_rows());
  if (!newton_->Factor(gamma))
    throw std::runtime_error("Newton preconditioner is singular");
}

}  // namespace daedalus::internal
