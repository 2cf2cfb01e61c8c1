#include "events/event_jump.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace daedalus::internal {

namespace {

StatePoint Split(const Model& m, const FlowPoint& f, const Eigen::VectorXd& p) {
  StatePoint x;
  x.t = f.t;
  x.q = f.y.head(m.nq());
  x.v = f.y.tail(m.nv());
  x.p = p;
  return x;
}

}  // namespace

EventJump::EventJump(const Model& model,
                     int event,
                     const Eigen::VectorXd& p,
                     const FlowPoint& minus)
    : event_(event), minus_(minus) {
  const ModelData& md = model.data();
  const EventDecl& ev = md.events[static_cast<size_t>(event)];
  const StatePoint x = Split(model, minus, p);
  const ScalarGradient g = GradientAt(md, ev.fn, x, "event '" + ev.name + "'");
  const int nq = model.nq(), nv = model.nv();
  gy_.resize(nq + nv);
  gy_ << g.dq.transpose(), g.dv.transpose();
  gp_ = g.dp;
  gt_ = g.dt;
  SetRate();
  if (ev.reset) {
    has_reset_ = true;
    delta_ =
        JacobianAt(md, ev.reset, x, "reset map of event '" + ev.name + "'");
    if (delta_.value.size() != nq + nv) {
      std::ostringstream os;
      os << "reset map of event '" << ev.name << "' returned "
         << delta_.value.size()
         << " values; it must return nq + nv = " << nq + nv
         << " (the coordinates after the event, then the "
         << "velocities)";
      throw std::invalid_argument(os.str());
    }
    if (!delta_.value.allFinite())
      throw std::runtime_error(
          "reset map of event '" + ev.name +
          "' returned a non-finite value at t = " + std::to_string(minus.t));
  }
}

EventJump::EventJump(const FlowPoint& minus,
                     Eigen::RowVectorXd gy,
                     Eigen::VectorXd gp,
                     double gt,
                     VectorJacobian delta)
    : minus_(minus),
      gy_(std::move(gy)),
      gp_(std::move(gp)),
      gt_(gt),
      has_reset_(true),
      delta_(std::move(delta)) {
  SetRate();
}

void EventJump::SetRate() {
  rate_ = gy_.dot(minus_.ydot) + gt_;
  const double scale = gy_.norm() * minus_.ydot.norm() + std::abs(gt_);
  grazing_ = !(std::abs(rate_) > kGrazing * scale);
}

double EventJump::Tau(const Eigen::Ref<const Eigen::VectorXd>& s,
                      const Eigen::VectorXd& dp) const {
  double num = gy_.dot(s);
  if (dp.size() > 0) num += gp_.dot(dp);
  return -num / rate_;
}

void EventJump::Saltation(Mechanics* mech,
                          const KktResult& r_plus,
                          const FlowPoint& plus) {
  plus_ = plus;
  const Eigen::Index n = minus_.y.size(), np = gp_.size();
  const int nq = mech->nq(), nv = mech->nv();
  Eigen::MatrixXd Dy(n, n);
  Dy << delta_.dq, delta_.dv;
  // w = Delta_y y'- + Delta_t - y'+.
  const Eigen::VectorXd w = Dy * minus_.ydot + delta_.dt - plus.ydot;
  Eigen::MatrixXd S0 = Dy - w * gy_ / rate_;
  Eigen::MatrixXd R0 = delta_.dp - w * gp_.transpose() / rate_;
  // The restart's projection onto the constraints, linearized at the
  // projected state: s+ = P_y (S0 s + R0 dp) + P_p dp, column by column.
  // Without constraints and quaternions it is the identity.
  if (mech->nc() == 0 && mech->model().quaternions().empty()) {
    S_ = std::move(S0);
    R_ = std::move(R0);
    return;
  }
  S_.resize(n, n);
  R_.resize(n, np);
  const Eigen::VectorXd none = Eigen::VectorXd::Zero(np);
  auto project = [&](const Eigen::VectorXd& d, const Eigen::VectorXd& dp) {
    const InitialSensitivity s = mech->LinearizeRestart(
        r_plus.vdot, r_plus.lambda, d.head(nq), d.tail(nv), dp);
    Eigen::VectorXd out(n);
    out << s.dq, s.dv;
    return out;
  };
  for (Eigen::Index j = 0; j < n; ++j) S_.col(j) = project(S0.col(j), none);
  for (Eigen::Index j = 0; j < np; ++j)
    R_.col(j) = project(R0.col(j), Eigen::VectorXd::Unit(np, j));
}

Eigen::VectorXd EventJump::After(const Eigen::Ref<const Eigen::VectorXd>& s,
                                 const Eigen::VectorXd& dp) const {
  Eigen::VectorXd out = S_ * s;
  if (dp.size() > 0) out += R_ * dp;
  return out;
}

std::string GrazingMessage(const Model& model, const EventJump& jump) {
  std::ostringstream os;
  os.precision(3);
  os << "event '" << model.data().events[jump.event()].name
     << "' at t = " << jump.minus().t
     << " is grazing: its function crosses zero at the rate " << jump.rate()
     << ", below " << kGrazing
     << " of |g_y| |y'| + |g_t|, so the event time is not differentiable "
        "there (dt_e/dp = -(g_y s + g_p) / g' would divide by it); the "
        "sensitivities across it are not defined";
  return os.str();
}

