// Time integration of a constrained model with SUNDIALS.
//
// Formulations (docs/formulations.md):
//   unstabilized  index-1 ODE  M vdot - J' lambda = B u - h,  J vdot = -b
//   baumgarte     index-1 with  J vdot = -(b + 2 alpha (J v + Phi_t)
//                 + beta^2 Phi)  (nonholonomic rows: + alpha (A v + a))
//   projection    index-1 ODE plus CVODES projection (CVodeSetProjFn) of
//                 positions (Gauss-Newton in the mass metric) and velocities
//                 (M-orthogonal) onto the constraint manifold after each step
//   ggl           stabilized index-2 (Gear-Gupta-Leimkuhler) DAE in IDAS:
//                 qdot = v - G' mu, M vdot - J' lambda = B u - h,
//                 Phi = 0 (holonomic rows G), J v + Phi_t = 0 (all rows)
//   index3        the direct index-3 DAE in IDAS: qdot = v,
//                 M vdot - J' lambda = B u - h, Phi = 0 (velocity level for
//                 nonholonomic rows)
// unstabilized and baumgarte also run on IDAS as index-1 DAEs with lambda
// algebraic (--integrator idas).
// Energy-balance terms are integrated as CVODES quadratures with error
// control.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daedalus/contact.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/model.hpp"
#include "daedalus/sensitivity.hpp"

