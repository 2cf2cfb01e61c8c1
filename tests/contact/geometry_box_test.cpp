// Contact geometry (docs/contact.md, "Contact geometry"), part two: boxes
// on their corners, the URDF importer's ground contacts, and bad input.
//   a box at rest on its four bottom corners: a statically indeterminate
//     set of closed contacts (4 rows of rank 3); the normal forces sum to
//     the weight;
//   a box released on one edge (frictionless, e = 0) falls flat and rests
//     on four corners, its centre of mass on the vertical it started on;
//   a URDF box link on a floating base with ImportOptions::ground rests on
//     its 4 bottom corners (of 8 contacts); no collision shape: refused;
//   bad input: unsupported pairs (naming both shapes), restitution outside
//     [0, 1], mu < 0, two shapes on one body, a planar shape turned out of
//     the plane, a start below the plane (the contact stage refuses it,
//     naming the contact and the depth).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/multibody.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"
#if defined(DAEDALUS_GEOMETRY_URDF)
#include "daedalus/urdf.hpp"
#endif
#if defined(DAEDALUS_GEOMETRY_MJCF)
#include "daedalus/mjcf.hpp"
#endif

namespace daedalus {
namespace {
namespace geometry_box_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kG = 9.81;

// A box of mass m and half sizes h on a free joint above the ground plane
// (z = 0), its contacts `box_ground:<corner>` with restitution e.
struct BoxOnGround {
  double m = 2.0;
  Eigen::Vector3d h = Eigen::Vector3d(0.2, 0.1, 0.05);
  double e = 0.0;
  double mu = 0.0;
  Model Build() const {
    ModelBuilder b("geometry_box");
    mb::Multibody s(mb::Dimension::kSpatial);
    const double ixx = m * (h[1] * h[1] + h[2] * h[2]) / 3.0;
    const double iyy = m * (h[0] * h[0] + h[2] * h[2]) / 3.0;
    const double izz = m * (h[0] * h[0] + h[1] * h[1]) / 3.0;
    const mb::BodyIndex box =
        s.AddBody("box", mb::SpatialBody(m, {0.0, 0.0, 0.0}, ixx, iyy, izz));
    s.AddJoint("base", mb::Joint::Free(), s.world(), s.BodyFrame(box));
    s.SetGravity({0.0, 0.0, -kG});
    mb::Geometry g;
    g.name = "box";
    g.type = mb::GeometryType::kBox;
    g.size = h;
    g.collision = true;
    const mb::GeometryIndex gi = s.AddGeometry(box, g);
    const std::vector<std::string> names =
        s.AddContact("box_ground", gi, s.AddGroundPlane(),
                     {.restitution = e, .mu_static = mu});
    EXPECT_EQ(names.size(), 8u);
    std::move(s).AddTo(&b);
    return std::move(b).Build();
  }
};

SimulationOptions Options(double t_end) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = 0.01;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.integrator = Integrator::kCvodesBdf;
  o.formulation = Formulation::kBaumgarte;
  // Four closed corners of a flat face are 4 rows of rank 3: the KKT
  // solver takes the minimum-norm multipliers (docs/kkt.md).
  o.kkt.allow_redundant = true;
  return o;
}

// Sum of the normal multipliers of the rows named <prefix>... (not the
// friction rows).
double NormalSum(const Model& model,
                 const Eigen::VectorXd& lambda,
                 const std::string& prefix,
                 int* closed) {
  double sum = 0.0;
  *closed = 0;
  for (int r = 0; r < model.nc(); ++r) {
    const std::string n = model.RowName(r);
    if (n.rfind(prefix, 0) != 0 || n.find(":slip") != std::string::npos)
      continue;
    sum += lambda[r];
    // Open rows: lambda 0 to the minimum-norm solve's round-off.
    *closed += lambda[r] > 1e-9 ? 1 : 0;
  }
  return sum;
}

std::vector<ContactEvent> Kind(const SimulationSummary& s, const char* kind) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == kind) out.push_back(e);
  return out;
}

InitialState Resting(const BoxOnGround& bx) {
  InitialState x0;
  x0.q = Eigen::VectorXd::Zero(7);
  x0.q[2] = bx.h[2];
  x0.q[3] = 1.0;
  x0.v = Eigen::VectorXd::Zero(6);
  return x0;
}

