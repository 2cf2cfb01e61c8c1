#include "cli/ensemble_optimize.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace daedalus::internal {
namespace {

using ojson = nlohmann::ordered_json;

ojson Finite(double x) { return std::isfinite(x) ? ojson(x) : ojson(); }

// "0, 2, 5" (the first 20, then "...").
std::string Members(const ojson& list) {
  std::string s;
  for (size_t k = 0; k < list.size() && k < 20; ++k)
    s += (k == 0 ? "" : ", ") + std::to_string(list[k].get<int>());
  if (list.size() > 20) s += ", ...";
  return s;
}

std::string Short(double x) {
  std::ostringstream os;
  os.precision(10);
  os << x;
  return os.str();
}

}  // namespace

ojson OptimizePlan::Meta() const {
  ojson vars = ojson::array();
  for (const FreeVariable& v : variables)
    vars.push_back({{"name", v.name},
                    {"lower", Finite(v.lower)},
                    {"upper", Finite(v.upper)},
                    {"initial", v.initial}});
  return {{"spec", spec}, {"maximize", maximize}, {"variables", vars}};
}

OptimizePlan PlanOptimization(const Problem& problem, const RunConfig& cfg) {
  OptimizePlan plan;
  plan.spec = cfg.optimize;
  const std::string where = "--optimize " + cfg.optimize + ": ";
  std::ifstream in(cfg.optimize);
  if (!in)
    throw std::invalid_argument("--optimize: cannot read '" + cfg.optimize +
                                "'");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    SimulationOptions sim = cfg.options;
    sim.sensitivity = SensitivityOptions();
    OptimizeSpec spec = ParseOptimizeSpec(text.str(), &sim);
    spec.problem = WithInitialGuess(spec.problem, cfg.optimize_guess);
    plan.maximize = spec.problem.maximize;
    plan.variables = FreeVariables(problem, spec.problem, sim, cfg.params);
  } catch (const std::exception& e) {
    // Refused before any member runs, as a usage error.
    throw std::invalid_argument(where + e.what());
  }
  return plan;
}

void AddOptimization(const OptimizeRunResult& r, ojson* row) {
  ojson& out = *row;
  out["status"] =
      r.exit_code == 0 ? "ok" : (r.interrupted ? "interrupted" : "failed");
  if (!r.message.empty()) out["error"] = r.message;
  if (!r.solved) return;
  const OptimizeResult& res = r.result;
  ojson values = ojson::array();
  for (const auto& [name, value] : FreeValues(res))
    values.push_back({name, value});
  out["optimal_control"] = {{"status", res.status},
                            {"converged", res.ok},
                            {"objective", res.objective},
                            {"kkt_residual", Finite(res.kkt_residual)},
                            {"iterations", res.iterations},
                            {"wall_time", res.wall_time},
                            {"values", values}};
}

ojson GroupMemberOptima(std::vector<ojson>* rows, bool maximize) {
  const OptimumTolerance tol = kEnsembleOptimumTolerance;
  const size_t n = rows->size();
  std::vector<double> objectives(n, 0.0);
  std::vector<Eigen::VectorXd> values(n);
  std::vector<bool> converged(n, false);
  ojson not_converged = ojson::array();
  for (size_t i = 0; i < n; ++i) {
    const ojson& r = (*rows)[i];
    const bool has = r.contains("optimal_control");
    converged[i] = has && r.value("status", "") == "ok" &&
                   r["optimal_control"].value("converged", false);
    if (!converged[i]) {
      not_converged.push_back(r.value("member", static_cast<int>(i)));
      continue;
    }
    const ojson& oc = r["optimal_control"];
    objectives[i] = oc.at("objective").get<double>();
    const ojson& v = oc.at("values");
    values[i].resize(static_cast<Eigen::Index>(v.size()));
    for (size_t k = 0; k < v.size(); ++k)
      values[i][static_cast<Eigen::Index>(k)] = v[k][1].get<double>();
  }
  const std::vector<int> group =
      GroupOptima(objectives, values, converged, maximize, tol);
  int distinct = 0;
  for (int g : group) distinct = std::max(distinct, g);
  ojson list = ojson::array();
  for (int g = 1; g <= distinct; ++g) {
    ojson members = ojson::array();
    size_t head = n;
    for (size_t i = 0; i < n; ++i) {
      if (group[i] != g) continue;
      members.push_back((*rows)[i].value("member", static_cast<int>(i)));
      // The group's best point: the first member in GroupOptima's order.
      if (head == n || (maximize ? objectives[i] > objectives[head]
                                 : objectives[i] < objectives[head]))
        head = i;
    }
    list.push_back({{"optimum", g},
                    {"objective", objectives[head]},
                    {"best_member", (*rows)[head].value("member", -1)},
                    {"members", members},
                    {"values", (*rows)[head]["optimal_control"]["values"]}});
  }
  for (size_t i = 0; i < n; ++i)
    if ((*rows)[i].contains("optimal_control"))
      (*rows)[i]["optimal_control"]["optimum"] = group[i];
  ojson out;
  out["tolerance"] = {{"objective_relative", tol.objective_tolerance},
                      {"variables_relative", tol.variable_tolerance}};
  out["maximize"] = maximize;
  out["converged"] = static_cast<int>(n - not_converged.size());
  out["not_converged"] = not_converged;
  out["best_member"] =
      list.empty() ? ojson() : ojson(list[0].at("best_member"));
  out["best_objective"] = list.empty() ? ojson() : list[0].at("objective");
  out["distinct_optima"] = distinct;
  out["optima"] = list;
  return out;
}

std::string OptimaReport(const ojson& o) {
  std::ostringstream os;
  const ojson& nc = o.at("not_converged");
  os << "  optimizations          " << o.at("converged").get<int>()
     << " converged";
  if (!nc.empty())
    os << ", " << nc.size() << " not (members " << Members(nc) << ")";
  os << "\n";
  const ojson& list = o.at("optima");
  if (list.empty()) {
    os << "  best                   none (no member converged)\n";
    return os.str();
  }
  const ojson& best = list[0];
  os << "  best                   member " << best.at("best_member").get<int>()
     << ": objective " << Short(best.at("objective").get<double>()) << " (";
  const ojson& v = best.at("values");
  for (size_t k = 0; k < v.size() && k < 8; ++k)
    os << (k == 0 ? "" : ", ") << v[k][0].get<std::string>() << " = "
       << Short(v[k][1].get<double>());
  if (v.size() > 8) os << ", ...";
  os << ")\n"
     << "  distinct optima        " << list.size()
     << " (the same optimum: objectives within "
     << o.at("tolerance").at("objective_relative").get<double>()
     << " max(1, |f|), every variable within "
     << o.at("tolerance").at("variables_relative").get<double>()
     << " max(1, |x|))\n";
  for (size_t g = 0; g < list.size() && g < 10; ++g)
    os << "    " << g + 1 << ": objective "
       << Short(list[g].at("objective").get<double>()) << ", "
       << list[g].at("members").size() << " member"
       << (list[g].at("members").size() == 1 ? "" : "s") << " ("
       << Members(list[g].at("members")) << ")\n";
  if (list.size() > 10) os << "    ... and " << list.size() - 10 << " more\n";
  return os.str();
}

}  // namespace daedalus::internal
