// Definitions of the models declared in atwood.hpp, compiled once into a
// library (the headers are included by many tests).
#include "atwood.hpp"

namespace daedalus::problems {

Problem AtwoodReducedProblem() {
  ModelBuilder b("atwood_reduced");
  b.Coordinates({"x"});
  const Param m1 = b.Parameter("m1", 3.0, ParamRange::Positive());
  const Param m2 = b.Parameter("m2", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", kStandardGravity);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * (x.p[m1] + x.p[m2]) * x.v[0] * x.v[0];
  });
  b.PotentialEnergy(
      [=](const auto& x) { return -(x.p[m1] - x.p[m2]) * x.p[g] * x.q[0]; });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 004's Atwood machine in one coordinate, the heavy mass's "
      "descent x; released at rest.";
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::VectorXd::Zero(1);
    s.v = Eigen::VectorXd::Zero(1);
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  return p;
}

Problem AtwoodConstrainedProblem() {
  ModelBuilder b("atwood_constrained");
  b.Coordinates({"y1", "y2"});
  const Param m1 = b.Parameter("m1", 3.0, ParamRange::Positive());
  const Param m2 = b.Parameter("m2", 1.0, ParamRange::Positive());
  const Param g = b.Parameter("g", kStandardGravity);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * (x.p[m1] * x.v[0] * x.v[0] + x.p[m2] * x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([=](const auto& x) {
    return x.p[g] * (x.p[m1] * x.q[0] + x.p[m2] * x.q[1]);
  });
  b.Holonomic("rope", [](const auto& x) { return x.q[0] + x.q[1]; });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 004's Atwood machine with both heights y1, y2 and the rope "
      "y1 + y2 = 0 as a holonomic constraint; its multiplier is the rope "
      "tension. Released at rest.";
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::VectorXd::Zero(2);
    s.v = Eigen::VectorXd::Zero(2);
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  return p;
}

ProblemVariants AtwoodVariants() {
  ProblemVariants v;
  v.option = "coordinates";
  v.variants = {{"reduced", AtwoodReducedProblem},
                {"constrained", AtwoodConstrainedProblem}};
  return v;
}

}  // namespace daedalus::problems
