// Velocities that are not coordinate derivatives (docs/conventions.md,
// "Velocities"): q' = N(q) v, with nq != nv when the model declares unit
// quaternions (ModelBuilder::Quaternion).
//
// The evaluators differentiate the user's functions in local coordinates
// xi (nv) around the current q, the chart
//
//   q(xi) = q0 + xi                       on a scalar coordinate,
//   q(xi) = n(q0) (x) exp(xi / 2)         on a quaternion block,
//
// with n(q0) = q0 / |q0| and (x) the quaternion product, and the user's
// velocity v = d/dt xi - xi x d/dt xi / 2 on a quaternion block (the right
// Jacobian of the exponential to first order). At xi = 0 the chart's
// velocity and acceleration are exactly the model's v and v' (a body's
// angular velocity w satisfies w' = xi'' at xi = 0), so the machinery
// written for q' = v (J = dPhi/dq, the bias of Phi along the motion, the
// Euler-Lagrange terms of the energies) gives, applied to xi, the
// equations in the velocities v: J = Phi_q N, b along q' = N v, and the
// gyroscopic (Hamel) terms of T(q, v), e.g. w x I w for a free body, by
// differentiating through the chart. The evaluators only ever need
// derivatives up to the second order at xi = 0, so exp(xi/2) is used as
// its second-order Taylor polynomial (1 - |xi|^2/8, xi/2), and the right
// Jacobian to first order; both are exact at those orders (tested against
// Euler's equations, tests/eval/quaternion_test.cpp).
//
// Pinocchio and Drake take the same view: configuration on a Lie group,
// velocities and derivatives in its tangent space (Carpentier et al.,
// "The Pinocchio C++ library", SII 2019; Sola et al., "A micro Lie theory
// for state estimation in robotics", 2018, for the right Jacobian).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <type_traits>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// x += a on the primal (innermost value) of a dual number x over S: the
/// whole of q0 + xi when xi's value is 0, without a dual addition.
template <class T, class S>
void AddToPrimal(T& x, const S& a) {
  if constexpr (std::is_same_v<T, S>) {
    x += a;
  } else {
    AddToPrimal(x.v, a);
  }
}

/// The user's q (nq) at chart coordinates xi (nv, value 0) around q0 (nq).
/// T is S or a dual number over S.
template <class S, class T>
void ChartPositions(const ModelData& d,
                    const VecX<S>& q0,
                    const VecX<T>& xi,
                    VecX<T>& q) {
  const Eigen::Index nq = q0.size();
  for (Eigen::Index j = 0; j < nq; ++j) {
    const int k = d.velocity_of[j];
    if (k >= 0) {
      q[j] = xi[k];
      AddToPrimal(q[j], q0[j]);
    }
  }
  for (const QuaternionBlock& b : d.quaternions) {
    using std::sqrt;
    const S norm = sqrt(q0[b.q] * q0[b.q] + q0[b.q + 1] * q0[b.q + 1] +
                        q0[b.q + 2] * q0[b.q + 2] + q0[b.q + 3] * q0[b.q + 3]);
    const T a0(q0[b.q] / norm), a1(q0[b.q + 1] / norm), a2(q0[b.q + 2] / norm),
        a3(q0[b.q + 3] / norm);
    const T& x = xi[b.v];
    const T& y = xi[b.v + 1];
    const T& z = xi[b.v + 2];
    const T e0 = 1.0 - (x * x + y * y + z * z) * 0.125;
    const T e1 = x * 0.5, e2 = y * 0.5, e3 = z * 0.5;
    // (a0, a) (x) (e0, e) = (a0 e0 - a.e, a0 e + e0 a + a x e)
    q[b.q] = a0 * e0 - (a1 * e1 + a2 * e2 + a3 * e3);
    q[b.q + 1] = a0 * e1 + a1 * e0 + (a2 * e3 - a3 * e2);
    q[b.q + 2] = a0 * e2 + a2 * e0 + (a3 * e1 - a1 * e3);
    q[b.q + 3] = a0 * e3 + a3 * e0 + (a1 * e2 - a2 * e1);
  }
}

