// The events layer (src/events/): functionals named at events, event
// directions, re-arming after a reset, grazing events, reset maps that
// leave the constraints, and the bad requests (docs/sensitivities.md,
// "Events", "Resets", "Functionals at events").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bouncing_ball.hpp"
#include "daedalus/model.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"
#include "events/event_jump.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace event_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A ball thrown up at u from y = 0 under gravity g (no ground): the apex
// at u / g, height u^2 / (2 g).
Model Throw(EventOptions apex_options) {
  ModelBuilder b("throw");
  b.Coordinates({"y"});
  const Param g = b.Parameter("g", 9.81);
  const Param u = b.Parameter("u", 5.0);
  (void)u;
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([=](const auto& x) { return x.p[g] * x.q[0]; });
  // The apex: the velocity crossing zero from above.
  b.Event(
      "apex", [](const auto& x) { return x.v[0]; }, apex_options);
  b.TerminalFunctional("height", [](const auto& x) { return x.q[0]; });
  return std::move(b).Build();
}

InitialState ThrowStart(double u) {
  return {Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, u)};
}

TEST(Events, FunctionalSpecificationsAreCheckedAgainstTheModel) {
  const Model m = problems::BouncingBallProblem().model;
  EXPECT_NO_THROW(CheckFunctionalSpec(m, "height"));
  EXPECT_NO_THROW(CheckFunctionalSpec(m, "height@impact"));
  EXPECT_NO_THROW(CheckFunctionalSpec(m, "t_impact@impact#12"));
  EXPECT_THAT([&] { CheckFunctionalSpec(m, "depth@impact"); },
              ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("declares no functional 'depth'"),
                        HasSubstr("t_impact, height, speed"))));
  EXPECT_THAT([&] { CheckFunctionalSpec(m, "height@bounce"); },
              ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("no event 'bounce'"),
                        HasSubstr("declared events: impact"))));
  for (const char* bad :
       {"height@impact#0", "height@impact#", "height@impact#x"})
    EXPECT_THAT([&] { CheckFunctionalSpec(m, bad); },
                ThrowsMessage<std::invalid_argument>(
                    HasSubstr("a whole number from 1")))
        << bad;
}

// A falling-only event fires at each apex of the bouncing ball's flight,
// never on the way up; --functional height@apex#2 is the second apex's
// height, e^2 h0... here the thrown ball: one apex, at u / g, its height
// u^2 / (2 g), and its derivatives.
TEST(Events, DirectionsAndFunctionalsAtANonStoppingEvent) {
  const Model m = Throw({.direction = EventDirection::kFalling, .stop = false});
  const Eigen::VectorXd p = m.default_parameters();
  const double g = p[0], u = 5.0;
  SimulationOptions o;
  o.t_end = 1.0;
  o.output_step = 0.1;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"g", "v0[y]"};
  o.sensitivity.functional = "height@apex";
  const SimulationSummary s = Simulate(m, ThrowStart(u), p, o);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.events.size(), 1u);  // the rising crossing is not an event
  const EventRecord& e = s.events[0];
  EXPECT_FALSE(e.stopped);
  EXPECT_NEAR(e.t, u / g, 1e-12);
  EXPECT_NEAR(e.rate, -g, 1e-9);  // dv/dt
  ASSERT_EQ(e.dt_dp.size(), 2);
  EXPECT_NEAR(e.dt_dp[0], -u / (g * g), 1e-10);  // d(u/g)/dg
  EXPECT_NEAR(e.dt_dp[1], 1.0 / g, 1e-10);       // d(u/g)/du
  EXPECT_NEAR(s.final.t, 1.0, 1e-12);            // the run went on
  // The functional at the apex, and every functional at the end.
  const FunctionalValue* at_apex = nullptr;
  for (const FunctionalValue& f : s.functionals)
    if (f.at == "apex#1") at_apex = &f;
  ASSERT_NE(at_apex, nullptr);
  EXPECT_TRUE(at_apex->evaluated);
  EXPECT_NEAR(at_apex->value, u * u / (2 * g), 1e-10);
  ASSERT_EQ(at_apex->gradient.size(), 2);
  EXPECT_NEAR(at_apex->gradient[0], -u * u / (2 * g * g), 1e-9);
  EXPECT_NEAR(at_apex->gradient[1], u / g, 1e-9);
  EXPECT_NEAR(s.sensitivities.functional_value, at_apex->value, 0.0);
  ASSERT_EQ(s.functionals.size(), 2u);
  EXPECT_EQ(s.functionals[0].at, "apex#1");
  EXPECT_EQ(s.functionals[1].at, "end");
  EXPECT_NEAR(s.functionals[1].value, u - 0.5 * g, 1e-10);
  // The adjoint stops its forward pass at the apex and agrees.
  o.sensitivity.method = SensMethod::kAdjoint;
  const SimulationSummary a = Simulate(m, ThrowStart(u), p, o);
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_NEAR(a.sensitivities.functional_value, u * u / (2 * g), 1e-10);
  const Eigen::VectorXd ga = a.sensitivities.functionals[0].second;
  EXPECT_NEAR(ga[0], -u * u / (2 * g * g), 1e-9);
  EXPECT_NEAR(ga[1], u / g, 1e-9);
}

