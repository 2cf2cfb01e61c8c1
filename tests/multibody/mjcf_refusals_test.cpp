// What the MJCF importer refuses, each with the file, the line, the element
// and the fix (include/daedalus/mjcf.hpp), and what it notes: Debian's
// arm26.xml (tendons and muscles), slider_crank.xml (position servos on
// slider-crank transmissions), include loops, unknown elements and
// attributes, values that are not finite numbers, a moving body without
// mass, inertias that are not positive definite, degrees in radian mode,
// MuJoCo's rules on free and ball joints, dry friction, fluid forces, a
// document type definition, names that would break the output files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>

#include "daedalus/mjcf.hpp"

namespace daedalus {
namespace {
namespace mjcf_refusals_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const std::string kSamples = "/usr/share/mujoco/model/";

void Import(const std::string& xml, const std::string& origin = "bad.xml") {
  ModelBuilder b("bad");
  mjcf::ImportString(xml, origin, &b);
}

// A model with one hinged body holding `inside`, after `before` in
// <mujoco>.
std::string OneBody(const std::string& inside, const std::string& before = "") {
  return "<mujoco>" + before + "<worldbody>\n<body name='b' pos='0 0 1'>\n" +
         inside + "\n</body>\n</worldbody></mujoco>";
}
const char* const kHinge = "<joint name='j' axis='0 1 0'/>";
const char* const kMass =
    "<inertial pos='0 0 -0.5' mass='1' diaginertia='0.1 0.1 0.1'/>";

TEST(MjcfRefusals, TendonsOfArm26) {
  EXPECT_THAT(
      [] {
        ModelBuilder b("arm26");
        mjcf::Import(kSamples + "tendon_arm/arm26.xml", &b);
      },
      ThrowsMessage<std::invalid_argument>(AllOf(
          HasSubstr("tendon_arm/arm26.xml:71: <spatial name='SF'>: tendons "
                    "are not supported"),
          HasSubstr("remove the <tendon> section and what uses it"))));
}

TEST(MjcfRefusals, PositionServosOfSliderCrankUnlessSkipped) {
  const std::string path = kSamples + "slider_crank/slider_crank.xml";
  EXPECT_THAT(
      [&] {
        ModelBuilder b("sc");
        mjcf::Import(path, &b);
      },
      ThrowsMessage<std::invalid_argument>(
          AllOf(HasSubstr("slider_crank.xml:50: <position name='forward'>: "
                          "<position> actuators are not supported"),
                HasSubstr("mjcf --skip-actuators"))));
  ModelBuilder b("sc");
  mjcf::ImportOptions options;
  options.skip_unsupported_actuators = true;
  const mjcf::Model m = mjcf::Import(path, &b, options);
  EXPECT_EQ(m.joints.size(), 3u);
  EXPECT_TRUE(m.actuators.empty());
  std::string notes;
  for (const std::string& n : m.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("<position name='forward'>: skipped"));
  EXPECT_THAT(notes, HasSubstr("<position name='broken'>: skipped"));
  EXPECT_THAT(notes, HasSubstr("sites serve tendons"));
}

TEST(MjcfRefusals, IncludeLoopsAndRepeats) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "daedalus_mjcf_include_test";
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  write("b.xml", "<mujoco><include file='a.xml'/></mujoco>");
  const std::string a =
      write("a.xml", "<mujoco>\n<include file='b.xml'/></mujoco>");
  EXPECT_THAT(
      [&] {
        ModelBuilder b("x");
        mjcf::Import(a, &b);
      },
      ThrowsMessage<std::invalid_argument>(
          AllOf(HasSubstr("b.xml:1: <include file='a.xml'>: an include loop: "),
                HasSubstr("a.xml includes "), HasSubstr("b.xml includes "),
                HasSubstr("remove the <include> that closes the loop"))));
  write("body.xml",
        "<mujoco><body name='x'><joint/><geom size='0.1'/></body></mujoco>");
  const std::string twice =
      write("twice.xml",
            "<mujoco><worldbody><include file='body.xml'/>\n"
            "<include file='body.xml'/></worldbody></mujoco>");
  EXPECT_THAT(
      [&] {
        ModelBuilder b("x");
        mjcf::Import(twice, &b);
      },
      ThrowsMessage<std::invalid_argument>(
          AllOf(HasSubstr("twice.xml:2: <include file='body.xml'>"),
                HasSubstr("is already included"))));
  const std::string missing =
      write("missing.xml", "<mujoco><include file='nowhere.xml'/></mujoco>");
  EXPECT_THAT(
      [&] {
        ModelBuilder b("x");
        mjcf::Import(missing, &b);
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("nowhere.xml' cannot be read")));
  std::filesystem::remove_all(dir);
}

TEST(MjcfRefusals, UnknownElementsAttributesAndValues) {
  EXPECT_THAT([] { Import(OneBody("<frame/>")); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("bad.xml:3: <frame>: not an element of <body> in "
                            "MJCF 2.2.2")));
  EXPECT_THAT([] { Import(OneBody("<joint name='j' gravcomp='1'/>")); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("bad.xml:3: <joint name='j'>: unknown attribute "
                            "'gravcomp' (MJCF 2.2.2's <joint> takes:")));
  EXPECT_THAT(
      [] {
        Import(
            OneBody(std::string(kHinge) +
                    "<inertial pos='0 0 0' mass='nan' diaginertia='1 1 1'/>"));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("bad.xml:3: <inertial mass='nan'>: 'nan' is not finite")));
  EXPECT_THAT(
      [] {
        Import(OneBody(
            std::string(kHinge) +
            "<inertial pos='0 0 0' mass='heavy' diaginertia='1 1 1'/>"));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("<inertial mass='heavy'>: 'heavy' is not a number")));
  EXPECT_THAT([] { Import(OneBody("<joint pos='0 1'/>")); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("<joint pos='0 1'>: takes 3 numbers, 2 given")));
  EXPECT_THAT([] { Import("<mujoco><worldbody><body>\n<joint/></worldbody>"); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("bad.xml:1: malformed XML: "
                            "Error=XML_ERROR_MISMATCHED_ELEMENT")));
  EXPECT_THAT([] { Import("<robot name='r'/>"); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("not an MJCF file (it looks like URDF")));
  EXPECT_THAT([] { Import(OneBody(kHinge, "<size njmax='1'/><flex/>")); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("<flex>: not a section of MJCF 2.2.2")));
  EXPECT_THAT([] { Import(OneBody("<joint class='nope'/>")); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("no default class of that name; defined: main")));
}

TEST(MjcfRefusals, BodiesAndInertias) {
  EXPECT_THAT([] { Import(OneBody(kHinge)); },
              ThrowsMessage<std::invalid_argument>(AllOf(
                  HasSubstr("bad.xml:2: <body name='b'>: a moving body (joint "
                            "'j') without mass"),
                  HasSubstr("no <inertial>, no geoms"),
                  HasSubstr("give it an <inertial pos mass diaginertia>"))));
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string(kHinge) +
                       "<inertial pos='0 0 0' mass='1' fullinertia='1 1 1 2 0 "
                       "0'/>"));
      },
      ThrowsMessage<std::invalid_argument>(
          AllOf(HasSubstr("bad.xml:3: <inertial>: the inertia tensor is not "
                          "positive definite"),
                HasSubstr("give positive principal moments"))));
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string(kHinge) +
                       "<inertial pos='0 0 0' mass='1' diaginertia='0.1 0.1 "
                       "1'/>"));
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("violate A + B >= C")));
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string(kHinge) + "<inertial pos='0 0 0' mass='-1' "
                                             "diaginertia='1 1 1'/>"));
      },
      ThrowsMessage<std::invalid_argument>(HasSubstr("is negative")));
  // A body without mass is fine when a static child carries it (MuJoCo).
  ModelBuilder b("ok");
  EXPECT_NO_THROW(mjcf::ImportString(
      OneBody(std::string(kHinge) + "<body><geom size='0.1'/></body>"),
      "ok.xml", &b));
}

