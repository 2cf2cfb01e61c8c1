// URDF import (include/daedalus/urdf.hpp) and the urdf problem
// (problems/urdf.hpp): a one-link pendulum against its closed form, the
// project's 7-joint arm (problems/data/arm7.urdf) with its coordinates,
// inputs and limits, its recursive M and h against the energy-derived ones,
// energy conservation without inputs or damping, and every refusal with
// its message.
#include "daedalus/urdf.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_dynamics.hpp"
#include "problems/catalogue_support.hpp"
#include "support/test_support.hpp"
#include "urdf.hpp"

namespace daedalus {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const std::string kArm =
    std::string(DAEDALUS_SOURCE_DIR) + "/problems/data/arm7.urdf";

// The two routes sum the same terms in different orders.
constexpr double kAgree = 1e-12;

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  EXPECT_GT(scale, 0.0) << "the reference is all zero";
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

// A URDF with one joint below the root link; `joint` and `link` are
// spliced in.
std::string OneJoint(const std::string& joint_type,
                     const std::string& joint_extra,
                     const std::string& inertial) {
  return R"(<?xml version="1.0"?>
<robot name="one">
  <link name="base"/>
  <joint name="hinge" type=")" +
         joint_type + R"(">
    <parent link="base"/>
    <child link="bob"/>
    <origin xyz="0 0 1" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    )" + joint_extra +
         R"(
  </joint>
  <link name="bob">)" +
         inertial + R"(</link>
</robot>)";
}

const char* const kBobInertial = R"(
    <inertial>
      <origin xyz="0 0 -0.5"/>
      <mass value="2.0"/>
      <inertia ixx="0.1" iyy="0.2" izz="0.15" ixy="0" ixz="0" iyz="0"/>
    </inertial>)";

// A pendulum about y with its centre of mass l = 0.5 below the pivot:
// M = I_yy + m l^2 and h = m g l sin(q) (the bob hangs down at q = 0).
TEST(Urdf, PendulumClosedForm) {
  ModelBuilder b("one");
  const urdf::Robot robot = urdf::ImportString(
      OneJoint("revolute",
               R"(<limit lower="-1" upper="2" effort="5" velocity="3"/>)",
               kBobInertial),
      "one.urdf", &b);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nq(), 1);
  EXPECT_EQ(model.coordinate_names()[0], "hinge");
  ASSERT_EQ(model.num_inputs(), 1);
  EXPECT_EQ(model.inputs()[0].name, "hinge");
  ASSERT_EQ(robot.joints.size(), 1u);
  EXPECT_TRUE(robot.joints[0].has_position_limits);
  EXPECT_EQ(robot.joints[0].lower, -1.0);
  EXPECT_EQ(robot.joints[0].upper, 2.0);
  EXPECT_EQ(robot.joints[0].effort, 5.0);
  EXPECT_EQ(robot.joints[0].velocity, 3.0);
  EXPECT_THAT(robot.Describe(), HasSubstr("position in [-1, 2]"));
  Workspace ws(model);
  ws.SetParameters(model.default_parameters());
  const double q = 0.7, m = 2.0, l = 0.5, g = 9.81;
  ws.SetState(0.0, Eigen::VectorXd::Constant(1, q),
              Eigen::VectorXd::Constant(1, 0.3));
  EvaluateAll(&ws);
  EXPECT_NEAR(ws.M(0, 0), 0.2 + m * l * l, testing::kRoundOff);
  EXPECT_NEAR(ws.h[0], m * g * l * std::sin(q), testing::kRoundOff);
}

TEST(Urdf, ArmCoordinatesInputsAndLimits) {
  ModelBuilder b("arm");
  const urdf::Robot robot = urdf::Import(kArm, &b);
  const Model model = std::move(b).Build();
  EXPECT_EQ(robot.name, "arm7");
  EXPECT_EQ(robot.root, "base_link");
  ASSERT_EQ(model.nq(), 7);
  ASSERT_EQ(model.num_inputs(), 7);
  for (int i = 0; i < 7; ++i) {
    const std::string name = "joint" + std::to_string(i + 1);
    EXPECT_EQ(model.coordinate_names()[i], name);
    EXPECT_EQ(model.inputs()[i].name, name);
    EXPECT_EQ(robot.joints[i].coordinate, i);
    EXPECT_GE(model.ParameterIndex("tau_" + name), 0);
  }
  EXPECT_EQ(robot.joints[0].lower, -2.9);
  EXPECT_EQ(robot.joints[0].effort, 176.0);
  EXPECT_EQ(robot.joints[6].type, "continuous");
  EXPECT_FALSE(robot.joints[6].has_position_limits);
  ASSERT_EQ(robot.fixed.size(), 1u);
  EXPECT_EQ(robot.fixed[0], "tool");
}

// The arm's M and h by CRBA and RNEA (a model built with the recursive
// form) against the energy form, at random states.
TEST(Urdf, ArmRecursiveAgreesWithEnergy) {
  const Problem energy = problems::UrdfProblem(kArm, mb::DynamicsForm::kEnergy);
  const Problem rec = problems::UrdfProblem(kArm, mb::DynamicsForm::kRecursive);
  Workspace a(energy.model), b(rec.model);
  a.use_compiled = false;
  double worst_m = 0.0, worst_h = 0.0;
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const testing::RandomState s(7, 7, seed, 0.0);
    for (Workspace* ws : {&a, &b}) {
      ws->SetParameters(energy.model.default_parameters());
      ws->SetState(s.t, 2.0 * s.q, 2.0 * s.v);
      EvaluateAll(ws);
    }
    ASSERT_GT(a.h.cwiseAbs().maxCoeff(), 1.0);
    worst_m = std::max(worst_m, RelDiff(b.M, a.M));
    worst_h = std::max(worst_h, RelDiff(b.h, a.h));
  }
  std::printf(
      "arm7: recursive vs energy, largest relative difference M "
      "%.1e, h %.1e\n",
      worst_m, worst_h);
  EXPECT_LT(worst_m, kAgree);
  EXPECT_LT(worst_h, kAgree);
}

