// Optimal control (include/daedalus/optimal_control.hpp): the splines, the
// minimum-effort rest-to-rest double integrator against its closed-form
// optimum, the shooting NLP's gradients against central differences, path
// constraints' windows, and bad input.
#include "daedalus/optimal_control.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/run.hpp"
#include "golf_swing.hpp"
#include "optimal_control/shooting.hpp"
#include "optimal_control/shooting_differences.hpp"
#include "support/test_support.hpp"

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
// three shooting intervals. h = 1e-3 relative with Richardson
// extrapolation: truncation O(h^4) ~ 1e-12 and the runs' own error (rtol
// 1e-12, about 1e-11 in f) over h ~ 1e-8 are both below 1e-6 of a row's
// largest entry, the bound asserted (relative to that entry). A plain
// central difference at h = 1e-6 met the runs' error over 2h at 7e-6 of
// the objective's gradient, and on golf_swing at h = 1e-4 at 4e-6.
void ExpectGradientsMatch(internal::ShootingNlp& nlp,
                          const Eigen::VectorXd& w,
                          double rel,
                          double node_step = 1e-4,
                          double richardson_step = 1e-3) {
  Eigen::VectorXd grad;
  Eigen::MatrixXd jac;
  ASSERT_TRUE(nlp.Gradients(w, &grad, &jac)) << nlp.error();
  // Node states ("s<i>.<name>") take one central difference at their own
  // step; the other columns the Richardson extrapolation.
  auto step = [&](int i) {
    const std::string& name = nlp.variable_names()[size_t(i)];
    const bool node = name.size() > 1 && name[0] == 's' &&
                      std::isdigit(static_cast<unsigned char>(name[1]));
    return node ? test_support::DifferenceStep{node_step, false}
                : test_support::DifferenceStep{richardson_step, true};
  };
  Eigen::VectorXd fd_grad;
  Eigen::MatrixXd fd_jac;
  ASSERT_TRUE(
      test_support::ShootingDifferences(nlp, w, step, &fd_grad, &fd_jac));
  test_support::ExpectObjectiveGradientMatches(grad, fd_grad, rel);
  for (int r = 0; r < nlp.m(); ++r) {
    ASSERT_GT(jac.row(r).lpNorm<Eigen::Infinity>(), 0.0)
        << nlp.constraint_names()[size_t(r)];
    test_support::ExpectJacobianRowMatches(nlp, jac, fd_jac, r, rel);
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
  // Three intervals with path rows (forward everywhere, the second event
  // functional by a run of its own); one interval by adjoints; two with
  // the method chosen by count.
  struct Case {
    int intervals;
    bool path;
    GradientMethod gradient;
  };
  for (const Case& c : {Case{3, true, GradientMethod::kForward},
                        Case{1, false, GradientMethod::kAdjoint},
                        Case{2, false, GradientMethod::kAuto}}) {
    OptimalControlProblem q = ocp;
    if (c.path) {
      q.path_constraints.push_back({"speed", -2.0, 2.0});
      q.path_samples = 2;
    }
    OptimizeOptions o;
    o.shooting_intervals = c.intervals;
    o.gradient = c.gradient;
    internal::ShootingNlp nlp(p, q, p.defaults, p.model.default_parameters(),
                              o);
    Eigen::VectorXd w = nlp.x0();
    // Off the trajectory: the continuity rows are not zero there.
    for (int i = 0; i < w.size(); ++i) w[i] += 0.01 * std::sin(1.0 + i);
    SCOPED_TRACE(std::to_string(c.intervals) + " intervals, " +
                 ToString(c.gradient));
    ExpectGradientsMatch(nlp, w, 1e-6);
    if (c.gradient == GradientMethod::kAdjoint) {
      EXPECT_GT(nlp.adjoint_runs, 0);
    }
    if (c.gradient == GradientMethod::kForward) {
      EXPECT_GT(nlp.forward_runs, 0);
    }
  }
}

// A path constraint's window [from, to] keeps the rows of the samples
// inside it: on two intervals of 0.5 s with 4 samples each (every 0.125
// s), position over [0.3, 0.8] has rows at 0.375, 0.5, 0.625 and 0.75
// only, beside speed at all nine samples (the initial speed free, so that
// no row is constant). Each windowed row is the same run's
// sample as the unwindowed NLP's row at that time (values and Jacobian
// rows equal to the last bit), and the gradients match central
// differences as above. The spec's keys "from" and "to" give the window;
// an empty window or one between two samples is refused.
TEST(OptimalControl, PathWindowKeepsTheSamplesInside) {
  Problem p = DoubleIntegrator();
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  OptimalControlProblem ocp = RestToRest(ControlBasis::kPiecewiseLinear, 5);
  ocp.controls[0].initial = Eigen::VectorXd::LinSpaced(5, 4.0, -2.0);
  ocp.path_samples = 4;
  ocp.initial_state.push_back({"v0[x]", -1.0, 1.0, 0.1});
  ocp.path_constraints.push_back({"speed", -2.0, 2.0});
  ocp.path_constraints.push_back({"position", -1.0, 2.0});
  OptimalControlProblem windowed = ocp;
  windowed.path_constraints[1].from = 0.3;
  windowed.path_constraints[1].to = 0.8;
  OptimizeOptions o;
  o.shooting_intervals = 2;
  o.gradient = GradientMethod::kForward;
  internal::ShootingNlp all(p, ocp, p.defaults, p.model.default_parameters(),
                            o);
  internal::ShootingNlp nlp(p, windowed, p.defaults,
                            p.model.default_parameters(), o);
  ASSERT_EQ(all.m(), nlp.m() + 5);
  std::vector<std::string> windowed_rows;
  for (const std::string& n : nlp.constraint_names())
    if (n.rfind("path position", 0) == 0) windowed_rows.push_back(n);
  EXPECT_EQ(windowed_rows,
            (std::vector<std::string>{
                "path position at t = 0.375", "path position at t = 0.5",
                "path position at t = 0.625", "path position at t = 0.75"}));
  Eigen::VectorXd w = nlp.x0();
  for (int i = 0; i < w.size(); ++i) w[i] += 0.01 * std::sin(1.0 + i);
  double f_all = 0.0, f = 0.0;
  Eigen::VectorXd g_all, g, grad_all, grad;
  Eigen::MatrixXd jac_all, jac;
  ASSERT_TRUE(all.Values(w, &f_all, &g_all)) << all.error();
  ASSERT_TRUE(nlp.Values(w, &f, &g)) << nlp.error();
  ASSERT_TRUE(all.Gradients(w, &grad_all, &jac_all)) << all.error();
  ASSERT_TRUE(nlp.Gradients(w, &grad, &jac)) << nlp.error();
  EXPECT_EQ(f, f_all);
  EXPECT_EQ(grad, grad_all);
  int matched = 0;
  for (int r = 0; r < nlp.m(); ++r)
    for (int q = 0; q < all.m(); ++q) {
      if (all.constraint_names()[size_t(q)] !=
          nlp.constraint_names()[size_t(r)])
        continue;
      EXPECT_EQ(g[r], g_all[q]) << nlp.constraint_names()[size_t(r)];
      EXPECT_EQ(jac.row(r), jac_all.row(q))
          << nlp.constraint_names()[size_t(r)];
      ++matched;
    }
  EXPECT_EQ(matched, nlp.m());
  ExpectGradientsMatch(nlp, w, 1e-6);

  SimulationOptions sim = p.defaults;
  const OptimizeSpec spec = ParseOptimizeSpec(
      R"({"controls": [{"input": "u", "knots": [0, 1]}],
          "objective": "effort:u",
          "path_constraints": [{"functional": "speed", "upper": 2,
                                "from": 0.3, "to": 0.8}]})",
      &sim);
  ASSERT_EQ(spec.problem.path_constraints.size(), 1u);
  EXPECT_EQ(spec.problem.path_constraints[0].from, 0.3);
  EXPECT_EQ(spec.problem.path_constraints[0].to, 0.8);
  OptimalControlProblem empty = windowed;
  empty.path_constraints[1].from = 0.8;
  empty.path_constraints[1].to = 0.3;
  EXPECT_THAT(
      [&] {
        internal::ShootingNlp bad(p, empty, p.defaults,
                                  p.model.default_parameters(), o);
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("is empty")));
  OptimalControlProblem between = windowed;
  between.path_constraints[1].from = 0.51;
  between.path_constraints[1].to = 0.6;
  EXPECT_THAT(
      [&] {
        internal::ShootingNlp bad(p, between, p.defaults,
                                  p.model.default_parameters(), o);
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("no path sample")));
}

