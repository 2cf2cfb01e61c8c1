// Integration: drift orderings, energy balance by quadratures against
// independent closed forms, and failure reporting.
#include "daedalus/simulate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "pendulum.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace simulate_test {

struct Collector : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

SimulationSummary RunPendulum(Formulation f,
                              double rtol,
                              double t_end,
                              Collector* c = nullptr) {
  const Problem p = problems::PendulumProblem();
  SimulationOptions o = p.defaults;
  o.formulation = f;
  o.rtol = rtol;
  o.atol = rtol;
  o.t_end = t_end;
  o.output_step = 0.1;
  return Simulate(p.model, p.initial(p.model.default_parameters()),
                  p.model.default_parameters(), o, c);
}

TEST(Simulate, BaumgarteDriftsLessThanUnstabilized) {
  const SimulationSummary plain =
      RunPendulum(Formulation::kUnstabilized, 1e-6, 30);
  const SimulationSummary baum = RunPendulum(Formulation::kBaumgarte, 1e-6, 30);
  const SimulationSummary proj =
      RunPendulum(Formulation::kProjection, 1e-6, 30);
  ASSERT_TRUE(plain.ok) << plain.error;
  ASSERT_TRUE(baum.ok) << baum.error;
  ASSERT_TRUE(proj.ok) << proj.error;
  EXPECT_GT(plain.drift_position_max, 0.0);
  EXPECT_LT(baum.drift_position_max, plain.drift_position_max / 10);
  EXPECT_LT(proj.drift_position_max, plain.drift_position_max / 10);
  EXPECT_GT(proj.stats.projections, 0);
}

TEST(Simulate, TighterToleranceGivesSmallerEnergyResidual) {
  const SimulationSummary a = RunPendulum(Formulation::kBaumgarte, 1e-6, 10);
  const SimulationSummary b = RunPendulum(Formulation::kBaumgarte, 1e-10, 10);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_GT(a.energy_residual_max, 0.0);
  EXPECT_LT(b.energy_residual_max, a.energy_residual_max / 100);
}

// Seed 003 coupled model under a constant torque: the input work quadrature
// must equal u (z1(t) - z1(0)) and the balance must close while E changes.
TEST(Simulate, InputWorkQuadratureMatchesClosedFormWork) {
  const Model m = testing::SeedCoupled(4.0);
  SimulationOptions o;
  o.t_end = 3.0;
  o.output_step = 0.05;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  InitialState x0{Eigen::Vector2d(0.2, -0.1), Eigen::Vector2d(1.0, 2.0)};
  Collector c;
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o, &c);
  ASSERT_TRUE(s.ok) << s.error;
  double worst = 0.0;
  for (const Sample& smp : c.samples) {
    const double w = 4.0 * (smp.q[0] - 0.2);
    worst = std::max(worst, std::abs(smp.input_work[0] - w));
  }
  EXPECT_LT(worst, 1e-8);
  EXPECT_GT(std::abs(s.energy_final - s.energy_initial), 0.1);
  EXPECT_GT(c.samples.back().damping_loss, 0.1);
  // Global error of E: 10-100 times rtol relative to the energy scale.
  EXPECT_LT(s.energy_residual_max,
            100 * o.rtol * std::max(1.0, std::abs(s.energy_initial)));
}

// A damped free model: E decreases, the residual stays at integration error.
TEST(Simulate, DampedModelBalanceClosesWhileEnergyFalls) {
  const Model m = testing::SeedOneCoordinate();
  SimulationOptions o;
  o.t_end = 5.0;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  InitialState x0{Eigen::VectorXd::Constant(1, 0.2),
                  Eigen::VectorXd::Constant(1, 1.0)};
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o);
  ASSERT_TRUE(s.ok);
  EXPECT_LT(s.energy_final, s.energy_initial - 0.1);
  // The residual is the global error of E; a variable-order multistep
  // method's global error is typically 10-100 times its local tolerance.
  EXPECT_LT(s.energy_residual_max, 100 * o.rtol);
  EXPECT_GT(s.energy_residual_max, 0.0);
}

