// URDF import (include/daedalus/urdf.hpp) and the urdf problem
// (problems/urdf.hpp): a one-link pendulum against its closed form, the
// project's 7-joint arm (problems/data/arm7.urdf) with its coordinates,
// inputs and limits, its recursive M and h against the energy-derived ones,
// energy conservation without inputs or damping, and every refusal with
// its message.
#include "daedalus/urdf.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
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
namespace urdf_test {

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
    // The free arm: from this start its joints reach their <limit>s, whose
    // plastic impacts (contacts, tests/contact/joint_limits_test.cpp) take
    // energy out; conservation is the property of the joints without them.
    p.model = WithoutJointLimits(p.model);
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
                  HasSubstr("bad.urdf', line 1: malformed XML")));
  EXPECT_THAT([&] { import(OneJoint("ball", "", kBobInertial)); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("type \"ball\" is not a URDF joint type "
                            "(revolute, continuous, prismatic")));
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
          HasSubstr("joint 'hinge' mimics itself")));
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
}

// A URDF floating joint is a free joint (7 coordinates, 6 velocities, not
// actuated); the bob then falls freely: v' = (0, 0, -g) on the
// translations and no angular acceleration.
TEST(Urdf, FloatingJointIsAFreeJoint) {
  ModelBuilder b("one");
  const urdf::Robot robot =
      urdf::ImportString(OneJoint("floating", "", kBobInertial), "f.urdf", &b);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nq(), 7);
  ASSERT_EQ(model.nv(), 6);
  EXPECT_EQ(model.coordinate_names()[0], "hinge_x");
  EXPECT_EQ(model.coordinate_names()[3], "hinge.w");
  EXPECT_EQ(model.velocity_names()[5], "hinge.wz");
  EXPECT_EQ(model.num_inputs(), 0);
  ASSERT_EQ(robot.floating.size(), 1u);
  EXPECT_TRUE(robot.joints.empty());
  Workspace ws(model);
  Eigen::VectorXd q = robot.kinematics.Neutral(), v(6);
  q.segment<4>(3) = Eigen::Vector4d(0.8, 0.1, -0.5, 0.3).normalized();
  v << 0.0, 0.0, 0.0, 0.0, 0.0, 0.0;
  ws.SetState(0.0, q, v);
  EvaluateAll(&ws);
  // M vdot = -h with vdot = (0, 0, -g, 0, 0, 0): h = (0, 0, m g, 0, 0, 0)
  // once the translation carries the centre-of-mass offset, so compare
  // the solved acceleration.
  const Eigen::VectorXd vdot = ws.M.ldlt().solve(-ws.h);
  Eigen::VectorXd expected = Eigen::VectorXd::Zero(6);
  expected[2] = -9.81;
  EXPECT_LT((vdot - expected).cwiseAbs().maxCoeff(), 1e-13);
}

