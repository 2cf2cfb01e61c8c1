// KKT solve: both dense paths agree, satisfy the system, and fail loudly.
#include "daedalus/kkt.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "pendulum.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace kkt_test {

using testing::NearRel;

// A planar two-link pendulum in maximal coordinates: 2 bodies (x, y, theta)
// joined by revolute joints, 4 constraint rows on 6 coordinates.
Model TwoBodyChain() {
  ModelBuilder b("two_body_chain");
  b.Coordinates({"x1", "y1", "th1", "x2", "y2", "th2"});
  b.KineticEnergy([](const auto& x) {
    const double m = 1.0, I = 1.0 / 12.0;
    return 0.5 * m *
               (x.v[0] * x.v[0] + x.v[1] * x.v[1] + x.v[3] * x.v[3] +
                x.v[4] * x.v[4]) +
           0.5 * I * (x.v[2] * x.v[2] + x.v[5] * x.v[5]);
  });
  b.PotentialEnergy([](const auto& x) { return 9.81 * (x.q[1] + x.q[4]); });
  b.Holonomic(
      "pivot",
      [](const auto& x) {
        using std::cos;
        using std::sin;
        Eigen::Matrix<Scalar<decltype(x)>, 2, 1> r;
        r << x.q[0] - 0.5 * sin(x.q[2]), x.q[1] + 0.5 * cos(x.q[2]);
        return r;
      },
      2);
  b.Holonomic(
      "elbow",
      [](const auto& x) {
        using std::cos;
        using std::sin;
        Eigen::Matrix<Scalar<decltype(x)>, 2, 1> r;
        r << x.q[0] + 0.5 * sin(x.q[2]) - (x.q[3] - 0.5 * sin(x.q[5])),
            x.q[1] - 0.5 * cos(x.q[2]) - (x.q[4] + 0.5 * cos(x.q[5]));
        return r;
      },
      2);
  return std::move(b).Build();
}

TEST(Kkt, SchurAndFullLuAgreeAndSatisfyTheSystem) {
  Workspace ws(TwoBodyChain());
  std::mt19937 gen{5};
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 6, -1, 1);
    const Eigen::VectorXd v = testing::RandomVector(gen, 6, -2, 2);
    ws.SetState(0.0, q, v);
    EvaluateAll(&ws);
    KktOptions schur, lu;
    lu.method = KktMethod::kFullLu;
    KktSolver s1(ws.model(), schur), s2(ws.model(), lu);
    KktResult r1, r2;
    s1.Solve(ws, ws.bias, &r1);
    s2.Solve(ws, ws.bias, &r2);
    ASSERT_GT(r1.lambda.norm(), 1e-3);  // nontrivial reactions
    EXPECT_TRUE(NearRel(r1.vdot, r2.vdot, 1e-10));
    EXPECT_TRUE(NearRel(r1.lambda, r2.lambda, 1e-10));
    // Residuals of both block rows.
    EXPECT_TRUE(NearRel(ws.M * r1.vdot - ws.J.transpose() * r1.lambda,
                        ws.Bu - ws.h, 1e-11));
    EXPECT_TRUE(NearRel(ws.J * r1.vdot, -ws.bias, 1e-11));
  }
}

TEST(Kkt, HealthReportsRankAndConditioning) {
  Workspace ws(TwoBodyChain());
  ws.SetState(0.0, Eigen::VectorXd::Constant(6, 0.1), Eigen::VectorXd::Zero(6));
  EvaluateAll(&ws);
  KktOptions o;
  o.compute_health = true;
  KktSolver s(ws.model(), o);
  KktResult r;
  s.Solve(ws, ws.bias, &r);
  EXPECT_EQ(r.health.rank_J, 4);
  EXPECT_GT(r.health.rcond_M, 0.0);
  EXPECT_GT(r.health.rcond_schur, 0.0);
  EXPECT_NEAR(r.health.min_eig_M, 1.0 / 12.0, 1e-14);
}

