#include "cli/run_single.hpp"

#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_extras.hpp"
#include "cli/run_files.hpp"
#include "daedalus/output.hpp"
#include "daedalus/symplectic.hpp"
#include "eval/expr_program.hpp"

namespace daedalus::internal {

namespace {

// Forwards each sample to the CSV writer and the side files' writers.
class FanOut : public Observer {
 public:
  FanOut(Observer* first, const std::vector<std::unique_ptr<Observer>>* rest)
      : first_(first), rest_(rest) {}
  void OnSample(const Sample& s) override {
    first_->OnSample(s);
    for (const auto& o : *rest_) o->OnSample(s);
  }

 private:
  Observer* first_;
  const std::vector<std::unique_ptr<Observer>>* rest_;
};

// The summary with the side files listed under "side_files".
std::string ListSideFiles(const std::string& summary_json,
                          const Problem& problem,
                          const std::string& name) {
  if (problem.side_outputs.empty()) return summary_json;
  nlohmann::json j = nlohmann::json::parse(summary_json);
  nlohmann::json list = nlohmann::json::array();
  for (const SideOutput& so : problem.side_outputs) {
    nlohmann::json e = nlohmann::json::object();
    if (!so.summary_json.empty()) {  // not an object: kept as text
      e = nlohmann::json::parse(so.summary_json, nullptr, false);
      if (!e.is_object()) e = {{"description", so.summary_json}};
    }
    e["file"] = name + "." + so.suffix;
    list.push_back(std::move(e));
  }
  j["side_files"] = std::move(list);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

InitialState StartingState(const Problem& problem, const RunConfig& cfg) {
  InitialState x = problem.initial(cfg.params);
  for (const auto& [i, value] : cfg.q0_overrides) {
    if (i < 0 || i >= x.q.size())
      throw std::invalid_argument("--q0: coordinate index " +
                                  std::to_string(i) + " out of range");
    x.q[i] = value;
  }
  for (const auto& [i, value] : cfg.v0_overrides) {
    if (i < 0 || i >= x.v.size())
      throw std::invalid_argument("--v0: velocity index " + std::to_string(i) +
                                  " out of range");
    x.v[i] = value;
  }
  return x;
}

SingleRunResult RunSingle(const Problem& problem,
                          RunConfig cfg,
                          const std::string& program,
                          bool report) {
  const std::string name = problem.model.name();
  SingleRunResult result;
  // `message` for the result; on stderr as "<program>: <message><suffix>"
  // when reporting.
  auto fail = [&](int code, const std::string& message,
                  const std::string& suffix = "") {
    result.exit_code = code;
    result.message = message;
    if (report) std::cerr << program << ": " << message << suffix;
    return result;
  };
  SetNativeKernels(!cfg.interpreted);
  if (cfg.options.integrator == Integrator::kStormerVerlet ||
      cfg.options.integrator == Integrator::kSymplecticEuler ||
      cfg.options.integrator == Integrator::kRattle) {
    // Whether a structure-preserving scheme fits the model's functions
    // (no damping, forces independent of v, separable for Stormer-Verlet
    // and RATTLE) is checked at the start, before anything is written.
    std::string why;
    bool fits = true;
    try {
      const InitialState x0 = StartingState(problem, cfg);
      fits = SchemeFits(problem.model, cfg.options.integrator, cfg.params,
                        cfg.options.t0, x0.q, x0.v, &why);
    } catch (const std::exception&) {
      // The run reports it (an initial state or model that fails to
      // evaluate), with the files it keeps.
    }
    if (!fits)
      return fail(2, "unsupported combination: " + why, "\n(see --help)\n");
  }
  std::string base;
  try {
    base = OutputBase(cfg.output_dir, name);
  } catch (const std::invalid_argument& e) {
    return fail(2, e.what(), "\n");
  }
  try {
    std::filesystem::create_directories(cfg.output_dir);
  } catch (const std::exception& e) {
    return fail(
        2,
        "cannot create output directory '" + cfg.output_dir + "': " + e.what(),
        "\n");
  }
  result.base = base;
  std::vector<std::string> exts = {".csv", ".json", ".csv.partial",
                                   ".json.partial"};
  for (const SideOutput& so : problem.side_outputs) {
    if (so.suffix.empty() || so.suffix.find('/') != std::string::npos ||
        !so.open)
      return fail(
          2,
          "problem '" + name +
              "': a side file needs a suffix "
              "without '/' and a writer (Problem::side_outputs), got '" +
              so.suffix + "'",
          "\n");
    exts.push_back("." + so.suffix);
    exts.push_back("." + so.suffix + ".partial");
  }
  for (const std::string& ext : exts) {
    // Checked before the run: at its end the rename would fail, after the
    // work (a usage error leaves every file as it was).
    std::error_code ec;
    if (std::filesystem::is_directory(base + ext, ec))
      return fail(2,
                  "cannot write '" + base + ext +
                      "': it is a directory; remove it or choose another "
                      "--output-dir",
                  "\n");
  }
  // Written under temporary names, put in place together at the end
  // (run_files.hpp); SIGINT and SIGTERM end the run with the rows so far.
  RunFiles files(base);
  for (const SideOutput& so : problem.side_outputs) files.AddSide(so.suffix);
  // The run's first act: an earlier run's files no longer look current.
  const std::string marked = files.MarkSuperseded();
  if (!marked.empty())
    return fail(2, marked + "; choose a writable --output-dir", "\n");
  cfg.options.stop = StopOnSignals::flag();
  SimulationSummary summary;
  RunExtras extras(problem, cfg);  // counterfactuals and the like
  try {
    std::vector<std::string> sens_columns;
    if (cfg.options.sensitivity.method == SensMethod::kForward) {
      for (const auto& sp : ResolveSensParameters(
               problem.model, cfg.options.sensitivity.parameters))
        sens_columns.push_back(sp.name);
    }
    // Opened first: a run that fails in initial() still leaves the header.
    CsvWriter csv(problem.model, files.csv_partial(), sens_columns);
    std::vector<std::unique_ptr<Observer>> sides;  // closed before Commit
    for (size_t i = 0; i < problem.side_outputs.size(); ++i)
      sides.push_back(problem.side_outputs[i].open(
          files.sides()[i] + ".partial", cfg.params));
    FanOut fan(&csv, &sides);
    const InitialState x0 = StartingState(problem, cfg);
    if (cfg.options.sensitivity.method != SensMethod::kNone) {
      Eigen::MatrixXd& tangent = cfg.options.sensitivity.initial_tangent;
      tangent = InitialStateTangent(problem, cfg.params);
      // An overridden entry is a number, independent of the parameters.
      for (const auto& ov : cfg.q0_overrides) tangent.row(ov.first).setZero();
      for (const auto& ov : cfg.v0_overrides)
        tangent.row(x0.q.size() + ov.first).setZero();
    }
    ProgressLine progress(name, cfg.options.t0, cfg.options.t_end, &fan,
                          &std::cerr,
                          report && ProgressLine::StderrIsTerminal());
    extras.set_forward(&progress);
    summary = Simulate(problem.model, x0, cfg.params, cfg.options, &extras);
    extras.set_forward(nullptr);
  } catch (const std::exception& e) {
    extras.set_forward(nullptr);
    summary.ok = false;
    summary.problem = name;
    summary.formulation = cfg.options.formulation;
    summary.integrator = cfg.options.integrator;
    summary.rtol = cfg.options.rtol;
    summary.atol = cfg.options.atol;
    summary.drift_tol = cfg.options.drift_tol;
    summary.error = e.what();
  }
  const bool extras_ok = extras.Finish(summary, base);
  result.json = ListSideFiles(
      extras.Decorate(SummaryJson(problem.model, summary, cfg.params)), problem,
      name);
  {
    std::ofstream js(files.json_partial());
    js << result.json;
    if (!js)
      return fail(2, "cannot write '" + files.json_partial() + "'", "\n");
  }
  const std::string commit = files.Commit();
  if (!commit.empty()) return fail(1, commit, "\n");
  if (report && !cfg.quiet) {
    std::cout << summary.FullReport(problem.model) << extras.report();
    std::cout << "  wrote                  " << base << ".csv, " << base
              << ".json";
    for (const auto& side : files.sides()) std::cout << ", " << side;
    std::cout << "\n";
  }
  if (summary.interrupted) {
    std::ostringstream t;  // as a stream prints it: 6 significant digits
    t << summary.t_reached;
    // The conventional status of a process ended by a signal: 128 + N.
    return fail(128 + summary.stop_code,
                "interrupted by " + SignalName(summary.stop_code) +
                    " at t = " + t.str() + "; " + base + ".csv keeps the " +
                    std::to_string(summary.samples) + " rows written, " + base +
                    ".json says \"interrupted\"",
                "\n");
  }
  if (!summary.ok) return fail(1, "run failed: " + summary.error, "\n");
  if (extras.interrupted() != 0)
    return fail(128 + extras.interrupted(),
                "interrupted by " + SignalName(extras.interrupted()) +
                    " during the counterfactual analyses; " + base +
                    ".json marks those not finished \"interrupted\"",
                "\n");
  if (!extras_ok) return fail(1, extras.error(), "\n");
  return result;
}

}  // namespace daedalus::internal
