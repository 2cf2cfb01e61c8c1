// Staged evaluation of a model's equations of motion at one state.
//
// Stages (each requires the previous one at the same state):
//   1. EvaluatePosition:  Phi, J, Phi_t           (constraints at (q, t))
//   2. EvaluateVelocity:  bias b, velocity residual J v + Phi_t
//   3. EvaluateDynamics:  M, h, B u, D v, Q_r, energy, momenta
// The equation of motion is  M vdot + h = B u + J' lambda  with
//   h = (L_vq v + L_vt - L_q) + D v - Q_r          (docs/conventions.md).
// All buffers live in a Workspace sized once from the Model.
#pragma once

#include <Eigen/Core>
#include <array>
#include <string>
#include <vector>

#include "daedalus/model.hpp"

namespace daedalus {

namespace internal {
struct StageProgram;  // src/eval/compiled_model.hpp
}

/// Stage the workspace last completed, in order.
enum class Stage { kNone = 0, kPosition = 1, kVelocity = 2, kDynamics = 3 };

/// What one evaluation must produce; the default is everything. A partial
/// evaluation leaves what it skips NaN, and one that skips dynamics outputs
/// leaves the workspace at Stage::kVelocity, so that consumers of the full
/// dynamics (a KKT solve, a projection) refuse it.
struct EvalRequest {
  /// Stage 2's acceleration bias b (one second-order sweep per
  /// constraint). The GGL and index-3 residuals and the power quadratures
  /// do not read it; J v + Phi_t is always computed.
  bool bias = true;
  enum class Dynamics {
    kFull,      ///< M, h, inertial, momenta, energies, forces
    kResidual,  ///< Mvdot_h = M vdot + h for `vdot`, without forming M;
                ///< momenta, energies, forces
    kForces,    ///< energies, L_q, L_t and forces only
  };
  Dynamics dynamics = Dynamics::kFull;
  /// nv accelerations for kResidual (not owned).
  const double* vdot = nullptr;
};

/// A slipping friction row (docs/friction.md; BasicWorkspace::slip): its
/// model row, the normal row of its contact, the other row of a 3D cone
/// (or -1), mu_kinetic and the slip direction sigma (+-1 for a planar
/// row; for a cone's, v_t,row / |v_t| set by the velocity stage while
/// v_t . d > 0, d = (d_row, d_partner) the direction at the slip's onset,
/// else d_row: the force does not flip where the slip stops, whose
/// witness is v_t . d). `mu_param`: the model parameter mu is read from
/// (ContactLaw::mu_kinetic_parameter), or -1; the tangent of the KKT
/// solution then carries d mu (sensitivities, tangent_kkt.hpp).
struct SlipRow {
  int row = -1, normal = -1, partner = -1;
  double mu = 0.0, sigma = 1.0;
  double d_row = 0.0, d_partner = 0.0;
  int mu_param = -1;
};

/// Mutable scratch for one thread and one Model. Sized at construction; no
/// allocation in the evaluation stages for models whose user functions do
/// not allocate.
///
/// S is the base scalar: `double` for values (Workspace), or `D1` for the
/// tangent (linearization) of every quantity along one direction
/// (TangentWorkspace): seed q, v, t and p with tangents (dq, dv, dt, dp) and
/// every output carries its exact directional derivative in `.d`. Exact
/// Jacobians of the DAE residual and sensitivity residuals are built from
/// it (docs/formulations.md).
template <class S>
class BasicWorkspace {
 public:
  using Scalar = S;
  using Vec = VecX<S>;
  using Mat = MatX<S>;
  using T1 = Dual<S>;        // one structural tangent on top of S
  using T2 = Dual<Dual<S>>;  // two structural tangents on top of S

  explicit BasicWorkspace(const Model& model);

  const Model& model() const { return model_; }
  Stage stage() const { return stage_; }

  // ---- inputs (set by SetState)
  S t = S(0.0);
  Vec q;  // nq
  Vec v;  // nv
  Vec p;  // np parameters
  /// The q the model's functions receive: q with each quaternion
  /// normalized (a copy only for a model with quaternions; see user_q()).
  Vec qn;
  const Vec& user_q() const { return model_.quaternions().empty() ? q : qn; }
  /// Recomputes qn after q was written directly (SetState does it).
  void UpdateUserQ();

