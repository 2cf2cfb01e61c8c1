// Structure-preserving schemes against seed 000's closed forms: the
// variable-mass map's area preservation, the oscillator's symplectic Euler
// matrix, stability limit and modified energy, and RATTLE on the pendulum.
#include "daedalus/symplectic.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "pendulum.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace symplectic_test {

using ::testing::HasSubstr;
using testing::kRoundOff;
using testing::NearRel;

class Keep : public Observer {
 public:
  void OnSample(const Sample& s) override { samples.push_back(s); }
  std::vector<Sample> samples;
};

CanonicalState C(double q, double p) {
  return {Eigen::VectorXd::Constant(1, q), Eigen::VectorXd::Constant(1, p)};
}

/// Seed 000: a free unit mass on x > 0 in the coordinate q = log x, so
/// L = exp(2q) v^2 / 2 and H = exp(-2q) p^2 / 2.
Model VariableMass() {
  ModelBuilder b("variable_mass");
  b.Coordinates({"q"});
  b.KineticEnergy(
      [](const auto& x) { return 0.5 * exp(2.0 * x.q[0]) * x.v[0] * x.v[0]; });
  return std::move(b).Build();
}

/// Unit-frequency harmonic oscillator, H = (q^2 + p^2) / 2.
Model Oscillator() {
  ModelBuilder b("oscillator");
  b.Coordinates({"q"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([](const auto& x) { return 0.5 * x.q[0] * x.q[0]; });
  return std::move(b).Build();
}

/// Seed 004's planet in Cartesian coordinates (separable): m = 1, GM = 4.
Model CartesianPlanet() {
  ModelBuilder b("planet_xy");
  b.Coordinates({"x", "y"});
  b.KineticEnergy(
      [](const auto& x) { return 0.5 * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
  b.PotentialEnergy([](const auto& x) {
    return -4.0 / sqrt(x.q[0] * x.q[0] + x.q[1] * x.q[1]);
  });
  return std::move(b).Build();
}

double Det2(const Eigen::MatrixXd& j) {
  return j(0, 0) * j(1, 1) - j(0, 1) * j(1, 0);
}

// ------------------------------------------- seed 000: variable-mass map

// The implicit step has the closed form p1 = 2 p / (1 + sqrt(1 - 4 h a p)),
// q1 = q + h a p1 with a = exp(-2 q), and preserves area: det = 1.
TEST(SymplecticEuler, VariableMassStepMatchesTheClosedFormAndPreservesArea) {
  const Model m = VariableMass();
  const Eigen::VectorXd params = m.default_parameters();
  const double q = 0.2, p = 0.4, h = 0.1, a = std::exp(-2 * q);
  const CanonicalState x1 = SymplecticEulerStep(m, params, 0.0, h, C(q, p));
  const double p1 = 2 * p / (1 + std::sqrt(1 - 4 * h * a * p));
  EXPECT_NEAR(x1.p[0], p1, kRoundOff);
  EXPECT_NEAR(x1.q[0], q + h * a * p1, kRoundOff);

  const Eigen::MatrixXd jac =
      SymplecticEulerStepJacobian(m, params, 0.0, h, C(q, p));
  EXPECT_NEAR(Det2(jac), 1.0, kRoundOff);

  // The AD Jacobian through the Newton solve against central differences:
  // step 1e-5 gives truncation ~1e-10 and round-off ~1e-11 relative.
  const double d = 1e-5;
  Eigen::MatrixXd fd(2, 2);
  for (int k = 0; k < 2; ++k) {
    const double dq = k == 0 ? d : 0.0, dp = k == 1 ? d : 0.0;
    const CanonicalState plus =
        SymplecticEulerStep(m, params, 0.0, h, C(q + dq, p + dp));
    const CanonicalState minus =
        SymplecticEulerStep(m, params, 0.0, h, C(q - dq, p - dp));
    fd(0, k) = (plus.q[0] - minus.q[0]) / (2 * d);
    fd(1, k) = (plus.p[0] - minus.p[0]) / (2 * d);
  }
  EXPECT_TRUE(NearRel(jac, fd, 1e-9));
}

// Evaluating the force at the old momentum gives determinant
// 1 - 6 z^2 - 4 z^3 with z = h a p (seed 000), generally not 1.
TEST(SymplecticEuler, OldMomentumVariantIsNotAreaPreserving) {
  const Model m = VariableMass();
  for (const auto& [q, p, h] :
       {std::tuple{0.2, 0.4, 0.1}, std::tuple{-0.3, 1.2, 0.05},
        std::tuple{0.5, -2.0, 0.2}}) {
    const double z = h * std::exp(-2 * q) * p;
    const Eigen::MatrixXd jac = SymplecticEulerStepJacobian(
        m, m.default_parameters(), 0.0, h, C(q, p), EulerMomentum::kOld);
    const double expected = 1 - 6 * z * z - 4 * z * z * z;
    EXPECT_NEAR(Det2(jac), expected, kRoundOff);
    EXPECT_GT(std::abs(expected - 1.0), 1e-3);
    const Eigen::MatrixXd sym = SymplecticEulerStepJacobian(
        m, m.default_parameters(), 0.0, h, C(q, p), EulerMomentum::kNew);
    EXPECT_NEAR(Det2(sym), 1.0, kRoundOff);
  }
}

// Beyond 1 - 4 h a p < 0 there is no real solution on the branch continuous
// from h = 0: the step reports it instead of returning a number.
TEST(SymplecticEuler, NoRealBranchIsAnError) {
  const Model m = VariableMass();
  EXPECT_THAT(
      [&] {
        SymplecticEulerStep(m, m.default_parameters(), 0.0, 0.1, C(0, 10));
      },
      ::testing::ThrowsMessage<std::runtime_error>(
          HasSubstr("did not converge")));
}

// -------------------------------------------- seed 000: the oscillator

// Momentum-first symplectic Euler is A_h = [[1 - h^2, h], [-h, 1]] in (q, p).
TEST(SymplecticEuler, OscillatorStepMatrix) {
  const Model m = Oscillator();
  for (double h : {0.3, 1.7, 2.5}) {
    Eigen::MatrixXd a(2, 2);
    a << 1 - h * h, h, -h, 1;
    const Eigen::MatrixXd jac = SymplecticEulerStepJacobian(
        m, m.default_parameters(), 0.0, h, C(0.4, -0.7));
    EXPECT_TRUE(NearRel(jac, a, kRoundOff)) << h;
    const CanonicalState x =
        SymplecticEulerStep(m, m.default_parameters(), 0.0, h, C(0.4, -0.7));
    EXPECT_TRUE(NearRel(x.q, a.row(0) * Eigen::Vector2d(0.4, -0.7), kRoundOff));
  }
}

// For 0 < h < 2 the map keeps (q^2 + p^2 - h q p)/2 exactly; the round-off
// of 2000 steps grows like a random walk, well inside 2000 kRoundOff.
TEST(SymplecticEuler, OscillatorModifiedEnergyIsInvariant) {
  const Model m = Oscillator();
  for (double h : {0.1, 1.0, 1.9}) {
    CanonicalState x = C(1.0, 0.0);
    auto modified = [h](const CanonicalState& s) {
      const double q = s.q[0], p = s.p[0];
      return 0.5 * (q * q + p * p - h * q * p);
    };
    const double k0 = modified(x);
    double emax = 0.0;
    for (int n = 0; n < 2000; ++n) {
      x = SymplecticEulerStep(m, m.default_parameters(), 0.0, h, x);
      EXPECT_NEAR(modified(x), k0, 2000 * kRoundOff) << h << " " << n;
      emax = std::max(
          emax, std::abs(0.5 * (x.q[0] * x.q[0] + x.p[0] * x.p[0]) - 0.5));
    }
    // The true energy is not invariant: it oscillates by O(h).
    EXPECT_GT(emax, 0.1 * h * 0.5);
  }
}

// For h > 2 the eigenvalues leave the unit circle: the run grows without
// bound. Through Simulate, the energy reaches more than 1e20 times its
// initial value within 100 steps (spectral radius 1.88 at h = 2.1).
TEST(SymplecticEuler, OscillatorIsUnstableBeyondTwo) {
  const Model m = Oscillator();
  SimulationOptions o;
  o.integrator = Integrator::kSymplecticEuler;
  o.step = 2.1;
  o.output_step = 2.1;
  o.t_end = 210;
  Keep keep;
  InitialState x0{Eigen::VectorXd::Constant(1, 1.0), Eigen::VectorXd::Zero(1)};
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.stats.steps, 100);
  EXPECT_GT(keep.samples.back().energy, 1e20 * 0.5);

  o.step = o.output_step = 1.9;
  o.t_end = 190;
  Keep stable;
  ASSERT_TRUE(Simulate(m, x0, m.default_parameters(), o, &stable).ok);
  for (const auto& sm : stable.samples) EXPECT_LT(sm.energy, 10.0) << sm.t;
}

// ---------------------------------------------------- Stormer-Verlet

SimulationSummary RunScheme(const Model& m,
                            const InitialState& x0,
                            Integrator integrator,
                            double step,
                            double t_end,
                            Keep* keep) {
  SimulationOptions o;
  o.integrator = integrator;
  // RATTLE discretizes the index-3 form (formulation/support.cpp).
  if (integrator == Integrator::kRattle) o.formulation = Formulation::kIndex3;
  o.step = step;
  o.output_step = step * 10;
  o.t_end = t_end;
  return Simulate(m, x0, m.default_parameters(), o, keep);
}

// Kepler orbit (seed 004's numbers): Stormer-Verlet keeps the angular
// momentum x vy - y vx = 1.5 to round-off (a quadratic invariant of the
// central force that the kick and drift maps each preserve), keeps the
// energy error bounded over ten orbits, and is second order.
TEST(StormerVerlet, KeplerOrbit) {
  const Model m = CartesianPlanet();
  InitialState x0{Eigen::Vector2d(1.0, 0.0), Eigen::Vector2d(0.0, 1.5)};
  const double energy = 0.5 * 1.5 * 1.5 - 4.0, a = -4.0 / (2 * energy);
  const double period = 2 * M_PI * std::pow(a, 1.5) / 2.0;
  const double h = period / 400;
  Keep k1, k2;
  ASSERT_TRUE(
      RunScheme(m, x0, Integrator::kStormerVerlet, h, 10 * period, &k1).ok);
  ASSERT_TRUE(
      RunScheme(m, x0, Integrator::kStormerVerlet, h / 2, 10 * period, &k2).ok);
  for (const auto& s : k1.samples) {
    const double lz = s.q[0] * s.v[1] - s.q[1] * s.v[0];
    // 4000 steps, each rounding terms of size ~10: 1e4 kRoundOff.
    EXPECT_NEAR(lz, 1.5, 1e4 * kRoundOff) << s.t;
  }
  const EnergyBehaviour e1 = AnalyzeEnergy(k1.samples);
  const EnergyBehaviour e2 = AnalyzeEnergy(k2.samples);
  EXPECT_GT(e1.max_error, 0.0);
  // Bounded: the last orbit's error is no larger than the first's (up to
  // the sampling of the oscillation), no secular growth.
  EXPECT_LT(e1.growth(), 1.5);
  EXPECT_LT(e2.growth(), 1.5);
  // Second order: halving h divides the error by about 4.
  EXPECT_NEAR(e1.max_error / e2.max_error, 4.0, 0.5);
}

// -------------------------------------- symplectic Euler, general H

/// Seed 004's planet in polar coordinates: H = p_r^2/2 + p_phi^2/(2 r^2)
/// - 4/r is not separable.
Model PolarPlanet() {
  ModelBuilder b("planet_polar");
  b.Coordinates({"r", "phi"});
  b.KineticEnergy([](const auto& x) {
    return 0.5 * (x.v[0] * x.v[0] + x.q[0] * x.q[0] * x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([](const auto& x) { return -4.0 / x.q[0]; });
  return std::move(b).Build();
}

// The implicit symplectic Euler on the non-separable polar planet: phi is
// cyclic, so the discrete map keeps p_phi = r^2 phi' = 1.5 exactly (its
// momentum update adds h L_phi = 0), the energy error stays bounded over
// five orbits, and the scheme is first order.
TEST(SymplecticEuler, PolarPlanetOverFiveOrbits) {
  const Model m = PolarPlanet();
  InitialState x0{Eigen::Vector2d(1.0, 0.0), Eigen::Vector2d(0.0, 1.5)};
  const double energy = 0.5 * 1.5 * 1.5 - 4.0, a = -4.0 / (2 * energy);
  const double period = 2 * M_PI * std::pow(a, 1.5) / 2.0;
  const double h = period / 1000;
  Keep k1, k2;
  ASSERT_TRUE(
      RunScheme(m, x0, Integrator::kSymplecticEuler, h, 5 * period, &k1).ok);
  ASSERT_TRUE(
      RunScheme(m, x0, Integrator::kSymplecticEuler, h / 2, 5 * period, &k2)
          .ok);
  // p_phi recovered from the sampled (r, phi'): the velocity solve rounds
  // at ~kRoundOff per sample, nothing accumulates.
  for (const auto& s : k1.samples)
    EXPECT_NEAR(s.q[0] * s.q[0] * s.v[1], 1.5, 4 * kRoundOff) << s.t;
  const EnergyBehaviour e1 = AnalyzeEnergy(k1.samples);
  const EnergyBehaviour e2 = AnalyzeEnergy(k2.samples);
  EXPECT_GT(e1.max_error, 0.0);
  EXPECT_LT(e1.growth(), 1.5);
  EXPECT_NEAR(e1.max_error / e2.max_error, 2.0, 0.3);
}

// Applied forces enter as kicks and their work is integrated over the
// steps: a unit oscillator pushed by a constant force F = 0.8 from rest
// gains energy F q(t) (order 1) while its balance residual E - E0 - W
// stays at the scheme's O(h^2) level and bounded.
TEST(StormerVerlet, ForcedOscillatorEnergyBalance) {
  ModelBuilder b("forced");
  b.Coordinates({"q"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([](const auto& x) { return 0.5 * x.q[0] * x.q[0]; });
  b.Input(
      "push",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(1);
        c << 1.0;
        return c;
      },
      [](const auto& x) { return Scalar<decltype(x)>(0.8); });
  const Model m = std::move(b).Build();
  InitialState x0{Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1)};
  Keep k1, k2;
  ASSERT_TRUE(RunScheme(m, x0, Integrator::kStormerVerlet, 0.01, 60.0, &k1).ok);
  ASSERT_TRUE(
      RunScheme(m, x0, Integrator::kStormerVerlet, 0.005, 60.0, &k2).ok);
  double wmax = 0.0;
  for (const auto& s : k1.samples) {
    // Exact motion q = F (1 - cos t): the work F q reaches 2 F^2 = 1.28.
    EXPECT_NEAR(s.q[0], 0.8 * (1 - std::cos(s.t)), 1e-3) << s.t;
    wmax = std::max(wmax, s.input_work[0]);
  }
  EXPECT_NEAR(wmax, 1.28, 1e-3);
  const EnergyBehaviour e1 = AnalyzeEnergy(k1.samples);
  const EnergyBehaviour e2 = AnalyzeEnergy(k2.samples);
  EXPECT_LT(e1.max_error, 1e-4 * wmax);
  EXPECT_LT(e1.growth(), 1.5);
  EXPECT_NEAR(e1.max_error / e2.max_error, 4.0, 0.5);
}

// A model event stops a fixed-step run at the step after the crossing;
// its time is located by linear interpolation within the step.
TEST(StormerVerlet, EventStopsTheRun) {
  ModelBuilder b("oscillator_event");
  b.Coordinates({"q"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([](const auto& x) { return 0.5 * x.q[0] * x.q[0]; });
  b.Event("crossing", [](const auto& x) { return x.q[0]; });
  const Model m = std::move(b).Build();
  InitialState x0{Eigen::VectorXd::Constant(1, 1.0), Eigen::VectorXd::Zero(1)};
  Keep keep;
  const SimulationSummary s =
      RunScheme(m, x0, Integrator::kStormerVerlet, 0.01, 10.0, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].name, "crossing");
  EXPECT_TRUE(s.events[0].stopped);
  // Exact crossing at pi/2; Verlet's phase error at h = 0.01 over a quarter
  // period is ~h^2 t/24 ~ 1e-5, and linear location adds O(h^2) ~ 1e-5.
  EXPECT_NEAR(s.events[0].t, M_PI / 2, 1e-4);
  EXPECT_NEAR(s.t_reached, M_PI / 2, 0.01);
}

// ------------------------------------------------------------- RATTLE

// The pendulum of problems/pendulum.hpp (period 2 s): RATTLE keeps the rod
// constraint at position and velocity level to round-off at every sample,
// and its energy error stays bounded over 50 periods, second order in h.
TEST(Rattle, PendulumConstraintAndEnergy) {
  const Problem p = problems::PendulumProblem();
  const InitialState x0 = p.initial(p.model.default_parameters());
  Keep k1, k2;
  const SimulationSummary s1 =
      RunScheme(p.model, x0, Integrator::kRattle, 0.01, 100.0, &k1);
  ASSERT_TRUE(s1.ok) << s1.error;
  ASSERT_TRUE(
      RunScheme(p.model, x0, Integrator::kRattle, 0.005, 100.0, &k2).ok);
  EXPECT_EQ(s1.stats.steps, 10000);
  // Phi = x^2 + y^2 - 1 with |x|, |y| <= 1 is solved by Newton until it
  // stagnates at round-off: a few eps.
  EXPECT_LT(s1.drift_position_max, 8 * std::numeric_limits<double>::epsilon());
  // J v = 2 (x vx + y vy) with speeds up to ~7 m/s: round-off ~1e-14.
  EXPECT_LT(s1.drift_velocity_max, 1e-13);
  const EnergyBehaviour e1 = AnalyzeEnergy(k1.samples);
  const EnergyBehaviour e2 = AnalyzeEnergy(k2.samples);
  EXPECT_GT(e1.max_error, 0.0);
  EXPECT_LT(e1.growth(), 1.5);
  EXPECT_LT(std::abs(e1.drift_rate) * 100.0, 0.1 * e1.max_error);
  EXPECT_NEAR(e1.max_error / e2.max_error, 4.0, 0.5);
  // The multipliers are the physical ones (a KKT solve at each sample):
  // for m = l = 1, lambda = -(|v|^2 - g y)/2, which with E = |v|^2/2 + g y
  // is 1.5 g y - E: the tension 3 m g cos(theta) of the released pendulum,
  // off by exactly the energy error.
  const double g = problems::kPendulumGravity;
  for (const auto& s : k1.samples)
    EXPECT_NEAR(s.lambda[0], 1.5 * g * s.q[1] - s.energy, 1e3 * kRoundOff)
        << s.t;
}

// ---------------------------------------------------------- bad input

TEST(Schemes, ModelsTheyDoNotFit) {
  InitialState x1{Eigen::VectorXd::Constant(1, 0.2),
                  Eigen::VectorXd::Constant(1, 1.0)};
  auto run = [](const Model& m, const InitialState& x, Integrator i) {
    SimulationOptions o;
    o.integrator = i;
    if (i == Integrator::kRattle) o.formulation = Formulation::kIndex3;
    o.step = 0.01;
    o.t_end = 0.1;
    o.output_step = 0.01;
    return Simulate(m, x, m.default_parameters(), o);
  };
  using E = std::invalid_argument;
  EXPECT_THAT(
      [&] {
        run(testing::SeedOneCoordinate(), x1, Integrator::kStormerVerlet);
      },
      ::testing::ThrowsMessage<E>(HasSubstr("declares damping")));
  const Problem p = problems::PendulumProblem();
  const InitialState xp = p.initial(p.model.default_parameters());
  EXPECT_THAT(
      [&] { run(p.model, xp, Integrator::kSymplecticEuler); },
      ::testing::ThrowsMessage<E>(HasSubstr("use --integrator rattle")));
  EXPECT_THAT(
      [&] {
        run(testing::SeedMovingSupport(),
            InitialState{Eigen::VectorXd::Zero(1),
                         Eigen::VectorXd::Constant(1, 0.3)},
            Integrator::kRattle);
      },
      ::testing::ThrowsMessage<E>(
          HasSubstr("a moving constraint Phi(q, t) needs a SUNDIALS")));
  // Polar planet: M depends on r, so the Hamiltonian is not separable.
  ModelBuilder b("polar");
  b.Coordinates({"r", "phi"});
  b.KineticEnergy([](const auto& x) {
    return 0.5 * (x.v[0] * x.v[0] + x.q[0] * x.q[0] * x.v[1] * x.v[1]);
  });
  const Model polar = std::move(b).Build();
  const InitialState xq{Eigen::Vector2d(1, 0), Eigen::Vector2d(0, 1.5)};
  EXPECT_THAT([&] { run(polar, xq, Integrator::kStormerVerlet); },
              ::testing::ThrowsMessage<E>(HasSubstr("not separable")));
  EXPECT_TRUE(run(polar, xq, Integrator::kSymplecticEuler).ok);
  // A velocity-dependent input and a nonholonomic constraint.
  ModelBuilder c("knife");
  c.Coordinates({"x", "y"});
  c.KineticEnergy(
      [](const auto& x) { return 0.5 * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
  c.Input(
      "drag",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> col(2);
        col << 1.0, 0.0;
        return col;
      },
      [](const auto& x) { return -0.1 * x.v[0]; });
  const Model drag = std::move(c).Build();
  EXPECT_THAT([&] { run(drag, xq, Integrator::kSymplecticEuler); },
              ::testing::ThrowsMessage<E>(
                  HasSubstr("input 'drag' depends on the velocity of 'x'")));
  ModelBuilder d("skate");
  d.Coordinates({"x", "y"});
  d.KineticEnergy(
      [](const auto& x) { return 0.5 * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
  d.Nonholonomic("blade",
                 [](const auto& x) { return x.v[1] - x.q[0] * x.v[0]; });
  const Model skate = std::move(d).Build();
  EXPECT_THAT(
      [&] {
        run(skate, InitialState{Eigen::Vector2d(0, 0), Eigen::Vector2d(1, 0)},
            Integrator::kRattle);
      },
      ::testing::ThrowsMessage<E>(HasSubstr("nonholonomic")));
  // No step given.
  SimulationOptions o;
  o.integrator = Integrator::kRattle;
  std::string why;
  EXPECT_FALSE(o.IsValid(&why));
  EXPECT_THAT(why, HasSubstr("needs --step H > 0"));
  o.step = 0.003;
  EXPECT_FALSE(o.IsValid(&why));
  EXPECT_THAT(why, HasSubstr("multiple of --step"));
  EXPECT_EQ(IntegratorFromString("symplectic-euler"),
            Integrator::kSymplecticEuler);
}

}  // namespace symplectic_test
}  // namespace
}  // namespace daedalus
