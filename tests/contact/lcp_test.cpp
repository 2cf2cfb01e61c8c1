// The contact stage's LCP solver (src/contact/lcp.hpp): solutions checked
// against hand-solved problems and the complementarity conditions, the
// enumeration's tie-breaking, principal pivoting above the enumeration's
// size, and a problem without solution reported as such.
#include "contact/lcp.hpp"

#include <gtest/gtest.h>

#include <random>

namespace daedalus::internal {
namespace {
namespace lcp_test {

// Round-off of the 2 x 2 and 3 x 3 solves (entries O(1)).
constexpr double kRoundOff = 1e-13;

// w = A z + q >= 0, z >= 0, w'z = 0 to `tol`.
::testing::AssertionResult Complementary(const Eigen::MatrixXd& A,
                                         const Eigen::VectorXd& q,
                                         const LcpSolution& s,
                                         double tol) {
  if (!s.solved) return ::testing::AssertionFailure() << "not solved";
  const Eigen::VectorXd w = A * s.z + q;
  for (Eigen::Index i = 0; i < q.size(); ++i) {
    if (w[i] < -tol || s.z[i] < -tol || std::abs(w[i] * s.z[i]) > tol)
      return ::testing::AssertionFailure()
             << "row " << i << ": w " << w[i] << ", z " << s.z[i];
  }
  return ::testing::AssertionSuccess();
}

TEST(Lcp, NewtonsCradleImpulsesOfThreeBalls) {
  // Unit masses, contacts u12 = v2 - v1, u23 = v3 - v2: A = J J'. Ball 1
  // strikes at 1 with e = 1: q = (1 + e) u- = (-2, 0), both contacts push:
  // A P = (2, 0), P = (4/3, 2/3).
  Eigen::MatrixXd A(2, 2);
  A << 2, -1, -1, 2;
  const Eigen::Vector2d q(-2.0, 0.0);
  const LcpSolution s = SolveLcp(A, q);
  ASSERT_TRUE(s.solved);
  EXPECT_EQ(s.method, "enumeration");
  EXPECT_NEAR(s.z[0], 4.0 / 3.0, kRoundOff);
  EXPECT_NEAR(s.z[1], 2.0 / 3.0, kRoundOff);
  EXPECT_TRUE(Complementary(A, q, s, kRoundOff));
}

TEST(Lcp, SeparatingContactTakesNoImpulse) {
  // The second contact separates (q > 0): z = (1, 0), w = (0, 1.5).
  Eigen::MatrixXd A(2, 2);
  A << 2, 0.5, 0.5, 1;
  const Eigen::Vector2d q(-2.0, 2.0);
  const LcpSolution s = SolveLcp(A, q);
  ASSERT_TRUE(s.solved);
  EXPECT_NEAR(s.z[0], 1.0, kRoundOff);
  EXPECT_EQ(s.z[1], 0.0);
  EXPECT_NEAR(s.w[1], 2.5, kRoundOff);
  EXPECT_TRUE(Complementary(A, q, s, kRoundOff));
}

TEST(Lcp, TiesFollowThePreference) {
  // Two identical contact normals: A = [1 1; 1 1] is only semidefinite,
  // and every z >= 0 with z1 + z2 = 1 solves the LCP with w = 0. The
  // enumeration picks the smallest support that leaves the flagged row
  // out.
  Eigen::MatrixXd A(2, 2);
  A << 1, 1, 1, 1;
  const Eigen::Vector2d q(-1.0, -1.0);
  const LcpSolution s0 = SolveLcp(A, q, {true, false});
  ASSERT_TRUE(s0.solved);
  EXPECT_EQ(s0.z[0], 0.0);
  EXPECT_NEAR(s0.z[1], 1.0, kRoundOff);
  const LcpSolution s1 = SolveLcp(A, q, {false, true});
  ASSERT_TRUE(s1.solved);
  EXPECT_NEAR(s1.z[0], 1.0, kRoundOff);
  EXPECT_EQ(s1.z[1], 0.0);
  EXPECT_TRUE(Complementary(A, q, s0, kRoundOff));
  EXPECT_TRUE(Complementary(A, q, s1, kRoundOff));
}

TEST(Lcp, PrincipalPivotingAboveTheEnumeration) {
  // A random symmetric positive definite A of size 16 (> 12) with a q of
  // both signs: Murty's scheme is finite on it (a P-matrix).
  const int n = 16;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd B(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) B(i, j) = u(rng);
  const Eigen::MatrixXd A = B * B.transpose() + Eigen::MatrixXd::Identity(n, n);
  Eigen::VectorXd q(n);
  for (int i = 0; i < n; ++i) q[i] = u(rng);
  const LcpSolution s = SolveLcp(A, q);
  ASSERT_TRUE(s.solved);
  EXPECT_EQ(s.method, "principal pivoting");
  // Both positive and zero components: a real complementarity problem.
  int support = 0;
  for (int i = 0; i < n; ++i) support += s.z[i] > 0.0 ? 1 : 0;
  EXPECT_GT(support, 0);
  EXPECT_LT(support, n);
  EXPECT_TRUE(Complementary(A, q, s, 1e-11));
}

TEST(Lcp, NoSolutionIsReported) {
  // w = -z - 1 >= 0 with z >= 0 has no solution.
  const Eigen::MatrixXd A = -Eigen::MatrixXd::Identity(1, 1);
  const Eigen::VectorXd q = Eigen::VectorXd::Constant(1, -1.0);
  const LcpSolution s = SolveLcp(A, q);
  EXPECT_FALSE(s.solved);
  EXPECT_GT(s.residual, 0.5);
}

}  // namespace lcp_test
}  // namespace
}  // namespace daedalus::internal
