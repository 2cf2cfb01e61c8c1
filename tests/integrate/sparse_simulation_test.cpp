// The sparse path in simulation (src/formulation/sparse_mechanics.cpp):
// the maximal-coordinate chain against the reduced one, sparse against
// dense runs (trajectory, energy bookkeeping, GGL on IDAS), redundant and
// contradictory constraints in a run, and the chain's command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <filesystem>
#include <memory>
#include <random>

#include "chain.hpp"
#include "chain_reduced.hpp"
#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/sparse_kkt.hpp"
#include "kkt/sparse_models.hpp"
#include "slider_crank.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace sparse_simulation_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::NearRel;
using ::testing::Not;
using testing::Parallelogram;
using testing::ParallelogramState;
using testing::SledAndSupport;

// ----------------------------------------------------------- simulation

struct Recorded : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

TEST(SparseSimulation, MaximalAndReducedChainsAgreeOnTheTip) {
  // Two formulations of one system, integrated independently at
  // rtol 1e-9: the tip positions (a path of ~1 m) agree to the integration
  // tolerance. The global error of each run is the tolerance times the
  // error growth over 1 s; 1e-8 m allows a growth factor of 10 (measured:
  // 7e-10 m for N = 2, 1e-12 m for N = 20).
  constexpr double kTipAgreement = 1e-8;
  for (int n : {2, 5, 20}) {
    SimulationOptions o;
    o.t_end = 1.0;
    o.output_step = 0.05;
    o.rtol = 1e-9;
    o.atol = 1e-11;
    o.integrator = Integrator::kCvodesAdams;
    o.formulation = Formulation::kBaumgarte;
    o.kkt.method = KktMethod::kSparseSchur;
    const Problem pm = problems::ChainProblem(n);
    const Problem pr = problems::ChainReducedProblem(n);
    Recorded rm, rr;
    const SimulationSummary sm =
        Simulate(pm.model, pm.initial(pm.model.default_parameters()),
                 pm.model.default_parameters(), o, &rm);
    o.kkt.method = KktMethod::kSchur;
    const SimulationSummary sr =
        Simulate(pr.model, pr.initial(pr.model.default_parameters()),
                 pr.model.default_parameters(), o, &rr);
    ASSERT_TRUE(sm.ok) << sm.error;
    ASSERT_TRUE(sr.ok) << sr.error;
    ASSERT_EQ(rm.samples.size(), rr.samples.size());
    double worst = 0.0, moved = 0.0;
    const Eigen::Vector2d tip0 = problems::ChainTip(rm.samples[0].q);
    for (size_t k = 0; k < rm.samples.size(); ++k) {
      const Eigen::Vector2d a = problems::ChainTip(rm.samples[k].q);
      const Eigen::Vector2d b = problems::ChainReducedTip(rr.samples[k].q);
      worst = std::max(worst, (a - b).norm());
      moved = std::max(moved, (a - tip0).norm());
    }
    EXPECT_GT(moved, 0.1) << "n = " << n;  // the tip really swings
    EXPECT_LT(worst, kTipAgreement) << "n = " << n;
    // Energy is conserved by both (no work terms): residual at tolerance.
    EXPECT_LT(sm.energy_residual_max, 1e-6);
    EXPECT_LT(sr.energy_residual_max, 1e-6);
  }
}

TEST(SparseSimulation, SparseAndDensePathsGiveTheSameRun) {
  const Problem p = problems::ChainProblem(4);
  SimulationOptions o;
  o.t_end = 0.5;
  o.output_step = 0.1;
  o.rtol = 1e-9;
  o.atol = 1e-11;
  o.formulation = Formulation::kProjection;
  o.integrator = Integrator::kCvodesBdf;
  const Eigen::VectorXd params = p.model.default_parameters();
  o.kkt.method = KktMethod::kSchur;
  const SimulationSummary d = Simulate(p.model, p.initial(params), params, o);
  o.kkt.method = KktMethod::kSparseLu;
  const SimulationSummary s = Simulate(p.model, p.initial(params), params, o);
  ASSERT_TRUE(d.ok) << d.error;
  ASSERT_TRUE(s.ok) << s.error;
  // Independent step sequences at rtol 1e-9: agreement to ~1e-7.
  EXPECT_TRUE(NearRel(s.final.q, d.final.q, 1e-7));
  EXPECT_TRUE(NearRel(s.final.lambda, d.final.lambda, 1e-6));
  EXPECT_LT(s.drift_position_max, 1e-12);  // projection to round-off
  EXPECT_GT(s.stats.projections, 0);
}

