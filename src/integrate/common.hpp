// What every integrator adapter shares: the noexcept callback trampoline,
// the SUNDIALS error handler, the summary's identity and the consistent
// start.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <functional>
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
  /// SimulationOptions::stop: read at every callback; a nonzero value
  /// fails it unrecoverably, which ends the solver call (Simulate then
  /// reports the run as interrupted).
  const std::atomic<int>* stop = nullptr;

  template <class Body>
  int Trap(const Body& body) noexcept {
    if (stop != nullptr && stop->load(std::memory_order_relaxed) != 0) {
      last_error = "stop requested";
      return -1;
    }
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

  /// SimulationOptions::stop, read between outputs: a solver that steps
  /// far past the output times (a free fall, a system at rest) fills many
  /// samples by interpolation without calling the model, so the callbacks
  /// alone answered a signal only seconds later.
  bool StopRequested() const {
    return stop != nullptr && stop->load(std::memory_order_relaxed) != 0;
  }

  /// Called before each solver call that produces an output.
  void Reset() {
    last_error.clear();
    recoverable_failures = 0;
  }

  /// The hint for a failure whose cause the model message already names
  /// (an overflowed state: NonFiniteMessage), else "".
  std::string HintFromDetail() const {
    if (last_error.find("overflowed double precision") != std::string::npos)
      return "rescale the problem: its values exceed the range of double";
    return "";
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

/// Below this reciprocal condition of the Jacobi-scaled J M^-1 J' at the
/// state where a solver failed, its report names the singular
/// configuration (SingularityNote). Looser than kNearSingularRcond (the
/// per-sample warning): an implicit DAE solver fails before it reaches
/// the singular state, while the condition is still moderate.
inline constexpr double kSingularityNoteRcond = 1e-4;

/// "; the mechanism is near a singular configuration there: ..." when the
/// KKT health at (t, q, v) is below kSingularityNoteRcond, else "".
std::string SingularityNote(Mechanics* mech,
                            Formulation form,
                            double t,
                            const Eigen::VectorXd& q,
                            const Eigen::VectorXd& v);

/// The hint for a solver failure under an absolute tolerance far below the
/// round-off of any state of order 1e-14 or more (atol < 1e-30): the error
/// test cannot pass where a component crosses zero, so the step shrinks to
/// the minimum (the pendulum at --atol 1e-150: CV_ERR_FAILURE at
/// t = 4e-16). "" otherwise.
std::string ToleranceHint(const SimulationOptions& options);

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

/// The dense Jacobian of f at y (n components; f0 = f(y)) by forward
/// difference quotients, into `jac` (column-major, n x n; `work`: n
/// doubles). Column j steps y_j by max(sqrt(eps) |y_j|, atol): the step
/// that balances truncation and round-off where y_j is away from zero
/// (CVODES's and IDAS's leading term), and never below the absolute
/// tolerance. CVODES's own quotient floors it at 1e3 |h| eps n |f0|_wrms
/// (rtol |y_j| + atol) instead, which collapses where f0 vanishes: at
/// rest, where q_j = 0 or v_j = 0, steps of ~1e-27 whose quotients are
/// the right-hand side's round-off over the step (the standing humanoid:
/// a Newton convergence failure at about every step; docs/formulations.md,
/// "Newton systems"). IDAS's floor, rtol |y_j| + atol (idaLsDenseDQJac),
/// cures that too and was tried: with it the humanoid pushed at 20 N s ran
/// its second (with this one it stalled at 0.444 s, a friction witness's
/// chatter since ended by name), but the quaternion
/// top's GGL adjoint cell on IDAS (support_matrix_test, ggl_idas_sparse_8)
/// failed in its backward pass, for a reason not found.
/// @throws std::runtime_error (a
/// recoverable failure) when f0 over its tolerance or a quotient is not
/// finite: the values overflowed.
void DifferenceQuotientJacobian(
    const std::function<void(const double* y, double* f)>& f,
    int n,
    const double* y,
    const double* f0,
    double rtol,
    double atol,
    double* jac,
    double* work);

}  // namespace daedalus::internal
