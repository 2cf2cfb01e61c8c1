// The symmetric heavy top (Lagrange top): a rigid body of revolution
// spinning about its symmetry axis with its tip fixed at the world origin,
// in gravity along -z, written as a spatial multibody description
// (include/daedalus/multibody.hpp) with Z-X-Z Euler angles as three
// revolute joints:
//   precession  world -> ring "precession_ring" (massless), about z: psi;
//   nutation    precession_ring -> "nutation_ring" (massless), about x: theta;
//   spin        nutation_ring -> "top", about z: phi;
// so that R_WT = Rz(psi) Rx(theta) Rz(phi). The top's body frame is at the
// tip with z along the symmetry axis; its centre of mass is at (0, 0, l),
// its inertia about the tip is I1 about the transverse axes and I3 about
// the axis (about the centre of mass: I1 - m l^2, I1 - m l^2, I3).
// Markers "rim_1..4" at (r, 0, l), (0, r, l), (-r, 0, l), (0, -r, l) with
// r = sqrt(2 I3 / m) (a thin disc of that axial inertia), then "com" at
// (0, 0, l), are for drawing (scripts/plot) only. docs/problems.md,
// "heavy_top".
//
// With T = I1 (theta'^2 + psi'^2 sin^2 theta) / 2 + I3 w3^2 / 2, w3 = psi'
// cos theta + phi', and V = m g l cos theta, psi and phi are cyclic:
// p_psi = (I1 sin^2 theta + I3 cos^2 theta) psi' + I3 cos theta phi' and
// p_phi = I3 w3 are conserved, and so is E = T + V. The mass matrix is
// singular at theta = 0 and pi (gimbal lock), so theta0 is in (0, pi).
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// The top with M and h from the energies (the default).
Problem HeavyTopProblem();
/// The same from the recursive algorithms (kRecursive): `--dynamics
/// energy|recursive`.
Problem HeavyTopProblemForm(mb::DynamicsForm form);

namespace heavy_top_detail {

/// Handles of the top's parameters (declared in this order).
struct Params {
  Param m, l, I1, I3, g, theta0, spin;
};
/// Declares the parameters on `b` with their defaults.
Params DeclareParameters(ModelBuilder* b);
/// The description added to `b` (after DeclareParameters).
mb::Kinematics System(const Params& P,
                      ModelBuilder* b,
                      mb::DynamicsForm form = mb::DynamicsForm::kEnergy);

/// The steady precession rate psi' [rad/s] of the slow root: with theta
/// constant, the theta equation I1 theta'' = sin theta (I1 psi'^2 cos
/// theta - I3 w3 psi' + m g l) gives I1 cos theta psi'^2 - I3 w3 psi' + m g
/// l = 0, solved as psi' = 2 m g l / (I3 w3 + s sqrt(D)), D = I3^2 w3^2 -
/// 4 I1 m g l cos theta, s the sign of w3 (+1 for w3 = 0: the conical
/// pendulum of a hanging top). @throws std::invalid_argument naming the
/// spin needed when D < 0 (no steady precession: the top is too slow).
double SteadyPrecessionRate(double m,
                            double l,
                            double I1,
                            double I3,
                            double g,
                            double theta,
                            double spin);
/// The fast root I1 cos theta psi'^2 - I3 w3 psi' + m g l = 0 (the other
/// one), for cos theta != 0. @throws std::invalid_argument as above, or
/// for cos theta = 0 (one root only).
double FastPrecessionRate(double m,
                          double l,
                          double I1,
                          double I3,
                          double g,
                          double theta,
                          double spin);

}  // namespace heavy_top_detail
}  // namespace daedalus::problems
