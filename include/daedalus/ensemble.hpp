// Batches of runs for an optimizer (issue 20, gradient ensembles): the
// value and gradient of one functional for many parameter vectors, as an
// optimizer asks for them. Serial, in the calling process; the command
// line's ensembles (docs/ensembles.md) run members across MPI ranks.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// One member of a batch.
struct BatchResult {
  bool ok = false;
  std::string error;         ///< why not, when !ok
  double value = 0.0;        ///< the functional at t_end
  Eigen::VectorXd gradient;  ///< d value / d options.sensitivity.parameters
  SimulationSummary summary;
};

/// Runs `problem` from problem.initial(p) with parameters p for every p in
/// `params`, with `options`, whose sensitivity settings must ask for the
/// adjoint gradient of a functional (method kAdjoint and `functional` set;
/// `parameters` empty means all of the model's). A member that cannot run
/// (a parameter outside its range, a failed integration) is a result with
/// ok false and its error; the others run. When options.stop is set the
/// running member ends at its next evaluation and no other starts: those
/// results have ok false and summary.interrupted true.
/// @throws std::invalid_argument when `options` asks for no adjoint
/// functional, or a vector has the wrong size.
std::vector<BatchResult> EvaluateBatch(
    const Problem& problem,
    const std::vector<Eigen::VectorXd>& params,
    SimulationOptions options);

}  // namespace daedalus
