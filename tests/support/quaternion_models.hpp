// Small models with unit quaternions (nq != nv) shared by the quaternion
// tests: a top on a fixed pivot and a free body pinned at a body point,
// with the asymmetric inertia and the constants those tests use.
#pragma once

#include <Eigen/Core>
#include <random>

#include "daedalus/model.hpp"

namespace daedalus::testing {

/// The tests' body mass [kg] and gravity [m/s^2].
constexpr double kQuatMass = 1.5;
constexpr double kQuatGravity = 9.81;

/// An asymmetric inertia tensor [kg m^2], positive definite, with
/// off-diagonal terms (principal axes not along the body axes).
Eigen::Matrix3d AsymmetricInertia();

/// The pivot-to-centre-of-mass offset [m] in the body frame.
Eigen::Vector3d TopCentreOfMass();

/// A top on a fixed pivot: the quaternion "R" alone (nq = 4, nv = 3), the
/// inertia about the pivot, mass kQuatMass with its centre at `com` (body
/// frame), gravity g along -z. Energies declared as one function each.
Model PivotTop(const Eigen::Matrix3d& inertia,
               const Eigen::Vector3d& com,
               double g);

/// A free body (centre-of-mass position x, y, z and the quaternion "R";
/// nq = 7, nv = 6), mass kQuatMass, inertia `inertia_com` about its centre,
/// gravity kQuatGravity along -z, whose body point `pin` (from the centre
/// of mass, body frame) is held at the world origin by the 3-row holonomic
/// constraint "pin". With `touches` the energies are declared as per-block
/// terms and the constraint with its coordinates (the sparse path's
/// structure; model name "pinned_body_touches"), else one function each
/// ("pinned_body").
Model PinnedFreeBody(const Eigen::Matrix3d& inertia_com,
                     const Eigen::Vector3d& pin,
                     bool touches = false);

/// A random quaternion of norm `scale` (Gaussian direction).
Eigen::Vector4d RandomQuaternion(std::mt19937* rng, double scale);

}  // namespace daedalus::testing