// The adjoint's parameter quadrature on a controlled model (Gauss-Legendre
// on the backward steps, split at the knots: src/integrate/
// adjoint_quadrature.hpp) against the closed form. J = int_0^1 u^2 dt +
// x(1), u = sum_j c_j hat_j on a uniform grid (h), m = 1, from rest:
// dJ/dc = 2 G c + g, G the hats' Gram matrix (h/6 (1, 4, 1), h/3 at the
// two ends) and g_j = int (1 - t) hat_j dt (x(1) = int_0^1 (1 - t) u dt).
// Both integrands are polynomials between knots (the second through
// mu_v = 1 - t), which the 4-point rule integrates exactly, and mu_v is
// linear, which BDF and its interpolant carry exactly: measured 1.3e-15
// relative; bound 1e-10, the integration's rtol 1e-11 with room for the
// forward and backward steps' round-off (the same gradient by CVODES's
// error-controlled quadrature, the path before, is 3e-9 off on the
// pendulum of bench/optimal_control_bench at rtol 1e-8).
TEST(OptimalControl, AdjointControlGradientMatchesTheClosedForm) {
  const Problem p = DoubleIntegrator();
  const int k = 9;
  const double h = 1.0 / (k - 1);
  OptimalControlProblem ocp;
  ControlChannel u;
  u.input = "u";
  u.knots = Grid(0.0, 1.0, k);
  u.initial.resize(k);
  for (int j = 0; j < k; ++j) u.initial[j] = std::sin(1.0 + 2.0 * j);
  ocp.controls.push_back(u);
  ocp.objective.push_back({"effort:u", 1.0});
  ocp.objective.push_back({"position", 1.0});
  OptimizeOptions o;
  o.shooting_intervals = 1;
  o.gradient = GradientMethod::kAdjoint;
  internal::ShootingNlp nlp(p, ocp, p.defaults, p.model.default_parameters(),
                            o);
  const Eigen::VectorXd w = nlp.x0();
  Eigen::VectorXd grad;
  Eigen::MatrixXd jac;
  ASSERT_TRUE(nlp.Values(w, nullptr, nullptr));
  ASSERT_TRUE(nlp.Gradients(w, &grad, &jac));
  EXPECT_GT(nlp.adjoint_runs, 0);
  ASSERT_EQ(grad.size(), k);
  Eigen::VectorXd exact(k);
  for (int j = 0; j < k; ++j) {
    const bool end = j == 0 || j == k - 1;
    double e = 2.0 * (end ? h / 3.0 : 2.0 * h / 3.0) * w[j];
    if (j > 0) e += 2.0 * h / 6.0 * w[j - 1];
    if (j + 1 < k) e += 2.0 * h / 6.0 * w[j + 1];
    const double tau = j * h;
    if (j == 0)
      e += h / 2.0 - h * h / 6.0;  // int_0^h (1 - t)(1 - t / h) dt
    else if (j == k - 1)
      e += h / 2.0 - (h * h / 3.0 + (1.0 - h) * h / 2.0);
    else
      e += h - tau * h;
    exact[j] = e;
  }
  const double err =
      (grad - exact).cwiseAbs().maxCoeff() / exact.cwiseAbs().maxCoeff();
  EXPECT_LE(err, 1e-10) << "adjoint:\n" << grad << "\nclosed form:\n" << exact;
}

