// Joint limits as event-driven contacts (docs/contact.md, "Joint limits";
// include/daedalus/multibody.hpp, JointLimits):
//   a planar pendulum on a revolute joint released from rest at theta0
//   strikes its lower limit theta_L at the time and angular velocity of
//   the closed form (energy: I_p w^2 / 2 = m g l (cos theta - cos
//   theta0); time: the incomplete elliptic integral of the first kind),
//   rests there with e = 0 (lambda = m g l sin theta_L, the gravity
//   torque), rebounds with w+ = -e w- with e = 0.5 and strikes again at
//   the closed-form time of the smaller swing; the energy balance with
//   the impact work stays at integration error;
//   --no-joint-limits (WithoutJointLimits) lets it pass the limit;
//   bad limits are refused naming the joint;
//   with a URDF humanoid (problems/data/humanoid.urdf) under gravity every
//   joint stays inside its <limit> where without limits 8 of them leave.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "daedalus/multibody.hpp"
#include "daedalus/simulate.hpp"
#if defined(DAEDALUS_SOURCE_DIR)
#include "support/test_support.hpp"
#include "urdf.hpp"
#endif

namespace daedalus {
namespace {
namespace joint_limits_test {

using mb::BodyIndex;
using mb::Dimension;
using mb::Joint;
using mb::JointIndex;
using mb::Multibody;
using mb::PExpr;
using mb::PVec;
using ::testing::HasSubstr;

using daedalus::testing::Keep;

// The pendulum: a bob of mass m, centre of mass at distance l below the
// pin, inertia Ic about it; theta = 0 hangs down.
constexpr double kM = 1.5, kL = 0.8, kIc = 0.1, kG = 9.81;
constexpr double kIp = kIc + kM * kL * kL;  // about the pin
constexpr double kTheta0 = 1.2;             // released from rest here
constexpr double kLower = 0.5, kUpper = 2.0;
// Root location and integration at rtol 1e-11: impact times and
// velocities to 1e-8 (relative for the velocities).
constexpr double kTimeTol = 1e-8;
constexpr double kVelocityTol = 1e-8;

Model Pendulum(double restitution) {
  ModelBuilder b("pendulum_limits");
  Multibody s(Dimension::kPlanar);
  const BodyIndex bob =
      s.AddBody("bob", mb::PlanarBody(kM, PVec(0.0, -kL), kIc));
  s.SetGravity(PVec(0.0, -kG));
  const JointIndex pin =
      s.AddJoint("pin", Joint::Revolute(), s.world(), s.BodyFrame(bob));
  s.SetJointLimits(pin, mb::JointLimits{{kLower}, {kUpper}, restitution});
  std::move(s).AddTo(&b);
  return std::move(b).Build();
}

// The time a pendulum of amplitude a takes from theta = a (at rest) to
// theta (0 < theta < a): sqrt(Ip / (m g l)) (K(k) - F(phi, k)), k = sin(a /
// 2), sin(phi) = sin(theta / 2) / k (the substitution that makes the
// energy integral an elliptic one).
double TimeFromTop(double a, double theta) {
  const double k = std::sin(0.5 * a);
  const double phi = std::asin(std::sin(0.5 * theta) / k);
  return std::sqrt(kIp / (kM * kG * kL)) *
         (std::comp_ellint_1(k) - std::ellint_1(k, phi));
}
// Energy: the angular speed at theta of a swing of amplitude a.
double Speed(double a, double theta) {
  return std::sqrt(2.0 * kM * kG * kL * (std::cos(theta) - std::cos(a)) / kIp);
}

SimulationOptions Tight(double t_end) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = 0.01;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  return o;
}

std::vector<ContactEvent> Impacts(const SimulationSummary& s) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "impact") out.push_back(e);
  return out;
}

TEST(JointLimits, DeclaredAsNamedContactsOfTheJoint) {
  const Model m = Pendulum(0.25);
  ASSERT_EQ(m.nc(), 2);
  EXPECT_EQ(m.RowName(0), "limit:pin:lower");
  EXPECT_EQ(m.RowName(1), "limit:pin:upper");
  EXPECT_EQ(NumJointLimitRows(m), 2);
  for (const auto& c : m.constraints()) {
    EXPECT_TRUE(c.unilateral);
    ASSERT_TRUE(c.law.has_value());
    EXPECT_EQ(c.law->restitution, 0.25);
    EXPECT_EQ(c.law->joint, "pin");
  }
  const Model free = WithoutJointLimits(m);
  EXPECT_EQ(free.nc(), 0);
  EXPECT_EQ(NumJointLimitRows(free), 0);
  EXPECT_EQ(m.nc(), 2);  // the original is unchanged
}

