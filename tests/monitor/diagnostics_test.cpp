// Diagnostics of a run against closed forms: the constraint power identity
// (seed 003's moving support and two-mass transfer), the energy balance
// (seed 003's coupled example, instantaneous and integrated), multiplier
// feasibility (unilateral rows and friction cones, with closed-form
// violation times) and KKT health near a slider-crank's dead centre.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <vector>

#include "daedalus/simulate.hpp"
#include "monitor/diagnostic_models.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace diagnostics_test {

using testing::DrivenSliderCrank;
using testing::DrivenSliderCrankStart;
using ::testing::HasSubstr;
using testing::kCrank;
using testing::kQ0;
using testing::kRoundOff;
using testing::LiftedBlock;
using testing::PulledBlock;

struct Collector : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

SimulationSummary RunModel(const Model& m,
                           const InitialState& x0,
                           const SimulationOptions& o,
                           Collector* c = nullptr) {
  return Simulate(m, x0, m.default_parameters(), o, c);
}

SimulationOptions Tight(double t_end, double step) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = step;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  return o;
}

// Composite Simpson rule over equally spaced samples (an even number of
// intervals): error (b - a) h^4 max|f''''| / 180.
double Simpson(const std::vector<double>& f, double h) {
  EXPECT_EQ(f.size() % 2, 1u) << "Simpson needs an even number of intervals";
  double s = f.front() + f.back();
  for (size_t i = 1; i + 1 < f.size(); ++i) s += (i % 2 ? 4.0 : 2.0) * f[i];
  return s * h / 3.0;
}

// ------------------------------------------------ constraint power identity

// Seed 003: a 2 kg mass carried by a support rising at 0.3 m/s with
// 0.4 m/s^2. The support force is m (g + s'') = 20.42 N, so it supplies
// 20.42 * 0.3 = 6.126 W at t = 0 and 20.42 (0.3 + 0.4 t) W later; both
// sides of lambda J v = -lambda Phi_t must show it.
TEST(PowerIdentity, MovingSupportSuppliesTheSeedPower) {
  const Model m = testing::SeedMovingSupport();
  Collector c;
  const SimulationSummary s =
      RunModel(m, {Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, 0.3)},
               Tight(1.0, 0.05), &c);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GT(c.samples.size(), 10u);
  // At the consistent initial state everything is exact to round-off.
  const Sample& s0 = c.samples.front();
  EXPECT_NEAR(s0.lambda[0], 20.42, 20.42 * kRoundOff);
  EXPECT_NEAR(s0.power[0], 6.126, 6.126 * kRoundOff);
  EXPECT_NEAR(s0.ideal_power[0], 6.126, 6.126 * kRoundOff);
  EXPECT_NEAR(s0.reaction_power[0], 6.126, 6.126 * kRoundOff);
  for (const Sample& smp : c.samples) {
    const double exact = 20.42 * (0.3 + 0.4 * smp.t);
    // Global error of a variable-order BDF run: ~100 rtol relative to the
    // power scale (about 10 W).
    EXPECT_NEAR(smp.power[0], exact, 100 * 1e-10 * 10) << "t=" << smp.t;
    EXPECT_NEAR(smp.ideal_power[0], exact, 100 * 1e-10 * 10) << "t=" << smp.t;
    // The gap of the identity is lambda times the velocity drift, exactly.
    EXPECT_NEAR(smp.power[0] - smp.ideal_power[0],
                smp.lambda[0] * smp.vel_residual[0], 1e-12);
    // Work of the support: int 20.42 (0.3 + 0.4 t) dt = 20.42 s(t), which is
    // also the energy gained (E - E0 = 20.42 s(t) along the exact motion).
    const double w = 20.42 * (0.3 * smp.t + 0.2 * smp.t * smp.t);
    EXPECT_NEAR(smp.constraint_work[0], w, 100 * 1e-10 * 10);
  }
  EXPECT_GT(s.power_gap_max[0], 0.0);
  EXPECT_LT(s.power_gap_max[0], 1e-8);
}

