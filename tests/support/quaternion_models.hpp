// Small models with unit quaternions (nq != nv) shared by the quaternion
// tests: a top on a fixed pivot and a free body pinned at a body point,
// with the asymmetric inertia and the constants those tests use.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <random>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

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

/// Adds to a top's builder what a test needs (quadratures, functionals),
/// given the parameter the test's functional reads (mgl for QuaternionTop,
/// m for ConstrainedTop).
using TopExtension = std::function<void(ModelBuilder*, Param)>;

/// The heavy (Lagrange) top of the sensitivity tests: its tip fixed at the
/// origin, the orientation the quaternion "R" (nq = 4, nv = 3), parameters
/// I1, I3 (about the tip) and mgl: T = (I1 (w1^2 + w2^2) + I3 w3^2) / 2,
/// V = mgl (R e3)_z.
Model QuaternionTop(const TopExtension& extend = {});

/// Its start: tilted 0.4 rad about the body x axis, w = (0.3, 0, 8).
InitialState TopStart();

/// The same top as a free body whose tip is held at the origin by the
/// three holonomic rows "tip": coordinates the centre of mass c (3) and R
/// (4) (nq = 7, nv = 6, nc = 3), parameters m, l, I1c, I3c, gravity
/// kQuatGravity; Phi = c - l R e3.
Model ConstrainedTop(const TopExtension& extend = {});

/// The consistent start of ConstrainedTop for length l (TopStart's
/// orientation and rates), and its derivative d x0 / d l ((nq + nv) x 1).
InitialState ConstrainedStart(double l, Eigen::VectorXd* dx0_dl = nullptr);

}  // namespace daedalus::testing
