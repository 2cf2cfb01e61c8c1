// EstimateGlobalError (include/daedalus/error_estimate.hpp): the run again
// at tighter tolerances, above Simulate.
#include "daedalus/error_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "formulation/support.hpp"

namespace daedalus {

namespace {

// The reference run's options: tighter tolerances, one output interval,
// no sensitivities; a form that follows its tolerance.
SimulationOptions ReferenceOptions(const Model& model,
                                   const SimulationOptions& o,
                                   const ErrorEstimateOptions& e) {
  SimulationOptions r = o;
  r.rtol = std::max(o.rtol / e.tighten, e.min_rtol);
  r.atol = std::max(o.atol / e.tighten, e.min_atol);
  r.sensitivity = SensitivityOptions();
  r.output_step = o.t_end - o.t0;  // only the end is compared
  r.drift_tol = 0.0;
  // More steps at the tighter tolerance: the budget grows with them
  // (about tighten^(1/order) for the order-5 methods the references use).
  r.max_steps = o.max_steps > std::numeric_limits<long>::max() / 20
                    ? std::numeric_limits<long>::max()
                    : 20 * o.max_steps;
  const bool follows =
      !(o.formulation == Formulation::kIndex3 ||
        internal::IsAlpha(o.integrator) || internal::IsFixedStep(o.integrator));
  if (follows) return r;
  r.step = 0.0;
  if (model.nc() > 0) {
    r.formulation = Formulation::kGgl;
    r.integrator = Integrator::kIdas;
  } else {
    r.formulation = Formulation::kBaumgarte;
    r.integrator = Integrator::kCvodesBdf;
  }
  // A model the GGL form cannot take (the support matrix) keeps its own.
  const std::string refused = internal::Refusal(
      r, internal::ResolveKktPath(model, r), internal::TraitsOf(model));
  if (!refused.empty()) {
    r.formulation = o.formulation;
    r.integrator =
        internal::IsAlpha(o.integrator) || internal::IsFixedStep(o.integrator)
            ? Integrator::kIdas
            : o.integrator;
  }
  return r;
}

std::string EstimateNum(double x) {
  std::ostringstream os;
  os.precision(3);
  os << x;
  return os.str();
}

}  // namespace

ErrorEstimate EstimateGlobalError(const Model& model,
                                  const InitialState& x0,
                                  const Eigen::VectorXd& params,
                                  const SimulationOptions& options,
                                  const SimulationSummary& run,
                                  const ErrorEstimateOptions& estimate) {
  ErrorEstimate e;
  const SimulationOptions ref = ReferenceOptions(model, options, estimate);
  e.reference_formulation = ref.formulation;
  e.reference_integrator = ref.integrator;
  e.reference_rtol = ref.rtol;
  e.reference_atol = ref.atol;
  e.t = run.t_reached;
  if (!run.ok) {
    e.error = "no estimate: the run did not finish (" +
              (run.error.empty() ? std::string("no sample") : run.error) + ")";
    return e;
  }
  const SimulationSummary r = Simulate(model, x0, params, ref);
  e.reference_steps = r.stats.steps;
  e.t_reference = r.t_reached;
  if (!r.ok) {
    e.error = "no estimate: the reference run (" +
              std::string(ToString(ref.formulation)) + " on " +
              ToString(ref.integrator) + " at rtol " + EstimateNum(ref.rtol) +
              ", atol " + EstimateNum(ref.atol) + ") failed: " + r.error;
    return e;
  }
  const Sample& a = run.final;
  const Sample& b = r.final;
  if (a.q.size() != b.q.size() || a.v.size() != b.v.size()) {
    e.error = "no estimate: the runs' final samples differ in size";
    return e;
  }
  e.q = a.q - b.q;
  e.v = a.v - b.v;
  if (a.lambda.size() == b.lambda.size()) e.lambda = a.lambda - b.lambda;
  // A quaternion's sign is free: compare each block with the nearer sign.
  for (const auto& blk : model.quaternions())
    if (a.q.segment<4>(blk.q).dot(b.q.segment<4>(blk.q)) < 0.0)
      e.q.segment<4>(blk.q) = a.q.segment<4>(blk.q) + b.q.segment<4>(blk.q);
  e.q_max = e.q.size() ? e.q.cwiseAbs().maxCoeff() : 0.0;
  e.v_max = e.v.size() ? e.v.cwiseAbs().maxCoeff() : 0.0;
  e.lambda_max = e.lambda.size() ? e.lambda.cwiseAbs().maxCoeff() : 0.0;
  // Relative to the run's tolerance, as its error test weighs a component.
  auto ratio = [&](const Eigen::VectorXd& err, const Eigen::VectorXd& x,
                   const std::vector<std::string>& names,
                   const std::string& prefix) {
    for (Eigen::Index i = 0; i < err.size(); ++i) {
      const double w = options.rtol * std::abs(x[i]) + options.atol;
      const double k = std::abs(err[i]) / w;
      if (k > e.tolerance_ratio || e.worst.empty()) {
        e.tolerance_ratio = std::max(e.tolerance_ratio, k);
        e.worst = prefix + names[static_cast<size_t>(i)];
      }
    }
  };
  ratio(e.q, b.q, model.coordinate_names(), "");
  ratio(e.v, b.v, model.velocity_names(), "v_");
  e.energy_residual = a.energy_residual;
  e.energy_residual_reference = b.energy_residual;
  e.energy_residual_error = a.energy_residual - b.energy_residual;
  e.tolerance_met = e.tolerance_ratio <= kToleranceMet;
  if (!e.tolerance_met) {
    std::ostringstream os;
    os.precision(3);
    os << "the requested tolerance was not met: the estimated global error "
          "of '"
       << e.worst << "' at t = " << e.t << " is " << e.tolerance_ratio
       << " times rtol |x| + atol (q " << e.q_max << ", v " << e.v_max
       << " at most)";
    if (options.formulation == Formulation::kIndex3)
      os << "; index 3 keeps only the positions in its error test: use "
            "--formulation ggl, or a tighter --rtol";
    else if (internal::IsFixedStep(options.integrator) ||
             (internal::IsAlpha(options.integrator) && options.step > 0.0))
      os << "; a fixed step is not controlled by --rtol: use a smaller "
            "--step";
    else
      os << "; tighten --rtol and --atol (the error test bounds each "
            "step's error, not their accumulation over the run)";
    e.warnings.push_back(os.str());
  }
  e.ok = true;
  return e;
}

}  // namespace daedalus
