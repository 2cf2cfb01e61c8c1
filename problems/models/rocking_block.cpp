// Definitions of the models declared in rocking_block.hpp.
#include "rocking_block.hpp"

#include <cmath>

namespace daedalus::problems {

Problem RockingBlockProblem() {
  ModelBuilder b("rocking_block");
  b.Coordinates({"x", "y", "theta"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param hb = b.Parameter("b", 0.1, ParamRange::Positive());
  const Param hh = b.Parameter("h", 0.3, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81, ParamRange::Positive());
  b.Parameter("mu", 1.0, ParamRange::Positive());
  b.Parameter("e", 0.0);
  const Param theta0 = b.Parameter("theta0", 0.1);
  b.KineticEnergy([=](const auto& x) {
    const auto inertia = x.p[m] * (x.p[hb] * x.p[hb] + x.p[hh] * x.p[hh]) / 3.0;
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]) +
           0.5 * inertia * x.v[2] * x.v[2];
  });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1]; });
  using std::cos;
  using std::sin;
  b.Holonomic("left", [=](const auto& x) {
    return x.q[1] - x.p[hb] * sin(x.q[2]) - x.p[hh] * cos(x.q[2]);
  });
  b.Holonomic("right", [=](const auto& x) {
    return x.q[1] + x.p[hb] * sin(x.q[2]) - x.p[hh] * cos(x.q[2]);
  });
  // The corners' velocities along the ground.
  b.Nonholonomic("left_slip", [=](const auto& x) {
    return x.v[0] + (x.p[hb] * sin(x.q[2]) + x.p[hh] * cos(x.q[2])) * x.v[2];
  });
  b.Nonholonomic("right_slip", [=](const auto& x) {
    return x.v[0] + (x.p[hh] * cos(x.q[2]) - x.p[hb] * sin(x.q[2])) * x.v[2];
  });
  for (const char* corner : {"left", "right"}) {
    b.Unilateral(corner, ContactLaw{.restitution_parameter = "e",
                                    .friction = std::string(corner) + "_slip",
                                    .mu_static_parameter = "mu",
                                    .mu_kinetic_parameter = "mu"});
  }
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Housner's rigid block (half width b, half height h) rocking on its "
      "two bottom corners on a rough ground (e = 0, mu high enough that no "
      "corner slides), released tilted by theta0 on its left corner: at "
      "each impact the angular velocity drops by 1 - 1.5 sin^2(alpha), tan "
      "alpha = b / h (Housner 1963), the energy lost booked as impact "
      "work.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    // Pivoting on the left corner at the origin: the centre at
    // R(theta0) (b, h).
    const double th = prm[theta0], c = std::cos(th), s = std::sin(th);
    InitialState st;
    st.q = Eigen::Vector3d(prm[hb] * c - prm[hh] * s, prm[hb] * s + prm[hh] * c,
                           th);
    st.v = Eigen::Vector3d::Zero();
    return st;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

}  // namespace daedalus::problems