TEST(JointLimits, PlasticLimitStopsThePendulumAtTheClosedFormTime) {
  const Model m = Pendulum(0.0);
  Keep keep;
  const InitialState x0{Eigen::VectorXd::Constant(1, kTheta0),
                        Eigen::VectorXd::Zero(1)};
  const SimulationSummary s =
      Simulate(m, x0, m.default_parameters(), Tight(1.5), &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_TRUE(s.contact.event_driven);
  const std::vector<ContactEvent> impacts = Impacts(s);
  ASSERT_EQ(impacts.size(), 1u);
  const ContactEvent& ev = impacts[0];
  const double t_exact = TimeFromTop(kTheta0, kLower);
  const double w = Speed(kTheta0, kLower);
  ASSERT_GT(t_exact, 0.1);  // a real swing, not an impact at the start
  EXPECT_NEAR(ev.t, t_exact, kTimeTol);
  EXPECT_THAT(ev.rows, ::testing::ElementsAre("limit:pin:lower"));
  // The gap q - lower approaches at -w and stops; the impulse is Ip w.
  EXPECT_NEAR(ev.u_minus[0], -w, kVelocityTol * w);
  EXPECT_NEAR(ev.u_plus[0], 0.0, kVelocityTol * w);
  EXPECT_NEAR(ev.impulse[0], kIp * w, kVelocityTol * kIp * w);
  EXPECT_EQ(ev.impulse[1], 0.0);  // the upper limit is far
  const double loss = 0.5 * kIp * w * w;
  EXPECT_NEAR(ev.energy_change, -loss, 1e-8 * loss);
  // Resting on the limit: theta = theta_L, w = 0, the multiplier is the
  // gravity torque m g l sin(theta_L) > 0 (it pushes), the contact closed
  // from the impact to the end.
  const Sample& f = s.final;
  EXPECT_NEAR(f.q[0], kLower, 1e-12);
  EXPECT_NEAR(f.v[0], 0.0, 1e-12);
  const double torque = kM * kG * kL * std::sin(kLower);
  EXPECT_NEAR(f.lambda[0], torque, 1e-9 * torque);
  EXPECT_EQ(f.lambda[1], 0.0);
  EXPECT_EQ(s.contact.t_rest, -1.0);  // the upper limit stays open
  EXPECT_GT(s.contact.min_closed_lambda, 0.0);
  EXPECT_GE(s.contact.min_open_gap, -1e-12);
  EXPECT_NEAR(f.impact_work, -loss, 1e-8 * loss);
  // The energy balance with the impact booked as work: integration error
  // (energy scale m g l = 11.8 J).
  EXPECT_LE(s.energy_residual_max, 1e-8);
  std::printf(
      "pendulum e = 0: impact at %.15f s (closed form %+.1e s off), "
      "w- %.12f rad/s (%+.1e relative), lambda %.12f N m (%+.1e), energy "
      "residual %.1e J, impact work %.6f J\n",
      ev.t, ev.t - t_exact, -ev.u_minus[0], -ev.u_minus[0] / w - 1.0,
      f.lambda[0], f.lambda[0] / torque - 1.0, s.energy_residual_max,
      f.impact_work);
  // Every sample inside the limits.
  for (const Sample& x : keep.samples) {
    EXPECT_GE(x.q[0], kLower - 1e-12) << "t = " << x.t;
    EXPECT_LE(x.q[0], kUpper) << "t = " << x.t;
  }
}

TEST(JointLimits, RestitutionHalvesTheAngularVelocityAndTheSwingRepeats) {
  constexpr double kE = 0.5;
  const Model m = Pendulum(kE);
  const InitialState x0{Eigen::VectorXd::Constant(1, kTheta0),
                        Eigen::VectorXd::Zero(1)};
  const SimulationSummary s =
      Simulate(m, x0, m.default_parameters(), Tight(2.0), nullptr);
  ASSERT_TRUE(s.ok) << s.error;
  const std::vector<ContactEvent> impacts = Impacts(s);
  ASSERT_GE(impacts.size(), 3u);
  // First impact: the closed form, then w+ = -e w-.
  const double t1 = TimeFromTop(kTheta0, kLower);
  const double w1 = Speed(kTheta0, kLower);
  EXPECT_NEAR(impacts[0].t, t1, kTimeTol);
  EXPECT_NEAR(impacts[0].u_minus[0], -w1, kVelocityTol * w1);
  EXPECT_NEAR(impacts[0].u_plus[0], kE * w1, kVelocityTol * w1);
  EXPECT_NEAR(impacts[0].u_plus[0] / impacts[0].u_minus[0], -kE, 1e-12);
  EXPECT_NEAR(impacts[0].energy_change, -0.5 * kIp * w1 * w1 * (1.0 - kE * kE),
              1e-8 * kIp * w1 * w1);
  // It rises to the amplitude a1 with cos(a1) = cos(theta_L) - Ip (e
  // w1)^2 / (2 m g l) and comes back with the same speed: the second
  // impact is 2 (time from a1 to theta_L) later, at speed e w1.
  const double w1p = kE * w1;
  const double a1 =
      std::acos(std::cos(kLower) - kIp * w1p * w1p / (2.0 * kM * kG * kL));
  ASSERT_GT(a1, kLower);
  const double t2 = t1 + 2.0 * TimeFromTop(a1, kLower);
  EXPECT_NEAR(impacts[1].t, t2, kTimeTol);
  EXPECT_NEAR(impacts[1].u_minus[0], -w1p, kVelocityTol * w1);
  EXPECT_NEAR(impacts[1].u_plus[0], kE * w1p, kVelocityTol * w1);
  // The impacts lose (1 - e^2) of the kinetic energy each; the balance
  // with their work stays at integration error.
  EXPECT_LE(s.energy_residual_max, 1e-8);
  EXPECT_LT(s.final.impact_work, 0.0);
  std::printf(
      "pendulum e = 0.5: %zu impacts; first %+.1e s off, u+/u- %.15f; "
      "second %+.1e s off, u- %+.1e relative; energy residual %.1e J\n",
      impacts.size(), impacts[0].t - t1,
      impacts[0].u_plus[0] / impacts[0].u_minus[0], impacts[1].t - t2,
      -impacts[1].u_minus[0] / w1p - 1.0, s.energy_residual_max);
  EXPECT_GE(s.contact.min_open_gap, -1e-12);
}

TEST(JointLimits, WithoutJointLimitsThePendulumPassesTheLimit) {
  const Model free = WithoutJointLimits(Pendulum(0.0));
  Keep keep;
  const InitialState x0{Eigen::VectorXd::Constant(1, kTheta0),
                        Eigen::VectorXd::Zero(1)};
  const SimulationSummary s =
      Simulate(free, x0, free.default_parameters(), Tight(1.5), &keep);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_FALSE(s.contact.event_driven);
  double lowest = kTheta0;
  for (const Sample& x : keep.samples) lowest = std::min(lowest, x.q[0]);
  // The free swing reaches -theta0 (energy), far below the limit.
  EXPECT_LT(lowest, -1.0);
}

TEST(JointLimits, BadLimitsAreRefusedNamingTheJoint) {
  Multibody s(Dimension::kPlanar);
  const BodyIndex bob =
      s.AddBody("bob", mb::PlanarBody(kM, PVec(0.0, -kL), kIc));
  const JointIndex pin =
      s.AddJoint("elbow_pin", Joint::Revolute(), s.world(), s.BodyFrame(bob));
  EXPECT_THAT(
      [&] {
        s.SetJointLimits(pin, mb::JointLimits{{1.0}, {0.5}, 0.0});
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          ::testing::AllOf(HasSubstr("elbow_pin"), HasSubstr("lower"))));
  EXPECT_THAT(
      [&] {
        s.SetJointLimits(pin, mb::JointLimits{{0.0}, {0.5}, 1.5});
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          ::testing::AllOf(HasSubstr("elbow_pin"), HasSubstr("restitution"))));
  EXPECT_THAT(
      [&] {
        s.SetJointLimits(pin, mb::JointLimits{{0.3}, {0.3}, 0.0});
      },
      ::testing::ThrowsMessage<std::invalid_argument>(
          ::testing::AllOf(HasSubstr("elbow_pin"), HasSubstr("Weld"))));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(
      [&] {
        s.SetJointLimits(pin, mb::JointLimits{{nan}, {0.5}, 0.0});
      },
      ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("elbow_pin")));
}

