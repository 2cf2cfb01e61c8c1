// MJCF models imported and run (include/daedalus/mjcf.hpp,
// problems/mjcf.hpp): a closed slider-crank loop (a connect equality in a
// plane) keeps its loop and its energy; a weld holds a free body against
// gravity with the weight as its force; a joint coupling is MuJoCo's
// polynomial; motors are input channels with their gear and ctrlrange;
// the humanoid's geometry and limits reach the mechanism JSON in the
// schema docs/output.md states; humanoid100's import time is printed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>
#include <utility>

#include "daedalus/dynamics.hpp"
#include "daedalus/mjcf.hpp"
#include "daedalus/multibody_output.hpp"
#include "daedalus/simulate.hpp"
#include "mjcf.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace mjcf_run_test {

using ::testing::HasSubstr;

const std::string kSource = DAEDALUS_SOURCE_DIR;
const std::string kSamples = "/usr/share/mujoco/model/";

// problems/data/slider_crank_loop.xml under GGL on IDAS for 2 s: the loop
// (a planar connect: its two in-plane rows) holds to the position
// tolerance and, with no damping and no input, T + V stays within the
// integration error.
TEST(MjcfRun, SliderCrankLoopClosesAndKeepsItsEnergy) {
  Problem p =
      problems::MjcfProblem(kSource + "/problems/data/slider_crank_loop.xml",
                            mb::DynamicsForm::kEnergy);
  ASSERT_EQ(p.model.num_constraints(), 1);
  EXPECT_EQ(p.model.constraints()[0].name, "pin");
  EXPECT_EQ(p.model.nc(), 2);  // the row along the plane's normal dropped
  SimulationOptions o = p.defaults;
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.t_end = 2.0;
  const Eigen::VectorXd params = p.model.default_parameters();
  const SimulationSummary s = Simulate(p.model, p.initial(params), params, o);
  ASSERT_TRUE(s.ok) << s.error;
  std::printf(
      "slider_crank_loop: drift %.1e (position), %.1e (velocity), "
      "energy residual %.1e J of %.3e J, crank at %.4f rad\n",
      s.drift_position_max, s.drift_velocity_max, s.energy_residual_max,
      s.energy_initial, s.final.q[0]);
  EXPECT_EQ(s.initial_correction_position, 0.0);  // qpos0 closes the loop
  EXPECT_LT(s.drift_position_max, 1e-8);
  EXPECT_LT(s.energy_residual_max, 1e-5 * std::abs(s.energy_initial));
  // It moved: gravity turns the crank through more than a radian.
  EXPECT_GT(std::abs(s.final.q[0]), 1.0);
}

// A free box welded to the world (body2 omitted) at its file pose: it
// stays, and the weld carries its weight.
TEST(MjcfRun, WeldHoldsAFreeBody) {
  ModelBuilder b("weld");
  const mjcf::Model m = mjcf::ImportString(
      R"(<mujoco><option gravity="0 0 -9.81"/><worldbody>
           <body name="box" pos="0.2 0.1 1" euler="10 20 30">
             <freejoint/>
             <geom type="box" size="0.1 0.2 0.3" mass="2"/>
           </body></worldbody>
         <equality><weld name="hold" body1="box" anchor="0.1 0 0"/></equality>
         </mujoco>)",
      "weld.xml", &b);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nc(), 6);
  SimulationOptions o;
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.t_end = 0.5;
  o.output_step = 0.1;
  o.rtol = o.atol = 1e-10;
  const SimulationSummary s =
      Simulate(model, InitialState{m.qpos0, Eigen::VectorXd::Zero(6)},
               model.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_LT((s.final.q - m.qpos0).cwiseAbs().maxCoeff(), 1e-9);
  // The coincidence's multiplier is the force on the world's frame: the
  // weight's magnitude, 2 kg x 9.81 m/s^2.
  EXPECT_NEAR(s.final.lambda.head<3>().norm(), 2 * 9.81, 1e-7);
}

