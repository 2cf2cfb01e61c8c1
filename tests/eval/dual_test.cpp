// Dual numbers: first and second derivatives against closed forms.
#include "daedalus/dual.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "daedalus/model.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace dual_test {

using testing::kRoundOff;

template <class S>
S F(const S& x) {
  using std::atan2;
  using std::cos;
  using std::exp;
  using std::log;
  using std::sin;
  using std::sqrt;
  return sin(x) * exp(x) / (1.0 + x * x) + sqrt(x) * log(x) + cos(2.0 * x) -
         atan2(x, S(2.0));
}

// Closed-form first and second derivatives of F at x.
double DF(double x) {
  const double g = std::sin(x) * std::exp(x),
               dg = (std::cos(x) + std::sin(x)) * std::exp(x);
  const double h = 1 + x * x, dh = 2 * x;
  return (dg * h - g * dh) / (h * h) + std::log(x) / (2 * std::sqrt(x)) +
         1 / std::sqrt(x) - 2 * std::sin(2 * x) - 2.0 / (4 + x * x);
}

TEST(Dual, FirstDerivativeMatchesClosedForm) {
  for (double x : {0.3, 1.1, 2.7}) {
    const D1 r = F(D1(x, 1.0));
    EXPECT_NEAR(r.v, F(x), kRoundOff);
    EXPECT_NEAR(r.d, DF(x), kRoundOff * 10);
  }
}

TEST(Dual, NestedGivesSecondDerivative) {
  // d2/dx2 of x^3 sin(x) = 6x sin x + 6x^2 cos x - x^3 sin x
  for (double x : {0.2, 1.3, -2.1}) {
    const D2 X(D1(x, 1.0), D1(1.0, 0.0));
    const D2 r = X * X * X * sin(X);
    const double exact =
        6 * x * std::sin(x) + 6 * x * x * std::cos(x) - x * x * x * std::sin(x);
    EXPECT_NEAR(r.d.d, exact, kRoundOff * 10);
    EXPECT_NEAR(r.v.d, 3 * x * x * std::sin(x) + x * x * x * std::cos(x),
                kRoundOff * 10);
  }
}

TEST(Dual, MixedPartialOfTwoVariables) {
  // f = x^2 y + exp(x y): f_xy = 2x + exp(xy)(1 + xy)
  const double x = 0.7, y = -1.2;
  const D2 X(D1(x, 1.0), D1(0.0, 0.0));  // inner tangent on x
  const D2 Y(D1(y, 0.0), D1(1.0, 0.0));  // outer tangent on y
  const D2 f = X * X * Y + exp(X * Y);
  EXPECT_NEAR(f.d.d, 2 * x + std::exp(x * y) * (1 + x * y), kRoundOff);
}

TEST(Dual, EigenVectorsOfDuals) {
  VecX<D1> a(3);
  for (int i = 0; i < 3; ++i) a[i] = D1(i + 1.0, i == 1 ? 1.0 : 0.0);
  const D1 n2 = a.squaredNorm();  // 1 + 4 + 9, derivative 2 * 2
  EXPECT_NEAR(n2.v, 14.0, kRoundOff);
  EXPECT_NEAR(n2.d, 4.0, kRoundOff);
  const D1 n = a.norm();
  EXPECT_NEAR(n.d, 2.0 / std::sqrt(14.0), kRoundOff);
}

}  // namespace dual_test
}  // namespace
}  // namespace daedalus
