// Inertia of MJCF bodies from their geoms (include/daedalus/mjcf.hpp,
// src/multibody/mjcf_inertia.cpp) against closed forms: each primitive
// shape with a density and with a mass (solid sphere, box, ellipsoid and
// cylinder from their textbook moments; the capsule from a cylinder and
// two hemispheres, each hemisphere moved from its own centre of mass at
// 3r/8 by the parallel-axis theorem, a different route from MuJoCo's
// formula), fromto's position, half-length and axis, several geoms
// composed about their common centre of mass, the compiler's
// inertiagrouprange, and inertia.xml's bodies against MuJoCo's compiled
// masses, centres of mass and principal axes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>

#include "daedalus/mjcf.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace mjcf_inertia_test {

constexpr double kPi = std::numbers::pi;
// Closed forms evaluated in another order than the importer's.
constexpr double kClose = 1e-14;

struct Inertia {
  double mass;
  Eigen::Vector3d com;
  Eigen::Matrix3d I;  // about the centre of mass, body frame
};

// The inertia of the first body of an MJCF <worldbody> holding `body`.
Inertia FirstBody(const std::string& body, const std::string& compiler = "") {
  const std::string xml =
      "<mujoco>" + compiler + "<worldbody>" + body + "</worldbody></mujoco>";
  ModelBuilder b("m");
  const mjcf::Model m = mjcf::ImportString(xml, "shape.xml", &b);
  const mb::BodySpec& s = m.kinematics.tree().bodies[1].spec;
  const Eigen::VectorXd p;
  Inertia out;
  out.mass = s.mass.Value(p);
  out.com =
      Eigen::Vector3d(s.com.x.Value(p), s.com.y.Value(p), s.com.z.Value(p));
  out.I << s.ixx.Value(p), s.ixy.Value(p), s.ixz.Value(p), s.ixy.Value(p),
      s.iyy.Value(p), s.iyz.Value(p), s.ixz.Value(p), s.iyz.Value(p),
      s.izz.Value(p);
  return out;
}

std::string Body(const std::string& geom) {
  return "<body><joint axis='0 0 1'/>" + geom + "</body>";
}

void ExpectDiagonal(const Inertia& in,
                    double mass,
                    const Eigen::Vector3d& moments) {
  ASSERT_GT(mass, 0.0);
  EXPECT_NEAR(in.mass, mass, kClose * mass);
  EXPECT_TRUE(in.I.isApprox(Eigen::Matrix3d(moments.asDiagonal()), kClose))
      << in.I << "\nexpected diagonal " << moments.transpose();
}

TEST(MjcfInertia, SphereBoxEllipsoidCylinder) {
  const double rho = 1000.0;  // MuJoCo's default density
  {
    const double r = 0.1, m = rho * 4.0 / 3.0 * kPi * r * r * r;
    ExpectDiagonal(FirstBody(Body("<geom type='sphere' size='0.1'/>")), m,
                   Eigen::Vector3d::Constant(0.4 * m * r * r));
  }
  {
    // Half sizes a, b, c: the box of sides 2a, 2b, 2c.
    const double a = 0.1, b = 0.05, c = 0.02, m = 700.0 * 8 * a * b * c;
    ExpectDiagonal(
        FirstBody(
            Body("<geom type='box' size='0.1 0.05 0.02' density='700'/>")),
        m,
        Eigen::Vector3d(m * (4 * b * b + 4 * c * c) / 12,
                        m * (4 * a * a + 4 * c * c) / 12,
                        m * (4 * a * a + 4 * b * b) / 12));
  }
  {
    const double a = 0.04, b = 0.03, c = 0.02, m = 2.5;
    ExpectDiagonal(
        FirstBody(Body("<geom type='ellipsoid' size='0.04 0.03 "
                       "0.02' mass='2.5'/>")),
        m,
        Eigen::Vector3d(m * (b * b + c * c) / 5, m * (a * a + c * c) / 5,
                        m * (a * a + b * b) / 5));
  }
  {
    // Radius r, half-length l along z.
    const double r = 0.03, l = 0.05, m = rho * kPi * r * r * 2 * l;
    const double side = m * (3 * r * r + 4 * l * l) / 12;
    ExpectDiagonal(FirstBody(Body("<geom type='cylinder' size='0.03 0.05'/>")),
                   m, Eigen::Vector3d(side, side, m * r * r / 2));
  }
}

TEST(MjcfInertia, CapsuleIsACylinderAndTwoHemispheres) {
  const double r = 0.02, l = 0.1, h = 2 * l, rho = 1200.0;
  const double mc = rho * kPi * r * r * h;              // the cylinder
  const double mh = rho * 2.0 / 3.0 * kPi * r * r * r;  // one hemisphere
  // A hemisphere about its flat face's centre: 2/5 m r^2 on every axis
  // through it; its centre of mass 3r/8 from the face.
  const double d = 3 * r / 8;
  const double own = 0.4 * mh * r * r - mh * d * d;  // about its centroid
  const double arm = l + d;  // centroid to the capsule's centre
  const double side =
      mc * (3 * r * r + h * h) / 12 + 2 * (own + mh * arm * arm);
  const double axial = mc * r * r / 2 + 2 * 0.4 * mh * r * r;
  ExpectDiagonal(FirstBody(Body("<geom type='capsule' size='0.02 0.1' "
                                "density='1200'/>")),
                 mc + 2 * mh, Eigen::Vector3d(side, side, axial));
}

