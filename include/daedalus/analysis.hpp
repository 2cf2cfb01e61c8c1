// Analyses of a model at a state and along a run (seeds 000 and 003;
// docs/analysis.md):
//
//   - control-affine split  xdot = f(x) + G(x) u  and the constrained
//     input-to-acceleration map
//       G_vc = M^-1 B - M^-1 J' (J M^-1 J')^-1 J M^-1 B,
//     with an optional change of input zero u = u0(x) + u~;
//   - actuator dynamics as extra state: a first-order activation
//     adot = (u_c - a) / T_a between a command and an input channel, so that
//     "zero command" and "zero torque" are different interventions;
//   - counterfactuals with an explicit intervention: pointwise ZTCF
//     (zero-input vector field at achieved states), forward ZTCF (integrate
//     with named input channels removed), branched ZTCF (the same from an
//     achieved state, compared with the original future at the same times)
//     and the instantaneous ZVCF  a = -M^-1 h(z, 0)  with the constraints
//     solved at the reset state;
//   - momentum balance (Noether): I = p' xi(q) and its rate against Q' xi,
//     and cyclic coordinates detected from the Lagrangian.
//
// Sizes: nq = nv coordinates, nc constraint rows, nu input channels
// (docs/conventions.md). Every "inverse" below is a linear solve.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

// ===================================================== control-affine split

/// Input zero u0(t, q, v) for the change of input u = u0 + u~ (nu values,
/// one per model input channel; entries of channels that are not inputs of
/// the split are ignored).
using InputZero = std::function<Eigen::VectorXd(
    double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v)>;

struct ControlAffineOptions {
  /// Input channels that make up u, by name; empty means every channel.
  /// Channels not listed keep their model values and belong to the drift
  /// (an activation-driven torque, for instance: AddActuator).
  std::vector<std::string> inputs;
  /// Optional change of input zero: the drift becomes f + G u0 and the
  /// input u~ = u - u0 (seed 003). Unset means u0 = 0.
  InputZero input_zero;
  KktOptions kkt;
};

/// xdot = f(x) + G(x) u at one state x = (q, v), nx = nq + nv.
struct ControlAffineSplit {
  std::vector<std::string> inputs;     ///< the nu_s channels of u
  std::vector<int> input_index;        ///< their model channel indices
  Eigen::VectorXd f;                   ///< nx: drift [v; a_drift]
  Eigen::MatrixXd G;                   ///< nx x nu_s: [0; G_v]
  Eigen::VectorXd drift_acceleration;  ///< nv: vdot at u = u0
  Eigen::VectorXd drift_multipliers;   ///< nc: lambda at u = u0
  Eigen::MatrixXd input_acceleration;  ///< nv x nu_s: G_v (G_vc if nc>0)
  Eigen::MatrixXd input_multipliers;   ///< nc x nu_s: d lambda / d u
  Eigen::MatrixXd unconstrained_input_acceleration;  ///< nv x nu_s: M^-1 B
  Eigen::MatrixXd B;   ///< nv x nu_s: input columns
  Eigen::VectorXd u;   ///< nu_s: model input values here
  Eigen::VectorXd u0;  ///< nu_s: the input zero used
};

/// The control-affine split at (t, q, v) with parameters `params` (np).
/// Solves with a Cholesky factorization of M and of J M^-1 J' (no explicit
/// inverse). The split reproduces the full acceleration:
/// drift_acceleration + input_acceleration (u - u0) = KKT vdot.
/// @throws std::invalid_argument for an unknown input name (listing the
/// valid ones); KktError for a singular M or rank-deficient J.
ControlAffineSplit ComputeControlAffineSplit(
    const Model& model,
    const Eigen::VectorXd& params,
    double t,
    const Eigen::VectorXd& q,
    const Eigen::VectorXd& v,
    const ControlAffineOptions& options = ControlAffineOptions());

/// An input zero for gravity compensation: u0 is the least-squares solution
/// of B u0 = h(t, q, 0) over the channels `inputs` (empty: all), i.e. the
/// inputs that best hold the configuration at rest. When B cannot supply
/// h(t, q, 0) exactly (an underactuated model, seed 003's coupled example)
/// the remainder stays in the drift.
InputZero GravityCompensation(const Model& model,
                              const Eigen::VectorXd& params,
                              const std::vector<std::string>& inputs = {});

