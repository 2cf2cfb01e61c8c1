// The tilted double well (multi_start_test.cpp, double_well_problem.cpp):
// a unit mass on a line, x'' = u, at rest at x0 at t = 0, and
//
//   well = phi(x(t_end)),  phi(x) = (x^2 - 1)^2 + s x,
//
// as a terminal functional. With x0 and a control on u free and the
// objective well + w int u^2 dt, every optimum has u = 0 and x0 a
// minimizer of phi: the roots of phi'(x) = 4 x^3 - 4 x + s with phi'' > 0,
// two for |s| < 8 / (3 sqrt 3), the global one on the side opposite to s.
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::test_models {

inline Problem DoubleWellProblem() {
  ModelBuilder b("double_well");
  b.Coordinates({"x"});
  const Param s = b.Parameter("s", 0.3, ParamRange::Between(-1.0, 1.0));
  const Param x0 = b.Parameter("x0", 0.5);
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.Input(
      "u",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(1);
        c << 1.0;
        return c;
      },
      [](const auto& x) { return Scalar<decltype(x)>(0.0); });
  b.TerminalFunctional("well", [=](const auto& x) {
    const auto r = x.q[0] * x.q[0] - 1.0;
    return r * r + x.p[s] * x.q[0];
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "A unit mass on a line driven by u, at rest at x0; the functional "
      "well is the tilted double well (x^2 - 1)^2 + s x at the end.";
  p.initial = [x0](const Eigen::VectorXd& prm) {
    InitialState st;
    st.q = Eigen::VectorXd::Constant(1, prm[x0]);
    st.v = Eigen::VectorXd::Zero(1);
    return st;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.05;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  p.defaults.formulation = Formulation::kUnstabilized;
  p.defaults.integrator = Integrator::kCvodesBdf;
  return p;
}

}  // namespace daedalus::test_models
