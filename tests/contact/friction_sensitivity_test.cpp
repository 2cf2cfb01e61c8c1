// Forward sensitivities through Coulomb friction's stick and slip switches
// (issue 37 item 4; docs/friction.md, "Sensitivities"): the switch times'
// derivatives and the state's sensitivities against closed forms,
//   - sliding_sphere: slip -> stick at t* = 2 v0 / (7 mu g), then rolling;
//   - a block pulled by a ramp force: stick -> slip at t_s = mu_s m g / r;
//   - a block on a spring: two slip reversals, then stuck at s0 - 6 d;
// each on CVODES and on IDAS (its index-1 form and GGL: a slipping row's
// residual lambda_t + mu sigma lambda_n and its tangent, docs/friction.md,
// "On IDAS"); and the combinations that are not linearized, refused
// naming why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"
#include "sliding_sphere.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace friction_sensitivity_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The runs are at rtol 1e-12: the flows between switches are polynomial
// (constant or linear forces), which BDF integrates to round-off, and so
// are the sensitivity equations. The bound on dt*/dmu is 1e-7;
// the closed forms are met to about 1e-12.
constexpr double kClosedForm = 1e-9;

using daedalus::testing::Keep;
using daedalus::testing::Solver;

std::vector<EventRecord> Switches(const SimulationSummary& s,
                                  const std::string& name) {
  std::vector<EventRecord> out;
  for (const EventRecord& e : s.events)
    if (e.name == name) out.push_back(e);
  return out;
}

SimulationOptions Tight(double t_end,
                        Solver solver = {Integrator::kCvodesBdf,
                                         Formulation::kBaumgarte}) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = 0.01;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  solver.ApplyTo(&o);
  return o;
}

class FrictionSensitivities : public ::testing::TestWithParam<Solver> {};

// ---- sliding_sphere: x(T) = 5 v0 T / 7 + v0 t* / 7 and theta(T) =
// -5 v0 T / (7 r) + 5 v0 t* / (14 r) once it rolls; while it slips
// vx = v0 - mu g t.
TEST_P(FrictionSensitivities, SlidingSphereRollTimeAndStateMatchClosedForms) {
  const Problem p = problems::SlidingSphereProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double mu = prm[p.model.ParameterIndex("mu")];
  const double v0 = prm[p.model.ParameterIndex("v0")];
  const double g = prm[p.model.ParameterIndex("g")];
  const double r = prm[p.model.ParameterIndex("r")];
  SimulationOptions o = p.defaults;
  GetParam().ApplyTo(&o);
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"mu", "v0", "g"};
  o.sensitivity.initial_tangent = InitialStateTangent(p, prm);
  Keep keep;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  const double ts = problems::SlidingSphereRollTime(v0, mu, g);
  // dt*/d(mu, v0, g) = t* (-1/mu, 1/v0, -1/g).
  const std::vector<EventRecord> stick = Switches(s, "contact_stick");
  ASSERT_EQ(stick.size(), 1u);
  ASSERT_EQ(stick[0].dt_dp.size(), 3);
  const Eigen::Vector3d dts(-ts / mu, ts / v0, -ts / g);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(stick[0].dt_dp[i], dts[i], kClosedForm * std::abs(dts[i]))
        << o.sensitivity.parameters[static_cast<size_t>(i)];
  // While it slips: d vx / d(mu, v0, g) = (-g t, 1, -mu t).
  int slipping = 0;
  for (const Sample& x : keep.samples) {
    if (x.t <= 0.0 || x.t >= ts) continue;
    ++slipping;
    EXPECT_NEAR(x.sens(3, 0), -g * x.t, kClosedForm) << x.t;
    EXPECT_NEAR(x.sens(3, 1), 1.0, kClosedForm) << x.t;
    EXPECT_NEAR(x.sens(3, 2), -mu * x.t, kClosedForm) << x.t;
  }
  EXPECT_GT(slipping, 10);
  // At T, rolling: x, theta and vx.
  const double T = s.final.t;
  const Eigen::MatrixXd& S = s.final.sens;
  const double dx[3] = {v0 / 7.0 * dts[0], 5.0 * T / 7.0 + 2.0 * ts / 7.0,
                        v0 / 7.0 * dts[2]};
  const double dth[3] = {5.0 * v0 / (14.0 * r) * dts[0],
                         -5.0 * T / (7.0 * r) + 5.0 * ts / (7.0 * r),
                         5.0 * v0 / (14.0 * r) * dts[2]};
  const double dvx[3] = {0.0, 5.0 / 7.0, 0.0};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(S(0, i), dx[i], kClosedForm * (1.0 + std::abs(dx[i]))) << i;
    EXPECT_NEAR(S(2, i), dth[i], kClosedForm * (1.0 + std::abs(dth[i]))) << i;
    EXPECT_NEAR(S(3, i), dvx[i], kClosedForm) << i;
    EXPECT_NEAR(S(1, i), 0.0, kClosedForm) << i;  // z = r, not a parameter
  }
}