TEST(Kkt, RankDeficientJacobianNamesDependentConstraints) {
  ModelBuilder b("redundant");
  b.Coordinates({"x", "y", "z"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.Holonomic("plane", [](const auto& x) { return x.q[0] + x.q[1]; });
  b.Holonomic("plane_again",
              [](const auto& x) { return 2.0 * (x.q[0] + x.q[1]); });
  Workspace ws(std::move(b).Build());
  ws.SetState(0.0, Eigen::Vector3d(0.1, -0.1, 0.0), Eigen::Vector3d::Zero());
  EvaluateAll(&ws);
  KktSolver s(ws.model());
  KktResult r;
  EXPECT_THAT([&] { s.Solve(ws, ws.bias, &r); },
              ::testing::ThrowsMessage<KktError>(::testing::AllOf(
                  ::testing::HasSubstr("rank 1 < 2"),
                  ::testing::HasSubstr("dependent constraint rows"),
                  ::testing::HasSubstr("plane"))));
}

// The pivot test (KktOptions::singular_tolerance, the squared ratio of the
// smallest to the largest Cholesky pivot) catches near-singularity, not
// only exact zeros: two planes 1e-7 rad apart give J M^-1 J' a pivot ratio
// of 1e-14 (< 1e-12), and a mass 1e-13 of its neighbour's gives M one of
// 1e-13.
TEST(Kkt, NearlyDependentRowsAndNearlySingularMassAreRefused) {
  {
    ModelBuilder b("nearly_redundant");
    b.Coordinates({"x", "y", "z"});
    b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
    b.Holonomic("plane", [](const auto& x) { return x.q[0] + x.q[1]; });
    b.Holonomic("plane_tilted",
                [](const auto& x) { return x.q[0] + (1.0 + 2e-7) * x.q[1]; });
    Workspace ws(std::move(b).Build());
    ws.SetState(0.0, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero());
    EvaluateAll(&ws);
    KktSolver s(ws.model());
    KktResult r;
    EXPECT_THAT([&] { s.Solve(ws, ws.bias, &r); },
                ::testing::ThrowsMessage<KktError>(
                    ::testing::HasSubstr("dependent constraint rows")));
  }
  {
    ModelBuilder b("nearly_massless");
    b.Coordinates({"x", "light"});
    b.KineticEnergy([](const auto& x) {
      return 0.5 * x.v[0] * x.v[0] + 0.5e-13 * x.v[1] * x.v[1];
    });
    Workspace ws(std::move(b).Build());
    ws.SetState(0.0, Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero());
    EvaluateAll(&ws);
    KktSolver s(ws.model());
    KktResult r;
    EXPECT_THAT([&] { s.Solve(ws, ws.bias, &r); },
                ::testing::ThrowsMessage<KktError>(::testing::AllOf(
                    ::testing::HasSubstr("mass matrix is singular"),
                    ::testing::HasSubstr("light"))));
  }
}

TEST(Kkt, SingularMassMatrixNamesCoordinate) {
  ModelBuilder b("massless");
  b.Coordinates({"x", "phantom"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  Workspace ws(std::move(b).Build());
  ws.SetState(0.0, Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(0.0, 0.0));
  EvaluateAll(&ws);
  for (KktMethod m : {KktMethod::kSchur, KktMethod::kFullLu}) {
    KktOptions o;
    o.method = m;
    KktSolver s(ws.model(), o);
    KktResult r;
    EXPECT_THAT([&] { s.Solve(ws, ws.bias, &r); },
                ::testing::ThrowsMessage<KktError>(::testing::AllOf(
                    ::testing::HasSubstr("mass matrix is singular"),
                    ::testing::HasSubstr("phantom"))));
  }
}

TEST(Kkt, PendulumTensionMatchesCentripetalBalance) {
  // At the bottom (0,-1) moving with speed s: the rod force magnitude is
  // m g + m s^2 / l. With Phi = x^2 + y^2 - l^2, J = (2x, 2y), so the
  // generalized reaction J' lambda = (0, -2 lambda) must equal (0, T).
  const Problem p = problems::PendulumProblem();
  Workspace ws(p.model);
  const double g = problems::kPendulumGravity, s = 1.7;
  const KktResult r =
      SolveKktAt(&ws, 0.0, Eigen::Vector2d(0.0, -1.0), Eigen::Vector2d(s, 0.0));
  EXPECT_NEAR(r.reaction[1], g + s * s, 1e-12);
  EXPECT_NEAR(r.vdot[1], s * s, 1e-12);  // centripetal, towards the pivot
}

}  // namespace kkt_test
}  // namespace
}  // namespace daedalus
