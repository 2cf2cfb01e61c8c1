// Definitions of the models declared in planet.hpp, compiled once into a
// library (the headers are included by many tests).
#include "planet.hpp"

namespace daedalus::problems {

Problem PlanetProblem() {
  ModelBuilder b("planet");
  b.Coordinates({"r", "phi"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param gm = b.Parameter("GM", 4.0, ParamRange::Positive());
  const Param r0 = b.Parameter("r0", 1.0);
  const Param speed = b.Parameter("speed", 1.5);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.q[0] * x.q[0] * x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([=](const auto& x) { return -x.p[gm] * x.p[m] / x.q[0]; });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Seed 004's planet in polar coordinates (r, phi) about a fixed centre "
      "GM; starts at r0 with tangential speed 'speed' (an apoapsis when "
      "below circular speed). The default run is one orbital period.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector2d(prm[r0], 0.0);
    s.v = Eigen::Vector2d(0.0, prm[speed] / prm[r0]);
    return s;
  };
  p.defaults.t_end = KeplerPeriod(4.0, 1.0, 1.5);
  p.defaults.output_step = p.defaults.t_end / 200.0;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
