// Structural checks (seed 000): SPD mass matrix, skew Mdot - 2C, and the
// energy-rate identity at random states, for several model kinds.
#include "daedalus/checks.hpp"

#include <gtest/gtest.h>

#include <random>

#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace checks_test {

using testing::kRoundOff;

TEST(Checks, RodPairChristoffelMatchesSeedClosedForm) {
  Workspace ws(testing::RodPairAbsolute());
  std::mt19937 gen{2};
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 2, -3, 3);
    const Eigen::VectorXd v = testing::RandomVector(gen, 2, -3, 3);
    ws.SetState(0.0, q, v);
    const Eigen::MatrixXd C = ChristoffelMatrix(&ws);
    // Seed 000: C = k sin(Delta) [[0, w2], [-w1, 0]], k = m2 l1 l2 / 2.
    const double k = 0.5, sd = std::sin(q[0] - q[1]);
    Eigen::Matrix2d expected;
    expected << 0.0, k * sd * v[1], -k * sd * v[0], 0.0;
    EXPECT_TRUE(testing::NearRel(C, expected, kRoundOff));
    // Mdot - 2C = k sin(Delta)(w1 + w2) [[0,-1],[1,0]]
    const StructuralReport rep = CheckStructure(&ws);
    EXPECT_LT(rep.skew_error, kRoundOff);
    EXPECT_GT(rep.skew_scale, 0.0);
  }
}

void ExpectStructureHolds(const Model& model,
                          int trials,
                          double qspan,
                          unsigned seed) {
  Workspace ws(model);
  std::mt19937 gen{seed};
  for (int trial = 0; trial < trials; ++trial) {
    const Eigen::VectorXd q =
        testing::RandomVector(gen, model.nq(), -qspan, qspan);
    const Eigen::VectorXd v = testing::RandomVector(gen, model.nv(), -2, 2);
    ws.SetState(0.3 * trial, q, v);
    const StructuralReport rep = CheckStructure(&ws);
    EXPECT_LT(rep.symmetry_error, kRoundOff) << model.name();
    EXPECT_GT(rep.min_eigenvalue, 0.0) << model.name();
    EXPECT_LT(rep.skew_error, kRoundOff * std::max(1.0, rep.skew_scale))
        << model.name();
    EXPECT_NEAR(rep.energy_rate, rep.power_sum,
                1e-12 * std::max(1.0, std::abs(rep.power_sum)))
        << model.name();
  }
}

TEST(Checks, EnergyRateIdentityUnconstrainedWithInputsAndDamping) {
  ExpectStructureHolds(testing::SeedCoupled(), 30, 1.0, 1);
  ExpectStructureHolds(testing::RodPairAbsolute(), 30, 3.0, 2);
  ExpectStructureHolds(testing::RodPairRelative(), 30, 3.0, 3);
}

TEST(Checks, EnergyRateIdentityWithMovingConstraint) {
  // Off the manifold the identity still holds with the power lambda'J v.
  ExpectStructureHolds(testing::SeedMovingSupport(), 20, 1.0, 4);
  ExpectStructureHolds(testing::SeedConstrainedPair(), 20, 1.0, 5);
}

TEST(Checks, TimeDependentLagrangianUsesEnergyFunction) {
  // Seed 000: free particle in a moving frame x = q + a(t), a = sin t:
  // L = m (qd + ad)^2 / 2, E = v'p - L, Edot = -L_t (no forces).
  ModelBuilder b("moving_frame");
  b.Coordinates({"q"});
  b.Lagrangian([](const auto& x) {
    using std::cos;
    const auto w = x.v[0] + cos(x.t);
    return 0.5 * 2.0 * w * w;
  });
  ExpectStructureHolds(std::move(b).Build(), 10, 1.0, 6);
}

}  // namespace checks_test
}  // namespace
}  // namespace daedalus
