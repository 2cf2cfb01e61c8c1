// Definitions of the models declared in chain_reduced.hpp, compiled once into a
// library (the headers are included by many tests).
#include "chain_reduced.hpp"

namespace daedalus::problems {

Problem ChainReducedProblem(int n) {
  if (n < 1)
    throw std::invalid_argument(
        "chain_reduced: --bodies must be at least 1, got " + std::to_string(n));
  ModelBuilder b("chain_reduced");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(IndexedName("q", i));
  b.Coordinates(names);
  const Param g = b.Parameter("g", 9.81);
  const Param len = b.Parameter("length", 1.0, ParamRange::Positive());
  const Param mass = b.Parameter("mass", 1.0, ParamRange::Positive());
  const double nd = n;
  b.KineticEnergy([=](const auto& s) {
    using S = Scalar<decltype(s)>;
    const S m = s.p[mass] / nd, l = s.p[len] / nd, inertia = m * l * l / 12.0;
    // Running sums of the joint velocities (x, y of the proximal end).
    S th = 0.0, om = 0.0, vx = 0.0, vy = 0.0, t = 0.0;
    for (int i = 0; i < n; ++i) {
      th = th + s.q[i];
      om = om + s.v[i];
      const S c = cos(th), sn = sin(th);
      const S cx = vx + 0.5 * l * c * om, cy = vy + 0.5 * l * sn * om;
      t = t + 0.5 * m * (cx * cx + cy * cy) + 0.5 * inertia * om * om;
      vx = vx + l * c * om;
      vy = vy + l * sn * om;
    }
    return t;
  });
  b.PotentialEnergy([=](const auto& s) {
    using S = Scalar<decltype(s)>;
    const S m = s.p[mass] / nd, l = s.p[len] / nd;
    S th = 0.0, y = 0.0, v = 0.0;
    for (int i = 0; i < n; ++i) {
      th = th + s.q[i];
      const S c = cos(th);
      v = v + m * s.p[g] * (y - 0.5 * l * c);
      y = y - l * c;
    }
    return v;
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "The planar chain of N uniform links (total length 1 m, mass 1 kg) in "
      "joint angles (dense mass matrix, no constraints); released at rest "
      "straight at 0.3 rad from the hanging vertical.";
  p.initial = [n](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::VectorXd::Zero(n);
    s.q[0] = kChainReleaseAngle;
    s.v = Eigen::VectorXd::Zero(n);
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-6;
  p.defaults.atol = 1e-8;
  return p;
}

}  // namespace daedalus::problems
