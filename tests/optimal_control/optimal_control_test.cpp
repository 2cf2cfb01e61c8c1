// Optimal control (include/daedalus/optimal_control.hpp): the splines, the
// minimum-effort rest-to-rest double integrator against its closed-form
// optimum, the shooting NLP's gradients against central differences, and
// bad input.
#include "daedalus/optimal_control.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/run.hpp"
#include "optimal_control/shooting.hpp"

namespace daedalus {
namespace {
namespace optimal_control_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A unit mass on a line pushed by u: x'' = u / m. Minimum effort
// int_0^1 u^2 dt from rest at 0 to rest at 1 has the optimum
// u*(t) = 6 - 12 t, J* = 12 (Bryson and Ho, Applied Optimal Control,
// 1975, sec. 2.8: the minimum-energy transfer of a double integrator).
Problem DoubleIntegrator() {
  ModelBuilder b("double_integrator");
  b.Coordinates({"x"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v[0] * x.v[0]; });
  b.Input(
      "u",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(1);
        c << 1.0;
        return c;
      },
      [](const auto& x) { return Scalar<decltype(x)>(0.0); });
  b.TerminalFunctional("position", [](const auto& x) { return x.q[0]; });
  b.TerminalFunctional("speed", [](const auto& x) { return x.v[0]; });
  b.TerminalFunctional("time", [](const auto& x) { return x.t; });
  b.Event(
      "half", [](const auto& x) { return x.q[0] - 0.5; },
      EventOptions{EventDirection::kRising, false});
  Problem p;
  p.model = std::move(b).Build();
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::VectorXd::Zero(1);
    s.v = Eigen::VectorXd::Zero(1);
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.05;
  p.defaults.rtol = 1e-11;
  p.defaults.atol = 1e-13;
  p.defaults.formulation = Formulation::kUnstabilized;
  p.defaults.integrator = Integrator::kCvodesBdf;
  return p;
}

std::vector<double> Grid(double a, double b, int n) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) t.push_back(a + (b - a) * i / (n - 1));
  return t;
}

OptimalControlProblem RestToRest(ControlBasis basis, int knots) {
  OptimalControlProblem ocp;
  ControlChannel u;
  u.input = "u";
  u.basis = basis;
  u.knots = Grid(0.0, 1.0, knots);
  ocp.controls.push_back(u);
  ocp.objective.push_back({"effort:u", 1.0});
  ocp.constraints.push_back({"position", 1.0, 1.0});
  ocp.constraints.push_back({"speed", 0.0, 0.0});
  return ocp;
}

// Tolerances: the optimum's objective and controls to 1e-6 (the issue's
// bound; the integration runs at rtol 1e-11 and IPOPT to tol 1e-10).
constexpr double kOptimum = 1e-6;
constexpr double kKkt = 1e-6;

void ExpectRestToRestOptimum(const OptimizeResult& r) {
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NEAR(r.objective, 12.0, kOptimum);
  const ControlChannel& u = r.controls.at(0);
  for (size_t j = 0; j < u.knots.size(); ++j)
    EXPECT_NEAR(u.initial[Eigen::Index(j)], 6.0 - 12.0 * u.knots[j], kOptimum)
        << "knot " << j;
  EXPECT_LE(r.kkt_residual, kKkt);
  EXPECT_GT(r.iterations, 0);
  EXPECT_TRUE(r.run.ok) << r.run.error;
  EXPECT_NEAR(r.run.final.q[0], 1.0, kOptimum);
  EXPECT_NEAR(r.run.final.v[0], 0.0, kOptimum);
}

OptimizeOptions Tight(int intervals) {
  OptimizeOptions o;
  o.shooting_intervals = intervals;
  o.tolerance = 1e-10;
  o.constraint_tolerance = 1e-10;
  return o;
}

