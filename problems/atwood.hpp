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

inline Problem AtwoodReducedProblem() {
  ModelBuilder b("atwood_reduced");
  b.Coordinates({"x"});
  const Param m1 = b.Parameter("m1", 3.0);
  const Param m2 = b.Parameter("m2", 1.0);
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

inline Problem AtwoodConstrainedProblem() {
  ModelBuilder b("atwood_constrained");
  b.Coordinates({"y1", "y2"});
  const Param m1 = b.Parameter("m1", 3.0);
  const Param m2 = b.Parameter("m2", 1.0);
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

/// `atwood --coordinates reduced|constrained`.
inline ProblemVariants AtwoodVariants() {
  ProblemVariants v;
  v.option = "coordinates";
  v.variants = {{"reduced", AtwoodReducedProblem},
                {"constrained", AtwoodConstrainedProblem}};
  return v;
}

}  // namespace daedalus::problems