namespace daedalus {

enum class Formulation {
  kUnstabilized,
  kBaumgarte,
  kProjection,
  kGgl,
  kIndex3
};
const char* ToString(Formulation f);
/// @throws std::invalid_argument listing the valid names.
Formulation FormulationFromString(const std::string& s);

/// kStormerVerlet, kSymplecticEuler and kRattle are the fixed-step
/// structure-preserving schemes of symplectic.hpp (SimulationOptions::step).
/// kGeneralizedAlpha and kHht are the generalized-alpha family on the
/// index-3 form (Chung-Hulbert and Hilber-Hughes-Taylor parameters,
/// SimulationOptions::rho_inf), with step-size control or a fixed --step.
enum class Integrator {
  kCvodesBdf,
  kCvodesAdams,
  kIdas,
  kStormerVerlet,
  kSymplecticEuler,
  kRattle,
  kGeneralizedAlpha,
  kHht,
  /// Moreau-Jean time stepping with contact impulses (contact.hpp,
  /// docs/moreau_jean.md): fixed step SimulationOptions::step, first order.
  kMoreauJean
};
const char* ToString(Integrator i);
Integrator IntegratorFromString(const std::string& s);

/// Linear solver of the SUNDIALS Newton systems.
enum class LinearSolver { kDense, kKlu };
const char* ToString(LinearSolver s);
LinearSolver LinearSolverFromString(const std::string& s);

/// How the Newton-system Jacobian is formed.
enum class JacobianMethod { kAd, kDq };
const char* ToString(JacobianMethod j);
JacobianMethod JacobianMethodFromString(const std::string& s);

/// What a run does when its drift exceeds SimulationOptions::drift_tol.
enum class DriftAction { kFail, kEscalate };
const char* ToString(DriftAction a);
DriftAction DriftActionFromString(const std::string& s);

struct SimulationOptions {
  double t0 = 0.0;
  double t_end = 10.0;
  /// Spacing of output samples [s]; the integrator's own steps are adaptive.
  double output_step = 0.01;
  double rtol = 1e-8;
  double atol = 1e-10;
  /// IDAS (GGL and index 3): how tightly each Newton iteration must
  /// resolve the multipliers (and GGL's mu), which are outside the local
  /// error test. 0 (the default): their weights in the convergence test
  /// are scaled by the step being attempted, h or h^2 times the velocities'
  /// (positions') weights, capped at round-off (docs/formulations.md,
  /// "Scaling of the algebraic unknowns"). > 0: this fixed absolute
  /// tolerance instead, without the scaling; an index-2 multiplier is
  /// determined only to ~round-off / h, an index-3 one to ~round-off / h^2,
  /// so a small value can stall the corrector at small steps.
  double multiplier_atol = 0.0;
  Formulation formulation = Formulation::kBaumgarte;
  Integrator integrator = Integrator::kCvodesBdf;
  /// Baumgarte gains [1/s]. alpha = beta makes the drift dynamics
  /// e'' + 2 alpha e' + beta^2 e = 0 critically damped (no overshoot);
  /// 10/s removes a violation within about half a second, faster than the
  /// motion of a typical mechanism but slow enough not to make the ODE stiff
  /// at the step sizes that the accuracy of the motion needs.
  double baumgarte_alpha = 10.0;
  double baumgarte_beta = 10.0;
  /// Projection of the initial state onto the manifold: stop when the
  /// max-norm of Phi (and of J v + Phi_t) falls below this, in the
  /// constraints' own units; default far below any useful atol.
  double initial_projection_tol = 1e-12;
  int initial_projection_max_iter = 50;
  /// The run's budget of integrator steps (--max-steps): the steps of the
  /// whole run, as the summary counts them (SolverStats::steps), whatever
  /// the output step; a run that needs more fails naming it. CVODES and
  /// IDAS get the steps left before each output interval
  /// (CVodeSetMaxNumSteps / IDASetMaxNumSteps), the generalized-alpha
  /// schemes count their own, the fixed-step schemes are checked before
  /// the run ((t_end - t0) / step). The adjoint runs' forward and
  /// backward phases take it per integration between two events.
  long max_steps = 5000000;
  /// Convergence coefficient of the corrector's nonlinear solver in the
  /// SUNDIALS integrators (CVodeSetNonlinConvCoef / IDASetNonlinConvCoef;
  /// --nonlin-conv-coef): the corrector stops when its estimated remaining
  /// iteration error is below this fraction of the local error test's
  /// tolerance. 0 means the integrator's own default (CVODES 0.1, IDAS
  /// 0.33); otherwise positive and finite. The local error test, which
  /// decides whether a step is accepted, does not depend on it
  /// (docs/output.md, "The corrector's convergence coefficient").
  double nonlin_conv_coef = 0.0;
  /// Largest output grid a run accepts: ceil((t_end - t0) / output_step)
  /// samples (--max-samples). A grid beyond it is refused before the run:
  /// a mistyped --output-step or --t-end would otherwise write gigabytes,
  /// or, past what a long holds, nothing at all.
  long max_samples = 1000000;
  /// Drift contract: the largest position or velocity drift (max-norm of
  /// Phi or J v + Phi_t, in the constraints' units) accepted at an output
  /// sample; 0 disables the check. On violation the run fails or, for
  /// Baumgarte/unstabilized on CVODES BDF, escalates to projection from the
  /// projected current state (DriftAction).
  double drift_tol = 0.0;
  DriftAction drift_action = DriftAction::kEscalate;
  KktOptions kkt;
  /// Newton-system linear solver and Jacobian of the DAE residual (ODE
  /// right-hand side): exact by AD tangents, or SUNDIALS's difference
  /// quotients.
  LinearSolver linear_solver = LinearSolver::kDense;
  JacobianMethod jacobian = JacobianMethod::kAd;
  /// Evaluate the equations of motion, the IDAS residual, its Jacobian and
  /// the quadrature integrands by compiled programs when the model's
  /// functions can be recorded (sym.hpp; --evaluator compiled), else by
  /// the dual-number path (--evaluator ad). Both are exact; the summary's
  /// `evaluator` says which one a run used.
  bool compiled = true;
  SensitivityOptions sensitivity;
  /// Unilateral constraints: monitored equalities or event-driven contacts
  /// (contact.hpp, docs/contact.md).
  ContactOptions contact;
  /// --integrator moreau-jean: theta and the cone solver's tolerance.
  MoreauJeanOptions moreau_jean;
  /// Fixed step [s] of the structure-preserving integrators (required for
  /// them, unused otherwise); output_step must be a multiple of it.
  double step = 0.0;
  /// Generalized-alpha and HHT: the spectral radius of the step map at
  /// infinite frequency, in [0, 1] (HHT: [1/2, 1]); 1 conserves the energy
  /// of a linear oscillator, 0 annihilates the highest frequencies in one
  /// step. The generalized-alpha and HHT step otherwise adapts to
  /// rtol/atol, or is fixed when `step` > 0 (then output_step need not be
  /// a multiple of it: a step is shortened to land on an output time).
  double rho_inf = 0.8;
  /// Cooperative stop: when set, the run reads it at every evaluation of
  /// the model; a nonzero value (a signal number, say, stored by a signal
  /// handler: a lock-free atomic is async-signal-safe) ends the run at that
  /// step with the samples so far, SimulationSummary::interrupted set and
  /// the error saying where. The command line sets it on SIGINT and
  /// SIGTERM (docs/output.md). Not owned; must outlive the run.
  const std::atomic<int>* stop = nullptr;