/// The user's q from the raw coordinates `raw` (nq) as the integrators
/// carry them: n(raw) = raw / |raw| on each quaternion block, normalized in
/// T's arithmetic, raw elsewhere; nv the model's. With T a dual number
/// seeded along a raw direction dq, a user function of the result has the
/// derivative through dn/dq = (I - n n') / |q| along dq, as the tangent
/// workspace takes it (BasicWorkspace::UpdateUserQ): the derivative with
/// respect to the raw q that the adjoints' terminal values and running
/// gradients need (docs/sensitivities.md, "Quaternions").
template <class T>
VecX<T> UserCoordinates(const ModelData& d, const VecX<T>& raw, int nv) {
  VecX<T> q = raw;
  if (d.quaternions.empty()) return q;
  const VecX<T> zero = VecX<T>::Zero(nv);
  ChartPositions(d, raw, zero, q);
  return q;
}

/// The user's v from the chart velocity (in place): v - xi x v / 2 on each
/// quaternion block, unchanged elsewhere.
template <class T>
void ChartVelocities(const ModelData& d, const VecX<T>& xi, VecX<T>& v) {
  for (const QuaternionBlock& b : d.quaternions) {
    const T x = xi[b.v], y = xi[b.v + 1], z = xi[b.v + 2];
    const T w0 = v[b.v], w1 = v[b.v + 1], w2 = v[b.v + 2];
    v[b.v] = w0 - (y * w2 - z * w1) * 0.5;
    v[b.v + 1] = w1 - (z * w0 - x * w2) * 0.5;
    v[b.v + 2] = w2 - (x * w1 - y * w0) * 0.5;
  }
}

/// Both: q from (q0, xi), and v (holding the chart velocity) in place.
template <class S, class T>
void ChartPoint(const ModelData& d,
                const VecX<S>& q0,
                const VecX<T>& xi,
                VecX<T>& q,
                VecX<T>& v) {
  ChartPositions(d, q0, xi, q);
  if (!d.quaternions.empty()) ChartVelocities(d, xi, v);
}

/// q' = N(q) v (nq): v on scalar coordinates, q (0, w) / 2 on quaternions.
template <class S, class VQ, class VV, class VO>
void CoordinateRates(const ModelData& d, const VQ& q, const VV& v, VO&& qdot) {
  const Eigen::Index nq = q.size();
  for (Eigen::Index j = 0; j < nq; ++j) {
    const int k = d.velocity_of[j];
    if (k >= 0) qdot[j] = v[k];
  }
  for (const QuaternionBlock& b : d.quaternions) {
    const S a0 = q[b.q], a1 = q[b.q + 1], a2 = q[b.q + 2], a3 = q[b.q + 3];
    const S w0 = v[b.v], w1 = v[b.v + 1], w2 = v[b.v + 2];
    // (a0, a) (x) (0, w) / 2 = (-a.w, a0 w + a x w) / 2
    qdot[b.q] = -(a1 * w0 + a2 * w1 + a3 * w2) * 0.5;
    qdot[b.q + 1] = (a0 * w0 + (a2 * w2 - a3 * w1)) * 0.5;
    qdot[b.q + 2] = (a0 * w1 + (a3 * w0 - a1 * w2)) * 0.5;
    qdot[b.q + 3] = (a0 * w2 + (a1 * w1 - a2 * w0)) * 0.5;
  }
}

