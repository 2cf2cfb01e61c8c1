// Seed 004's coupled springs: normal modes at k/m and (k + 2 kappa)/m.
#include "coupled_springs.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace coupled_springs_test {

SimulationOptions Tight(const Problem& p) {
  SimulationOptions o = p.defaults;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  return o;
}

// Any start is the sum of the two modes: s = x1 + x2 at omega_+ and
// d = x1 - x2 at omega_-, each a closed-form harmonic motion.
TEST(CoupledSprings, SeedStartIsTheSumOfTheTwoNormalModes) {
  const Problem p = problems::CoupledSpringsProblem();
  const testing::Run r = testing::RunProblem(p, Tight(p));
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const double m = 0.5, k = 4.0, kappa = 1.5;
  const double wp = std::sqrt(k / m), wm = std::sqrt((k + 2 * kappa) / m);
  const double s0 = 0.3 - 0.1, sd0 = 0.2 + 0.5, d0 = 0.3 + 0.1, dd0 = 0.2 - 0.5;
  double worst = 0.0;
  for (const Sample& x : r.samples) {
    const double s = s0 * std::cos(wp * x.t) + sd0 / wp * std::sin(wp * x.t);
    const double d = d0 * std::cos(wm * x.t) + dd0 / wm * std::sin(wm * x.t);
    worst = std::max(worst, std::abs(x.q[0] - 0.5 * (s + d)));
    worst = std::max(worst, std::abs(x.q[1] - 0.5 * (s - d)));
  }
  // Amplitude 0.3 m over 10 s (about 6 slow periods) at rtol 1e-12: a
  // global error of a few hundred times rtol times the amplitude.
  EXPECT_LT(worst, 1e-9);
  EXPECT_EQ(r.samples.size(), 1001u);
}

// Each mode alone: its period from the zero crossings gives omega^2 to
// 1e-9 relative, and the other combination stays zero.
TEST(CoupledSprings, EachModeAloneOscillatesAtItsFrequency) {
  const Problem p = problems::CoupledSpringsProblem();
  const double m = 0.5, k = 4.0, kappa = 1.5;
  for (const int sign : {+1, -1}) {
    Eigen::VectorXd prm = p.model.default_parameters();
    prm[p.model.ParameterIndex("x1_0")] = 0.1;
    prm[p.model.ParameterIndex("x2_0")] = sign * 0.1;
    prm[p.model.ParameterIndex("v1_0")] = 0.0;
    prm[p.model.ParameterIndex("v2_0")] = 0.0;
    SimulationOptions o = Tight(p);
    o.output_step = 1e-3;
    const testing::Run r = testing::RunProblem(p, o, prm);
    ASSERT_TRUE(r.summary.ok) << r.summary.error;
    const std::vector<double> t = testing::ZeroCrossings(
        r.samples, [](const Sample& x) { return x.q[0]; },
        [](const Sample& x) { return x.v[0]; });
    ASSERT_GE(t.size(), 8u);  // 10 s: at least 4 slow periods
    const double period =
        2.0 * (t.back() - t.front()) / static_cast<double>(t.size() - 1);
    const double omega2 = std::pow(2.0 * M_PI / period, 2);
    const double expected = sign > 0 ? k / m : (k + 2 * kappa) / m;
    EXPECT_NEAR(omega2 / expected, 1.0, 1e-9) << "sign " << sign;
    double other = 0.0;  // x1 - x2 in phase, x1 + x2 out of phase
    for (const Sample& x : r.samples)
      other = std::max(other, std::abs(x.q[0] - sign * x.q[1]));
    EXPECT_LT(other, 1e-13) << "sign " << sign;  // symmetric: round-off
  }
}

}  // namespace coupled_springs_test
}  // namespace
}  // namespace daedalus