// ---- a block of mass m on a plane (coordinates s, n), pulled along s by
// the force rate t and held back by the spring k s; friction mu_s, mu_k as
// parameters.
Model PlaneBlock(double rate, double k, double mu_s, double mu_k) {
  ModelBuilder b("plane_block");
  b.Coordinates({"s", "n"});
  const Param pm = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param pg = b.Parameter("g", 9.81, ParamRange::Positive());
  const Param pr = b.Parameter("rate", rate);
  const Param pk = b.Parameter("k", k);
  b.Parameter("mu_s", mu_s, ParamRange::NonNegative());
  b.Parameter("mu_k", mu_k, ParamRange::NonNegative());
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[pm] * x.v.squaredNorm(); });
  b.PotentialEnergy([=](const auto& x) {
    return x.p[pm] * x.p[pg] * x.q[1] + 0.5 * x.p[pk] * x.q[0] * x.q[0];
  });
  b.OtherLoads([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    VecX<S> f = VecX<S>::Zero(2);
    f[0] = x.p[pr] * x.t;
    return f;
  });
  b.Holonomic("plane", [](const auto& x) { return x.q[1]; });
  b.Nonholonomic("plane_slip", [](const auto& x) { return x.v[0]; });
  ContactLaw law;
  law.friction = "plane_slip";
  law.mu_static_parameter = "mu_s";
  law.mu_kinetic_parameter = "mu_k";
  b.Unilateral("plane", law);
  return std::move(b).Build();
}

InitialState AtRest(double s0) {
  InitialState x0;
  x0.q = Eigen::Vector2d(s0, 0.0);
  x0.v = Eigen::Vector2d::Zero();
  return x0;
}

// Stick -> slip at t_s = mu_s m g / rate (the margin mu_s lambda_n -
// |lambda_t|, a function of the state through the KKT solve, falls
// through zero); then s(T) = rate (T^3 - t_s^3) / (6 m) - rate t_s^2 (T -
// t_s) / (2 m) - mu_k g (T - t_s)^2 / 2, whose dependence on t_s is
// d s / d t_s = g (mu_k - mu_s) (T - t_s), and v(T) = rate (T^2 - t_s^2) /
// (2 m) - mu_k g (T - t_s), d v / d t_s = g (mu_k - mu_s).
TEST_P(FrictionSensitivities, StictionBreaksAtAClosedFormTimeAndState) {
  const double rate = 10.0, mus = 0.5, muk = 0.3, m = 1.0, g = 9.81;
  const Model model = PlaneBlock(rate, 0.0, mus, muk);
  SimulationOptions o = Tight(1.0, GetParam());
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"mu_s", "mu_k", "rate"};
  const SimulationSummary s =
      Simulate(model, AtRest(0.0), model.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  const double ts = mus * m * g / rate, T = s.final.t, d = T - ts;
  const Eigen::Vector3d dts(ts / mus, 0.0, -ts / rate);
  const std::vector<EventRecord> slip = Switches(s, "contact_slip");
  ASSERT_EQ(slip.size(), 1u);
  ASSERT_EQ(slip[0].dt_dp.size(), 3);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(slip[0].dt_dp[i], dts[i],
                kClosedForm * (1.0 + std::abs(dts[i])))
        << i;
  const double ds_dts = g * (muk - mus) * d, dv_dts = g * (muk - mus);
  const Eigen::Vector3d ds(ds_dts * dts[0], -0.5 * g * d * d,
                           (T * T * T - ts * ts * ts) / (6.0 * m) -
                               ts * ts * d / (2.0 * m) + ds_dts * dts[2]);
  const Eigen::Vector3d dv(dv_dts * dts[0], -g * d,
                           (T * T - ts * ts) / (2.0 * m) + dv_dts * dts[2]);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(s.final.sens(0, i), ds[i],
                kClosedForm * (1.0 + std::abs(ds[i])))
        << i;
    EXPECT_NEAR(s.final.sens(2, i), dv[i],
                kClosedForm * (1.0 + std::abs(dv[i])))
        << i;
  }
}