// SensitivityOptions::more_functionals: one forward run reports the
// named functional and further ones at the same event (the apex time
// t_a = u / g and the height there, u^2 / (2 g)) with their closed-form
// gradients, an occurrence that never comes as not evaluated; the
// sensitivity result keeps the named one alone; a plain run reports the
// values; an unknown name is refused before the run.
TEST(Events, FurtherFunctionalsAtAnEventComeFromTheSameRun) {
  ModelBuilder b("throw2");
  b.Coordinates({"y"});
  const Param g = b.Parameter("g", 9.81);
  b.Parameter("u", 5.0);
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([=](const auto& x) { return x.p[g] * x.q[0]; });
  b.Event("apex", [](const auto& x) { return x.v[0]; },
          {.direction = EventDirection::kFalling, .stop = false});
  b.TerminalFunctional("height", [](const auto& x) { return x.q[0]; });
  b.TerminalFunctional("time", [](const auto& x) { return x.t; });
  const Model m = std::move(b).Build();
  const Eigen::VectorXd p = m.default_parameters();
  const double gv = p[0], u = 5.0;
  SimulationOptions o;
  o.t_end = 1.0;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"g", "v0[y]"};
  o.sensitivity.functional = "height@apex";
  o.sensitivity.more_functionals = {"time@apex", "height@apex#2"};
  auto find = [](const SimulationSummary& s, const std::string& name,
                 const std::string& at) -> const FunctionalValue* {
    for (const FunctionalValue& f : s.functionals)
      if (f.name == name && f.at == at) return &f;
    return nullptr;
  };
  const SimulationSummary s = Simulate(m, ThrowStart(u), p, o);
  ASSERT_TRUE(s.ok) << s.error;
  const FunctionalValue* h = find(s, "height", "apex#1");
  const FunctionalValue* t = find(s, "time", "apex#1");
  const FunctionalValue* h2 = find(s, "height", "apex#2");
  ASSERT_NE(h, nullptr);
  ASSERT_NE(t, nullptr);
  ASSERT_NE(h2, nullptr);
  EXPECT_FALSE(h2->evaluated);
  EXPECT_NEAR(h->value, u * u / (2 * gv), 1e-10);
  EXPECT_NEAR(t->value, u / gv, 1e-10);
  ASSERT_EQ(h->gradient.size(), 2);
  ASSERT_EQ(t->gradient.size(), 2);
  EXPECT_NEAR(h->gradient[0], -u * u / (2 * gv * gv), 1e-9);
  EXPECT_NEAR(h->gradient[1], u / gv, 1e-9);
  EXPECT_NEAR(t->gradient[0], -u / (gv * gv), 1e-9);
  EXPECT_NEAR(t->gradient[1], 1.0 / gv, 1e-9);
  ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
  EXPECT_EQ(s.sensitivities.functionals[0].first, "height");
  // A plain run: the values.
  o.sensitivity.method = SensMethod::kNone;
  o.sensitivity.parameters.clear();
  const SimulationSummary plain = Simulate(m, ThrowStart(u), p, o);
  ASSERT_TRUE(plain.ok) << plain.error;
  ASSERT_NE(find(plain, "time", "apex#1"), nullptr);
  EXPECT_NEAR(find(plain, "time", "apex#1")->value, u / gv, 1e-10);
  o.sensitivity.more_functionals = {"time@peak"};
  EXPECT_THROW(Simulate(m, ThrowStart(u), p, o), std::invalid_argument);
}