// Seed 003 two-mass example: M = diag(2, 3), q1 - q2 = 0, 10 N m on q1,
// v = (0.4, 0.4). lambda = -6 and J' lambda = (-6, 6): the reaction takes
// 2.4 W from the driven coordinate and gives 2.4 W to the other; the
// constraint's own power (a stationary constraint) is zero to round-off.
TEST(PowerIdentity, TwoMassTransferSumsToZero) {
  const Model m = testing::SeedConstrainedPair();
  Collector c;
  const SimulationSummary s =
      RunModel(m, {Eigen::Vector2d::Zero(), Eigen::Vector2d(0.4, 0.4)},
               Tight(1.0, 0.05), &c);
  ASSERT_TRUE(s.ok) << s.error;
  const Sample& s0 = c.samples.front();
  EXPECT_NEAR(s0.lambda[0], -6.0, 6 * kRoundOff);
  EXPECT_NEAR(s0.reaction_power[0], -2.4, 2.4 * kRoundOff);
  EXPECT_NEAR(s0.reaction_power[1], 2.4, 2.4 * kRoundOff);
  for (const Sample& smp : c.samples) {
    // Both coordinates move with vdot = 2: v = 0.4 + 2 t.
    const double v = 0.4 + 2.0 * smp.t;
    ASSERT_GT(std::abs(smp.reaction_power[0]), 2.0);  // non-zero transfer
    EXPECT_NEAR(smp.reaction_power[0], -6.0 * v, 100 * 1e-10 * 6 * v);
    EXPECT_NEAR(smp.reaction_power[1], 6.0 * v, 100 * 1e-10 * 6 * v);
    // The transfer cancels: constraint power and its identity side vanish
    // to round-off of the transfer terms (the constraint velocity v1 - v2
    // of this linear model stays at round-off).
    const double scale = 6.0 * v;
    EXPECT_LE(std::abs(smp.reaction_power.sum()), 16 * kRoundOff * scale);
    EXPECT_LE(std::abs(smp.power[0]), 16 * kRoundOff * scale);
    EXPECT_EQ(smp.ideal_power[0], 0.0);  // Phi_t = 0 exactly
  }
  EXPECT_LE(std::abs(s.final.constraint_work[0]), 1e-12);
}

// ------------------------------------------------------- energy balance

// Seed 003 coupled example at its manufactured state: applied power 4 W,
// damping loss 0.6 W, Edot = 3.4 W, accelerations (61/36, -17/36).
TEST(EnergyBalance, SeedCoupledPowerTermsAtTheManufacturedState) {
  const Model m = testing::SeedCoupled(4.0);
  Collector c;
  const SimulationSummary s =
      RunModel(m, {Eigen::Vector2d(0.2, -0.1), Eigen::Vector2d(1.0, 2.0)},
               Tight(0.1, 0.05), &c);
  ASSERT_TRUE(s.ok) << s.error;
  const Sample& s0 = c.samples.front();
  EXPECT_NEAR(s0.vdot[0], 61.0 / 36.0, kRoundOff);
  EXPECT_NEAR(s0.vdot[1], -17.0 / 36.0, kRoundOff);
  EXPECT_NEAR(s0.input_power[0], 4.0, 4 * kRoundOff);
  EXPECT_NEAR(s0.damping_power, 0.6, kRoundOff);
  EXPECT_NEAR(s0.energy_rate, 3.4, 4 * kRoundOff);
  // Independently: Edot = v' M vdot + z' K v for constant M and V = z'Kz/2.
  Eigen::Matrix2d M;
  M << 2.0, 0.4, 0.4, 0.8;
  const Eigen::Vector2d z(0.2, -0.1), v(1.0, 2.0);
  const double edot =
      v.dot(M * s0.vdot) + z.dot(Eigen::Vector2d(3, 5).asDiagonal() * v);
  EXPECT_NEAR(edot, 3.4, 4 * kRoundOff);
}

