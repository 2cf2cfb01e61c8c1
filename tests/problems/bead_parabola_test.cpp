// Seed 000, exercise 9: the bead on y = a x^2, reduced and constrained.
#include "bead_parabola.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace bead_parabola_test {

constexpr double kM = 1.0, kA = 0.5, kG = 9.81;

TEST(BeadParabola, ReducedAndConstrainedFormsAgree) {
  const Problem pr = problems::BeadParabolaReducedProblem();
  const Problem pc = problems::BeadParabolaConstrainedProblem();
  SimulationOptions o = pr.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const testing::Run rr = testing::RunProblem(pr, o);
  const testing::Run rc = testing::RunProblem(pc, o);
  ASSERT_TRUE(rr.summary.ok && rc.summary.ok);
  ASSERT_EQ(rr.samples.size(), rc.samples.size());
  double worst = 0.0;
  for (size_t i = 0; i < rr.samples.size(); ++i) {
    worst = std::max(worst, std::abs(rr.samples[i].q[0] - rc.samples[i].q[0]));
    // The same energy function of the state: E = m (1 + 4a^2x^2) x'^2 / 2
    // + m g a x^2 in both (y' = 2 a x x' on the wire).
    EXPECT_NEAR(rr.samples[i].energy, rc.samples[i].energy, 1e-7);
  }
  // Two runs at rtol 1e-11 over 5 s (some 6 swings): each global error
  // ~1e-9.
  EXPECT_LT(worst, 1e-8);
  EXPECT_LT(rr.summary.energy_residual_max, 1e-7);
  EXPECT_LT(rc.summary.energy_residual_max, 1e-7);
  // The wire is stationary: its work is zero to integration error.
  EXPECT_LT(std::abs(rc.samples.back().constraint_work[0]), 1e-7);
}

// The wire's push from the state alone: with x'' from the reduced
// equation, lambda = m (y'' + g) = m (g + 2 a x'^2) / (1 + 4 a^2 x^2).
TEST(BeadParabola, MultiplierIsTheClosedFormNormalPush) {
  const Problem pc = problems::BeadParabolaConstrainedProblem();
  const testing::Run r = testing::RunProblem(pc, pc.defaults);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const SimulationOptions& o = pc.defaults;
  for (const Sample& s : r.samples) {
    const double x = s.q[0], xd = s.v[0];
    const double expected =
        kM * (kG + 2 * kA * xd * xd) / (1 + 4 * kA * kA * x * x);
    // Baumgarte changes the bias by 2 alpha (J v) + beta^2 Phi; that moves
    // lambda by at most m times it (J M^-1 J' >= 1/m here).
    const double bound =
        kM * (2 * o.baumgarte_alpha * s.drift_velocity +
              o.baumgarte_beta * o.baumgarte_beta * s.drift_position) +
        1e-11;
    EXPECT_NEAR(s.lambda[0], expected, bound) << s.t;
  }
  EXPECT_GT(r.samples.front().lambda[0], 1.0);
}

// Small oscillations about the bottom: omega^2 = 2 g a.
TEST(BeadParabola, SmallOscillationFrequency) {
  const Problem p = problems::BeadParabolaReducedProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("x0")] = 1e-3;
  SimulationOptions o = p.defaults;
  o.rtol = 1e-12;
  o.atol = 1e-16;  // amplitude 1e-3
  o.output_step = 1e-3;
  const testing::Run r = testing::RunProblem(p, o, prm);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const std::vector<double> t = testing::ZeroCrossings(
      r.samples, [](const Sample& x) { return x.q[0]; },
      [](const Sample& x) { return x.v[0]; });
  ASSERT_GE(t.size(), 4u);
  const double period =
      2.0 * (t.back() - t.front()) / static_cast<double>(t.size() - 1);
  // The anharmonic correction is of order (a x0)^2 = 2.5e-7.
  EXPECT_NEAR(std::pow(2 * M_PI / period, 2) / (2 * kG * kA), 1.0, 2e-6);
}

}  // namespace bead_parabola_test
}  // namespace
}  // namespace daedalus