  /// True when the options make sense; otherwise `why` says what to fix.
  bool IsValid(std::string* why) const;
};

/// The state the integrator starts from (before consistent initialization).
struct InitialState {
  Eigen::VectorXd q;  // nq
  Eigen::VectorXd v;  // nv
};

/// One output sample (all at one time). Signs and meaning of every field:
/// docs/diagnostics.md.
struct Sample {
  double t = 0.0;
  Eigen::VectorXd q, v, vdot;         // nq, nv, nv
  Eigen::VectorXd lambda;             // nc multipliers
  Eigen::VectorXd power;              // nc: lambda_i (J_i v) [W]
  Eigen::VectorXd ideal_power;        // nc: -lambda_i Phi_t,i [W]
  Eigen::VectorXd reaction_power;     // nv: v_j (J' lambda)_j [W]
  Eigen::VectorXd phi, vel_residual;  // nc
  double drift_position = 0.0;        // max |Phi| over holonomic rows
  double drift_quaternion = 0.0;      // max | |q| - 1 | over quaternions
  double drift_velocity = 0.0;        // max |J v + Phi_t| over all rows
  double energy = 0.0;                // E (T + V, or v'p - L)
  double energy_residual = 0.0;       // E - E0 - (sum of work terms)
  // Instantaneous power terms of the balance [W] and their sum, the rate
  // of E that the balance predicts (stabilization power excluded).
  Eigen::VectorXd input_power;       // nu: v'B_k u_k
  double damping_power = 0.0;        // v'D v (a loss: enters with a minus sign)
  double other_power = 0.0;          // v'Q_r
  double explicit_time_power = 0.0;  // -L_t
  double energy_rate = 0.0;  // input - damping + other + constraint + time
  // Integrated terms [J] from t0.
  Eigen::VectorXd input_work;             // nu: int v'B_k u_k
  double damping_loss = 0.0;              // int v'D v
  double other_work = 0.0;                // int v'Q_r
  Eigen::VectorXd constraint_work;        // nc: int lambda_i J_i v
  Eigen::VectorXd ideal_constraint_work;  // nc: int -lambda_i Phi_t,i
  double explicit_time_work = 0.0;        // int -L_t
  double stabilization_work = 0.0;  // GGL correction power, projection jumps
  double reset_work = 0.0;          // sum of E+ - E- over the resets so far
  double impact_work = 0.0;         // sum of E+ - E- over the contact impacts
  /// Part of constraint_work: the friction rows' (ContactLaw::friction)
  /// int lambda_t J_t v, <= 0 (docs/friction.md).
  double friction_work = 0.0;
  /// nc: the impulses of the contact impact just before this sample (the
  /// sample after an impact), else zeros; empty without contacts.
  Eigen::VectorXd impulse;
  Eigen::VectorXd quadratures;  // the model's named quadratures
  /// Forward sensitivities d(q, v, lambda)/dp (rows: nq + nv + nc,
  /// columns: the requested parameters); empty without --sens.
  Eigen::MatrixXd sens;
  // KKT health (nc > 0): reciprocal condition number of the Jacobi-scaled
  // Schur complement J M^-1 J' (1: perfectly conditioned, 0: singular) and
  // the numerical rank of J.
  double kkt_rcond = 1.0;
  int rank_J = 0;
};

/// Below this reciprocal condition number of the Jacobi-scaled
/// J M^-1 J' the summary warns that the mechanism is near a singular
/// configuration: the multipliers have then lost about six of their
/// sixteen digits, while the KKT solve itself fails only at 1e-12
/// (KktOptions::singular_tolerance), six orders of magnitude later.
inline constexpr double kNearSingularRcond = 1e-6;

/// Receives samples as they are produced (so a failed run keeps its rows).
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void OnSample(const Sample& s) = 0;
};

