// The fast, stiff mechanism built to be hard (problems/stiff_linkage.hpp,
// issue 19): its energy balance and drift at a tight tolerance, that it
// stays hard (multiplier span and crank speed), agreement between GGL on
// IDAS and an index-1 form on CVODES, and GGL and index 3 with default
// options at every tolerance from 1e-4 to 1e-12 (docs/problems.md,
// "stiff_linkage"; docs/formulations.md).
#include "stiff_linkage.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "catalogue_support.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace stiff_linkage_test {

testing::Run RunWith(Formulation f, Integrator i, double tol) {
  const Problem p = problems::StiffLinkageProblem();
  SimulationOptions o = p.defaults;
  o.formulation = f;
  o.integrator = i;
  o.rtol = o.atol = tol;
  return testing::RunProblem(p, o);
}

// The largest position difference over the common samples.
double PositionError(const testing::Run& a, const testing::Run& b) {
  double e = 0.0;
  for (size_t i = 0; i < std::min(a.samples.size(), b.samples.size()); ++i)
    e = std::max(e,
                 (a.samples[i].q - b.samples[i].q).lpNorm<Eigen::Infinity>());
  return e;
}

// The index-1 reference: projection on CVODES BDF at rtol = atol = 1e-12
// (no IDAS, no multipliers as unknowns).
const testing::Run& Reference() {
  static const testing::Run ref =
      RunWith(Formulation::kProjection, Integrator::kCvodesBdf, 1e-12);
  return ref;
}

TEST(StiffLinkage, GglBalancesEnergyAndHoldsTheConstraints) {
  const testing::Run r = RunWith(Formulation::kGgl, Integrator::kIdas, 1e-10);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  // The assembled start is on both manifolds (Assemble closes the loops
  // and solves J v = 0 in closed form): the projections do nothing.
  EXPECT_LT(r.summary.initial_correction_position, 1e-12);
  EXPECT_LT(r.summary.initial_correction_velocity, 1e-9);
  double residual = 0.0, drift_q = 0.0, drift_v = 0.0;
  for (const Sample& s : r.samples) {
    residual = std::max(residual, std::abs(s.energy_residual));
    drift_q = std::max(drift_q, s.drift_position);
    drift_v = std::max(drift_v, s.drift_velocity);
  }
  const Sample& f = r.samples.back();
  std::printf(
      "stiff_linkage ggl 1e-10: |residual| %.2e J, motor %.1f J, damping "
      "%.1f J, dE %.1f J, drift q %.1e v %.1e\n",
      residual, f.input_work[0], f.damping_loss, f.energy - r.samples[0].energy,
      drift_q, drift_v);
  // The motor and the damper really move energy: hundreds of joules each
  // (measured 625 J and 489 J over 0.2 s).
  EXPECT_GT(f.input_work[0], 300.0);
  EXPECT_GT(f.damping_loss, 200.0);
  // E - E0 - (work of motor, damper, loops, GGL correction) is integration
  // error only: measured 4.9e-5 J at 1e-10 (3.4e-3 J at 1e-8), against the
  // 625 J fed in; bound 2e-7 of the input work (2.6 times the measured).
  EXPECT_LT(residual, 2e-7 * f.input_work[0]);
  // GGL holds Phi and J v: measured 1.8e-12 and 7.0e-9 (the velocities are
  // ~1e3 rad/s); bounds 50 and 14 times that, far below an index-1 run's
  // (Baumgarte on CVODES at 1e-12: 5.8e-9 and 4.2e-8).
  EXPECT_LT(drift_q, 1e-10);
  EXPECT_LT(drift_v, 1e-7);
}

TEST(StiffLinkage, MultipliersSpanSixDecadesAndTheCrankTurnsAtAThousand) {
  // The span and the speeds are the motion's, not the tolerance's: at 1e-8
  // they read the same to three digits (span 1.34e6, 947.0 to 1027.8
  // rad/s). The sanitizer build, where the 1e-12 reference took 37 s and
  // no other test there needs it, reads them from a 1e-8 run.
#ifdef DAEDALUS_SANITIZER_BUILD
  const testing::Run r =
      RunWith(Formulation::kProjection, Integrator::kCvodesBdf, 1e-8);
#else
  const testing::Run& r = Reference();
#endif
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const Eigen::Index nc = r.samples[0].lambda.size();
  Eigen::VectorXd peak = Eigen::VectorXd::Zero(nc);
  double w_max = 0.0, w_min = 1e300;
  for (const Sample& s : r.samples) {
    peak = peak.cwiseMax(s.lambda.cwiseAbs());
    w_max = std::max(w_max, s.v[0]);
    w_min = std::min(w_min, s.v[0]);
  }
  const double span = peak.maxCoeff() / peak.minCoeff();
  std::printf(
      "stiff_linkage: peak |lambda| per row %.3g .. %.3g (span %.3g), crank "
      "speed %.1f .. %.1f rad/s\n",
      peak.minCoeff(), peak.maxCoeff(), span, w_min, w_max);
  // What makes the problem hard must stay (measured span 1.34e6, crank
  // speed 947 to 1028 rad/s): a parameter change that softens it fails
  // here.
  EXPECT_GE(span, 1e6);
  EXPECT_GE(w_max, 1e3);
  EXPECT_GT(w_min, 900.0);
}

