// Seed 000, exercise 3: a free planar particle of mass m described in polar
// coordinates (r, theta) of a frame (a table) rotating at the constant rate
// Omega,
//
//   L = m (r'^2 + r^2 (theta' + Omega)^2) / 2.
//
// theta is cyclic; its momentum p_theta = m r^2 (theta' + Omega) is the
// inertial angular momentum (not m r^2 theta'). L has no explicit time, so
// the energy function E = v'p - L = m (r'^2 + r^2 theta'^2) / 2
// - m r^2 Omega^2 / 2 (the Jacobi integral, not the laboratory kinetic
// energy) is conserved. The motion seen from the inertial frame is a
// straight line at constant speed.
//
// Optional table friction c: a force -c times the velocity relative to the
// table, i.e. damping D = c diag(1, r^2). Then dp_theta/dt = -c r^2 theta'
// (the friction torque, integrated as the quadrature friction_impulse) and
// dE/dt = -v'D v.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem RotatingParticleProblem();

}  // namespace daedalus::problems