// ========================================================= model rewrites

/// Index of input channel `name`. @throws std::invalid_argument naming the
/// model and listing its valid channels.
int InputChannelIndex(const Model& model, const std::string& name);

/// A copy of `model` whose input channels `channels` (names; empty means
/// all) are removed: their value is identically zero, everything else
/// (energies, damping, other loads, constraints, moving boundaries, the
/// other channels, quadratures, events) is retained. The channels stay
/// declared, so outputs keep their columns.
/// @throws std::invalid_argument for an unknown channel name.
Model RemoveInputs(const Model& model,
                   const std::vector<std::string>& channels);

struct ActuatorOptions {
  /// Activation time constant T_a [s] (a model parameter
  /// "<channel>_T_a" of the new model, so --param can change it).
  double time_constant = 0.03;
  /// Scale eps of the activation coordinate's fictitious inertia eps T_a,
  /// damping eps and command column eps. The activation law does not
  /// depend on eps; its kinetic term eps T_a a^2 / 2 [J per (N m)^2] enters
  /// the reported energy, and its balance terms (damping loss eps a^2,
  /// command work eps u_c a) the energy balance, which therefore still
  /// closes. 1e-6 keeps them negligible beside the mechanics while M stays
  /// far from the singular threshold of the KKT solver.
  double scale = 1e-6;
};

/// Where AddActuator put the activation.
struct ActuatorInfo {
  std::string channel;          ///< the applied input channel (torque)
  std::string command_channel;  ///< "<channel>_command"
  std::string coordinate;       ///< "<channel>_activation"
  int coordinate_index = -1;    ///< its index in q (= original nq)
  int velocity_index = -1;      ///< its index in v (= original nv)
  int time_constant_parameter = -1;
};

/// Inserts first-order actuator dynamics between a command u_c and input
/// channel `channel` (seed 003): the new model has one more coordinate s
/// whose velocity is the applied input, a = v_s, with
///
///   eps T_a sdd + eps sd = eps u_c   <=>   adot = (u_c - a) / T_a,
///
/// the channel `channel` now applying B_k(q) a, and a new channel
/// "<channel>_command" carrying u_c (the original value function of the
/// channel unless `command` is given, as a function of (t, q, v, p) of the
/// new model). Removing "<channel>_command" (zero command) lets the
/// activation decay; removing "<channel>" (zero torque) disconnects it.
/// The activation is a velocity of the new model: set it in the initial
/// state with ExtendState.
/// @throws std::invalid_argument for an unknown channel or T_a <= 0.
Model AddActuator(const Model& model,
                  const std::string& channel,
                  const ActuatorOptions& options = ActuatorOptions(),
                  ActuatorInfo* info = nullptr);

/// The initial state of an AddActuator model: (q, v) of the original model
/// plus activation a0 (s = 0).
InitialState ExtendState(const InitialState& x, double activation);

// ========================================================= counterfactuals

/// The zero-input vector field at one achieved state (pointwise ZTCF).
struct PointwiseCounterfactual {
  double t = 0.0;
  Eigen::VectorXd q, v;             ///< nq, nv: the achieved state
  Eigen::VectorXd vdot_achieved;    ///< nv: with all inputs
  Eigen::VectorXd lambda_achieved;  ///< nc
  Eigen::VectorXd vdot;             ///< nv: with the channels removed
  Eigen::VectorXd lambda;           ///< nc: its own reactions
};

/// Pointwise ZTCF: at each achieved sample state, the accelerations and
/// reactions with input channels `channels` removed (empty: all). Each
/// evaluation solves its own reactions. The result is a trace of vector
/// fields along the achieved motion, not an integrated motion.
/// @throws std::invalid_argument for an unknown channel.
std::vector<PointwiseCounterfactual> PointwiseZtcf(
    const Model& model,
    const Eigen::VectorXd& params,
    const std::vector<Sample>& achieved,
    const std::vector<std::string>& channels,
    const KktOptions& kkt = KktOptions());

