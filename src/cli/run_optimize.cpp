#include "cli/run_optimize.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/run_files.hpp"

namespace daedalus::internal {

OptimizeRunResult OptimizeSingle(const Problem& problem,
                                 const RunConfig& cfg,
                                 const std::string& program,
                                 bool report) {
  OptimizeRunResult out;
  auto fail = [&](int code, const std::string& message) {
    out.exit_code = code;
    out.message = message;
    if (report) std::cerr << program << ": " << message << "\n";
    return out;
  };
  std::ifstream in(cfg.optimize);
  if (!in) return fail(2, "--optimize: cannot read '" + cfg.optimize + "'");
  std::ostringstream text;
  text << in.rdbuf();
  SimulationOptions sim = cfg.options;
  sim.sensitivity = SensitivityOptions();
  OptimizeSpec spec;
  try {
    // The spec's run options (t_end, tolerances, ...) apply over the
    // command line's.
    spec = ParseOptimizeSpec(text.str(), &sim);
    spec.problem = WithInitialGuess(spec.problem, cfg.optimize_guess);
    if (report && !cfg.quiet) spec.options.progress = &std::cout;
    // SIGINT and SIGTERM, where a caller installed StopOnSignals (an
    // ensemble), end IPOPT after its iteration; the best iterate is kept.
    spec.options.callback = [](const IterationInfo&) {
      return StopOnSignals::flag()->load() == 0;
    };
    out.result = Optimize(problem, spec.problem, sim, cfg.params, spec.options);
    out.solved = true;
  } catch (const std::invalid_argument& e) {
    return fail(2, "--optimize " + cfg.optimize + ": " + e.what());
  } catch (const std::exception& e) {
    return fail(1, "--optimize " + cfg.optimize + ": " + e.what());
  }
  out.interrupted = !out.result.ok && StopOnSignals::flag()->load() != 0;
  try {
    out.json = WriteOptimizeResult(problem, out.result, sim, cfg.output_dir);
  } catch (const std::exception& e) {
    return fail(2, e.what());
  }
  const std::string base = cfg.output_dir + "/" + problem.model.name();
  if (report && !cfg.quiet)
    std::cout << "  wrote " << base << ".csv, " << base << ".json, " << base
              << ".controls.csv\n";
  if (!out.result.ok) return fail(1, out.result.message);
  return out;
}

int RunOptimize(const Problem& problem,
                const RunConfig& cfg,
                const std::string& program) {
  // SIGINT, SIGTERM and SIGHUP end IPOPT after its current iteration
  // (the callback above); the best iterate met is written and the status
  // is 128 + N, as an interrupted run's. A second signal has its default
  // effect (StopOnSignals), for an iteration that takes too long.
  StopOnSignals signals;
  const OptimizeRunResult r = OptimizeSingle(problem, cfg, program, true);
  if (!r.interrupted) return r.exit_code;
  const int sig = StopOnSignals::flag()->load();
  const std::string base = cfg.output_dir + "/" + problem.model.name();
  std::cerr << program << ": interrupted by " << SignalName(sig)
            << " after iteration " << r.result.iterations << "; "
            << (r.json.empty() ? std::string("nothing was written")
                               : base +
                                     ".json and .csv hold the best "
                                     "iterate met")
            << "\n";
  return 128 + sig;
}

}  // namespace daedalus::internal
