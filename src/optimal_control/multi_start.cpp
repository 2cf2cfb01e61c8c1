// Several starts of one optimal control problem: its free variables, their
// guesses replaced, the optima the starts reach grouped
// (include/daedalus/optimal_control.hpp, docs/optimal_control.md "Several
// starts: ensembles of optimizations").
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "daedalus/optimal_control.hpp"
#include "optimal_control/shooting.hpp"

namespace daedalus {

namespace {

// The names WithInitialGuess accepts, for its message: a channel's
// coefficients as a range.
std::string FreeNames(const OptimalControlProblem& ocp) {
  std::string s;
  auto add = [&](const std::string& n) { s += (s.empty() ? "" : ", ") + n; };
  for (const auto& ch : ocp.controls) {
    const int k = static_cast<int>(ch.knots.size());
    if (k == 1) add(ControlParameterName(ch.input, 0));
    if (k > 1)
      add(ControlParameterName(ch.input, 0) + " .. " +
          ControlParameterName(ch.input, k - 1));
  }
  for (const auto& fp : ocp.parameters) add(fp.name);
  for (const auto& fx : ocp.initial_state) add(fx.name);
  return s.empty() ? std::string("none") : s;
}

}  // namespace

std::vector<FreeVariable> FreeVariables(const Problem& problem,
                                        const OptimalControlProblem& ocp,
                                        const SimulationOptions& sim,
                                        const Eigen::VectorXd& params) {
  std::string why;
  if (!sim.IsValid(&why)) throw std::invalid_argument(why);
  // One interval: the free variables do not depend on the nodes, and
  // single shooting needs no run to place them.
  OptimizeOptions single;
  single.shooting_intervals = 1;
  const internal::ShootingNlp nlp(problem, ocp, sim, params, single);
  std::vector<FreeVariable> out;
  for (int i = 0; i < nlp.num_free(); ++i)
    out.push_back({nlp.variable_names()[static_cast<size_t>(i)], nlp.x_l()[i],
                   nlp.x_u()[i], nlp.x0()[i]});
  return out;
}

OptimalControlProblem WithInitialGuess(
    OptimalControlProblem ocp,
    const std::vector<std::pair<std::string, double>>& guess) {
  for (const auto& [name, value] : guess) {
    bool found = false;
    for (auto& ch : ocp.controls) {
      const int k = static_cast<int>(ch.knots.size());
      for (int j = 0; j < k && !found; ++j) {
        if (ControlParameterName(ch.input, j) != name) continue;
        // One guess per knot from here on (none: zero; one: for all).
        if (ch.initial.size() == 0) ch.initial = Eigen::VectorXd::Zero(k);
        if (ch.initial.size() == 1)
          ch.initial = Eigen::VectorXd::Constant(k, ch.initial[0]);
        if (ch.initial.size() != k)
          throw std::invalid_argument(
              "control '" + ch.input +
              "': " + std::to_string(ch.initial.size()) +
              " initial values for " + std::to_string(k) +
              " knots; give one per knot, one for all, or none");
        ch.initial[j] = value;
        found = true;
      }
    }
    for (auto& fp : ocp.parameters)
      if (!found && fp.name == name) {
        fp.initial = value;
        found = true;
      }
    for (auto& fx : ocp.initial_state)
      if (!found && fx.name == name) {
        fx.initial = value;
        found = true;
      }
    if (!found)
      throw std::invalid_argument("initial guess for '" + name +
                                  "': no free variable of that name; the "
                                  "free variables are " +
                                  FreeNames(ocp));
  }
  return ocp;
}

std::vector<std::pair<std::string, double>> FreeValues(
    const OptimizeResult& result) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& ch : result.controls)
    for (Eigen::Index j = 0; j < ch.initial.size(); ++j)
      out.emplace_back(ControlParameterName(ch.input, static_cast<int>(j)),
                       ch.initial[j]);
  out.insert(out.end(), result.free_parameters.begin(),
             result.free_parameters.end());
  out.insert(out.end(), result.free_initial_state.begin(),
             result.free_initial_state.end());
  return out;
}