// Seed 003, one coordinate (inertia 2, stiffness 3, damping 0.2) at 0.2 rad
// and 1 rad/s: vdot = -0.4 and Edot = -0.2 W, exactly the damping loss.
TEST(EnergyBalance, SeedOneCoordinateLosesExactlyTheDampingPower) {
  const Model m = testing::SeedOneCoordinate();
  Collector c;
  const SimulationSummary s = RunModel(
      m, {Eigen::VectorXd::Constant(1, 0.2), Eigen::VectorXd::Constant(1, 1.0)},
      Tight(0.1, 0.05), &c);
  ASSERT_TRUE(s.ok) << s.error;
  const Sample& s0 = c.samples.front();
  EXPECT_NEAR(s0.vdot[0], -0.4, kRoundOff);
  EXPECT_NEAR(s0.damping_power, 0.2, kRoundOff);
  EXPECT_NEAR(s0.energy_rate, -0.2, kRoundOff);
  // Independently: Edot = m v vdot + k z v = 2 (-0.4) + 3 (0.2) = -0.2.
  EXPECT_NEAR(2.0 * s0.vdot[0] + 3.0 * 0.2 * 1.0, -0.2, kRoundOff);
}

// Seed 000 worked example 1 (two rods, absolute angles, base motor u1 and
// elbow motor u2 acting on the relative angle): each channel's work is the
// closed form u1 (alpha1 - alpha1(0)) and u2 (delta - delta(0)) with
// delta = alpha2 - alpha1, and the balance closes to the integration error.
TEST(EnergyBalance, RodPairMotorWorkMatchesTheSeedClosedForm) {
  const Model m = testing::RodPairAbsolute();
  SimulationOptions o = Tight(5.0, 0.1);
  o.rtol = 1e-9;
  o.atol = 1e-11;
  const Eigen::Vector2d a0(0.6, -0.2);
  Collector c;
  const SimulationSummary s =
      RunModel(m, {a0, Eigen::Vector2d(0.3, -0.4)}, o, &c);
  ASSERT_TRUE(s.ok) << s.error;
  double worst = 0.0;
  for (const Sample& smp : c.samples) {
    const double w1 = 0.2 * (smp.q[0] - a0[0]);
    const double w2 = -0.1 * ((smp.q[1] - smp.q[0]) - (a0[1] - a0[0]));
    worst = std::max({worst, std::abs(smp.input_work[0] - w1),
                      std::abs(smp.input_work[1] - w2)});
  }
  ASSERT_GT(std::abs(s.final.input_work[0]), 1e-3);  // the motors do work
  // Global error ~100 rtol relative to the angle scale (about 1 rad).
  EXPECT_LT(worst, 100 * o.rtol);
  // The residual is integration error: it falls as the tolerance tightens.
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const SimulationSummary tight =
      RunModel(m, {a0, Eigen::Vector2d(0.3, -0.4)}, o);
  ASSERT_TRUE(tight.ok) << tight.error;
  EXPECT_GT(s.energy_residual_max, 0.0);
  EXPECT_LT(tight.energy_residual_max, s.energy_residual_max / 10);
}

