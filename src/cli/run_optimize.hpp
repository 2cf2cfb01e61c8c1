// --optimize SPEC.json on the common command line: the optimal control
// problem of the spec (include/daedalus/optimal_control.hpp) solved on the
// problem, and the solution written as a run's files
// (docs/optimal_control.md). One code path for a single run and for each
// member of an ensemble of optimizations (cli/ensemble.hpp).
#pragma once

#include <string>

#include "daedalus/optimal_control.hpp"
#include "daedalus/run.hpp"

namespace daedalus::internal {

struct OptimizeRunResult {
  /// 0 converged, 1 IPOPT stopped without converging or a run failed, 2 a
  /// spec or option that cannot be used (nothing written).
  int exit_code = 0;
  /// What went wrong, one message (empty when exit_code is 0).
  std::string message;
  /// Optimize() returned: `result` holds its answer.
  bool solved = false;
  OptimizeResult result;
  /// The solution's JSON as written (empty when nothing was written).
  std::string json;
  /// Stopped by a signal (StopOnSignals::flag(), through IPOPT's callback).
  bool interrupted = false;
};

/// Reads cfg.optimize, applies cfg.optimize_guess, solves and writes
/// DIR/<name>.csv, .json and .controls.csv. With `report`, prints the
/// progress (unless cfg.quiet) and messages on stderr as a single run
/// does; without, prints nothing. Never throws.
OptimizeRunResult OptimizeSingle(const Problem& problem,
                                 const RunConfig& cfg,
                                 const std::string& program,
                                 bool report);

/// Returns run()'s exit status: 0 converged, 1 IPOPT stopped without
/// converging (the best iterate is written, the JSON says why), 2 a spec
/// or option that cannot be used (nothing is written), 128 + N stopped by
/// signal N after an iteration (the best iterate is written).
int RunOptimize(const Problem& problem,
                const RunConfig& cfg,
                const std::string& program);

}  // namespace daedalus::internal
