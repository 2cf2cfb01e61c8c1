// Rotations from the unit quaternions of ModelBuilder::Quaternion, for
// writing energies, forces and constraints of bodies that rotate freely
// (docs/conventions.md, "Velocities"). Templated on the scalar so that the
// library can differentiate through them.
#pragma once

#include <Eigen/Core>

#include "daedalus/model.hpp"

namespace daedalus {

template <class S>
using Vec3 = Eigen::Matrix<S, 3, 1>;
template <class S>
using Mat3 = Eigen::Matrix<S, 3, 3>;

/// The rotation matrix R of the unit quaternion (w, x, y, z): a vector
/// with components b in the rotated (body) frame has components R b in the
/// reference (world) frame. User functions receive quaternions normalized,
/// so this is a rotation at every state the library evaluates.
template <class S>
Mat3<S> RotationFromQuaternion(const S& w, const S& x, const S& y, const S& z) {
  Mat3<S> r;
  r(0, 0) = 1.0 - 2.0 * (y * y + z * z);
  r(0, 1) = 2.0 * (x * y - w * z);
  r(0, 2) = 2.0 * (x * z + w * y);
  r(1, 0) = 2.0 * (x * y + w * z);
  r(1, 1) = 1.0 - 2.0 * (x * x + z * z);
  r(1, 2) = 2.0 * (y * z - w * x);
  r(2, 0) = 2.0 * (x * z - w * y);
  r(2, 1) = 2.0 * (y * z + w * x);
  r(2, 2) = 1.0 - 2.0 * (x * x + y * y);
  return r;
}

/// The rotation of the quaternion whose "w" coordinate is q[i] (the block
/// ModelBuilder::Quaternion declared at index i).
template <class S>
Mat3<S> RotationAt(const VecX<S>& q, Eigen::Index i) {
  return RotationFromQuaternion(q[i], q[i + 1], q[i + 2], q[i + 3]);
}

/// The angular velocity (rotated-frame components) of the quaternion's
/// velocities starting at v[i].
template <class S>
Vec3<S> AngularVelocityAt(const VecX<S>& v, Eigen::Index i) {
  return Vec3<S>(v[i], v[i + 1], v[i + 2]);
}

}  // namespace daedalus
