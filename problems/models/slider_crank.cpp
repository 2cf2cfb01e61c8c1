// Definitions of the models declared in slider_crank.hpp, compiled once into a
// library (the headers are included by many tests).
#include "slider_crank.hpp"

namespace daedalus::problems {

Problem SliderCrankProblem() {
  ModelBuilder b("slider_crank");
  b.Coordinates({"q", "x", "p"});
  const Param a = b.Parameter("a", 0.5, ParamRange::Positive());
  const Param J1 = b.Parameter("J1", 1.0, ParamRange::Positive());
  const Param m2 = b.Parameter("m2", 1.0, ParamRange::Positive());
  const Param J2 = b.Parameter("J2", 2.0, ParamRange::Positive());
  const Param k = b.Parameter("k", 1.0, ParamRange::NonNegative());
  const Param c = b.Parameter("c", 1.0, ParamRange::NonNegative());
  const Param l0 = b.Parameter("l0", 1.0);
  const Param F = b.Parameter("F", 1.0);

  // Spring length from the coordinates (shared by V and D).
  auto length = [=](const auto& x) {
    const auto& qq = x.q;
    const auto aa = x.p[a];
    const auto l2 = qq[1] * qq[1] - qq[1] * (cos(qq[2]) + aa * cos(qq[0])) +
                    (1.0 + aa * aa) / 4.0 + aa * cos(qq[2] - qq[0]) / 2.0;
    return sqrt(l2);
  };
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * (x.p[J1] * x.v[0] * x.v[0] + x.p[m2] * x.v[1] * x.v[1] +
                  x.p[J2] * x.v[2] * x.v[2]);
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto stretch = length(x) - x.p[l0];
    return 0.5 * x.p[k] * stretch * stretch;
  });
  b.Damping([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    // grad l by a first-order dual sweep would need nesting here; write it.
    const auto& qq = x.q;
    const S aa = x.p[a];
    const S l = length(x);
    Eigen::Matrix<S, 3, 1> g;  // fixed size: no allocation per call
    g[0] =
        (qq[1] * aa * sin(qq[0]) + aa * sin(qq[2] - qq[0]) / 2.0) / (2.0 * l);
    g[1] = (2.0 * qq[1] - (cos(qq[2]) + aa * cos(qq[0]))) / (2.0 * l);
    g[2] = (qq[1] * sin(qq[2]) - aa * sin(qq[2] - qq[0]) / 2.0) / (2.0 * l);
    const Eigen::Matrix<S, 3, 3> d = x.p[c] * g * g.transpose();
    return d;
  });
  b.OtherLoads([=](const auto& x) {
    VecX<Scalar<decltype(x)>> f(3);
    f << 0.0, x.p[F], -x.p[F] * sin(x.q[2]);
    return f;
  });
  b.Holonomic("loop_x", [=](const auto& x) {
    return x.q[1] - cos(x.q[2]) - x.p[a] * cos(x.q[0]);
  });
  b.Holonomic("loop_y", [=](const auto& x) {
    return -sin(x.q[2]) - x.p[a] * sin(x.q[0]);
  });
  const auto kinetic = [=](const auto& x) {
    return 0.5 * (x.p[J1] * x.v[0] * x.v[0] + x.p[m2] * x.v[1] * x.v[1] +
                  x.p[J2] * x.v[2] * x.v[2]);
  };
  b.Quadrature("G", kinetic);
  // The same integral as a functional, for adjoint gradients
  // (idasSlCrank_FSA_dns's dG/dp).
  b.RunningFunctional("G", kinetic);

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Slider-crank of SUNDIALS's idasSlCrank_dns (3 coordinates, 2 holonomic "
      "loop constraints, spring-damper and constant force); quadrature G is "
      "the time integral of the kinetic energy.";
  p.initial = [a](const Eigen::VectorXd& params) {
    const double pp = std::asin(-params[a]);
    InitialState s;
    s.q = Eigen::Vector3d(M_PI / 2.0, std::cos(pp), pp);
    s.v = Eigen::Vector3d::Zero();
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.4;
  p.defaults.rtol = 1e-6;
  p.defaults.atol = 1e-7;
  p.defaults.formulation = Formulation::kGgl;
  p.defaults.integrator = Integrator::kIdas;
  return p;
}

}  // namespace daedalus::problems
