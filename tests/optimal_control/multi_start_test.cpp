// Several starts of one optimal control problem (optimal_control.hpp:
// FreeVariables, WithInitialGuess, GroupOptima, OptimizeFromStarts) on the
// tilted double well (double_well.hpp), whose two minima are the roots of
// a cubic: both found, the best the global one, each start's result the
// same to the last bit as Optimize from that start alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "daedalus/optimal_control.hpp"
#include "double_well.hpp"

namespace daedalus {
namespace {
namespace multi_start_test {

using ::testing::HasSubstr;

// Free: the control u on knots {0, 1} within [-4, 4] and x0 within
// [-2, 2]; the objective well + 0.1 int u^2 dt.
OptimalControlProblem WellProblem() {
  OptimalControlProblem ocp;
  ocp.controls.push_back({.input = "u",
                          .knots = {0.0, 1.0},
                          .initial = Eigen::VectorXd::Zero(2),
                          .lower = Eigen::VectorXd::Constant(1, -4.0),
                          .upper = Eigen::VectorXd::Constant(1, 4.0)});
  ocp.parameters.push_back({"x0", -2.0, 2.0, 0.5});
  ocp.objective = {{"well", 1.0}, {"effort:u", 0.1}};
  return ocp;
}

OptimizeOptions Solver() {
  OptimizeOptions o;
  o.shooting_intervals = 1;
  o.tolerance = 1e-10;
  return o;
}

// The minimizers of phi(x) = (x^2 - 1)^2 + s x: Newton on phi' from the
// two sides.
double Minimizer(double s, double from) {
  double x = from;
  for (int k = 0; k < 60; ++k)
    x -= (4 * x * x * x - 4 * x + s) / (12 * x * x - 4);
  return x;
}

double Phi(double s, double x) { return (x * x - 1) * (x * x - 1) + s * x; }

TEST(MultiStart, FreeVariablesAreTheNlpsInItsOrder) {
  const Problem p = test_models::DoubleWellProblem();
  OptimalControlProblem ocp = WellProblem();
  ocp.parameters[0].initial = 3.0;  // projected into [-2, 2]
  const std::vector<FreeVariable> v =
      FreeVariables(p, ocp, p.defaults, p.model.default_parameters());
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "u.c0");
  EXPECT_EQ(v[1].name, "u.c1");
  EXPECT_EQ(v[2].name, "x0");
  EXPECT_EQ(v[0].lower, -4.0);
  EXPECT_EQ(v[1].upper, 4.0);
  EXPECT_EQ(v[2].lower, -2.0);
  EXPECT_EQ(v[2].upper, 2.0);
  EXPECT_EQ(v[2].initial, 2.0);
  // A free parameter without a guess starts at the run's value.
  ocp.parameters[0].initial = std::nan("");
  Eigen::VectorXd params = p.model.default_parameters();
  params[p.model.ParameterIndex("x0")] = -0.25;
  EXPECT_EQ(FreeVariables(p, ocp, p.defaults, params)[2].initial, -0.25);
}

TEST(MultiStart, WithInitialGuessSetsNamedGuessesAndRefusesOthers) {
  const OptimalControlProblem ocp =
      WithInitialGuess(WellProblem(), {{"u.c1", 1.5}, {"x0", -1.0}});
  ASSERT_EQ(ocp.controls[0].initial.size(), 2);
  EXPECT_EQ(ocp.controls[0].initial[0], 0.0);
  EXPECT_EQ(ocp.controls[0].initial[1], 1.5);
  EXPECT_EQ(ocp.parameters[0].initial, -1.0);
  // A channel without guesses gets one per knot, zero but the named one.
  OptimalControlProblem bare = WellProblem();
  bare.controls[0].initial.resize(0);
  const OptimalControlProblem g = WithInitialGuess(bare, {{"u.c0", 2.0}});
  ASSERT_EQ(g.controls[0].initial.size(), 2);
  EXPECT_EQ(g.controls[0].initial[0], 2.0);
  EXPECT_EQ(g.controls[0].initial[1], 0.0);
  EXPECT_THAT(
      [] {
        WithInitialGuess(WellProblem(), {{"u.c2", 1.0}});
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("initial guess for 'u.c2': no free variable of that "
                    "name; the free variables are u.c0 .. u.c1, x0")));
}

TEST(MultiStart, GroupOptimaNumbersTheOptimaBestFirst) {
  const auto v = [](double a) { return Eigen::VectorXd::Constant(1, a); };
  // Points 1 and 2 are the same optimum (within 1e-6 in f, 1e-3 in x);
  // point 3 has the same objective elsewhere; point 4 did not converge.
  const std::vector<double> f = {2.0, 0.5, 0.5 + 1e-9, 0.5, -7.0};
  const std::vector<Eigen::VectorXd> x = {v(1.0), v(-1.0), v(-1.0 + 1e-6),
                                          v(1.0), v(0.0)};
  const std::vector<bool> ok = {true, true, true, true, false};
  EXPECT_EQ(GroupOptima(f, x, ok, false), (std::vector<int>{3, 1, 1, 2, 0}));
  // Maximizing: the largest first.
  EXPECT_EQ(GroupOptima(f, x, ok, true), (std::vector<int>{1, 2, 2, 3, 0}));
  // A tighter tolerance splits points 1 and 2.
  EXPECT_EQ(GroupOptima(f, x, ok, false, {1e-12, 1e-3}),
            (std::vector<int>{4, 1, 3, 2, 0}));
}

TEST(MultiStart, FindsBothMinimaAndTheGlobalIsBest) {
  const Problem p = test_models::DoubleWellProblem();
  const Eigen::VectorXd params = p.model.default_parameters();
  const double s = params[p.model.ParameterIndex("s")];
  const double global = Minimizer(s, -1.0), local = Minimizer(s, 1.0);
  ASSERT_LT(Phi(s, global), Phi(s, local));
  // The spec's own start (x0 = 0.5) and two others. IPOPT's first steps
  // cross the hump between the wells, so which start ends where is its
  // affair; the ends are the two minima.
  const std::vector<std::vector<std::pair<std::string, double>>> starts = {
      {}, {{"x0", -1.5}, {"u.c1", 0.5}}, {{"x0", 1.5}}};
  const MultiStartResult r = OptimizeFromStarts(p, WellProblem(), p.defaults,
                                                params, starts, Solver());
  ASSERT_EQ(r.results.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(r.errors[i].empty()) << r.errors[i];
    EXPECT_TRUE(r.results[i].ok) << r.results[i].message;
  }
  EXPECT_EQ(r.distinct_optima, 2);
  ASSERT_GE(r.best, 0);
  EXPECT_EQ(r.optimum[static_cast<size_t>(r.best)], 1);
  for (size_t i = 0; i < 3; ++i) {
    // Optimum 1 is the global minimum, 2 the other; u = 0 at both.
    const double x = r.optimum[i] == 1 ? global : local;
    EXPECT_NEAR(r.results[i].objective, Phi(s, x), 1e-8) << i;
    const auto v = FreeValues(r.results[i]);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[2].first, "x0");
    EXPECT_NEAR(v[2].second, x, 1e-6) << i;
    EXPECT_NEAR(v[0].second, 0.0, 1e-5) << i;
    EXPECT_NEAR(v[1].second, 0.0, 1e-5) << i;
  }
  // Each start's result is Optimize's from that start, to the last bit.
  for (size_t i = 0; i < starts.size(); ++i) {
    const OptimizeResult alone =
        Optimize(p, WithInitialGuess(WellProblem(), starts[i]), p.defaults,
                 params, Solver());
    EXPECT_EQ(alone.objective, r.results[i].objective) << i;
    EXPECT_EQ(alone.iterations, r.results[i].iterations) << i;
    EXPECT_EQ(FreeValues(alone), FreeValues(r.results[i])) << i;
  }
}

TEST(MultiStart, BadStartIsRefusedBeforeAnyRun) {
  const Problem p = test_models::DoubleWellProblem();
  EXPECT_THAT(
      [&] {
        OptimizeFromStarts(p, WellProblem(), p.defaults,
                           p.model.default_parameters(),
                           {{{"x0", 1.0}}, {{"x1", 0.0}}}, Solver());
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("start 1: initial guess for 'x1': no free variable")));
}

}  // namespace multi_start_test
}  // namespace
}  // namespace daedalus