/// Forward ZTCF: integrates from `x` at options.t0 to options.t_end with
/// input channels `channels` removed (RemoveInputs + Simulate).
SimulationSummary ForwardZtcf(const Model& model,
                              const InitialState& x,
                              const Eigen::VectorXd& params,
                              const SimulationOptions& options,
                              const std::vector<std::string>& channels,
                              Observer* observer = nullptr);

/// The original future and a zero-input branch from the same state,
/// sampled at the same times.
struct BranchedCounterfactual {
  double t_branch = 0.0;
  std::vector<std::string> channels;  ///< removed (all channels if empty)
  SimulationSummary original, counterfactual;
  std::vector<Sample> original_samples, counterfactual_samples;
  /// Samples at the same times in both (the shorter run bounds it).
  int common_samples = 0;
  double max_position_difference = 0.0;  ///< max over samples of |dq|_inf
  double max_velocity_difference = 0.0;  ///< max over samples of |dv|_inf
  /// E_cf - E_original at the last common sample [J].
  double final_energy_difference = 0.0;
};

/// Branched ZTCF from the achieved state (q, v) at time t_branch: both the
/// original and the branch with `channels` removed are integrated from
/// that same state to options.t_end with the same options (so both start
/// with the same consistent initialization), and compared sample by
/// sample. Each branch solves its own reactions.
/// @throws std::invalid_argument for an unknown channel or t_branch not
/// before options.t_end.
BranchedCounterfactual BranchedZtcf(const Model& model,
                                    const Eigen::VectorXd& params,
                                    const SimulationOptions& options,
                                    double t_branch,
                                    const Eigen::VectorXd& q,
                                    const Eigen::VectorXd& v,
                                    const std::vector<std::string>& channels);

/// Branched ZTCF from an initial state: integrates the original from x0 at
/// options.t0 to t_branch first, then branches there.
/// @throws std::invalid_argument when t_branch is outside
/// [options.t0, options.t_end); std::runtime_error when the original run
/// fails before reaching it.
BranchedCounterfactual BranchedZtcfFrom(
    const Model& model,
    const InitialState& x0,
    const Eigen::VectorXd& params,
    const SimulationOptions& options,
    double t_branch,
    const std::vector<std::string>& channels);

struct ZvcfOptions {
  /// Admissibility of the reset v = 0: every row must satisfy
  /// |J 0 + Phi_t| <= tol (velocity units of the constraint). Phi_t comes
  /// from AD, so a stationary constraint gives exactly 0; 1e-12 only
  /// absorbs round-off in a user's time function that should cancel.
  double admissibility_tol = 1e-12;
  KktOptions kkt;
};

/// Instantaneous zero-velocity counterfactual at configuration q and time t
/// (seed 003): every velocity and every input set to zero, configuration,
/// parameters and constraints retained; the acceleration is
/// a = -M^-1 h(z, 0) without constraints, or the KKT solution at the reset
/// state with them. Undefined (defined = false, a reason, no numbers) when
/// the reset violates a velocity-level constraint J v + Phi_t = 0, as a
/// moving constraint (Phi_t != 0) or a nonholonomic one with a != 0 does.
struct ZvcfResult {
  bool defined = false;
  std::string reason;  ///< why the reset is inadmissible
  double t = 0.0;
  Eigen::VectorXd q;             ///< nq
  Eigen::VectorXd vdot;          ///< nv: the ZVCF acceleration
  Eigen::VectorXd lambda;        ///< nc: reactions at the reset state
  Eigen::VectorXd holding_load;  ///< nv: +h(z, 0), formal holding load
  Eigen::VectorXd drift_load;    ///< nv: -h(z, 0), signed drift load
};

ZvcfResult InstantaneousZvcf(const Model& model,
                             const Eigen::VectorXd& params,
                             double t,
                             const Eigen::VectorXd& q,
                             const ZvcfOptions& options = ZvcfOptions());

