// Seed 000, exercise 9: a bead of mass m slides without friction on the
// stationary wire y = a x^2 in a vertical plane, gravity g downward. Two
// forms (--coordinates):
//
//   reduced      x only: y' = 2 a x x', so
//                T = m (1 + 4 a^2 x^2) x'^2 / 2,  V = m g a x^2
//                (effective mass m (1 + 4 a^2 x^2), velocity bias
//                4 m a^2 x x'^2, potential gradient 2 m g a x).
//   constrained  (x, y) with the wire as a holonomic constraint
//                wire: y - a x^2 = 0, T = m (x'^2 + y'^2) / 2, V = m g y;
//                the reaction J' lambda = lambda (-2 a x, 1) is the wire's
//                push on the bead (virtual displacements dy = 2 a x dx).
//
// Small oscillations about the bottom have omega^2 = 2 g a.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

namespace bead_detail {
struct Params {
  Param m, a, g, x0;
};
inline Params Declare(ModelBuilder& b) {
  return {b.Parameter("m", 1.0), b.Parameter("a", 0.5), b.Parameter("g", 9.81),
          b.Parameter("x0", 0.8)};
}
inline void Defaults(Problem* p) {
  p->defaults.t_end = 5.0;
  p->defaults.output_step = 0.01;
  p->defaults.rtol = 1e-10;
  p->defaults.atol = 1e-12;
}
}  // namespace bead_detail

Problem BeadParabolaReducedProblem();

Problem BeadParabolaConstrainedProblem();

/// `bead_parabola --coordinates reduced|constrained`.
ProblemVariants BeadParabolaVariants();

}  // namespace daedalus::problems