TEST(MjcfRefusals, AnglesJointsAndForces) {
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string("<joint range='-90 90'/>") + kMass,
                       "<compiler angle='radian'/>"));
      },
      ThrowsMessage<std::invalid_argument>(
          AllOf(HasSubstr("bad.xml:3: <joint range='-90 90'>: beyond +-2 pi "
                          "while <compiler angle='radian'>"),
                HasSubstr("write the range in radians"))));
  EXPECT_THAT(
      [] {
        Import(
            "<mujoco><worldbody><body><joint/><geom size='0.1'/>\n"
            "<body><freejoint name='f'/><geom size='0.1'/></body>"
            "</body></worldbody></mujoco>");
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("a free joint must be the only joint of a body of the "
                    "<worldbody>")));
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string("<joint type='ball'/><joint name='h'/>") +
                       kMass));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("a ball joint followed by other joints")));
  EXPECT_THAT(
      [] { Import(OneBody(std::string("<joint frictionloss='1'/>") + kMass)); },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("dry friction (frictionloss) is not smooth")));
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string(kHinge) + kMass, "<option density='1.2'/>"));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("fluid forces (density, viscosity) are not simulated")));
  EXPECT_THAT(
      [] {
        Import(
            OneBody(std::string("<joint type='ball' stiffness='3'/>") + kMass));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("stiffness on a ball joint")));
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string("<joint name='j' type='ball'/>") + kMass,
                       "<actuator><motor jointinparent='j'/></actuator>"));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("a gear in the parent's frame on a ball or free joint")));
  EXPECT_THAT(
      [] {
        Import(OneBody(std::string(kHinge) + kMass,
                       "<compiler coordinate='global'/>"));
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("global coordinates are not supported")));
}

