// What every integrator adapter shares: the noexcept callback trampoline,
// the SUNDIALS error handler, the summary's identity and the consistent
// start.
#pragma once

#include <Eigen/Core>
#include <sstream>
#include <stdexcept>
#include <string>

#include "daedalus/simulate.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/support.hpp"

namespace daedalus::internal {

/// Error state shared by a run's SUNDIALS callbacks. Callbacks are noexcept
/// trampolines: Trap runs the body, stashes the exception text and returns
/// 0, +1 (recoverable: the solver cuts the step) or -1 (fatal).
struct CallbackGuard {
  std::string last_error;
  std::string sundials_message;
  // Recoverable failures since the last output. A failure the solver cannot
  // step around (a model undefined beyond some time) would otherwise make it
  // creep forward with ever smaller steps.
  int recoverable_failures = 0;
  static constexpr int kMaxRecoverableFailures = 200;

  template <class Body>
  int Trap(const Body& body) noexcept {
    try {
      body();
      return 0;
    } catch (const std::invalid_argument& e) {
      last_error = e.what();
      return -1;
    } catch (const std::logic_error& e) {
      last_error = e.what();
      return -1;
    } catch (const std::exception& e) {  // KktError, non-finite values
      last_error = e.what();
      return ++recoverable_failures > kMaxRecoverableFailures ? -1 : 1;
    } catch (...) {
      last_error = "unknown exception in a model function";
      return -1;
    }
  }

  /// Called before each solver call that produces an output.
  void Reset() {
    last_error.clear();
    recoverable_failures = 0;
  }

  /// ": <model message>" or ": <SUNDIALS message>" for a failure report.
  std::string Detail() const {
    if (!last_error.empty()) return ": " + last_error;
    if (!sundials_message.empty()) return ": " + sundials_message;
    return "";
  }
};

/// SUNDIALS error handler (CVODES and IDAS share the signature); user data
/// is the run's CallbackGuard.
void SundialsErrHandler(int error_code,
                        const char* module,
                        const char* function,
                        char* msg,
                        void* guard);

/// A summary with the run's identity filled in (problem, formulation,
/// integrator, tolerances, start time, energy kind, evaluator), not yet ok.
SimulationSummary StartSummary(const Model& model,
                               const SimulationOptions& options,
                               KktPath path);

/// Projects (q, v) onto the position and velocity constraints at t0 and
/// records the correction norms; on failure fills sum->error and returns
/// false (the run must not start).
bool MakeConsistent(Mechanics* mech,
                    const SimulationOptions& options,
                    Eigen::VectorXd* q,
                    Eigen::VectorXd* v,
                    SimulationSummary* sum);

/// Output times: the k-th of the run (k = 1 .. NumOutputs).
long NumOutputs(const SimulationOptions& o);
double OutputTime(const SimulationOptions& o, long k);

/// The drift contract at the last sample: empty when the drift is within
/// options.drift_tol, else the violation ("drift D of constraint 'row'
/// exceeds --drift-tol T at t = t"), with the worst row in `row`.
std::string DriftViolation(const Model& model,
                           const SimulationOptions& o,
                           const SimulationSummary& sum,
                           int* row,
                           double* drift);

}  // namespace daedalus::internal