// Moving support: the constraint work is the energy gained, equal to the
// ideal-power integral -lambda Phi_t, and the multiplier matches
// m (g + s'') = 2 (9.81 + 0.4) at all times.
TEST(Simulate, MovingSupportConstraintWorkEqualsEnergyGained) {
  const Model m = testing::SeedMovingSupport();
  SimulationOptions o;
  o.t_end = 2.0;
  o.output_step = 0.1;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  InitialState x0{Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, 0.3)};
  Collector c;
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o, &c);
  ASSERT_TRUE(s.ok) << s.error;
  const Sample& f = c.samples.back();
  const double gained = s.energy_final - s.energy_initial;
  ASSERT_GT(gained, 1.0);
  EXPECT_NEAR(f.constraint_work[0], gained, 1e-8);
  EXPECT_NEAR(f.ideal_constraint_work[0], gained, 1e-8);
  // Baumgarte adds m (beta^2 Phi + 2 alpha (J v + Phi_t)) to the support
  // force, so the multiplier is exact up to the recorded drift.
  for (const Sample& smp : c.samples) {
    const double bound =
        2.0 * (o.baumgarte_beta * o.baumgarte_beta * smp.drift_position +
               2.0 * o.baumgarte_alpha * smp.drift_velocity) +
        1e-12;
    EXPECT_NEAR(smp.lambda[0], 20.42, bound);
  }
}

TEST(Simulate, InitialStateIsProjectedAndCorrectionReported) {
  const Problem p = problems::PendulumProblem();
  SimulationOptions o = p.defaults;
  o.t_end = 0.5;
  InitialState x0{Eigen::Vector2d(1.2, 0.0), Eigen::Vector2d(0.0, 0.5)};
  const SimulationSummary s =
      Simulate(p.model, x0, p.model.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_NEAR(s.initial_correction_position, 0.2, 1e-12);
  EXPECT_NEAR(s.initial_correction_velocity, 0.0, 1e-12);  // v was tangent
}

TEST(Simulate, ContradictoryConstraintsFailWithNames) {
  ModelBuilder b("contradictory");
  b.Coordinates({"x", "y", "z"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.Holonomic("left", [](const auto& x) { return x.q[0]; });
  b.Holonomic("right", [](const auto& x) { return x.q[0] - 1.0; });
  const Model m = std::move(b).Build();
  InitialState x0{Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), {});
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, ::testing::HasSubstr("cannot be made consistent"));
  EXPECT_THAT(s.error, ::testing::HasSubstr("right"));
}

TEST(Simulate, FailureMidRunKeepsSamplesAndNamesFlag) {
  // The potential is undefined after t = 1: a model error mid-run.
  ModelBuilder b("breaks");
  b.Coordinates({"x"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([](const auto& x) {
    using S = Scalar<decltype(x)>;
    const double broken = Value(x.t) > 1.0 ? std::nan("") : 0.0;
    return S(0.5 * x.q[0] * x.q[0] + broken);
  });
  const Model m = std::move(b).Build();
  SimulationOptions o;
  o.t_end = 2.0;
  o.output_step = 0.01;
  InitialState x0{Eigen::VectorXd::Constant(1, 1.0), Eigen::VectorXd::Zero(1)};
  Collector c;
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o, &c);
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, ::testing::HasSubstr("CV_"));
  EXPECT_THAT(s.error, ::testing::HasSubstr("non-finite"));
  EXPECT_GE(c.samples.size(), 90u);
  EXPECT_LE(s.t_reached, 1.01);
}

TEST(Simulate, InvalidOptionsAreRejected) {
  const Problem p = problems::PendulumProblem();
  SimulationOptions o;
  o.rtol = -1.0;
  EXPECT_THAT(
      [&] {
        Simulate(p.model, p.initial(p.model.default_parameters()),
                 p.model.default_parameters(), o);
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          ::testing::HasSubstr("rtol")));
}

}  // namespace simulate_test
}  // namespace
}  // namespace daedalus

namespace daedalus {
namespace {
namespace simulate_test {

SimulationOptions DriftOptions(DriftAction action) {
  SimulationOptions o = problems::PendulumProblem().defaults;
  o.formulation = Formulation::kUnstabilized;
  o.rtol = o.atol = 1e-6;
  o.t_end = 30.0;
  o.output_step = 0.01;
  o.drift_tol = 1e-4;
  o.drift_action = action;
  return o;
}

TEST(DriftContract, EscalatesToProjectionAndRecordsWhenAndWhere) {
  const Problem p = problems::PendulumProblem();
  const SimulationSummary s = Simulate(
      p.model, p.initial(p.model.default_parameters()),
      p.model.default_parameters(), DriftOptions(DriftAction::kEscalate));
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.escalations.size(), 1u);
  const Escalation& e = s.escalations[0];
  EXPECT_EQ(e.constraint, "rod");
  EXPECT_EQ(e.from, Formulation::kUnstabilized);
  EXPECT_EQ(e.to, Formulation::kProjection);
  EXPECT_GT(e.drift, 1e-4);
  EXPECT_GT(e.t, 0.0);
  EXPECT_LT(e.t, 30.0);
  EXPECT_GT(s.stats.projections, 0);
  // After the escalation the drift stays below the contract; without it the
  // unstabilized run drifts to ~1e-2 (docs/drift_study.md).
  EXPECT_LT(s.final.drift_position, 1e-4);
}

TEST(DriftContract, FailModeStopsWithConstraintNameAndKeepsState) {
  const Problem p = problems::PendulumProblem();
  const SimulationSummary s =
      Simulate(p.model, p.initial(p.model.default_parameters()),
               p.model.default_parameters(), DriftOptions(DriftAction::kFail));
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, ::testing::HasSubstr("constraint 'rod'"));
  EXPECT_THAT(s.error, ::testing::HasSubstr("exceeds --drift-tol"));
  EXPECT_GT(s.samples, 1);
  EXPECT_LT(s.t_reached, 30.0);
}

}  // namespace simulate_test
}  // namespace
}  // namespace daedalus

