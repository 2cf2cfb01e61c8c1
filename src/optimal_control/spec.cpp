// The optimization spec file (--optimize SPEC.json, docs/optimal_control.md
// "The spec file") and the files of a solution.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "daedalus/optimal_control.hpp"
#include "daedalus/output.hpp"

namespace daedalus {

namespace {

using ojson = nlohmann::ordered_json;

// Refuses keys of `j` outside `valid`, naming the place.
void OnlyKeys(const ojson& j,
              const std::string& where,
              const std::set<std::string>& valid) {
  if (!j.is_object())
    throw std::invalid_argument("optimize spec: " + where +
                                " must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (valid.count(it.key())) continue;
    std::string list;
    for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
    throw std::invalid_argument("optimize spec: unknown key '" + it.key() +
                                "' in " + where + "; valid keys: " + list);
  }
}

double Num(const ojson& j, const std::string& where) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "inf" || s == "+inf") return kUnbounded;
    if (s == "-inf") return -kUnbounded;
  }
  if (!j.is_number())
    throw std::invalid_argument("optimize spec: " + where +
                                " must be a number, got " + j.dump());
  return j.get<double>();
}

std::string Str(const ojson& j, const std::string& where) {
  if (!j.is_string())
    throw std::invalid_argument("optimize spec: " + where +
                                " must be a string, got " + j.dump());
  return j.get<std::string>();
}

// A number for all entries or a list, as a vector (size 1 or the list's).
Eigen::VectorXd Values(const ojson& j, const std::string& where) {
  if (!j.is_array()) return Eigen::VectorXd::Constant(1, Num(j, where));
  Eigen::VectorXd v(Eigen::Index(j.size()));
  for (size_t i = 0; i < j.size(); ++i)
    v[Eigen::Index(i)] = Num(j[i], where + "[" + std::to_string(i) + "]");
  return v;
}

// Knots: a list of times, or {"from": a, "to": b, "count": n}.
std::vector<double> Knots(const ojson& j, const std::string& where) {
  std::vector<double> out;
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      out.push_back(Num(j[i], where + "[" + std::to_string(i) + "]"));
    return out;
  }
  OnlyKeys(j, where, {"from", "to", "count"});
  if (!j.contains("from") || !j.contains("to") || !j.contains("count"))
    throw std::invalid_argument("optimize spec: " + where +
                                " needs from, to and count (or a list)");
  const double a = Num(j["from"], where + ".from");
  const double b = Num(j["to"], where + ".to");
  const double n = Num(j["count"], where + ".count");
  if (n < 2 || n != std::floor(n) || n > 100000)
    throw std::invalid_argument("optimize spec: " + where +
                                ".count must be a whole number >= 2");
  for (int i = 0; i < static_cast<int>(n); ++i)
    out.push_back(i + 1 == static_cast<int>(n) ? b : a + (b - a) * i / (n - 1));
  return out;
}

void Bounds(const ojson& j,
            const std::string& where,
            double* lower,
            double* upper) {
  if (j.contains("equals")) {
    *lower = *upper = Num(j["equals"], where + ".equals");
    return;
  }
  if (j.contains("lower")) *lower = Num(j["lower"], where + ".lower");
  if (j.contains("upper")) *upper = Num(j["upper"], where + ".upper");
}

}  // namespace

