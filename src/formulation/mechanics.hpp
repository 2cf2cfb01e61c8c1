// The mechanics a formulation is stated on (docs/architecture.md): one
// model evaluator, dense (Workspace: compiled programs or dual numbers) or
// sparse (SparseWorkspace: per-body sweeps, sparse KKT solvers), with the
// KKT solve, the projections onto the constraint manifold, the exact
// tangents and the KKT health that go with it.
//
// The formulations (ode_form.hpp, dae_form.hpp) and the monitors
// (monitor/recorder.hpp) read a run's state only through this interface,
// so that every formulation, feature and diagnostic runs on both
// evaluators. The equations themselves are stated once, in equations.hpp;
// each implementation instantiates them for its workspace type.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/projection.hpp"
#include "daedalus/sensitivity.hpp"
#include "daedalus/simulate.hpp"
#include "formulation/equations.hpp"

namespace daedalus::internal {

class CompiledModel;

/// KKT health at one state (docs/diagnostics.md, "KKT health").
struct KktHealthSample {
  /// Reciprocal condition of the Jacobi-scaled J M^-1 J' (1: perfect,
  /// 0: singular).
  double rcond = 1.0;
  int rank_J = 0;  ///< numerical rank of J
  /// Smallest eigenvalue of the unscaled J M^-1 J' (with details only).
  double sigma_min = 0.0;
  /// The rows that take part in the near-dependence: the large components
  /// (above 0.3) of the scaled complement's smallest eigenvector (with
  /// details only).
  std::vector<int> weak_rows;
};

/// Exact linearization of the consistent start along one sensitivity
/// parameter (sensitivity/forward.hpp).
struct InitialSensitivity {
  Eigen::VectorXd dq, dv, dvdot, dlambda;
};

/// A Newton preconditioner for CVODES BDF with a Krylov linear solver (the
/// sparse evaluator's: formulation/sparse_newton.hpp).
class NewtonPreconditioner {
 public:
  virtual ~NewtonPreconditioner() = default;
  /// The Jacobian blocks at (t, q, v) with that state's accelerations a and
  /// multipliers lambda; `dependent` are the rows the KKT solve found
  /// redundant.
  virtual void Update(double t,
                      const Eigen::VectorXd& q,
                      const Eigen::VectorXd& v,
                      const Eigen::VectorXd& a,
                      const Eigen::VectorXd& lambda) = 0;
  virtual void SetDependentRows(const std::vector<int>& rows) = 0;
  /// Factors I - gamma df/dy; false when singular.
  virtual bool Factor(double gamma) = 0;
  /// z = P^-1 r on (q, v) (nq + nv entries).
  virtual void Solve(const Eigen::Ref<const Eigen::VectorXd>& r,
                     Eigen::Ref<Eigen::VectorXd> z) = 0;
};

/// Evaluation, KKT solve, projection and tangents at one state of one run.
/// Not thread-safe: one per run.
class Mechanics {
 public:
  explicit Mechanics(const Model& model);
  virtual ~Mechanics();
  Mechanics(const Mechanics&) = delete;
  Mechanics& operator=(const Mechanics&) = delete;

  const Model& model() const { return model_; }
  const ConstraintRows& rows() const { return rows_; }
  int nq() const { return model_.nq(); }
  int nv() const { return model_.nv(); }
  int nc() const { return model_.nc(); }
  /// True for the sparse evaluator and KKT solvers.
  virtual bool sparse() const = 0;
  /// The compiled evaluator of the dense path (nullptr: dual numbers, or
  /// the sparse path).
  virtual const CompiledModel* compiled() const { return nullptr; }

  // ---- parameters and state
  virtual void SetParameters(const Eigen::VectorXd& p) = 0;
  virtual const Eigen::VectorXd& parameters() const = 0;
  /// Sets (t, q, v) without evaluating (for tangents seeded there).
  virtual void SetState(double t, const double* q, const double* v) = 0;
  /// Sets (t, q, v) and evaluates the stages `req` asks for.
  virtual void Evaluate(double t,
                        const double* q,
                        const double* v,
                        const EvalRequest& req = {}) = 0;
  void Evaluate(double t,
                const Eigen::VectorXd& q,
                const Eigen::VectorXd& v,
                const EvalRequest& req = {}) {
    Evaluate(t, q.data(), v.data(), req);
  }
  /// For a model without constraints that has an O(nv) forward route
  /// (HasForwardDynamics, dynamics.hpp): sets (t, q, v), evaluates the
  /// forces and vdot without forming M (EvaluateForward; energies as
  /// asked) and returns true; false when the evaluator has no such route
  /// (then nothing is evaluated).
  virtual bool Forward(double t,
                       const double* q,
                       const double* v,
                       bool energies,
                       Eigen::VectorXd* vdot) {
    (void)t;
    (void)q;
    (void)v;
    (void)energies;
    (void)vdot;
    return false;
  }
  /// Sets (t, q, v) and evaluates the position stage only (Phi, J, Phi_t).
  virtual void EvaluatePosition(double t,
                                const Eigen::VectorXd& q,
                                const Eigen::VectorXd& v) = 0;

