// The slider-crank against SUNDIALS's idasSlCrank_dns example and a
// high-accuracy reference (issue 3).
#include "slider_crank.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace daedalus {
namespace {
namespace slider_crank_test {

struct Collector : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

// y1, y2, y3 (= q, x, p) at t = 0, 0.4, ..., 10 as printed in
// /usr/share/doc/libsundials-dev/examples/idas/serial/idasSlCrank_dns.out
// (rtol 1e-6, atol 1e-7).
constexpr double kExample[26][4] = {
    {0.00, 1.5708e+00, 8.6603e-01, -5.2360e-01},
    {0.40, 1.5299e+00, 8.8672e-01, -5.2312e-01},
    {0.80, 1.4072e+00, 9.5128e-01, -5.1591e-01},
    {1.20, 1.2039e+00, 1.0638e+00, -4.8559e-01},
    {1.60, 9.2524e-01, 1.2176e+00, -4.1084e-01},
    {2.00, 5.7904e-01, 1.3803e+00, -2.7714e-01},
    {2.40, 1.7783e-01, 1.4882e+00, -8.8565e-02},
    {2.80, -2.4460e-01, 1.4778e+00, 1.2138e-01},
    {3.20, -6.3618e-01, 1.3570e+00, 3.0161e-01},
    {3.60, -9.6169e-01, 1.1981e+00, 4.2254e-01},
    {4.00, -1.2064e+00, 1.0623e+00, 4.8609e-01},
    {4.40, -1.3632e+00, 9.7518e-01, 5.1125e-01},
    {4.80, -1.4300e+00, 9.3903e-01, 5.1789e-01},
    {5.20, -1.4081e+00, 9.5081e-01, 5.1599e-01},
    {5.60, -1.2995e+00, 1.0103e+00, 5.0261e-01},
    {6.00, -1.1080e+00, 1.1176e+00, 4.6386e-01},
    {6.40, -8.4049e-01, 1.2616e+00, 3.8168e-01},
    {6.80, -5.0621e-01, 1.4075e+00, 2.4487e-01},
    {7.20, -1.2091e-01, 1.4945e+00, 6.0346e-02},
    {7.60, 2.7894e-01, 1.4712e+00, -1.3811e-01},
    {8.00, 6.4422e-01, 1.3536e+00, -3.0500e-01},
    {8.40, 9.4289e-01, 1.2082e+00, -4.1657e-01},
    {8.80, 1.1604e+00, 1.0882e+00, -4.7630e-01},
    {9.20, 1.2895e+00, 1.0159e+00, -5.0105e-01},
    {9.60, 1.3276e+00, 9.9477e-01, -5.0669e-01},
    {10.00, 1.2757e+00, 1.0236e+00, -4.9881e-01}};

// G printed by the example, and a high-accuracy value (issue 3).
constexpr double kExampleG = 3.3366160662934146;
constexpr double kReferenceG = 3.336606799482804;

SimulationSummary RunCrank(double rtol,
                           double atol,
                           Formulation f,
                           Collector* c,
                           Integrator in = Integrator::kIdas) {
  const Problem p = problems::SliderCrankProblem();
  SimulationOptions o = p.defaults;
  o.rtol = rtol;
  o.atol = atol;
  o.formulation = f;
  o.integrator = in;
  return Simulate(p.model, p.initial(p.model.default_parameters()),
                  p.model.default_parameters(), o, c);
}

TEST(SliderCrank, GglMatchesTheSundialsExampleTrajectory) {
  Collector c;
  const SimulationSummary s = RunCrank(1e-6, 1e-7, Formulation::kGgl, &c);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(c.samples.size(), 26u);
  // A high-accuracy run decides what "matching" means: both runs carry a
  // global error of order 1e-5 at rtol 1e-6, and they start from different
  // multipliers (the example's are inconsistent), so individual values can
  // differ by a unit or two of the last printed digit. Daedalus must be at
  // least as close to the reference as the printed example is, over the
  // whole table, and within two units of the 4th decimal of every value.
  Collector ref;
  ASSERT_TRUE(RunCrank(1e-10, 1e-8, Formulation::kGgl, &ref).ok);
  double ours_err = 0.0, example_err = 0.0;
  for (int i = 0; i < 26; ++i) {
    EXPECT_NEAR(c.samples[i].t, kExample[i][0], 1e-12);
    for (int k = 0; k < 3; ++k) {
      const double truth = ref.samples[i].q[k];
      const double printed = kExample[i][k + 1];
      EXPECT_NEAR(c.samples[i].q[k], printed, 2e-4)
          << "t=" << kExample[i][0] << " y" << k + 1;
      ours_err = std::max(ours_err, std::abs(c.samples[i].q[k] - truth));
      example_err = std::max(example_err, std::abs(printed - truth));
    }
  }
  EXPECT_LE(ours_err, example_err);
  EXPECT_LT(ours_err, 2e-5);
  // G, and the functional G's running integral "functional:G" (the same
  // integrand).
  ASSERT_EQ(s.final.quadratures.size(), 2);
  EXPECT_NEAR(s.final.quadratures[0], kExampleG, 1e-5 * kExampleG);
  EXPECT_NEAR(s.final.quadratures[1], s.final.quadratures[0], 1e-9 * kExampleG);
  EXPECT_LT(s.drift_position_max, 1e-6);
}

TEST(SliderCrank, QuadratureConvergesToHighAccuracyValue) {
  // rtol 1e-10 with atol 1e-8: at smaller atol the index-2 Newton matrix is
  // too ill-conditioned at IDAS's starting step (docs/formulations.md).
  const SimulationSummary s = RunCrank(1e-10, 1e-8, Formulation::kGgl, nullptr);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_NEAR(s.final.quadratures[0], kReferenceG, 1e-8 * kReferenceG);
  const SimulationSummary loose =
      RunCrank(1e-6, 1e-7, Formulation::kGgl, nullptr);
  EXPECT_LT(std::abs(s.final.quadratures[0] - kReferenceG),
            std::abs(loose.final.quadratures[0] - kReferenceG));
}

TEST(SliderCrank, GglEnergyBalanceCloses) {
  const SimulationSummary s = RunCrank(1e-8, 1e-8, Formulation::kGgl, nullptr);
  ASSERT_TRUE(s.ok) << s.error;
  // Damping and the constant force do work of order 0.2 J; the balance
  // (with the GGL correction's power as stabilization work) closes to the
  // integration error.
  EXPECT_GT(s.final.damping_loss, 0.1);
  EXPECT_LT(s.energy_residual_max, 1e-5);
}

TEST(SliderCrank, GglDriftsLessThanUnstabilizedIndexOne) {
  const SimulationSummary ggl =
      RunCrank(1e-6, 1e-7, Formulation::kGgl, nullptr);
  const SimulationSummary plain =
      RunCrank(1e-6, 1e-7, Formulation::kUnstabilized, nullptr);
  ASSERT_TRUE(ggl.ok && plain.ok);
  EXPECT_GT(plain.drift_position_max, 0.0);
  EXPECT_LT(ggl.drift_position_max, plain.drift_position_max);
}

// The direct index-3 form used to fail in IDAS's corrector at the first
// step at the example's tolerances. With the velocities and multipliers
// out of the error test and the multipliers weighed by the step in the
// Newton test (docs/formulations.md) it runs and converges, though with
// only the positions under error control it is less accurate than GGL at
// the same tolerances (measured: 1.4e-3 against 1.3e-5 at rtol 1e-6).
TEST(SliderCrank, IndexThreeRunsAndConverges) {
  Collector ref;
  ASSERT_TRUE(RunCrank(1e-10, 1e-8, Formulation::kGgl, &ref).ok);
  auto error = [&](double rtol, double atol) {
    Collector c;
    const SimulationSummary s = RunCrank(rtol, atol, Formulation::kIndex3, &c);
    EXPECT_TRUE(s.ok) << s.error;
    EXPECT_LT(s.drift_position_max, 10 * atol);
    double e = 0.0;
    for (size_t i = 0; i < std::min(c.samples.size(), ref.samples.size()); ++i)
      e = std::max(
          e, (c.samples[i].q - ref.samples[i].q).lpNorm<Eigen::Infinity>());
    return e;
  };
  const double e6 = error(1e-6, 1e-7), e8 = error(1e-8, 1e-9);
  EXPECT_LT(e6, 5e-3);
  EXPECT_LT(e8, e6 / 5.0);
}

TEST(SliderCrank, DaeFormulationOnCvodesIsRejected) {
  const Problem p = problems::SliderCrankProblem();
  SimulationOptions o = p.defaults;
  o.integrator = Integrator::kCvodesBdf;
  EXPECT_THAT(
      [&] {
        Simulate(p.model, p.initial(p.model.default_parameters()),
                 p.model.default_parameters(), o);
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          ::testing::HasSubstr("use --integrator idas")));
}

}  // namespace slider_crank_test
}  // namespace
}  // namespace daedalus