OptimizeSpec ParseOptimizeSpec(const std::string& json_text,
                               SimulationOptions* sim) {
  ojson j;
  try {
    j = ojson::parse(json_text);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("optimize spec: not JSON: ") +
                                e.what());
  }
  OnlyKeys(j, "the spec",
           {"controls", "parameters", "initial_state", "objective", "maximize",
            "constraints", "path_constraints", "path_samples", "solver", "t0",
            "t_end", "output_step", "rtol", "atol", "formulation", "integrator",
            "comment"});
  OptimizeSpec s;
  OptimalControlProblem& p = s.problem;
  if (j.contains("t0")) sim->t0 = Num(j["t0"], "t0");
  if (j.contains("t_end")) sim->t_end = Num(j["t_end"], "t_end");
  if (j.contains("output_step"))
    sim->output_step = Num(j["output_step"], "output_step");
  if (j.contains("rtol")) sim->rtol = Num(j["rtol"], "rtol");
  if (j.contains("atol")) sim->atol = Num(j["atol"], "atol");
  if (j.contains("formulation"))
    sim->formulation =
        FormulationFromString(Str(j["formulation"], "formulation"));
  if (j.contains("integrator"))
    sim->integrator = IntegratorFromString(Str(j["integrator"], "integrator"));
  for (size_t k = 0; j.contains("controls") && k < j["controls"].size(); ++k) {
    const ojson& c = j["controls"][k];
    const std::string w = "controls[" + std::to_string(k) + "]";
    OnlyKeys(c, w,
             {"input", "basis", "knots", "initial", "lower", "upper",
              "rate_limit", "add"});
    ControlChannel ch;
    if (!c.contains("input") || !c.contains("knots"))
      throw std::invalid_argument("optimize spec: " + w +
                                  " needs \"input\" and \"knots\"");
    ch.input = Str(c["input"], w + ".input");
    if (c.contains("basis"))
      ch.basis = ControlBasisFromString(Str(c["basis"], w + ".basis"));
    ch.knots = Knots(c["knots"], w + ".knots");
    if (c.contains("initial")) {
      ch.initial = Values(c["initial"], w + ".initial");
      if (ch.initial.size() == 1)
        ch.initial = Eigen::VectorXd::Constant(Eigen::Index(ch.knots.size()),
                                               ch.initial[0]);
    }
    if (c.contains("lower")) ch.lower = Values(c["lower"], w + ".lower");
    if (c.contains("upper")) ch.upper = Values(c["upper"], w + ".upper");
    if (c.contains("rate_limit"))
      ch.rate_limit = Num(c["rate_limit"], w + ".rate_limit");
    if (c.contains("add")) {
      if (!c["add"].is_boolean())
        throw std::invalid_argument("optimize spec: " + w +
                                    ".add must be true or false");
      ch.add_to_model = c["add"].get<bool>();
    }
    p.controls.push_back(ch);
  }
  for (const char* key : {"parameters", "initial_state"}) {
    for (size_t k = 0; j.contains(key) && k < j[key].size(); ++k) {
      const ojson& e = j[key][k];
      const std::string w = std::string(key) + "[" + std::to_string(k) + "]";
      OnlyKeys(e, w, {"name", "lower", "upper", "initial"});
      if (!e.contains("name"))
        throw std::invalid_argument("optimize spec: " + w + " needs \"name\"");
      FreeParameter f;
      f.name = Str(e["name"], w + ".name");
      Bounds(e, w, &f.lower, &f.upper);
      if (e.contains("initial")) f.initial = Num(e["initial"], w + ".initial");
      if (std::string(key) == "parameters")
        p.parameters.push_back(f);
      else
        p.initial_state.push_back({f.name, f.lower, f.upper, f.initial});
    }
  }
  if (!j.contains("objective"))
    throw std::invalid_argument(
        "optimize spec: no \"objective\" (a functional, or a list of "
        "{\"functional\", \"weight\"})");
  const ojson& o = j["objective"];
  if (o.is_string()) {
    p.objective.push_back({o.get<std::string>(), 1.0});
  } else {
    for (size_t k = 0; k < o.size(); ++k) {
      const std::string w = "objective[" + std::to_string(k) + "]";
      OnlyKeys(o[k], w, {"functional", "weight"});
      ObjectiveTerm t;
      t.functional = Str(o[k].value("functional", ojson()), w + ".functional");
      if (o[k].contains("weight"))
        t.weight = Num(o[k]["weight"], w + ".weight");
      p.objective.push_back(t);
    }
  }
  if (j.contains("maximize")) {
    if (!j["maximize"].is_boolean())
      throw std::invalid_argument(
          "optimize spec: maximize must be true or false");
    p.maximize = j["maximize"].get<bool>();
  }
  for (const char* key : {"constraints", "path_constraints"}) {
    for (size_t k = 0; j.contains(key) && k < j[key].size(); ++k) {
      const ojson& e = j[key][k];
      const std::string w = std::string(key) + "[" + std::to_string(k) + "]";
      const bool path = std::string(key) == "path_constraints";
      if (path)
        OnlyKeys(e, w,
                 {"functional", "lower", "upper", "equals", "from", "to"});
      else
        OnlyKeys(e, w, {"functional", "lower", "upper", "equals"});
      PointConstraint c;
      c.functional = Str(e.value("functional", ojson()), w + ".functional");
      Bounds(e, w, &c.lower, &c.upper);
      if (!path) {
        p.constraints.push_back(c);
        continue;
      }
      PathConstraint pc{c.functional, c.lower, c.upper};
      if (e.contains("from")) pc.from = Num(e["from"], w + ".from");
      if (e.contains("to")) pc.to = Num(e["to"], w + ".to");
      p.path_constraints.push_back(pc);
    }
  }
  if (j.contains("path_samples"))
    p.path_samples = static_cast<int>(Num(j["path_samples"], "path_samples"));
  if (j.contains("solver")) {
    const ojson& so = j["solver"];
    OnlyKeys(so, "solver",
             {"shooting_intervals", "gradient", "max_iterations", "tolerance",
              "constraint_tolerance", "lbfgs_memory", "print_level", "ipopt"});
    OptimizeOptions& op = s.options;
    if (so.contains("shooting_intervals"))
      op.shooting_intervals = static_cast<int>(
          Num(so["shooting_intervals"], "solver.shooting_intervals"));
    if (so.contains("gradient"))
      op.gradient = GradientMethodFromString(Str(so["gradient"], "gradient"));
    if (so.contains("max_iterations"))
      op.max_iterations =
          static_cast<int>(Num(so["max_iterations"], "max_iterations"));
    if (so.contains("tolerance"))
      op.tolerance = Num(so["tolerance"], "solver.tolerance");
    if (so.contains("constraint_tolerance"))
      op.constraint_tolerance =
          Num(so["constraint_tolerance"], "solver.constraint_tolerance");
    if (so.contains("lbfgs_memory"))
      op.lbfgs_memory = static_cast<int>(Num(so["lbfgs_memory"], "lbfgs"));
    if (so.contains("print_level"))
      op.ipopt_print_level =
          static_cast<int>(Num(so["print_level"], "solver.print_level"));
    if (so.contains("ipopt")) {
      if (!so["ipopt"].is_object())
        throw std::invalid_argument(
            "optimize spec: solver.ipopt must be an object of IPOPT options");
      for (auto it = so["ipopt"].begin(); it != so["ipopt"].end(); ++it)
        op.ipopt_options.push_back(it.key() + "=" +
                                   (it.value().is_string()
                                        ? it.value().get<std::string>()
                                        : it.value().dump()));
    }
  }
  return s;
}