TEST(OptimalControl, SplinesInterpolateAndStayInTheHull) {
  ControlChannel lin;
  lin.input = "u";
  lin.knots = {0.0, 0.1, 0.3, 0.4};
  const Eigen::Vector4d c(1.0, -2.0, 3.0, 0.5);
  Eigen::VectorXd t(6);
  t << -1.0, 0.0, 0.05, 0.2, 0.4, 2.0;
  const Eigen::VectorXd u = EvaluateControl(lin, c, t);
  EXPECT_DOUBLE_EQ(u[0], 1.0);  // held before the grid
  EXPECT_DOUBLE_EQ(u[1], 1.0);
  EXPECT_NEAR(u[2], -0.5, 1e-15);
  EXPECT_NEAR(u[3], 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(u[5], 0.5);  // held after
  ControlChannel cub = lin;
  cub.basis = ControlBasis::kCubicBSpline;
  cub.knots = Grid(0.0, 1.0, 9);
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(9);
  const Eigen::VectorXd ts = Eigen::VectorXd::LinSpaced(101, -0.2, 1.2);
  // A partition of unity: constant coefficients give that constant.
  EXPECT_LT((EvaluateControl(cub, ones, ts).array() - 1.0).abs().maxCoeff(),
            1e-13);
  // Inside the grid a linear sequence gives the line away from the ends.
  Eigen::VectorXd lincoef(9);
  for (int j = 0; j < 9; ++j) lincoef[j] = 2.0 * cub.knots[j];
  Eigen::VectorXd mid(3);
  mid << 0.4, 0.5, 0.55;
  EXPECT_LT((EvaluateControl(cub, lincoef, mid) - 2.0 * mid)
                .lpNorm<Eigen::Infinity>(),
            1e-13);
}

TEST(OptimalControl, MinimumEffortRestToRestSingleShooting) {
  const Problem p = DoubleIntegrator();
  const OptimizeResult r =
      Optimize(p, RestToRest(ControlBasis::kPiecewiseLinear, 11), p.defaults,
               p.model.default_parameters(), Tight(1));
  ExpectRestToRestOptimum(r);
}

TEST(OptimalControl, MinimumEffortRestToRestMultipleShooting) {
  const Problem p = DoubleIntegrator();
  std::ostringstream progress;
  OptimizeOptions o = Tight(4);
  o.progress = &progress;
  const OptimizeResult r =
      Optimize(p, RestToRest(ControlBasis::kPiecewiseLinear, 11), p.defaults,
               p.model.default_parameters(), o);
  ExpectRestToRestOptimum(r);
  EXPECT_THAT(progress.str(), HasSubstr("infeasibility"));
  EXPECT_THAT(progress.str(), HasSubstr("KKT residual"));
}

// Central differences of the NLP's f and g against Gradients(), at a point
// away from the optimum, with an event functional, a path constraint and
// three shooting intervals. h = 1e-4 relative: truncation O(h^2) ~ 1e-8
// and the runs' own error (rtol 1e-12, about 1e-11 in f) over 2h ~ 1e-7
// are both below 1e-6 of a row's largest entry, the bound asserted
// (relative to that entry). At h = 1e-6 the runs' error over 2h reached
// 7e-6 of the objective's gradient.
void ExpectGradientsMatch(internal::ShootingNlp& nlp,
                          const Eigen::VectorXd& w,
                          double rel) {
  Eigen::VectorXd grad;
  Eigen::MatrixXd jac;
  ASSERT_TRUE(nlp.Gradients(w, &grad, &jac)) << nlp.error();
  Eigen::VectorXd fd_grad(nlp.n());
  Eigen::MatrixXd fd_jac(nlp.m(), nlp.n());
  for (int i = 0; i < nlp.n(); ++i) {
    const double h = 1e-4 * std::max(1.0, std::abs(w[i]));
    Eigen::VectorXd a = w, b = w;
    a[i] += h;
    b[i] -= h;
    double fa = 0.0, fb = 0.0;
    Eigen::VectorXd ga, gb;
    ASSERT_TRUE(nlp.Values(a, &fa, &ga)) << nlp.error();
    ASSERT_TRUE(nlp.Values(b, &fb, &gb)) << nlp.error();
    fd_grad[i] = (fa - fb) / (2 * h);
    fd_jac.col(i) = (ga - gb) / (2 * h);
  }
  const double gscale = grad.lpNorm<Eigen::Infinity>();
  ASSERT_GT(gscale, 0.0);
  EXPECT_LE((grad - fd_grad).lpNorm<Eigen::Infinity>(), rel * gscale)
      << "grad f\n"
      << grad.transpose() << "\nfd\n"
      << fd_grad.transpose();
  for (int r = 0; r < nlp.m(); ++r) {
    const double scale = jac.row(r).lpNorm<Eigen::Infinity>();
    ASSERT_GT(scale, 0.0) << nlp.constraint_names()[r];
    EXPECT_LE((jac.row(r) - fd_jac.row(r)).lpNorm<Eigen::Infinity>(),
              rel * scale)
        << nlp.constraint_names()[r] << "\n"
        << jac.row(r) << "\n"
        << fd_jac.row(r);
  }
}

TEST(OptimalControl, ShootingGradientsMatchCentralDifferences) {
  Problem p = DoubleIntegrator();
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  OptimalControlProblem ocp = RestToRest(ControlBasis::kCubicBSpline, 7);
  ocp.controls[0].initial = Eigen::VectorXd::LinSpaced(7, 3.0, -1.0);
  ocp.parameters.push_back({"m", 0.5, 2.0, 1.2});
  ocp.initial_state.push_back({"v0[x]", -1.0, 1.0, 0.1});
  ocp.objective.push_back({"time@half", 2.0});
  ocp.constraints.push_back({"speed@half", 0.0, 2.0});
  ocp.path_constraints.push_back({"speed", -2.0, 2.0});
  ocp.path_samples = 2;
  for (GradientMethod g :
       {GradientMethod::kForward, GradientMethod::kAdjoint}) {
    OptimizeOptions o;
    o.shooting_intervals = 3;
    o.gradient = g;
    internal::ShootingNlp nlp(p, ocp, p.defaults, p.model.default_parameters(),
                              o);
    Eigen::VectorXd w = nlp.x0();
    // Off the trajectory: the continuity rows are not zero there.
    for (int i = 0; i < w.size(); ++i) w[i] += 0.01 * std::sin(1.0 + i);
    SCOPED_TRACE(ToString(g));
    ExpectGradientsMatch(nlp, w, 1e-6);
  }
}

TEST(OptimalControl, BadInputIsNamed) {
  const Problem p = DoubleIntegrator();
  OptimalControlProblem ocp = RestToRest(ControlBasis::kPiecewiseLinear, 11);
  ocp.objective[0].functional = "effort:v";
  EXPECT_THAT(
      [&] { Optimize(p, ocp, p.defaults, p.model.default_parameters()); },
      ThrowsMessage<std::invalid_argument>(HasSubstr("effort:u")));
  ocp = RestToRest(ControlBasis::kPiecewiseLinear, 11);
  ocp.constraints.push_back({"speed@impact", 0.0, 1.0});
  EXPECT_THAT(
      [&] { Optimize(p, ocp, p.defaults, p.model.default_parameters()); },
      ThrowsMessage<std::invalid_argument>(HasSubstr("no event 'impact'")));
  ocp = RestToRest(ControlBasis::kPiecewiseLinear, 41);  // 0.025 s < 0.05 s
  EXPECT_THAT(
      [&] { Optimize(p, ocp, p.defaults, p.model.default_parameters()); },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("finer than the output step")));
  ocp = RestToRest(ControlBasis::kPiecewiseLinear, 11);
  ocp.controls[0].input = "push";
  EXPECT_THAT(
      [&] { Optimize(p, ocp, p.defaults, p.model.default_parameters()); },
      ThrowsMessage<std::invalid_argument>(HasSubstr("channels are: u")));
}

