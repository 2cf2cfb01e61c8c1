// --optimize SPEC.json on the common command line: the optimal control
// problem of the spec (include/daedalus/optimal_control.hpp) solved on the
// problem, and the solution written as a run's files
// (docs/optimal_control.md).
#pragma once

#include <string>

#include "daedalus/run.hpp"

namespace daedalus::internal {

/// Returns run()'s exit status: 0 converged, 1 IPOPT stopped without
/// converging (the best iterate is written, the JSON says why), 2 a spec
/// or option that cannot be used (nothing is written).
int RunOptimize(const Problem& problem,
                const RunConfig& cfg,
                const std::string& program);

}  // namespace daedalus::internal
