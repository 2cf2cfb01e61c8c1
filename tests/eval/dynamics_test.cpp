// Derived dynamics against the seeds' manufactured numbers and closed forms.
#include "daedalus/dynamics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "daedalus/kkt.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace dynamics_test {

using testing::kRoundOff;
using testing::NearRel;

Eigen::VectorXd V(std::initializer_list<double> x) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(x.size()));
  Eigen::Index i = 0;
  for (double e : x) v[i++] = e;
  return v;
}

// Seed 003 "a small check": inertia 2, stiffness 3, damping 0.2 at angle 0.2,
// rate 1, no input: acceleration (-0.6 - 0.2)/2 = -0.4 and Edot = -0.2 W.
TEST(SeedOneCoordinate, AccelerationAndEnergyRate) {
  Workspace ws(testing::SeedOneCoordinate());
  const KktResult r = SolveKktAt(&ws, 0.0, V({0.2}), V({1.0}));
  EXPECT_NEAR(r.vdot[0], -0.4, kRoundOff);
  // Edot = M v vdot + K z v, which must be the damping loss -v'Dv.
  const double edot = 2.0 * 1.0 * r.vdot[0] + 3.0 * 0.2 * 1.0;
  EXPECT_NEAR(edot, -0.2, kRoundOff);
  EXPECT_NEAR(-ws.v.dot(ws.Dv), -0.2, kRoundOff);
}

// Seed 003 coupled example.
TEST(SeedCoupled, AccelerationPowersAndInputMap) {
  Workspace ws(testing::SeedCoupled());
  const KktResult r = SolveKktAt(&ws, 0.0, V({0.2, -0.1}), V({1.0, 2.0}));
  EXPECT_TRUE(NearRel(r.vdot, V({61.0 / 36.0, -17.0 / 36.0}), kRoundOff));
  const double applied = ws.v.dot(ws.Bu);
  const double damping = ws.v.dot(ws.Dv);
  EXPECT_NEAR(applied, 4.0, kRoundOff);
  EXPECT_NEAR(damping, 0.6, kRoundOff);
  // Edot from the state derivative: d/dt (v'Mv/2 + z'Kz/2).
  Eigen::Matrix2d M;
  M << 2.0, 0.4, 0.4, 0.8;
  const Eigen::Vector2d K(3.0, 5.0);
  const double edot =
      ws.v.dot(M * r.vdot) + (K.array() * ws.q.array() * ws.v.array()).sum();
  EXPECT_NEAR(edot, 3.4, kRoundOff);
  EXPECT_TRUE(NearRel(ws.M, M, kRoundOff));
  // M^-1 B by a solve with the factorization of M.
  KktSolver solver(ws.model());
  KktResult tmp;
  solver.Solve(ws, ws.bias, &tmp);
  Eigen::VectorXd minv_b(2);
  solver.SolveMass(ws.B.col(0), minv_b);
  EXPECT_TRUE(NearRel(minv_b, V({5.0 / 9.0, -5.0 / 18.0}), kRoundOff));
}

TEST(SeedCoupled, ZeroVelocityAccelerationAndDriftLoad) {
  Workspace ws(testing::SeedCoupled(/*u=*/0.0));
  const KktResult r = SolveKktAt(&ws, 0.0, V({0.2, -0.1}), V({0.0, 0.0}));
  EXPECT_TRUE(NearRel(r.vdot, V({-17.0 / 36.0, 31.0 / 36.0}), kRoundOff));
  EXPECT_TRUE(NearRel(-ws.h, V({-0.6, 0.5}), kRoundOff));
}

// Seed 003 constrained pair: M = diag(2,3), J = [1,-1], B = (1,0), u = 10.
TEST(SeedConstrainedPair, AccelerationsMultiplierAndPowerTransfer) {
  Workspace ws(testing::SeedConstrainedPair());
  const KktResult r = SolveKktAt(&ws, 0.0, V({0.0, 0.0}), V({0.4, 0.4}));
  EXPECT_TRUE(NearRel(r.vdot, V({2.0, 2.0}), kRoundOff));
  ASSERT_EQ(r.lambda.size(), 1);
  EXPECT_NEAR(r.lambda[0], -6.0, kRoundOff);
  // Reaction power per coordinate: (J' lambda)_i v_i.
  const Eigen::VectorXd per_coordinate = r.reaction.cwiseProduct(ws.v);
  EXPECT_NEAR(per_coordinate[0], -2.4, kRoundOff);
  EXPECT_NEAR(per_coordinate[1], 2.4, kRoundOff);
  EXPECT_NEAR(r.power[0], 0.0, kRoundOff);
}

