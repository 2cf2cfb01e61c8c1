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
#include <string>

#include "daedalus/model.hpp"

namespace daedalus {

/// Stage the workspace last completed, in order.
enum class Stage { kNone = 0, kPosition = 1, kVelocity = 2, kDynamics = 3 };

/// Mutable scratch for one thread and one Model. Sized at construction; no
/// allocation in the evaluation stages for models whose user functions do
/// not allocate.
class Workspace {
 public:
  explicit Workspace(const Model& model);

  const Model& model() const { return model_; }
  Stage stage() const { return stage_; }

  // ---- inputs (set by SetState)
  double t = 0.0;
  Eigen::VectorXd q;  // nq
  Eigen::VectorXd v;  // nv
  Eigen::VectorXd p;  // np parameters

  // ---- stage 1: position kinematics
  Eigen::VectorXd phi;    // nc: Phi(q,t) rows; 0 for nonholonomic rows
  Eigen::MatrixXd J;      // nc x nv: constraint Jacobian (A for nonholonomic)
  Eigen::VectorXd phi_t;  // nc: Phi_t, or a(q,t) for nonholonomic rows

  // ---- stage 2: velocity kinematics
  Eigen::VectorXd vel_residual;  // nc: J v + Phi_t (A v + a)
  Eigen::VectorXd bias;          // nc: b with  J vdot + b = 0

  // ---- stage 3: dynamics
  Eigen::MatrixXd M;         // nv x nv: mass matrix
  Eigen::VectorXd h;         // nv: M vdot + h = B u + J' lambda
  Eigen::VectorXd inertial;  // nv: L_vq v + L_vt - L_q (no forces)
  Eigen::VectorXd Bu;        // nv: sum_k B_k u_k
  Eigen::MatrixXd B;         // nv x nu: input columns
  Eigen::VectorXd u;         // nu: input values
  Eigen::VectorXd Dv;        // nv: damping force magnitude D v
  Eigen::MatrixXd D;         // nv x nv: damping matrix
  Eigen::VectorXd Qr;        // nv: other loads
  Eigen::VectorXd momentum;  // nv: p = dL/dv
  double lagrangian = 0.0;   // L
  double energy = 0.0;       // E = v'p - L
  double kinetic = 0.0;      // T (NaN when the model gives only L)
  double potential = 0.0;    // V (NaN when the model gives only L)
  double L_t = 0.0;          // explicit time derivative of L

  /// Sets the state and invalidates all stages.
  void SetState(double time,
                const Eigen::Ref<const Eigen::VectorXd>& q_in,
                const Eigen::Ref<const Eigen::VectorXd>& v_in);
  /// Sets the parameters (np) and invalidates all stages.
  void SetParameters(const Eigen::Ref<const Eigen::VectorXd>& params);

  void MarkStage(Stage s) { stage_ = s; }
  void Require(Stage s, const char* who) const;

  // ---- AD scratch (internal use)
  VecX<D1> q1, v1, p1, out1;
  VecX<D2> q2, v2, p2, out2;
  VecX<double> out0;
  MatX<double> mat0;

 private:
  Model model_;
  Stage stage_ = Stage::kNone;
};

/// Stage 1: Phi, J and Phi_t at (t, q). @throws std::runtime_error when a
/// constraint function returns the wrong number of rows or a non-finite
/// value (naming the constraint, the time and the state).
void EvaluatePosition(Workspace* ws);
/// Stage 2: J v + Phi_t and the acceleration bias b.
void EvaluateVelocity(Workspace* ws);
/// Stage 3: mass matrix, bias forces, inputs, damping, loads, energy.
void EvaluateDynamics(Workspace* ws);
/// All three stages.
void EvaluateAll(Workspace* ws);

/// Directional derivative of the energy E = v'L_v - L with respect to q
/// along dq (nq) at the workspace state, holding v and t: E_q . dq. Used for
/// the power of the GGL position correction qdot = v - G' mu.
double EnergyDerivativeAlongQ(Workspace* ws, const Eigen::VectorXd& dq);

/// Describes the workspace state for error messages: "t=0.5, q=(..), v=(..)".
std::string DescribeState(const Workspace& ws);

}  // namespace daedalus