TEST(StiffLinkage, GglOnIdasAgreesWithProjectionOnCvodes) {
  DAEDALUS_RELEASE_BUILD_ONLY("two runs at rtol 1e-12");
  const testing::Run& ref = Reference();
  ASSERT_TRUE(ref.summary.ok) << ref.summary.error;
  const testing::Run g = RunWith(Formulation::kGgl, Integrator::kIdas, 1e-12);
  ASSERT_TRUE(g.summary.ok) << g.summary.error;
  ASSERT_EQ(g.samples.size(), ref.samples.size());
  double dlam = 0.0;
  for (size_t i = 0; i < g.samples.size(); ++i) {
    const Eigen::VectorXd d = g.samples[i].lambda - ref.samples[i].lambda;
    dlam = std::max(dlam,
                    (d.array() / (ref.samples[i].lambda.array().abs() + 1e-2))
                        .abs()
                        .maxCoeff());
  }
  const double dq = PositionError(g, ref);
  std::printf("stiff_linkage ggl vs projection at 1e-12: q %.2e, lambda %.2e\n",
              dq, dlam);
  // Measured 6.0e-8 in q (the crank angle, ~200 rad at the end; Baumgarte
  // on CVODES at 1e-12 is 3.2e-8 from the same reference) and 7.7e-5
  // relative in lambda (floor 1e-2 N, the follower's scale); bounds 5 and
  // 3 times that.
  EXPECT_LT(dq, 3e-7);
  EXPECT_LT(dlam, 2.5e-4);
}

// GGL and index 3 on IDAS with default options at rtol = atol from 1e-4 to
// 1e-12, each against the reference. Bounds: about three times the
// measured worst position error (the crank angle's phase), which index 3,
// with only the positions under error control, has larger.
TEST(StiffLinkage, GglAndIndexThreeRunWithDefaultsAtEveryTolerance) {
  DAEDALUS_RELEASE_BUILD_ONLY("ten runs of up to 26000 steps");
  const testing::Run& ref = Reference();
  ASSERT_TRUE(ref.summary.ok) << ref.summary.error;
  struct Tol {
    Formulation f;
    double tol, bound;
  };
  const Tol tols[] = {
      {Formulation::kGgl, 1e-4, 2e-1},     {Formulation::kGgl, 1e-6, 2e-3},
      {Formulation::kGgl, 1e-8, 1e-4},     {Formulation::kGgl, 1e-10, 2e-6},
      {Formulation::kGgl, 1e-12, 2e-7},    {Formulation::kIndex3, 1e-4, 1e1},
      {Formulation::kIndex3, 1e-6, 4e-1},  {Formulation::kIndex3, 1e-8, 1.5e-1},
      {Formulation::kIndex3, 1e-10, 7e-3}, {Formulation::kIndex3, 1e-12, 1e-4}};
  for (const Tol& t : tols) {
    const testing::Run r = RunWith(t.f, Integrator::kIdas, t.tol);
    const std::string what =
        std::string(ToString(t.f)) + " at " + std::to_string(t.tol);
    ASSERT_TRUE(r.summary.ok) << what << ": " << r.summary.error;
    EXPECT_DOUBLE_EQ(r.summary.t_reached, 0.2) << what;
    const double e = PositionError(r, ref);
    std::printf("%s: %ld steps, position error %.2e\n", what.c_str(),
                r.summary.stats.steps, e);
    EXPECT_LT(e, t.bound) << what;
  }
}

TEST(StiffLinkage, RefusesLoopsThatCannotClose) {
  const Problem p = problems::StiffLinkageProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  Eigen::VectorXd bad = prm;
  bad[p.model.ParameterIndex("a")] = 0.3;  // crank longer than the rod
  EXPECT_THROW(p.initial(bad), std::invalid_argument);
  bad = prm;
  bad[p.model.ParameterIndex("xG")] = 2.0;  // guide out of the rod's reach
  EXPECT_THROW(p.initial(bad), std::invalid_argument);
}

}  // namespace stiff_linkage_test
}  // namespace
}  // namespace daedalus
