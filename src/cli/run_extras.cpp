// --counterfactual analyses and the energy behaviour of the fixed-step
// schemes for run() (src/cli/run_extras.hpp; docs/analysis.md, docs/output.md).
#include "cli/run_extras.hpp"

#include <atomic>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "cli/run_single.hpp"
#include "daedalus/analysis.hpp"
#include "daedalus/error_estimate.hpp"
#include "daedalus/symplectic.hpp"
#include "formulation/support.hpp"
#include "monitor/sample_collector.hpp"

namespace daedalus::internal {

namespace {

using nlohmann::json;
using Kind = CounterfactualRequest::Kind;

json Num(double x) {
  if (std::isfinite(x)) return x;
  return nullptr;
}
json NumVec(const Eigen::VectorXd& x) {
  json a = json::array();
  for (Eigen::Index i = 0; i < x.size(); ++i) a.push_back(Num(x[i]));
  return a;
}

bool SameTime(double a, double b) {
  return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b));
}

// CSV with 17 significant digits, like the main time series.
class Csv {
 public:
  Csv(const std::string& path, const std::vector<std::string>& cols)
      : out_(path) {
    if (!out_) throw std::runtime_error("cannot open '" + path + "'");
    for (size_t i = 0; i < cols.size(); ++i) out_ << (i ? "," : "") << cols[i];
    out_ << "\n"
         << std::setprecision(std::numeric_limits<double>::max_digits10);
  }
  Csv& operator<<(double x) {
    Sep();
    out_ << x;
    return *this;
  }
  Csv& operator<<(const Eigen::VectorXd& x) {
    for (Eigen::Index i = 0; i < x.size(); ++i) *this << x[i];
    return *this;
  }
  // An empty cell (undefined value: never a number).
  Csv& Blank(Eigen::Index n) {
    for (Eigen::Index i = 0; i < n; ++i) Sep();
    return *this;
  }
  void EndRow() {
    out_ << "\n";
    first_ = true;
  }

 private:
  void Sep() {
    if (!first_) out_ << ",";
    first_ = false;
  }
  std::ofstream out_;
  bool first_ = true;
};

std::vector<std::string> Prefixed(const std::string& prefix,
                                  const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(prefix + n);
  return out;
}

void Append(std::vector<std::string>* a, const std::vector<std::string>& b) {
  a->insert(a->end(), b.begin(), b.end());
}

std::vector<std::string> RowNames(const Model& m) {
  std::vector<std::string> r;
  for (int i = 0; i < m.nc(); ++i) r.push_back(m.RowName(i));
  return r;
}

std::vector<std::string> ChannelNames(const Model& m,
                                      const std::vector<std::string>& chs) {
  if (!chs.empty()) return chs;
  std::vector<std::string> all;
  for (const auto& in : m.inputs()) all.push_back(in.name);
  return all;
}

json RunJson(const SimulationSummary& s, const Sample* last) {
  json j = {{"status", s.ok ? "ok" : "failed"},
            {"t_reached", Num(s.t_reached)},
            {"samples", s.samples},
            {"energy_residual_max", Num(s.energy_residual_max)},
            {"drift_position_max", Num(s.drift_position_max)}};
  if (!s.ok) j["error"] = s.error;
  json ev = json::array();
  for (const auto& e : s.events)
    ev.push_back({{"name", e.name}, {"t", e.t}, {"stopped", e.stopped}});
  j["events"] = ev;
  if (last) {
    j["final"] = {{"t", Num(last->t)},
                  {"q", NumVec(last->q)},
                  {"v", NumVec(last->v)},
                  {"lambda", NumVec(last->lambda)},
                  {"energy", Num(last->energy)},
                  {"input_work", NumVec(last->input_work)}};
  }
  return j;
}

}  // namespace

void ValidateCounterfactuals(const std::vector<CounterfactualRequest>& reqs,
                             const SimulationOptions& o) {
  for (const auto& r : reqs) {
    if (r.all_samples) continue;
    const bool branched = r.kind == Kind::kBranchedZtcf;
    const bool inside =
        r.t >= o.t0 && (branched ? r.t < o.t_end : r.t <= o.t_end);
    if (!inside) {
      std::ostringstream os;
      os << "--counterfactual '" << r.spec << "': time " << r.t
         << " is outside the run [" << o.t0 << ", " << o.t_end
         << (branched ? ")" : "]") << "; choose a time in that interval"
         << (branched ? " (a branch needs some future to integrate)" : "");
      throw std::invalid_argument(os.str());
    }
  }
}

RunExtras::RunExtras(const Problem& problem, const RunConfig& cfg)
    : problem_(problem),
      cfg_(cfg),
      keep_(!cfg.counterfactuals.empty() ||
            IsFixedStep(cfg.options.integrator)) {}