// Without inputs and damping the arm conserves T + V: the energy stays at
// the integration tolerance on both forms of the dynamics. The two
// trajectories differ by the integration error, not by round-off (the
// adaptive step sequence reacts to ulp-level differences in the
// equations, and the arm's motion amplifies them): the difference is held
// below ten times the change of the energy form's end state when the
// tolerances are tightened tenfold.
TEST(Urdf, ArmConservesEnergy) {
  Eigen::VectorXd end[3];
  int k = 0;
  for (mb::DynamicsForm form :
       {mb::DynamicsForm::kEnergy, mb::DynamicsForm::kRecursive,
        mb::DynamicsForm::kEnergy}) {
    Problem p = problems::UrdfProblem(kArm, form);
    p.initial = [](const Eigen::VectorXd& /*prm*/) {
      Eigen::VectorXd q(7), v(7);
      q << 0.3, 0.8, -0.4, -1.0, 0.5, 0.9, 0.2;
      v << 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, 2.0;
      return InitialState{q, v};
    };
    SimulationOptions o = p.defaults;
    o.t_end = 1.0;
    o.rtol = k == 2 ? 1e-11 : 1e-10;
    o.atol = k == 2 ? 1e-13 : 1e-12;
    const testing::Run r = testing::RunProblem(p, o);
    ASSERT_TRUE(r.summary.ok) << r.summary.error;
    const double e0 = r.samples.front().energy;
    double worst = 0.0;
    for (const Sample& s : r.samples)
      worst = std::max(worst, std::abs(s.energy - e0));
    // The arm really moved and exchanged kinetic and potential energy.
    EXPECT_GT((r.samples.back().q - r.samples.front().q).cwiseAbs().maxCoeff(),
              0.3);
    std::printf("arm7 (%s): |E - E0| <= %.1e J of E0 = %.3f J\n",
                mb::ToString(form), worst, e0);
    EXPECT_LT(worst, 1e-7 * std::max(1.0, std::abs(e0)));
    end[k++] = r.samples.back().q;
  }
  const double forms = (end[1] - end[0]).cwiseAbs().maxCoeff();
  const double tighter = (end[2] - end[0]).cwiseAbs().maxCoeff();
  std::printf(
      "arm7: final q, recursive vs energy %.1e; energy at rtol "
      "1e-10 vs 1e-11 %.1e\n",
      forms, tighter);
  EXPECT_GT(tighter, 0.0);
  EXPECT_LT(forms, 10.0 * tighter);
  EXPECT_LT(forms, 1e-6);
}

TEST(Urdf, RefusesBadInput) {
  auto import = [](const std::string& xml) {
    ModelBuilder b("bad");
    urdf::ImportString(xml, "bad.urdf", &b);
  };
  EXPECT_THAT(
      [] {
        ModelBuilder b("x");
        urdf::Import("/nonexistent/robot.urdf", &b);
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("'/nonexistent/robot.urdf' cannot be read")));
  EXPECT_THAT([&] { import("<robot name=\"x\"><link name=\"a\">"); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("bad.urdf': urdfdom cannot parse it")));
  EXPECT_THAT([&] { import(OneJoint("ball", "", kBobInertial)); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("supported joint types: revolute")));
  EXPECT_THAT([&] { import(OneJoint("floating", "", kBobInertial)); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("joint 'hinge': floating joints need quaternion")));
  EXPECT_THAT(
      [&] {
        import(OneJoint("continuous", "",
                        R"(<inertial><mass value="-1"/>
                           <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
                           </inertial>)"));
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("link 'bob': mass -1")));
  EXPECT_THAT(
      [&] {
        import(OneJoint("continuous", "",
                        R"(<inertial><mass value="1"/>
                           <inertia ixx="1" iyy="1" izz="1" ixy="2" ixz="0" iyz="0"/>
                           </inertial>)"));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("link 'bob': the inertia tensor")));
  EXPECT_THAT(
      [&] {
        import(OneJoint("continuous", "",
                        R"(<inertial><mass value="1"/>
                           <inertia ixx="0.1" iyy="0.1" izz="1" ixy="0" ixz="0" iyz="0"/>
                           </inertial>)"));
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("triangle inequality")));
  EXPECT_THAT(
      [&] {
        import(OneJoint("revolute",
                        R"(<limit lower="-1" upper="1" effort="1" velocity="1"/>
                           <mimic joint="hinge" multiplier="2"/>)",
                        kBobInertial));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("joint 'hinge': mimic joints are not supported")));
  EXPECT_THAT(
      [&] {
        import(OneJoint("continuous",
                        R"(<dynamics damping="0.1" friction="0.5"/>)",
                        kBobInertial));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("joint 'hinge': <dynamics friction>")));
  EXPECT_THAT(
      [&] {
        import(
            OneJoint("revolute",
                     R"(<limit lower="1" upper="-1" effort="1" velocity="1"/>)",
                     kBobInertial));
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("is above upper")));
  EXPECT_THAT(
      [&] {
        ModelBuilder b("x");
        urdf::ImportOptions o;
        o.floating_base = true;
        urdf::Import(kArm, &b, o);
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("issue 16")));
}

}  // namespace
}  // namespace daedalus