// A functional tied to an occurrence that does not come: the plain and
// forward runs say so (no value), the adjoint refuses to give a gradient.
TEST(Events, AFunctionalAtAnEventThatNeverOccursHasNoValue) {
  const Model m = Throw({.direction = EventDirection::kFalling, .stop = false});
  const Eigen::VectorXd p = m.default_parameters();
  SimulationOptions o;
  o.t_end = 1.0;
  o.sensitivity.functional = "height@apex#2";
  const SimulationSummary s = Simulate(m, ThrowStart(5.0), p, o);
  ASSERT_TRUE(s.ok) << s.error;
  bool found = false;
  for (const FunctionalValue& f : s.functionals)
    if (f.at == "apex#2") {
      found = true;
      EXPECT_FALSE(f.evaluated);
    }
  EXPECT_TRUE(found);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_THAT(s.warnings.back(),
              AllOf(HasSubstr("occurred 1 time(s)"), HasSubstr("not 2"),
                    HasSubstr("no value and no gradient")));
  o.sensitivity.method = SensMethod::kAdjoint;
  o.sensitivity.parameters = {"g"};
  const SimulationSummary a = Simulate(m, ThrowStart(5.0), p, o);
  EXPECT_FALSE(a.ok);
  EXPECT_THAT(a.error, AllOf(HasSubstr("event 'apex' occurred 1 time(s)"),
                             HasSubstr("not 2")));
}

