#include "cli/run_optimize.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include "daedalus/optimal_control.hpp"

namespace daedalus::internal {

int RunOptimize(const Problem& problem,
                const RunConfig& cfg,
                const std::string& program) {
  std::ifstream in(cfg.optimize);
  if (!in) {
    std::cerr << program << ": --optimize: cannot read '" << cfg.optimize
              << "'\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  SimulationOptions sim = cfg.options;
  sim.sensitivity = SensitivityOptions();
  OptimizeSpec spec;
  OptimizeResult result;
  try {
    // The spec's run options (t_end, tolerances, ...) apply over the
    // command line's.
    spec = ParseOptimizeSpec(text.str(), &sim);
    if (!cfg.quiet) spec.options.progress = &std::cout;
    result = Optimize(problem, spec.problem, sim, cfg.params, spec.options);
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": --optimize " << cfg.optimize << ": " << e.what()
              << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": --optimize " << cfg.optimize << ": " << e.what()
              << "\n";
    return 1;
  }
  try {
    WriteOptimizeResult(problem, result, sim, cfg.output_dir);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  }
  const std::string base = cfg.output_dir + "/" + problem.model.name();
  if (!cfg.quiet)
    std::cout << "  wrote " << base << ".csv, " << base << ".json, " << base
              << ".controls.csv\n";
  if (!result.ok) {
    std::cerr << program << ": " << result.message << "\n";
    return 1;
  }
  return 0;
}

}  // namespace daedalus::internal
