// Bad input to event-driven contact (issue 36, "Bad input"): a
// restitution outside [0, 1] (declared or as a parameter's value), an
// unknown restitution parameter, an initial penetration (refused naming
// the contact and the depth, or projected with the correction reported),
// and the combinations the contact stage does not run on, each refused
// with its reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "bouncing_ball_contact.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {
namespace {
namespace contact_input_test {

using ::testing::HasSubstr;

// A ball on the ground with restitution `e` (a fixed value) or the
// parameter "e" (unbounded, so that a run can give it a bad value).
Model Ball(double e, bool as_parameter, const std::string& param = "e") {
  ModelBuilder b("ball");
  b.Coordinates({"y"});
  b.Parameter("e", 0.5);
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[0]; });
  b.Holonomic("ground", [](const auto& x) { return x.q[0]; });
  ContactLaw law;
  law.restitution = e;
  if (as_parameter) law.restitution_parameter = param;
  b.Unilateral("ground", law);
  return std::move(b).Build();
}

InitialState At(double y) {
  InitialState s;
  s.q = Eigen::VectorXd::Constant(1, y);
  s.v = Eigen::VectorXd::Zero(1);
  return s;
}

SimulationOptions Short() {
  SimulationOptions o;
  o.t_end = 0.5;
  o.output_step = 0.05;
  return o;
}

TEST(ContactInput, RestitutionOutsideTheUnitIntervalIsRefused) {
  EXPECT_THAT([] { Ball(1.5, false); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("contact 'ground'"), HasSubstr("1.5"),
                        HasSubstr("outside [0, 1]"))));
  EXPECT_THAT([] { Ball(-0.1, false); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("contact 'ground'")));
  EXPECT_THAT([] { Ball(0.0, true, "restitution"); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("contact 'ground'"),
                        HasSubstr("'restitution' is not a parameter"))));
}

TEST(ContactInput, RestitutionParameterOutOfRangeEndsTheRunNamingIt) {
  const Model m = Ball(0.0, true);
  Eigen::VectorXd p = m.default_parameters();
  p[0] = 2.0;
  const SimulationSummary s = Simulate(m, At(1.0), p, Short());
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, AllOf(HasSubstr("contact 'ground'"), HasSubstr("2"),
                             HasSubstr("outside [0, 1]")));
}

TEST(ContactInput, InitialPenetrationIsRefusedNamingContactAndDepth) {
  const Model m = Ball(0.5, false);
  const SimulationSummary s =
      Simulate(m, At(-0.01), m.default_parameters(), Short());
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error,
              AllOf(HasSubstr("contact 'ground' penetrates"),
                    HasSubstr("-0.01"), HasSubstr("--project-penetration")));
  EXPECT_EQ(s.samples, 0);
}

TEST(ContactInput, InitialPenetrationProjectedIsReported) {
  const Model m = Ball(0.5, false);
  SimulationOptions o = Short();
  o.contact.project_penetration = true;
  const SimulationSummary s = Simulate(m, At(-0.01), m.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_FALSE(s.contact.events.empty());
  const ContactEvent& start = s.contact.events.front();
  EXPECT_EQ(start.kind, "start");
  EXPECT_NEAR(start.correction_position, 0.01, 1e-12);
  ASSERT_EQ(start.closed.size(), 1u);
  // Then at rest on the ground: lambda = m g.
  EXPECT_NEAR(s.final.q[0], 0.0, 1e-12);
  EXPECT_NEAR(s.final.lambda[0], 9.81, 1e-9);
}

TEST(ContactInput, UnsupportedCombinationsAreRefusedWithTheirReason) {
  const Model m = Ball(0.5, false);
  const Eigen::VectorXd p = m.default_parameters();
  // The sparse KKT path runs contacts on CVODES (sparse_contact_test);
  // IDAS's residual Jacobian there has no row mask.
  SimulationOptions sparse = Short();
  sparse.kkt.method = KktMethod::kSparseSchur;
  sparse.integrator = Integrator::kIdas;
  EXPECT_THAT([&] { Simulate(m, At(1.0), p, sparse); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("dense evaluator")));
  sparse.integrator = Integrator::kCvodesBdf;
  sparse.sensitivity.method = SensMethod::kForward;
  sparse.sensitivity.parameters = {"e"};
  EXPECT_THAT([&] { Simulate(m, At(1.0), p, sparse); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("dense evaluator")));
  // Sensitivities cross the switches, forward and adjoint
  // (contact_sensitivity_test).
  SimulationOptions fixed = Short();
  fixed.integrator = Integrator::kRattle;
  fixed.formulation = Formulation::kIndex3;  // RATTLE's own form
  fixed.step = 1e-3;
  EXPECT_THAT([&] { Simulate(m, At(1.0), p, fixed); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("contact switch")));
  // --contact monitor keeps today's behaviour: the ground an equality,
  // no contact stage.
  SimulationOptions monitor = Short();
  monitor.contact.mode = ContactMode::kMonitor;
  const SimulationSummary s = Simulate(m, At(0.0), p, monitor);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_FALSE(s.contact.event_driven);
  EXPECT_EQ(s.unilateral_rows, 1);
}

TEST(ContactInput, ContactModeNames) {
  for (ContactMode c :
       {ContactMode::kAuto, ContactMode::kMonitor, ContactMode::kEventDriven})
    EXPECT_EQ(ContactModeFromString(ToString(c)), c);
  EXPECT_THAT([] { ContactModeFromString("sticky"); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("valid: auto, monitor, event-driven")));
}

}  // namespace contact_input_test
}  // namespace
}  // namespace daedalus
