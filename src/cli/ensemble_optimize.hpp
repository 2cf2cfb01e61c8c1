// Ensembles of optimizations (docs/optimal_control.md, "Several starts:
// ensembles of optimizations"): --optimize SPEC.json with --multi-start N,
// --ensemble FILE or --monte-carlo N. Each member is one --optimize run
// (cli/run_optimize.hpp); rank 0 groups the optima the members reached and
// names the best.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_optimize.hpp"
#include "daedalus/optimal_control.hpp"
#include "daedalus/run.hpp"

namespace daedalus::internal {

/// What rank 0 knows of the optimization before the members run.
struct OptimizePlan {
  std::string spec;  ///< the --optimize path
  bool maximize = false;
  std::vector<FreeVariable> variables;
  /// The "optimization" entry of the ensemble's JSON (spec, maximize,
  /// variables with bounds and guesses).
  nlohmann::ordered_json Meta() const;
};

/// Reads the spec of cfg.optimize and its free variables at cfg's
/// parameters (FreeVariables). @throws std::invalid_argument
/// "--optimize SPEC: ..." for a spec that cannot be used.
OptimizePlan PlanOptimization(const Problem& problem, const RunConfig& cfg);

/// The result row's "status", "error" and "optimal_control" (IPOPT's
/// status, objective, KKT residual, iterations, the optimization's wall
/// time and the free variables' final values as [[name, value], ...]) of
/// a member run by OptimizeSingle.
void AddOptimization(const OptimizeRunResult& r, nlohmann::ordered_json* row);

/// The tolerance of "the same optimum" in an ensemble's grouping.
inline constexpr OptimumTolerance kEnsembleOptimumTolerance{};

/// Groups the optima of the converged members (GroupOptima with
/// kEnsembleOptimumTolerance), sets each row's "optimal_control"
/// "optimum" (1 the best, 0 not converged) and returns the summary:
/// tolerance, converged count, members not converged, best member, the
/// number of distinct optima and per optimum its objective, members and
/// values.
nlohmann::ordered_json GroupMemberOptima(
    std::vector<nlohmann::ordered_json>* rows, bool maximize);

/// The summary's lines for the terminal.
std::string OptimaReport(const nlohmann::ordered_json& optima);

}  // namespace daedalus::internal
