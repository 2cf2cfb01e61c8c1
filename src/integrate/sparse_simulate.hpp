// The sparse path of Simulate(): CVODES over the sparse evaluation
// (sparse_dynamics.hpp) and the sparse KKT solvers (sparse_kkt.hpp), for the
// index-1 formulations (unstabilized, baumgarte, projection). Simulate()
// dispatches here when UseSparsePath says so; nothing else in the
// integration code depends on this file.
#pragma once

#include <Eigen/Core>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::internal {

/// True when `options` select the sparse path for `model`: an explicit
/// sparse --kkt method, or auto resolving to one (ResolveKktMethod) for a
/// run the sparse path supports.
/// @throws std::invalid_argument for an explicit sparse method with options
/// the sparse path does not support (IDAS, GGL, index-3, events, unilateral
/// constraints), saying what to change.
bool UseSparsePath(const Model& model, const SimulationOptions& options);

/// Integrates like Simulate() on the sparse path. CVODES runs BDF with a
/// matrix-free Newton-Krylov iteration (SPGMR, difference-quotient Jacobian
/// products: the ODE's Jacobian is dense in maximal coordinates, since the
/// KKT solve couples every body) or Adams with fixed-point iteration.
SimulationSummary SimulateSparse(const Model& model,
                                 const InitialState& x0,
                                 const Eigen::VectorXd& params,
                                 const SimulationOptions& options,
                                 Observer* observer);

}  // namespace daedalus::internal