/// The chart direction dxi (nv) of a coordinate direction dq (nq) at q:
/// dq itself on scalar coordinates, 2 Im(conj(q) (x) dq) / |q|^2 on a
/// quaternion (the component of dq along q, a change of norm, has none).
/// CoordinateRates(q, ChartDirection(q, dq)) is dq without that component.
template <class VQ, class VD, class VO>
void ChartDirection(const ModelData& d, const VQ& q, const VD& dq, VO&& dxi) {
  const Eigen::Index nq = q.size();
  for (Eigen::Index j = 0; j < nq; ++j) {
    const int k = d.velocity_of[j];
    if (k >= 0) dxi[k] = dq[j];
  }
  for (const QuaternionBlock& b : d.quaternions) {
    const double a0 = q[b.q], a1 = q[b.q + 1], a2 = q[b.q + 2], a3 = q[b.q + 3];
    const double n2 = a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3;
    const double d0 = dq[b.q], d1 = dq[b.q + 1], d2 = dq[b.q + 2],
                 d3 = dq[b.q + 3];
    // conj(a) (x) d, vector part: a0 d - d0 a - a x d
    dxi[b.v] = 2.0 * (a0 * d1 - d0 * a1 - (a2 * d3 - a3 * d2)) / n2;
    dxi[b.v + 1] = 2.0 * (a0 * d2 - d0 * a2 - (a3 * d1 - a1 * d3)) / n2;
    dxi[b.v + 2] = 2.0 * (a0 * d3 - d0 * a3 - (a1 * d2 - a2 * d1)) / n2;
  }
}

/// q <- n(q) (x) exp(dxi / 2) on quaternions (exact exponential, result
/// unit), q + dxi on scalar coordinates: a position update along a chart
/// direction (projections, GGL's correction).
void Retract(const ModelData& d,
             const Eigen::Ref<const Eigen::VectorXd>& dxi,
             Eigen::Ref<Eigen::VectorXd> q);

/// The Jacobians of q' = N(q) v: fq = d(N v)/dq (nq x nq) and fv = N(q)
/// (nq x nv), written into the given blocks (which must be zero).
void CoordinateRatesJacobian(const ModelData& d,
                             const Eigen::Ref<const Eigen::VectorXd>& q,
                             const Eigen::Ref<const Eigen::VectorXd>& v,
                             Eigen::Ref<Eigen::MatrixXd> fq,
                             Eigen::Ref<Eigen::MatrixXd> fv);

/// The tangent of q' = N(q) v along (dq, dv), written into out (nq): dv
/// on scalar coordinates and, on a quaternion block,
///
///   d(q (x) (0, w) / 2) = (dq (x) (0, w) + q (x) (0, dw)) / 2,
///
/// exact because q' = q (x) (0, w) / 2 is bilinear in the raw 4-vector q
/// (not n(q): the integrators' q' uses q as it is) and w. The forward
/// sensitivities' position rows (docs/sensitivities.md, "Quaternions").
void CoordinateRatesTangent(const ModelData& d,
                            const Eigen::Ref<const Eigen::VectorXd>& q,
                            const Eigen::Ref<const Eigen::VectorXd>& v,
                            const Eigen::Ref<const Eigen::VectorXd>& dq,
                            const Eigen::Ref<const Eigen::VectorXd>& dv,
                            Eigen::Ref<Eigen::VectorXd> out);

/// Removes from each quaternion block of dq its component along q,
/// dq <- (I - q q' / |q|^2) dq: the tangent to the sphere |q| = const, the
/// part of a coordinate direction that the model's functions (which see
/// n(q)) respond to. Scalar coordinates are left as they are.
void ProjectQuaternionTangent(const ModelData& d,
                              const Eigen::Ref<const Eigen::VectorXd>& q,
                              Eigen::Ref<Eigen::VectorXd> dq);

/// Normalizes each quaternion block of q in place; returns the largest
/// | |q| - 1 | before (0 without quaternions).
double NormalizeQuaternions(const ModelData& d, Eigen::Ref<Eigen::VectorXd> q);

/// The largest | |q| - 1 | over the quaternion blocks (0 without).
double QuaternionNormDrift(const ModelData& d,
                           const Eigen::Ref<const Eigen::VectorXd>& q);

}  // namespace daedalus::internal
