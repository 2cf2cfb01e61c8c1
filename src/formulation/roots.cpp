#include "formulation/roots.hpp"

#include <algorithm>
#include <cmath>

namespace daedalus::internal {

// ------------------------------------------------------------ feasibility

FeasibilitySet::FeasibilitySet(const Model& m, bool contacts)
    : cones_(&m.data().friction_cones) {
  for (int ci = 0; ci < m.num_constraints(); ++ci) {
    const auto& c = m.constraints()[ci];
    if (!c.unilateral || contacts) continue;
    for (int r = 0; r < c.rows; ++r) {
      unilateral_rows_.push_back(m.constraint_row(ci) + r);
      names_.push_back(m.RowName(unilateral_rows_.back()));
    }
  }
  for (const auto& cone : *cones_) names_.push_back(cone.name);
}

void FeasibilitySet::Margins(const Eigen::Ref<const Eigen::VectorXd>& lambda,
                             double* g) const {
  for (int j = 0; j < num_unilateral(); ++j) g[j] = lambda[unilateral_rows_[j]];
  for (size_t c = 0; c < cones_->size(); ++c) {
    const FrictionConeDecl& cone = (*cones_)[c];
    double t2 = 0.0;
    for (int r : cone.tangential_rows) t2 += lambda[r] * lambda[r];
    g[num_unilateral() + static_cast<int>(c)] =
        cone.mu * lambda[cone.normal_row] - std::sqrt(t2);
  }
}

FeasibilityViolation* FeasibilitySet::Open(SimulationSummary* sum,
                                           int k) const {
  for (auto& v : sum->violations)
    if (v.ongoing && v.kind == kind(k) && v.name == names_[k]) return &v;
  return nullptr;
}

FeasibilityViolation* FeasibilitySet::Start(SimulationSummary* sum,
                                            int k,
                                            double t,
                                            double g) const {
  FeasibilityViolation v;
  v.kind = kind(k);
  v.name = names_[k];
  v.t_start = v.t_end = v.t_worst = t;
  v.worst = std::min(g, 0.0);
  sum->violations.push_back(v);
  return &sum->violations.back();
}

void FeasibilitySet::Check(
    SimulationSummary* sum,
    double t,
    const Eigen::Ref<const Eigen::VectorXd>& lambda) const {
  if (size() == 0) return;
  std::vector<double> g(static_cast<size_t>(size()));
  Margins(lambda, g.data());
  for (int k = 0; k < size(); ++k) {
    FeasibilityViolation* v = Open(sum, k);
    if (g[k] < 0.0) {
      if (v == nullptr) v = Start(sum, k, t, g[k]);
      v->t_end = t;
      if (g[k] < v->worst) {
        v->worst = g[k];
        v->t_worst = t;
      }
    } else if (v != nullptr) {
      v->t_end = t;
      v->ongoing = false;
    }
  }
}

// ----------------------------------------------------------------- roots

RootSet::RootSet(const Model& m, const ModeRoots* mode)
    : feasibility_(m, mode != nullptr),
      mode_(mode),
      num_events_(static_cast<int>(m.data().events.size())),
      offset_(m.data().events.size(), 0.0) {
  directions_.assign(static_cast<size_t>(size()), 0);
  for (int k = 0; k < num_events_; ++k) {
    const EventDirection d = m.data().events[k].options.direction;
    directions_[static_cast<size_t>(k)] = d == EventDirection::kRising    ? 1
                                          : d == EventDirection::kFalling ? -1
                                                                          : 0;
  }
  if (mode_ != nullptr) {
    const std::vector<int> md = mode_->RootDirections();
    std::copy(md.begin(), md.end(), directions_.begin() + mode_offset());
  }
}

void RootSet::Evaluate(const Mechanics& mech,
                       const Eigen::Ref<const Eigen::VectorXd>& lambda,
                       double* g) const {
  const Point<double> x = mech.point();
  const auto& ev = mech.model().data().events;
  for (int k = 0; k < num_events_; ++k)
    g[k] = ev[k].fn.f0(x) - offset_[static_cast<size_t>(k)];
  feasibility_.Margins(lambda, g + num_events_);
  if (mode_ != nullptr) mode_->EvaluateRoots(mech, lambda, g + mode_offset());
}

void RootSet::Settle(const Mechanics& mech) {
  const Point<double> x = mech.point();
  const auto& ev = mech.model().data().events;
  for (int k = 0; k < num_events_; ++k) {
    double& o = offset_[static_cast<size_t>(k)];
    if (o != 0.0 && std::abs(ev[k].fn.f0(x)) > 2.0 * std::abs(o)) o = 0.0;
  }
}

namespace {

// Whether a crossing in direction `found` (+1 rising, -1 falling) fires an
// event declared with direction `d`.
bool Fires(EventDirection d, int found) {
  return found != 0 && (d == EventDirection::kAny ||
                        (d == EventDirection::kRising) == (found > 0));
}

}  // namespace

std::vector<int> RootSet::FiredEvents(const Model& m, const int* found) const {
  std::vector<int> out;
  for (int k = 0; k < num_events_; ++k)
    if (Fires(m.data().events[k].options.direction, found[k])) out.push_back(k);
  return out;
}

bool RootSet::Record(const Model& m,
                     double t,
                     const int* found,
                     SimulationSummary* sum) const {
  bool stop = false;
  // The attached ModeRoots' roots are that stage's to record.
  for (int k = 0; k < mode_offset(); ++k) {
    if (found[k] == 0) continue;
    EventRecord e;
    e.t = t;
    e.direction = found[k] > 0 ? 1.0 : -1.0;
    if (k < num_events_) {
      const EventDecl& ev = m.data().events[k];
      if (!Fires(ev.options.direction, found[k])) continue;
      e.name = ev.name;
      e.index = k;
      e.stopped = ev.options.stop;
      e.reset = static_cast<bool>(ev.reset);
      e.occurrence = 1;
      for (const EventRecord& o : sum->events)
        if (o.index == k) ++e.occurrence;
      stop |= ev.options.stop;
    } else {
      const int j = k - num_events_;
      e.name = feasibility_.event_name(j);
      FeasibilityViolation* v = feasibility_.Open(sum, j);
      if (found[k] < 0 && v == nullptr) {
        feasibility_.Start(sum, j, t, 0.0);
      } else if (found[k] > 0 && v != nullptr) {
        v->t_end = t;
        v->ongoing = false;
      }
    }
    sum->events.push_back(e);
  }
  return stop;
}

}  // namespace daedalus::internal
