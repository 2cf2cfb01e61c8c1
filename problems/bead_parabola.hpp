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

inline Problem BeadParabolaReducedProblem() {
  ModelBuilder b("bead_parabola_reduced");
  b.Coordinates({"x"});
  const bead_detail::Params P = bead_detail::Declare(b);
  b.KineticEnergy([=](const auto& x) {
    const auto slope = 2.0 * x.p[P.a] * x.q[0];
    return 0.5 * x.p[P.m] * (1.0 + slope * slope) * x.v[0] * x.v[0];
  });
  b.PotentialEnergy([=](const auto& x) {
    return x.p[P.m] * x.p[P.g] * x.p[P.a] * x.q[0] * x.q[0];
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 000's bead on the wire y = a x^2, reduced to the one coordinate "
      "x; released at rest from x0.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::VectorXd::Constant(1, prm[P.x0]);
    s.v = Eigen::VectorXd::Zero(1);
    return s;
  };
  bead_detail::Defaults(&p);
  return p;
}

inline Problem BeadParabolaConstrainedProblem() {
  ModelBuilder b("bead_parabola_constrained");
  b.Coordinates({"x", "y"});
  const bead_detail::Params P = bead_detail::Declare(b);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[P.m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]);
  });
  b.PotentialEnergy(
      [=](const auto& x) { return x.p[P.m] * x.p[P.g] * x.q[1]; });
  b.Holonomic("wire", [=](const auto& x) {
    return x.q[1] - x.p[P.a] * x.q[0] * x.q[0];
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 000's bead on the wire y = a x^2 in (x, y) with the wire as a "
      "holonomic constraint; its multiplier is the wire's normal push. "
      "Released at rest from x0.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    const double x0 = prm[P.x0];
    s.q = Eigen::Vector2d(x0, prm[P.a] * x0 * x0);
    s.v = Eigen::Vector2d::Zero();
    return s;
  };
  bead_detail::Defaults(&p);
  return p;
}

/// `bead_parabola --coordinates reduced|constrained`.
inline ProblemVariants BeadParabolaVariants() {
  ProblemVariants v;
  v.option = "coordinates";
  v.variants = {{"reduced", BeadParabolaReducedProblem},
                {"constrained", BeadParabolaConstrainedProblem}};
  return v;
}

}  // namespace daedalus::problems