std::vector<int> GroupOptima(const std::vector<double>& objectives,
                             const std::vector<Eigen::VectorXd>& values,
                             const std::vector<bool>& converged,
                             bool maximize,
                             const OptimumTolerance& tol) {
  const size_t n = objectives.size();
  if (values.size() != n || converged.size() != n)
    throw std::invalid_argument(
        "GroupOptima: " + std::to_string(n) + " objectives, " +
        std::to_string(values.size()) + " value vectors and " +
        std::to_string(converged.size()) +
        " convergence flags; give one of each per point");
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (converged[i]) order.push_back(i);
  // Best first; ties in member order (stable).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return maximize ? objectives[a] > objectives[b]
                    : objectives[a] < objectives[b];
  });
  std::vector<int> group(n, 0);
  std::vector<size_t> heads;  // the best point of each optimum
  for (size_t i : order) {
    for (size_t g = 0; g < heads.size() && group[i] == 0; ++g) {
      const size_t h = heads[g];
      if (values[i].size() != values[h].size())
        throw std::invalid_argument(
            "GroupOptima: points " + std::to_string(h) + " and " +
            std::to_string(i) + " have " + std::to_string(values[h].size()) +
            " and " + std::to_string(values[i].size()) + " free variables");
      bool same =
          std::abs(objectives[i] - objectives[h]) <=
          tol.objective_tolerance * std::max(1.0, std::abs(objectives[h]));
      for (Eigen::Index k = 0; same && k < values[h].size(); ++k)
        same = std::abs(values[i][k] - values[h][k]) <=
               tol.variable_tolerance * std::max(1.0, std::abs(values[h][k]));
      if (same) group[i] = static_cast<int>(g) + 1;
    }
    if (group[i] == 0) {
      heads.push_back(i);
      group[i] = static_cast<int>(heads.size());
    }
  }
  return group;
}

MultiStartResult OptimizeFromStarts(
    const Problem& problem,
    const OptimalControlProblem& ocp,
    const SimulationOptions& sim,
    const Eigen::VectorXd& params,
    const std::vector<std::vector<std::pair<std::string, double>>>& starts,
    const OptimizeOptions& options,
    const OptimumTolerance& tol) {
  // Everything that can be refused is refused before the first run.
  FreeVariables(problem, ocp, sim, params);
  std::vector<OptimalControlProblem> problems;
  for (size_t i = 0; i < starts.size(); ++i) {
    try {
      problems.push_back(WithInitialGuess(ocp, starts[i]));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("start " + std::to_string(i) + ": " +
                                  e.what());
    }
  }
  MultiStartResult out;
  out.results.resize(starts.size());
  out.errors.resize(starts.size());
  std::vector<double> objectives(starts.size(), 0.0);
  std::vector<Eigen::VectorXd> values(starts.size());
  std::vector<bool> converged(starts.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    // The callback learns which start reports (IterationInfo::start).
    OptimizeOptions oi = options;
    if (options.callback)
      oi.callback = [&options, i](const IterationInfo& it) {
        IterationInfo at = it;
        at.start = static_cast<int>(i);
        return options.callback(at);
      };
    try {
      out.results[i] = Optimize(problem, problems[i], sim, params, oi);
    } catch (const std::exception& e) {
      out.errors[i] = e.what();
      continue;
    }
    const auto named = FreeValues(out.results[i]);
    values[i].resize(static_cast<Eigen::Index>(named.size()));
    for (size_t k = 0; k < named.size(); ++k)
      values[i][static_cast<Eigen::Index>(k)] = named[k].second;
    objectives[i] = out.results[i].objective;
    converged[i] = out.results[i].ok;
  }
  out.optimum = GroupOptima(objectives, values, converged, ocp.maximize, tol);
  for (size_t i = 0; i < starts.size(); ++i) {
    out.distinct_optima = std::max(out.distinct_optima, out.optimum[i]);
    // The best objective met (the first such start on a tie).
    if (!converged[i]) continue;
    const double f = objectives[i];
    const double b = out.best < 0 ? f : objectives[size_t(out.best)];
    if (out.best < 0 || (ocp.maximize ? f > b : f < b))
      out.best = static_cast<int>(i);
  }
  return out;
}

}  // namespace daedalus
