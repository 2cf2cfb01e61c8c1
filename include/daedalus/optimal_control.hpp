// Optimal control on the sensitivity layer (docs/optimal_control.md).
//
// A problem's input channels become controls u_k(t) = sum_j c_kj B_j(t),
// piecewise-linear or cubic B-spline on a knot grid, whose coefficients
// c_kj are appended to the model as parameters (ModelWithControls): the
// sensitivities and adjoints see them as any model parameter. Objectives
// and constraints are the model's functionals ("NAME" at the end of the
// horizon, "NAME@EVENT#K" at an event), the control effort
// "effort:CHANNEL" = int u_k^2 dt, and path constraints (a functional's
// terminal term sampled along the run). Optimize() transcribes the problem
// by direct multiple shooting (Bock and Plitt 1984) on CVODES or IDAS,
// with exact gradients from forward sensitivities or adjoints, and solves
// the NLP with IPOPT (Waechter and Biegler 2006), loaded on first use from
// the module libdaedalus_ipopt.so.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// How a control channel's value depends on its coefficients between the
/// knots tau_0 < ... < tau_{K-1} (K coefficients either way; u is held at
/// its end values outside [tau_0, tau_{K-1}]):
///  - kPiecewiseLinear: u(tau_j) = c_j, linear in between;
///  - kCubicBSpline: u = sum_j c_j B_j, B_j the cubic B-spline centred on
///    tau_j (support tau_{j-2} .. tau_{j+2}, the grid extended by its end
///    spacings), the two outer splines folded into the end coefficients:
///    C2 in t, and u stays inside [min c, max c] (convex hull), so bounds
///    on the coefficients bound u.
enum class ControlBasis { kPiecewiseLinear, kCubicBSpline };
const char* ToString(ControlBasis b);
/// @throws std::invalid_argument listing the valid names.
ControlBasis ControlBasisFromString(const std::string& s);

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

/// One control: the model's input channel `input` driven by a spline.
struct ControlChannel {
  std::string input;
  ControlBasis basis = ControlBasis::kPiecewiseLinear;
  /// Strictly increasing knot times (at least 2).
  std::vector<double> knots;
  /// Initial guess of the coefficients (one per knot); empty: zero.
  Eigen::VectorXd initial;
  /// Bounds per coefficient (one per knot), or a single entry for all;
  /// empty: unbounded.
  Eigen::VectorXd lower, upper;
  /// |c_{j+1} - c_j| / (tau_{j+1} - tau_j) <= rate_limit (linear
  /// constraints; a torque-rate limit on a piecewise-linear torque).
  double rate_limit = kUnbounded;
  /// false: u = spline (the channel's own value function is replaced);
  /// true: u = the model's value + spline.
  bool add_to_model = false;
};

/// The name of coefficient j of the control on `input`: "input.c<j>".
std::string ControlParameterName(const std::string& input, int j);

/// The model with its channels `controls` driven by splines whose
/// coefficients are parameters appended after the model's own (named by
/// ControlParameterName, defaults from ControlChannel::initial). Every
/// other function is forwarded unchanged, events keep their options unless
/// `pass_events` is set (then every event is recorded and passed instead
/// of stopping the run: multiple shooting runs across them), and each
/// channel k adds the running functional "effort:<input>" = u_k^2.
/// @throws std::invalid_argument naming an unknown channel or a bad grid.
Model ModelWithControls(const Model& model,
                        const std::vector<ControlChannel>& controls,
                        bool pass_events = false);

/// The spline values of `channel` at times `t` (the parameters of
/// ModelWithControls, here given as coefficients c, one per knot).
Eigen::VectorXd EvaluateControl(const ControlChannel& channel,
                                const Eigen::VectorXd& c,
                                const Eigen::VectorXd& t);

/// A model parameter left free, with bounds (intersected with the
/// parameter's declared range). `initial` NaN: the run's value.
struct FreeParameter {
  std::string name;
  double lower = -kUnbounded, upper = kUnbounded;
  double initial = std::numeric_limits<double>::quiet_NaN();
};

