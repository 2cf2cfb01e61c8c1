// Exact linearizations of the KKT solve (docs/sensitivities.md): the
// tangents of the accelerations and multipliers of the ODE forms along a
// direction of (q, v, p), and of the consistent start along a sensitivity
// parameter. Dense algebra on the tangent workspace (both evaluators use
// it: the sparse one evaluates its tangents densely, mechanics.hpp).
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/sensitivity.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// Linearized KKT solve at one state: factors
///   K = [ M  -J' ; J  0 ]
/// once, then maps a seeded tangent workspace to the tangents of a KKT
/// solution (vdot, lambda) of the (stabilized) ODE form:
///   M dvdot - J' dlambda = -(dM vdot + dh - dBu - dJ' lambda)
///   J dvdot              = -(dJ vdot + d bias)
/// (the applied and the ideal solution share K).
class TangentKkt {
 public:
  /// `open`: the rows of open contacts (their J row is zero): a unit
  /// diagonal, so their dlambda is 0 (docs/contact.md).
  /// `slip`: slipping friction rows (docs/friction.md; each also open,
  /// its J row kept): dlambda_t + mu sigma dlambda_n = 0.
  void Factor(const Eigen::MatrixXd& M,
              const Eigen::MatrixXd& J,
              const std::vector<int>& open = {},
              const std::vector<SlipRow>& slip = {});
  /// `tws` seeded and evaluated; `bias` its constraint right-hand side
  /// (tangent); (vdot, lambda) the solution being linearized.
  void Solve(const TangentWorkspace& tws,
             const VecX<D1>& bias,
             const Eigen::VectorXd& vdot,
             const Eigen::VectorXd& lambda,
             Eigen::VectorXd* dvdot,
             Eigen::VectorXd* dlambda) const;

 private:
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
};

/// Linearizes the consistent initialization at the consistent state held by
/// `ws` (all stages evaluated, accelerations `vdot` and multipliers
/// `lambda` from the KKT solve) along parameter `sp`:
///   dq = P (dq0) - M^-1 J' S^-1 Phi_p dp     (mass-metric projection)
///   dv = dv0 - M^-1 J' S^-1 d(J v + Phi_t)   (velocity projection)
/// with S = J M^-1 J', then (dvdot, dlambda) from the linearized KKT system.
/// Exact when the given initial state is consistent (the projection is the
/// identity there and its derivative is the projector).
InitialSensitivity LinearizeConsistentStart(
    Workspace& ws,
    TangentWorkspace* tws,
    const Eigen::VectorXd& vdot,
    const Eigen::VectorXd& lambda,
    const SensParameter& sp,
    const Eigen::MatrixXd& initial_tangent);

/// The same along a given direction (dq0 (nq), dv0 (nv), dp (np)): the
/// linearized projection onto the manifold of a restart (after a reset
/// map, docs/sensitivities.md, "Resets") and the linearized KKT solution
/// there.
InitialSensitivity LinearizeConsistentTangent(Workspace& ws,
                                              TangentWorkspace* tws,
                                              const Eigen::VectorXd& vdot,
                                              const Eigen::VectorXd& lambda,
                                              Eigen::VectorXd dq0,
                                              const Eigen::VectorXd& dv0,
                                              const Eigen::VectorXd& dp);

}  // namespace daedalus::internal