// MuJoCo's joint equality: y - y0 = a0 + a1 (x - x0) + a2 (x - x0)^2 with
// y = joint1, x = joint2, y0 and x0 their qpos0 (features_radian.xml:
// elbow and turn, refs 0; polycoef 0.1 -0.5 0.2).
TEST(MjcfRun, JointCouplingIsMuJoCosPolynomial) {
  ModelBuilder b("couple");
  const mjcf::Model m = mjcf::Import(
      kSource + "/tests/multibody/data/mjcf/features_radian.xml", &b);
  // The coupling alone: the joints' ranges are limit contacts declared
  // after it (two rows per limited joint; tests/contact/
  // joint_limits_test.cpp).
  const Model full = std::move(b).Build();
  EXPECT_EQ(NumJointLimitRows(full), full.nc() - 1);
  EXPECT_GT(NumJointLimitRows(full), 0);
  const Model model = WithoutJointLimits(full);
  ASSERT_EQ(model.num_constraints(), 1);
  int elbow = -1, turn = -1;
  for (const auto& j : m.joints) {
    if (j.name == "elbow") elbow = j.qpos;
    if (j.name == "turn") turn = j.qpos;
  }
  ASSERT_GE(elbow, 0);
  ASSERT_GE(turn, 0);
  Workspace ws(model);
  ws.SetParameters(model.default_parameters());
  const testing::RandomState r(model.nq(), model.nv(), 3, 0.0);
  ws.SetState(0.0, r.q, r.v);
  EvaluateAll(&ws);
  const double x = r.q[turn];
  const double expected = r.q[elbow] - (0.1 - 0.5 * x + 0.2 * x * x);
  ASSERT_NE(expected, 0.0);
  EXPECT_NEAR(ws.phi[0], expected, testing::kRoundOff);
}

// <option><flag>: gravity and passive forces disabled, equalities left
// out; --gravity (ImportOptions::gravity) replaces the file's.
TEST(MjcfRun, OptionFlagsAndGravity) {
  const std::string xml =
      R"(<mujoco><option gravity="0 0 -3"><flag FLAGS/></option><worldbody>
           <body name="b" pos="0 0 1"><joint name="j" axis="0 1 0"
             damping="2" stiffness="5"/>
             <geom type="sphere" size="0.1" pos="0.3 0 0"/></body>
           <body name="c" pos="1 0 1"><joint name="k" axis="0 1 0"/>
             <geom type="sphere" size="0.1" pos="0.3 0 0"/></body>
         </worldbody><equality><connect body1="b" body2="c" anchor="0.3 0 0"/>
         </equality></mujoco>)";
  auto import = [&](const std::string& flags, mjcf::ImportOptions o = {}) {
    std::string x = xml;
    x.replace(x.find("FLAGS"), 5, flags);
    ModelBuilder b("flags");
    const mjcf::Model m = mjcf::ImportString(x, "flags.xml", &b, o);
    return std::pair{m, std::move(b).Build()};
  };
  {
    const auto [m, model] = import("");
    EXPECT_EQ(m.gravity, Eigen::Vector3d(0, 0, -3));
    EXPECT_TRUE(model.has_damping());
    EXPECT_EQ(model.num_constraints(), 1);
  }
  {
    const auto [m, model] =
        import(R"(gravity="disable" passive="disable" equality="disable")");
    EXPECT_EQ(m.gravity, Eigen::Vector3d::Zero());
    EXPECT_FALSE(model.has_damping());
    EXPECT_EQ(model.num_constraints(), 0);
    std::string notes;
    for (const std::string& n : m.notes) notes += n + "\n";
    EXPECT_THAT(notes, HasSubstr("equalities disabled by <option><flag>"));
  }
  mjcf::ImportOptions o;
  o.gravity = Eigen::Vector3d(1, 2, 3);
  EXPECT_EQ(import("", o).first.gravity, Eigen::Vector3d(1, 2, 3));
}

// Motors: column gear on the joint's velocity, value ctrl_<name> whose
// range is the ctrlrange; an unnamed motor is "actuator<k>".
TEST(MjcfRun, MotorsAreInputChannels) {
  ModelBuilder b("motors");
  const mjcf::Model m =
      mjcf::Import(kSource + "/tests/multibody/data/mjcf/features.xml", &b);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.num_inputs(), 2);
  EXPECT_EQ(model.inputs()[0].name, "drive");
  EXPECT_EQ(model.inputs()[1].name, "actuator1");
  const int ctrl = model.ParameterIndex("ctrl_drive");
  EXPECT_EQ(model.parameter_ranges()[ctrl].lower, -2.0);
  EXPECT_EQ(model.parameter_ranges()[ctrl].upper, 2.0);
  EXPECT_THAT(model.ParameterRangeError([&] {
    Eigen::VectorXd p = model.default_parameters();
    p[ctrl] = 3.0;
    return p;
  }()),
              HasSubstr("ctrl_drive"));
  int shoulder = -1;
  for (const auto& j : m.joints)
    if (j.name == "shoulder_a") shoulder = j.qvel;
  Workspace ws(model);
  Eigen::VectorXd p = model.default_parameters();
  p[ctrl] = 1.5;
  ws.SetParameters(p);
  ws.SetState(0.0, m.qpos0, Eigen::VectorXd::Zero(model.nv()));
  EvaluateAll(&ws);
  Eigen::VectorXd expected = Eigen::VectorXd::Zero(model.nv());
  expected[shoulder] = 3.0 * 1.5;  // gear 3, ctrl 1.5
  EXPECT_TRUE(ws.Bu.isApprox(expected, 1e-15)) << ws.Bu.transpose();
}

