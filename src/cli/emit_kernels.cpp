// EmitNativeKernels (include/daedalus/emit_kernels.hpp): the build's
// --emit-kernels pass for a program that calls Simulate() itself.
#include "daedalus/emit_kernels.hpp"

#include <exception>
#include <fstream>

#include "cli/run_single.hpp"
#include "eval/expr_program.hpp"

namespace daedalus {

std::string EmitNativeKernels(const Model& model,
                              const Eigen::VectorXd& params,
                              const SimulationOptions& options,
                              const std::string& path) {
  try {
    internal::ProgramCollector collector;
    Problem problem;
    problem.model = model;
    RunConfig cfg;
    cfg.options = options;
    cfg.params = params;
    internal::CollectPrograms(problem, cfg);
    std::ofstream out(path);
    out << collector.KernelSource("EmitNativeKernels(" + model.name() + ")");
    out.close();
    if (!out) return "cannot write '" + path + "'";
    return "";
  } catch (const std::exception& e) {
    return std::string("cannot record the programs of model '") + model.name() +
           "': " + e.what();
  }
}

}  // namespace daedalus
