#include <exception>
#include <stdexcept>

#include "daedalus/ensemble.hpp"
#include "daedalus/sensitivity.hpp"

namespace daedalus {

std::vector<BatchResult> EvaluateBatch(
    const Problem& problem,
    const std::vector<Eigen::VectorXd>& params,
    SimulationOptions options) {
  const Model& model = problem.model;
  if (options.sensitivity.method != SensMethod::kAdjoint ||
      options.sensitivity.functional.empty())
    throw std::invalid_argument(
        "EvaluateBatch: options.sensitivity must ask for the adjoint "
        "gradient of a functional (method kAdjoint, functional set)");
  for (const Eigen::VectorXd& p : params)
    if (p.size() != model.num_parameters())
      throw std::invalid_argument(
          "EvaluateBatch: a parameter vector has " + std::to_string(p.size()) +
          " entries; model '" + model.name() + "' has " +
          std::to_string(model.num_parameters()));
  std::vector<BatchResult> out(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    BatchResult& r = out[i];
    const Eigen::VectorXd& p = params[i];
    // SimulationOptions::stop: the member running ends at its next
    // evaluation (Simulate), and no other starts.
    const int stop = options.stop != nullptr ? options.stop->load() : 0;
    if (stop != 0) {
      r.ok = false;
      r.summary.interrupted = true;
      r.summary.stop_code = stop;
      r.error = "not run: the batch was interrupted (signal " +
                std::to_string(stop) + ") after " + std::to_string(i) + " of " +
                std::to_string(params.size()) + " members";
      r.summary.error = r.error;
      continue;
    }
    try {
      const std::string bad = model.ParameterRangeError(p);
      if (!bad.empty()) throw std::invalid_argument(bad);
      const InitialState x0 = problem.initial(p);
      SimulationOptions o = options;
      o.sensitivity.initial_tangent = InitialStateTangent(problem, p);
      r.summary = Simulate(model, x0, p, o);
      r.ok = r.summary.ok;
      r.error = r.summary.error;
      r.value = r.summary.sensitivities.functional_value;
      for (const auto& [name, g] : r.summary.sensitivities.functionals)
        if (name == options.sensitivity.functional) r.gradient = g;
    } catch (const std::exception& e) {
      r.ok = false;
      r.error = e.what();
    }
  }
  return out;
}

}  // namespace daedalus
