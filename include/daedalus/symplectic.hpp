// Structure-preserving fixed-step schemes (seed 000; docs/analysis.md):
//
//   stormer-verlet    separable H = p'M^-1 p/2 + V(q, t), M constant:
//                     p_1/2 = p_0 - h/2 dV(q_0),  q_1 = q_0 + h M^-1 p_1/2,
//                     p_1 = p_1/2 - h/2 dV(q_1)            (second order)
//   symplectic-euler  any regular L(q, v, t), H by the Legendre transform,
//                     the implicit variant
//                     p_1 = p_0 - h H_q(q_0, p_1),  q_1 = q_0 + h H_p(q_0, p_1)
//                     solved by Newton with AD derivatives (first order)
//   rattle            Stormer-Verlet with stationary holonomic constraints
//                     Phi(q) = 0 enforced at every step on positions and
//                     velocities (second order)
//
// Applied forces Q(t, q) = B u + Q_r enter as kicks (they must not depend
// on v). Dissipation, velocity-dependent inputs, nonholonomic constraints
// and, for RATTLE, moving constraints do not fit these schemes and are
// rejected with a message. Energy is not conserved exactly: a symplectic
// map keeps the energy error bounded (oscillating, no secular drift) for
// small enough steps; AnalyzeEnergy quantifies that along a run.
//
// p = dL/dv throughout (the model's momenta, Workspace::momentum).
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// A point of phase space: coordinates q (nq) and momenta p (nv).
struct CanonicalState {
  Eigen::VectorXd q, p;
};

/// Which momentum the symplectic Euler force is evaluated with.
enum class EulerMomentum {
  kNew,  ///< H_q(q_0, p_1): implicit, symplectic (the scheme proper)
  kOld,  ///< H_q(q_0, p_0): explicit, NOT symplectic; for comparison only
};

/// One symplectic Euler step of size h from (q_0, p_0) at time t.
/// @throws std::runtime_error when the Newton solve fails (no regular
/// solution on the branch continuous from h = 0, typically h too large).
CanonicalState SymplecticEulerStep(const Model& model,
                                   const Eigen::VectorXd& params,
                                   double t,
                                   double h,
                                   const CanonicalState& x,
                                   EulerMomentum variant = EulerMomentum::kNew);

/// Jacobian d(q_1, p_1)/d(q_0, p_0) (2n x 2n) of that step, by forward-mode
/// AD through the step itself, Newton solves included (their tangents are
/// iterated to convergence with the value).
Eigen::MatrixXd SymplecticEulerStepJacobian(
    const Model& model,
    const Eigen::VectorXd& params,
    double t,
    double h,
    const CanonicalState& x,
    EulerMomentum variant = EulerMomentum::kNew);

/// p = dL/dv at (t, q, v).
Eigen::VectorXd MomentumAt(const Model& model,
                           const Eigen::VectorXd& params,
                           double t,
                           const Eigen::VectorXd& q,
                           const Eigen::VectorXd& v);

/// v with dL/dv(t, q, v) = p, by Newton on the mass matrix.
Eigen::VectorXd VelocityAt(const Model& model,
                           const Eigen::VectorXd& params,
                           double t,
                           const Eigen::VectorXd& q,
                           const Eigen::VectorXd& p);

/// True when `integrator` (one of the three schemes) fits `model` at the
/// state (t, q, v); otherwise `why` names what does not fit and what to
/// use instead.
bool SchemeFits(const Model& model,
                Integrator integrator,
                const Eigen::VectorXd& params,
                double t,
                const Eigen::VectorXd& q,
                const Eigen::VectorXd& v,
                std::string* why);

/// Long-time energy behaviour of a run, from its samples' energy residual
/// e(t) = E - E0 - work (the energy error for a conservative model).
struct EnergyBehaviour {
  double max_error = 0.0;    ///< max |e| over the run [J]
  double early_max = 0.0;    ///< max |e| over the first `window` of samples
  double late_max = 0.0;     ///< max |e| over the last `window`
  double drift_rate = 0.0;   ///< least-squares slope of e(t) [W]
  double final_error = 0.0;  ///< e at the last sample
  /// late_max / early_max: about 1 for a bounded, oscillating error, growing
  /// with the run length for a secular drift.
  double growth() const { return early_max > 0.0 ? late_max / early_max : 0.0; }
};
EnergyBehaviour AnalyzeEnergy(const std::vector<Sample>& samples,
                              double window = 0.1);

}  // namespace daedalus
