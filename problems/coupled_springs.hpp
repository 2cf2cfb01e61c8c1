// Seed 004's coupled springs: two equal masses m between two walls, each
// tied to its wall by a spring k and to the other by a spring kappa;
// coordinates are the displacements x1, x2 from rest,
//
//   T = m (x1'^2 + x2'^2) / 2,
//   V = k (x1^2 + x2^2) / 2 + kappa (x1 - x2)^2 / 2.
//
// The sum s = x1 + x2 and difference d = x1 - x2 decouple: s oscillates at
// omega_+^2 = k / m (in phase, middle spring unstretched), d at
// omega_-^2 = (k + 2 kappa) / m. Defaults are the seed's: m = 0.5 kg,
// k = 4 N/m, kappa = 1.5 N/m, start (0.3, -0.1) m, (0.2, 0.5) m/s.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem CoupledSpringsProblem();

}  // namespace daedalus::problems