// fromto: the centre halfway, z along from - to, the half-length |to -
// from| / 2 in size[1] (a box's in size[2], size[0] then its x and y).
TEST(MjcfInertia, FromToPlacesAndTurnsTheShape) {
  const Eigen::Vector3d a(0.1, -0.2, 0.3), b(0.4, 0.2, -0.1);
  const Inertia in = FirstBody(
      Body("<geom type='cylinder' size='0.02' fromto='0.1 -0.2 0.3 0.4 0.2 "
           "-0.1' mass='3'/>"));
  EXPECT_TRUE(in.com.isApprox((a + b) / 2, kClose));
  const double r = 0.02, l = (b - a).norm() / 2, m = 3.0;
  const Eigen::Vector3d z = (a - b).normalized();
  const double side = m * (3 * r * r + 4 * l * l) / 12, axial = m * r * r / 2;
  // A body symmetric about z: I = side (1 - z z') + axial z z'.
  const Eigen::Matrix3d expected =
      side * (Eigen::Matrix3d::Identity() - z * z.transpose()) +
      axial * z * z.transpose();
  EXPECT_TRUE(in.I.isApprox(expected, kClose)) << in.I << "\n" << expected;
  // A box: size[0] its half-width in x and y, half-length from fromto.
  const Inertia box = FirstBody(
      Body("<geom type='box' size='0.03' fromto='0 0 0 0 0 0.5' mass='2'/>"));
  ExpectDiagonal(box, 2.0,
                 Eigen::Vector3d(2.0 * (0.03 * 0.03 + 0.25 * 0.25) / 3,
                                 2.0 * (0.03 * 0.03 + 0.25 * 0.25) / 3,
                                 2.0 * (2 * 0.03 * 0.03) / 3));
}

// Two spheres: the mass-weighted centre, and each sphere's own moment plus
// m d^2 about the axes through the common centre (Steiner).
TEST(MjcfInertia, SeveralGeomsComposeAboutTheirCentreOfMass) {
  const Inertia in = FirstBody(
      Body("<geom type='sphere' size='0.05' pos='0.1 0 0' mass='2'/>"
           "<geom type='sphere' size='0.03' pos='-0.2 0.06 0' mass='1'/>"
           // Outside the default inertiagrouprange 0..5: left out.
           "<geom type='sphere' size='0.5' pos='0 0 3' group='6'/>"));
  const Eigen::Vector3d p1(0.1, 0, 0), p2(-0.2, 0.06, 0);
  const Eigen::Vector3d c = (2 * p1 + 1 * p2) / 3;
  EXPECT_NEAR(in.mass, 3.0, kClose);
  EXPECT_TRUE(in.com.isApprox(c, kClose));
  auto steiner = [](double m, const Eigen::Vector3d& d) {
    return Eigen::Matrix3d(m * (d.squaredNorm() * Eigen::Matrix3d::Identity() -
                                d * d.transpose()));
  };
  const Eigen::Matrix3d expected =
      Eigen::Matrix3d::Identity() * (0.4 * 2 * 0.05 * 0.05) +
      steiner(2, p1 - c) +
      Eigen::Matrix3d::Identity() * (0.4 * 1 * 0.03 * 0.03) +
      steiner(1, p2 - c);
  EXPECT_TRUE(in.I.isApprox(expected, kClose)) << in.I << "\n" << expected;
  // inertiafromgeom="true" takes the geoms even beside an <inertial>, and
  // a narrower inertiagrouprange leaves out the second sphere.
  const Inertia only_first = FirstBody(
      "<body><joint/><inertial pos='0 0 0' mass='9' diaginertia='1 1 1'/>"
      "<geom type='sphere' size='0.05' mass='2'/>"
      "<geom type='sphere' size='0.03' pos='1 0 0' mass='1' group='2'/>"
      "</body>",
      "<compiler inertiafromgeom='true' inertiagrouprange='0 1'/>");
  ExpectDiagonal(only_first, 2.0,
                 Eigen::Vector3d::Constant(0.4 * 2 * 0.05 * 0.05));
}

