// The URDF importer's additions (include/daedalus/urdf.hpp): <limit> as
// joint limits, <mimic> as a holonomic coupling, <visual> and <collision>
// shapes as geometry in MuJoCo's size conventions, the elements URDF does
// not define listed once per kind, and the first pass's refusals (values
// that are not finite numbers, a missing inertia attribute, a link with
// two parents, a joint cycle, names that break the output files, a folder,
// a binary file, a document type definition, nesting deeper than 100) with
// the file, the line and the fix, before urdfdom sees the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_output.hpp"
#include "daedalus/urdf.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace urdf_import_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Two revolute joints below a base: `extra` goes into the second joint,
// `link` into the first link.
std::string Robot(const std::string& extra,
                  const std::string& link = "",
                  const std::string& after = "") {
  return R"(<?xml version="1.0"?>
<robot name="r">
  <link name="base"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="0.5" effort="10" velocity="2"/>
  </joint>
  <link name="l1">)" +
         link + R"(
    <inertial><origin xyz="0 0 -0.3"/><mass value="1.5"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/><origin xyz="0 0 -0.6"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/>
    )" + extra +
         R"(
  </joint>
  <link name="l2">
    <inertial><origin xyz="0 0 -0.2"/><mass value="0.8"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.005" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>)" +
         after + "\n</robot>";
}

urdf::Robot Import(const std::string& xml, ModelBuilder* b) {
  return urdf::ImportString(xml, "r.urdf", b);
}

TEST(UrdfImport, LimitsAreTheJointsLimits) {
  ModelBuilder b("r");
  const urdf::Robot r = Import(Robot(""), &b);
  const auto& limits = r.kinematics.tree().limits;
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].limits.lower[0], -1.5);
  EXPECT_EQ(limits[0].limits.upper[0], 0.5);
  EXPECT_EQ(limits[0].limits.restitution, 0.0);
  EXPECT_EQ(limits[1].limits.upper[0], 1.0);
  const nlohmann::json js =
      nlohmann::json::parse(mb::MechanismJson(r.kinematics));
  ASSERT_EQ(js["limits"].size(), 2u);
  EXPECT_EQ(js["limits"][0]["joint"], "j1");
  EXPECT_EQ(js["limits"][0]["coordinates"], nlohmann::json({"j1"}));
  EXPECT_EQ(js["limits"][0]["lower"], nlohmann::json({-1.5}));
}