void RunExtras::OnSample(const Sample& s) {
  if (forward_) forward_->OnSample(s);
  if (keep_) samples_.push_back(s);
}

bool RunExtras::Finish(const SimulationSummary& main, const std::string& base) {
  const Model& model = problem_.model;
  const Eigen::VectorXd& params = cfg_.params;
  std::ostringstream rep;
  rep << std::setprecision(6);
  bool all_ok = true;

  if (IsFixedStep(cfg_.options.integrator) && !samples_.empty()) {
    const EnergyBehaviour e = AnalyzeEnergy(samples_);
    entries_["energy_behaviour"] = {
        {"max_error", Num(e.max_error)},   {"early_max", Num(e.early_max)},
        {"late_max", Num(e.late_max)},     {"growth", Num(e.growth())},
        {"drift_rate", Num(e.drift_rate)}, {"final_error", Num(e.final_error)}};
    rep << "  fixed step             " << cfg_.options.step
        << " s (rtol/atol above are not used; rattle discretizes index3, "
           "the other schemes take unconstrained models)\n";
    rep << "  energy behaviour       max error " << e.max_error
        << " J, first/last 10% " << e.early_max << " / " << e.late_max
        << " J (growth " << e.growth() << "), trend " << e.drift_rate << " W\n";
  }
  if (cfg_.error_estimate) EstimateError(main, &rep);
  if (cfg_.counterfactuals.empty()) {
    report_ = rep.str();
    return true;
  }

  const std::vector<std::string> coords = model.coordinate_names();
  const std::vector<std::string> rows = RowNames(model);
  json list = json::array();
  int index = 0;
  // The signal that ended the main run or one of the analyses.
  auto stopped = [&]() -> int {
    if (main.interrupted) return main.stop_code != 0 ? main.stop_code : 2;
    const std::atomic<int>* stop = cfg_.options.stop;
    return stop != nullptr ? stop->load() : 0;
  };
  for (const CounterfactualRequest& r : cfg_.counterfactuals) {
    ++index;
    const std::string file =
        base + ".counterfactual" + std::to_string(index) + ".csv";
    if (stopped() != 0) {
      // Not started: the run (or an earlier analysis) was interrupted.
      interrupted_ = stopped();
      json e = {{"spec", r.spec},
                {"kind", ToString(r.kind)},
                {"status", "interrupted"},
                {"error", "not run: interrupted by signal " +
                              std::to_string(interrupted_) + " before it"}};
      rep << "  counterfactual " << index << "       " << r.spec
          << ": INTERRUPTED before it started\n";
      list.push_back(e);
      continue;
    }
    const std::vector<std::string> channels = ChannelNames(model, r.channels);
    json e = {{"spec", r.spec},
              {"kind", ToString(r.kind)},
              {"channels",
               r.kind == Kind::kZvcf ? ChannelNames(model, {}) : channels},
              {"t", r.all_samples ? json("all") : json(r.t)},
              {"file", file}};
    std::string line;
    try {
      // The achieved states the request is evaluated at.
      std::vector<Sample> at;
      if (r.all_samples) {
        at = samples_;
      } else {
        if (samples_.empty() ||
            (samples_.back().t < r.t && !SameTime(samples_.back().t, r.t))) {
          std::ostringstream os;
          os << "the run stopped at t = " << main.t_reached
             << " before the requested time " << r.t;
          throw std::runtime_error(os.str());
        }
        const Sample* exact = nullptr;
        const Sample* before = nullptr;
        for (const Sample& s : samples_) {
          if (SameTime(s.t, r.t)) exact = &s;
          if (s.t < r.t) before = &s;
        }
        if (exact) {
          at.push_back(*exact);
        } else {
          // Integrate from the last sample before r.t to r.t.
          SimulationOptions o = cfg_.options;
          o.t0 = before->t;
          o.t_end = r.t;
          // A fixed-step scheme shortens its last step to land on r.t.
          o.output_step = IsFixedStep(o.integrator) ? o.step : r.t - before->t;
          if (IsAlpha(o.integrator)) o.step = std::min(o.step, o.output_step);
          SampleCollector c;
          const SimulationSummary s = Simulate(
              model, InitialState{before->q, before->v}, params, o, &c);
          if (!s.ok || c.samples.empty())
            throw std::runtime_error(
                "could not reach t = " + std::to_string(r.t) + ": " + s.error);
          at.push_back(c.samples.back());
        }
      }

      if (r.kind == Kind::kBranchedZtcf) {
        const Sample& b = at.front();
        const BranchedCounterfactual bc = BranchedZtcf(
            model, params, cfg_.options, b.t, b.q, b.v, r.channels);
        std::vector<std::string> cols{"t"};
        Append(&cols, coords);
        Append(&cols, Prefixed("cf_", coords));
        Append(&cols, Prefixed("v_", coords));
        Append(&cols, Prefixed("cf_v_", coords));
        Append(&cols, Prefixed("lambda_", rows));
        Append(&cols, Prefixed("cf_lambda_", rows));
        cols.push_back("energy");
        cols.push_back("cf_energy");
        Append(&cols, Prefixed("work_input_", ChannelNames(model, {})));
        Append(&cols, Prefixed("cf_work_input_", ChannelNames(model, {})));
        Csv csv(file, cols);
        const auto& a = bc.original_samples;
        const auto& c = bc.counterfactual_samples;
        size_t i = 0, j = 0;
        while (i < a.size() && j < c.size()) {
          if (SameTime(a[i].t, c[j].t)) {
            csv << a[i].t << a[i].q << c[j].q << a[i].v << c[j].v << a[i].lambda
                << c[j].lambda << a[i].energy << c[j].energy << a[i].input_work
                << c[j].input_work;
            csv.EndRow();
            ++i;
            ++j;
          } else if (a[i].t < c[j].t) {
            ++i;
          } else {
            ++j;
          }
        }
        e["t_branch"] = bc.t_branch;
        e["original"] = RunJson(bc.original, a.empty() ? nullptr : &a.back());
        e["counterfactual"] =
            RunJson(bc.counterfactual, c.empty() ? nullptr : &c.back());
        e["common_samples"] = bc.common_samples;
        e["max_position_difference"] = Num(bc.max_position_difference);
        e["max_velocity_difference"] = Num(bc.max_velocity_difference);
        e["final_energy_difference"] = Num(bc.final_energy_difference);
        const bool ok = bc.original.ok && bc.counterfactual.ok;
        e["status"] = ok ? "ok" : "failed";
        if (!ok) {
          e["error"] =
              bc.original.ok ? bc.counterfactual.error : bc.original.error;
          throw std::runtime_error(e["error"].get<std::string>());
        }
        std::ostringstream os;
        os << "max |dq| " << bc.max_position_difference << ", max |dv| "
           << bc.max_velocity_difference << ", final dE "
           << bc.final_energy_difference << " J over " << bc.common_samples
           << " samples";
        line = os.str();
      } else if (r.kind == Kind::kPointwiseZtcf) {
        const auto pw =
            PointwiseZtcf(model, params, at, r.channels, cfg_.options.kkt);
        std::vector<std::string> cols{"t"};
        Append(&cols, Prefixed("vdot_", coords));
        Append(&cols, Prefixed("cf_vdot_", coords));
        Append(&cols, Prefixed("lambda_", rows));
        Append(&cols, Prefixed("cf_lambda_", rows));
        Csv csv(file, cols);
        double dmax = 0.0;
        for (const auto& p : pw) {
          csv << p.t << p.vdot_achieved << p.vdot << p.lambda_achieved
              << p.lambda;
          csv.EndRow();
          dmax =
              std::max(dmax, (p.vdot - p.vdot_achieved).cwiseAbs().maxCoeff());
        }
        e["samples"] = pw.size();
        e["max_acceleration_difference"] = Num(dmax);
        if (!r.all_samples) {
          e["vdot"] = NumVec(pw[0].vdot);
          e["vdot_achieved"] = NumVec(pw[0].vdot_achieved);
          e["lambda"] = NumVec(pw[0].lambda);
          e["lambda_achieved"] = NumVec(pw[0].lambda_achieved);
        }
        e["status"] = "ok";
        std::ostringstream os;
        os << "max |vdot - vdot_achieved| " << dmax << " over " << pw.size()
           << " state(s)";
        line = os.str();
      } else {
        std::vector<std::string> cols{"t", "defined"};
        Append(&cols, Prefixed("cf_vdot_", coords));
        Append(&cols, Prefixed("cf_lambda_", rows));
        Append(&cols, Prefixed("holding_load_", coords));
        Csv csv(file, cols);
        int defined = 0;
        std::string first_reason;
        ZvcfOptions zo;
        zo.kkt = cfg_.options.kkt;
        ZvcfResult last;
        for (const Sample& s : at) {
          last = InstantaneousZvcf(model, params, s.t, s.q, zo);
          csv << s.t << (last.defined ? 1.0 : 0.0);
          if (last.defined) {
            ++defined;
            csv << last.vdot << last.lambda << last.holding_load;
          } else {
            if (first_reason.empty()) first_reason = last.reason;
            csv.Blank(model.nv() + model.nc() + model.nv());
          }
          csv.EndRow();
        }
        e["samples"] = at.size();
        e["defined_samples"] = defined;
        if (!r.all_samples) {
          e["defined"] = last.defined;
          if (last.defined) {
            e["vdot"] = NumVec(last.vdot);
            e["lambda"] = NumVec(last.lambda);
            e["holding_load"] = NumVec(last.holding_load);
            e["drift_load"] = NumVec(last.drift_load);
          }
        }
        if (!first_reason.empty()) e["reason"] = first_reason;
        e["status"] =
            defined == static_cast<int>(at.size()) ? "ok" : "undefined";
        std::ostringstream os;
        if (defined == static_cast<int>(at.size())) {
          os << "defined at " << defined << " state(s)";
        } else {
          os << "UNDEFINED at " << at.size() - defined << " of " << at.size()
             << " state(s): " << first_reason;
        }
        line = os.str();
      }
    } catch (const std::exception& ex) {
      if (!e.contains("error")) e["error"] = ex.what();
      if (stopped() != 0) {
        // A signal ended it: not a failure of the analysis.
        interrupted_ = stopped();
        e["status"] = "interrupted";
        line = std::string("INTERRUPTED: ") + ex.what();
      } else {
        e["status"] = "failed";
        line = std::string("FAILED: ") + ex.what();
        if (error_.empty())
          error_ = "--counterfactual '" + r.spec + "' failed: " + ex.what();
        all_ok = false;
      }
    }
    rep << "  counterfactual " << index << "       " << r.spec << ": " << line
        << " (" << file << ")\n";
    list.push_back(e);
  }
  entries_["counterfactuals"] = list;
  report_ = rep.str();
  return all_ok;
}

