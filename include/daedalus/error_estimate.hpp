// The global error of a run, estimated (issue 40; docs/diagnostics.md,
// "Global error estimate"; --error-estimate, error_estimate=True).
//
// The integrators control the local error of each step; the error of the
// state at the end of a run, the global error, is their accumulation
// through the dynamics and can exceed the tolerance by orders of magnitude
// (a chaotic or long run, or a form whose error test leaves variables
// out). EstimateGlobalError measures it the classical way (Hairer, Norsett
// and Wanner, Solving ODEs I, II.4, "Global error estimation"; Shampine,
// "Global error estimation with one-step methods", 1985): the run is
// repeated at tolerances `tighten` times smaller, and the difference of the
// two final states estimates the first run's error, since a run of a
// tolerance-proportional integrator at rtol / K has about 1/K of the error
// (measured ratios: docs/diagnostics.md). The reference run uses the same
// formulation and integrator, except where those do not follow the
// tolerance: index 3 (positions alone in its error test), the
// generalized-alpha schemes and the fixed-step ones are checked against GGL
// on IDAS (an unconstrained model: BDF on CVODES).
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

struct ErrorEstimateOptions {
  /// The reference run's rtol and atol are the run's divided by this.
  double tighten = 1000.0;
  /// Their floors: below them round-off, not truncation, sets the
  /// reference's error (docs/formulations.md, "round-off floors").
  double min_rtol = 1e-13;
  double min_atol = 1e-15;
};

struct ErrorEstimate {
  /// False when there is no estimate: the run did not finish, or the
  /// reference run failed (`error` says which and why).
  bool ok = false;
  std::string error;
  /// The reference run: its formulation, integrator and tolerances.
  Formulation reference_formulation = Formulation::kGgl;
  Integrator reference_integrator = Integrator::kIdas;
  double reference_rtol = 0.0, reference_atol = 0.0;
  long reference_steps = 0;
  /// The time of the two final states compared (each run's t_reached: the
  /// same t_end, or each run's time of a stopping event).
  double t = 0.0, t_reference = 0.0;
  /// Estimated errors of the final state, run minus reference: nq, nv, nc.
  Eigen::VectorXd q, v, lambda;
  /// Their largest magnitudes.
  double q_max = 0.0, v_max = 0.0, lambda_max = 0.0;
  /// The same relative to the run's tolerance, max_i |e_i| / (rtol |x_i| +
  /// atol) over q and v: 1 is an error of one tolerance; `worst` names the
  /// coordinate or velocity where it is largest.
  double tolerance_ratio = 0.0;
  std::string worst;
  /// The energy residual at the end (docs/diagnostics.md): the run's, the
  /// reference's, and its estimated error (their difference).
  double energy_residual = 0.0, energy_residual_reference = 0.0,
         energy_residual_error = 0.0;
  /// tolerance_ratio <= kToleranceMet.
  bool tolerance_met = false;
  /// What the user should know (the tolerance not met, and why).
  std::vector<std::string> warnings;
};

/// A run is said to meet its tolerance when its estimated global error is
/// at most this many tolerances (rtol |x| + atol, per component): the
/// accumulation of local errors over a run of many steps, which the error
/// test does not bound, is allowed one order of magnitude.
inline constexpr double kToleranceMet = 10.0;

/// Estimates the global error of `run`, the summary of Simulate(model, x0,
/// params, options), by a second run at tighter tolerances (file comment).
/// Forward sensitivities, if any, are not repeated.
/// @throws std::invalid_argument only for options Simulate refuses.
ErrorEstimate EstimateGlobalError(
    const Model& model,
    const InitialState& x0,
    const Eigen::VectorXd& params,
    const SimulationOptions& options,
    const SimulationSummary& run,
    const ErrorEstimateOptions& estimate = ErrorEstimateOptions());

}  // namespace daedalus