// The four closed corners are 4 rows of rank 3: the contact stage's LCPs
// take them (the enumeration solves the semidefinite Delassus operator and
// a tie closes every touching corner), the KKT solve needs the minimum-norm
// multipliers (KktOptions::allow_redundant, --kkt qr); without them the run
// ends naming the dependent rows. The weight is carried in full; its split
// among the corners is the minimum-norm one, m g / 4 each by symmetry.
TEST(GeometryBox, AtRestOnFourCornersTheNormalForcesSumToTheWeight) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const BoxOnGround bx;
  const Model model = bx.Build();
  ::testing::internal::CaptureStderr();
  const SimulationSummary s =
      Simulate(model, Resting(bx), model.default_parameters(), Options(0.5));
  const std::string note = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s.ok) << s.error;
  // The note counts and names the closed rows only: the open top corners
  // are not "dependent rows" (it said "rank of J is 3 < 8 rows" and named
  // them among 5 dependent rows).
  EXPECT_THAT(note, AllOf(HasSubstr("rank of J's closed rows is 3 < 4 closed "
                                    "rows (4 open)"),
                          Not(HasSubstr("+z'"))))
      << note;
  int closed = 0;
  const double sum = NormalSum(model, s.final.lambda, "box_ground:", &closed);
  EXPECT_EQ(closed, 4);
  EXPECT_NEAR(sum, bx.m * kG, 1e-9 * bx.m * kG);
  for (int r = 4; r < 8; ++r)
    EXPECT_NEAR(s.final.lambda[r], bx.m * kG / 4.0, 1e-9 * bx.m * kG);
  EXPECT_NEAR(s.final.q[2], bx.h[2], 1e-12);
  EXPECT_LT(s.final.v.cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(s.contact.impacts, 0);
  std::cout.precision(17);
  std::cout << "box at rest: sum of the normal forces - m g = "
            << sum - bx.m * kG << " N\n";
  SimulationOptions strict = Options(0.5);
  strict.kkt.allow_redundant = false;
  const SimulationSummary refused =
      Simulate(model, Resting(bx), model.default_parameters(), strict);
  EXPECT_FALSE(refused.ok);
  // The diagnosis is of this mode's rows: 4 closed corners of rank 3, the
  // 4 open (top) corners left out rather than named as vanishing
  // gradients (their masked rows are zero).
  EXPECT_THAT(
      refused.error,
      AllOf(HasSubstr("rank 3 < 4 rows"), HasSubstr("4 open or slipping"),
            HasSubstr("dependent constraint rows: 'box_ground:"),
            Not(HasSubstr("vanishes"))));
  std::cout << "without allow_redundant: " << refused.error << "\n";
}

TEST(GeometryBox, ReleasedOnAnEdgeItFallsFlat) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const BoxOnGround bx;
  const Model model = bx.Build();
  // Turned by th0 about x, resting on the edge (+-hx, -hy, -hz).
  const double th0 = 0.3;
  InitialState x0 = Resting(bx);
  x0.q[2] = bx.h[1] * std::sin(th0) + bx.h[2] * std::cos(th0);
  x0.q[3] = std::cos(th0 / 2.0);
  x0.q[4] = std::sin(th0 / 2.0);
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), Options(2.0));
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GE(s.contact.impacts, 1);
  // Flat: the quaternion the identity, the centre at hz; frictionless, so
  // no horizontal force: the centre of mass stays on its vertical.
  EXPECT_NEAR(std::abs(s.final.q[3]), 1.0, 1e-9);
  EXPECT_NEAR(s.final.q[2], bx.h[2], 1e-9);
  EXPECT_NEAR(s.final.q[0], 0.0, 1e-9);
  EXPECT_LT(s.final.v.cwiseAbs().maxCoeff(), 1e-8);
  int closed = 0;
  const double sum = NormalSum(model, s.final.lambda, "box_ground:", &closed);
  EXPECT_NEAR(sum, bx.m * kG, 1e-9 * bx.m * kG);
  EXPECT_EQ(closed, 4);
  std::cout.precision(17);
  std::cout << "box on an edge: " << s.contact.impacts << " impacts (first at "
            << Kind(s, "impact").at(0).t
            << " s), sum - m g = " << sum - bx.m * kG
            << " N, z - hz = " << s.final.q[2] - bx.h[2] << ", energy residual "
            << s.final.energy_residual << " J\n";
}

#if defined(DAEDALUS_GEOMETRY_URDF)
const char* kBoxUrdf = R"(<robot name="crate">
  <link name="crate">
    <inertial><mass value="2"/>
      <inertia ixx="0.01" iyy="0.03" izz="0.035" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
  </link>
