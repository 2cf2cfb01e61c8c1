// The integrator adapters behind Simulate() (integrate/simulate.cpp). Each
// takes the run's Mechanics (dense or sparse, parameters set) and a summary
// whose identity StartSummary filled, integrates, and fills the rest; a
// failure during the run is reported in the summary, never thrown.
#pragma once

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

}  // namespace daedalus::internal