TEST(JointLimits, RefusedCombinationsNameTheFlag) {
  const Model m = Pendulum(0.0);
  const InitialState x0{Eigen::VectorXd::Constant(1, kTheta0),
                        Eigen::VectorXd::Zero(1)};
  SimulationOptions o = Tight(0.1);
  o.integrator = Integrator::kIdas;
  o.formulation = Formulation::kIndex3;
  EXPECT_THAT([&] { Simulate(m, x0, m.default_parameters(), o); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
                  HasSubstr("index3"), HasSubstr("--no-joint-limits"))));
  // The sparse path on IDAS (its residual Jacobian has no row mask):
  // without the monitor hint, which would hold the joint on both limits.
  SimulationOptions sparse = Tight(0.1);
  sparse.kkt.method = KktMethod::kSparseSchur;
  sparse.integrator = Integrator::kIdas;
  EXPECT_THAT([&] { Simulate(m, x0, m.default_parameters(), sparse); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
                  HasSubstr("--no-joint-limits"),
                  ::testing::Not(HasSubstr("--contact monitor")))));
  // --contact monitor is refused with joint limits (an equality on both
  // limits), naming the flag.
  SimulationOptions monitor = Tight(0.1);
  monitor.contact.mode = ContactMode::kMonitor;
  EXPECT_THAT([&] { Simulate(m, x0, m.default_parameters(), monitor); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
                  HasSubstr("on its limits"), HasSubstr("--no-joint-limits"))));
  // --kkt auto takes the dense evaluator when contacts run.
  SimulationOptions automatic = Tight(0.1);
  automatic.kkt.method = KktMethod::kAuto;
  EXPECT_TRUE(Simulate(m, x0, m.default_parameters(), automatic).ok);
}

