// Seed 004's double pendulum: the derived equations against the closed
// form, energy conservation, and the two small-amplitude normal modes.
#include "double_pendulum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "catalogue_support.hpp"
#include "daedalus/kkt.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace double_pendulum_test {

constexpr double kM1 = 1.0, kM2 = 2.0, kL1 = 1.0, kL2 = 0.7, kG = 9.81;

// The standard closed-form accelerations of the point-mass double pendulum.
Eigen::Vector2d ClosedForm(const Eigen::VectorXd& q, const Eigen::VectorXd& w) {
  const double d = q[0] - q[1];
  const double den = 2 * kM1 + kM2 - kM2 * std::cos(2 * d);
  return {
      (-kG * (2 * kM1 + kM2) * std::sin(q[0]) -
       kM2 * kG * std::sin(q[0] - 2 * q[1]) -
       2 * std::sin(d) * kM2 *
           (w[1] * w[1] * kL2 + w[0] * w[0] * kL1 * std::cos(d))) /
          (kL1 * den),
      (2 * std::sin(d) *
       (w[0] * w[0] * kL1 * (kM1 + kM2) + kG * (kM1 + kM2) * std::cos(q[0]) +
        w[1] * w[1] * kL2 * kM2 * std::cos(d))) /
          (kL2 * den)};
}

TEST(DoublePendulum, AccelerationsMatchTheClosedForm) {
  const Problem p = problems::DoublePendulumProblem();
  Workspace ws(p.model);
  ws.SetParameters(p.model.default_parameters());
  std::mt19937 gen{7};
  double worst = 0.0;
  for (int i = 0; i < 200; ++i) {  // the seed's 200 random states
    const Eigen::VectorXd q = testing::RandomVector(gen, 2, -3, 3);
    const Eigen::VectorXd w = testing::RandomVector(gen, 2, -3, 3);
    const KktResult r = SolveKktAt(&ws, 0.0, q, w);
    const Eigen::Vector2d a = ClosedForm(q, w);
    worst = std::max(
        worst,
        ((r.vdot - a).array().abs() / (1.0 + a.array().abs())).maxCoeff());
  }
  EXPECT_LT(worst, 1e-12);  // the seed's central differences: 1.6e-7
}

TEST(DoublePendulum, EnergyIsConservedFromTheSeedStart) {
  const Problem p = problems::DoublePendulumProblem();
  SimulationOptions o = p.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  EXPECT_EQ(r.summary.energy_kind, "energy function v'p - L");
  double de = 0.0;
  for (const Sample& s : r.samples)
    de = std::max(de, std::abs(s.energy - r.samples.front().energy));
  EXPECT_LT(de, 1e-9 * std::abs(r.summary.energy_initial));
}

// Linearized about the bottom: M0 = [[(m1+m2) l1^2, m2 l1 l2], [m2 l1 l2,
// m2 l2^2]], K = diag((m1+m2) g l1, m2 g l2); det(K - w^2 M0) = 0 gives
// w^2 = g [(m1+m2)(l1+l2) -+ sqrt((m1+m2)^2 (l1+l2)^2
//        - 4 m1 (m1+m2) l1 l2)] / (2 m1 l1 l2),
// with mode shape (w^2 m2 l1 l2, (m1+m2) g l1 - w^2 (m1+m2) l1^2).
TEST(DoublePendulum, SmallAmplitudeNormalModes) {
  const Problem p = problems::DoublePendulumProblem();
  const double sm = kM1 + kM2, sl = kL1 + kL2;
  const double disc = std::sqrt(sm * sm * sl * sl - 4 * kM1 * sm * kL1 * kL2);
  for (const int branch : {-1, +1}) {
    const double w2 = kG * (sm * sl + branch * disc) / (2 * kM1 * kL1 * kL2);
    Eigen::Vector2d u(w2 * kM2 * kL1 * kL2,
                      sm * kG * kL1 - w2 * sm * kL1 * kL1);
    u *= 1e-4 / u.cwiseAbs().maxCoeff();  // amplitude 1e-4 rad
    Eigen::VectorXd prm = p.model.default_parameters();
    prm[p.model.ParameterIndex("theta1_0")] = u[0];
    prm[p.model.ParameterIndex("theta2_0")] = u[1];
    SimulationOptions o = p.defaults;
    o.rtol = 1e-11;
    o.atol = 1e-17;  // angles of 1e-4
    o.t_end = 6.0;
    o.output_step = 1e-3;
    const testing::Run r = testing::RunProblem(p, o, prm);
    ASSERT_TRUE(r.summary.ok) << r.summary.error;
    const double w = std::sqrt(w2);
    double worst = 0.0;
    for (const Sample& s : r.samples)
      worst =
          std::max(worst, (s.q - u * std::cos(w * s.t)).cwiseAbs().maxCoeff());
    // The nonlinear terms shift the frequency by a relative ~amplitude^2
    // = 1e-8; over 6 s that is a phase error below 1e-6 rad, so the
    // deviation from the linear mode stays below 1e-3 of the amplitude.
    EXPECT_LT(worst, 1e-7) << "branch " << branch;
  }
}

}  // namespace double_pendulum_test
}  // namespace
}  // namespace daedalus
