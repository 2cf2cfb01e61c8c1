// Accuracy at the edges (issue 40): a motion whose quaternion changes sign
// (the same rotation) given to the inverse dynamics, --max-steps as the
// run's budget whatever the output step, and the global error estimate
// (--error-estimate) against the true error on published mechanisms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "andrews_squeezer.hpp"
#include "car_axis.hpp"
#include "daedalus/error_estimate.hpp"
#include "daedalus/inverse_dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "four_bar.hpp"
#include "free_body.hpp"
#include "pendulum.hpp"
#include "slider_crank.hpp"

namespace daedalus {
namespace {
namespace accuracy_edges_test {

using ::testing::HasSubstr;

struct Collector : Observer {
  void OnSample(const Sample& s) override { samples.push_back(s); }
  std::vector<Sample> samples;
};

// The positions of a run of the free body (a quaternion, no inputs: the
// inverse dynamics' residual is the differentiation error alone).
MotionSamples FreeBodyMotion() {
  const Problem p = problems::FreeBodyProblem();
  SimulationOptions o = p.defaults;
  o.t_end = 0.3;
  o.output_step = 0.003;
  const Eigen::VectorXd prm = p.model.default_parameters();
  Collector c;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o, &c);
  EXPECT_TRUE(s.ok) << s.error;
  MotionSamples m;
  m.q.resize(static_cast<Eigen::Index>(c.samples.size()), p.model.nq());
  for (size_t i = 0; i < c.samples.size(); ++i) {
    m.t.push_back(c.samples[i].t);
    m.q.row(static_cast<Eigen::Index>(i)) = c.samples[i].q.transpose();
  }
  return m;
}

// A writer that keeps w >= 0 flips the quaternion's sign between two rows;
// q and -q are one rotation. Before, the fits differentiated across the
// jump: a residual of thousands, called "under-actuated".
TEST(MotionQuaternions, ASignFlipIsTheSameRotation) {
  const Problem p = problems::FreeBodyProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const MotionSamples smooth = FreeBodyMotion();
  ASSERT_GT(smooth.t.size(), 60u);
  const InverseDynamicsResult r0 = InverseDynamics(p.model, prm, smooth);
  ASSERT_TRUE(r0.ok) << r0.error;
  EXPECT_LT(r0.residual_max, 1e-4);  // the fits' truncation error
  EXPECT_TRUE(r0.notes.empty());

  MotionSamples flipped = smooth;
  const Eigen::Index n = flipped.q.rows();
  for (Eigen::Index i = 40; i < n; ++i) flipped.q.row(i) *= -1.0;  // from 40
  flipped.q.row(20) *= -1.0;                                       // one row
  const InverseDynamicsResult r1 = InverseDynamics(p.model, prm, flipped);
  ASSERT_TRUE(r1.ok) << r1.error;
  EXPECT_NEAR(r1.residual_max, r0.residual_max, 1e-12);
  EXPECT_EQ(r1.under_actuated, r0.under_actuated);
  ASSERT_EQ(r1.notes.size(), 1u);
  EXPECT_THAT(r1.notes[0],
              HasSubstr("changes sign 3 times between consecutive samples"));
  ASSERT_EQ(r1.samples.size(), r0.samples.size());
  for (size_t i = 0; i < r0.samples.size(); ++i)
    EXPECT_LT((r1.samples[i].v - r0.samples[i].v).norm(), 1e-12) << i;
}

// --max-steps was counted per output interval: a run passed with
// --output-step 0.01 and failed with one output interval, and the message's
// count was not the summary's. Now it is the run's budget.
TEST(StepBudget, TheSameRunPassesOrFailsWhateverTheOutputStep) {
  const Problem p = problems::PendulumProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  SimulationOptions o = p.defaults;
  o.t_end = 2.0;
  const SimulationSummary full = Simulate(p.model, p.initial(prm), prm, o);
  ASSERT_TRUE(full.ok) << full.error;
  const long budget = full.stats.steps / 2;
  ASSERT_GT(budget, 20);
  for (double output_step : {0.01, 0.5, 2.0}) {
    o.output_step = output_step;
    o.max_steps = budget;
    const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
    EXPECT_FALSE(s.ok) << output_step;
    EXPECT_THAT(s.error, HasSubstr("--max-steps " + std::to_string(budget) +
                                   " steps (the steps of the whole run"))
        << output_step;
    EXPECT_LE(s.stats.steps, budget) << output_step;
    EXPECT_GE(s.stats.steps, budget - 1) << output_step;
    o.max_steps = full.stats.steps + full.stats.steps / 5;
    const SimulationSummary ok = Simulate(p.model, p.initial(prm), prm, o);
    EXPECT_TRUE(ok.ok) << output_step << ": " << ok.error;
  }
}

// Generalized-alpha at rtol 1e-12 was less accurate than at 1e-10 on the
// four-bar and took 26 to 44 million steps, without a word.
TEST(AlphaTolerance, BelowWhatTheSchemeReachesItWarns) {
  const Problem p = problems::FourBarProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  for (Integrator i : {Integrator::kGeneralizedAlpha, Integrator::kHht}) {
    SimulationOptions o = p.defaults;
    o.formulation = Formulation::kIndex3;
    o.integrator = i;
    o.t_end = 0.02;
    o.rtol = 1e-12;
    o.atol = 1e-14;
    const SimulationSummary tight = Simulate(p.model, p.initial(prm), prm, o);
    ASSERT_TRUE(tight.ok) << tight.error;
    EXPECT_THAT(tight.warnings, ::testing::Contains(HasSubstr(
                                    std::string("--rtol 1e-12 is below what ") +
                                    ToString(i) + " can reach (about 1e-10")))
        << ToString(i);
    o.rtol = 1e-10;
    o.atol = 1e-12;
    const SimulationSummary ok = Simulate(p.model, p.initial(prm), prm, o);
    ASSERT_TRUE(ok.ok) << ok.error;
    EXPECT_THAT(ok.warnings,
                ::testing::Not(::testing::Contains(HasSubstr("can reach"))))
        << ToString(i);
    // A fixed step is not controlled by the tolerance: no warning.
    o.rtol = 1e-12;
    o.step = 1e-3;
    const SimulationSummary fixed = Simulate(p.model, p.initial(prm), prm, o);
    EXPECT_THAT(fixed.warnings,
                ::testing::Not(::testing::Contains(HasSubstr("can reach"))));
  }
}

struct EstimateCase {
  const char* name;
  Problem problem;
  Formulation formulation;
  Integrator integrator;
  double rtol, atol;
  // The published final positions (the Test Set for IVP Solvers' reference
  // solutions); empty: a run at the round-off floor is the truth.
  Eigen::VectorXd reference_q = Eigen::VectorXd();
};

template <size_t N>
Eigen::VectorXd Positions(const std::array<double, N>& q) {
  return Eigen::Map<const Eigen::VectorXd>(q.data(),
                                           static_cast<Eigen::Index>(N));
}

// The estimate of the final state's error against the true error, within a
// factor 3, at the default options and with index 3, whose error is far
// above its tolerance (the four-bar's crank 0.38 rad off at rtol 1e-6). The
// true error: on the four-bar and the slider-crank (docs/problems.md) the
// difference from a run at the round-off floor (GGL on IDAS at rtol 1e-13);
// on Andrews' squeezer and the car axis the difference from the Test Set's
// published reference at t_end (problems/andrews_squeezer.hpp,
// problems/car_axis.hpp; Daedalus's runs at rtol 1e-13 agree with it to
// 1.5e-9 and 4.5e-13 in q, far below the errors measured here).
TEST(ErrorEstimate, WithinAFactorThreeOfTheTrueErrorOnPublishedMechanisms) {
  std::vector<EstimateCase> cases;
  {
    const Problem fb = problems::FourBarProblem();
    cases.push_back({"four_bar defaults", fb, fb.defaults.formulation,
                     fb.defaults.integrator, fb.defaults.rtol,
                     fb.defaults.atol});
    cases.push_back({"four_bar index3 rtol 1e-6", fb, Formulation::kIndex3,
                     Integrator::kIdas, 1e-6, 1e-8});
    const Problem sc = problems::SliderCrankProblem();
    cases.push_back({"slider_crank defaults", sc, sc.defaults.formulation,
                     sc.defaults.integrator, sc.defaults.rtol,
                     sc.defaults.atol});
    cases.push_back({"slider_crank index3 rtol 1e-6", sc, Formulation::kIndex3,
                     Integrator::kIdas, 1e-6, 1e-8});
    const Problem an = problems::AndrewsSqueezerProblem();
    const Eigen::VectorXd an_q = Positions(problems::kAndrewsReference.q);
    cases.push_back({"andrews_squeezer defaults", an, an.defaults.formulation,
                     an.defaults.integrator, an.defaults.rtol, an.defaults.atol,
                     an_q});
    cases.push_back({"andrews_squeezer index3 rtol 1e-6", an,
                     Formulation::kIndex3, Integrator::kIdas, 1e-6, 1e-8,
                     an_q});
    const Problem ca = problems::CarAxisProblem();
    const Eigen::VectorXd ca_q = Positions(problems::kCarAxisReference.q);
    cases.push_back({"car_axis defaults", ca, ca.defaults.formulation,
                     ca.defaults.integrator, ca.defaults.rtol, ca.defaults.atol,
                     ca_q});
    cases.push_back({"car_axis index3 rtol 1e-6", ca, Formulation::kIndex3,
                     Integrator::kIdas, 1e-6, 1e-8, ca_q});
  }
  for (const EstimateCase& c : cases) {
    const Problem& p = c.problem;
    const Eigen::VectorXd prm = p.model.default_parameters();
    const InitialState x0 = p.initial(prm);
    SimulationOptions o = p.defaults;
    o.formulation = c.formulation;
    o.integrator = c.integrator;
    o.rtol = c.rtol;
    o.atol = c.atol;
    const SimulationSummary run = Simulate(p.model, x0, prm, o);
    ASSERT_TRUE(run.ok) << c.name << ": " << run.error;
    Eigen::VectorXd q_ref = c.reference_q;
    if (q_ref.size() == 0) {
      SimulationOptions t = p.defaults;
      t.formulation = Formulation::kGgl;
      t.integrator = Integrator::kIdas;
      t.rtol = 1e-13;
      t.atol = 1e-15;
      t.output_step = t.t_end - t.t0;
      t.max_steps = 50000000;
      const SimulationSummary truth = Simulate(p.model, x0, prm, t);
      ASSERT_TRUE(truth.ok) << c.name << ": " << truth.error;
      q_ref = truth.final.q;
    }
    const double q_true = (run.final.q - q_ref).cwiseAbs().maxCoeff();
    const ErrorEstimate e = EstimateGlobalError(p.model, x0, prm, o, run);
    ASSERT_TRUE(e.ok) << c.name << ": " << e.error;
    std::printf(
        "%-30s |dq| true %.3e, estimated %.3e (ratio %.2f), %.3g "
        "tolerances, met %d\n",
        c.name, q_true, e.q_max, e.q_max / q_true, e.tolerance_ratio,
        e.tolerance_met);
    EXPECT_GT(e.q_max, q_true / 3.0) << c.name;
    EXPECT_LT(e.q_max, q_true * 3.0) << c.name;
    // A tolerance missed by orders of magnitude says so.
    if (e.tolerance_ratio > kToleranceMet) {
      ASSERT_EQ(e.warnings.size(), 1u) << c.name;
      EXPECT_THAT(e.warnings[0],
                  HasSubstr("the requested tolerance was not met"));
    }
  }
}

}  // namespace accuracy_edges_test
}  // namespace
}  // namespace daedalus
