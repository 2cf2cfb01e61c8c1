// The shooting NLP's layout: variables, bounds, constraint rows, the
// Jacobian's pattern and the initial guess (shooting.hpp).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "events/functional_target.hpp"
#include "optimal_control/control_spline.hpp"
#include "optimal_control/shooting.hpp"

namespace daedalus::internal {

namespace {

std::string Number(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// Bounds of one entry: a single value for all, one per entry, or none.
double Entry(const Eigen::VectorXd& v, int j, double none) {
  if (v.size() == 0) return none;
  if (v.size() == 1) return v[0];
  return v[j];
}

}  // namespace

std::string ShootingTarget::LocalSpec(const Model& m) const {
  const auto& d = m.data();
  const std::string name = d.functionals[static_cast<size_t>(functional)].name;
  if (event < 0) return name;
  return name + "@" + d.events[static_cast<size_t>(event)].name + "#" +
         std::to_string(local);
}

ShootingNlp::ShootingNlp(const Problem& problem,
                         const OptimalControlProblem& ocp,
                         const SimulationOptions& sim,
                         const Eigen::VectorXd& params,
                         const OptimizeOptions& options)
    : problem_(problem), ocp_(ocp), sim_(sim), options_(options) {
  const Model& base = problem.model;
  np0_ = base.num_parameters();
  if (params.size() != np0_)
    throw std::invalid_argument("Optimize: " + std::to_string(params.size()) +
                                " parameters given, model '" + base.name() +
                                "' has " + std::to_string(np0_));
  if (!(sim.t_end > sim.t0))
    throw std::invalid_argument("Optimize: the horizon [t0, t_end] = [" +
                                Number(sim.t0) + ", " + Number(sim.t_end) +
                                "] is empty");
  if (options.shooting_intervals < 1 || options.shooting_intervals > 10000)
    throw std::invalid_argument(
        "Optimize: shooting_intervals must be between 1 and 10000, got " +
        std::to_string(options.shooting_intervals));
  if (ocp.path_samples < 1)
    throw std::invalid_argument("Optimize: path_samples must be >= 1, got " +
                                std::to_string(ocp.path_samples));
  if (ocp.objective.empty())
    throw std::invalid_argument(
        "Optimize: no objective; give at least one term (a functional "
        "NAME, NAME@EVENT#K or effort:CHANNEL)");
  // A knot spacing below the output step: the solution's samples would not
  // resolve the control it reports.
  for (const auto& ch : ocp.controls) {
    for (size_t j = 0; j + 1 < ch.knots.size(); ++j) {
      const double h = ch.knots[j + 1] - ch.knots[j];
      if (h < sim.output_step * (1.0 - 1e-9))
        throw std::invalid_argument(
            "control '" + ch.input + "': knot spacing " + Number(h) +
            " s (knots " + std::to_string(j) + " and " + std::to_string(j + 1) +
            ") is finer than the output step " + Number(sim.output_step) +
            " s, which would not resolve the control in the solution's "
            "samples; set the output step to at most " +
            Number(h) +
            " s (--output-step or \"output_step\") or coarsen the grid");
    }
  }
  model_ = ModelWithControls(base, ocp.controls, /*pass_events=*/true);
  nq_ = model_.nq();
  nv_ = model_.nv();
  ny_ = nq_ + nv_;
  M_ = options.shooting_intervals;
  for (int i = 0; i <= M_; ++i)
    t_.push_back(i == M_ ? sim.t_end
                         : sim.t0 + (sim.t_end - sim.t0) * i / double(M_));
  Layout(params);
  Targets();
  Pattern();
  InitialNodes();
}

void ShootingNlp::Layout(const Eigen::VectorXd& params) {
  const Model& base = problem_.model;
  base_params_ = model_.default_parameters();
  base_params_.head(np0_) = params;
  std::vector<double> w0, lo, hi;
  auto add = [&](const std::string& name, double guess, double l, double u) {
    if (!(l <= u))
      throw std::invalid_argument("'" + name + "': lower bound " + Number(l) +
                                  " above upper bound " + Number(u));
    if (guess < l || guess > u) {
      const double p = std::clamp(guess, l, u);
      warnings_.push_back("'" + name + "': initial guess " + Number(guess) +
                          " outside [" + Number(l) + ", " + Number(u) +
                          "], projected to " + Number(p));
      guess = p;
    }
    w0.push_back(guess);
    lo.push_back(l);
    hi.push_back(u);
    w_names_.push_back(name);
  };
  // Control coefficients.
  for (const auto& ch : ocp_.controls) {
    const int k = static_cast<int>(ch.knots.size());
    control_first_.push_back(static_cast<int>(w0.size()));
    control_size_.push_back(k);
    for (const auto* v : {&ch.initial, &ch.lower, &ch.upper})
      if (v->size() > 1 && v->size() != k)
        throw std::invalid_argument(
            "control '" + ch.input + "': " + std::to_string(v->size()) +
            " initial values or bounds for " + std::to_string(k) +
            " knots; give one per knot, one for all, or none");
    for (int j = 0; j < k; ++j) {
      const std::string name = ControlParameterName(ch.input, j);
      const double guess = Entry(ch.initial, j, 0.0);
      base_params_[model_.ParameterIndex(name)] = guess;
      add(name, guess, Entry(ch.lower, j, -kUnbounded),
          Entry(ch.upper, j, kUnbounded));
    }
    if (std::isfinite(ch.rate_limit)) {
      for (int j = 0; j + 1 < k; ++j) {
        rate_rows_.emplace_back(control_first_.back() + j,
                                control_first_.back() + j + 1);
        rate_h_.push_back(ch.knots[j + 1] - ch.knots[j]);
      }
    }
  }
  // Free parameters: bounds within the declared range.
  params_at_ = static_cast<int>(w0.size());
  for (const auto& fp : ocp_.parameters) {
    const int i = base.ParameterIndex(fp.name);
    for (int j : free_param_index_)
      if (j == i)
        throw std::invalid_argument("free parameter '" + fp.name +
                                    "' listed twice");
    free_param_index_.push_back(i);
    const ParamRange& r = base.parameter_ranges()[i];
    double l = std::max(fp.lower, r.lower), u = std::min(fp.upper, r.upper);
    // An open end of the range: keep a relative margin inside it.
    if (r.lower_open && l == r.lower) l += 1e-8 * std::max(1.0, std::abs(l));
    if (r.upper_open && u == r.upper) u -= 1e-8 * std::max(1.0, std::abs(u));
    const double guess = std::isnan(fp.initial) ? params[i] : fp.initial;
    add(fp.name, guess, l, u);
    base_params_[i] = w0.back();
  }
  // Free entries of the start.
  x0_at_ = static_cast<int>(w0.size());
  const InitialState start = problem_.initial(base_params_.head(np0_));
  for (const auto& fx : ocp_.initial_state) {
    const auto sp = ResolveSensParameters(model_, {fx.name});
    if (sp[0].kind == SensParameter::Kind::kModel)
      throw std::invalid_argument("free initial state '" + fx.name +
                                  "': write q0[NAME] or v0[NAME]");
    for (const auto& e : free_x0_)
      if (e.kind == sp[0].kind && e.index == sp[0].index)
        throw std::invalid_argument("free initial state '" + fx.name +
                                    "' listed twice");
    free_x0_.push_back(sp[0]);
    const double own = sp[0].kind == SensParameter::Kind::kInitialQ
                           ? start.q[sp[0].index]
                           : start.v[sp[0].index];
    add(fx.name, std::isnan(fx.initial) ? own : fx.initial, fx.lower, fx.upper);
  }
  // The start's dependence on the parameters (free entries excluded).
  x0_tangent_ = InitialStateTangent(problem_, base_params_.head(np0_));
  for (const auto& e : free_x0_)
    x0_tangent_
        .row(e.kind == SensParameter::Kind::kInitialQ ? e.index : nq_ + e.index)
        .setZero();
  // Node states (filled by InitialNodes).
  nodes_at_ = static_cast<int>(w0.size());
  for (int i = 1; i < M_; ++i) {
    for (int j = 0; j < ny_; ++j) {
      std::string name = "s";
      name += std::to_string(i);
      name += j < nq_ ? "." : ".v_";
      name += j < nq_ ? model_.coordinate_names()[j]
                      : model_.velocity_names()[j - nq_];
      add(name, 0.0, -kUnbounded, kUnbounded);
    }
  }
  x0_ = Eigen::Map<Eigen::VectorXd>(w0.data(), Eigen::Index(w0.size()));
  x_l_ = Eigen::Map<Eigen::VectorXd>(lo.data(), Eigen::Index(lo.size()));
  x_u_ = Eigen::Map<Eigen::VectorXd>(hi.data(), Eigen::Index(hi.size()));
}

ShootingTarget ShootingNlp::ParseTarget(const std::string& spec) const {
  const FunctionalTarget ft = ParseFunctionalTarget(model_, spec);
  ShootingTarget t;
  t.spec = spec;
  t.functional = ft.functional;
  t.event = ft.event;
  t.occurrence = ft.at_event() ? ft.occurrence : 1;
  t.quadrature =
      model_.data().functionals[static_cast<size_t>(ft.functional)].quadrature;
  return t;
}

void ShootingNlp::Targets() {
  for (const auto& term : ocp_.objective) {
    if (!std::isfinite(term.weight))
      throw std::invalid_argument("objective term '" + term.functional +
                                  "': weight is not finite");
    obj_.push_back(ParseTarget(term.functional));
  }
  obj_values_ = Eigen::VectorXd::Zero(Eigen::Index(obj_.size()));
  std::vector<double> lo, hi;
  // Continuity rows.
  for (int i = 0; i + 1 < M_; ++i) {
    for (int j = 0; j < ny_; ++j) {
      g_names_.push_back("continuity at t = " + Number(t_[i + 1]) + ": " +
                         w_names_[nodes_at_ + i * ny_ + j].substr(
                             w_names_[nodes_at_ + i * ny_ + j].find('.') + 1));
      lo.push_back(0.0);
      hi.push_back(0.0);
    }
  }
  cont_rows_ = static_cast<int>(lo.size());
  point_at_ = cont_rows_;
  for (const auto& c : ocp_.constraints) {
    if (!(c.lower <= c.upper))
      throw std::invalid_argument("constraint '" + c.functional +
                                  "': lower bound above upper bound");
    con_.push_back(ParseTarget(c.functional));
    g_names_.push_back("constraint " + c.functional);
    lo.push_back(c.lower);
    hi.push_back(c.upper);
  }
  path_at_ = static_cast<int>(lo.size());
  for (const auto& pc : ocp_.path_constraints) {
    const int f = model_.FunctionalIndex(pc.functional);
    if (!model_.data().functionals[static_cast<size_t>(f)].terminal)
      throw std::invalid_argument(
          "path constraint '" + pc.functional +
          "': the functional has no terminal term phi(t, q, v, p) to sample "
          "(declare it with TerminalFunctional)");
    if (!(pc.lower <= pc.upper))
      throw std::invalid_argument("path constraint '" + pc.functional +
                                  "': lower bound above upper bound");
    if (!(pc.from <= pc.to))
      throw std::invalid_argument(
          "path constraint '" + pc.functional + "': window from " +
          Number(pc.from) + " to " + Number(pc.to) +
          " s is empty; give from <= to (or leave both out: the horizon)");
    path_functional_.push_back(f);
  }
  std::vector<int> rows_of(path_functional_.size(), 0);
  for (int i = 0; i < M_; ++i) {
    path_row_start_.push_back(static_cast<int>(lo.size()));
    const int samples = ocp_.path_samples + (i + 1 == M_ ? 1 : 0);
    for (int s = 0; s < samples; ++s) {
      const double ts = PathSampleTime(i, s);
      for (size_t c = 0; c < path_functional_.size(); ++c) {
        if (!PathSampled(c, ts)) continue;
        g_names_.push_back("path " + ocp_.path_constraints[c].functional +
                           " at t = " + Number(ts));
        lo.push_back(ocp_.path_constraints[c].lower);
        hi.push_back(ocp_.path_constraints[c].upper);
        ++rows_of[c];
      }
    }
  }
  path_row_start_.push_back(static_cast<int>(lo.size()));
  for (size_t c = 0; c < path_functional_.size(); ++c)
    if (rows_of[c] == 0) {
      const PathConstraint& pc = ocp_.path_constraints[c];
      throw std::invalid_argument(
          "path constraint '" + pc.functional +
          "': no path sample in its "
          "window [" +
          Number(pc.from) + ", " + Number(pc.to) + "] s (samples every " +
          Number((t_[1] - t_[0]) / ocp_.path_samples) +
          " s from t0); widen the window or raise path_samples");
    }
  rate_at_ = static_cast<int>(lo.size());
  for (size_t r = 0; r < rate_rows_.size(); ++r) {
    const int a = rate_rows_[r].first;
    const std::string& ch = w_names_[a].substr(0, w_names_[a].rfind(".c"));
    double limit = 0.0;
    for (const auto& c : ocp_.controls)
      if (c.input == ch) limit = c.rate_limit;
    g_names_.push_back("rate of " + ch + " between " + w_names_[a] + " and " +
                       w_names_[rate_rows_[r].second]);
    lo.push_back(-limit);
    hi.push_back(limit);
  }
  g_l_ = Eigen::Map<Eigen::VectorXd>(lo.data(), Eigen::Index(lo.size()));
  g_u_ = Eigen::Map<Eigen::VectorXd>(hi.data(), Eigen::Index(hi.size()));
}

void ShootingNlp::Directions(int i,
                             std::vector<std::string>* names,
                             std::vector<int>* cols) const {
  names->clear();
  cols->clear();
  const double a = t_[i], b = t_[i + 1];
  // Coefficients whose spline is non-zero somewhere on (a, b); u is held
  // outside the grid, so the end coefficients reach to infinity.
  for (size_t k = 0; k < ocp_.controls.size(); ++k) {
    const auto& tau = ocp_.controls[k].knots;
    const int K = static_cast<int>(tau.size());
    const int reach =
        ocp_.controls[k].basis == ControlBasis::kPiecewiseLinear ? 1 : 2;
    for (int j = 0; j < K; ++j) {
      const double lo = j - reach <= 0 ? -kUnbounded : tau[j - reach];
      const double hi = j + reach >= K - 1 ? kUnbounded : tau[j + reach];
      if (lo < b && hi > a) {
        names->push_back(ControlParameterName(ocp_.controls[k].input, j));
        cols->push_back(control_first_[k] + j);
      }
    }
  }
  for (size_t f = 0; f < free_param_index_.size(); ++f) {
    names->push_back(model_.parameter_names()[free_param_index_[f]]);
    cols->push_back(params_at_ + static_cast<int>(f));
  }
  if (i == 0) {
    for (size_t e = 0; e < free_x0_.size(); ++e) {
      names->push_back(free_x0_[e].name);
      cols->push_back(x0_at_ + static_cast<int>(e));
    }
  } else {
    for (int j = 0; j < ny_; ++j) {
      names->push_back(j < nq_ ? "q0[" + std::to_string(j) + "]"
                               : "v0[" + std::to_string(j - nq_) + "]");
      cols->push_back(nodes_at_ + (i - 1) * ny_ + j);
    }
  }
}

void ShootingNlp::Pattern() {
  const int nw = n();
  std::vector<int> cols;
  std::vector<std::string> names;
  for (int i = 0; i + 1 < M_; ++i) {
    Directions(i, &names, &cols);
    for (int j = 0; j < ny_; ++j) {
      const int row = i * ny_ + j;
      std::vector<int> c = cols;
      c.push_back(nodes_at_ + i * ny_ + j);
      std::sort(c.begin(), c.end());
      for (int col : c) pattern_.emplace_back(row, col);
    }
  }
  // Point constraints: their event may fall in any interval.
  for (int r = point_at_; r < path_at_; ++r)
    for (int col = 0; col < nw; ++col) pattern_.emplace_back(r, col);
  for (int i = 0; i < M_; ++i) {
    Directions(i, &names, &cols);
    std::vector<int> c = cols;
    std::sort(c.begin(), c.end());
    for (int row = path_row_start_[size_t(i)];
         row < path_row_start_[size_t(i) + 1]; ++row)
      for (int col : c) pattern_.emplace_back(row, col);
  }
  for (size_t r = 0; r < rate_rows_.size(); ++r) {
    pattern_.emplace_back(rate_at_ + static_cast<int>(r), rate_rows_[r].first);
    pattern_.emplace_back(rate_at_ + static_cast<int>(r), rate_rows_[r].second);
  }
}

void ShootingNlp::InitialNodes() {
  // The nodes start on the trajectory of the initial guess (continuity
  // holds there): one run after the other.
  for (int i = 0; i + 1 < M_; ++i) {
    const IntervalRun r = Run(x0_, i, SensMethod::kNone, "");
    if (!r.summary.ok || r.summary.t_reached < t_[i + 1] - 1e-12)
      throw std::runtime_error(
          "Optimize: the initial guess cannot be simulated over shooting "
          "interval " +
          std::to_string(i) + " [" + Number(t_[i]) + ", " + Number(t_[i + 1]) +
          "]: " + (r.summary.ok ? "the run stopped early" : r.summary.error));
    x0_.segment(nodes_at_ + i * ny_, nq_) = r.summary.final.q;
    x0_.segment(nodes_at_ + i * ny_ + nq_, nv_) = r.summary.final.v;
  }
}

Eigen::VectorXd ShootingNlp::ModelParams(const Eigen::VectorXd& w) const {
  Eigen::VectorXd p = base_params_;
  for (size_t k = 0; k < ocp_.controls.size(); ++k)
    p.segment(
        model_.ParameterIndex(ControlParameterName(ocp_.controls[k].input, 0)),
        control_size_[k]) = w.segment(control_first_[k], control_size_[k]);
  for (size_t f = 0; f < free_param_index_.size(); ++f)
    p[free_param_index_[f]] = w[params_at_ + static_cast<int>(f)];
  return p;
}

InitialState ShootingNlp::Start(const Eigen::VectorXd& w) const {
  const Eigen::VectorXd p = ModelParams(w);
  InitialState x = problem_.initial(p.head(np0_));
  for (size_t e = 0; e < free_x0_.size(); ++e) {
    const double v = w[x0_at_ + static_cast<int>(e)];
    if (free_x0_[e].kind == SensParameter::Kind::kInitialQ)
      x.q[free_x0_[e].index] = v;
    else
      x.v[free_x0_[e].index] = v;
  }
  return x;
}

Eigen::VectorXd ShootingNlp::Coefficients(const Eigen::VectorXd& w,
                                          int k) const {
  return w.segment(control_first_[k], control_size_[k]);
}

std::vector<std::pair<std::string, double>> ShootingNlp::FreeParameters(
    const Eigen::VectorXd& w) const {
  std::vector<std::pair<std::string, double>> out;
  for (size_t f = 0; f < free_param_index_.size(); ++f)
    out.emplace_back(ocp_.parameters[f].name,
                     w[params_at_ + static_cast<int>(f)]);
  return out;
}

std::vector<std::pair<std::string, double>> ShootingNlp::FreeInitialState(
    const Eigen::VectorXd& w) const {
  std::vector<std::pair<std::string, double>> out;
  for (size_t e = 0; e < free_x0_.size(); ++e)
    out.emplace_back(free_x0_[e].name, w[x0_at_ + static_cast<int>(e)]);
  return out;
}

}  // namespace daedalus::internal
