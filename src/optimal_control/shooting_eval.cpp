// The shooting NLP's values and exact gradients (shooting.hpp).
//
// Gradients, per interval: an interval with continuity or path rows runs
// forward sensitivities along its directions (its start s_i, the
// coefficients whose splines reach it, the free parameters): one run gives
// every row, the running parts of later functionals (quadrature
// sensitivities) and the event functionals located in the interval, all
// named to the run (SensitivityOptions::more_functionals; their event-time
// terms included). An interval with only functionals (the last, or the
// only one in single shooting) runs one adjoint per functional when that
// is cheaper by count than one forward run along all its directions:
// n_functionals * kAdjointCost < 1 + kForwardCostPerDirection * n_dirs,
// the costs measured in plain runs (docs/sensitivities.md: an adjoint
// gradient costs about 3.5 plain runs whatever the number of parameters;
// each forward direction about 0.45).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "eval/function_derivatives.hpp"
#include "integrate/adapters.hpp"
#include "optimal_control/shooting.hpp"

namespace daedalus::internal {

namespace {

constexpr double kAdjointCost = 3.5;
constexpr double kForwardCostPerDirection = 0.45;
// The adjoint's checkpoint interval: at most this many doubles of data
// points (32 MB).
constexpr long kCheckpointDoubles = 1L << 22;

class SampleKeeper : public Observer {
 public:
  void OnSample(const Sample& s) override { samples.push_back(s); }
  std::vector<Sample> samples;
};

const FunctionalValue* FindValue(const SimulationSummary& s,
                                 const std::string& name,
                                 const std::string& at) {
  for (const auto& f : s.functionals)
    if (f.name == name && f.at == at && f.evaluated) return &f;
  return nullptr;
}

std::string AtOf(const Model& m, const ShootingTarget& t) {
  if (t.event < 0) return "end";
  return m.data().events[static_cast<size_t>(t.event)].name + "#" +
         std::to_string(t.local);
}

}  // namespace

SimulationOptions ShootingNlp::IntervalOptions(int i) const {
  SimulationOptions o = sim_;
  o.t0 = t_[i];
  o.t_end = t_[i + 1];
  o.output_step = (t_[i + 1] - t_[i]) / ocp_.path_samples;
  o.sensitivity = SensitivityOptions();
  o.sensitivity.error_control = sim_.sensitivity.error_control;
  o.sensitivity.corrector = sim_.sensitivity.corrector;
  o.drift_tol = 0.0;  // multiple shooting runs from states off the manifold
  return o;
}

double ShootingNlp::PathSampleTime(int i, int s) const {
  return t_[i] + (t_[i + 1] - t_[i]) * s / double(ocp_.path_samples);
}

bool ShootingNlp::PathSampled(size_t c, double ts) const {
  const PathConstraint& pc = ocp_.path_constraints[c];
  const double tol = 1e-9 * (1.0 + std::abs(ts));
  return ts >= pc.from - tol && ts <= pc.to + tol;
}

bool ShootingNlp::AdjointServes() const {
  const Formulation f = sim_.formulation;
  return f == Formulation::kUnstabilized || f == Formulation::kBaumgarte ||
         (f == Formulation::kGgl && sim_.integrator == Integrator::kIdas);
}

InitialState ShootingNlp::IntervalStart(const Eigen::VectorXd& w, int i) const {
  if (i == 0) return Start(w);
  InitialState x;
  x.q = w.segment(nodes_at_ + (i - 1) * ny_, nq_);
  x.v = w.segment(nodes_at_ + (i - 1) * ny_ + nq_, nv_);
  return x;
}

IntervalRun ShootingNlp::Run(const Eigen::VectorXd& w,
                             int i,
                             SensMethod method,
                             const std::string& spec,
                             const std::vector<std::string>& more) const {
  SimulationOptions o = IntervalOptions(i);
  o.sensitivity.method = method;
  o.sensitivity.functional = spec;
  o.sensitivity.more_functionals = more;
  const Eigen::VectorXd p = ModelParams(w);
  if (method != SensMethod::kNone) {
    std::vector<int> cols;
    Directions(i, &o.sensitivity.parameters, &cols);
    if (i == 0 && !free_param_index_.empty()) {
      o.sensitivity.initial_tangent =
          Eigen::MatrixXd::Zero(ny_, model_.num_parameters());
      o.sensitivity.initial_tangent.leftCols(np0_) = x0_tangent_;
    }
  }
  IntervalRun r;
  if (method == SensMethod::kAdjoint) {
    // Only Gradients() asks for adjoints, after the plain runs at w
    // (Values): they have the samples and checked the interval's end, so
    // the adjoint pass runs without Simulate()'s own plain run (one plain
    // run of the gradient's cost, docs/optimal_control.md, "Cost").
    // CVODES and IDAS keep the data points of the last checkpoint interval
    // from the forward pass and recompute every earlier interval in the
    // backward pass. One interval holding the plain run's steps (a quarter
    // more for the adjoint's own step choice) spares that recomputation; a
    // bound on its memory (2 n doubles per step) keeps long runs in
    // several.
    const long steps = runs_[static_cast<size_t>(i)].summary.stats.steps;
    const long cap = kCheckpointDoubles / (2L * std::max(1, ny_));
    o.sensitivity.checkpoint_steps = std::max(
        o.sensitivity.checkpoint_steps, std::min(cap, steps + steps / 4 + 10));
    r.summary = AdjointGradientOnly(model_, IntervalStart(w, i), p, o);
    ++adjoint_runs;
    return r;
  }
  SampleKeeper keep;
  r.summary = Simulate(model_, IntervalStart(w, i), p, o, &keep);
  r.samples = std::move(keep.samples);
  if (method == SensMethod::kNone) ++plain_runs;
  if (method == SensMethod::kForward) ++forward_runs;
  if (r.summary.ok && r.summary.t_reached < t_[i + 1] - 1e-9 * (1 + t_[i + 1]))
    r.summary.ok = false, r.summary.error = "the run stopped early";
  return r;
}

std::vector<std::string> ShootingNlp::EventSpecs(int i) const {
  std::vector<std::string> specs;
  for (const auto* list : {&obj_, &con_})
    for (const auto& t : *list) {
      if (t.event < 0 || t.interval != i) continue;
      const std::string s = t.LocalSpec(model_);
      if (std::find(specs.begin(), specs.end(), s) == specs.end())
        specs.push_back(s);
    }
  return specs;
}

bool ShootingNlp::RunAll(const Eigen::VectorXd& w) {
  runs_.assign(static_cast<size_t>(M_), IntervalRun());
  for (int i = 0; i < M_; ++i) {
    // The functionals the last evaluation found in this interval, so that
    // the run reports them all (Locate runs again for one that moved).
    std::vector<std::string> specs = EventSpecs(i);
    const std::string spec = specs.empty() ? std::string() : specs[0];
    if (!specs.empty()) specs.erase(specs.begin());
    runs_[i] = Run(w, i, SensMethod::kNone, spec, specs);
    if (!runs_[i].summary.ok) {
      error_ = "shooting interval " + std::to_string(i) + " [" +
               std::to_string(t_[i]) + ", " + std::to_string(t_[i + 1]) +
               "]: " + runs_[i].summary.error;
      return false;
    }
  }
  return Locate();
}

bool ShootingNlp::Locate() {
  for (auto* list : {&obj_, &con_}) {
    for (auto& t : *list) {
      if (t.event < 0) {
        t.interval = M_ - 1;
        t.local = 1;
        continue;
      }
      int before = 0;
      t.interval = -1;
      for (int i = 0; i < M_ && t.interval < 0; ++i) {
        int here = 0;
        for (const auto& e : runs_[i].summary.events)
          if (e.index == t.event) ++here;
        if (before + here >= t.occurrence) {
          t.interval = i;
          t.local = t.occurrence - before;
        }
        before += here;
      }
      if (t.interval < 0) {
        error_ = "functional '" + t.spec + "': event '" +
                 model_.data().events[static_cast<size_t>(t.event)].name +
                 "' occurred " + std::to_string(before) +
                 " time(s) over the horizon [" + std::to_string(t_[0]) + ", " +
                 std::to_string(t_[M_]) + "], occurrence " +
                 std::to_string(t.occurrence) +
                 " is needed; lengthen the horizon (t_end)";
        return false;
      }
      // Not reported by the interval's run (another functional was named
      // there): run it again naming this one.
      const std::string at = AtOf(model_, t);
      const std::string name =
          model_.data().functionals[static_cast<size_t>(t.functional)].name;
      if (!FindValue(runs_[t.interval].summary, name, at)) {
        IntervalRun again =
            Run(w_cached_, t.interval, SensMethod::kNone, t.LocalSpec(model_));
        if (!again.summary.ok) {
          error_ = again.summary.error;
          return false;
        }
        const FunctionalValue* v = FindValue(again.summary, name, at);
        if (!v) {
          error_ = "functional '" + t.spec + "' was not evaluated";
          return false;
        }
        runs_[t.interval].summary.functionals.push_back(*v);
      }
    }
  }
  return true;
}

double ShootingNlp::RunningValue(int i, const ShootingTarget& t) const {
  if (t.quadrature < 0) return 0.0;
  return runs_[i].summary.final.quadratures[t.quadrature];
}

double ShootingNlp::TargetValue(const ShootingTarget& t) const {
  double v = 0.0;
  for (int i = 0; i < t.interval; ++i) v += RunningValue(i, t);
  const std::string name =
      model_.data().functionals[static_cast<size_t>(t.functional)].name;
  const FunctionalValue* fv =
      FindValue(runs_[t.interval].summary, name, AtOf(model_, t));
  if (fv == nullptr)
    throw std::logic_error("functional '" + t.spec + "' not located");
  return v + fv->value;
}

void ShootingNlp::PathRows(int i,
                           const IntervalRun& r,
                           const Eigen::VectorXd& w,
                           Eigen::VectorXd* g,
                           Eigen::MatrixXd* jac,
                           const std::vector<int>* cols) const {
  if (path_functional_.empty()) return;
  const ModelData& md = model_.data();
  const int samples = ocp_.path_samples + (i + 1 == M_ ? 1 : 0);
  int row = path_row_start_[size_t(i)];
  const Eigen::VectorXd p = ModelParams(w);
  std::vector<int> param_of;  // model parameter of each direction, or -1
  if (cols) {
    std::vector<std::string> names;
    std::vector<int> c;
    Directions(i, &names, &c);
    for (const auto& n : names)
      param_of.push_back(n.rfind("q0[", 0) == 0 || n.rfind("v0[", 0) == 0
                             ? -1
                             : model_.ParameterIndex(n));
  }
  size_t next = 0;
  for (int s = 0; s < samples; ++s) {
    const double ts = PathSampleTime(i, s);
    const double tol = 1e-9 * (1.0 + std::abs(ts));
    while (next < r.samples.size() && r.samples[next].t < ts - tol) ++next;
    if (next == r.samples.size() || std::abs(r.samples[next].t - ts) > tol)
      throw std::logic_error("path sample at t = " + std::to_string(ts) +
                             " missing from interval " + std::to_string(i));
    const Sample& smp = r.samples[next];
    StatePoint x;
    x.t = smp.t;
    x.q = smp.q;
    x.v = smp.v;
    x.p = p;
    for (size_t c = 0; c < path_functional_.size(); ++c) {
      if (!PathSampled(c, ts)) continue;
      const int row_c = row++;
      const auto& fn =
          md.functionals[static_cast<size_t>(path_functional_[c])].terminal;
      if (!jac) {
        (*g)[row_c] = ValueAt(md, fn, x);
        continue;
      }
      const ScalarGradient gr = GradientAt(
          md, fn, x,
          "path constraint '" + ocp_.path_constraints[c].functional + "'");
      for (size_t d = 0; d < cols->size(); ++d) {
        double v = gr.dq.dot(smp.sens.col(Eigen::Index(d)).head(nq_)) +
                   gr.dv.dot(smp.sens.col(Eigen::Index(d)).segment(nq_, nv_));
        if (param_of[d] >= 0) v += gr.dp[param_of[d]];
        (*jac)(row_c, (*cols)[d]) += v;
      }
    }
  }
}

bool ShootingNlp::Values(const Eigen::VectorXd& w,
                         double* f,
                         Eigen::VectorXd* g) {
  if (!(w_cached_.size() == w.size() && w_cached_ == w)) {
    w_cached_ = w;
    w_grad_.resize(0);
    error_.clear();
    cached_ok_ = RunAll(w);
    if (cached_ok_) {
      g_cached_.setZero(m());
      for (int i = 0; i + 1 < M_; ++i) {
        const Sample& e = runs_[i].summary.final;
        g_cached_.segment(i * ny_, nq_) =
            e.q - w.segment(nodes_at_ + i * ny_, nq_);
        g_cached_.segment(i * ny_ + nq_, nv_) =
            e.v - w.segment(nodes_at_ + i * ny_ + nq_, nv_);
      }
      for (size_t c = 0; c < con_.size(); ++c)
        g_cached_[point_at_ + static_cast<int>(c)] = TargetValue(con_[c]);
      for (int i = 0; i < M_; ++i)
        PathRows(i, runs_[i], w, &g_cached_, nullptr, nullptr);
      for (size_t r = 0; r < rate_rows_.size(); ++r)
        g_cached_[rate_at_ + static_cast<int>(r)] =
            (w[rate_rows_[r].second] - w[rate_rows_[r].first]) / rate_h_[r];
      double sum = 0.0;
      for (size_t k = 0; k < obj_.size(); ++k) {
        obj_values_[Eigen::Index(k)] = TargetValue(obj_[k]);
        sum += ocp_.objective[k].weight * obj_values_[Eigen::Index(k)];
      }
      f_cached_ = ocp_.maximize ? -sum : sum;
      cached_ok_ = std::isfinite(f_cached_) && g_cached_.allFinite();
      if (!cached_ok_ && error_.empty())
        error_ = "a functional or constraint is not finite";
    }
  }
  if (!cached_ok_) return false;
  if (f) *f = f_cached_;
  if (g) *g = g_cached_;
  return true;
}

bool ShootingNlp::Gradients(const Eigen::VectorXd& w,
                            Eigen::VectorXd* grad_f,
                            Eigen::MatrixXd* jac) {
  if (!Values(w, nullptr, nullptr)) return false;
  if (w_grad_.size() == w.size() && w_grad_ == w) {
    if (grad_f) *grad_f = grad_cached_;
    if (jac) *jac = jac_cached_;
    return true;
  }
  const ModelData& md = model_.data();
  const int nw = n();
  const size_t nt = obj_.size() + con_.size();
  auto target = [&](size_t k) -> const ShootingTarget& {
    return k < obj_.size() ? obj_[k] : con_[k - obj_.size()];
  };
  std::vector<Eigen::VectorXd> tgrad(nt, Eigen::VectorXd::Zero(nw));
  jac_cached_.setZero(m(), nw);
  const Eigen::VectorXd p = ModelParams(w);
  for (int i = 0; i < M_; ++i) {
    std::vector<std::string> names;
    std::vector<int> cols;
    Directions(i, &names, &cols);
    std::vector<size_t> here;  // targets located in this interval
    bool later_running = false;
    for (size_t k = 0; k < nt; ++k) {
      if (target(k).interval == i) here.push_back(k);
      if (target(k).interval > i && target(k).quadrature >= 0)
        later_running = true;
    }
    const bool rows = i + 1 < M_ || !path_functional_.empty() || later_running;
    if (!rows && here.empty()) continue;
    bool forward =
        rows || options_.gradient == GradientMethod::kForward ||
        (options_.gradient == GradientMethod::kAuto && !AdjointServes());
    if (!forward && options_.gradient == GradientMethod::kAuto)
      forward = double(here.size()) * kAdjointCost >=
                1.0 + kForwardCostPerDirection * double(cols.size());
    std::vector<size_t> adjoint;  // targets for adjoint runs
    if (forward) {
      // The run names every event functional located here: the first as
      // its functional, the others beside it (their gradients from the
      // same sensitivities, docs/optimal_control.md, "golfer_3d").
      std::vector<std::string> more = EventSpecs(i);
      const std::string spec = more.empty() ? std::string() : more[0];
      if (!more.empty()) more.erase(more.begin());
      const IntervalRun r = Run(w, i, SensMethod::kForward, spec, more);
      if (!r.summary.ok) {
        error_ = "forward sensitivities on interval " + std::to_string(i) +
                 ": " + r.summary.error;
        return false;
      }
      const SensitivityResult& sr = r.summary.sensitivities;
      const Eigen::MatrixXd& S = sr.final;
      for (int j = 0; i + 1 < M_ && j < ny_; ++j) {
        for (size_t d = 0; d < cols.size(); ++d)
          jac_cached_(i * ny_ + j, cols[d]) += S(j, Eigen::Index(d));
        jac_cached_(i * ny_ + j, nodes_at_ + i * ny_ + j) -= 1.0;
      }
      PathRows(i, r, w, nullptr, &jac_cached_, &cols);
      auto quad_sens = [&](int q) -> const Eigen::VectorXd* {
        for (const auto& e : sr.quadratures)
          if (e.first == model_.quadrature_name(q)) return &e.second;
        return nullptr;
      };
      for (size_t k = 0; k < nt; ++k) {
        const ShootingTarget& t = target(k);
        if (t.interval > i && t.quadrature >= 0) {
          const Eigen::VectorXd* dq = quad_sens(t.quadrature);
          if (!dq) throw std::logic_error("no quadrature sensitivities");
          for (size_t d = 0; d < cols.size(); ++d)
            tgrad[k][cols[d]] += (*dq)[Eigen::Index(d)];
        }
      }
      for (size_t k : here) {
        const ShootingTarget& t = target(k);
        const auto& decl = md.functionals[static_cast<size_t>(t.functional)];
        if (t.event >= 0) {
          const FunctionalValue* fv =
              FindValue(r.summary, decl.name, AtOf(model_, t));
          if (!fv || fv->gradient.size() != Eigen::Index(cols.size())) {
            adjoint.push_back(k);  // not named to the run
            continue;
          }
          for (size_t d = 0; d < cols.size(); ++d)
            tgrad[k][cols[d]] += fv->gradient[Eigen::Index(d)];
          continue;
        }
        // At the end of the horizon: the running part's quadrature
        // sensitivity and phi's gradient along the final sensitivities.
        if (t.quadrature >= 0) {
          const Eigen::VectorXd* dq = quad_sens(t.quadrature);
          for (size_t d = 0; d < cols.size(); ++d)
            tgrad[k][cols[d]] += (*dq)[Eigen::Index(d)];
        }
        if (decl.terminal) {
          StatePoint x;
          x.t = r.summary.final.t;
          x.q = r.summary.final.q;
          x.v = r.summary.final.v;
          x.p = p;
          const ScalarGradient gr = GradientAt(md, decl.terminal, x, t.spec);
          for (size_t d = 0; d < cols.size(); ++d) {
            double v = gr.dq.dot(S.col(Eigen::Index(d)).head(nq_)) +
                       gr.dv.dot(S.col(Eigen::Index(d)).segment(nq_, nv_));
            const std::string& nm = names[d];
            if (nm.rfind("q0[", 0) != 0 && nm.rfind("v0[", 0) != 0)
              v += gr.dp[model_.ParameterIndex(nm)];
            tgrad[k][cols[d]] += v;
          }
        }
      }
    } else {
      adjoint = here;
    }
    // One run per remaining functional: forward when that is cheaper by
    // count than an adjoint (few directions), or when asked for.
    const bool extra_forward =
        options_.gradient == GradientMethod::kForward ||
        (options_.gradient == GradientMethod::kAuto &&
         (!AdjointServes() ||
          1.0 + kForwardCostPerDirection * double(cols.size()) < kAdjointCost));
    for (size_t k : adjoint) {
      const ShootingTarget& t = target(k);
      const SensMethod method =
          extra_forward ? SensMethod::kForward : SensMethod::kAdjoint;
      const IntervalRun r = Run(w, i, method, t.LocalSpec(model_));
      if (!r.summary.ok) {
        error_ = std::string(ToString(method)) + " sensitivities of '" +
                 t.spec + "' on interval " + std::to_string(i) + ": " +
                 r.summary.error;
        return false;
      }
      const Eigen::VectorXd* gk = nullptr;
      if (extra_forward) {
        const FunctionalValue* fv = FindValue(
            r.summary, md.functionals[static_cast<size_t>(t.functional)].name,
            AtOf(model_, t));
        if (fv) gk = &fv->gradient;
      } else if (!r.summary.sensitivities.functionals.empty()) {
        gk = &r.summary.sensitivities.functionals[0].second;
      }
      if (!gk || gk->size() != Eigen::Index(cols.size()))
        throw std::logic_error("a sensitivity run without the gradient of " +
                               t.spec);
      for (size_t d = 0; d < cols.size(); ++d)
        tgrad[k][cols[d]] += (*gk)[Eigen::Index(d)];
    }
  }
  grad_cached_.setZero(nw);
  for (size_t k = 0; k < obj_.size(); ++k)
    grad_cached_ += ocp_.objective[k].weight * tgrad[k];
  if (ocp_.maximize) grad_cached_ = -grad_cached_;
  for (size_t c = 0; c < con_.size(); ++c)
    jac_cached_.row(point_at_ + static_cast<int>(c)) = tgrad[obj_.size() + c];
  for (size_t r = 0; r < rate_rows_.size(); ++r) {
    jac_cached_(rate_at_ + static_cast<int>(r), rate_rows_[r].first) =
        -1.0 / rate_h_[r];
    jac_cached_(rate_at_ + static_cast<int>(r), rate_rows_[r].second) =
        1.0 / rate_h_[r];
  }
  if (!grad_cached_.allFinite() || !jac_cached_.allFinite()) {
    error_ = "a gradient is not finite";
    return false;
  }
  w_grad_ = w;
  if (grad_f) *grad_f = grad_cached_;
  if (jac) *jac = jac_cached_;
  return true;
}

}  // namespace daedalus::internal