// Seed 003 moving support: 20.42 N and 6.126 W.
TEST(SeedMovingSupport, SupportForceAndPower) {
  Workspace ws(testing::SeedMovingSupport());
  const KktResult r = SolveKktAt(&ws, 0.0, V({0.0}), V({0.3}));
  EXPECT_NEAR(r.vdot[0], 0.4, kRoundOff);
  EXPECT_NEAR(r.lambda[0], 20.42, 1e-12);
  EXPECT_NEAR(r.power[0], 6.126, 1e-12);
  // On the manifold lambda J v = -lambda Phi_t.
  EXPECT_NEAR(-r.lambda[0] * ws.phi_t[0], 6.126, 1e-12);
}

TEST(MovingConstraint, DeclaredStationaryButTimeDependentIsRejected) {
  ModelBuilder b("bad");
  b.Coordinates({"y"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.Holonomic("support", [](const auto& x) { return x.q[0] - 0.3 * x.t; });
  Workspace ws(std::move(b).Build());
  ws.SetState(0.0, V({0.0}), V({0.3}));
  EXPECT_THAT([&] { EvaluatePosition(&ws); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::HasSubstr("declare it with Moving()")));
}

// Seed 000, two uniform rods in absolute angles.
Eigen::Matrix2d RodPairMassClosedForm(double a1, double a2) {
  const double m1 = 1, m2 = 1, l1 = 1, l2 = 1, k = m2 * l1 * l2 / 2;
  Eigen::Matrix2d M;
  M << (m1 / 3 + m2) * l1 * l1, k * std::cos(a1 - a2), k * std::cos(a1 - a2),
      m2 * l2 * l2 / 3;
  return M;
}

TEST(RodPair, MassMatrixAtAlignedRods) {
  Workspace ws(testing::RodPairAbsolute());
  ws.SetState(0.0, V({0.3, 0.3}), V({0.0, 0.0}));
  EvaluateAll(&ws);
  Eigen::Matrix2d expected;
  expected << 4.0 / 3.0, 0.5, 0.5, 1.0 / 3.0;
  EXPECT_TRUE(NearRel(ws.M, expected, kRoundOff));
  EXPECT_NEAR(ws.M.determinant(), 7.0 / 36.0, kRoundOff);
}

TEST(RodPair, MassMatrixMatchesClosedFormAtRandomStates) {
  Workspace ws(testing::RodPairAbsolute());
  std::mt19937 gen{7};
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 2, -3, 3);
    const Eigen::VectorXd v = testing::RandomVector(gen, 2, -3, 3);
    ws.SetState(0.0, q, v);
    EvaluateAll(&ws);
    EXPECT_TRUE(NearRel(ws.M, RodPairMassClosedForm(q[0], q[1]), kRoundOff));
  }
}

// Independent check of the whole quadratic form: integrate the kinetic
// energy of mass elements along each rod (2-point Gauss-Legendre is exact for
// the quadratic integrand) and compare with v'Mv/2.
TEST(RodPair, MassMatrixEqualsIntegratedParticleKineticEnergy) {
  Workspace ws(testing::RodPairAbsolute());
  std::mt19937 gen{11};
  const double gauss[2] = {0.5 - 0.5 / std::sqrt(3.0),
                           0.5 + 0.5 / std::sqrt(3.0)};
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 2, -3, 3);
    const Eigen::VectorXd v = testing::RandomVector(gen, 2, -3, 3);
    ws.SetState(0.0, q, v);
    EvaluateAll(&ws);
    double t = 0.0;
    const Eigen::Vector2d de1(std::cos(q[0]), std::sin(q[0]));  // d e/d alpha
    const Eigen::Vector2d de2(std::cos(q[1]), std::sin(q[1]));
    for (double s : gauss) {
      // Rod 1 element at distance s (unit length and mass): velocity s de1 w1.
      const Eigen::Vector2d v1 = s * de1 * v[0];
      // Rod 2 element: l1 de1 w1 + s de2 w2.
      const Eigen::Vector2d v2 = de1 * v[0] + s * de2 * v[1];
      t += 0.5 * 0.5 * (v1.squaredNorm() + v2.squaredNorm());  // weight 1/2
    }
    const Eigen::VectorXd mv = ws.M * v;
    EXPECT_NEAR(0.5 * v.dot(mv), t, kRoundOff * std::max(1.0, t));
  }
}

