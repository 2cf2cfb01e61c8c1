// A thin disk (mass m, radius R) rolling upright without slipping on a
// horizontal plane: the vertical rolling disk (Bloch, Nonholonomic
// Mechanics and Control, 2003, section 1.4). Coordinates: the contact point
// (x, y), the heading phi of the disk's plane and its spin angle theta;
//
//   T = m (x'^2 + y'^2) / 2 + I theta'^2 / 2 + K phi'^2 / 2,
//   I = m R^2 / 2 (about the axle),  K = m R^2 / 4 (about a diameter),
//   roll (2 rows, nonholonomic): x' - R theta' cos phi = 0,
//                                y' - R theta' sin phi = 0.
//
// The rolling reactions do no work; the energy T, the heading rate phi' and
// the spin rate theta' are first integrals, so the contact point runs on a
// circle of radius R theta' / phi' at constant speed. Optional torques:
// a steering torque tau_phi and an axle torque tau_theta (inputs).
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem RollingDiskProblem();

}  // namespace daedalus::problems
