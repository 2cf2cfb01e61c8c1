// Definitions of the models declared in coupled_springs.hpp, compiled once into
// a library (the headers are included by many tests).
#include "coupled_springs.hpp"

namespace daedalus::problems {

Problem CoupledSpringsProblem() {
  ModelBuilder b("coupled_springs");
  b.Coordinates({"x1", "x2"});
  const Param m = b.Parameter("m", 0.5, ParamRange::Positive());
  const Param k = b.Parameter("k", 4.0, ParamRange::NonNegative());
  const Param kappa = b.Parameter("kappa", 1.5, ParamRange::NonNegative());
  const Param x10 = b.Parameter("x1_0", 0.3);
  const Param x20 = b.Parameter("x2_0", -0.1);
  const Param v10 = b.Parameter("v1_0", 0.2);
  const Param v20 = b.Parameter("v2_0", 0.5);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto stretch = x.q[0] - x.q[1];
    return 0.5 * x.p[k] * (x.q[0] * x.q[0] + x.q[1] * x.q[1]) +
           0.5 * x.p[kappa] * stretch * stretch;
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 004's two equal masses between walls, wall springs k and a "
      "middle spring kappa; normal modes at k/m and (k + 2 kappa)/m. The "
      "start is set by the parameters x1_0, x2_0, v1_0, v2_0.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector2d(prm[x10], prm[x20]);
    s.v = Eigen::Vector2d(prm[v10], prm[v20]);
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