TEST(RodPair, RelativeCoordinatesTransformAsCongruence) {
  Workspace wa(testing::RodPairAbsolute());
  Workspace wr(testing::RodPairRelative());
  wa.SetParameters(V({0.0, 0.0}));
  Eigen::Matrix2d S;
  S << 1, 0, 1, 1;
  std::mt19937 gen{3};
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 2, -3, 3);
    const Eigen::VectorXd qd = testing::RandomVector(gen, 2, -3, 3);
    const Eigen::VectorXd alpha = S * q + Eigen::Vector2d(M_PI / 2, M_PI / 2);
    wa.SetState(0.0, alpha, S * qd);
    wr.SetState(0.0, q, qd);
    EvaluateAll(&wa);
    EvaluateAll(&wr);
    EXPECT_TRUE(NearRel(wr.M, S.transpose() * wa.M * S, kRoundOff));
    // Gravity: G = dV/dq is the velocity-independent part of h; compare at
    // zero velocity so the Coriolis terms vanish.
    wa.SetState(0.0, alpha, Eigen::Vector2d::Zero());
    wr.SetState(0.0, q, Eigen::Vector2d::Zero());
    EvaluateAll(&wa);
    EvaluateAll(&wr);
    EXPECT_TRUE(NearRel(wr.h, S.transpose() * wa.h, kRoundOff));
    // Seed 000's closed form of M_q.
    const double bq = 1.0 / 3.0, d = std::cos(q[1]) / 2.0;
    Eigen::Matrix2d Mq;
    Mq << 4.0 / 3.0 + bq + 2 * d, bq + d, bq + d, bq;
    EXPECT_TRUE(NearRel(wr.M, Mq, kRoundOff));
  }
}

TEST(RodPair, MotorTorquesMapToAbsoluteCoordinates) {
  Workspace ws(testing::RodPairAbsolute());
  ws.SetParameters(V({0.7, -0.3}));
  ws.SetState(0.0, V({0.1, 0.2}), V({0.0, 0.0}));
  EvaluateAll(&ws);
  EXPECT_TRUE(NearRel(ws.Bu, V({0.7 - (-0.3), -0.3}), kRoundOff));
}

// Seed 004: pendulum from its Lagrangian.
TEST(Seed004, PendulumAcceleration) {
  ModelBuilder b("pendulum_angle");
  b.Coordinates({"theta"});
  const double m = 1.0, l = 1.0, g = 9.81;
  b.Lagrangian([=](const auto& x) {
    using std::cos;
    return 0.5 * m * l * l * x.v[0] * x.v[0] + m * g * l * cos(x.q[0]);
  });
  Workspace ws(std::move(b).Build());
  for (double angle : {0.1, 1.0, 2.0, 3.0}) {
    const KktResult r = SolveKktAt(&ws, 0.0, V({angle}), V({0.7}));
    EXPECT_NEAR(r.vdot[0], -(g / l) * std::sin(angle), kRoundOff * 10);
  }
}

Eigen::Vector2d DoublePendulumClosedForm(double m1,
                                         double m2,
                                         double l1,
                                         double l2,
                                         double g,
                                         const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& w) {
  const double d = q[0] - q[1];
  const double den = 2 * m1 + m2 - m2 * std::cos(2 * d);
  Eigen::Vector2d a;
  a[0] = (-g * (2 * m1 + m2) * std::sin(q[0]) -
          m2 * g * std::sin(q[0] - 2 * q[1]) -
          2 * std::sin(d) * m2 *
              (w[1] * w[1] * l2 + w[0] * w[0] * l1 * std::cos(d))) /
         (l1 * den);
  a[1] = (2 * std::sin(d) *
          (w[0] * w[0] * l1 * (m1 + m2) + g * (m1 + m2) * std::cos(q[0]) +
           w[1] * w[1] * l2 * m2 * std::cos(d))) /
         (l2 * den);
  return a;
}

TEST(Seed004, DoublePendulumFromLagrangianMatchesClosedForm) {
  const double m1 = 1.0, m2 = 2.0, l1 = 1.0, l2 = 0.7, g = 9.81;
  ModelBuilder b("double_pendulum");
  b.Coordinates({"theta1", "theta2"});
  b.Lagrangian([=](const auto& x) {
    using std::cos;
    using std::sin;
    const auto vx1 = l1 * cos(x.q[0]) * x.v[0];
    const auto vy1 = l1 * sin(x.q[0]) * x.v[0];
    const auto vx2 = vx1 + l2 * cos(x.q[1]) * x.v[1];
    const auto vy2 = vy1 + l2 * sin(x.q[1]) * x.v[1];
    const auto kinetic =
        0.5 * m1 * (vx1 * vx1 + vy1 * vy1) + 0.5 * m2 * (vx2 * vx2 + vy2 * vy2);
    const auto h1 = -l1 * cos(x.q[0]);
    const auto h2 = h1 - l2 * cos(x.q[1]);
    return kinetic - m1 * g * h1 - m2 * g * h2;
  });
  Workspace ws(std::move(b).Build());
  std::mt19937 gen{7};
  double worst = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 2, -3, 3);
    const Eigen::VectorXd w = testing::RandomVector(gen, 2, -3, 3);
    const KktResult r = SolveKktAt(&ws, 0.0, q, w);
    const Eigen::Vector2d a = DoublePendulumClosedForm(m1, m2, l1, l2, g, q, w);
    worst = std::max(
        worst,
        ((r.vdot - a).array().abs() / (1.0 + a.array().abs())).maxCoeff());
  }
  EXPECT_LT(worst, 1e-12);  // seed 004's central differences reach 1.6e-7
}

