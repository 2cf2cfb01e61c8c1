// IfPositive and Clamp (dual.hpp, sym.hpp): branch-free selection in model
// code. For every scalar type a user function is called with (double, the
// duals, Sym), the value and the derivatives are those of the chosen
// branch, on both sides of the condition; on Sym it is recorded (so the
// function compiles), differentiated forward and reverse, interpreted and
// emitted as native-kernel source.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "daedalus/dual.hpp"
#include "daedalus/sym.hpp"
#include "eval/expr_graph.hpp"
#include "eval/expr_program.hpp"

namespace daedalus {
namespace {
namespace select_test {

using internal::ExprGraph;
using internal::ExprProgram;
using internal::TraceScope;

// f(x, y) = x^2 y where x > y, else sin(y); written once for every type.
template <class S>
S F(const S& x, const S& y) {
  return IfPositive(S(x - y), S(x * x * y), S(sin(y)));
}
// The branches and their partial derivatives, by hand.
struct Branch {
  double f, fx, fy, fxx;
};
Branch Expected(double x, double y) {
  if (x > y) return {x * x * y, 2 * x * y, x * x, 2 * y};
  return {std::sin(y), 0.0, std::cos(y), 0.0};
}
// Points on both sides of x = y.
const double kPoints[][2] = {{0.9, 0.4}, {0.3, 0.8}, {-0.2, -0.5}, {0.5, 0.5}};

TEST(IfPositive, DoubleAndDualsFollowTheChosenBranch) {
  for (const auto& p : kPoints) {
    const double x = p[0], y = p[1];
    const Branch e = Expected(x, y);
    EXPECT_EQ(F(x, y), e.f);
    // One direction at a time (D1), then both at once (M1).
    EXPECT_EQ(F(D1(x, 1.0), D1(y, 0.0)).d, e.fx);
    EXPECT_EQ(F(D1(x, 0.0), D1(y, 1.0)).d, e.fy);
    M1 mx(x), my(y);
    mx.d.c[0] = 1.0;
    my.d.c[1] = 1.0;
    const M1 m = F(mx, my);
    EXPECT_EQ(m.v, e.f);
    EXPECT_EQ(m.d.c[0], e.fx);
    EXPECT_EQ(m.d.c[1], e.fy);
    // Second order along x (D2).
    const D2 x2(D1(x, 1.0), D1(1.0, 0.0));
    const D2 f2 = F(x2, D2(D1(y, 0.0)));
    EXPECT_EQ(f2.v.v, e.f);
    EXPECT_EQ(f2.d.v, e.fx);
    EXPECT_NEAR(f2.d.d, e.fxx, 1e-15);
  }
}

TEST(IfPositive, SymIsRecordedDifferentiatedInterpretedAndEmitted) {
  ExprGraph g;
  int f = 0;
  {
    const TraceScope scope(&g);
    f = F(Sym::FromNode(g.Input(0)), Sym::FromNode(g.Input(1))).node();
  }
  const std::vector<int> dfx = g.Derivative({f}, {1, 0});
  const int fx = dfx[0];
  const int fy = g.Derivative({f}, {0, 1})[0];
  const int fxx = g.Derivative({fx}, {1, 0})[0];
  const std::vector<int> grad = g.Gradient({f}, {1}, {0, 1});
  const std::vector<int> outputs = {f, fx, fy, fxx, grad[0], grad[1]};
  const ExprProgram prog(g, {0, 1}, outputs);
  std::vector<double> scratch;
  prog.InitScratch(&scratch);
  for (const auto& p : kPoints) {
    const Branch e = Expected(p[0], p[1]);
    const std::vector<double> v = g.Evaluate({p[0], p[1]});
    EXPECT_EQ(v[f], e.f);
    EXPECT_EQ(v[fx], e.fx);
    EXPECT_EQ(v[fy], e.fy);
    EXPECT_NEAR(v[fxx], e.fxx, 1e-15);
    EXPECT_EQ(v[grad[0]], e.fx);  // reverse mode
    EXPECT_EQ(v[grad[1]], e.fy);
    double out[6];
    prog.Run(p, out, scratch.data());
    for (int k = 0; k < 6; ++k) EXPECT_EQ(out[k], v[outputs[k]]) << k;
  }
  // The native kernel's source selects the same way.
  const std::string src = prog.EmitCpp("k");
  EXPECT_NE(src.find(" > 0.0 ? "), std::string::npos) << src;
}

TEST(IfPositive, TheBranchNotChosenMayBeNonFinite) {
  // log(x) for x <= 0 is NaN or -inf: a product-based blend would leak it.
  ExprGraph g;
  int f = 0;
  {
    const TraceScope scope(&g);
    const Sym x = Sym::FromNode(g.Input(0));
    f = IfPositive(x, log(x), Sym(-1.0) * x).node();
  }
  const int df = g.Derivative({f}, {1})[0];
  const std::vector<double> v = g.Evaluate({-2.0});
  EXPECT_EQ(v[f], 2.0);
  EXPECT_EQ(v[df], -1.0);
  const std::vector<double> w = g.Evaluate({0.0});
  EXPECT_EQ(w[f], 0.0);
  EXPECT_EQ(w[df], -1.0);
  const D1 d = IfPositive(D1(-2.0, 1.0), log(D1(-2.0, 1.0)), D1(2.0, -1.0));
  EXPECT_EQ(d.v, 2.0);
  EXPECT_EQ(d.d, -1.0);
}

TEST(IfPositive, AConstantConditionIsDecidedWhenRecorded) {
  ExprGraph g;
  const TraceScope scope(&g);
  const Sym x = Sym::FromNode(g.Input(0));
  EXPECT_EQ(IfPositive(Sym(2.0), x, Sym(3.0)).node(), x.node());
  EXPECT_EQ(IfPositive(Sym(-2.0), Sym(3.0), x).node(), x.node());
  EXPECT_EQ(IfPositive(Sym(0.0), Sym(3.0), x).node(), x.node());
  EXPECT_EQ(IfPositive(x, x, x).node(), x.node());
}

// The branching clamp it replaces (golf_swing.hpp's Psi before).
double ClampByIf(double x, double lo, double hi) {
  if (x > hi) x = hi;
  if (x < lo) x = lo;
  return x;
}

TEST(Clamp, MatchesTheBranchingFormBitForBitWithItsDerivative) {
  ExprGraph g;
  int c = 0;
  {
    const TraceScope scope(&g);
    c = Clamp(Sym::FromNode(g.Input(0)), Sym(-0.5), Sym(1.0)).node();
  }
  const int dc = g.Derivative({c}, {1})[0];
  for (double x : {-3.0, -0.5, -0.25, 0.0, 0.7, 1.0, 1.0 + 1e-16, 2.5}) {
    const double ref = ClampByIf(x, -0.5, 1.0);
    const double inside = x > -0.5 && x < 1.0 ? 1.0 : 0.0;
    EXPECT_EQ(Clamp(x, -0.5, 1.0), ref) << x;
    const D1 d = Clamp(D1(x, 1.0), D1(-0.5), D1(1.0));
    EXPECT_EQ(d.v, ref) << x;
    // At a bound the constant branch is chosen (x > hi and x < lo are
    // strict, so x == hi keeps x, whose derivative is 1).
    const double at_bound = x == 1.0 || x == -0.5 ? 1.0 : inside;
    EXPECT_EQ(d.d, at_bound) << x;
    const std::vector<double> v = g.Evaluate({x});
    EXPECT_EQ(v[c], ref) << x;
    EXPECT_EQ(v[dc], at_bound) << x;
  }
}

}  // namespace select_test
}  // namespace
}  // namespace daedalus
