// The shipped golfer_3d optimization's optimum (examples/optimal_control/
// golfer_3d.json; docs/optimal_control.md, "golfer_3d") checked without
// IPOPT: IPOPT's 110 iterations take 17 minutes, beyond CI, so the test
// takes the solution it returned (the 30 torque coefficients below, from
// `build/problems/golfer_3d --optimize examples/optimal_control/
// golfer_3d.json`) and verifies the first-order optimality conditions
// there from the NLP's own values and exact gradients:
//   - feasibility: every bound and constraint within 1e-8 (the spec's
//     constraint tolerance);
//   - stationarity: with the active set read off the point (coefficients
//     on their torque bounds, constraint rows on theirs), the multipliers
//     of the active rows by least squares on the free coefficients'
//     components of grad f + J_A' lambda_A = 0, the residual within 1e-6
//     of |grad f| (the spec's tolerance);
//   - the signs: each active row's multiplier and each active bound's
//     reduced gradient point out of the feasible set (a local minimum of
//     the NLP's f = -head speed, not a saddle on the active set).
// A wrong gradient, a moved optimum or a changed model fails one of them.
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/optimal_control.hpp"
#include "golfer_3d.hpp"
#include "optimal_control/shooting.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace golfer_3d_optimum_test {

// The coefficients IPOPT returned, channel by channel (N m at the knots
// 0, 0.072, ..., 0.36 s), in the spec's order.
const double kOptimum[5][6] = {
    {-148.4750851287186, 199.9999213722311, 199.99994984190664,
     2.201005549283353, 199.99989011029263, 199.9996195546688},
    {149.99998353803124, -32.65848095757916, 20.601498158198897,
     149.99999750101074, 149.99999828690656, -23.06895230784224},
    {39.52490201667993, 31.387461558147304, 28.675557261180156,
     1.3628935875250179, 89.99999839719878, 89.99998106884361},
    {-31.701437579735867, 89.99999372130922, 89.9999811274584,
     -43.910574768849834, 89.99999635628791, 89.9999234702848},
    {-18.999994902156878, -2.253526213536304, 11.006609851120295,
     -18.999999043561616, -18.999999381284457, 21.9999961518927}};
// Its head speed at impact (m/s), as the run reported it.
constexpr double kSpeed = 49.23496062899186;