</robot>)";

TEST(GeometryUrdf, CollisionBoxesAreGroundContactsWithTheOption) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  ModelBuilder b("crate");
  urdf::ImportOptions o;
  o.floating_base = true;
  o.ground = true;
  o.ground_height = -0.05;  // the crate's bottom face at the start
  const urdf::Robot robot = urdf::ImportString(kBoxUrdf, "crate.urdf", &b, o);
  ASSERT_EQ(robot.contacts.size(), 8u);
  EXPECT_EQ(robot.contacts[0], "crate_collision0:ground:+x+y+z");
  EXPECT_THAT(robot.Describe(), HasSubstr("8 ground contact points"));
  const Model model = std::move(b).Build();
  InitialState x0;
  x0.q = robot.kinematics.Neutral();
  x0.v = Eigen::VectorXd::Zero(model.nv());
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), Options(0.2));
  ASSERT_TRUE(s.ok) << s.error;
  int closed = 0;
  const double sum =
      NormalSum(model, s.final.lambda, "crate_collision0:", &closed);
  EXPECT_NEAR(sum, 2.0 * kG, 1e-9 * 2.0 * kG);
  EXPECT_EQ(s.contact.rows.size(), 8u);
}

// A 1 m arm on a hinge 1.2 m up, a 0.1 m collision sphere at its tip,
// dropped from 1.2 rad onto the ground 0.15 m up (e = 0.5): it rests where
// cos(theta) = 0.95, pressing with m g / 2 (moments about the hinge). With
// the Zeno threshold at 1e-5 m/s and atol 1e-10 a last rebound (rising
// v^2 / (2 a), below the integrator's resolution) used to let the sphere
// through the ground in a run reported ok; the contact stage now ends
// such a run naming the contact.
TEST(GeometryUrdf, AMissedImpactEndsTheRunInsteadOfPassingThroughTheGround) {
  const char* xml = R"(<robot name="ballarm">
  <link name="world"/>
  <link name="arm">
    <inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><origin xyz="0 0 -1"/><geometry><sphere radius="0.1"/></geometry></collision>
  </link>
  <joint name="hinge" type="continuous">
    <parent link="world"/><child link="arm"/><origin xyz="0 0 1.2"/><axis xyz="1 0 0"/>
  </joint>
</robot>)";
  ModelBuilder b("ballarm");
  urdf::ImportOptions io;
  io.ground = true;
  io.ground_height = 0.15;
  io.ground_restitution = 0.5;
  urdf::ImportString(xml, "ballarm.urdf", &b, io);
  const Model model = std::move(b).Build();
  InitialState x0;
  x0.q = Eigen::VectorXd::Constant(1, 1.2);
  x0.v = Eigen::VectorXd::Zero(1);
  SimulationOptions o;
  o.t_end = 3.0;
  o.rtol = 1e-8;
  o.atol = 1e-10;
  for (const double zeno : {1e-5, 1e-3}) {
    o.contact.zeno_velocity = zeno;
    const SimulationSummary s =
        Simulate(model, x0, model.default_parameters(), o);
    if (zeno == 1e-3) {
      ASSERT_TRUE(s.ok) << s.error;
    }
    if (!s.ok) {
      EXPECT_THAT(s.error, AllOf(HasSubstr("an impact was missed"),
                                 HasSubstr("--zeno-velocity")))
          << "zeno " << zeno;
      continue;
    }
    // A run that ends ok rests on the ground, never below it.
    EXPECT_GE(s.contact.min_open_gap, -1e-6) << "zeno " << zeno;
    EXPECT_NEAR(std::cos(s.final.q[0]), 0.95, 1e-8) << "zeno " << zeno;
    EXPECT_NEAR(s.final.lambda[0], 0.5 * kG, 1e-8 * kG) << "zeno " << zeno;
  }
}

TEST(GeometryUrdf, GroundWithoutACollisionSphereOrBoxIsRefused) {
  const char* xml = R"(<robot name="rod">
  <link name="base"/>
  <link name="rod">
    <inertial><mass value="1"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><geometry><cylinder radius="0.05" length="1"/></geometry>
    </collision>
  </link>
  <joint name="hinge" type="continuous">
    <parent link="base"/><child link="rod"/><axis xyz="1 0 0"/>
  </joint>
</robot>)";
  ModelBuilder b("rod");
  urdf::ImportOptions o;
  o.ground = true;
  EXPECT_THAT(
      [&] { urdf::ImportString(xml, "rod.urdf", &b, o); },
      ::testing::ThrowsMessage<std::invalid_argument>(AllOf(
          HasSubstr("rod.urdf"), HasSubstr("no link that moves has a "
                                           "<collision> sphere or box"))));
}
#endif