void RunExtras::EstimateError(const SimulationSummary& main,
                              std::ostringstream* rep) {
  json e;
  try {
    const ErrorEstimate est =
        EstimateGlobalError(problem_.model, StartingState(problem_, cfg_),
                            cfg_.params, cfg_.options, main);
    e = {{"ok", est.ok},
         {"method", "the run repeated at tighter tolerances"},
         {"reference",
          {{"formulation", ToString(est.reference_formulation)},
           {"integrator", ToString(est.reference_integrator)},
           {"rtol", est.reference_rtol},
           {"atol", est.reference_atol},
           {"steps", est.reference_steps},
           {"t_reached", Num(est.t_reference)}}}};
    if (!est.ok) {
      e["error"] = est.error;
      *rep << "  error estimate         none: " << est.error << "\n";
    } else {
      e["t"] = Num(est.t);
      e["q"] = NumVec(est.q);
      e["v"] = NumVec(est.v);
      e["lambda"] = NumVec(est.lambda);
      e["q_max"] = Num(est.q_max);
      e["v_max"] = Num(est.v_max);
      e["lambda_max"] = Num(est.lambda_max);
      e["tolerance_ratio"] = Num(est.tolerance_ratio);
      e["worst"] = est.worst;
      e["tolerance_met"] = est.tolerance_met;
      e["energy_residual"] = {{"run", Num(est.energy_residual)},
                              {"reference", Num(est.energy_residual_reference)},
                              {"error", Num(est.energy_residual_error)}};
      *rep << "  error estimate         |dq| " << est.q_max << ", |dv| "
           << est.v_max << ", |dlambda| " << est.lambda_max
           << ", energy residual " << est.energy_residual_error << " J ("
           << est.tolerance_ratio << " tolerances at '" << est.worst
           << "'; reference " << ToString(est.reference_formulation) << " on "
           << ToString(est.reference_integrator) << " at rtol "
           << est.reference_rtol << ")\n";
    }
    e["warnings"] = est.warnings;
    for (const auto& w : est.warnings) *rep << "  warning: " << w << "\n";
  } catch (const std::exception& ex) {
    e = {{"ok", false}, {"error", std::string("no estimate: ") + ex.what()}};
    *rep << "  error estimate         none: " << ex.what() << "\n";
  }
  if (cfg_.options.stop != nullptr && cfg_.options.stop->load() != 0)
    interrupted_ = cfg_.options.stop->load();
  entries_["error_estimate"] = std::move(e);
}

std::string RunExtras::Decorate(const std::string& summary_json) const {
  if (entries_.empty()) return summary_json;
  json j = json::parse(summary_json);
  for (const auto& [k, v] : entries_.items()) j[k] = v;
  // The estimate's warnings are the run's too.
  if (entries_.contains("error_estimate") && j.contains("warnings") &&
      j["warnings"].is_array())
    for (const auto& w :
         entries_["error_estimate"].value("warnings", json::array()))
      j["warnings"].push_back(w);
  if (interrupted_ != 0 && j.value("status", "") == "ok") {
    // The run finished; a signal ended the analyses after it.
    j["status"] = "interrupted";
    j["stop_code"] = interrupted_;
    j["error"] = "interrupted by signal " + std::to_string(interrupted_) +
                 " during the counterfactual analyses; the run itself reached "
                 "t_end (its CSV is complete), the analyses not finished are "
                 "marked \"interrupted\"";
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace daedalus::internal