void MakeRestartConsistent(Mechanics* mech,
                           const SimulationOptions& options,
                           const std::string& event,
                           double t,
                           Eigen::VectorXd* q,
                           Eigen::VectorXd* v,
                           EventRecord* record) {
  const ProjectionResult pp =
      mech->ProjectPositions(t, q, *v, options.initial_projection_tol,
                             options.initial_projection_max_iter);
  if (!pp.converged) {
    mech->EvaluatePosition(t, *q, *v);
    Eigen::Index worst = 0;
    double r = 0.0;
    if (mech->nc() > 0) r = mech->phi().cwiseAbs().maxCoeff(&worst);
    std::ostringstream os;
    os << "the reset map of event '" << event << "' at t = " << t
       << " leaves the constraints, and projecting its result back did not "
          "converge (constraint '"
       << mech->model().RowName(static_cast<int>(worst)) << "' residual " << r
       << " after " << pp.iterations
       << " iterations); make the reset map keep the constraints";
    throw std::runtime_error(os.str());
  }
  const ProjectionResult pv = mech->ProjectVelocities(t, *q, v);
  record->reset_correction_position = pp.correction;
  record->reset_correction_velocity = pv.correction;
}

Eigen::MatrixXd TotalSensitivityAtEvent(Mechanics* mech,
                                        const FlowPoint& at,
                                        const Eigen::MatrixXd& s,
                                        const std::vector<Eigen::VectorXd>& dp,
                                        const Eigen::VectorXd& tau) {
  const int nq = mech->nq(), nv = mech->nv(), nc = mech->nc();
  const Eigen::Index ns = s.cols();
  Eigen::MatrixXd out(nq + nv + nc, ns);
  mech->Evaluate(at.t, at.y.head(nq), at.y.tail(nv));
  KktResult r;
  if (nc > 0) {
    mech->SolveKkt(mech->bias(), &r);
    mech->FactorTangentKkt();
  }
  for (Eigen::Index i = 0; i < ns; ++i) {
    const Eigen::VectorXd d = s.col(i) + at.ydot * tau[i];
    out.col(i).head(nq + nv) = d;
    if (nc == 0) continue;
    TangentWorkspace& tws = mech->Tangent(
        d.head(nq), d.tail(nv), dp[static_cast<size_t>(i)], {}, tau[i]);
    Eigen::VectorXd dvdot, dlambda;
    mech->SolveTangentKkt(tws, tws.bias, r.vdot, r.lambda, &dvdot, &dlambda);
    out.col(i).tail(nc) = dlambda;
  }
  return out;
}

AdjointTerminal TerminalCondition(const Model& model,
                                  int functional,
                                  const Eigen::VectorXd& p,
                                  const FlowPoint& at,
                                  const EventJump* event,
                                  const std::vector<Eigen::VectorXd>& dp) {
  const ModelData& md = model.data();
  const auto& f = md.functionals[static_cast<size_t>(functional)];
  const int nq = model.nq(), nv = model.nv();
  const StatePoint x = Split(model, at, p);
  AdjointTerminal out;
  out.mu = Eigen::VectorXd::Zero(nq + nv);
  out.direct = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dp.size()));
  ScalarGradient phi;
  phi.dq = Eigen::VectorXd::Zero(nq);
  phi.dv = Eigen::VectorXd::Zero(nv);
  phi.dp = Eigen::VectorXd::Zero(p.size());
  if (f.terminal) {
    phi = GradientAt(md, f.terminal, x, "functional '" + f.name + "'");
    out.value = phi.value;
    out.mu << phi.dq, phi.dv;
  }
  for (size_t i = 0; i < dp.size(); ++i)
    if (dp[i].size() > 0)
      out.direct[static_cast<Eigen::Index>(i)] = phi.dp.dot(dp[i]);
  if (event == nullptr) return out;
  double c = out.mu.dot(at.ydot) + (f.terminal ? phi.dt : 0.0);
  if (f.running) c += ValueAt(md, f.running, x);
  out.mu -= event->gy().transpose() * (c / event->rate());
  for (size_t i = 0; i < dp.size(); ++i)
    if (dp[i].size() > 0)
      out.direct[static_cast<Eigen::Index>(i)] -=
          c * event->gp().dot(dp[i]) / event->rate();
  return out;
}

void AdjointJump(const EventJump& jump,
                 double running_minus,
                 double running_plus,
                 const Eigen::VectorXd& mu_plus,
                 const std::vector<Eigen::VectorXd>& dp,
                 Eigen::VectorXd* mu_minus,
                 Eigen::VectorXd* gradient_share) {
  const double dl = (running_minus - running_plus) / jump.rate();
  *mu_minus = jump.S().transpose() * mu_plus - jump.gy().transpose() * dl;
  gradient_share->setZero(static_cast<Eigen::Index>(dp.size()));
  const Eigen::VectorXd muR = jump.R().transpose() * mu_plus;  // np
  for (size_t i = 0; i < dp.size(); ++i)
    if (dp[i].size() > 0)
      (*gradient_share)[static_cast<Eigen::Index>(i)] =
          muR.dot(dp[i]) - dl * jump.gp().dot(dp[i]);
}

}  // namespace daedalus::internal