// The same example over a short run: the solver's error-controlled
// quadratures of the input power, the damping loss and the energy balance
// against an independent integration, by Simpson's rule, of the
// instantaneous powers sampled along a much tighter run.
TEST(EnergyBalance, QuadraturesMatchAnIndependentHighOrderIntegration) {
  const Model m = testing::SeedCoupled(4.0);
  const InitialState x0{Eigen::Vector2d(0.2, -0.1), Eigen::Vector2d(1.0, 2.0)};
  // Reference: rtol 1e-12 with 1000 samples per second; Simpson's error
  // is h^4 max|f''''| / 180 ~ 1e-12 * O(10) / 180 for these slow modes.
  const double h = 1e-3;
  SimulationOptions ref_o = Tight(1.0, h);
  ref_o.rtol = 1e-12;
  ref_o.atol = 1e-14;
  Collector ref;
  const SimulationSummary rs = RunModel(m, x0, ref_o, &ref);
  ASSERT_TRUE(rs.ok) << rs.error;
  ASSERT_EQ(ref.samples.size(), 1001u);
  std::vector<double> pin, pd, rate;
  for (const Sample& smp : ref.samples) {
    pin.push_back(smp.input_power[0]);
    pd.push_back(smp.damping_power);
    rate.push_back(smp.energy_rate);
  }
  const double w_in = Simpson(pin, h), w_d = Simpson(pd, h),
               de = Simpson(rate, h);
  ASSERT_GT(w_in, 1.0);  // the terms are not trivially zero
  ASSERT_GT(w_d, 0.1);
  // The reference run's own quadratures agree to its accuracy.
  EXPECT_NEAR(rs.final.input_work[0], w_in, 1e-10);
  EXPECT_NEAR(rs.final.damping_loss, w_d, 1e-10);
  // Integrating the balance's rate gives the energy change.
  EXPECT_NEAR(rs.energy_final - rs.energy_initial, de, 1e-10);

  // The run under test, at an ordinary tolerance: its quadratures are
  // within the global error of a BDF run, ~100 rtol relative to the work.
  SimulationOptions o = Tight(1.0, 0.1);
  o.rtol = 1e-8;
  o.atol = 1e-10;
  const SimulationSummary s = RunModel(m, x0, o);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_NEAR(s.final.input_work[0], w_in, 100 * o.rtol * w_in);
  EXPECT_NEAR(s.final.damping_loss, w_d, 100 * o.rtol * w_in);
  EXPECT_LT(s.energy_residual_max, 100 * o.rtol * w_in);
}

// ---------------------------------------------------------- feasibility

TEST(Feasibility, UnilateralViolationIntervalHasClosedFormEnds) {
  const Model m = LiftedBlock();
  for (Integrator in : {Integrator::kCvodesBdf, Integrator::kIdas}) {
    SimulationOptions o = Tight(1.0, 0.1);
    o.atol = 1e-10;
    o.integrator = in;
    o.formulation =
        in == Integrator::kIdas ? Formulation::kGgl : Formulation::kBaumgarte;
    const SimulationSummary s =
        RunModel(m, {Eigen::Vector2d::Zero(), Eigen::Vector2d(0.3, 0.0)}, o);
    ASSERT_TRUE(s.ok) << s.error;
    EXPECT_EQ(s.unilateral_rows, 1);
    ASSERT_EQ(s.violations.size(), 1u) << ToString(in);
    const FeasibilityViolation& v = s.violations[0];
    EXPECT_EQ(v.kind, "unilateral");
    EXPECT_EQ(v.name, "table");
    // The root finder locates the sign changes to about its tolerance.
    EXPECT_NEAR(v.t_start, 0.25, 1e-8) << ToString(in);
    EXPECT_NEAR(v.t_end, 0.75, 1e-8) << ToString(in);
    EXPECT_FALSE(v.ongoing);
    // The worst sampled value is at the output time t = 0.5 (the minimum).
    EXPECT_NEAR(v.t_worst, 0.5, 1e-12);
    EXPECT_NEAR(v.worst, -9.81 / 3.0, 1e-7);
  }
}