#if defined(DAEDALUS_GEOMETRY_MJCF)
// MJCF with ImportOptions::ground: a ball (a sphere geom of radius 0.1 on
// a free joint at z = 0.5) strikes the plane at sqrt(2 (0.5 - 0.1) / g);
// the capsule makes no contact.
TEST(GeometryMjcf, ASphereGeomStrikesTheGroundAtTheFreeFallTime) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const char* xml = R"(<mujoco model="drop">
  <worldbody>
    <body name="ball" pos="0 0 0.5">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1"/>
      <geom type="capsule" size="0.02 0.05" pos="0 0 0.2" mass="0.01"/>
    </body>
  </worldbody>
</mujoco>)";
  ModelBuilder b("drop");
  mjcf::ImportOptions o;
  o.ground = true;
  o.ground_restitution = 0.5;
  const mjcf::Model m = mjcf::ImportString(xml, "drop.xml", &b, o);
  ASSERT_EQ(m.contacts.size(), 1u);
  EXPECT_THAT(m.Describe(), HasSubstr("1 ground contact points"));
  const Model model = std::move(b).Build();
  InitialState x0{m.qpos0, Eigen::VectorXd::Zero(model.nv())};
  SimulationOptions opt = Options(0.35);
  opt.rtol = 1e-12;
  opt.atol = 1e-14;
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), opt);
  ASSERT_TRUE(s.ok) << s.error;
  const std::vector<ContactEvent> impacts = Kind(s, "impact");
  ASSERT_EQ(impacts.size(), 1u);
  EXPECT_NEAR(impacts[0].t, std::sqrt(2.0 * 0.4 / kG), 1e-9);
  ASSERT_EQ(impacts[0].u_plus.size(), 1);
  EXPECT_NEAR(impacts[0].u_plus[0], -0.5 * impacts[0].u_minus[0], 1e-9);
}
#endif

// Bad input, each named.
struct Scene {
  mb::Multibody s{mb::Dimension::kSpatial};
  mb::BodyIndex body;
  Scene() {
    body =
        s.AddBody("body", mb::SpatialBody(1.0, {0.0, 0.0, 0.0}, 0.1, 0.1, 0.1));
    s.AddJoint("z", mb::Joint::Prismatic(Eigen::Vector3d::UnitZ()), s.world(),
               s.BodyFrame(body));
    s.SetGravity({0.0, 0.0, -kG});
  }
  mb::GeometryIndex Add(mb::GeometryType type,
                        const std::string& name,
                        const Eigen::Vector3d& size,
                        mb::BodyIndex on) {
    mb::Geometry g;
    g.name = name;
    g.type = type;
    g.size = size;
    g.collision = true;
    if (type == mb::GeometryType::kMesh) g.mesh = "m.stl";
    return s.AddGeometry(on, g);
  }
};

TEST(GeometryInput, UnsupportedPairsAreRefusedNamingBothShapes) {
  using Thrown = std::invalid_argument;
  Scene sc;
  const mb::GeometryIndex ground = sc.s.AddGroundPlane();
  const Eigen::Vector3d one(0.1, 0.1, 0.1);
  const mb::GeometryIndex wall = sc.Add(mb::GeometryType::kPlane, "wall",
                                        Eigen::Vector3d::Zero(), sc.body);
  const mb::GeometryIndex cap =
      sc.Add(mb::GeometryType::kCapsule, "cap", one, sc.body);
  const mb::GeometryIndex mesh =
      sc.Add(mb::GeometryType::kMesh, "hull", Eigen::Vector3d::Ones(), sc.body);
  const mb::GeometryIndex ell =
      sc.Add(mb::GeometryType::kEllipsoid, "egg", one, sc.body);
  // (Not structured bindings: clang 14 cannot capture them in a lambda.)
  for (const std::pair<mb::GeometryIndex, std::string>& shape :
       std::vector<std::pair<mb::GeometryIndex, std::string>>{
           {wall, "plane 'wall'"},
           {cap, "capsule 'cap'"},
           {mesh, "mesh 'hull'"},
           {ell, "ellipsoid 'egg'"}}) {
    const mb::GeometryIndex g = shape.first;
    EXPECT_THAT([&] { sc.s.AddContact("c", g, ground); },
                ::testing::ThrowsMessage<Thrown>(
                    AllOf(HasSubstr("contact 'c'"), HasSubstr(shape.second),
                          HasSubstr("plane 'ground'"),
                          HasSubstr("supported pairs: sphere-plane"))));
  }
}

