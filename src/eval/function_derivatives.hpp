// Exact first derivatives of one of the model's scalar or vector functions
// (an event function, a reset map, a functional's terms) at one state, by
// first-order dual numbers, one direction per call. For what is
// linearized once per event or per functional evaluation, not per step:
// the hot paths (residuals, right-hand sides, their Jacobians) have their
// own compiled programs and sweeps.
//
// The state is the one the integrators carry: with quaternions, q is the
// raw 4-vector per block and the function sees n(q) (eval/chart.hpp,
// UserCoordinates), so the derivatives are with respect to the raw q,
// through the normalization, as the forward sensitivities' tangents take
// them (docs/sensitivities.md, "Quaternions").
#pragma once

#include <Eigen/Core>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// A state of the model: time, raw coordinates (nq), velocities (nv) and
/// parameters (np).
struct StatePoint {
  double t = 0.0;
  Eigen::VectorXd q, v, p;
};

/// A direction in (t, q, v, p).
struct StateDirection {
  double t = 0.0;
  Eigen::VectorXd q, v, p;  // nq, nv, np; an empty vector is zero
};

/// fn's value at x (with the quaternions normalized).
double ValueAt(const ModelData& md, const ScalarFn& fn, const StatePoint& x);

/// The directional derivative of fn at x along d (one evaluation).
double DerivativeAlong(const ModelData& md,
                       const ScalarFn& fn,
                       const StatePoint& x,
                       const StateDirection& d);

/// fn's partial derivatives at x: dt, dq (nq, raw), dv (nv), dp (np), by
/// 1 + nq + nv + np directional derivatives.
/// @throws std::runtime_error naming `what` when one is not finite.
struct ScalarGradient {
  double value = 0.0;
  double dt = 0.0;
  Eigen::VectorXd dq, dv, dp;
};
ScalarGradient GradientAt(const ModelData& md,
                          const ScalarFn& fn,
                          const StatePoint& x,
                          const std::string& what);

/// fn's gradient with respect to the state y = (q (raw), v) into gy
/// (nq + nv) and the parameters into gp (np), without the time derivative
/// (nq + nv + np directional derivatives): the running functionals'
/// gradients of the adjoints' backward passes.
/// @throws std::runtime_error naming `what` when one is not finite.
void StateGradientAt(const ModelData& md,
                     const ScalarFn& fn,
                     const StatePoint& x,
                     const std::string& what,
                     Eigen::VectorXd* gy,
                     Eigen::VectorXd* gp);

/// A vector function's value (m rows) and Jacobians at x: dt (m), dq
/// (m x nq, raw), dv (m x nv), dp (m x np).
/// @throws std::runtime_error naming `what` when an entry is not finite.
struct VectorJacobian {
  Eigen::VectorXd value, dt;
  Eigen::MatrixXd dq, dv, dp;
};
VectorJacobian JacobianAt(const ModelData& md,
                          const VectorFn& fn,
                          const StatePoint& x,
                          const std::string& what);

}  // namespace daedalus::internal