std::string OptimizeResultJson(const OptimizeResult& r) {
  ojson j;
  j["ok"] = r.ok;
  j["status"] = r.status;
  j["message"] = r.message;
  j["warnings"] = r.warnings;
  j["iterations"] = r.iterations;
  j["objective"] = r.objective;
  auto finite = [](double x) { return std::isfinite(x) ? ojson(x) : ojson(); };
  j["kkt_residual"] = finite(r.kkt_residual);
  j["stationarity"] = finite(r.stationarity);
  j["infeasibility"] = finite(r.infeasibility);
  j["complementarity"] = finite(r.complementarity);
  ojson controls = ojson::array();
  for (const auto& c : r.controls) {
    ojson e;
    e["input"] = c.input;
    e["basis"] = ToString(c.basis);
    e["knots"] = c.knots;
    e["coefficients"] = std::vector<double>(
        c.initial.data(), c.initial.data() + c.initial.size());
    controls.push_back(e);
  }
  j["controls"] = controls;
  ojson fp = ojson::object();
  for (const auto& [n, v] : r.free_parameters) fp[n] = v;
  j["free_parameters"] = fp;
  ojson fx = ojson::object();
  for (const auto& [n, v] : r.free_initial_state) fx[n] = v;
  j["free_initial_state"] = fx;
  auto rows = [&](const std::vector<ConstraintValue>& list) {
    ojson a = ojson::array();
    for (const auto& c : list)
      a.push_back({{"name", c.name},
                   {"value", c.value},
                   {"lower", finite(c.lower)},
                   {"upper", finite(c.upper)},
                   {"violation", c.violation}});
    return a;
  };
  j["objective_terms"] = rows(r.objective_terms);
  j["constraints"] = rows(r.constraints);
  j["violated"] = rows(r.violated);
  ojson hist = ojson::array();
  for (const auto& it : r.history)
    hist.push_back({it.iteration, it.objective, it.infeasibility,
                    it.dual_infeasibility, it.step});
  j["history_columns"] = {"iteration", "objective", "infeasibility",
                          "dual_infeasibility", "step"};
  j["history"] = hist;
  j["runs"] = {{"plain", r.plain_runs},
               {"forward", r.forward_runs},
               {"adjoint", r.adjoint_runs}};
  j["wall_time"] = r.wall_time;
  return j.dump(2);
}

std::string WriteOptimizeResult(const Problem& problem,
                                const OptimizeResult& r,
                                const SimulationOptions& sim,
                                const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string base = dir + "/" + problem.model.name();
  SimulationOptions o = sim;
  o.sensitivity = SensitivityOptions();
  SimulationSummary summary;
  {
    CsvWriter csv(r.model, base + ".csv");
    summary = Simulate(r.model, r.x0, r.params, o, &csv);
  }
  ojson j = ojson::parse(SummaryJson(r.model, summary, r.params));
  j["optimal_control"] = ojson::parse(OptimizeResultJson(r));
  const std::string text = j.dump(2);
  {
    std::ofstream js(base + ".json");
    js << text << "\n";
    if (!js) throw std::runtime_error("cannot write '" + base + ".json'");
  }
  std::ofstream cs(base + ".controls.csv");
  cs << "t";
  for (const auto& c : r.controls) cs << "," << c.input;
  cs << "\n";
  const long n = std::lround(std::ceil((sim.t_end - sim.t0) / sim.output_step));
  Eigen::VectorXd t(n + 1);
  for (long i = 0; i <= n; ++i)
    t[i] = i == n ? sim.t_end : sim.t0 + i * sim.output_step;
  std::vector<Eigen::VectorXd> u;
  for (const auto& c : r.controls)
    u.push_back(EvaluateControl(c, c.initial, t));
  cs.precision(17);
  for (long i = 0; i <= n; ++i) {
    cs << t[i];
    for (const auto& col : u) cs << "," << col[i];
    cs << "\n";
  }
  if (!cs) throw std::runtime_error("cannot write '" + base + ".controls.csv'");
  return text;
}

}  // namespace daedalus