TEST(Feasibility, FrictionConeSlipIsLocatedAtTheClosedFormTime) {
  const Model m = PulledBlock(0.4);
  for (Integrator in : {Integrator::kCvodesBdf, Integrator::kIdas}) {
    SimulationOptions o = Tight(1.0, 0.1);
    o.atol = 1e-10;
    o.integrator = in;
    o.formulation =
        in == Integrator::kIdas ? Formulation::kGgl : Formulation::kBaumgarte;
    const SimulationSummary s =
        RunModel(m, {Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero()}, o);
    ASSERT_TRUE(s.ok) << s.error;
    EXPECT_EQ(s.friction_cones, 1);
    ASSERT_EQ(s.violations.size(), 1u) << ToString(in);
    const FeasibilityViolation& v = s.violations[0];
    EXPECT_EQ(v.kind, "friction_cone");
    EXPECT_EQ(v.name, "grip");
    EXPECT_NEAR(v.t_start, 0.6, 1e-8) << ToString(in);
    EXPECT_TRUE(v.ongoing);
    EXPECT_NEAR(v.t_end, 1.0, 1e-12);
    // Margin mu m g - c t at the last sample: 3.924 - 6.54 = -2.616.
    EXPECT_NEAR(v.t_worst, 1.0, 1e-12);
    EXPECT_NEAR(v.worst, 0.4 * 9.81 - 6.54, 1e-7);
    bool found = false;
    for (const EventRecord& e : s.events)
      if (e.name == "cone_grip") {
        found = true;
        EXPECT_NEAR(e.t, 0.6, 1e-8);
        EXPECT_EQ(e.direction, -1.0);
      }
    EXPECT_TRUE(found);
  }
  // With enough friction the contact sticks throughout: no violation.
  const SimulationSummary ok = RunModel(
      PulledBlock(1.0), {Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero()},
      Tight(1.0, 0.1));
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_TRUE(ok.violations.empty());
}

TEST(Feasibility, BadDeclarationsFailAtBuildWithNames) {
  auto base = [] {
    ModelBuilder b("bad");
    b.Coordinates({"x", "y"});
    b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
    b.Holonomic("table", [](const auto& x) { return x.q[1]; });
    b.Nonholonomic("roll", [](const auto& x) { return x.v[0]; });
    return b;
  };
  {
    ModelBuilder b = base();
    b.FrictionCone("grip", "table", "slip", 0.5);
    EXPECT_THAT(
        [&] { std::move(b).Build(); },
        ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
            HasSubstr("friction cone 'grip'"), HasSubstr("'slip'"),
            HasSubstr("declared constraints: 'table' 'roll'"))));
  }
  {
    ModelBuilder b = base();
    b.Unilateral("roll");
    EXPECT_THAT(
        [&] { std::move(b).Build(); },
        ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
            HasSubstr("'roll' is nonholonomic and cannot be unilateral"),
            HasSubstr("Holonomic or Moving"))));
  }
  {
    ModelBuilder b = base();
    b.Unilateral("floor");
    EXPECT_THAT([&] { std::move(b).Build(); },
                ::testing::ThrowsMessage<std::invalid_argument>(
                    HasSubstr("Unilateral() names constraint 'floor'")));
  }
  {
    ModelBuilder b = base();
    b.FrictionCone("grip", "roll", "table", 0.5);
    EXPECT_THAT([&] { std::move(b).Build(); },
                ::testing::ThrowsMessage<std::invalid_argument>(
                    HasSubstr("normal constraint 'roll' must be one holonomic "
                              "or moving row")));
  }
  {
    ModelBuilder b = base();
    b.FrictionCone("grip", "table", "roll", -0.1);
    EXPECT_THAT([&] { std::move(b).Build(); },
                ::testing::ThrowsMessage<std::invalid_argument>(
                    HasSubstr("must be finite and >= 0")));
  }
  {
    // A tangential nonholonomic (rolling) constraint is a valid cone.
    ModelBuilder b = base();
    b.FrictionCone("grip", "table", "roll", 0.5);
    const Model m = std::move(b).Build();
    ASSERT_EQ(m.data().friction_cones.size(), 1u);
    EXPECT_EQ(m.data().friction_cones[0].normal_row, 0);
    EXPECT_EQ(m.data().friction_cones[0].tangential_rows, std::vector<int>{1});
  }
}

// ----------------------------------------------------------- KKT health