/// A counterfactual requested by name (the --counterfactual flag):
///   pointwise-ztcf[:CH[+CH...]]@T|all,  ztcf[:CH[+CH...]]@T  (branched;
///   alias branched-ztcf),  zvcf@T|all.
struct CounterfactualRequest {
  enum class Kind { kPointwiseZtcf, kBranchedZtcf, kZvcf };
  Kind kind = Kind::kBranchedZtcf;
  std::vector<std::string> channels;  ///< empty: all channels
  bool all_samples = false;           ///< "@all" (pointwise kinds only)
  double t = 0.0;
  std::string spec;  ///< the text as given
};
const char* ToString(CounterfactualRequest::Kind kind);

/// Parses one --counterfactual value for `model`.
/// @throws std::invalid_argument naming the bad part and the valid forms,
/// or the unknown channel and the valid channels.
CounterfactualRequest ParseCounterfactual(const Model& model,
                                          const std::string& spec);

// ======================================================== momentum balance

/// A symmetry generator xi(q) (nv rows), written as a generic lambda of a
/// Point x like every model function, e.g. for a planar rotation in polar
/// coordinates (r, phi): [](const auto& x) { VecX<Scalar<decltype(x)>>
/// xi(2); xi << 0.0, 1.0; return xi; }.
class SymmetryGenerator {
 public:
  template <class F>
  SymmetryGenerator(std::string name, F xi)
      : name_(std::move(name)), fn_(internal::MakeVectorFn1(std::move(xi))) {}

  /// The generator e_i of coordinate i (cyclic-coordinate momentum p_i).
  static SymmetryGenerator Coordinate(const Model& model, int i);

  const std::string& name() const { return name_; }
  const internal::VectorFn& fn() const { return fn_; }

 private:
  std::string name_;
  internal::VectorFn fn_;
};

/// Noether's balance at one sample: I = p' xi, its rate Idot by AD along
/// (qdot = v, vdot = the sample's acceleration, tdot = 1), the projected
/// applied force Q' xi (Q = B u - D v + Q_r) and reaction (J' lambda)' xi.
/// The invariance defect L_q' xi + p' Dxi v vanishes exactly when xi is a
/// symmetry of L, and then Idot = Q' xi + (J' lambda)' xi; the reactions
/// drop out when xi is admissible (J xi = 0).
struct MomentumSample {
  double t = 0.0;
  double I = 0.0;
  double I_rate = 0.0;
  double applied = 0.0;            ///< Q' xi
  double reaction = 0.0;           ///< (J' lambda)' xi
  double invariance_defect = 0.0;  ///< L_q' xi + p' Dxi v
  double admissibility = 0.0;      ///< |J xi|_inf
  /// Idot - Q' xi: the balance the seed states; zero when xi is an
  /// admissible symmetry.
  double balance_residual = 0.0;
};

struct MomentumBalanceReport {
  std::string generator;
  std::vector<MomentumSample> samples;
  double I_initial = 0.0, I_final = 0.0;
  /// Trapezoidal integral of Q' xi over the samples (second order in the
  /// output step; exact for a piecewise-linear Q' xi).
  double impulse = 0.0;
  double max_balance_residual = 0.0;
  double max_invariance_defect = 0.0;
  double max_admissibility = 0.0;
};

/// Evaluates the momentum balance of generator `xi` along `samples` (a
/// run's output; each sample's q, v, vdot, lambda and t are used).
MomentumBalanceReport MomentumBalance(const Model& model,
                                      const Eigen::VectorXd& params,
                                      const std::vector<Sample>& samples,
                                      const SymmetryGenerator& xi);

/// Coordinates on which the Lagrangian does not depend: dL/dq_i == 0
/// exactly (by AD) at every state in `states` (each sample's t, q, v).
/// External forces do not enter: a cyclic coordinate's momentum obeys
/// pdot_i = Q_i (plus its reaction).
std::vector<int> CyclicCoordinates(const Model& model,
                                   const Eigen::VectorXd& params,
                                   const std::vector<Sample>& states);

/// Same, at `count` states drawn around (t, q, v) with each component
/// perturbed uniformly by up to `spread` (std::mt19937 seeded with `seed`).
std::vector<int> CyclicCoordinatesNear(const Model& model,
                                       const Eigen::VectorXd& params,
                                       double t,
                                       const Eigen::VectorXd& q,
                                       const Eigen::VectorXd& v,
                                       int count = 8,
                                       double spread = 0.1,
                                       unsigned seed = 7);

}  // namespace daedalus