  // ---- the mode (docs/contact.md)
  /// The rows of open unilateral contacts: dropped from Phi, J, b, the KKT
  /// system (their lambda is 0) and the projections until the next call.
  /// The dense evaluator only (the support matrix refuses contact on the
  /// sparse one). Invalidates the evaluated state.
  virtual void SetOpenRows(const std::vector<int>& rows) { open_rows_ = rows; }
  const std::vector<int>& open_rows() const { return open_rows_; }
  /// Slipping friction rows (docs/friction.md; Workspace::slip), each also
  /// an open row: the dense evaluator only (the contact stage runs there).
  virtual void SetSlipRows(const std::vector<SlipRow>& slip) {
    if (!slip.empty())
      throw std::logic_error("SetSlipRows: the dense evaluator only");
  }
  virtual const std::vector<SlipRow>& slip_rows() const {
    static const std::vector<SlipRow> none;
    return none;
  }
  bool is_open(int row) const {
    for (int r : open_rows_)
      if (r == row) return true;
    return false;
  }

  // ---- the evaluated state (after Evaluate)
  virtual double t() const = 0;
  virtual const Eigen::VectorXd& q() const = 0;
  virtual const Eigen::VectorXd& v() const = 0;
  virtual const Eigen::VectorXd& phi() const = 0;           // nc
  virtual const Eigen::VectorXd& vel_residual() const = 0;  // nc
  virtual const Eigen::VectorXd& bias() const = 0;          // nc
  virtual double energy() const = 0;
  /// B u - h: the right-hand side of the KKT system's first row (nv).
  virtual Eigen::VectorXd AppliedForce() const = 0;
  /// The arguments of the user functions at the state.
  virtual Point<double> point() const = 0;
  /// "t=.., q=(..), v=(..)" for messages.
  virtual std::string DescribeState() const = 0;
  /// J v (nc).
  virtual Eigen::VectorXd ConstraintRates() const = 0;
  /// J' lambda (nv).
  virtual Eigen::VectorXd Reaction(const Eigen::VectorXd& lambda) const = 0;

  // ---- the equations (equations.hpp) at the evaluated state
  virtual Eigen::VectorXd StabilizedBias(Formulation f,
                                         double alpha,
                                         double beta) const = 0;
  virtual void Integrands(const QuadLayout& L,
                          const Eigen::Ref<const Eigen::VectorXd>& lambda,
                          double stabilization_power,
                          Eigen::Ref<Eigen::VectorXd> out) const = 0;
  /// Integrands with Baumgarte's split: reported multipliers `lambda`,
  /// stabilization power (applied - lambda)' J v. The sparse path
  /// overrides it to form J v once.
  virtual void IntegrandsSplit(const QuadLayout& L,
                               const Eigen::VectorXd& lambda,
                               const Eigen::VectorXd& applied,
                               Eigen::Ref<Eigen::VectorXd> out) {
    Integrands(L, lambda, (applied - lambda).dot(ConstraintRates()), out);
  }
  /// F(t, y, yp) of the DAE forms, evaluated here (EvalRequest as the
  /// layout needs).
  virtual void DaeResidual(const DaeLayout& L,
                           double t,
                           const double* y,
                           const double* yp,
                           double* F) = 0;
  /// G' mu of the GGL position correction at the evaluated state, for the
  /// unknowns y of layout L.
  virtual Eigen::VectorXd GtMu(const DaeLayout& L, const double* y) const = 0;
  /// E_q . dq at the state (the power of a position correction).
  virtual double EnergyAlongQ(const Eigen::VectorXd& dq) = 0;

  // ---- KKT (docs/conventions.md)
  /// Solves at the evaluated state with the constraint right-hand side
  /// `bias` (nc). @throws KktError.
  virtual void SolveKkt(const Eigen::VectorXd& bias, KktResult* r) = 0;
  /// The same system as the last SolveKkt (same state) with another bias:
  /// reuses its factorizations where the solver can.
  virtual void ResolveKkt(const Eigen::VectorXd& bias, KktResult* r) = 0;
  /// The multipliers of the same system with the model's own bias (the
  /// ideal ones of a Baumgarte run) into ideal->lambda, given the last
  /// solve `applied` with `applied_bias`. The default resolves the whole
  /// system into `ideal` (the dense path); the sparse path shifts
  /// `applied.lambda` by one solve with the factor of J M^-1 J'
  /// (SparseKktSolver::MultiplierChange) and fills the multipliers only.
  virtual void IdealMultipliers(const Eigen::VectorXd& applied_bias,
                                const KktResult& applied,
                                KktResult* ideal) {
    (void)applied_bias;
    (void)applied;
    ResolveKkt(bias(), ideal);
  }
  /// Rows the last solve found redundant.
  virtual const std::vector<int>& dependent_rows() const = 0;
  /// M x = rhs with the mass factorization of the last KKT solve.
  virtual void SolveMass(const Eigen::VectorXd& rhs, Eigen::VectorXd* x) = 0;
  /// M and J at the evaluated state, dense (for the fixed-step schemes).
  virtual Eigen::MatrixXd DenseMass() const = 0;
  virtual Eigen::MatrixXd DenseJacobian() const = 0;
  /// Rows `rows` of J at the evaluated state into *out (rows.size() x
  /// nv), without copying the whole of J (Moreau-Jean's active rows of a
  /// scene with thousands of contacts).
  virtual void JacobianRows(const std::vector<int>& rows,
                            Eigen::MatrixXd* out) const {
    const Eigen::MatrixXd J = DenseJacobian();
    out->resize(static_cast<Eigen::Index>(rows.size()), J.cols());
    for (size_t i = 0; i < rows.size(); ++i)
      out->row(static_cast<Eigen::Index>(i)) = J.row(rows[i]);
  }