// j2 mimics j1: q2 = 2 q1 + 0.1, the constraint mimic_j2, and j2 is no
// input channel.
TEST(UrdfImport, MimicIsACouplingConstraint) {
  ModelBuilder b("r");
  const urdf::Robot r =
      Import(Robot(R"(<mimic joint="j1" multiplier="2" offset="0.1"/>)"), &b);
  // The coupling alone: the joints' limits are contacts declared after
  // it (two rows per limited joint; tests/contact/joint_limits_test.cpp),
  // and the run below takes IDAS's GGL, which contacts do not run on.
  const Model full = std::move(b).Build();
  EXPECT_EQ(NumJointLimitRows(full), full.nc() - 1);
  EXPECT_GT(NumJointLimitRows(full), 0);
  const Model model = WithoutJointLimits(full);
  ASSERT_EQ(model.num_constraints(), 1);
  EXPECT_EQ(model.constraints()[0].name, "mimic_j2");
  ASSERT_EQ(model.num_inputs(), 1);
  EXPECT_EQ(model.inputs()[0].name, "j1");
  EXPECT_EQ(r.joints[1].mimic, "j1");
  EXPECT_THAT(r.Describe(), HasSubstr("mimics j1 (x 2 + 0.1"));
  Workspace ws(model);
  ws.SetParameters(model.default_parameters());
  ws.SetState(0.0, Eigen::Vector2d(0.3, -0.4), Eigen::Vector2d(0.5, 0.2));
  EvaluateAll(&ws);
  EXPECT_NEAR(ws.phi[0], -0.4 - 2 * 0.3 - 0.1, testing::kRoundOff);
  // A run from a consistent start keeps the coupling.
  SimulationOptions o;
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.t_end = 1.0;
  const SimulationSummary s = Simulate(
      model, InitialState{Eigen::Vector2d(0.2, 0.5), Eigen::Vector2d(0, 0)},
      model.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_NEAR(s.final.q[1], 2 * s.final.q[0] + 0.1, 1e-7);
  EXPECT_GT(std::abs(s.final.q[0] - 0.2), 0.05);  // it swung
}

// Shapes: a box's full sizes halved, a cylinder's length halved (MuJoCo's
// [r, half-length] along z), the origin's rpy as a quaternion, the
// material's colour on visuals.
TEST(UrdfImport, VisualAndCollisionShapesAreGeometry) {
  ModelBuilder b("r");
  const urdf::Robot r = Import(Robot("", R"(
    <visual name="shell"><origin xyz="0.1 0 0" rpy="0 1.5707963267948966 0"/>
      <geometry><cylinder radius="0.05" length="0.4"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
    <collision><geometry><box size="0.2 0.1 0.6"/></geometry></collision>
    <collision><geometry><sphere radius="0.07"/></geometry></collision>)"),
                               &b);
  const nlohmann::json g =
      nlohmann::json::parse(mb::MechanismJson(r.kinematics))["geometry"];
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0]["name"], "shell");
  EXPECT_EQ(g[0]["body"], "l1");
  EXPECT_EQ(g[0]["type"], "cylinder");
  EXPECT_EQ(g[0]["size"], nlohmann::json({0.05, 0.2}));
  EXPECT_EQ(g[0]["visual"], true);
  EXPECT_EQ(g[0]["collision"], false);
  EXPECT_EQ(g[0]["rgba"], nlohmann::json({1.0, 0.0, 0.0, 1.0}));
  const double h = std::sqrt(0.5);
  EXPECT_NEAR(g[0]["quat"][0].get<double>(), h, 1e-15);
  EXPECT_NEAR(g[0]["quat"][2].get<double>(), h, 1e-15);
  EXPECT_EQ(g[0]["pos"], nlohmann::json({0.1, 0.0, 0.0}));
  EXPECT_EQ(g[1]["name"], "l1_collision0");
  EXPECT_EQ(g[1]["type"], "box");
  EXPECT_EQ(g[1]["size"], nlohmann::json({0.1, 0.05, 0.3}));
  EXPECT_EQ(g[1]["collision"], true);
  EXPECT_EQ(g[2]["type"], "sphere");
  EXPECT_EQ(g[2]["size"], nlohmann::json({0.07}));
}

TEST(UrdfImport, UnknownElementsAreListedOncePerKind) {
  ModelBuilder b("r");
  const urdf::Robot r = Import(Robot("", "", R"(
  <gazebo reference="l1"><material>Gazebo/Red</material></gazebo>
  <gazebo reference="l2"/>
  <transmission name="t"><type>x</type></transmission>
  <sensor name="s"/>)"),
                               &b);
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_THAT(r.notes[0],
              AllOf(HasSubstr("URDF file 'r.urdf', line 23: <gazebo> in "
                              "<robot>: simulator extensions are not read"),
                    HasSubstr("(and 1 more)")));
  EXPECT_THAT(r.notes[1], HasSubstr("<transmission> in <robot>: transmissions "
                                    "are not read"));
  EXPECT_THAT(r.notes[2], HasSubstr("line 26: <sensor> in <robot>: not a URDF "
                                    "element here; ignored"));
}