/// A free entry of the initial state: "q0[NAME]" or "v0[NAME]" (an index
/// or a coordinate/velocity name, as --sens takes them).
struct FreeInitialState {
  std::string name;
  double lower = -kUnbounded, upper = kUnbounded;
  double initial = std::numeric_limits<double>::quiet_NaN();
};

/// weight * functional, where `functional` is "NAME" (at the end of the
/// horizon), "NAME@EVENT" or "NAME@EVENT#K" (at the event's K-th
/// occurrence over the horizon), or "effort:CHANNEL".
struct ObjectiveTerm {
  std::string functional;
  double weight = 1.0;
};

/// lower <= functional <= upper (a functional as in ObjectiveTerm).
struct PointConstraint {
  std::string functional;
  double lower = -kUnbounded, upper = kUnbounded;
};

/// lower <= phi(t, q(t), v(t), p) <= upper at every path sample in
/// [from, to], phi the terminal term of the model's functional
/// `functional`. The samples are the output times of each shooting
/// interval, `path_samples` per interval, and the end of the horizon; a
/// window (from, to) keeps the rows of the samples inside it (a range
/// that holds before an event, say, and not after it).
struct PathConstraint {
  std::string functional;
  double lower = -kUnbounded, upper = kUnbounded;
  double from = -kUnbounded, to = kUnbounded;
};

struct OptimalControlProblem {
  std::vector<ControlChannel> controls;
  std::vector<FreeParameter> parameters;
  std::vector<FreeInitialState> initial_state;
  std::vector<ObjectiveTerm> objective;
  bool maximize = false;
  std::vector<PointConstraint> constraints;
  std::vector<PathConstraint> path_constraints;
  /// Path samples per shooting interval (the interval's output step is its
  /// length over this).
  int path_samples = 10;
};

/// How the gradients are formed on each shooting interval.
///  - kAuto: forward sensitivities where the interval has continuity or
///    path rows (n + its controls' coefficients directions give all its
///    rows in one run), otherwise one adjoint run per functional unless
///    forward is cheaper by count (docs/optimal_control.md, "Gradients");
///  - kForward, kAdjoint: that method wherever it can serve (continuity
///    and path rows always take forward).
enum class GradientMethod { kAuto, kForward, kAdjoint };
const char* ToString(GradientMethod g);
GradientMethod GradientMethodFromString(const std::string& s);

/// One IPOPT iteration as reported to the terminal and the callback.
struct IterationInfo {
  int iteration = 0;
  double objective = 0.0;           ///< in the user's sense (not negated)
  double infeasibility = 0.0;       ///< IPOPT's inf_pr (max-norm, unscaled)
  double dual_infeasibility = 0.0;  ///< inf_du (scaled)
  double step = 0.0;                ///< alpha_pr
  double mu = 0.0;
  /// Under OptimizeFromStarts, the index of the start being solved (0
  /// for a lone Optimize).
  int start = 0;
};

struct OptimizeOptions {
  /// Shooting intervals of equal length on [t0, t_end] (1: single
  /// shooting).
  int shooting_intervals = 4;
  GradientMethod gradient = GradientMethod::kAuto;
  int max_iterations = 200;
  /// IPOPT's tol (scaled NLP error) and constr_viol_tol.
  double tolerance = 1e-8;
  double constraint_tolerance = 1e-8;
  /// "limited-memory" (L-BFGS) or "exact" is not available: only
  /// limited-memory is, the Hessian of a shooting NLP needs second-order
  /// sensitivities.
  int lbfgs_memory = 20;
  /// IPOPT's own print level (0: silent; our per-iteration line is printed
  /// on `progress`).
  int ipopt_print_level = 0;
  /// One line per iteration (objective, infeasibility, step) here; null:
  /// silent.
  std::ostream* progress = nullptr;
  /// Called after each iteration; returning false stops the solve
  /// (IPOPT's User_Requested_Stop).
  std::function<bool(const IterationInfo&)> callback;
  /// Extra IPOPT options, "name=value" (numbers, integers or strings).
  std::vector<std::string> ipopt_options;
};