// A particle gliding along y = 0 at unit speed meets the curve
// y = c (x - 0.5)^3 at its inflection, tangentially: the event function
// g = y - c (x - 0.5)^3 changes sign there (a root SUNDIALS finds) with
// g_y y' = 0 for a gradient and a velocity that do not vanish, a grazing
// crossing whose time is not differentiable in c. A plain run records it as
// such; sensitivities that must cross it (it stops the run) are refused
// with the event and the reason, keeping the samples before it.
TEST(Events, GrazingEventsAreReportedAndNeverDividedBy) {
  ModelBuilder b("glide");
  b.Coordinates({"x", "y"});
  const Param c = b.Parameter("c", 1.0);
  b.KineticEnergy(
      [](const auto& x) { return 0.5 * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
  b.Event("inflection", [=](const auto& x) {
    const auto d = x.q[0] - 0.5;
    return x.q[1] - x.p[c] * d * d * d;
  });
  const Model m = std::move(b).Build();
  const InitialState x0{Eigen::Vector2d::Zero(), Eigen::Vector2d(1.0, 0.0)};
  SimulationOptions o;
  o.t_end = 1.0;
  o.output_step = 0.01;
  const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_NEAR(s.events[0].t, 0.5, 1e-4);
  EXPECT_TRUE(s.events[0].grazing);
  EXPECT_TRUE(s.events[0].stopped);
  EXPECT_EQ(s.events[0].dt_dp.size(), 0);
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"c"};
  const SimulationSummary f = Simulate(m, x0, m.default_parameters(), o);
  EXPECT_FALSE(f.ok);
  EXPECT_THAT(f.error,
              AllOf(HasSubstr("event 'inflection'"), HasSubstr("grazing"),
                    HasSubstr("not differentiable")));
  // Nothing already recorded is lost: the samples up to the event.
  EXPECT_GE(f.samples, 50);
}

// A pendulum whose reset moves the bob off its circle: the restart is
// projected back, the correction reported, and the energy the reset and its
// projection changed booked as reset work.
TEST(Events, AResetThatLeavesTheConstraintsIsProjected) {
  ModelBuilder b("kicked_pendulum");
  b.Coordinates({"x", "y"});
  const Param g = b.Parameter("g", 9.81);
  b.KineticEnergy(
      [](const auto& x) { return 0.5 * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
  b.PotentialEnergy([=](const auto& x) { return x.p[g] * x.q[1]; });
  b.Holonomic("rod", [](const auto& x) {
    return x.q[0] * x.q[0] + x.q[1] * x.q[1] - 1.0;
  });
  b.Event("bottom", [](const auto& x) { return x.q[0]; },
          {.direction = EventDirection::kFalling, .stop = false});
  b.Reset("bottom", [](const auto& x) {
    VecX<Scalar<decltype(x)>> out(4);
    out << 1.01 * x.q[0], 1.01 * x.q[1], x.v[0], x.v[1];
    return out;
  });
  const Model m = std::move(b).Build();
  const InitialState x0{Eigen::Vector2d(1.0, 0.0), Eigen::Vector2d::Zero()};
  SimulationOptions o;
  o.t_end = 1.0;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  for (Integrator i : {Integrator::kCvodesBdf, Integrator::kIdas}) {
    o.integrator = i;
    o.formulation =
        i == Integrator::kIdas ? Formulation::kGgl : Formulation::kBaumgarte;
    const SimulationSummary s = Simulate(m, x0, m.default_parameters(), o);
    ASSERT_TRUE(s.ok) << s.error;
    ASSERT_EQ(s.events.size(), 1u);
    // |q| = 1.01 projected back to 1: a correction of 0.01 at the bottom.
    EXPECT_NEAR(s.events[0].reset_correction_position, 0.01, 1e-8);
    EXPECT_LT(s.drift_position_max, 1e-8);
    EXPECT_LT(s.energy_residual_max, 1e-7);
  }
}

TEST(Events, BadResetMapsAreRefusedWithTheEvent) {
  auto builder = [](EventOptions opt) {
    ModelBuilder b("ball");
    b.Coordinates({"y"});
    b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
    b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[0]; });
    b.Event(
        "floor", [](const auto& x) { return x.q[0]; }, opt);
    return b;
  };
  {
    ModelBuilder b = builder({});
    b.Reset("floor", [](const auto& x) {
      VecX<Scalar<decltype(x)>> out(2);
      out << x.q[0], -x.v[0];
      return out;
    });
    EXPECT_THAT([&] { std::move(b).Build(); },
                ThrowsMessage<std::invalid_argument>(
                    AllOf(HasSubstr("event 'floor' stops the run"),
                          HasSubstr(".stop = false"))));
  }
  {
    ModelBuilder b = builder({.stop = false});
    b.Reset("ceiling", [](const auto& x) { return x.v; });
    EXPECT_THAT([&] { std::move(b).Build(); },
                ThrowsMessage<std::invalid_argument>(
                    AllOf(HasSubstr("names the event 'ceiling'"),
                          HasSubstr("declared events: floor"))));
  }
  {
    // One value instead of nq + nv = 2: the run fails at the event, with
    // the samples before it kept.
    ModelBuilder b =
        builder({.direction = EventDirection::kFalling, .stop = false});
    b.Reset("floor", [](const auto& x) { return x.v; });
    const Model m = std::move(b).Build();
    SimulationOptions o;
    o.t_end = 1.0;
    const SimulationSummary s = Simulate(
        m, {Eigen::VectorXd::Constant(1, 1.0), Eigen::VectorXd::Zero(1)},
        m.default_parameters(), o);
    EXPECT_FALSE(s.ok);
    EXPECT_THAT(s.error, AllOf(HasSubstr("reset map of event 'floor'"),
                               HasSubstr("returned 1 values"),
                               HasSubstr("nq + nv = 2")));
    EXPECT_GT(s.samples, 10);
  }
}

// The fixed-step and generalized-alpha schemes do not restart at resets:
// refused before the run.
TEST(Events, ResetsAreRefusedWhereTheSchemeCannotRestart) {
  const Problem p = problems::BouncingBallProblem();
  SimulationOptions o = p.defaults;
  for (Integrator i :
       {Integrator::kStormerVerlet, Integrator::kGeneralizedAlpha}) {
    o.integrator = i;
    o.step = 1e-3;
    o.formulation = i == Integrator::kGeneralizedAlpha
                        ? Formulation::kIndex3
                        : Formulation::kBaumgarte;
    EXPECT_THAT(
        [&] {
          Simulate(p.model, p.initial(p.model.default_parameters()),
                   p.model.default_parameters(), o);
        },
        ThrowsMessage<std::invalid_argument>(
            HasSubstr("does not restart at an event's reset map")));
  }
}

// The event-time derivative and the saltation matrix of the first bounce,
// against their closed forms: at impact y = 0, v- = -u, g = y with g_y =
// (1, 0), y'- = (-u, -g), y'+ = (e u, -g), Delta(y, v) = (y, -e v):
//   tau = -s_y / (-u) = s_y / u,
//   S = Delta_y - (Delta_y y'- - y'+) g_y / g'
//     = [[1, 0], [0, -e]] - ((-u, g e) - (e u, -g)) (1, 0) / (-u)
//     = [[-e, 0], [g (1 + e) / u, -e]].
TEST(Events, SaltationMatrixOfABounceMatchesItsClosedForm) {
  const Problem p = problems::BouncingBallProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double g = prm[p.model.ParameterIndex("g")];
  const double e = prm[p.model.ParameterIndex("e")];
  const double u = 4.0;
  internal::FlowPoint minus;
  minus.t = 0.7;
  minus.y = Eigen::Vector2d(0.0, -u);
  minus.ydot = Eigen::Vector2d(-u, -g);
  internal::EventJump jump(p.model, 0, prm, minus);
  EXPECT_NEAR(jump.rate(), -u, 1e-15);
  EXPECT_FALSE(jump.grazing());
  EXPECT_NEAR(jump.Tau(Eigen::Vector2d(0.3, 0.0), Eigen::VectorXd()), 0.3 / u,
              1e-15);
  ASSERT_TRUE(jump.has_reset());
  EXPECT_EQ(jump.reset_value(), Eigen::Vector2d(0.0, e * u));
  auto mech = internal::MakeMechanics(p.model, SimulationOptions{}, false);
  mech->SetParameters(prm);
  mech->Evaluate(minus.t, Eigen::VectorXd::Zero(1),
                 Eigen::VectorXd::Constant(1, e * u));
  KktResult r;
  mech->SolveKkt(mech->bias(), &r);
  internal::FlowPoint plus;
  plus.t = minus.t;
  plus.y = Eigen::Vector2d(0.0, e * u);
  plus.ydot = Eigen::Vector2d(e * u, -g);
  jump.Saltation(mech.get(), r, plus);
  Eigen::Matrix2d S;
  S << -e, 0.0, g * (1 + e) / u, -e;
  EXPECT_TRUE(testing::NearRel(jump.S(), S, testing::kRoundOff));
  // The parameter part: dDelta/de = (0, -v-) = (0, u); g_p = 0.
  const int ie = p.model.ParameterIndex("e");
  EXPECT_NEAR(jump.R()(1, ie), u, 1e-14);
  EXPECT_NEAR(jump.R().col(ie).head(1).norm(), 0.0, 1e-15);
}

}  // namespace event_test
}  // namespace
}  // namespace daedalus
