// The linearization of a mode switch of the contact and friction stages
// (docs/contact.md and docs/friction.md, "Sensitivities"): the gradient of
// the witness that fired, taken as one exact directional derivative per
// coordinate, velocity, parameter and time, and the saltation matrices of
// the restart (events/event_jump.hpp).
#pragma once

#include <Eigen/Core>
#include <functional>
#include <vector>

#include "eval/function_derivatives.hpp"
#include "events/event_jump.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// The witness's directional derivative at the switch state along (dq (nq),
/// dv (nv), dp (np), dt), in the mode before the switch.
using WitnessTangent = std::function<double(const Eigen::VectorXd& dq,
                                            const Eigen::VectorXd& dv,
                                            const Eigen::VectorXd& dp,
                                            double dt)>;

/// The identity state map at y (n = nq + nv) with its Jacobians: a switch
/// without an impact (a release, a closure at rest, a friction switch).
VectorJacobian IdentityStateMap(const Eigen::VectorXd& y,
                                int nq,
                                int nv,
                                int np);

/// The witness's gradient: g_y (n = nq + nv), g_p (np) and g_t.
struct WitnessGradient {
  Eigen::RowVectorXd gy;
  Eigen::VectorXd gp;
  double gt = 0.0;
};
/// From nq + nv + np + 1 calls of dg (which may use the Mechanics' tangent
/// workspace: call it before anything evaluates the Mechanics elsewhere).
WitnessGradient DifferentiateWitness(int nq,
                                     int nv,
                                     int np,
                                     const WitnessTangent& dg);

/// Completes `jump` with its saltation matrices: `mech`, in the mode after
/// the switch, is evaluated at `plus` and its KKT system solved there.
void SaltationAfterSwitch(Mechanics* mech,
                          const FlowPoint& plus,
                          EventJump* jump);

/// The sensitivities after a switch linearized as `jump` (null: nothing
/// switched, the identity): s+ = S s- + R dp per direction (s_minus n x ns,
/// `dirs` np each), the switch time's derivative per direction into `tau`,
/// and both booked on the switch's EventRecord `record` when there is one.
Eigen::MatrixXd SensitivitiesAcross(const EventJump* jump,
                                    const Eigen::MatrixXd& s_minus,
                                    const std::vector<Eigen::VectorXd>& dirs,
                                    Eigen::VectorXd* tau,
                                    EventRecord* record);

}  // namespace daedalus::internal