TEST(MjcfRefusals, DocumentTypesDepthAndNames) {
  EXPECT_THAT(
      [] {
        Import("<?xml version='1.0'?>\n<!DOCTYPE m [<!ENTITY a 'aaaa'>]>\n" +
               OneBody(std::string(kHinge) + kMass));
      },
      ThrowsMessage<std::invalid_argument>(
          AllOf(HasSubstr("bad.xml', line 2: a <!DOCTYPE> declaration"),
                HasSubstr("entity expansion are refused"))));
  std::string deep = "<mujoco><worldbody>";
  for (int i = 0; i < 120; ++i) deep += "<body><joint/><geom size='0.1'/>\n";
  for (int i = 0; i < 120; ++i) deep += "</body>";
  deep += "</worldbody></mujoco>";
  EXPECT_THAT([&] { Import(deep); },
              ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("line 99: elements nested more than 100 "
                                  "deep (at <body>)"),
                        HasSubstr("split into <include> files"))));
  EXPECT_THAT(
      [] {
        Import(
            "<mujoco><worldbody><body name='a,b'><joint/><geom "
            "size='0.1'/></body></worldbody></mujoco>");
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("the body name \"a,b\" holds a comma")));
  EXPECT_THAT([] { Import(OneBody(std::string("<joint name=''/>") + kMass)); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("a joint has an empty name")));
  EXPECT_THAT(
      [] { Import(OneBody(std::string("<joint name='x/y'/>") + kMass)); },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("the joint name \"x/y\" holds a slash")));
  EXPECT_THAT(
      [] {
        Import(
            "<mujoco><worldbody><body name='b'><joint name='j'/>"
            "<geom size='0.1'/></body><body name='b'><joint name='k'/>"
            "<geom size='0.1'/></body></worldbody></mujoco>");
      },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("a second body named 'b'")));
}

// Degrees are MuJoCo's default: a hinge's range, ref and springref are in
// degrees unless <compiler angle='radian'>.
TEST(MjcfRefusals, DegreesByDefault) {
  ModelBuilder b("deg");
  const mjcf::Model m = mjcf::ImportString(
      OneBody(std::string("<joint name='j' range='-45 90' ref='30' "
                          "stiffness='1' springref='60'/>") +
              kMass),
      "deg.xml", &b);
  ASSERT_EQ(m.joints.size(), 1u);
  const double deg = std::numbers::pi / 180.0;
  EXPECT_TRUE(m.joints[0].limited);
  EXPECT_DOUBLE_EQ(m.joints[0].lower, -45 * deg);
  EXPECT_DOUBLE_EQ(m.joints[0].upper, 90 * deg);
  EXPECT_DOUBLE_EQ(m.joints[0].ref, 30 * deg);
  EXPECT_DOUBLE_EQ(m.joints[0].springref, 60 * deg);
  EXPECT_DOUBLE_EQ(m.qpos0[0], 30 * deg);  // qpos0 is the ref
  const auto& limits = m.kinematics.tree().limits;
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_DOUBLE_EQ(limits[0].limits.lower[0], -45 * deg);
  EXPECT_DOUBLE_EQ(limits[0].limits.upper[0], 90 * deg);
  EXPECT_EQ(limits[0].limits.restitution, 0.0);
}

}  // namespace mjcf_refusals_test
}  // namespace
}  // namespace daedalus