// golf_swing (problems/golf_swing.hpp): a spline added to the wrist
// torque, its level free, the clubhead speed and position at
// impact (an event inside the second of two intervals, or the first).
void ExpectGolfGradients(int intervals, double rtol) {
  Problem p = problems::GolfSwingProblem();
  SimulationOptions sim = p.defaults;
  sim.t_end = 0.4;
  sim.rtol = rtol;
  sim.atol = 1e-2 * rtol;
  OptimalControlProblem ocp;
  ControlChannel wrist;
  wrist.input = "wrist";
  wrist.knots = {0.0, 0.15, 0.3};
  wrist.initial = Eigen::Vector3d(1.0, -2.0, 3.0);
  wrist.add_to_model = true;
  ocp.controls.push_back(wrist);
  // Not t_on: the model's torque has a kink in t at t_on, which the
  // integrator steps over without locating it, so runs (and their central
  // differences) in t_on agree only to about 1e-4 relative.
  const double nan = std::numeric_limits<double>::quiet_NaN();  // the run's
  ocp.parameters.push_back({"u_wrist", -30.0, 0.0, nan});
  ocp.objective.push_back({"clubhead_speed@impact", 1.0});
  ocp.constraints.push_back({"head_x@impact", -0.45, -0.43});
  {
    OptimizeOptions o;
    o.shooting_intervals = intervals;
    internal::ShootingNlp nlp(p, ocp, sim, p.model.default_parameters(), o);
    SCOPED_TRACE(std::to_string(intervals) + " intervals");
    // h = 1e-5 (plain central) for the node states: one moved off the
    // hand path is
    // projected back onto it, a map curved enough along theta_a (second
    // derivative about 2e4) that h = 1e-4 leaves a truncation error of 2e-4
    // in that column (measured: 1.9e-2, 1.9e-4, 1.9e-6 at h = 1e-3, 1e-4,
    // 1e-5); the other columns keep 1e-4, where the runs' own error over 2h
    // is ten times smaller.
    ExpectGradientsMatch(nlp, nlp.x0(), 1e-6, 1e-5);
  }
}