// Reciprocal condition number of the Jacobi-scaled J M^-1 J' from the
// hand-written Jacobian at crank angle q on the exact path, by SVD (an
// independent route from the recorder's AD Jacobian and eigen-solver).
double ClosedFormRcond(double q) {
  const double p = std::asin(-kCrank * std::sin(q));
  Eigen::Matrix3d J;
  J << kCrank * std::sin(q), 1.0, std::sin(p), -kCrank * std::cos(q), 0.0,
      -std::cos(p), 0.0, 1.0, 0.0;
  const Eigen::Vector3d minv(1.0, 1.0, 0.5);
  const Eigen::Matrix3d S = J * minv.asDiagonal() * J.transpose();
  const Eigen::Vector3d d = S.diagonal().cwiseSqrt().cwiseInverse();
  const Eigen::Matrix3d Ss = d.asDiagonal() * S * d.asDiagonal();
  const Eigen::Vector3d sv =
      Eigen::JacobiSVD<Eigen::Matrix3d>(Ss).singularValues();
  return sv[2] / sv[0];
}

TEST(KktHealth, SliderCrankDrivenTowardDeadCentreWarns) {
  const Model m = DrivenSliderCrank();
  // rcond ~ 0.094 q^2 falls below 1e-6 near q = 3.3e-3, i.e. t = 0.9935;
  // stop at t = 0.998 (q = 1e-3) before the singularity itself.
  SimulationOptions o = Tight(0.998, 0.001);
  Collector c;
  const SimulationSummary s = RunModel(m, DrivenSliderCrankStart(), o, &c);
  ASSERT_TRUE(s.ok) << s.error;
  const KktHealthSummary& kh = s.kkt_health;
  ASSERT_TRUE(kh.checked);
  ASSERT_TRUE(kh.near_singular);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_THAT(s.warnings[0], HasSubstr("near-singular configuration"));
  EXPECT_THAT(s.warnings[0], HasSubstr("'loop_x' 'drive'"));
  // The recorded conditioning follows the closed form along the path
  // (the state is exact to the run's tolerance; rcond ~ q^2 is then
  // accurate to a few rtol relative).
  for (const Sample& smp : c.samples) {
    ASSERT_NEAR(smp.q[0], kQ0 * (1.0 - smp.t), 1e-6);
    EXPECT_NEAR(smp.kkt_rcond, ClosedFormRcond(smp.q[0]),
                1e-4 * ClosedFormRcond(smp.q[0]))
        << "t=" << smp.t;
  }
  // The first warning comes at the first sample past the closed-form
  // crossing of the threshold (bisection on the crank angle).
  double lo = 1e-4, hi = kQ0;  // rcond(lo) < 1e-6 < rcond(hi)
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ClosedFormRcond(mid) < kNearSingularRcond ? lo : hi) = mid;
  }
  const double t_cross = 1.0 - lo / kQ0;
  EXPECT_GE(kh.t_first_near_singular, t_cross);
  EXPECT_LE(kh.t_first_near_singular, t_cross + o.output_step + 1e-12);
  // The worst configuration is the last sample, still of full rank.
  EXPECT_NEAR(kh.t_worst, 0.998, 1e-12);
  EXPECT_NEAR(kh.q_worst[0], kQ0 * 0.002, 1e-6);
  EXPECT_LT(kh.rcond_min, 1e-6);
  EXPECT_EQ(kh.rank_J_min, 3);
  EXPECT_EQ(kh.weak_rows, (std::vector<std::string>{"loop_x", "drive"}));

  // Far from the dead centre the same mechanism is healthy: no warning.
  SimulationOptions early = o;
  early.t_end = 0.5;
  const SimulationSummary e = RunModel(m, DrivenSliderCrankStart(), early);
  ASSERT_TRUE(e.ok) << e.error;
  EXPECT_FALSE(e.kkt_health.near_singular);
  EXPECT_TRUE(e.warnings.empty());
  EXPECT_GT(e.kkt_health.rcond_min, 1e-3);
}

}  // namespace diagnostics_test
}  // namespace
}  // namespace daedalus