// The compiler's mass settings, as MuJoCo's mjCBody::Compile and
// mj_setTotalmass apply them: boundmass and boundinertia raise the mass and
// the principal moments to their floor, balanceinertia replaces principal
// moments that violate A + B >= C by their mean, settotalmass scales every
// body's mass and inertia to the given total, discardvisual drops the
// geoms that collide with nothing before the inertia is computed.
TEST(MjcfInertia, CompilerMassSettings) {
  const std::string point =
      "<body><joint/><inertial pos='0 0 0' mass='0.001' diaginertia='0.5 "
      "0.5 0.5'/></body>";
  EXPECT_NEAR(FirstBody(point, "<compiler boundmass='0.25'/>").mass, 0.25,
              kClose);
  const Inertia bounded = FirstBody(
      "<body><joint/><inertial pos='0 0 0' mass='1' diaginertia='0.1 0.2 "
      "0.25'/></body>",
      "<compiler boundinertia='0.15'/>");
  EXPECT_TRUE(bounded.I.isApprox(
      Eigen::Matrix3d(Eigen::Vector3d(0.15, 0.2, 0.25).asDiagonal()), kClose))
      << bounded.I;
  const Inertia balanced = FirstBody(
      "<body><joint/><inertial pos='0 0 0' mass='1' diaginertia='0.1 0.1 "
      "1'/></body>",
      "<compiler balanceinertia='true'/>");
  EXPECT_TRUE(balanced.I.isApprox(Eigen::Matrix3d::Identity() * 0.4, kClose))
      << balanced.I;
  const Inertia scaled = FirstBody(
      "<body><joint/><geom type='sphere' size='0.1' mass='2'/>"
      "<body><joint/><geom type='sphere' size='0.1' mass='6'/></body></body>",
      "<compiler settotalmass='4'/>");
  ExpectDiagonal(scaled, 1.0, Eigen::Vector3d::Constant(0.4 * 0.1 * 0.1));
  const Inertia kept = FirstBody(
      "<body><joint/><geom type='sphere' size='0.1' mass='2'/>"
      "<geom type='sphere' size='0.2' pos='1 0 0' mass='5' contype='0' "
      "conaffinity='0'/></body>",
      "<compiler discardvisual='true'/>");
  ExpectDiagonal(kept, 2.0, Eigen::Vector3d::Constant(0.4 * 2 * 0.1 * 0.1));
}

// MuJoCo stores a tensor from several geoms or from fullinertia as
// principal moments and axes found by a Jacobi iteration, which stops
// once the next rotation is below acos(1 - 1e-12) = 1.414e-6 rad; the
// axes are then off by up to that angle and the tensor by up to 1.414e-6
// times the spread of the principal moments. The importer keeps the exact
// tensor: masses and centres of mass agree to round-off, the tensors
// within that bound.
TEST(MjcfInertia, InertiaModelAgreesWithMuJoCosCompiledBodies) {
  const std::string data =
      std::string(DAEDALUS_SOURCE_DIR) + "/tests/multibody/data/";
  std::ifstream in(data + "mujoco_reference.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json all = nlohmann::json::parse(in);
  nlohmann::json ref;
  for (const auto& m : all["models"])
    if (m["label"] == "inertia") ref = m;
  ASSERT_FALSE(ref.is_null());
  ModelBuilder b("m");
  const mjcf::Model m = mjcf::Import(data + "mjcf/inertia.xml", &b);
  const auto& bodies = m.kinematics.tree().bodies;
  const Eigen::VectorXd p;
  for (const auto& body : ref["bodies"]) {
    const mb::BodySpec* s = nullptr;
    for (const auto& x : bodies)
      if (x.name == body["name"]) s = &x.spec;
    ASSERT_NE(s, nullptr) << body["name"];
    const double mass = body["mass"];
    EXPECT_NEAR(s->mass.Value(p), mass, kClose * mass) << body["name"];
    const Eigen::Vector3d com(s->com.x.Value(p), s->com.y.Value(p),
                              s->com.z.Value(p));
    EXPECT_LT((com - Eigen::Vector3d(body["ipos"][0], body["ipos"][1],
                                     body["ipos"][2]))
                  .norm(),
              kClose);
    Eigen::Matrix3d I;
    I << s->ixx.Value(p), s->ixy.Value(p), s->ixz.Value(p), s->ixy.Value(p),
        s->iyy.Value(p), s->iyz.Value(p), s->ixz.Value(p), s->iyz.Value(p),
        s->izz.Value(p);
    const Eigen::Quaterniond q(body["iquat"][0], body["iquat"][1],
                               body["iquat"][2], body["iquat"][3]);
    const Eigen::Vector3d d(body["inertia"][0], body["inertia"][1],
                            body["inertia"][2]);
    const Eigen::Matrix3d mujoco = q.toRotationMatrix() * d.asDiagonal() *
                                   q.toRotationMatrix().transpose();
    const double bound = 1.5e-6 * (d.maxCoeff() - d.minCoeff()) + 1e-15;
    const double diff = (I - mujoco).cwiseAbs().maxCoeff();
    std::printf("inertia.xml body %s: |I - I_MuJoCo| = %.2e (bound %.2e)\n",
                body["name"].get<std::string>().c_str(), diff, bound);
    EXPECT_LT(diff, bound) << body["name"];
    // ... and the same principal moments.
    const Eigen::Vector3d ours =
        Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(I).eigenvalues();
    Eigen::Vector3d theirs = d;
    std::sort(theirs.data(), theirs.data() + 3);
    EXPECT_LT((ours - theirs).cwiseAbs().maxCoeff(), bound);
  }
}

}  // namespace mjcf_inertia_test
}  // namespace
}  // namespace daedalus
