// Models of the seed documents' manufactured examples, shared by tests.
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "daedalus/model.hpp"

namespace daedalus::testing {

/// Seed 003, one coordinate: inertia 2, stiffness 3, damping 0.2.
Model SeedOneCoordinate();

/// Seed 003, coupled rigid/shaft coordinates with one input on the first.
Model SeedCoupled(double u = 4.0);

/// Seed 003, two coordinates tied by q1 - q2 = 0, input 10 on the first.
Model SeedConstrainedPair();

/// Seed 003 moving support: a 2 kg mass carried by a support whose height
/// is s(t) = 0.3 t + 0.2 t^2 (0.3 m/s up, 0.4 m/s^2 up at t = 0).
Model SeedMovingSupport();

/// Seed 000 worked example 1: two uniform rods, absolute angles from the
/// downward vertical, base motor u1 and elbow motor u2.
Model RodPairAbsolute(double m1 = 1,
                      double m2 = 1,
                      double l1 = 1,
                      double l2 = 1,
                      double g = 9.81);

/// Seed 000 worked example 2: the same rods in relative coordinates
/// (q1 from the horizontal, q2 the elbow angle), written from the centre
/// velocities in these coordinates (independent of the absolute model).
Model RodPairRelative(double m1 = 1,
                      double m2 = 1,
                      double l1 = 1,
                      double l2 = 1,
                      double g = 9.81);

}  // namespace daedalus::testing