// Two slip reversals (slip -> slip through zero speed), then stick: the
// turning points of the spring's swings are |s_n| = s0 - 2 n d, d = mu m
// g / k, at multiples of pi sqrt(m / k), and the block sticks at s_3 =
// -(s0 - 6 d): d s_3 / d mu = 6 m g / k, d s_3 / d s0 = -1, and the
// switch times do not depend on mu or s0.
TEST_P(FrictionSensitivities, SlipReversalsAndTheFinalStickMatchClosedForms) {
  const double k = 100.0, mu = 0.3, m = 1.0, g = 9.81, s0 = 0.2;
  const Model model = PlaneBlock(0.0, k, mu, mu);
  SimulationOptions o = Tight(1.5, GetParam());
  o.sensitivity.method = SensMethod::kForward;
  // One coefficient for both (mu_s = mu_k): d/dmu is the sum of the two
  // columns; and the start's position.
  o.sensitivity.parameters = {"mu_s", "mu_k", "q0[0]"};
  const SimulationSummary s =
      Simulate(model, AtRest(s0), model.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  const std::vector<EventRecord> slip = Switches(s, "contact_slip");
  const std::vector<EventRecord> stick = Switches(s, "contact_stick");
  ASSERT_EQ(slip.size(), 2u);
  ASSERT_EQ(stick.size(), 1u);
  for (const EventRecord& e : {slip[0], slip[1], stick[0]}) {
    ASSERT_EQ(e.dt_dp.size(), 3) << e.name;
    EXPECT_NEAR(e.dt_dp[0] + e.dt_dp[1], 0.0, kClosedForm) << e.t;
    EXPECT_NEAR(e.dt_dp[2], 0.0, kClosedForm) << e.t;
  }
  EXPECT_NEAR(s.final.sens(0, 0) + s.final.sens(0, 1), 6.0 * m * g / k,
              kClosedForm);
  EXPECT_NEAR(s.final.sens(0, 2), -1.0, kClosedForm);
  // Stuck: no velocity sensitivity.
  EXPECT_NEAR(s.final.sens(2, 0) + s.final.sens(2, 1), 0.0, kClosedForm);
  EXPECT_NEAR(s.final.sens(2, 2), 0.0, kClosedForm);
}

INSTANTIATE_TEST_SUITE_P(
    Solvers,
    FrictionSensitivities,
    ::testing::Values(Solver{Integrator::kCvodesBdf, Formulation::kBaumgarte},
                      Solver{Integrator::kIdas, Formulation::kBaumgarte},
                      Solver{Integrator::kIdas, Formulation::kGgl},
                      Solver{Integrator::kIdas, Formulation::kGgl,
                             LinearSolver::kKlu}),
    daedalus::testing::SolverName);

// What is not linearized is refused naming why: the adjoint with friction,
// a 3D cone, and a contact switch while a contact with friction is closed
// (here the block's impact, which closes it slipping).
TEST(FrictionRefusals, WhatIsNotLinearizedIsRefusedWithTheReason) {
  const Problem p = problems::SlidingSphereProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  SimulationOptions adj = p.defaults;
  adj.sensitivity.method = SensMethod::kAdjoint;
  adj.sensitivity.parameters = {"mu"};
  adj.sensitivity.functional = "x_final";
  EXPECT_THAT([&] { Simulate(p.model, p.initial(prm), prm, adj); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("adjoint"), HasSubstr("friction"),
                        HasSubstr("--sens-method forward"))));

  ModelBuilder b("cone_block");
  b.Coordinates({"s", "n", "w"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[1]; });
  b.Holonomic("plane", [](const auto& x) { return x.q[1]; });
  b.Nonholonomic(
      "plane_slip",
      [](const auto& x) {
        using S = Scalar<decltype(x)>;
        VecX<S> u(2);
        u << x.v[0], x.v[2];
        return u;
      },
      2);
  b.Unilateral("plane", ContactLaw{.friction = "plane_slip", .mu_static = 0.3});
  const Model cone = std::move(b).Build();
  InitialState x0;
  x0.q = Eigen::Vector3d::Zero();
  x0.v = Eigen::Vector3d(1.0, 0.0, 1.0);
  SimulationOptions fwd = Tight(0.5);
  fwd.sensitivity.method = SensMethod::kForward;
  fwd.sensitivity.parameters = {"v0[0]"};
  EXPECT_THAT(
      [&] { Simulate(cone, x0, cone.default_parameters(), fwd); },
      ::testing::ThrowsMessage<std::invalid_argument>(AllOf(
          HasSubstr("3D friction cone"), HasSubstr("planar friction only"))));

  // Dropped from 0.1 with a horizontal speed: the impact closes the
  // contact with friction.
  const Model block = PlaneBlock(0.0, 0.0, 0.5, 0.3);
  InitialState drop;
  drop.q = Eigen::Vector2d(0.0, 0.1);
  drop.v = Eigen::Vector2d(3.0, 0.0);
  fwd.sensitivity.parameters = {"mu_k"};
  const SimulationSummary s =
      Simulate(block, drop, block.default_parameters(), fwd);
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, AllOf(HasSubstr("sensitivities across"),
                             HasSubstr("'plane'"), HasSubstr("friction")))
      << s.error;
}

}  // namespace friction_sensitivity_test
}  // namespace
}  // namespace daedalus