namespace daedalus {
namespace {
namespace simulate_test {

// A 1 kg block resting on a table (gap y >= 0, unilateral: it can push, not
// pull) with an upward pull F = 2 m g t: lambda = m g - F = m g (1 - 2 t)
// changes sign at t = 0.5 exactly.
Model BlockOnTable() {
  ModelBuilder b("block_on_table");
  b.Coordinates({"x", "y"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[1]; });
  b.OtherLoads([](const auto& x) {
    VecX<Scalar<decltype(x)>> f(2);
    f << 0.0, 2.0 * 9.81 * x.t;
    return f;
  });
  b.Holonomic(
      "table", [](const auto& x) { return x.q[1]; }, 1,
      /*unilateral=*/true);
  return std::move(b).Build();
}

TEST(Events, UnilateralMultiplierSignChangeIsLocatedAtClosedFormTime) {
  const Model m = BlockOnTable();
  for (Integrator in : {Integrator::kCvodesBdf, Integrator::kIdas}) {
    SimulationOptions o;
    o.t_end = 1.0;
    o.output_step = 0.1;
    o.rtol = 1e-10;
    o.atol = 1e-10;
    o.integrator = in;
    o.formulation =
        in == Integrator::kIdas ? Formulation::kGgl : Formulation::kBaumgarte;
    InitialState x0{Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(0.3, 0.0)};
    const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o);
    ASSERT_TRUE(s.ok) << s.error;
    ASSERT_EQ(s.events.size(), 1u) << ToString(in);
    EXPECT_EQ(s.events[0].name, "lambda_table");
    EXPECT_NEAR(s.events[0].t, 0.5, 1e-8) << ToString(in);
    EXPECT_EQ(s.events[0].direction, -1.0);
    EXPECT_FALSE(s.events[0].stopped);
    EXPECT_NEAR(s.t_reached, 1.0, 1e-12);  // the run went on
    // The violation interval: from the root at 0.5 to the end of the run,
    // worst at the last sample, lambda(1) = m g (1 - 2) = -9.81.
    ASSERT_EQ(s.violations.size(), 1u) << ToString(in);
    EXPECT_EQ(s.violations[0].name, "table");
    EXPECT_NEAR(s.violations[0].t_start, 0.5, 1e-8);
    EXPECT_TRUE(s.violations[0].ongoing);
    EXPECT_NEAR(s.violations[0].t_end, 1.0, 1e-12);
    EXPECT_NEAR(s.violations[0].t_worst, 1.0, 1e-12);
    EXPECT_NEAR(s.violations[0].worst, -9.81, 1e-7);
  }
}

TEST(Events, UserEventStopsTheRunAtTheRoot) {
  // The period-2 pendulum released at (1, 0) first crosses x = 0 at t = 0.5.
  Problem p = problems::PendulumProblem();
  ModelBuilder b("pendulum_event");
  b.Coordinates({"x", "y"});
  const double g = problems::kPendulumGravity;
  b.KineticEnergy(
      [](const auto& x) { return 0.5 * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
  b.PotentialEnergy([=](const auto& x) { return g * x.q[1]; });
  b.Holonomic("rod", [](const auto& x) {
    return x.q[0] * x.q[0] + x.q[1] * x.q[1] - 1.0;
  });
  b.Event("bottom", [](const auto& x) { return x.q[0]; });
  const Model m = std::move(b).Build();
  SimulationOptions o;
  o.rtol = o.atol = 1e-11;
  o.t_end = 2.0;
  o.output_step = 0.1;
  o.integrator = Integrator::kCvodesAdams;
  InitialState x0{Eigen::Vector2d(1.0, 0.0), Eigen::Vector2d::Zero()};
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].name, "bottom");
  EXPECT_TRUE(s.events[0].stopped);
  EXPECT_NEAR(s.events[0].t, 0.5, 1e-7);
  EXPECT_NEAR(s.t_reached, s.events[0].t, 1e-14);
}

}  // namespace simulate_test
}  // namespace
}  // namespace daedalus