// The mechanism JSON of the humanoid: its 20 geoms (the floor on the
// ground) in docs/output.md's schema, and its 21 hinge ranges in radians.
TEST(MjcfRun, HumanoidGeometryAndLimitsReachTheMechanismJson) {
  ModelBuilder b("h");
  const mjcf::Model m = mjcf::Import(kSamples + "humanoid/humanoid.xml", &b);
  const nlohmann::json js =
      nlohmann::json::parse(mb::MechanismJson(m.kinematics));
  ASSERT_EQ(js["geometry"].size(), 20u);
  const auto& floor = js["geometry"][0];
  EXPECT_EQ(floor["body"], "ground");
  EXPECT_EQ(floor["type"], "plane");
  EXPECT_EQ(floor["collision"], true);
  nlohmann::json torso;
  for (const auto& g : js["geometry"])
    if (g["name"] == "torso") torso = g;
  ASSERT_FALSE(torso.is_null());
  for (const char* key : {"body", "name", "type", "size", "pos", "quat", "rgba",
                          "collision", "visual"})
    EXPECT_TRUE(torso.contains(key)) << key;
  EXPECT_EQ(torso["body"], "torso");
  EXPECT_EQ(torso["type"], "capsule");
  // fromto="0 -.07 0 0 .07 0" size=".07": radius 0.07, half-length 0.07,
  // centred, z along from - to = -y: a quarter turn about x.
  EXPECT_NEAR(torso["size"][0].get<double>(), 0.07, 1e-16);
  EXPECT_NEAR(torso["size"][1].get<double>(), 0.07, 1e-16);
  EXPECT_EQ(torso["size"].size(), 2u);
  const double h = std::sqrt(0.5);
  EXPECT_NEAR(torso["quat"][0].get<double>(), h, 1e-15);
  EXPECT_NEAR(torso["quat"][1].get<double>(), h, 1e-15);
  EXPECT_NEAR(torso["quat"][2].get<double>(), 0.0, 1e-15);
  EXPECT_NEAR(torso["quat"][3].get<double>(), 0.0, 1e-15);
  EXPECT_EQ(torso["rgba"], nlohmann::json({0.8, 0.6, 0.4, 1.0}));  // material
  ASSERT_EQ(js["limits"].size(), 21u);
  const auto& abdomen = js["limits"][0];
  EXPECT_EQ(abdomen["joint"], "abdomen_z");
  EXPECT_NEAR(abdomen["lower"][0].get<double>(), -std::numbers::pi / 4, 1e-15);
  EXPECT_NEAR(abdomen["upper"][0].get<double>(), std::numbers::pi / 4, 1e-15);
  EXPECT_EQ(abdomen["restitution"], 0.0);
}

// humanoid100.xml (the humanoid and 100 free objects: nq 728, nv 627):
// imports, and how long the import takes (a measurement, not a bound).
TEST(MjcfRun, Humanoid100ImportTime) {
  const auto start = std::chrono::steady_clock::now();
  ModelBuilder b("h100");
  mjcf::ImportOptions options;
  options.dynamics = mb::DynamicsForm::kRecursive;
  const mjcf::Model m =
      mjcf::Import(kSamples + "humanoid100/humanoid100.xml", &b, options);
  const auto imported = std::chrono::steady_clock::now();
  const Model model = std::move(b).Build();
  const auto built = std::chrono::steady_clock::now();
  EXPECT_EQ(model.nq(), 728);
  EXPECT_EQ(model.nv(), 627);
  EXPECT_EQ(m.joints.size(), 122u);
  std::printf(
      "humanoid100.xml: mjcf::Import %.1f ms, ModelBuilder::Build %.1f ms\n",
      std::chrono::duration<double, std::milli>(imported - start).count(),
      std::chrono::duration<double, std::milli>(built - imported).count());
}

}  // namespace mjcf_run_test
}  // namespace
}  // namespace daedalus