TEST(GeometryInput, BadLawsAndPlacesAreRefusedNamingTheContact) {
  using Thrown = std::invalid_argument;
  Scene sc;
  const mb::GeometryIndex ground = sc.s.AddGroundPlane();
  const mb::GeometryIndex ball =
      sc.Add(mb::GeometryType::kSphere, "ball", {0.1, 0.0, 0.0}, sc.body);
  const mb::GeometryIndex ball2 =
      sc.Add(mb::GeometryType::kSphere, "ball2", {0.1, 0.0, 0.0}, sc.body);
  EXPECT_THAT([&] { sc.s.AddContact("c", ball, ground, {.restitution = 1.5}); },
              ::testing::ThrowsMessage<Thrown>(
                  AllOf(HasSubstr("contact 'c'"), HasSubstr("restitution 1.5"),
                        HasSubstr("outside [0, 1]"))));
  EXPECT_THAT(
      [&] { sc.s.AddContact("c", ball, ground, {.restitution = -0.1}); },
      ::testing::ThrowsMessage<Thrown>(HasSubstr("restitution -0.1")));
  EXPECT_THAT(
      [&] { sc.s.AddContact("c", ball, ground, {.mu_static = -0.2}); },
      ::testing::ThrowsMessage<Thrown>(AllOf(
          HasSubstr("contact 'c'"), HasSubstr("-0.2"), HasSubstr("negative"))));
  EXPECT_THAT([&] { sc.s.AddContact("c", ball, ball2); },
              ::testing::ThrowsMessage<Thrown>(
                  HasSubstr("both shapes are on one body")));
  EXPECT_THAT([&] { sc.s.AddContact("c", ball, ground, {.friction = "mine"}); },
              ::testing::ThrowsMessage<Thrown>(
                  HasSubstr("leave ContactLaw::friction")));
  sc.s.AddContact("c", ball, ground);
  EXPECT_THAT([&] { sc.s.AddContact("c", ball, ground); },
              ::testing::ThrowsMessage<Thrown>(HasSubstr("declared twice")));
  // A planar shape turned out of the plane.
  mb::Multibody p(mb::Dimension::kPlanar);
  const mb::BodyIndex disk =
      p.AddBody("disk", mb::PlanarBody(1.0, {0.0, 0.0}, 0.1));
  mb::Geometry tilted;
  tilted.name = "tilted";
  tilted.type = mb::GeometryType::kSphere;
  tilted.size = Eigen::Vector3d(0.1, 0.0, 0.0);
  tilted.quaternion = Eigen::Vector4d(std::cos(0.2), std::sin(0.2), 0.0, 0.0);
  const mb::GeometryIndex t = p.AddGeometry(disk, tilted);
  EXPECT_THAT([&] { p.AddContact("c", t, p.AddGroundPlane()); },
              ::testing::ThrowsMessage<Thrown>(HasSubstr("out of the plane")));
}

TEST(GeometryInput, AStartBelowThePlaneIsRefusedNamingTheContactAndDepth) {
  Scene sc;
  const mb::GeometryIndex ball =
      sc.Add(mb::GeometryType::kSphere, "ball", {0.1, 0.0, 0.0}, sc.body);
  sc.s.AddContact("ball_ground", ball, sc.s.AddGroundPlane());
  ModelBuilder b("penetrating");
  std::move(sc.s).AddTo(&b);
  const Model model = std::move(b).Build();
  InitialState x0;
  x0.q = Eigen::VectorXd::Constant(1, 0.09);  // 1 cm into the ground
  x0.v = Eigen::VectorXd::Zero(1);
  SimulationOptions o;
  o.t_end = 0.1;
  const SimulationSummary refused =
      Simulate(model, x0, model.default_parameters(), o);
  EXPECT_FALSE(refused.ok);
  EXPECT_THAT(refused.error,
              AllOf(HasSubstr("contact 'ball_ground' penetrates at the start"),
                    HasSubstr("gap -0.01")));
  // With project_penetration the start is projected onto the plane.
  o.contact.project_penetration = true;
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), o);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_NEAR(s.final.q[0], 0.1, 1e-9);
}

}  // namespace geometry_box_test
}  // namespace
}  // namespace daedalus
