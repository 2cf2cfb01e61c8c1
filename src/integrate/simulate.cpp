// Simulate(): checks the request against the support matrix, makes the
// run's Mechanics (dense or sparse) and hands it to the integrator adapter
// (docs/architecture.md).
#include "daedalus/simulate.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "contact/moreau_jean.hpp"
#include "eval/eval_stop.hpp"
#include "events/functional_target.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/support.hpp"
#include "integrate/adapters.hpp"
#include "integrate/common.hpp"
#include "model/affinity.hpp"

namespace daedalus {
namespace {

// A run that ended on SimulationOptions::stop: whatever the solver made of
// the refused callback, the report says it was interrupted, and where. A
// stop requested after the last sample (while the run was finishing) is
// answered too: the samples are complete, but the caller asked to stop
// and must not be told the run ended normally.
void MarkInterrupted(const SimulationOptions& options, SimulationSummary* sum) {
  if (options.stop == nullptr) return;
  const int code = options.stop->load();
  if (code == 0) return;
  sum->ok = false;
  sum->interrupted = true;
  sum->stop_code = code;
  // The time of the last row written: the solver may have stepped beyond
  // it before the stop, but nothing after it is reported.
  if (sum->samples > 0) sum->t_reached = sum->final.t;
  std::ostringstream os;
  os << "interrupted (stop request " << code << ") at t = " << sum->t_reached
     << " after " << sum->samples << " samples";
  sum->error = os.str();
}

// Simulate()'s checks of the request, before any work; the run's KKT path.
internal::KktPath CheckRequest(const Model& model,
                               const InitialState& x0,
                               const Eigen::VectorXd& params,
                               const SimulationOptions& options) {
  // Option values first, then the combination for this model (the support
  // matrix), so that a refusal reads as the matrix states it.
  std::string why = internal::OptionsRangeError(options);
  if (!why.empty()) throw std::invalid_argument("options: " + why);
  if (x0.q.size() != model.nq() || x0.v.size() != model.nv()) {
    throw std::invalid_argument(
        "initial state has " + std::to_string(x0.q.size()) +
        " coordinates and " + std::to_string(x0.v.size()) +
        " velocities; model '" + model.name() + "' has " +
        std::to_string(model.nq()) + " and " + std::to_string(model.nv()));
  }
  for (const internal::QuaternionBlock& b : model.quaternions()) {
    // A unit quaternion is normalized by the start's projection (and the
    // correction reported); a zero one has no direction to normalize to.
    const double n = x0.q.segment<4>(b.q).norm();
    if (!(n > 1e-12) || !std::isfinite(n)) {
      throw std::invalid_argument(
          "model '" + model.name() + "': the initial quaternion '" + b.name +
          "' (coordinates " + std::to_string(b.q) + " to " +
          std::to_string(b.q + 3) + ") has norm " + std::to_string(n) +
          ", which is not a rotation; give a unit quaternion (w, x, y, z), "
          "e.g. (1, 0, 0, 0) for the identity");
    }
  }
  if (params.size() != model.num_parameters()) {
    throw std::invalid_argument(
        std::to_string(params.size()) + " parameter values given; model '" +
        model.name() + "' has " + std::to_string(model.num_parameters()));
  }
  why = model.ParameterRangeError(params);
  if (!why.empty()) throw std::invalid_argument(why);
  // Build() probed at random states; this is the state the run starts at,
  // where the constraints are certainly defined.
  why = internal::NonAffineConstraint(model.data(), x0.q, options.t0, params);
  if (!why.empty())
    throw std::invalid_argument("model '" + model.name() + "': " + why);
  const internal::KktPath path = internal::ResolveKktPath(model, options);
  why = internal::Refusal(options, path, internal::TraitsOf(model));
  if (!why.empty()) throw std::invalid_argument(why);
  // The functional, and the adjoint's need of one, before any work.
  if (!options.sensitivity.functional.empty())
    internal::ParseFunctionalTarget(model, options.sensitivity.functional);
  for (const std::string& f : options.sensitivity.more_functionals)
    internal::ParseFunctionalTarget(model, f);
  if (options.sensitivity.method == SensMethod::kAdjoint &&
      options.sensitivity.functional.empty()) {
    std::string valid;
    for (const auto& f : model.data().functionals)
      valid += (valid.empty() ? "" : ", ") + f.name;
    throw std::invalid_argument(
        "adjoint sensitivities need a functional (--functional NAME; "
        "functional= in Python; SensitivityOptions::functional); model '" +
        model.name() + "' declares: " + (valid.empty() ? "(none)" : valid));
  }
  return path;
}

// The adjoint pass (its own checkpointed forward run and the backward run)
// into sum->sensitivities; its failure into sum->ok and sum->error.
void AdjointPass(const Model& model,
                 const InitialState& x0,
                 const Eigen::VectorXd& params,
                 const SimulationOptions& options,
                 internal::KktPath path,
                 SimulationSummary* sum) {
  auto mech = internal::MakeMechanics(model, options,
                                      path == internal::KktPath::kSparse);
  mech->SetParameters(params);
  std::string error;
  // IDAS: the adjoint DAE of the run's own index-1 residual; otherwise
  // CVODES on the ODE form.
  sum->sensitivities =
      options.integrator == Integrator::kIdas
          ? internal::AdjointGradientIdas(mech.get(), x0, options, &error)
          : internal::AdjointGradient(mech.get(), x0, options, &error);
  if (sum->ok && !error.empty()) {
    sum->ok = false;
    sum->error = error;
  }
  MarkInterrupted(options, sum);
}

}  // namespace

SimulationSummary Simulate(const Model& model,
                           const InitialState& x0,
                           const Eigen::VectorXd& params,
                           const SimulationOptions& options,
                           Observer* observer) {
  const internal::KktPath path = CheckRequest(model, x0, params, options);
  if (options.sensitivity.method == SensMethod::kAdjoint) {
    // The plain run gives the samples and the report; the adjoint pass the
    // gradient.
    SimulationOptions plain = options;
    plain.sensitivity.method = SensMethod::kNone;
    SimulationSummary sum = Simulate(model, x0, params, plain, observer);
    AdjointPass(model, x0, params, options, path, &sum);
    return sum;
  }

  SimulationSummary sum = internal::StartSummary(model, options, path);
  auto mech = internal::MakeMechanics(model, options,
                                      path == internal::KktPath::kSparse);
  mech->SetParameters(params);
  {
    // SimulationOptions::stop is read between the sweeps of the long
    // evaluations too (eval/eval_stop.hpp: a large energy-form model's
    // consistent start or sample took seconds).
    const internal::ScopedEvalStop sweeps_stop(options.stop);
    try {
      switch (options.integrator) {
        case Integrator::kCvodesBdf:
        case Integrator::kCvodesAdams:
          internal::IntegrateCvodes(mech.get(), x0, options, observer, &sum);
          break;
        case Integrator::kIdas:
          internal::IntegrateIdas(mech.get(), x0, options, observer, &sum);
          break;
        case Integrator::kStormerVerlet:
        case Integrator::kSymplecticEuler:
        case Integrator::kRattle:
          internal::IntegrateFixedStep(mech.get(), x0, options, observer, &sum);
          break;
        case Integrator::kGeneralizedAlpha:
        case Integrator::kHht:
          internal::IntegrateAlpha(mech.get(), x0, options, observer, &sum);
          break;
        case Integrator::kMoreauJean:
          // Time stepping with contact impulses: the contact stage of its
          // own (contact/moreau_jean.hpp, docs/moreau_jean.md).
          internal::IntegrateMoreauJean(mech.get(), x0, options, observer,
                                        &sum);
          break;
      }
    } catch (const std::exception& e) {
      // A stop that surfaced as an exception (the alpha schemes' step
      // loop, an evaluation between its sweeps) ends the run interrupted,
      // with the samples so far; it was reported as a failed run.
      if (options.stop == nullptr || options.stop->load() == 0) throw;
      sum.ok = false;
      sum.error = e.what();
    }
  }
  MarkInterrupted(options, &sum);
  return sum;
}

namespace internal {

SimulationSummary AdjointGradientOnly(const Model& model,
                                      const InitialState& x0,
                                      const Eigen::VectorXd& params,
                                      const SimulationOptions& options) {
  if (options.sensitivity.method != SensMethod::kAdjoint)
    throw std::logic_error("AdjointGradientOnly: the method is not adjoint");
  const KktPath path = CheckRequest(model, x0, params, options);
  SimulationSummary sum;
  sum.ok = true;
  AdjointPass(model, x0, params, options, path, &sum);
  return sum;
}

}  // namespace internal

}  // namespace daedalus
