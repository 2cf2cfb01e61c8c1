// Optimal control from Python (docs/optimal_control.md, "From Python"):
// daedalus.optimize(problem, spec, ...) hands the spec (the JSON of the
// --optimize file) and the run options to Optimize() and returns the
// solution as numpy arrays, the JSON summary and the optimal controls;
// with `starts`, OptimizeFromStarts from several.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "cli/ensemble_input.hpp"
#include "daedalus/optimal_control.hpp"
#include "daedalus/output.hpp"
#include "monitor/sample_collector.hpp"

namespace py = pybind11;

namespace daedalus::python {
namespace {

RunConfig ParseOptimizeArgs(const Problem& problem,
                            const std::vector<std::string>& args) {
  std::vector<const char*> argv{"daedalus"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  RunConfig cfg =
      ParseCommandLine(problem, static_cast<int>(argv.size()), argv.data());
  if (cfg.help || !cfg.emit_kernels.empty() || !cfg.optimize.empty())
    throw std::invalid_argument(
        "optimize takes run options only (t_end=, rtol=, params=, ...)");
  return cfg;
}

// N x width of one vector field of the samples.
py::array_t<double> Rows(const std::vector<Sample>& s,
                         Eigen::VectorXd Sample::*field,
                         int width) {
  py::array_t<double> a(
      {static_cast<py::ssize_t>(s.size()), static_cast<py::ssize_t>(width)});
  auto w = a.mutable_unchecked<2>();
  for (size_t i = 0; i < s.size(); ++i)
    for (int j = 0; j < width; ++j)
      w(static_cast<py::ssize_t>(i), j) = (s[i].*field)[j];
  return a;
}

// The spec and the run options, with the Python callback (given the
// iteration's figures and, under several starts, the start's index).
OptimizeSpec ParseSpec(const Problem& problem,
                       const std::string& spec_json,
                       const std::vector<std::string>& args,
                       const std::function<bool(py::dict)>& callback,
                       SimulationOptions* sim,
                       RunConfig* cfg) {
  *cfg = ParseOptimizeArgs(problem, args);
  *sim = cfg->options;
  sim->sensitivity = SensitivityOptions();
  OptimizeSpec spec = ParseOptimizeSpec(spec_json, sim);
  if (callback) {
    spec.options.callback = [callback](const IterationInfo& it) {
      py::dict d;
      d["iteration"] = it.iteration;
      d["objective"] = it.objective;
      d["infeasibility"] = it.infeasibility;
      d["dual_infeasibility"] = it.dual_infeasibility;
      d["step"] = it.step;
      d["start"] = it.start;
      return callback(d);
    };
  }
  return spec;
}

// One result as numpy arrays and JSON, with the solution's run; its files
// written to output_dir when one is given.
py::dict ResultDict(const Problem& problem,
                    const OptimizeResult& r,
                    const SimulationOptions& sim,
                    const std::string& output_dir) {
  py::dict out;
  out["ok"] = r.ok;
  out["status"] = r.status;
  out["message"] = r.message;
  out["warnings"] = r.warnings;
  out["iterations"] = r.iterations;
  out["objective"] = r.objective;
  out["kkt_residual"] = r.kkt_residual;
  py::list controls;
  for (const auto& c : r.controls) {
    py::dict d;
    d["input"] = c.input;
    d["basis"] = ToString(c.basis);
    d["knots"] = Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(
        c.knots.data(), Eigen::Index(c.knots.size())));
    d["coefficients"] = c.initial;
    controls.append(d);
  }
  out["controls"] = controls;
  py::dict fp;
  for (const auto& [n, v] : r.free_parameters) fp[py::str(n)] = v;
  out["free_parameters"] = fp;
  py::dict fx;
  for (const auto& [n, v] : r.free_initial_state) fx[py::str(n)] = v;
  out["free_initial_state"] = fx;
  Eigen::MatrixXd hist(Eigen::Index(r.history.size()), 5);
  for (size_t i = 0; i < r.history.size(); ++i)
    hist.row(Eigen::Index(i)) << r.history[i].iteration, r.history[i].objective,
        r.history[i].infeasibility, r.history[i].dual_infeasibility,
        r.history[i].step;
  out["history"] = hist;
  // The solution's run, sampled on the output grid, with the controls.
  internal::SampleCollector collector;
  const SimulationSummary s =
      Simulate(r.model, r.x0, r.params, sim, &collector);
  const auto& smp = collector.samples;
  Eigen::VectorXd t(Eigen::Index(smp.size()));
  for (size_t i = 0; i < smp.size(); ++i) t[Eigen::Index(i)] = smp[i].t;
  out["t"] = t;
  out["q"] = Rows(smp, &Sample::q, r.model.nq());
  out["v"] = Rows(smp, &Sample::v, r.model.nv());
  Eigen::MatrixXd u(t.size(), Eigen::Index(r.controls.size()));
  for (size_t k = 0; k < r.controls.size(); ++k)
    u.col(Eigen::Index(k)) =
        EvaluateControl(r.controls[k], r.controls[k].initial, t);
  out["u"] = u;
  std::string summary = SummaryJson(r.model, s, r.params);
  if (!output_dir.empty())
    summary = WriteOptimizeResult(problem, r, sim, output_dir);
  out["summary_json"] = summary;
  out["optimal_control_json"] = OptimizeResultJson(r);
  return out;
}

py::dict Optimize(const Problem& problem,
                  const std::string& spec_json,
                  const std::vector<std::string>& args,
                  const std::function<bool(py::dict)>& callback,
                  const std::string& output_dir) {
  SimulationOptions sim;
  RunConfig cfg;
  const OptimizeSpec spec =
      ParseSpec(problem, spec_json, args, callback, &sim, &cfg);
  const OptimizeResult r =
      daedalus::Optimize(problem, spec.problem, sim, cfg.params, spec.options);
  return ResultDict(problem, r, sim, output_dir);
}

// Several starts, one after the other (OptimizeFromStarts): `starts` the
// guesses by name, or, when `draw` > 0, that many starts drawn as
// --multi-start N --seed S draws them (DrawStarts: member i's start is the
// command line's member i's). Member i's files go to
// output_dir/members/NNNNNN as the command line writes them.
py::dict OptimizeStarts(
    const Problem& problem,
    const std::string& spec_json,
    const std::vector<std::string>& args,
    std::vector<std::vector<std::pair<std::string, double>>> starts,
    long draw,
    uint64_t seed,
    const std::function<bool(py::dict)>& callback,
    const std::string& output_dir) {
  SimulationOptions sim;
  RunConfig cfg;
  const OptimizeSpec spec =
      ParseSpec(problem, spec_json, args, callback, &sim, &cfg);
  if (draw > 0) {
    starts.clear();
    const auto vars = FreeVariables(problem, spec.problem, sim, cfg.params);
    for (const internal::MemberSpec& m :
         internal::DrawStarts(vars, draw, seed)) {
      std::vector<std::pair<std::string, double>> guess;
      // Member 0 is the spec's own start (no guess), as on the command line.
      if (m.index > 0)
        for (const auto& [name, text] : m.inputs)
          guess.emplace_back(name, std::stod(text));
      starts.push_back(std::move(guess));
    }
  }
  const MultiStartResult ms = OptimizeFromStarts(
      problem, spec.problem, sim, cfg.params, starts, spec.options);
  py::list results, used;
  for (size_t i = 0; i < starts.size(); ++i) {
    py::dict g;
    for (const auto& [name, value] : starts[i]) g[py::str(name)] = value;
    used.append(g);
    if (!ms.errors[i].empty()) {
      results.append(py::none());
      continue;
    }
    char member[24];
    std::snprintf(member, sizeof member, "%06zu", i);
    results.append(ResultDict(
        problem, ms.results[i], sim,
        output_dir.empty() ? output_dir
                           : output_dir + "/members/" + std::string(member)));
  }
  py::dict out;
  out["results"] = results;
  out["errors"] = ms.errors;
  out["starts"] = used;
  out["optimum"] = ms.optimum;
  out["distinct_optima"] = ms.distinct_optima;
  out["best"] = ms.best;
  return out;
}

}  // namespace

void BindOptimize(py::module_& m) {
  m.def("_optimize", &Optimize, py::arg("problem"), py::arg("spec"),
        py::arg("args"), py::arg("callback"), py::arg("output_dir"));
  m.def("_optimize_starts", &OptimizeStarts, py::arg("problem"),
        py::arg("spec"), py::arg("args"), py::arg("starts"), py::arg("draw"),
        py::arg("seed"), py::arg("callback"), py::arg("output_dir"));
}

}  // namespace daedalus::python