TEST(Seed004, AtwoodMachine) {
  const double mh = 3.0, ml = 1.0, g = 9.80665;
  ModelBuilder b("atwood");
  b.Coordinates({"x"});
  b.Lagrangian([=](const auto& x) {
    return 0.5 * (mh + ml) * x.v[0] * x.v[0] + (mh - ml) * g * x.q[0];
  });
  Workspace ws(std::move(b).Build());
  const KktResult r = SolveKktAt(&ws, 0.0, V({0.0}), V({0.0}));
  EXPECT_NEAR(r.vdot[0], (mh - ml) / (mh + ml) * g, kRoundOff);
  EXPECT_NEAR(r.vdot[0], 4.90332, 5e-6);  // seed 004's five decimals
}

TEST(Seed004, KeplerCyclicAngleHasConservedConjugateMomentum) {
  const double gm = 4.0, m = 1.0;
  ModelBuilder b("planet");
  b.Coordinates({"r", "phi"});
  b.Lagrangian([=](const auto& x) {
    return 0.5 * m * (x.v[0] * x.v[0] + x.q[0] * x.q[0] * x.v[1] * x.v[1]) +
           gm * m / x.q[0];
  });
  Workspace ws(std::move(b).Build());
  const KktResult r = SolveKktAt(&ws, 0.0, V({1.0, 0.3}), V({0.0, 1.5}));
  // p_phi = m r^2 phidot = 1.5 and dp_phi/dt = L_phi = 0: the phi row of
  // the equation of motion has no generalized force.
  EXPECT_NEAR(ws.momentum[1], 1.5, kRoundOff);
  EXPECT_NEAR(ws.energy, 0.5 * 1.5 * 1.5 - 4.0, kRoundOff);  // -2.875
  // p_phi is conserved because L does not contain phi: with rdot = 0.4,
  // d/dt(m r^2 phidot) = m r^2 phidd + 2 m r rdot phidot must vanish.
  const KktResult r2 = SolveKktAt(&ws, 0.0, V({1.0, 0.3}), V({0.4, 1.5}));
  EXPECT_NEAR(r2.vdot[1], -2.0 * 0.4 * 1.5, kRoundOff);
  EXPECT_NEAR(r.vdot[1], 0.0, kRoundOff);
}

// Bad input.
TEST(BadInput, NonFiniteUserValueNamesFunctionTimeAndState) {
  ModelBuilder b("nan_model");
  b.Coordinates({"x"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([](const auto& x) { return sqrt(x.q[0]); });
  Workspace ws(std::move(b).Build());
  ws.SetState(0.25, V({-1.0}), V({0.0}));
  EXPECT_THAT(
      [&] { EvaluateAll(&ws); },
      ::testing::ThrowsMessage<std::runtime_error>(::testing::AllOf(
          ::testing::HasSubstr("potential energy"),
          ::testing::HasSubstr("t=0.25"), ::testing::HasSubstr("x=-1"))));
}

TEST(BadInput, WrongConstraintRowCount) {
  ModelBuilder b("rows");
  b.Coordinates({"x", "y", "z"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.Holonomic(
      "pin",
      [](const auto& x) {
        Eigen::Matrix<Scalar<decltype(x)>, 2, 1> r(x.q[0], x.q[1]);
        return r;
      },
      /*rows=*/1);
  Workspace ws(std::move(b).Build());
  ws.SetState(0.0, V({0, 0, 0}), V({0, 0, 0}));
  EXPECT_THAT([&] { EvaluatePosition(&ws); },
              ::testing::ThrowsMessage<std::runtime_error>(
                  ::testing::HasSubstr("constraint 'pin' returned 2 rows")));
}

TEST(BadInput, MismatchedStateDimensions) {
  Workspace ws(testing::SeedCoupled());
  EXPECT_THAT(
      [&] {
        ws.SetState(0.0, V({1.0}), V({1.0, 2.0}));
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          ::testing::HasSubstr("model has 2 and 2")));
}

}  // namespace dynamics_test
}  // namespace
}  // namespace daedalus