  // ---- stage 1: position kinematics
  Vec phi;    // nc: Phi(q,t) rows; 0 for nonholonomic rows
  Mat J;      // nc x nv: constraint Jacobian (A for nonholonomic)
  Vec phi_t;  // nc: Phi_t, or a(q,t) for nonholonomic rows

  // ---- stage 2: velocity kinematics
  Vec vel_residual;  // nc: J v + Phi_t (A v + a)
  Vec bias;          // nc: b with  J vdot + b = 0

  // ---- stage 3: dynamics
  Mat M;               // nv x nv: mass matrix
  Vec h;               // nv: M vdot + h = B u + J' lambda
  Vec inertial;        // nv: L_vq v + L_vt - L_q (no forces)
  Vec Bu;              // nv: sum_k B_k u_k
  Mat B;               // nv x nu: input columns
  Vec u;               // nu: input values
  Vec Dv;              // nv: damping force magnitude D v
  Mat D;               // nv x nv: damping matrix
  Vec Qr;              // nv: other loads
  Vec momentum;        // nv: p = dL/dv
  Vec Mvdot_h;         // nv: M vdot + h (EvalRequest::Dynamics::kResidual)
  S lagrangian = 0.0;  // L
  S energy = 0.0;      // E = v'p - L
  S kinetic = 0.0;     // T (NaN when the model gives only L)
  S potential = 0.0;   // V (NaN when the model gives only L)
  S L_t = 0.0;         // explicit time derivative of L

  /// Sets the state and invalidates all stages.
  void SetState(const S& time,
                const Eigen::Ref<const Vec>& q_in,
                const Eigen::Ref<const Vec>& v_in);
  /// Sets the parameters (np) and invalidates all stages.
  void SetParameters(const Eigen::Ref<const Vec>& params);

  void MarkStage(Stage s) { stage_ = s; }
  void Require(Stage s, const char* who) const;

  /// Forces the single-direction sweeps (one structural direction per call
  /// of a user function) instead of the multi-direction ones: the reference
  /// path for tests and for debugging a model.
  bool single_direction = false;

  /// Evaluates with the model's compiled programs when it has them (value
  /// workspace only; sym.hpp, docs/conventions.md "Compiled evaluation");
  /// false forces the dual-number path. Both give the same numbers to
  /// round-off.
  bool use_compiled = true;

  /// Rows of open unilateral contacts (contact.hpp, docs/contact.md): the
  /// stages leave their Phi, J, Phi_t, J v + Phi_t and b at zero, and the
  /// KKT solve gives them lambda = 0. Empty: every row is a constraint.
  std::vector<int> open_rows;
  /// Slipping friction rows (docs/friction.md), each also in open_rows:
  /// the stages keep its J row (so that J' lambda holds the friction
  /// force), and the KKT solve replaces its equation by lambda_row =
  /// -mu sigma lambda_normal. A cone's two rows name each other as
  /// `partner`: sigma is then the slip direction v_t / |v_t|, set by the
  /// velocity stage; a planar row keeps the sigma (+-1) its switch set.
  std::vector<SlipRow> slip;

  // ---- SeedTangent's record (internal): the parameter values that p, p1,
  // p2, pm1 and pm2 hold, and the entries seeded with a nonzero tangent, so
  // that seeding again at the same values rewrites those entries only (a
  // sensitivity sweep seeds once per parameter: O(np) each, not O(np^2)).
  Eigen::VectorXd seeded_p;
  std::vector<Eigen::Index> seeded_nonzero;
  bool seeded = false;