#if defined(DAEDALUS_SOURCE_DIR)
// The humanoid of problems/data/humanoid.urdf on its fixed base (26
// revolute joints, each with a <limit>), falling under gravity from q = 0
// with its joints unactuated: with the limits every joint stays inside
// [lower, upper] (open limits to the root location, closed ones to the
// run's position drift); without them joints pass their limits, so the
// check can fail.
struct Excess {
  double worst = 0.0;  // max over samples and joints of the excess [rad]
  int joints = 0;      // joints that left their range
};
Excess LimitExcess(const std::vector<Sample>& samples,
                   const std::vector<urdf::UrdfJoint>& joints) {
  Excess e;
  for (const urdf::UrdfJoint& j : joints) {
    if (!j.has_position_limits) continue;
    double worst = 0.0;
    for (const Sample& x : samples) {
      const double q = x.q[j.coordinate];
      worst = std::max({worst, j.lower - q, q - j.upper});
    }
    e.worst = std::max(e.worst, worst);
    e.joints += worst > 1e-6 ? 1 : 0;
  }
  return e;
}

// A URDF <limit> with lower above upper: refused naming the joint.
TEST(JointLimits, UrdfLowerAboveUpperIsRefusedNamingTheJoint) {
  const std::string xml = R"(<?xml version="1.0"?>
<robot name="r">
  <link name="base"/>
  <joint name="knee_joint" type="revolute">
    <parent link="base"/><child link="shin"/><axis xyz="0 1 0"/>
    <limit lower="0.5" upper="-0.5" effort="10" velocity="2"/>
  </joint>
  <link name="shin">
    <inertial><origin xyz="0 0 -0.3"/><mass value="1.5"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
</robot>)";
  ModelBuilder b("r");
  EXPECT_THAT(
      [&] { urdf::ImportString(xml, "bad.urdf", &b); },
      ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
          HasSubstr("knee_joint"), HasSubstr("lower"), HasSubstr("upper"))));
}