TEST(SparseSimulation, EnergyBookkeepingMatchesTheDensePath) {
  // The sparse path integrates only the work components that can be
  // nonzero (no ideal work on stationary rows): the per-row constraint and
  // ideal work must still equal the dense path's, which integrates all of
  // them, and the energy balance must close. The sled has a moving row
  // (ideal work of the lift) and a nonholonomic one.
  const Model model = SledAndSupport();
  InitialState x0;
  x0.q = Eigen::Vector4d(0.2, -0.1, 0.4, 0.1);
  x0.v = Eigen::Vector4d(0.5 * std::cos(0.4), 0.5 * std::sin(0.4), 1.0, 0.3);
  SimulationOptions o;
  o.t_end = 0.5;
  o.output_step = 0.1;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.formulation = Formulation::kBaumgarte;
  o.integrator = Integrator::kCvodesAdams;
  const Eigen::VectorXd params = model.default_parameters();
  o.kkt.method = KktMethod::kSchur;
  const SimulationSummary d = Simulate(model, x0, params, o);
  o.kkt.method = KktMethod::kSparseSchur;
  const SimulationSummary s = Simulate(model, x0, params, o);
  ASSERT_TRUE(d.ok) << d.error;
  ASSERT_TRUE(s.ok) << s.error;
  const int lift = model.constraint_row(1);
  ASSERT_GT(std::abs(d.final.ideal_constraint_work[lift]), 1e-3);
  // Independent step sequences at rtol 1e-10.
  EXPECT_TRUE(NearRel(s.final.ideal_constraint_work,
                      d.final.ideal_constraint_work, 1e-7));
  EXPECT_TRUE(NearRel(s.final.constraint_work, d.final.constraint_work, 1e-7));
  EXPECT_NEAR(s.final.explicit_time_work, d.final.explicit_time_work, 1e-9);
  EXPECT_LT(s.energy_residual_max, 1e-8);
  EXPECT_LT(d.energy_residual_max, 1e-8);

  // A stationary chain does no ideal work: exactly zero on both paths.
  const Problem chain = problems::ChainProblem(5);
  const Eigen::VectorXd cp = chain.model.default_parameters();
  o.rtol = 1e-8;
  o.atol = 1e-10;
  o.kkt.method = KktMethod::kSparseSchur;
  const SimulationSummary c = Simulate(chain.model, chain.initial(cp), cp, o);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.final.ideal_constraint_work.cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(c.final.constraint_work.size(), chain.model.nc());
  EXPECT_GT(c.final.constraint_work.cwiseAbs().maxCoeff(), 0.0);
  EXPECT_LT(c.energy_residual_max, 1e-8);
}

TEST(SparseSimulation, RedundantParallelogramMovesLikeThePlainOne) {
  SimulationOptions o;
  o.t_end = 1.0;
  o.output_step = 0.1;
  o.rtol = 1e-9;
  o.atol = 1e-11;
  o.formulation = Formulation::kProjection;
  o.kkt.method = KktMethod::kQr;
  // Hanging cranks swinging 0.5 rad about the bottom: far from the change
  // points at 0 and pi where all four points align and the mechanism
  // itself is singular.
  const InitialState x = ParallelogramState(-M_PI / 2 + 0.5, 0.0);
  const Eigen::VectorXd none(0);
  const SimulationSummary a = Simulate(Parallelogram(false), x, none, o);
  const SimulationSummary b = Simulate(Parallelogram(true), x, none, o);
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(b.ok) << b.error;
  ASSERT_GT((a.final.q - x.q).norm(), 0.1);
  // Independent step sequences at rtol 1e-9: agreement to ~1e-7.
  EXPECT_TRUE(NearRel(b.final.q, a.final.q, 1e-7));
  // Outputs are interpolated between projected steps: drift at the
  // tolerance, for the redundant row too.
  EXPECT_LT(b.drift_position_max, 1e-9);
  // The step count shows the redundant run is as smooth as the plain one.
  EXPECT_LT(b.stats.steps, 2 * a.stats.steps);
}