struct SolverStats {
  long steps = 0;
  long rhs_evals = 0;
  long jacobian_evals = 0;
  long error_test_failures = 0;
  long nonlinear_conv_failures = 0;
  long projections = 0;
  long newton_iterations = 0;  ///< generalized-alpha and HHT
};

/// One change of formulation made by the drift contract.
struct Escalation {
  double t = 0.0;
  std::string constraint;  ///< the row with the largest drift
  double drift = 0.0;
  Formulation from = Formulation::kBaumgarte;
  Formulation to = Formulation::kProjection;
};

/// A root located by the SUNDIALS root finder.
struct EventRecord {
  std::string name;  ///< user event name, or "lambda_<row>" for a unilateral
                     ///< multiplier changing sign
  double t = 0.0;
  bool stopped = false;    ///< the run stopped here (EventOptions::stop)
  double direction = 0.0;  ///< +1 rising, -1 falling
  /// The model's event index, or -1 for a feasibility root.
  int index = -1;
  /// 1 for an event's first occurrence, 2 for its second, ...
  int occurrence = 0;
  /// Forward sensitivities: dt_e/dp = -(g_x s + g_p) / (g_x x' + g_t) per
  /// sensitivity parameter (docs/sensitivities.md, "Events"); empty
  /// without them, or when the crossing is grazing.
  Eigen::VectorXd dt_dp;
  /// The crossing is (nearly) tangential: |dg/dt| is below kGrazing times
  /// |g_x| |x'| + |g_t|, so t_e is not differentiable to working accuracy
  /// and no dt_e/dp is given.
  bool grazing = false;
  /// dg/dt along the motion at the event (g_x x' + g_t).
  double rate = 0.0;
  /// A reset map acted here (ModelBuilder::Reset): the state jumped, and
  /// E+ - E- is the energy it changed (in the energy balance as reset
  /// work); the projection of its result onto the constraints moved q and
  /// v by these max-norms (0 when the reset map kept them).
  bool reset = false;
  double energy_change = 0.0;
  double reset_correction_position = 0.0;
  double reset_correction_velocity = 0.0;
};

/// Below this ratio |g_x x' + g_t| / (|g_x| |x'| + |g_t|) an event's
/// crossing is called grazing: dt_e/dp = -(...) / (g_x x' + g_t) would
/// amplify the sensitivities' own error (about the tolerance) by more
/// than 1e8, beyond what any tolerance leaves meaningful.
inline constexpr double kGrazing = 1e-8;

/// The value of a declared functional at the end of a run or at an event
/// (SensitivityOptions::functional, NAME@EVENT), and its gradient when
/// forward sensitivities ran.
struct FunctionalValue {
  std::string name;
  /// "end", or the event and its occurrence ("impact#1").
  std::string at = "end";
  double t = 0.0;
  bool evaluated = false;  ///< false when the event never occurred
  double value = 0.0;
  /// dG/dp per sensitivity parameter (forward sensitivities only).
  Eigen::VectorXd gradient;
};

/// One interval during which a feasibility condition was violated: a
/// unilateral row with lambda < 0, or a friction cone with
/// mu lambda_n - |lambda_t| < 0.
struct FeasibilityViolation {
  std::string kind;  ///< "unilateral" or "friction_cone"
  std::string name;  ///< the constraint row or the cone
  double t_start = 0.0;
  double t_end = 0.0;   ///< = t_reached while still violated at the end
  bool ongoing = true;  ///< still violated at the last sample
  double worst = 0.0;   ///< most negative value met (lambda or cone margin)
  double t_worst = 0.0;
};