TEST(OptimalControl, GuessOutsideBoundsIsProjectedAndSaid) {
  const Problem p = DoubleIntegrator();
  OptimalControlProblem ocp = RestToRest(ControlBasis::kPiecewiseLinear, 11);
  ocp.controls[0].initial = Eigen::VectorXd::Constant(11, 9.0);
  ocp.controls[0].lower = Eigen::VectorXd::Constant(1, -8.0);
  ocp.controls[0].upper = Eigen::VectorXd::Constant(1, 8.0);
  const OptimizeResult r =
      Optimize(p, ocp, p.defaults, p.model.default_parameters(), Tight(1));
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_THAT(r.warnings[0], HasSubstr("projected to 8"));
  ExpectRestToRestOptimum(r);  // the bounds are not active at the optimum
}

TEST(OptimalControl, InfeasibleProblemNamesTheViolatedConstraint) {
  const Problem p = DoubleIntegrator();
  OptimalControlProblem ocp = RestToRest(ControlBasis::kPiecewiseLinear, 11);
  // |u| <= 1 for one second moves the mass at most 0.25 from rest to rest.
  ocp.controls[0].lower = Eigen::VectorXd::Constant(1, -1.0);
  ocp.controls[0].upper = Eigen::VectorXd::Constant(1, 1.0);
  OptimizeOptions o = Tight(1);
  o.max_iterations = 100;
  const OptimizeResult r =
      Optimize(p, ocp, p.defaults, p.model.default_parameters(), o);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.status, HasSubstr("Infeasible"));
  ASSERT_FALSE(r.violated.empty());
  EXPECT_THAT(r.message, HasSubstr("constraint position"));
  // The best iterate: the mass pushed as far as the bounds allow.
  EXPECT_GT(r.run.final.q[0], 0.2);
  EXPECT_LT(r.run.final.q[0], 0.25 + 1e-6);
}

}  // namespace optimal_control_test
}  // namespace
}  // namespace daedalus