/// A named row of the NLP's constraints (for reports of violations).
struct ConstraintValue {
  std::string name;
  double value = 0.0, lower = 0.0, upper = 0.0;
  double violation = 0.0;  ///< distance to [lower, upper], 0 inside
};

struct OptimizeResult {
  /// IPOPT converged (Solve_Succeeded or Solved_To_Acceptable_Level).
  bool ok = false;
  /// IPOPT's status name ("Solve_Succeeded", "Infeasible_Problem_Detected",
  /// ...) and a message a person reads.
  std::string status, message;
  std::vector<std::string> warnings;  ///< e.g. initial guesses projected
  int iterations = 0;
  double objective = 0.0;  ///< in the user's sense
  /// The KKT residual at the returned point, unscaled, recomputed from its
  /// multipliers: max of stationarity |grad f + J' lambda - z_L + z_U|,
  /// primal infeasibility and complementarity.
  double kkt_residual = 0.0;
  double stationarity = 0.0, infeasibility = 0.0, complementarity = 0.0;
  /// The controlled model (ModelWithControls with the problem's events) and
  /// its parameters at the solution (model parameters, free ones set, then
  /// the coefficients).
  Model model;
  Eigen::VectorXd params;
  InitialState x0;
  /// Per channel: its knots and optimal coefficients.
  std::vector<ControlChannel> controls;
  std::vector<std::pair<std::string, double>> free_parameters;
  std::vector<std::pair<std::string, double>> free_initial_state;
  /// Objective terms and constraints at the solution; `violated` lists the
  /// rows outside their bounds by more than the constraint tolerance.
  std::vector<ConstraintValue> objective_terms, constraints, violated;
  std::vector<IterationInfo> history;
  /// Simulations run (plain, forward, adjoint) and wall time [s].
  long plain_runs = 0, forward_runs = 0, adjoint_runs = 0;
  double wall_time = 0.0;
  /// The run of the returned controls over the horizon, one simulation
  /// (what the CSV and JSON of the solution show).
  SimulationSummary run;
};

/// Solves `ocp` on `problem` with the run options `sim` (t0, t_end, the
/// formulation, integrator and tolerances) and parameters `params` (np of
/// the problem's model; the free ones start there unless given).
/// The returned point is IPOPT's, or when IPOPT stops without converging
/// the best iterate met (least infeasibility, then best objective).
/// @throws std::invalid_argument for a malformed problem (unknown
///   functional, event, channel or parameter, a knot grid finer than the
///   output step, ...) with the name and how to fix it; std::runtime_error
///   when the IPOPT module cannot be loaded or the initial guess cannot be
///   simulated.
OptimizeResult Optimize(const Problem& problem,
                        const OptimalControlProblem& ocp,
                        const SimulationOptions& sim,
                        const Eigen::VectorXd& params,
                        const OptimizeOptions& options = {});

/// The problem and options of an optimization spec (docs/optimal_control.md,
/// "The spec file"), JSON text. @throws std::invalid_argument naming the
/// bad key or value.
struct OptimizeSpec {
  OptimalControlProblem problem;
  OptimizeOptions options;
  /// Overrides of the run options from the spec (t_end, ...) are applied to
  /// `sim` by ParseOptimizeSpec.
};
OptimizeSpec ParseOptimizeSpec(const std::string& json_text,
                               SimulationOptions* sim);

/// Writes DIR/<name>.csv and .json as a run does (the solution's run), with
/// the JSON's "optimal_control" entry, and DIR/<name>.controls.csv (t and
/// each channel's u on the output grid). Returns the JSON text.
/// @throws std::runtime_error when a file cannot be written.
std::string WriteOptimizeResult(const Problem& problem,
                                const OptimizeResult& result,
                                const SimulationOptions& sim,
                                const std::string& dir);

