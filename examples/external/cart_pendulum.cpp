// A pendulum hanging from a cart that rolls freely along a horizontal rail:
// cart of mass M at (xc, 0), bob of mass m at (xb, yb) on a massless rod of
// length l, gravity g along -y. Cartesian coordinates (xc, xb, yb) and one
// holonomic constraint, the rod:
//
//   T = M xc'^2 / 2 + m (xb'^2 + yb'^2) / 2,   V = m g yb,
//   rod:  (xb - xc)^2 + yb^2 - l^2 = 0.
//
// Released at rest with the rod at theta0 from the downward vertical. No
// horizontal force acts on the pair, so the centre of mass stays where it
// starts: M xc + m xb = const and M xc' + m xb' = 0. Then, with
// mu = m / (M + m), the swing is a pendulum with an angle-dependent inertia,
//
//   m l^2 (1 - mu cos^2 theta) theta'^2 / 2 = m g l (cos theta - cos theta0),
//
// whose period is the closed form
//
//   P = 4 sqrt(l / g) int_0^{pi/2} sqrt(1 - mu cos^2 theta) / cos(theta / 2)
//   dphi,
//       sin(theta / 2) = sin(theta0 / 2) sin(phi),
//
// which tends to 2 pi sqrt(M l / ((M + m) g)) for small theta0: the cart
// shortens the period of the simple pendulum by sqrt(M / (M + m)).
//
// Built outside the Daedalus source tree against an installed Daedalus
// (CMakeLists.txt beside this file; docs/using_as_a_package.md).
#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace {

daedalus::Problem CartPendulum() {
  using daedalus::Param;
  using daedalus::ParamRange;
  daedalus::ModelBuilder b("cart_pendulum");
  b.Coordinates({"xc", "xb", "yb"});
  const Param cart_mass = b.Parameter("M", 2.0, ParamRange::Positive());
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param l = b.Parameter("l", 0.5, ParamRange::Positive());
  const Param g = b.Parameter("g", 9.81);
  const Param theta0 = b.Parameter("theta0", 0.5);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[cart_mass] * x.v[0] * x.v[0] +
           0.5 * x.p[m] * (x.v[1] * x.v[1] + x.v[2] * x.v[2]);
  });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[2]; });
  b.Holonomic("rod", [=](const auto& x) {
    const auto dx = x.q[1] - x.q[0];
    return dx * dx + x.q[2] * x.q[2] - x.p[l] * x.p[l];
  });
  daedalus::Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Pendulum (bob m, rod l) hanging from a cart M on a frictionless "
      "horizontal rail, Cartesian coordinates (xc, xb, yb); released at rest "
      "at theta0 from the vertical with the cart at the origin. Small "
      "oscillations have the period 2 pi sqrt(M l / ((M + m) g)).";
  p.initial = [=](const Eigen::VectorXd& prm) {
    daedalus::InitialState s;
    s.q = Eigen::Vector3d(0.0, prm[l] * std::sin(prm[theta0]),
                          -prm[l] * std::cos(prm[theta0]));
    s.v = Eigen::Vector3d::Zero();
    return s;
  };
  p.defaults.t_end = 5.0;
  p.defaults.output_step = 0.001;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  return daedalus::run(CartPendulum(), argc, argv);
}
