// Definitions of the models declared in bead_parabola.hpp, compiled once into a
// library (the headers are included by many tests).
#include "bead_parabola.hpp"

namespace daedalus::problems {

Problem BeadParabolaReducedProblem() {
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

Problem BeadParabolaConstrainedProblem() {
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

ProblemVariants BeadParabolaVariants() {
  ProblemVariants v;
  v.option = "coordinates";
  v.variants = {{"reduced", BeadParabolaReducedProblem},
                {"constrained", BeadParabolaConstrainedProblem}};
  return v;
}

}  // namespace daedalus::problems
