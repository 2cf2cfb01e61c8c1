// The ODE forms (docs/formulations.md): unstabilized and Baumgarte index 1,
// and projection, on y = (q, v) with y' = (v, vdot) and vdot from one KKT
// solve per evaluation. What the CVODES adapter, the adjoint and the
// drift contract need from them: the right-hand side, its exact tangents
// and Jacobian, the projection step, the energy-balance integrands, the
// root functions and the multipliers to report; all through a Mechanics,
// dense or sparse.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <utility>
#include <vector>

#include "daedalus/simulate.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

class RootSet;

class OdeForm {
 public:
  /// `options.formulation` must be unstabilized, baumgarte or projection.
  OdeForm(Mechanics* mech, const SimulationOptions& options);

  Mechanics& mech() { return *mech_; }
  Formulation kind() const { return kind_; }
  int nq() const { return nq_; }
  int nv() const { return nv_; }
  int nc() const { return nc_; }
  const QuadLayout& layout() const { return layout_; }

  /// SUNDIALS's difference-quotient sensitivities perturb the parameter
  /// array `p` in place; the evaluations then read it (nullptr: off).
  void set_dq_parameters(const Eigen::VectorXd* p) { dq_params_ = p; }

  // ---- the right-hand side
  /// Evaluates at (t, y) and solves the KKT system with the formulation's
  /// constraint right-hand side (b, plus the Baumgarte terms).
  /// On the forward route (forward()) without M: the energies only when
  /// `energies` (the quadratures' integrands do not need them).
  void Accelerations(double t, const double* y, bool energies = true);
  /// Whether the right-hand side takes the model's O(nv) forward dynamics
  /// (no constraints, recursive multibody dynamics, no sensitivities)
  /// instead of forming and factoring M; the tangents and Jacobians still
  /// take the KKT path.
  bool forward() const { return forward_; }
  /// The KKT solution of the last Accelerations (applied multipliers).
  const KktResult& applied() const { return r_; }
  /// The multipliers reported at the state of the last Accelerations: the
  /// ideal constraint reactions, the KKT solution with the unmodified bias
  /// b. Baumgarte's applied multiplier also carries the correction
  /// -(J M^-1 J')^-1 (2 alpha (J v + Phi_t) + beta^2 Phi), an artificial
  /// force whose power is stabilization work, not constraint work.
  const Eigen::VectorXd& Reported();
  /// y' = (v, vdot) at (t, y).
  void Rhs(double t, const double* y, double* ydot);

  // ---- energy balance (quadratures)
  /// The integrands of layout() at the state of the last Accelerations.
  void IntegrandsHere(Eigen::Ref<Eigen::VectorXd> out);
  /// The components of layout() that can be nonzero for this model and
  /// formulation (an adapter that integrates the quadratures inside its
  /// state carries only these).
  std::vector<int> LiveQuadratures() const;

  // ---- roots
  void Roots(double t, const double* y, const RootSet& roots, double* g);

  // ---- projection (kind() == kProjection)
  /// Whether the integrator must project: the projection formulation on a
  /// model with constraints or quaternions (whose norm it resets).
  bool projects() const {
    return kind_ == Formulation::kProjection &&
           (nc_ > 0 || !mech_->model().quaternions().empty());
  }
  /// The projection step: corrections (dq, dv) that move y onto the
  /// position and velocity manifolds, and the local error estimate `err`
  /// (may be null) with its normal components removed. Records the energy
  /// change of the step as stabilization work.
  void Project(double t, const double* y, double* corr, double* err);
  /// An output sample of a projection run: CVODES projects every step,
  /// but the state it returns at an output time is interpolated between
  /// two projected steps and drifts by the interpolation error (5e-7 on
  /// the pendulum at rtol 1e-6, against 1e-13 at the steps). Projects
  /// (q, v) of y in place onto the manifolds, with no energy bookkeeping
  /// (the integrator's state is not changed); leaves y as it is when the
  /// position projection does not converge (the drift then shows it).
  void ProjectSample(double t, double* y);
  /// Energy added by projections up to time t (stabilization work).
  double ProjectionWork(double t) const;
  /// The drift contract's escalation: projects (q, v) at t onto the
  /// manifold and switches to projection; false (and `why`) when the
  /// position projection does not converge.
  bool EscalateToProjection(double t,
                            double energy_before,
                            Eigen::VectorXd* q,
                            Eigen::VectorXd* v,
                            std::string* why);

