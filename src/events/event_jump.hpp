// One event occurrence, linearized: the event time's derivative, the
// reset map and the jump of the sensitivities across it
// (docs/sensitivities.md, "Events" and "Resets").
//
// With y = (q, v) the differential state (n = nq + nv, q raw on
// quaternions), g the event function, y'- and y'+ the flow's rates before
// and after, and a reset (q+, v+) = Delta(t, y-, p):
//
//   dt_e/dp = tau = -(g_y s- + g_p dp) / g',   g' = g_y y'- + g_t,
//   s+ = Delta_y s- + Delta_p dp + (Delta_y y'- + Delta_t - y'+) tau
//      = S s- + R dp,
//   S = Delta_y - w g_y / g',   R = Delta_p - w g_p' / g',
//   w = Delta_y y'- + Delta_t - y'+,
//
// the saltation matrix of Aizerman and Gantmacher (1958) as in Hiskens
// and Pai, "Trajectory sensitivity analysis of hybrid systems", IEEE
// Trans. Circuits Syst. I 47(2), 2000. Without a reset (Delta the
// identity, y'+ = y'-) S = I and R = 0. The restart is projected onto the
// constraints; S and R include that projection's linearization.
#pragma once

#include <Eigen/Core>
#include <string>

#include "daedalus/simulate.hpp"
#include "eval/function_derivatives.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// The differential state of a run at one instant and its rate under the
/// run's formulation (n = nq + nv each).
struct FlowPoint {
  double t = 0.0;
  Eigen::VectorXd y, ydot;
};

class EventJump {
 public:
  /// Linearizes event `event` of `model` at `minus` with parameters p.
  /// @throws std::runtime_error when a derivative is not finite.
  EventJump(const Model& model,
            int event,
            const Eigen::VectorXd& p,
            const FlowPoint& minus);

  /// A jump given already linearized (a mode switch of the contact stage,
  /// contact/contact_stage.cpp): at `minus`, the switching function's
  /// gradient (gy (n), gp (np), gt) and the state map Delta (its value
  /// (n) and Jacobians dq, dv (n x nq, n x nv), dp (n x np), dt (n)).
  /// event() is -1; has_reset() is true (Delta may be the identity).
  EventJump(const FlowPoint& minus,
            Eigen::RowVectorXd gy,
            Eigen::VectorXd gp,
            double gt,
            VectorJacobian delta);

  int event() const { return event_; }
  /// g' = g_y y'- + g_t at the event.
  double rate() const { return rate_; }
  /// The crossing is grazing (|g'| below kGrazing (|g_y| |y'| + |g_t|)):
  /// Tau is not defined.
  bool grazing() const { return grazing_; }
  const Eigen::RowVectorXd& gy() const { return gy_; }  // n
  const Eigen::VectorXd& gp() const { return gp_; }     // np
  double gt() const { return gt_; }
  const FlowPoint& minus() const { return minus_; }
  /// dt_e/dp along one direction: state sensitivity s (n) and parameter
  /// direction dp (np, or empty).
  double Tau(const Eigen::Ref<const Eigen::VectorXd>& s,
             const Eigen::VectorXd& dp) const;

  // ---- the reset map
  bool has_reset() const { return has_reset_; }
  /// Delta(t, y-, p): the state after the reset, before its projection
  /// onto the constraints (n).
  const Eigen::VectorXd& reset_value() const { return delta_.value; }
  /// The saltation matrices, once the restart is consistent: `mech`
  /// evaluated at the projected state after the reset with its KKT
  /// solution `r_plus`, and `plus` that state with its rate.
  void Saltation(Mechanics* mech,
                 const KktResult& r_plus,
                 const FlowPoint& plus);
  const Eigen::MatrixXd& S() const { return S_; }  // n x n
  const Eigen::MatrixXd& R() const { return R_; }  // n x np
  const FlowPoint& plus() const { return plus_; }
  /// s+ = S s- + R dp.
  Eigen::VectorXd After(const Eigen::Ref<const Eigen::VectorXd>& s_minus,
                        const Eigen::VectorXd& dp) const;

 private:
  int event_ = -1;
  FlowPoint minus_, plus_;
  Eigen::RowVectorXd gy_;
  Eigen::VectorXd gp_;
  double gt_ = 0.0, rate_ = 0.0;
  bool grazing_ = false;
  bool has_reset_ = false;
  VectorJacobian delta_;
  Eigen::MatrixXd S_, R_;

  void SetRate();
};

/// The message of a grazing event that a sensitivity cannot pass.
std::string GrazingMessage(const Model& model, const EventJump& jump);

/// Makes the state after a reset consistent at time t: projects (q, v)
/// onto the constraints (positions to `options.initial_projection_tol`,
/// then velocities; quaternions normalized) and reports the corrections'
/// max-norms in `record`. @throws std::runtime_error naming the event, the
/// worst constraint row and its residual when the position projection does
/// not converge.
void MakeRestartConsistent(Mechanics* mech,
                           const SimulationOptions& options,
                           const std::string& event,
                           double t,
                           Eigen::VectorXd* q,
                           Eigen::VectorXd* v,
                           EventRecord* record);

/// The total sensitivities of the reported state (q, v, lambda: rows
/// nq + nv + nc) at an event that ends the run, per direction: the
/// fixed-time sensitivity s (n x ns) plus y' tau, and the tangent of the
/// reported (ideal) multipliers along (s + y' tau, dp, dt = tau). `mech`
/// is evaluated at the event state by the call.
Eigen::MatrixXd TotalSensitivityAtEvent(Mechanics* mech,
                                        const FlowPoint& at,
                                        const Eigen::MatrixXd& s,
                                        const std::vector<Eigen::VectorXd>& dp,
                                        const Eigen::VectorXd& tau);

// ---- adjoints (docs/sensitivities.md, "Adjoints at events")

/// The terminal condition of an adjoint backward pass for the functional
/// G = int L dt + phi at `at` (the end of the run, or an event's state
/// when `event` is not null): mu = dG/dy at fixed p (n = nq + nv) and the
/// direct part of dG/dp per direction, with at an event
///   mu = phi_y' - g_y' c / g',   direct_i = phi_p dp_i - c g_p dp_i / g',
///   c = L + phi_t + phi_y y',
/// so that dG/dp_i = mu(t0)' s_i(t0) + int (L_p + mu' f_p) + direct_i (+
/// the reset jumps). `value` is phi at `at`.
struct AdjointTerminal {
  Eigen::VectorXd mu;
  Eigen::VectorXd direct;  // per direction
  double value = 0.0;
};
AdjointTerminal TerminalCondition(const Model& model,
                                  int functional,
                                  const Eigen::VectorXd& p,
                                  const FlowPoint& at,
                                  const EventJump* event,
                                  const std::vector<Eigen::VectorXd>& dp);

/// The adjoint across a reset (the transpose of s+ = S s- + R dp): from
/// mu+ just after it, mu- = S' mu+ - g_y' (L- - L+) / g' just before, and
/// the gradient's share mu+' R dp_i - (L- - L+) g_p dp_i / g' per
/// direction, L+- the running integrand of the functional on either side.
void AdjointJump(const EventJump& jump,
                 double running_minus,
                 double running_plus,
                 const Eigen::VectorXd& mu_plus,
                 const std::vector<Eigen::VectorXd>& dp,
                 Eigen::VectorXd* mu_minus,
                 Eigen::VectorXd* gradient_share);

}  // namespace daedalus::internal
