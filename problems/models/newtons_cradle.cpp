// Definitions of the models declared in newtons_cradle.hpp.
#include "newtons_cradle.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace daedalus::problems {

Problem NewtonsCradleProblem(int balls) {
  if (balls < 2)
    throw std::invalid_argument("newtons_cradle: --balls " +
                                std::to_string(balls) + " < 2");
  const int n = balls;
  ModelBuilder b("newtons_cradle");
  std::vector<std::string> names;
  for (int i = 1; i <= n; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "x%d", i);
    names.emplace_back(buf);
  }
  b.Coordinates(names);
  const Param m = b.Parameter("m", 0.1, ParamRange::Positive());
  const Param d = b.Parameter("d", 0.05, ParamRange::Positive());
  const Param v0 = b.Parameter("v0", 1.0);
  const Param gap0 = b.Parameter("gap0", 0.01, ParamRange::Positive());
  const Param spacing = b.Parameter("spacing", 0.0, ParamRange::NonNegative());
  b.Parameter("e", 1.0, ParamRange::Between(0.0, 1.0));
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v.squaredNorm(); });
  for (int i = 0; i + 1 < n; ++i) {
    // (snprintf: GCC 12 warns falsely on the concatenated std::strings.)
    char buf[32];
    std::snprintf(buf, sizeof buf, "c%d_%d", i + 1, i + 2);
    const std::string c = buf;
    b.Holonomic(c, Touches{{i, i + 1}},
                [=](const auto& x) { return x.q[i + 1] - x.q[i] - x.p[d]; });
    b.Unilateral(c, ContactLaw{.restitution_parameter = "e"});
  }
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Newton's cradle: N equal balls on a line, ball 1 striking the others "
      "at v0. Touching (spacing 0) they take one simultaneous Newton impact "
      "(the impulse LCP: (-1/3, 2/3, 2/3) v0 for 3 balls with e = 1); set "
      "apart (spacing > 0) the impacts are sequential and the last ball "
      "leaves with v0.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q.resize(n);
    s.v = Eigen::VectorXd::Zero(n);
    s.q[0] = -prm[gap0] - prm[d];
    for (int i = 1; i < n; ++i) s.q[i] = (i - 1) * (prm[d] + prm[spacing]);
    s.v[0] = prm[v0];
    return s;
  };
  p.defaults.t_end = 0.1;
  p.defaults.output_step = 0.001;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