// The arm on a floating base (--base floating), tumbling with its joints
// swinging (no inputs): gravity is the only external force, so the total
// linear momentum grows as P0 + m g t and the angular momentum about the
// centre of mass, L_O - p_C x P, stays constant (Noether, seed 000),
// whatever the joints do; the internal joint dampers do not change
// either. 1e-8 relative: rtol 1e-10 over 0.25 s (global error ~100 rtol).
TEST(Urdf, ArmOnAFloatingBaseFollowsMomentumBalance) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "a 0.25 s run of a 13-velocity model on dual numbers (77 s there); "
      "Floating.FreeChain* simulate free joints under the sanitizers");
  ModelBuilder b("arm7_floating");
  urdf::ImportOptions options;
  options.floating_base = true;
  const urdf::Robot robot = urdf::Import(kArm, &b, options);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nq(), 14);
  ASSERT_EQ(model.nv(), 13);
  EXPECT_EQ(model.coordinate_names()[0], "base_link_x");
  EXPECT_EQ(model.coordinate_names()[3], "base_link.w");
  EXPECT_EQ(model.coordinate_names()[7], "joint1");
  ASSERT_EQ(robot.joints.size(), 7u);
  EXPECT_EQ(robot.joints[0].coordinate, 7);
  EXPECT_EQ(robot.joints[0].velocity_index, 6);
  EXPECT_EQ(model.velocity_names()[6], "joint1");
  EXPECT_THAT(robot.Describe(), HasSubstr("floating"));
  const mb::Kinematics kin = robot.kinematics;
  const Eigen::VectorXd p = model.default_parameters();
  InitialState x0;
  x0.q = kin.Neutral();
  x0.q.segment<4>(3) = Eigen::Vector4d(0.9, 0.2, -0.1, 0.3).normalized();
  x0.q.tail<7>() << 0.3, 0.8, -0.4, -1.0, 0.5, 0.9, 0.2;
  x0.v = Eigen::VectorXd(13);
  x0.v << 0.2, -0.1, 1.0, 0.4, -0.3, 0.5, 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, 2.0;
  struct Log : Observer {
    const Model* model;
    const mb::Kinematics* kin;
    Eigen::VectorXd p;
    std::vector<double> t;
    std::vector<Eigen::Vector3d> lin, spin;
    void OnSample(const Sample& s) override {
      Eigen::VectorXd q = s.q;
      q.segment<4>(3).normalize();
      const Eigen::Vector3d lp = kin->LinearMomentum<double>(q, s.v, p);
      const Eigen::Vector3d c = kin->CenterOfMass<double>(q, p);
      t.push_back(s.t);
      lin.push_back(lp);
      spin.push_back(kin->AngularMomentum<double>(q, s.v, p) - c.cross(lp));
    }
  } log;
  log.model = &model;
  log.kin = &kin;
  log.p = p;
  SimulationOptions o;
  o.formulation = Formulation::kProjection;
  o.integrator = Integrator::kCvodesBdf;
  o.t_end = 0.25;
  o.output_step = 0.05;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  const SimulationSummary s = Simulate(model, x0, p, o, &log);
  ASSERT_TRUE(s.ok) << s.error;
  const double mass = kin.TotalMass<double>(p);
  // The base, seven links and the 0.5 kg tool.
  EXPECT_NEAR(mass, 5.0 + 4.0 + 4.0 + 3.0 + 2.7 + 1.7 + 1.8 + 0.3 + 0.5, 1e-12);
  double worst_p = 0.0, worst_l = 0.0;
  for (size_t i = 0; i < log.t.size(); ++i) {
    const Eigen::Vector3d expected =
        log.lin[0] + mass * log.t[i] * Eigen::Vector3d(0.0, 0.0, -9.81);
    worst_p =
        std::max(worst_p, (log.lin[i] - expected).norm() / expected.norm());
    worst_l = std::max(worst_l,
                       (log.spin[i] - log.spin[0]).norm() / log.spin[0].norm());
  }
  std::printf(
      "arm7 floating: |P - P0 - m g t| / |P| <= %.1e, "
      "|L_C - L_C0| / |L_C0| <= %.1e over 0.25 s\n",
      worst_p, worst_l);
  EXPECT_LT(worst_p, 1e-8);
  EXPECT_LT(worst_l, 1e-8);
  EXPECT_GT(log.t.size(), 5u);  // every output step was seen
}