  // ---- exact tangents (forward sensitivities, adjoint)
  /// Evaluates at (t, y) and factors the linearized KKT system for the
  /// applied and the reported solution.
  void PrepareTangents(double t, const double* y);
  /// Along the state direction s = (dq, dv) (nq + nv) and parameter
  /// direction dp (np, or empty): the tangents of vdot, of the applied
  /// multipliers and of the reported ones (either may be null).
  void Tangent(const double* s,
               const Eigen::VectorXd& dp,
               Eigen::VectorXd* dvdot,
               Eigen::VectorXd* dlambda_applied,
               Eigen::VectorXd* dlambda_reported);
  /// The tangent of q' = N(q) v along s = (dq, dv) at the state of the
  /// last PrepareTangents, into `out` (nq): dv when nq = nv; on a
  /// quaternion (dq (x) (0, w) + q (x) (0, dw)) / 2 (eval/chart.hpp,
  /// CoordinateRatesTangent). The position rows of the forward
  /// sensitivities' right-hand side.
  void RateTangent(const double* s, double* out) const;
  /// The tangent of the integrands along the last Tangent's direction.
  void IntegrandTangent(const Eigen::VectorXd& dlambda_applied,
                        const Eigen::VectorXd& dlambda_reported,
                        Eigen::Ref<Eigen::VectorXd> out);
  /// The tangents of the integrands along s = (dq, dv) and dp at (t, y)
  /// without a KKT tangent: the user quadratures' (functions of t, q, v,
  /// p), forward-mode; the energy balance's entries 0 (their
  /// sensitivities are not reported, and their tangents need the
  /// multipliers'). CVODES's quadrature sensitivities (forward runs).
  void UserIntegrandTangent(double t,
                            const double* y,
                            const double* s,
                            const Eigen::VectorXd& dp,
                            Eigen::Ref<Eigen::VectorXd> out) const;
  /// Exact f_y ((nq + nv) x (nq + nv)) at (t, y).
  void StateJacobian(double t, const double* y, Eigen::MatrixXd* fy);

  /// The Newton preconditioner of the sparse evaluator (null on the dense
  /// path, or for Adams).
  NewtonPreconditioner* newton() { return newton_.get(); }
  /// Sets up the preconditioner at (t, y) for gamma (CVODES's psetup):
  /// new Jacobian blocks unless `jok`.
  void PreconditionerSetup(double t, const double* y, bool jok, double gamma);

 private:
  Mechanics* mech_;
  SimulationOptions opt_;
  Formulation kind_;
  int nq_, nv_, nc_;
  QuadLayout layout_;
  KktResult r_, ideal_;
  Eigen::VectorXd applied_bias_;  // the bias of r_'s solve
  bool ideal_valid_ = false;
  TangentWorkspace* tws_ = nullptr;  // of the last Tangent
  const Eigen::VectorXd* dq_params_ = nullptr;
  // Energy changes made by projection steps, by step time (popped when
  // CVODES redoes a step).
  std::vector<std::pair<double, double>> jumps_;
  std::unique_ptr<NewtonPreconditioner> newton_;
  bool split_ = false;    // reported multipliers differ from applied ones
  bool forward_ = false;  // see forward()
  // Accelerations by the KKT path (M formed): for tangents and Jacobians.
  void KktAccelerations(double t, const double* y);
};

}  // namespace daedalus::internal