/// KKT health over a run (sampled at the output times).
struct KktHealthSummary {
  bool checked = false;    ///< the model has constraints
  double rcond_min = 1.0;  ///< smallest Sample::kkt_rcond met
  double t_worst = 0.0;    ///< where it was met, with the state
  Eigen::VectorXd q_worst, v_worst;
  /// Smallest singular value of J M^-1 J' (unscaled) at the worst sample.
  double sigma_min_at_worst = 0.0;
  int rank_J_min = 0;  ///< smallest numerical rank of J met (full: nc)
  /// Rows that take part in the near-dependence at the worst sample (the
  /// large components of the Schur complement's smallest eigenvector).
  std::vector<std::string> weak_rows;
  bool near_singular = false;  ///< rcond_min < kNearSingularRcond
  double t_first_near_singular = 0.0;
};

struct SimulationSummary {
  bool ok = false;
  std::string error;  ///< empty when ok
  /// The run was ended by SimulationOptions::stop (ok is then false and
  /// `error` says at what time); `stop_code` is the value it held.
  bool interrupted = false;
  int stop_code = 0;
  std::string problem;
  Formulation formulation = Formulation::kBaumgarte;
  Integrator integrator = Integrator::kCvodesBdf;
  double rtol = 0.0, atol = 0.0;
  double t_reached = 0.0;
  Sample final;                              ///< last sample written
  double initial_correction_position = 0.0;  ///< |q0 - projected q0|
  double initial_correction_velocity = 0.0;  ///< |v0 - projected v0|
  double drift_position_max = 0.0;
  double drift_quaternion_max = 0.0;  ///< of the quaternions' norms
  double drift_velocity_max = 0.0;
  double energy_initial = 0.0;
  double energy_final = 0.0;
  double energy_residual_max = 0.0;
  std::string energy_kind;  ///< "T+V" or "energy function v'p - L"
  long residual_evals = 0;  ///< IDAS residual evaluations (IDAS only)
  /// "compiled", or "dual numbers" with the reason (sym.hpp).
  std::string evaluator;
  SolverStats stats;
  int samples = 0;
  double drift_tol = 0.0;
  std::vector<Escalation> escalations;
  std::vector<EventRecord> events;
  /// Every declared functional at the end of the run, and the one
  /// SensitivityOptions::functional names (at its event, when it names
  /// one).
  std::vector<FunctionalValue> functionals;
  SensitivityResult sensitivities;  ///< method kNone without --sens
  /// Feasibility: number of unilateral rows and friction cones watched,
  /// and every violation interval.
  int unilateral_rows = 0;
  int friction_cones = 0;
  std::vector<FeasibilityViolation> violations;
  /// Largest |lambda_i J_i v + lambda_i Phi_t,i| over the samples, per
  /// row (nc): the gap of the constraint power identity [W].
  Eigen::VectorXd power_gap_max;
  KktHealthSummary kkt_health;
  /// Warnings a user should read (near-singular configurations, ...).
  std::vector<std::string> warnings;
  /// Event-driven contact (docs/contact.md): switches, impacts, the
  /// feasibility certificate of the modes.
  ContactReport contact;

  /// One line: status, time reached, drift, energy residual, steps.
  std::string BriefReport() const;
  /// A table a person reads at the end of a run.
  std::string FullReport(const Model& model) const;
};

/// Integrates `model` from `x0` with parameters `params` (np). Never throws
/// for a failure during integration: the summary says failed and why, and
/// the observer has seen every sample up to the failure.
/// @throws std::invalid_argument for invalid options or mismatched sizes.
SimulationSummary Simulate(const Model& model,
                           const InitialState& x0,
                           const Eigen::VectorXd& params,
                           const SimulationOptions& options,
                           Observer* observer = nullptr);

}  // namespace daedalus