// The project's humanoid (problems/data/humanoid.urdf) on a floating
// base: 32 velocities, M positive definite, and two exact identities of a
// floating base whose translation velocities are in the world (Noether):
// the generalized momentum of the base translations is the total linear
// momentum, and at rest the base-translation rows of h are the total
// weight, (0, 0, m g). Relative 1e-13: sums of ~30 bodies' terms.
TEST(Urdf, HumanoidOnAFloatingBase) {
  ModelBuilder b("humanoid");
  urdf::ImportOptions options;
  options.floating_base = true;
  const urdf::Robot robot = urdf::Import(
      std::string(DAEDALUS_SOURCE_DIR) + "/problems/data/humanoid.urdf", &b,
      options);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nv(), 32);
  ASSERT_EQ(model.nq(), 33);
  EXPECT_EQ(model.num_inputs(), 26);
  EXPECT_EQ(model.coordinate_names()[3], "pelvis.w");
  const mb::Kinematics& kin = robot.kinematics;
  const Eigen::VectorXd p = model.default_parameters();
  const double mass = kin.TotalMass<double>(p);
  EXPECT_NEAR(mass, 62.9, 1e-12);
  std::mt19937 gen(23);
  Workspace ws(model);
  for (int trial = 0; trial < 3; ++trial) {
    Eigen::VectorXd q = testing::RandomVector(gen, 33, -1.0, 1.0);
    q.segment<4>(3).normalize();
    const Eigen::VectorXd v = testing::RandomVector(gen, 32, -1.0, 1.0);
    ws.SetState(0.0, q, v);
    EvaluateAll(&ws);
    EXPECT_EQ(ws.M.llt().info(), Eigen::Success);
    const Eigen::Vector3d lin = kin.LinearMomentum<double>(q, v, p);
    EXPECT_LT((ws.momentum.head<3>() - lin).norm(), 1e-13 * lin.norm());
    ws.SetState(0.0, q, Eigen::VectorXd::Zero(32));
    EvaluateAll(&ws);
    const Eigen::Vector3d weight(0.0, 0.0, mass * 9.81);
    EXPECT_LT((ws.h.head<3>() - weight).norm(), 1e-13 * weight.norm());
  }
}

// The humanoid on a floating base (nq 33, nv 32) with the recursive form:
// CRBA's M and RNEA's h against the energy model's within 1e-12 of the
// largest entry (the same sums in another order), ABA against the energy
// form's Cholesky solve within 1e-10 (cond(M) eps) and RNEA(ABA(tau)) =
// tau within 1e-12, at random states with unit quaternions.
TEST(Urdf, HumanoidRecursiveAgreesWithEnergy) {
  const std::string file =
      std::string(DAEDALUS_SOURCE_DIR) + "/problems/data/humanoid.urdf";
  urdf::ImportOptions options;
  options.floating_base = true;
  ModelBuilder be("humanoid");
  const urdf::Robot robot = urdf::Import(file, &be, options);
  const Model energy = std::move(be).Build();
  options.dynamics = mb::DynamicsForm::kRecursive;
  ModelBuilder br("humanoid");
  urdf::Import(file, &br, options);
  const Model rec = std::move(br).Build();
  const mb::TreeDynamics dyn(robot.kinematics);
  const Eigen::VectorXd p = energy.default_parameters();
  mb::TreeData<double> data = dyn.MakeData<double>();
  dyn.SetParameters<double>(p, &data);
  std::mt19937 gen(29);
  Workspace a(energy), b(rec);
  auto rel = [](const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) {
    return (x - y).cwiseAbs().maxCoeff() / y.cwiseAbs().maxCoeff();
  };
  for (int trial = 0; trial < 3; ++trial) {
    Eigen::VectorXd q = testing::RandomVector(gen, 33, -1.0, 1.0);
    q.segment<4>(3).normalize();
    const Eigen::VectorXd v = testing::RandomVector(gen, 32, -1.0, 1.0);
    for (Workspace* ws : {&a, &b}) {
      ws->SetState(0.0, q, v);
      EvaluateAll(ws);
    }
    EXPECT_LT(rel(b.M, a.M), 1e-12);
    EXPECT_LT(rel(b.inertial, a.inertial), 1e-12);
    EXPECT_LT(rel(b.h, a.h), 1e-12);
    // The tree's own calls: bodies and gravity, the inertial part.
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(32);
    EXPECT_LT(rel(dyn.MassMatrix<double>(q, &data), a.M), 1e-12);
    const Eigen::VectorXd h = dyn.InverseDynamics<double>(q, v, zero, &data);
    EXPECT_LT(rel(h, a.inertial), 1e-12);
    const Eigen::VectorXd tau = testing::RandomVector(gen, 32, -5.0, 5.0);
    const Eigen::VectorXd vdot = dyn.ForwardDynamics<double>(q, v, tau, &data);
    EXPECT_LT(rel(vdot, a.M.llt().solve(tau - a.inertial)), 1e-10);
    EXPECT_LT(rel(dyn.InverseDynamics<double>(q, v, vdot, &data), tau), 1e-12);
  }
}

}  // namespace urdf_test
}  // namespace
}  // namespace daedalus
