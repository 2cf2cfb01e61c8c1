#include "events/event_handler.hpp"

#include <sstream>
#include <stdexcept>

namespace daedalus::internal {

EventHandler::EventHandler(Mechanics* mech,
                           const SimulationOptions& options,
                           RootSet* roots,
                           SimulationSummary* sum,
                           std::vector<Eigen::VectorXd> directions)
    : mech_(mech),
      opt_(options),
      roots_(roots),
      sum_(sum),
      dirs_(std::move(directions)) {
  if (!options.sensitivity.functional.empty())
    target_ =
        ParseFunctionalTarget(mech->model(), options.sensitivity.functional);
  for (const std::string& f : options.sensitivity.more_functionals)
    more_.push_back(ParseFunctionalTarget(mech->model(), f));
  more_done_.assign(more_.size(), false);
}

bool EventHandler::Fire(const int* found) {
  fired_ = roots_->FiredEvents(mech_->model(), found);
  jumps_.clear();
  stops_ = false;
  reset_ = stop_ = -1;
  return !fired_.empty();
}

void EventHandler::Linearize(const FlowPoint& minus, const Eigen::MatrixXd& s) {
  const Model& m = mech_->model();
  const auto& events = m.data().events;
  for (int k : fired_) jumps_.emplace_back(m, k, mech_->parameters(), minus);
  for (size_t j = 0; j < jumps_.size(); ++j) {
    const EventDecl& ev = events[static_cast<size_t>(fired_[j])];
    if (ev.options.stop && stop_ < 0) stop_ = static_cast<int>(j);
    if (!ev.reset) continue;
    if (reset_ >= 0) {
      std::ostringstream os;
      os << "events '" << events[static_cast<size_t>(fired_[reset_])].name
         << "' and '" << ev.name << "' both have reset maps and occur at the "
         << "same instant t = " << minus.t
         << "; which acts first is not defined: combine them into one event "
            "or separate them";
      throw std::runtime_error(os.str());
    }
    reset_ = static_cast<int>(j);
  }
  stops_ = stop_ >= 0;
  if (stops_) reset_ = -1;
  if (sensitivities()) s_minus_ = s;
  tau_.resize(0);
  const int primary = stops_ ? stop_ : reset_;
  // Sensitivities must cross the event that stops the run, resets it, or
  // ends the functional: none of them may be grazing.
  for (size_t j = 0; j < jumps_.size() && sensitivities(); ++j) {
    const int k = fired_[j];
    int occurrence = 1;
    for (const EventRecord& r : sum_->events)
      if (r.index == k) ++occurrence;
    bool carries_functional =
        target_ && target_->event == k && target_->occurrence == occurrence;
    for (const FunctionalTarget& t : more_)
      carries_functional =
          carries_functional || (t.event == k && t.occurrence == occurrence);
    if (jumps_[j].grazing() &&
        (static_cast<int>(j) == primary || carries_functional))
      throw std::runtime_error(GrazingMessage(m, jumps_[j]));
  }
  if (primary >= 0 && sensitivities()) {
    tau_.resize(ns());
    for (int i = 0; i < ns(); ++i)
      tau_[i] = jumps_[static_cast<size_t>(primary)].Tau(
          s.col(i), dirs_[static_cast<size_t>(i)]);
  }
  if (stops_) {
    stopped_ = true;
    stop_tau_ = tau_;
    stop_point_ = minus;
  }
}

Eigen::MatrixXd EventHandler::TotalSensitivity(const Eigen::MatrixXd& s) {
  return TotalSensitivityAtEvent(
      mech_, jumps_[static_cast<size_t>(stop_)].minus(), s, dirs_, tau_);
}

Eigen::MatrixXd EventHandler::TotalQuadratureSensitivity(
    const QuadratureSnapshot& q) const {
  if (tau_.size() == 0) return q.sens;
  return q.sens + q.integrand * tau_.transpose();
}

void EventHandler::Annotate(size_t first, const QuadratureSnapshot& quad) {
  if (stops_) stop_quad_ = quad;
  for (size_t r = first; r < sum_->events.size(); ++r) {
    EventRecord& rec = sum_->events[r];
    if (rec.index < 0) continue;
    size_t j = 0;
    while (j < fired_.size() && fired_[j] != rec.index) ++j;
    if (j == fired_.size()) continue;
    const EventJump& jump = jumps_[j];
    rec.rate = jump.rate();
    rec.grazing = jump.grazing();
    if (static_cast<int>(j) == reset_) reset_record_ = r;
    if (sensitivities() && !rec.grazing) {
      rec.dt_dp.resize(ns());
      for (int i = 0; i < ns(); ++i)
        rec.dt_dp[i] = jump.Tau(s_minus_.col(i), dirs_[static_cast<size_t>(i)]);
    }
    if (target_ && target_->event == rec.index &&
        target_->occurrence == rec.occurrence) {
      FunctionalValue fv = Evaluate(target_->functional, jump.minus(), s_minus_,
                                    rec.dt_dp, quad);
      fv.at = target_->Where(mech_->model());
      sum_->functionals.push_back(fv);
      target_done_ = true;
    }
    for (size_t e = 0; e < more_.size(); ++e) {
      const FunctionalTarget& t = more_[e];
      if (more_done_[e] || t.event != rec.index ||
          t.occurrence != rec.occurrence)
        continue;
      FunctionalValue fv =
          Evaluate(t.functional, jump.minus(), s_minus_, rec.dt_dp, quad);
      fv.at = t.Where(mech_->model());
      sum_->functionals.push_back(fv);
      more_done_[e] = true;
    }
  }
}

void EventHandler::ResetState(Eigen::VectorXd* q, Eigen::VectorXd* v) {
  const EventJump& j = *reset();
  const int nq = mech_->nq(), nv = mech_->nv();
  *q = j.reset_value().head(nq);
  *v = j.reset_value().tail(nv);
  EventRecord& rec = sum_->events[reset_record_];
  MakeRestartConsistent(mech_, opt_, rec.name, j.minus().t, q, v, &rec);
  plus_q_ = *q;
  plus_v_ = *v;
}

Eigen::MatrixXd EventHandler::SensitivitiesAfter(
    const FlowPoint& plus,
    const KktResult& r_plus,
    const Eigen::MatrixXd& s_minus) {
  EventJump& j = jumps_[static_cast<size_t>(reset_)];
  j.Saltation(mech_, r_plus, plus);
  Eigen::MatrixXd out(s_minus.rows(), s_minus.cols());
  for (Eigen::Index i = 0; i < s_minus.cols(); ++i)
    out.col(i) = j.After(s_minus.col(i), dirs_[static_cast<size_t>(i)]);
  return out;
}

void EventHandler::Restarted(double energy_minus, double energy_plus) {
  EventRecord& rec = sum_->events[reset_record_];
  rec.energy_change = energy_plus - energy_minus;
  const EventJump& j = *reset();
  StatePoint x;
  x.t = j.minus().t;
  x.q = plus_q_;
  x.v = plus_v_;
  x.p = mech_->parameters();
  const ModelData& md = mech_->model().data();
  roots_->Rearm(j.event(),
                ValueAt(md, md.events[static_cast<size_t>(j.event())].fn, x));
}

void EventHandler::AtEnd(const FlowPoint& at,
                         const Eigen::MatrixXd& s,
                         const QuadratureSnapshot& quad) {
  const Model& m = mech_->model();
  const FlowPoint& where = stopped_ ? stop_point_ : at;
  const Eigen::MatrixXd& sens = stopped_ ? s_minus_ : s;
  const QuadratureSnapshot& qs = stopped_ ? stop_quad_ : quad;
  const Eigen::VectorXd tau =
      stopped_ ? stop_tau_ : Eigen::VectorXd::Zero(sensitivities() ? ns() : 0);
  const int nf = static_cast<int>(m.data().functionals.size());
  for (int f = 0; f < nf; ++f) {
    FunctionalValue fv = Evaluate(f, where, sens, tau, qs);
    fv.at = "end";
    sum_->functionals.push_back(fv);
  }
  if (target_ && target_->at_event() && !target_done_) {
    FunctionalValue fv;
    fv.name =
        m.data().functionals[static_cast<size_t>(target_->functional)].name;
    fv.at = target_->Where(m);
    fv.evaluated = false;
    sum_->functionals.push_back(fv);
    std::ostringstream os;
    os << "functional '" << opt_.sensitivity.functional << "': event '"
       << m.data().events[static_cast<size_t>(target_->event)].name
       << "' occurred " <<
        [&] {
          int c = 0;
          for (const EventRecord& r : sum_->events)
            if (r.index == target_->event) ++c;
          return c;
        }()
       << " time(s) before the run ended at t = " << where.t << ", not "
       << target_->occurrence
       << "; the functional has no value and no gradient";
    sum_->warnings.push_back(os.str());
  }
  for (size_t e = 0; e < more_.size(); ++e) {
    if (!more_[e].at_event() || more_done_[e]) continue;
    FunctionalValue fv;
    fv.name =
        m.data().functionals[static_cast<size_t>(more_[e].functional)].name;
    fv.at = more_[e].Where(m);
    fv.evaluated = false;
    sum_->functionals.push_back(fv);
    more_done_[e] = true;  // reported once
  }
  // The target's value and gradient as the sensitivity result's.
  if (!target_ || !sensitivities()) return;
  const std::string want =
      m.data().functionals[static_cast<size_t>(target_->functional)].name;
  const std::string where_s = target_->Where(m);
  for (const FunctionalValue& fv : sum_->functionals) {
    if (fv.name != want || fv.at != where_s || !fv.evaluated) continue;
    sum_->sensitivities.functional_value = fv.value;
    sum_->sensitivities.functionals.emplace_back(fv.name, fv.gradient);
    break;
  }
}

FunctionalValue EventHandler::Evaluate(int functional,
                                       const FlowPoint& at,
                                       const Eigen::MatrixXd& s,
                                       const Eigen::VectorXd& tau,
                                       const QuadratureSnapshot& quad) const {
  const Model& m = mech_->model();
  const ModelData& md = m.data();
  const auto& f = md.functionals[static_cast<size_t>(functional)];
  FunctionalValue out;
  out.name = f.name;
  out.t = at.t;
  out.evaluated = true;
  const int nq = m.nq(), nv = m.nv();
  StatePoint x;
  x.t = at.t;
  x.q = at.y.head(nq);
  x.v = at.y.tail(nv);
  x.p = mech_->parameters();
  const int fq = f.quadrature;
  out.value = fq >= 0 ? quad.value[fq] : 0.0;
  ScalarGradient phi;
  if (f.terminal) {
    phi = GradientAt(md, f.terminal, x, "functional '" + f.name + "'");
    out.value += phi.value;
  }
  if (!sensitivities()) return out;
  out.gradient.setZero(ns());
  for (int i = 0; i < ns(); ++i) {
    const double ti = tau.size() > 0 ? tau[i] : 0.0;
    double g = 0.0;
    if (fq >= 0) g += quad.sens(fq, i) + quad.integrand[fq] * ti;
    if (f.terminal) {
      const Eigen::VectorXd d = s.col(i) + at.ydot * ti;
      g += phi.dq.dot(d.head(nq)) + phi.dv.dot(d.tail(nv)) +
           phi.dp.dot(dirs_[static_cast<size_t>(i)]) + phi.dt * ti;
    }
    out.gradient[i] = g;
  }
  return out;
}

}  // namespace daedalus::internal