TEST(UrdfImport, RefusesWhatUrdfdomMisreportsWithTheLine) {
  auto refuse = [](const std::string& xml) {
    ModelBuilder b("r");
    Import(xml, &b);
  };
  const std::string ok = Robot("");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = ok;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  for (const char* bad : {"nan", "inf", "heavy"})
    EXPECT_THAT(
        [&] {
          refuse(with("<mass value=\"1.5\"/>",
                      std::string("<mass value=\"") + bad + "\"/>"));
        },
        ThrowsMessage<std::invalid_argument>(
            AllOf(HasSubstr("URDF file 'r.urdf', line 9: <mass> value=\""),
                  HasSubstr(std::string("'") + bad + "' is not"))));
  EXPECT_THAT([&] { refuse(with("ixx=\"0.02\" ", "")); },
              ThrowsMessage<std::invalid_argument>(HasSubstr(
                  "line 10: <inertia> has no ixx: URDF needs all six")));
  // j2 also makes l1 a child: two parents.
  EXPECT_THAT(
      [&] {
        refuse(with("<parent link=\"l1\"/><child link=\"l2\"/>",
                    "<parent link=\"base\"/><child link=\"l1\"/>"));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("link 'l1' is the child of joints 'j1' (line 4) and 'j2' "
                    "(line 13)")));
  // A cycle l1 -> l2 -> l1 with base left over.
  EXPECT_THAT(
      [&] {
        refuse(with("<parent link=\"base\"/><child link=\"l1\"/>",
                    "<parent link=\"l2\"/><child link=\"l1\"/>"));
      },
      ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("form a cycle"),
                                                 HasSubstr("j1 (line 4)"),
                                                 HasSubstr("j2 (line 13)"))));
  EXPECT_THAT([&] { refuse(with("name=\"j2\"", "name=\"j,2\"")); },
              ThrowsMessage<std::invalid_argument>(AllOf(
                  HasSubstr("line 13: the joint name \"j,2\" holds a comma"),
                  HasSubstr("rename it"))));
  EXPECT_THAT([&] { refuse(with("name=\"j2\"", "name=\"j\n2\"")); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("the joint name \"j\\n2\" holds a control")));
  EXPECT_THAT([&] { refuse(with("name=\"j2\"", "name=\"\"")); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("a joint has an empty name")));
  EXPECT_THAT(
      [&] {
        refuse("<?xml version=\"1.0\"?>\n<!DOCTYPE r [<!ENTITY a \"aa\">]>\n" +
               ok.substr(ok.find("<robot")));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("line 2: a <!DOCTYPE> declaration")));
}

// 50 000 nested elements crashed urdfdom (exit 139) and 30 000 took 35 s:
// refused at once, before it parses.
TEST(UrdfImport, DeepNestingIsRefusedQuickly) {
  std::string deep = "<robot name=\"d\">";
  for (int i = 0; i < 50000; ++i) deep += "<a>";
  for (int i = 0; i < 50000; ++i) deep += "</a>";
  deep += "</robot>";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(
      [&] {
        ModelBuilder b("d");
        Import(deep, &b);
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("line 1: elements nested more than 100 deep (at <a>)")));
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count(),
      1.0);
}

TEST(UrdfImport, FoldersAndBinaryFilesAreNamedAsSuch) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "daedalus_urdf_files_test";
  std::filesystem::create_directories(dir / "robot.urdf");
  {
    std::ofstream(dir / "blob.urdf", std::ios::binary) << std::string(
        "\x7f"
        "ELF\x02\x01\x01\x00\x00",
        9);
    std::ofstream(dir / "wide.urdf", std::ios::binary)
        << std::string("\xff\xfe<\x00r\x00", 6);
  }
  auto refuse = [](const std::filesystem::path& p) {
    ModelBuilder b("r");
    urdf::Import(p.string(), &b);
  };
  EXPECT_THAT([&] { refuse(dir / "robot.urdf"); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("robot.urdf' is a folder, not a file")));
  EXPECT_THAT([&] { refuse(dir / "blob.urdf"); },
              ThrowsMessage<std::invalid_argument>(HasSubstr(
                  "blob.urdf' is a binary file, not URDF text (a NUL byte at "
                  "offset 7)")));
  EXPECT_THAT([&] { refuse(dir / "wide.urdf"); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("wide.urdf' is UTF-16 text; save it as UTF-8")));
  EXPECT_THAT([&] { refuse(dir / "missing.urdf"); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("missing.urdf' cannot be read: No such file")));
  std::filesystem::remove_all(dir);
}

}  // namespace urdf_import_test
}  // namespace
}  // namespace daedalus