/// A free variable of an optimal control problem, as the NLP holds it:
/// a control coefficient ("input.c<j>", ControlParameterName), a free
/// parameter (its name) or a free initial-state entry ("q0[NAME]" or
/// "v0[NAME]" as the problem writes it); not the shooting nodes.
struct FreeVariable {
  std::string name;
  /// The bounds Optimize imposes (a free parameter's intersected with its
  /// declared range).
  double lower = -kUnbounded, upper = kUnbounded;
  /// The guess Optimize starts from (projected into the bounds).
  double initial = 0.0;
};

/// The free variables of `ocp` on `problem` at `params`, in the NLP's
/// order (coefficients channel by channel, free parameters, free
/// initial-state entries), with the bounds and guesses Optimize would use.
/// Runs nothing. @throws std::invalid_argument as Optimize does for a
/// malformed problem.
std::vector<FreeVariable> FreeVariables(const Problem& problem,
                                        const OptimalControlProblem& ocp,
                                        const SimulationOptions& sim,
                                        const Eigen::VectorXd& params);

/// `ocp` with the initial guesses of the named free variables replaced
/// (names as FreeVariables gives them; a coefficient's channel gets one
/// guess per knot, the others keeping theirs).
/// @throws std::invalid_argument for a name that is no free variable of
///   `ocp`, listing them.
OptimalControlProblem WithInitialGuess(
    OptimalControlProblem ocp,
    const std::vector<std::pair<std::string, double>>& guess);

/// The free variables' values at a result, named and ordered as
/// FreeVariables gives them.
std::vector<std::pair<std::string, double>> FreeValues(
    const OptimizeResult& result);

/// When two converged optimizations count as the same optimum: objectives
/// within `objective_tolerance` * max(1, |f|) and every free variable
/// within `variable_tolerance` * max(1, |x|) (x, f of the better one).
struct OptimumTolerance {
  double objective_tolerance = 1e-6;
  double variable_tolerance = 1e-3;
};

/// The optimum each point reached: 1 for the best objective (the user's
/// sense: largest when `maximize`), 2 for the next distinct one, ...; 0
/// for a point that did not converge. Points are taken best first, each
/// joining the first optimum (by its best point) within `tol`, else
/// starting a new one. `values[i]` are point i's free variables (the same
/// length for all converged points).
std::vector<int> GroupOptima(const std::vector<double>& objectives,
                             const std::vector<Eigen::VectorXd>& values,
                             const std::vector<bool>& converged,
                             bool maximize,
                             const OptimumTolerance& tol = {});

/// Optimizations of one problem from several starts, one after the other
/// in the calling process (the command line's --multi-start spreads them
/// over MPI ranks; docs/optimal_control.md, "Several starts").
struct MultiStartResult {
  /// Per start: Optimize's result (empty when it threw: `error` says why).
  std::vector<OptimizeResult> results;
  std::vector<std::string> errors;
  /// Per start: the optimum it reached (GroupOptima; 0: none).
  std::vector<int> optimum;
  int distinct_optima = 0;
  /// The start with the best converged objective; -1 when none converged.
  int best = -1;
};

/// Runs Optimize from each start: `starts[i]` overrides the named initial
/// guesses (WithInitialGuess; an empty list is the problem's own guess).
/// A start whose run throws std::runtime_error (its guess cannot be
/// simulated, say) is kept as a failure with its message; the others run.
/// @throws std::invalid_argument before any run for a malformed problem or
///   a start naming no free variable.
MultiStartResult OptimizeFromStarts(
    const Problem& problem,
    const OptimalControlProblem& ocp,
    const SimulationOptions& sim,
    const Eigen::VectorXd& params,
    const std::vector<std::vector<std::pair<std::string, double>>>& starts,
    const OptimizeOptions& options = {},
    const OptimumTolerance& tol = {});

/// The "optimal_control" entry of the JSON (status, KKT residual, controls,
/// free values, constraints, iterations) as JSON text.
std::string OptimizeResultJson(const OptimizeResult& result);

}  // namespace daedalus
