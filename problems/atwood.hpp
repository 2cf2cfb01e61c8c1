// Seed 004's Atwood machine: masses m1 (heavy) and m2 hang from an
// inextensible rope over a light, smooth pulley; g is standard gravity.
// Two forms (--coordinates):
//
//   reduced      x: the heavy mass's descent. T = (m1 + m2) x'^2 / 2,
//                V = -(m1 - m2) g x.
//   constrained  y1, y2: the heights of the two masses from their start,
//                T = (m1 y1'^2 + m2 y2'^2) / 2, V = g (m1 y1 + m2 y2), and
//                the rope as a holonomic constraint rope: y1 + y2 = 0, whose
//                reaction (lambda, lambda) is the rope tension on each mass.
//
// Newton's law: acceleration (m1 - m2) g / (m1 + m2) (4.90332 m/s^2 for the
// seed's 3 kg and 1 kg) and tension 2 m1 m2 g / (m1 + m2) (14.71 N).
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// Standard gravity [m/s^2], the seed's value for the Atwood machine.
inline constexpr double kStandardGravity = 9.80665;

Problem AtwoodReducedProblem();

Problem AtwoodConstrainedProblem();

/// `atwood --coordinates reduced|constrained`.
ProblemVariants AtwoodVariants();

}  // namespace daedalus::problems