TEST(SparseSimulation, ContradictoryConstraintsFailTheRunWithTheirNames) {
  ModelBuilder b("contradiction");
  b.Coordinates({"x", "y"});
  b.KineticEnergyTerm(Touches{{0, 1}},
                      [](const auto& s) { return 0.5 * s.v.squaredNorm(); });
  b.Holonomic("at_zero", Touches{{0}}, [](const auto& s) { return s.q[0]; });
  b.Holonomic("at_one", Touches{{0}},
              [](const auto& s) { return s.q[0] - 1.0; });
  SimulationOptions o;
  o.t_end = 0.1;
  o.formulation = Formulation::kProjection;
  o.kkt.method = KktMethod::kQr;
  const SimulationSummary s =
      Simulate(std::move(b).Build(),
               InitialState{Eigen::Vector2d(0.5, 0.0), Eigen::Vector2d::Zero()},
               Eigen::VectorXd(0), o);
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, AllOf(HasSubstr("contradictory"), HasSubstr("at_one")));
}

TEST(SparseKkt, MethodNamesRoundTrip) {
  for (KktMethod m : {KktMethod::kAuto, KktMethod::kSchur, KktMethod::kFullLu,
                      KktMethod::kSparseSchur, KktMethod::kSparseLu,
                      KktMethod::kSparseCholesky, KktMethod::kQr})
    EXPECT_EQ(KktMethodFromString(ToString(m)), m) << ToString(m);
  EXPECT_THAT([] { KktMethodFromString("cholesky"); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("'cholesky'"), HasSubstr("sparse-lu"))));
}

TEST(SparseSimulation, BodiesOptionBuildsTheChainAndRejectsBadValues) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "daedalus_sparse_test")
          .string();
  auto run_with = [&](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return run(
        {{"bodies", 10, 1, 10000, "number of links"}},
        [](const std::vector<IntOption>& o) {
          return problems::ChainProblem(o[0].value);
        },
        static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(run_with({"chain", "--bodies", "3", "--t-end", "0.02", "--quiet",
                      "--output-dir", dir}),
            0);
  EXPECT_EQ(run_with({"chain", "--bodies=0", "--quiet"}), 2);
  EXPECT_EQ(run_with({"chain", "--bodies", "2.5", "--quiet"}), 2);
}

// Every formulation runs on both KKT paths (formulation/support.hpp): GGL on
// IDAS with the sparse evaluator integrates the same residual as the dense
// evaluator, so the two runs agree to their integration tolerance.
TEST(SparseSimulation, GglOnIdasAgreesWithTheDensePath) {
  // The slider-crank of SUNDIALS's idasSlCrank_dns, GGL on IDAS at its own
  // tolerances (rtol 1e-6, atol 1e-7).
  const Problem p = problems::SliderCrankProblem();
  SimulationOptions o = p.defaults;
  o.t_end = 2.0;
  o.output_step = 0.1;
  const Eigen::VectorXd params = p.model.default_parameters();
  o.kkt.method = KktMethod::kSchur;
  const SimulationSummary dense =
      Simulate(p.model, p.initial(params), params, o);
  o.kkt.method = KktMethod::kSparseSchur;
  const SimulationSummary sparse =
      Simulate(p.model, p.initial(params), params, o);
  ASSERT_EQ(o.formulation, Formulation::kGgl);
  ASSERT_TRUE(dense.ok) << dense.error;
  ASSERT_TRUE(sparse.ok) << sparse.error;
  EXPECT_THAT(sparse.evaluator, HasSubstr("sparse path"));
  EXPECT_THAT(dense.evaluator, Not(HasSubstr("sparse path")));
  // The crank turns: the comparison is not between two rest states.
  ASSERT_GT((sparse.final.q - p.initial(params).q).norm(), 0.1);
  // The residuals agree to round-off and so do the Newton matrices: the two
  // integrations differ by far less than their tolerance.
  EXPECT_LT((sparse.final.q - dense.final.q).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_LT((sparse.final.lambda - dense.final.lambda).cwiseAbs().maxCoeff(),
            1e-6 * (1.0 + dense.final.lambda.cwiseAbs().maxCoeff()));
  EXPECT_GT(sparse.stats.steps, 0);
}

}  // namespace sparse_simulation_test
}  // namespace
}  // namespace daedalus
