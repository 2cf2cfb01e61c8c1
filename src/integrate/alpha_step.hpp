// One step of generalized-alpha / HHT on the index-3 residual
// (generalized_alpha.cpp's head has the scheme, the driver and the step
// control), in its Lie-group form on models with unit quaternions
// (alpha_step.cpp's head).
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"
#include "formulation/dae_form.hpp"
#include "formulation/mechanics.hpp"
#include "integrate/adapters.hpp"

namespace daedalus::internal {

/// The state the scheme carries from step to step: q (nq), v, vdot, a
/// (nv) and the scheme's multipliers.
struct AlphaState {
  double t = 0.0;
  Eigen::VectorXd q, v, vdot, a, lambda;
};

/// The magnitude each tangent component (nv) is weighed against: |q_j|
/// on a scalar coordinate, 1 on the three rotation components of a
/// quaternion block (an angle in radians, against the unit quaternion's
/// size). Without quaternions (chart null) it is |q|.
Eigen::VectorXd TangentMagnitudes(const ModelData* chart,
                                  const Eigen::VectorXd& q);

/// q advanced by the tangent increment dxi (nv): q + dxi without
/// quaternions (chart null), n(q) (x) exp(dxi / 2) on a quaternion block
/// and q + dxi on scalar coordinates with them (Retract).
Eigen::VectorXd AdvancePositions(const ModelData* chart,
                                 const Eigen::VectorXd& q,
                                 const Eigen::VectorXd& dxi);

/// Projects the local error estimate e (nv, a tangent vector at q1, where
/// mech holds its state) onto the tangent space of the constraint
/// manifold in the mass metric (Mechanics::ProjectErrorEstimate, which
/// takes coordinate directions: on quaternion models e goes there as
/// N(q1) e and comes back by the chart).
void ProjectTangentError(Mechanics* mech,
                         const ModelData* chart,
                         const Eigen::VectorXd& q1,
                         Eigen::VectorXd* e);

/// The scheme's step: Newton on the accelerations and the scaled
/// multipliers (generalized_alpha.cpp's head).
class AlphaStepper {
 public:
  AlphaStepper(DaeForm* form,
               const AlphaParameters& p,
               const SimulationOptions& o,
               SolverStats* stats);

  /// Mass scale of the multiplier weights (max diagonal of M at the start).
  void set_mass_scale(double m) { mass_scale_ = m; }

  /// One step of size h from s0 into s1; false when Newton does not
  /// converge (why says how far it got).
  /// tol_factor: the Newton tolerance as a fraction of the error weights.
  bool Step(const AlphaState& s0,
            double h,
            double tol_factor,
            AlphaState* s1,
            std::string* why);

  /// The local error estimate of q over the step s0 -> s1 (not weighed;
  /// nv, a tangent vector on quaternion models): h^3 (beta - gamma/2 +
  /// 1/12) q''' with h q''' = vdot1 - vdot0 (generalized_alpha.cpp's head).
  Eigen::VectorXd ErrorEstimate(const AlphaState& s0,
                                const AlphaState& s1,
                                double h) const;

  /// Its RMS norm in the weights rtol max(m0, m1) + atol, m the
  /// TangentMagnitudes of q0 and q1.
  double ErrorNorm(const Eigen::VectorXd& e,
                   const AlphaState& s0,
                   const AlphaState& s1) const;

 private:
  void Pack(const AlphaState& s);
  void Positions(const AlphaState& s0,
                 const Eigen::VectorXd& base,
                 double h,
                 AlphaState* s1) const;
  void Assemble(double h, double bp, double gp, const Eigen::VectorXd& q1);
  double WeightedMax(const Eigen::VectorXd& d,
                     const Eigen::VectorXd& x,
                     double scale,
                     double f,
                     double magnitude = 0.0) const;

  DaeForm* form_;
  AlphaParameters p_;
  const SimulationOptions& o_;
  SolverStats* stats_;
  const ModelData* chart_ = nullptr;  // null without quaternions
  int nq_ = 0, nv_ = 0, nc_ = 0, n_ = 0;
  double mass_scale_ = 1.0;
  std::vector<bool> holonomic_;
  Eigen::VectorXd y_, yp_, F_;
  Eigen::MatrixXd A_, Aq_, Nq_, K_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
};

}  // namespace daedalus::internal
