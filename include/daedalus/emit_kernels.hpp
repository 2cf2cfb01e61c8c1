// Native kernels for a program that calls Simulate() itself instead of
// handing its problem to daedalus::run (whose executables get them from
// daedalus_add_problem(), include/daedalus/kernels.hpp). The program writes
// the kernels' source once, in a first build of itself, and a second build
// compiles that file in (docs/using_as_a_package.md, "Native kernels
// without daedalus_add_problem").
#pragma once

#include <Eigen/Core>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// Writes to `path` the C++ source of the native kernels of the compiled
/// programs that Simulate() runs for `model` at `params` with `options`,
/// and those of the other formulations on IDAS and CVODES (so one file
/// serves runs with another formulation too). Compiled into the program,
/// the kernels register themselves at start-up (include/daedalus/kernels.hpp)
/// and its runs report `evaluator compiled (native kernels)`. A model that
/// cannot be recorded gets a file without kernels. Returns "" or what went
/// wrong (the file cannot be written, the model cannot be evaluated).
std::string EmitNativeKernels(const Model& model,
                              const Eigen::VectorXd& params,
                              const SimulationOptions& options,
                              const std::string& path);

}  // namespace daedalus
