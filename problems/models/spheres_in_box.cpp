// Definitions of the models declared in spheres_in_box.hpp.
#include "spheres_in_box.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace daedalus::problems {

Problem SpheresInBoxProblem(int spheres) {
  if (spheres < 1)
    throw std::invalid_argument("spheres_in_box: --spheres " +
                                std::to_string(spheres) + " < 1");
  const int n = spheres;
  ModelBuilder b("spheres_in_box");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i)
    for (const char* c : {"x", "y", "z"}) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "%s%d", c, i);
      names.emplace_back(buf);
    }
  b.Coordinates(names);
  const Param m = b.Parameter("m", 0.1, ParamRange::Positive());
  const Param r = b.Parameter("r", 0.05, ParamRange::Positive());
  const Param L = b.Parameter("L", 0.4, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::NonNegative());
  b.Parameter("e", 0.5, ParamRange::Between(0.0, 1.0));
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v.squaredNorm(); });
  b.PotentialEnergy([=](const auto& x) {
    auto z = x.p[m] * x.p[g] * x.q[2];
    for (int i = 1; i < n; ++i) z = z + x.p[m] * x.p[g] * x.q[3 * i + 2];
    return z;
  });
  const ContactLaw law{.restitution_parameter = "e"};
  // One single-row constraint per wall and sphere: the floor, then the
  // walls at x = 0, x = L, y = 0, y = L (far: the gap shrinks as the
  // coordinate grows).
  struct Wall {
    const char* name;
    int axis;
    bool far;
  };
  const Wall walls[] = {{"floor", 2, false},
                        {"wall_x0", 0, false},
                        {"wall_xL", 0, true},
                        {"wall_y0", 1, false},
                        {"wall_yL", 1, true}};
  for (int i = 0; i < n; ++i)
    for (const Wall& w : walls) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s_%d", w.name, i);
      const int c = 3 * i + w.axis;
      const bool far = w.far;
      b.Holonomic(buf, Touches{{c}}, [=](const auto& x) {
        return far ? x.p[L] - x.p[r] - x.q[c] : x.q[c] - x.p[r];
      });
      b.Unilateral(buf, law);
    }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "pair_%d_%d", i, j);
      b.Holonomic(
          buf,
          Touches{{3 * i, 3 * i + 1, 3 * i + 2, 3 * j, 3 * j + 1, 3 * j + 2}},
          [=](const auto& x) {
            using std::sqrt;
            const auto dx = x.q[3 * i] - x.q[3 * j];
            const auto dy = x.q[3 * i + 1] - x.q[3 * j + 1];
            const auto dz = x.q[3 * i + 2] - x.q[3 * j + 2];
            return sqrt(dx * dx + dy * dy + dz * dz) - 2.0 * x.p[r];
          });
      b.Unilateral(buf, law);
    }
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "N spheres (default 18) dropped at rest in a box [0, L]^2 without a "
      "lid, every wall and sphere-sphere gap a unilateral contact with "
      "restitution e: a scene of many contacts for --integrator moreau-jean "
      "(docs/moreau_jean.md), beside the event-driven default.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    // Layers of up to 3 x 3 sphere centres 2.2 r apart, the first 0.5 r
    // above the floor, each sphere jittered sideways by up to 0.08 r (a
    // fixed pattern) so that the impacts are not all simultaneous.
    const double rr = prm[r], d = 2.2 * rr;
    const double x0 = 0.5 * prm[L] - d;
    InitialState s;
    s.q.resize(3 * n);
    s.v = Eigen::VectorXd::Zero(3 * n);
    for (int i = 0; i < n; ++i) {
      const int layer = i / 9, k = i % 9;
      s.q[3 * i] = x0 + (k % 3) * d + 0.08 * rr * std::sin(1.7 * i + 0.3);
      s.q[3 * i + 1] = x0 + (k / 3) * d + 0.08 * rr * std::cos(2.3 * i);
      s.q[3 * i + 2] = 1.5 * rr + layer * d + 0.05 * rr * (k % 3);
    }
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-8;
  p.defaults.atol = 1e-10;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  // Accumulation for the event-driven stage: a bounce below 1e-3 m/s
  // rises 5e-8 m, far above atol (docs/contact.md, "Accumulation"). At
  // the default 1e-5 m/s (a 5e-12 m rise, below atol 1e-10) a sphere's
  // last gap root was missed and it fell through the floor.
  p.defaults.contact.zeno_velocity = 1e-3;
  return p;
}

}  // namespace daedalus::problems