TEST(OptimalControl, GolfSwingGradientsSingleShooting) {
  DAEDALUS_RELEASE_BUILD_ONLY("about 30 golf_swing runs at rtol 1e-12");
  // rtol 1e-12: the position at impact moves by only 3e-3 m per unit of
  // a coefficient, and at 1e-11 the runs' error over h was 1.5e-6 of that.
  ExpectGolfGradients(1, 1e-12);
}

TEST(OptimalControl, GolfSwingGradientsMultipleShooting) {
  DAEDALUS_RELEASE_BUILD_ONLY("about 60 golf_swing runs at rtol 1e-12");
  // rtol 1e-12: the node states' columns are plain central differences
  // at h = 1e-5, whose runs' error over 2h is about rtol / h; at 1e-11
  // that was 1e-6, the bound itself (the continuity rows measured 1.3e-6
  // and 1.6e-6 once CVODES's Newton matrix changed, its step sequence
  // with it).
  ExpectGolfGradients(2, 1e-12);
}

// The wrist torque's level from the top of the downswing (t_on = 0) that
// puts the clubhead on the ball (head_x at impact within 1 cm of the hand's
// end point la sin(psi_impact)) at the greatest speed: IPOPT's KKT
// residual at the end, and the optimum's speed and level as measured
// (docs/optimal_control.md, "golf_swing").
TEST(OptimalControl, GolfSwingHeadOnTheBall) {
  DAEDALUS_RELEASE_BUILD_ONLY("about 30 golf_swing runs with sensitivities");
  Problem p = problems::GolfSwingProblem();
  SimulationOptions sim = p.defaults;
  sim.t_end = 0.4;
  sim.rtol = 1e-11;
  sim.atol = 1e-13;
  Eigen::VectorXd params = p.model.default_parameters();
  params[p.model.ParameterIndex("t_on")] = 0.0;
  const double ball = 0.62 * std::sin(-0.8);
  OptimalControlProblem ocp;
  ocp.parameters.push_back({"u_wrist", -20.0, 0.0, -20.0});
  ocp.objective.push_back({"clubhead_speed@impact", 1.0});
  ocp.maximize = true;
  ocp.constraints.push_back({"head_x@impact", ball - 0.01, ball + 0.01});
  OptimizeOptions o;
  o.shooting_intervals = 1;
  const OptimizeResult r = Optimize(p, ocp, sim, params, o);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_LE(r.kkt_residual, kKkt);
  // One variable and an active bound: the optimum is where the clubhead
  // reaches the bound, and every feasible neighbour is slower.
  ASSERT_EQ(r.constraints.size(), 1u);
  EXPECT_NEAR(r.constraints[0].value, ball + 0.01, 1e-8);
  ASSERT_EQ(r.free_parameters.size(), 1u);
  const double u = r.free_parameters[0].second;
  EXPECT_LT(u, 0.0);
  EXPECT_GT(u, -20.0);
  for (double du : {-1e-3, 1e-3}) {
    Eigen::VectorXd q = params;
    q[p.model.ParameterIndex("u_wrist")] = u + du;
    const SimulationSummary s = Simulate(p.model, p.initial(q), q, sim);
    ASSERT_TRUE(s.ok) << s.error;
    double speed = 0.0, head = 0.0;
    for (const auto& f : s.functionals) {
      if (f.name == "clubhead_speed") speed = f.value;
      if (f.name == "head_x") head = f.value;
    }
    if (head <= ball + 0.01)
      EXPECT_LT(speed, r.objective) << "u_wrist " << u + du;
    else
      EXPECT_GT(speed, r.objective) << "u_wrist " << u + du;
  }
}

}  // namespace optimal_control_test
}  // namespace
}  // namespace daedalus
