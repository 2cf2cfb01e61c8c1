// The integrator adapters behind Simulate() (integrate/simulate.cpp). Each
// takes the run's Mechanics (dense or sparse, parameters set) and a summary
// whose identity StartSummary filled, integrates, and fills the rest; a
// failure during the run is reported in the summary, never thrown.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "daedalus/simulate.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// CVODES (BDF or Adams) on the ODE forms (cvodes.cpp).
void IntegrateCvodes(Mechanics* mech,
                     const InitialState& x0,
                     const SimulationOptions& options,
                     Observer* observer,
                     SimulationSummary* sum);

/// IDAS on the DAE forms (idas.cpp).
void IntegrateIdas(Mechanics* mech,
                   const InitialState& x0,
                   const SimulationOptions& options,
                   Observer* observer,
                   SimulationSummary* sum);

/// The fixed-step structure-preserving schemes (fixed_step.cpp).
void IntegrateFixedStep(Mechanics* mech,
                        const InitialState& x0,
                        const SimulationOptions& options,
                        Observer* observer,
                        SimulationSummary* sum);

/// The parameters of the generalized-alpha family (Arnold and Bruls
/// 2007): the weights of the acceleration-like variable and Newmark's.
struct AlphaParameters {
  double alpha_m = 0.0, alpha_f = 0.0, gamma = 0.5, beta = 0.25;
};
/// Chung and Hulbert's for kGeneralizedAlpha, Hilber, Hughes and Taylor's
/// (alpha_m = 0) for kHht, from the spectral radius at infinity.
AlphaParameters AlphaParametersFor(Integrator scheme, double rho_inf);

/// The scheme's own state after each accepted step of IntegrateAlpha,
/// for studies and tests: the reported multipliers are the KKT reactions
/// at the sampled (q, v), not the scheme's lambda.
struct AlphaTrace {
  std::vector<double> t;
  std::vector<Eigen::VectorXd> lambda, a;
};
/// Study knobs of IntegrateAlpha, per thread: `trace` (when not null)
/// receives every accepted step; perturbed_start = false restores the
/// consistent start a_0 = vdot_0 (to show the O(h) transient it leaves);
/// per_step_error = true holds the local error per step instead of per
/// unit step (generalized_alpha.cpp's head: fewer steps, error ~ rtol^2/3).
struct AlphaStudy {
  AlphaTrace* trace = nullptr;
  bool perturbed_start = true;
  bool per_step_error = false;
};
/// Sets the calling thread's knobs (the default: no trace, perturbed start).
void SetAlphaStudy(const AlphaStudy& study);

/// Generalized-alpha and HHT on the index-3 residual
/// (generalized_alpha.cpp).
void IntegrateAlpha(Mechanics* mech,
                    const InitialState& x0,
                    const SimulationOptions& options,
                    Observer* observer,
                    SimulationSummary* sum);

/// The adjoint gradient of options.sensitivity.functional on CVODES
/// (adjoint_cvodes.cpp); on failure `error` says why.
SensitivityResult AdjointGradient(Mechanics* mech,
                                  const InitialState& x0,
                                  const SimulationOptions& options,
                                  std::string* error);

/// The same on IDAS for the index-1 DAE forms (unstabilized, Baumgarte)
/// and GGL: the adjoint DAE of the run's own residual (adjoint_idas.cpp).
SensitivityResult AdjointGradientIdas(Mechanics* mech,
                                      const InitialState& x0,
                                      const SimulationOptions& options,
                                      std::string* error);

/// Simulate() with the adjoint method (options.sensitivity.method
/// kAdjoint) without its plain run: the same checks and the adjoint pass
/// alone, for a caller that has the samples and the report already, from a
/// plain run at the same point (the shooting NLP's values). The summary
/// holds only ok, error and the sensitivities; it has no samples, and
/// t_reached is not set.
SimulationSummary AdjointGradientOnly(const Model& model,
                                      const InitialState& x0,
                                      const Eigen::VectorXd& params,
                                      const SimulationOptions& options);

}  // namespace daedalus::internal