TEST(Golfer3dOptimum, MeetsTheFirstOrderConditions) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "the golfer_3d NLP's gradient: 30 forward directions at rtol 1e-10");
  std::ifstream in(std::string(DAEDALUS_SOURCE_DIR) +
                   "/examples/optimal_control/golfer_3d.json");
  ASSERT_TRUE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  Problem p = problems::Golfer3dProblemForm(mb::DynamicsForm::kRecursive);
  SimulationOptions sim = p.defaults;
  OptimizeSpec spec = ParseOptimizeSpec(text.str(), &sim);
  ASSERT_EQ(spec.problem.controls.size(), 5u);
  for (size_t c = 0; c < 5; ++c) {
    ASSERT_EQ(spec.problem.controls[c].knots.size(), 6u);
    spec.problem.controls[c].initial =
        Eigen::Map<const Eigen::VectorXd>(kOptimum[c], 6);
  }
  internal::ShootingNlp nlp(p, spec.problem, sim, p.model.default_parameters(),
                            spec.options);
  ASSERT_EQ(nlp.n(), 30);  // single shooting: no nodes
  const Eigen::VectorXd w = nlp.x0();
  double f = 0.0;
  Eigen::VectorXd g, grad;
  Eigen::MatrixXd jac;
  ASSERT_TRUE(nlp.Values(w, &f, &g)) << nlp.error();
  EXPECT_NEAR(-f, kSpeed, 1e-6);
  ASSERT_TRUE(nlp.Gradients(w, &grad, &jac)) << nlp.error();

  // Feasibility, and the active set.
  const double feas = spec.options.constraint_tolerance;
  std::vector<int> free, at_lower, at_upper, rows;
  std::vector<double> row_side;  // +1 at the upper bound, -1 at the lower
  for (int i = 0; i < nlp.n(); ++i) {
    const double l = nlp.x_l()[i], u = nlp.x_u()[i];
    ASSERT_GE(w[i], l - feas) << nlp.variable_names()[size_t(i)];
    ASSERT_LE(w[i], u + feas) << nlp.variable_names()[size_t(i)];
    const double near = 1e-5 * (u - l);
    if (w[i] - l <= near)
      at_lower.push_back(i);
    else if (u - w[i] <= near)
      at_upper.push_back(i);
    else
      free.push_back(i);
  }
  for (int r = 0; r < nlp.m(); ++r) {
    const std::string& name = nlp.constraint_names()[size_t(r)];
    EXPECT_GE(g[r], nlp.g_l()[r] - feas) << name;
    EXPECT_LE(g[r], nlp.g_u()[r] + feas) << name;
    if (std::abs(g[r] - nlp.g_u()[r]) <= 1e-6) {
      rows.push_back(r);
      row_side.push_back(1.0);
    } else if (std::abs(g[r] - nlp.g_l()[r]) <= 1e-6) {
      rows.push_back(r);
      row_side.push_back(-1.0);
    }
  }
  std::printf(
      "golfer_3d optimum: %.9f m/s, %zu free coefficients, %zu at a bound, "
      "%zu active rows\n",
      -f, free.size(), at_lower.size() + at_upper.size(), rows.size());
  ASSERT_FALSE(free.empty());
  ASSERT_LE(rows.size(), free.size());

  // Multipliers of the active rows from the free components: grad_F +
  // J_AF' lambda = 0 (IPOPT's convention: lambda >= 0 at an upper bound).
  const Eigen::Index nf = static_cast<Eigen::Index>(free.size());
  const Eigen::Index na = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd A(nf, na);
  Eigen::VectorXd b(nf);
  for (Eigen::Index i = 0; i < nf; ++i) {
    b[i] = -grad[free[size_t(i)]];
    for (Eigen::Index k = 0; k < na; ++k)
      A(i, k) = jac(rows[size_t(k)], free[size_t(i)]);
  }
  const Eigen::VectorXd lambda =
      na > 0 ? Eigen::VectorXd(A.colPivHouseholderQr().solve(b))
             : Eigen::VectorXd();
  const double scale = grad.cwiseAbs().maxCoeff();
  const Eigen::VectorXd residual =
      na > 0 ? Eigen::VectorXd(A * lambda - b) : Eigen::VectorXd(-b);
  std::printf("  stationarity %.2e of |grad f| %.3g\n",
              residual.cwiseAbs().maxCoeff() / scale, scale);
  EXPECT_LE(residual.cwiseAbs().maxCoeff(), 1e-6 * scale)
      << "stationarity on the free coefficients";
  for (Eigen::Index k = 0; k < na; ++k)
    EXPECT_GE(row_side[size_t(k)] * lambda[k], -1e-6 * scale)
        << nlp.constraint_names()[size_t(rows[size_t(k)])] << ": multiplier "
        << lambda[k];
  // The reduced gradient r = grad + J_A' lambda of a coefficient on its
  // lower bound is >= 0 (z_L = r), on its upper bound <= 0.
  Eigen::VectorXd reduced = grad;
  for (Eigen::Index k = 0; k < na; ++k)
    reduced += lambda[k] * jac.row(rows[size_t(k)]).transpose();
  for (int i : at_lower)
    EXPECT_GE(reduced[i], -1e-6 * scale) << nlp.variable_names()[size_t(i)];
  for (int i : at_upper)
    EXPECT_LE(reduced[i], 1e-6 * scale) << nlp.variable_names()[size_t(i)];
}

}  // namespace golfer_3d_optimum_test
}  // namespace
}  // namespace daedalus