// <limit effort velocity/> without lower and upper (both 0 by URDF's
// defaults): no position limit, and a note naming the joint.
TEST(JointLimits, UrdfLimitWithoutBoundsIsNoPositionLimit) {
  const std::string xml = R"(<?xml version="1.0"?>
<robot name="r">
  <link name="base"/>
  <joint name="wheel_joint" type="revolute">
    <parent link="base"/><child link="wheel"/><axis xyz="0 1 0"/>
    <limit effort="10" velocity="2"/>
  </joint>
  <link name="wheel">
    <inertial><origin xyz="0 0 -0.3"/><mass value="1.5"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
</robot>)";
  ModelBuilder b("r");
  const urdf::Robot r = urdf::ImportString(xml, "wheel.urdf", &b);
  const Model m = std::move(b).Build();
  EXPECT_EQ(m.nc(), 0);
  ASSERT_EQ(r.joints.size(), 1u);
  EXPECT_FALSE(r.joints[0].has_position_limits);
  EXPECT_THAT(r.notes,
              ::testing::Contains(::testing::AllOf(
                  HasSubstr("wheel_joint"), HasSubstr("no position limit"))));
}

TEST(JointLimits, UrdfHumanoidStaysInsideItsLimits) {
  const std::string path =
      std::string(DAEDALUS_SOURCE_DIR) + "/problems/data/humanoid.urdf";
  ModelBuilder b("humanoid");
  urdf::ImportOptions io;
  io.dynamics = mb::DynamicsForm::kRecursive;
  const urdf::Robot robot = urdf::Import(path, &b, io);
  const Model m = std::move(b).Build();
  int limited = 0;
  for (const urdf::UrdfJoint& j : robot.joints)
    limited += j.has_position_limits ? 1 : 0;
  ASSERT_GT(limited, 10);
  EXPECT_EQ(NumJointLimitRows(m), 2 * limited);
  const Problem p = problems::UrdfProblem(
      path, mb::DynamicsForm::kRecursive);  // its defaults and start
  SimulationOptions o = p.defaults;
  o.t_end = 1.0;
  o.output_step = 0.005;
  const Eigen::VectorXd prm = m.default_parameters();
  Keep with, without;
  const SimulationSummary s = Simulate(m, p.initial(prm), prm, o, &with);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_TRUE(s.contact.event_driven);
  EXPECT_GT(s.contact.impacts, 0);
  const Excess in = LimitExcess(with.samples, robot.joints);
  EXPECT_LE(in.worst, o.contact.gap_tolerance + s.drift_position_max)
      << "drift " << s.drift_position_max;
  EXPECT_EQ(in.joints, 0);
  // The certificate: a witness re-armed after a bounce below the
  // integrator's resolution fires gap_tolerance below the gap
  // (docs/contact.md, "Witnesses"), plus the root's location (measured
  // -1.00000008e-9 on the neck's upper limit).
  constexpr double kRootLocation = 1e-12;
  EXPECT_GE(s.contact.min_open_gap, -(o.contact.gap_tolerance + kRootLocation));
  // Not a chattering run: the neck's and an elbow's limits kicked each
  // other off 969 times in 0.57 s before a kicked-off contact slower than
  // zeno_velocity stayed closed (contact_stage.cpp); measured 11 impacts.
  EXPECT_LT(s.contact.impacts, 100);
  // The impacts' energy is booked: the balance stays at integration error
  // (rtol 1e-8 on an energy scale of 100 J; measured 8.6e-8 J).
  EXPECT_LE(s.energy_residual_max, 1e-6);

  const Model free = WithoutJointLimits(m);
  const SimulationSummary sf = Simulate(free, p.initial(prm), prm, o, &without);
  ASSERT_TRUE(sf.ok) << sf.error;
  const Excess out = LimitExcess(without.samples, robot.joints);
  EXPECT_GT(out.joints, 0);
  EXPECT_GT(out.worst, 0.1);
  std::cout << "[ humanoid ] with limits: " << s.contact.impacts
            << " impacts, worst excess " << in.worst << " rad, drift "
            << s.drift_position_max << ", energy residual "
            << s.energy_residual_max << "; without: " << out.joints
            << " joints out, worst " << out.worst << " rad\n";
}
#endif

}  // namespace joint_limits_test
}  // namespace
}  // namespace daedalus