  // ---- AD scratch (internal use)
  VecX<T1> q1, v1, p1, out1;
  VecX<T2> q2, v2, p2, out2;
  // Chart coordinates (nv; src/eval/chart.hpp): the structural tangents
  // are seeded on them, and q1 .. qm2 are the user's q at them.
  VecX<T1> xi1;
  VecX<T2> xi2;
  // Multi-direction sweeps: kSweepWidth structural directions over S
  // (dual.hpp's M1, M2 for S = double; TM1, TM2 for S = D1).
  using W1 = Dual<S, Tangent<kSweepWidth, S>>;
  using W2 = Dual<W1>;
  VecX<W1> qm1, vm1, pm1, outm1, xim1;
  VecX<W2> qm2, vm2, pm2, xim2;
  Vec out0;
  Mat mat0;
  // Compiled evaluation: the stage programs this workspace has used (owned
  // by the model), their scratch arrays, and the input/output buffers.
  std::array<const internal::StageProgram*, 7> compiled_stage{};
  std::array<std::vector<double>, 7> compiled_scratch;
  std::vector<double> compiled_in, compiled_out;

 private:
  Model model_;
  Stage stage_ = Stage::kNone;
};

using Workspace = BasicWorkspace<double>;
using TangentWorkspace = BasicWorkspace<D1>;

extern template class BasicWorkspace<double>;
extern template class BasicWorkspace<D1>;

/// Stage 1: Phi, J and Phi_t at (t, q). @throws std::runtime_error when a
/// constraint function returns the wrong number of rows or a non-finite
/// value (naming the constraint, the time and the state).
template <class S>
void EvaluatePosition(BasicWorkspace<S>* ws);
/// Stage 2: J v + Phi_t and the acceleration bias b.
template <class S>
void EvaluateVelocity(BasicWorkspace<S>* ws, const EvalRequest& req = {});
/// Stage 3: mass matrix, bias forces, inputs, damping, loads, energy.
/// Partial requests (kResidual, kForces) are for the value workspace only.
template <class S>
void EvaluateDynamics(BasicWorkspace<S>* ws, const EvalRequest& req = {});
/// All three stages.
template <class S>
void EvaluateAll(BasicWorkspace<S>* ws, const EvalRequest& req = {});

/// Whether the model has an O(nv) forward route (InertialFn::forward) that
/// EvaluateForward can use: no constraints, recursive multibody dynamics.
bool HasForwardDynamics(const Model& model);
/// The accelerations at the state set in `ws` without forming M: stages 1
/// and 2 (without the bias), the forces (B u, D v, Q_r) and vdot = M^-1
/// (B u - h) by the model's forward route into *vdot (nv). With `energies`
/// also the kinetic and potential energy and `energy` (the kinetic energy
/// from the body velocities, the potential by the model's potential
/// terms); else they are NaN. h, inertial and the momenta are left NaN, M
/// is not updated, and the workspace is at Stage::kVelocity (a KKT solve
/// refuses it).
/// @throws std::logic_error without a forward route (HasForwardDynamics).
void EvaluateForward(Workspace* ws, bool energies, Eigen::VectorXd* vdot);

/// Seeds a tangent workspace at the value state (t, q, v, p) of `ws` with
/// tangents (dq, dv), parameter tangent dp (np; empty for zero) and time
/// tangent dt (along the motion, (dq, dv, dt) = (q', v', 1) gives the
/// time derivatives of every output).
void SeedTangent(const Workspace& ws,
                 const Eigen::Ref<const Eigen::VectorXd>& dq,
                 const Eigen::Ref<const Eigen::VectorXd>& dv,
                 const Eigen::Ref<const Eigen::VectorXd>& dp,
                 TangentWorkspace* tws,
                 double dt = 0.0);

/// Directional derivative of the energy E = v'L_v - L with respect to q
/// along dq (nq) at the workspace state, holding v and t: E_q . dq. Used for
/// the power of the GGL position correction qdot = v - G' mu.
template <class S>
S EnergyDerivativeAlongQ(BasicWorkspace<S>* ws, const VecX<S>& dq);

/// Whether `model` is evaluated by compiled programs (sym.hpp): its
/// functions were recorded as one expression graph. When not, `why_not`
/// says why (a function that branches on a value, reads a parameter's
/// value, or a graph too large). Records the model on first call.
bool IsCompiled(const Model& model, std::string* why_not = nullptr);

/// Describes the workspace state for error messages: "t=0.5, q=(..), v=(..)".
template <class S>
std::string DescribeState(const BasicWorkspace<S>& ws);

}  // namespace daedalus
