// The expression graph's piecewise-linear interpolation on a knot table
// (eval/expr_knots.cpp: kPwLinear, kPwSlope, kHat, kHatSlope), recorded by
// the piecewise-linear control spline: its value is the spline's double
// path (EvaluateControl) to the last bit at every t (before, on and
// between the knots, after), its forward and reverse derivatives in t and
// in the coefficients are the hand-written ones, and the program gives the
// graph's values.
#include <gtest/gtest.h>

#include <vector>

#include "daedalus/optimal_control.hpp"
#include "eval/expr_graph.hpp"
#include "eval/expr_program.hpp"

namespace daedalus {
namespace {
namespace knots_test {

using internal::ExprGraph;
using internal::ExprProgram;

const std::vector<double> kKnots = {0.0, 0.1, 0.3, 0.4};
const std::vector<double> kCoef = {1.0, -2.0, 3.0, 0.5};
const std::vector<double> kTimes = {-1.0, 0.0,  0.05, 0.1, 0.2,
                                    0.3,  0.35, 0.4,  2.0};

// u, du/dt and du/dc_j by hand: slope on the interval holding t (the last
// one holds the last knot; 0 outside the knots), the hats.
struct Hand {
  double u, ut;
  std::vector<double> uc;
};
Hand ByHand(double t) {
  const int n = static_cast<int>(kKnots.size());
  const bool inside = t >= kKnots[0] && t <= kKnots[n - 1];
  const double tc = t < kKnots[0] ? kKnots[0] : (t > kKnots[3] ? kKnots[3] : t);
  int i = 0;
  while (i + 2 < n && kKnots[i + 1] <= tc) ++i;
  const double h = kKnots[i + 1] - kKnots[i], s = (tc - kKnots[i]) / h;
  Hand r;
  r.u = kCoef[i] + (kCoef[i + 1] - kCoef[i]) * s;
  r.ut = inside ? (kCoef[i + 1] - kCoef[i]) / h : 0.0;
  r.uc.assign(kKnots.size(), 0.0);
  r.uc[i] = 1.0 - s;
  r.uc[i + 1] = s;
  return r;
}

TEST(KnotTable, ValueAndDerivativesForwardReverseAndProgram) {
  ExprGraph g;
  const int t = g.Input(0);
  std::vector<int> c;
  for (std::size_t j = 0; j < kCoef.size(); ++j)
    c.push_back(g.Input(static_cast<int>(j) + 1));
  const int u = g.PwLinear(t, kKnots, c);
  // The same table again is the same node.
  EXPECT_EQ(g.PwLinear(t, kKnots, c), u);
  std::vector<int> outputs = {u};
  std::vector<int> seed(kCoef.size() + 1, 0);
  for (std::size_t k = 0; k <= kCoef.size(); ++k) {
    seed[k] = 1;
    outputs.push_back(g.Derivative({u}, seed)[0]);
    seed[k] = 0;
  }
  std::vector<int> wrt;
  for (int k = 0; k <= static_cast<int>(kCoef.size()); ++k) wrt.push_back(k);
  const std::vector<int> reverse = g.Gradient({u}, {1}, wrt);
  outputs.insert(outputs.end(), reverse.begin(), reverse.end());
  // d/dt of du/dc_1 (the hat's slope): 1/h_0 on the first interval,
  // -1/h_1 on the second.
  seed.assign(seed.size(), 0);
  seed[0] = 1;
  outputs.push_back(g.Derivative({outputs[3]}, seed)[0]);
  std::vector<int> inputs;
  for (int k = 0; k <= static_cast<int>(kCoef.size()); ++k) inputs.push_back(k);
  const ExprProgram prog(g, inputs, outputs);
  std::vector<double> scratch, out(outputs.size());
  prog.InitScratch(&scratch);
  ControlChannel ch;
  ch.input = "u";
  ch.knots = kKnots;
  for (double tv : kTimes) {
    std::vector<double> in = {tv};
    in.insert(in.end(), kCoef.begin(), kCoef.end());
    const std::vector<double> x = g.Evaluate(in);
    prog.Run(in.data(), out.data(), scratch.data());
    const Hand e = ByHand(tv);
    Eigen::VectorXd tt(1);
    tt << tv;
    const Eigen::VectorXd uc = EvaluateControl(
        ch, Eigen::Map<const Eigen::VectorXd>(kCoef.data(), 4), tt);
    EXPECT_EQ(x[u], uc[0]) << "t = " << tv;  // the double path, bit for bit
    EXPECT_NEAR(x[u], e.u, 1e-15) << "t = " << tv;
    const std::size_t nc = kCoef.size();
    EXPECT_NEAR(x[outputs[1]], e.ut, 1e-13) << "t = " << tv;
    for (std::size_t j = 0; j < nc; ++j) {
      EXPECT_NEAR(x[outputs[2 + j]], e.uc[j], 1e-15) << "t = " << tv;
      EXPECT_EQ(x[outputs[2 + nc + 1 + j]], x[outputs[2 + j]]) << "t = " << tv;
    }
    EXPECT_EQ(x[outputs[2 + nc]], x[outputs[1]]) << "t = " << tv;
    const double hs =
        (tv >= 0.0 && tv < 0.1) ? 10.0 : (tv >= 0.1 && tv < 0.3 ? -5.0 : 0.0);
    EXPECT_NEAR(x[outputs.back()], hs, 1e-12) << "t = " << tv;
    for (std::size_t k = 0; k < outputs.size(); ++k)
      EXPECT_EQ(out[k], x[outputs[k]]) << "output " << k << ", t = " << tv;
  }
}

TEST(KnotTable, ConstantArgumentsFold) {
  ExprGraph g;
  const int t = g.Constant(0.2);
  std::vector<int> c;
  for (double v : kCoef) c.push_back(g.Constant(v));
  const int u = g.PwLinear(t, kKnots, c);
  ASSERT_TRUE(g.IsConstant(u));
  EXPECT_NEAR(g.node(u).value, 0.5, 1e-14);  // -2 + 5 * 0.5
  // Equal coefficients: the constant itself.
  const int x = g.Input(1);
  EXPECT_EQ(g.PwLinear(g.Input(0), kKnots, {x, x, x, x}), x);
}

}  // namespace knots_test
}  // namespace
}  // namespace daedalus
