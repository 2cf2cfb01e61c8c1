// --inverse-dynamics FILE.csv on the common command line: reads a motion,
// computes its inputs and multipliers (include/daedalus/inverse_dynamics.hpp)
// and writes DIR/<name>.inverse_dynamics.csv and .json
// (docs/inverse_dynamics.md).
#pragma once

#include <string>

#include "daedalus/run.hpp"

namespace daedalus::internal {

/// Runs the inverse dynamics that `cfg` asks for. Returns run()'s exit
/// status: 0 ok; 1 when the model failed to evaluate at a sample (the
/// files keep the samples before it, the JSON says "failed"); 2 for a
/// motion file that cannot be used (missing columns, times not strictly
/// increasing, too few samples: nothing is written) or an output that
/// cannot be written.
int RunInverseDynamics(const Problem& problem,
                       const RunConfig& cfg,
                       const std::string& program);

}  // namespace daedalus::internal