  // ---- projection onto the constraint manifold (docs/formulations.md)
  virtual ProjectionResult ProjectPositions(double t,
                                            Eigen::VectorXd* q,
                                            const Eigen::VectorXd& v,
                                            double tol,
                                            int max_iter) = 0;
  virtual ProjectionResult ProjectVelocities(double t,
                                             const Eigen::VectorXd& q,
                                             Eigen::VectorXd* v) = 0;
  /// Removes from a local error estimate (eq, ev) its components normal to
  /// the manifold at the evaluated state, in the mass metric (CVODES's
  /// error projection, as cvsPendulum_dns does).
  virtual void ProjectErrorEstimate(Eigen::Ref<Eigen::VectorXd> eq,
                                    Eigen::Ref<Eigen::VectorXd> ev) = 0;

  // ---- exact tangents (sensitivities, Jacobians; docs/sensitivities.md)
  /// Seeds the tangent workspace at the state of the last SetState or
  /// Evaluate with (dq, dv, dp) (dp empty: zero) and the time tangent dt,
  /// and evaluates it.
  virtual TangentWorkspace& Tangent(const Eigen::Ref<const Eigen::VectorXd>& dq,
                                    const Eigen::Ref<const Eigen::VectorXd>& dv,
                                    const Eigen::VectorXd& dp,
                                    const EvalRequest& req = {},
                                    double dt = 0.0) = 0;
  /// Factors the linearized KKT matrix [M -J'; J 0] at the evaluated state
  /// (tangent_kkt.hpp).
  virtual void FactorTangentKkt() = 0;
  /// The tangents (dvdot, dlambda) of the KKT solution (vdot, lambda) at
  /// the factored state, from a tangent workspace evaluated along a
  /// direction and the tangent of the constraint right-hand side `bias`.
  virtual void SolveTangentKkt(const TangentWorkspace& tws,
                               const VecX<D1>& bias,
                               const Eigen::VectorXd& vdot,
                               const Eigen::VectorXd& lambda,
                               Eigen::VectorXd* dvdot,
                               Eigen::VectorXd* dlambda) = 0;
  /// Linearizes the consistent start (evaluated here, with accelerations
  /// `vdot` and multipliers `lambda`) along one sensitivity parameter.
  virtual InitialSensitivity LinearizeStart(
      const Eigen::VectorXd& vdot,
      const Eigen::VectorXd& lambda,
      const SensParameter& sp,
      const Eigen::MatrixXd& initial_tangent) = 0;
  /// Linearizes the consistent state evaluated here along a direction
  /// (dq0 (nq), dv0 (nv), dp (np)): its projection onto the linearized
  /// manifold and the KKT solution's tangent (a restart after a reset).
  virtual InitialSensitivity LinearizeRestart(const Eigen::VectorXd& vdot,
                                              const Eigen::VectorXd& lambda,
                                              const Eigen::VectorXd& dq0,
                                              const Eigen::VectorXd& dv0,
                                              const Eigen::VectorXd& dp) = 0;

  // ---- diagnostics
  /// KKT health at the evaluated state; `details` adds sigma_min and the
  /// weak rows.
  virtual KktHealthSample Health(bool details) = 0;

  /// The sparse evaluator's Newton preconditioner for CVODES BDF; nullptr
  /// on the dense path (CVODES then factors its own dense Newton matrix).
  /// `bias` writes the formulation's stabilized bias at the evaluated state.
  virtual std::unique_ptr<NewtonPreconditioner> MakeNewtonPreconditioner(
      std::function<void(Eigen::VectorXd*)> bias) {
    (void)bias;
    return nullptr;
  }

 protected:
  std::vector<int> open_rows_;

 private:
  Model model_;
  ConstraintRows rows_;
};

/// The mechanics of a run: the sparse evaluator when `sparse`, else the
/// dense one (compiled when options.compiled and the model allow).
std::unique_ptr<Mechanics> MakeMechanics(const Model& model,
                                         const SimulationOptions& options,
                                         bool sparse);

/// The KKT health of a dense M (nv x nv) and J (nc x nv): eigenvalues of
/// the Jacobi-scaled J M^-1 J', and the rank of J by SVD when the
/// complement is near singular (shared by both evaluators).
KktHealthSample DenseKktHealth(const Eigen::MatrixXd& M,
                               const Eigen::MatrixXd& J,
                               bool details);

}  // namespace daedalus::internal
