// The multibody description (include/daedalus/multibody.hpp): forward
// kinematics and frame Jacobians against finite differences, closed forms
// for a spatial body's inertia and a pendulum's springs, dampers, actuator
// and prescribed motion, loop-closure values, Noether's momenta of a
// free-floating planar system, and the declaration errors.
#include "daedalus/multibody.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "daedalus/dynamics.hpp"
#include "problems/catalogue_support.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace multibody_test {

using mb::BodyIndex;
using mb::Dimension;
using mb::FrameIndex;
using mb::Joint;
using mb::Multibody;
using mb::PExpr;
using mb::PVec;
using ::testing::HasSubstr;
using testing::kRoundOff;

// Central differences with step h: truncation h^2 |f'''| / 6 ~ 1e-11 and
// round-off eps / h ~ 1e-11 for quantities of order one.
constexpr double kFdStep = 1e-5;
constexpr double kFdTol = 1e-8;

Eigen::Vector3d Vee(const Eigen::Matrix3d& w) {
  return Eigen::Vector3d(w(2, 1), w(0, 2), w(1, 0));
}

// Checks Kinematics::Jacobian of `f` against central differences of
// Kinematics::Pose: linear rows from p_WF, angular rows from
// (dR/dq_k) R' = [w_k]x; and Velocity against J v.
void ExpectJacobianMatchesDifferences(const mb::Kinematics& kin,
                                      FrameIndex f,
                                      const Eigen::VectorXd& q,
                                      const Eigen::VectorXd& p) {
  const Eigen::MatrixXd jac = kin.Jacobian<double>(f, q, p);
  const mb::FramePose<double> pose = kin.Pose<double>(f, q, p);
  EXPECT_LT((pose.R.transpose() * pose.R - Eigen::Matrix3d::Identity())
                .cwiseAbs()
                .maxCoeff(),
            kRoundOff);
  EXPECT_NEAR(pose.R.determinant(), 1.0, kRoundOff);
  ASSERT_GT(jac.cwiseAbs().maxCoeff(), 0.1);
  for (int k = 0; k < kin.nq(); ++k) {
    Eigen::VectorXd qp = q, qm = q;
    qp[k] += kFdStep;
    qm[k] -= kFdStep;
    const auto a = kin.Pose<double>(f, qp, p), b = kin.Pose<double>(f, qm, p);
    const Eigen::Vector3d dp = (a.p - b.p) / (2 * kFdStep);
    const Eigen::Matrix3d dr = (a.R - b.R) / (2 * kFdStep);
    const Eigen::Matrix3d w = dr * pose.R.transpose();
    EXPECT_LT((w + w.transpose()).cwiseAbs().maxCoeff(), kFdTol);
    EXPECT_LT((Vee(w) - jac.col(k).head<3>()).cwiseAbs().maxCoeff(), kFdTol)
        << "angular column " << k;
    EXPECT_LT((dp - jac.col(k).tail<3>()).cwiseAbs().maxCoeff(), kFdTol)
        << "linear column " << k;
  }
  std::mt19937 gen(3);
  const Eigen::VectorXd v = testing::RandomVector(gen, kin.nq(), -1.0, 1.0);
  const mb::FrameVelocity<double> fv = kin.Velocity<double>(f, q, v, p);
  const Eigen::VectorXd jv = jac * v;
  EXPECT_LT((fv.w - jv.head<3>()).cwiseAbs().maxCoeff(), kRoundOff);
  EXPECT_LT((fv.v - jv.tail<3>()).cwiseAbs().maxCoeff(), kRoundOff);
}

Eigen::Matrix3d Rotation(double a, double b, double c) {
  return (Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()) *
          Eigen::AngleAxisd(b, Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(c, Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

TEST(Multibody, SpatialChainJacobianMatchesFiniteDifferences) {
  ModelBuilder b("spatial_chain");
  const Param len = b.Parameter("len", 0.7);
  Multibody s(Dimension::kSpatial);
  auto body = [&](const char* name) {
    return s.AddBody(name, mb::SpatialBody(1.0, PVec(0.1, 0.2, 0.3), 0.2, 0.3,
                                           0.4, 0.01, 0.02, 0.03));
  };
  const BodyIndex b1 = body("b1"), b2 = body("b2"), b3 = body("b3"),
                  b4 = body("b4"), b5 = body("b5");
  const FrameIndex base = s.AddFrame("base", s.ground(), PVec(0.1, 0.2, 0.3),
                                     Rotation(0.3, -0.2, 0.5));
  s.AddJoint("hinge", Joint::Revolute(Eigen::Vector3d(1, 2, 3)), base,
             s.BodyFrame(b1));
  const FrameIndex f1 = s.AddFrame("f1", b1, PVec(PExpr(len), 0.0, 0.1));
  const FrameIndex m2 =
      s.AddFrame("m2", b2, PVec(-0.2, 0.1, 0.0), Rotation(-0.4, 0.1, 0.2));
  s.AddJoint("cardan", Joint::Universal(), f1, m2);
  const FrameIndex f2 =
      s.AddFrame("f2", b2, PVec(0.0, 0.0, 0.5), Rotation(0.2, 0.6, -0.3));
  s.AddJoint("slide", Joint::Prismatic(Eigen::Vector3d(0, 1, 1)), f2,
             s.BodyFrame(b3));
  s.AddJoint("plane", Joint::Planar(), s.BodyFrame(b3), s.BodyFrame(b4));
  const FrameIndex f4 = s.AddFrame("f4", b4, PVec(0.3, 0.0, 0.0));
  s.AddJoint("weld", Joint::Weld(), f4, s.BodyFrame(b5));
  const FrameIndex tool =
      s.AddFrame("tool", b5, PVec(0.1, -0.2, 0.4), Rotation(1.0, -0.5, 0.25));
  const mb::Kinematics kin = std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nq(), 7);
  EXPECT_EQ(model.coordinate_names()[1], "cardan_angle1");
  EXPECT_EQ(model.coordinate_names()[6], "plane_angle");
  const Eigen::VectorXd p = model.default_parameters();
  std::mt19937 gen(5);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 7, -2.0, 2.0);
    for (FrameIndex f : {tool, kin.Frame("b3"), kin.Frame("m2")})
      ExpectJacobianMatchesDifferences(kin, f, q, p);
  }
  // The weld: b5 moves rigidly with b4.
  const Eigen::VectorXd q = testing::RandomVector(gen, 7, -2.0, 2.0);
  const auto p4 = kin.Pose<double>(kin.Frame("b4"), q, p);
  const auto p5 = kin.Pose<double>(kin.Frame("b5"), q, p);
  EXPECT_LT((p5.p - p4.p - p4.R * Eigen::Vector3d(0.3, 0, 0)).norm(),
            kRoundOff);
  EXPECT_LT((p5.R - p4.R).cwiseAbs().maxCoeff(), kRoundOff);
}

TEST(Multibody, PlanarChainJacobianMatchesFiniteDifferences) {
  ModelBuilder b("planar_chain");
  Multibody s(Dimension::kPlanar);
  auto body = [&](const char* name) {
    return s.AddBody(name, mb::PlanarBody(1.0, PVec(0.1, -0.2), 0.05));
  };
  const BodyIndex b1 = body("b1"), b2 = body("b2"), b3 = body("b3"),
                  b4 = body("b4");
  s.AddJoint("base", Joint::Planar(), s.world(), s.BodyFrame(b1));
  const FrameIndex f1 =
      s.AddFrame("f1", b1, PVec(0.5, 0.1), mb::RotationZ(0.4));
  const FrameIndex m2 =
      s.AddFrame("m2", b2, PVec(-0.1, 0.2), mb::RotationZ(-0.3));
  s.AddJoint("elbow", Joint::Revolute(), f1, m2);
  const FrameIndex f2 = s.AddFrame("f2", b2, PVec(0.3, 0.0));
  s.AddJoint("slide", Joint::Prismatic(Eigen::Vector3d(1, 1, 0)), f2,
             s.BodyFrame(b3));
  s.AddJoint("wrist", Joint::AbsoluteRevolute(), s.BodyFrame(b3),
             s.BodyFrame(b4));
  const FrameIndex tool =
      s.AddFrame("tool", b4, PVec(0.2, 0.3), mb::RotationZ(1.1));
  const mb::Kinematics kin = std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nq(), 6);
  const Eigen::VectorXd p = model.default_parameters();
  std::mt19937 gen(9);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 6, -2.0, 2.0);
    for (FrameIndex f : {tool, kin.Frame("b3"), kin.Frame("f1")})
      ExpectJacobianMatchesDifferences(kin, f, q, p);
    // The absolute revolute: the wrist body's angle is q[5] in the world.
    const auto pose = kin.Pose<double>(kin.Frame("b4"), q, p);
    EXPECT_NEAR(std::atan2(pose.R(1, 0), pose.R(0, 0)), q[5], kRoundOff);
  }
}

// One spatial body on a revolute joint with axis a through the origin,
// centre of mass r, inertia tensor I_C about C: M = a' I_C a + m |a x r|^2
// (constant), and at rest h = dV/dq = -m g . (a x R r).
TEST(Multibody, SpatialBodyOnAHingeHasTheClosedFormInertia) {
  ModelBuilder b("hinge");
  const Param m = b.Parameter("m", 2.5);
  Multibody s(Dimension::kSpatial);
  const Eigen::Vector3d r(0.3, -0.4, 0.2);
  Eigen::Matrix3d ic;
  ic << 0.5, 0.02, -0.03, 0.02, 0.4, 0.01, -0.03, 0.01, 0.3;
  const BodyIndex body = s.AddBody(
      "body", mb::SpatialBody(m, PVec(r[0], r[1], r[2]), ic(0, 0), ic(1, 1),
                              ic(2, 2), ic(0, 1), ic(0, 2), ic(1, 2)));
  const Eigen::Vector3d axis = Eigen::Vector3d(1, -2, 2) / 3.0;
  s.AddJoint("hinge", Joint::Revolute(axis), s.world(), s.BodyFrame(body));
  const Eigen::Vector3d g(0.0, 0.0, -9.81);
  s.SetGravity(PVec(g[0], g[1], g[2]));
  const mb::Kinematics kin = std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  const double mass = 2.5;
  const double m_closed =
      axis.dot(ic * axis) + mass * axis.cross(r).squaredNorm();
  Workspace ws(model);
  for (double q : {-2.0, 0.3, 1.7}) {
    ws.SetState(0.0, Eigen::VectorXd::Constant(1, q), Eigen::VectorXd::Zero(1));
    EvaluateAll(&ws);
    EXPECT_NEAR(ws.M(0, 0), m_closed, kRoundOff * m_closed);
    const Eigen::Matrix3d rot = Eigen::AngleAxisd(q, axis).toRotationMatrix();
    const double dv = -mass * g.dot(axis.cross(rot * r));
    EXPECT_NEAR(ws.h[0], dv, kRoundOff * std::abs(dv));
    EXPECT_NEAR(ws.potential, -mass * g.dot(rot * r), kRoundOff);
    const Eigen::Vector3d com =
        kin.CenterOfMass<double>(ws.q, model.default_parameters());
    EXPECT_LT((com - rot * r).norm(), kRoundOff);
  }
}

// A compound pendulum (angle from the downward vertical) with a joint
// spring, a joint damper and a motor:
//   M = I + m l^2,  h = m g l sin th + k (th - th0) + c th',  B = 1.
TEST(Multibody, PendulumSpringDamperAndActuatorHaveTheClosedForm) {
  ModelBuilder b("pendulum_mb");
  const Param m = b.Parameter("m", 1.5), l = b.Parameter("l", 0.8);
  const Param g = b.Parameter("g", 9.81);
  Multibody s(Dimension::kPlanar);
  const BodyIndex bob =
      s.AddBody("bob", mb::PlanarBody(m, PVec(0.0, -PExpr(l)), 0.1));
  s.SetGravity(PVec(0.0, -PExpr(g)));
  const mb::JointIndex pin =
      s.AddJoint("pin", Joint::Revolute(), s.world(), s.BodyFrame(bob));
  s.AddJointSpring(pin, 3.0, 0.2);
  s.AddJointDamper(pin, 0.4);
  s.AddActuator("motor", pin,
                [](const auto& x) { return 0.5 * sin(2.0 * x.t); });
  std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  EXPECT_EQ(model.coordinate_names()[0], "pin_angle");
  ASSERT_EQ(model.num_inputs(), 1);
  Workspace ws(model);
  const double th = 0.7, w = -1.3, t = 0.4;
  ws.SetState(t, Eigen::VectorXd::Constant(1, th),
              Eigen::VectorXd::Constant(1, w));
  EvaluateAll(&ws);
  EXPECT_NEAR(ws.M(0, 0), 0.1 + 1.5 * 0.64, kRoundOff);
  const double h = 1.5 * 9.81 * 0.8 * std::sin(th) + 3.0 * (th - 0.2) + 0.4 * w;
  EXPECT_NEAR(ws.h[0], h, kRoundOff * std::abs(h));
  EXPECT_NEAR(ws.D(0, 0), 0.4, kRoundOff);
  EXPECT_NEAR(ws.Bu[0], 0.5 * std::sin(2.0 * t), kRoundOff);

  // The energy balance accounts for the damper and the motor: its residual
  // is integration error, so it shrinks with the tolerance (BDF, the
  // default integrator, at rtol 1e-9 and 1e-12; energy scale about 12 J;
  // measured 1.3e-7 J and 4.4e-10 J, damping loss 4.16 J, motor work
  // 0.16 J).
  double residual[2];
  for (int k = 0; k < 2; ++k) {
    SimulationOptions o;
    o.t_end = 3.0;
    o.output_step = 0.05;
    o.rtol = k == 0 ? 1e-9 : 1e-12;
    o.atol = o.rtol * 1e-2;
    InitialState x0;
    x0.q = Eigen::VectorXd::Constant(1, 1.0);
    x0.v = Eigen::VectorXd::Zero(1);
    testing::Collector c;
    const SimulationSummary sum =
        Simulate(model, x0, model.default_parameters(), o, &c);
    ASSERT_TRUE(sum.ok) << sum.error;
    const Sample& end = c.samples.back();
    EXPECT_GT(end.damping_loss, 0.1);
    EXPECT_GT(std::abs(end.input_work[0]), 1e-3);
    residual[k] = sum.energy_residual_max;
  }
  EXPECT_LT(residual[1], 1e-9);
  EXPECT_LT(residual[1], residual[0] / 30.0);
}

// Prescribed motion th = 0.3 t^2 is the moving constraint
// Phi = th - 0.3 t^2: Phi_t = -0.6 t, J v + Phi_t = w - 0.6 t, b = -0.6.
TEST(Multibody, PrescribedMotionIsAMovingConstraint) {
  ModelBuilder b("driven");
  Multibody s(Dimension::kPlanar);
  const BodyIndex arm =
      s.AddBody("arm", mb::PlanarBody(1.0, PVec(0.5, 0.0), 0.02));
  const mb::JointIndex pin =
      s.AddJoint("pin", Joint::Revolute(), s.world(), s.BodyFrame(arm));
  s.Prescribe("drive", pin, [](const auto& x) { return 0.3 * x.t * x.t; });
  std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  ASSERT_TRUE(model.has_moving_constraints());
  Workspace ws(model);
  const double t = 1.5, th = 0.9, w = 0.2;
  ws.SetState(t, Eigen::VectorXd::Constant(1, th),
              Eigen::VectorXd::Constant(1, w));
  EvaluateAll(&ws);
  EXPECT_NEAR(ws.phi[0], th - 0.3 * t * t, kRoundOff);
  EXPECT_NEAR(ws.phi_t[0], -0.6 * t, kRoundOff);
  EXPECT_NEAR(ws.vel_residual[0], w - 0.6 * t, kRoundOff);
  EXPECT_NEAR(ws.bias[0], -0.6, kRoundOff);
  EXPECT_NEAR(ws.J(0, 0), 1.0, 0.0);
}

// Loop-closure values at a chosen state against their closed forms, and
// the model's J of a coincidence against the kinematics' Jacobians.
TEST(Multibody, LoopClosuresHaveTheirClosedForms) {
  ModelBuilder b("closures");
  Multibody s(Dimension::kPlanar);
  const BodyIndex plate = s.AddBody("plate", mb::PlanarBody(1.0, PVec(), 0.1));
  const BodyIndex arm = s.AddBody("arm", mb::PlanarBody(1.0, PVec(), 0.1));
  s.AddJoint("base", Joint::Planar(), s.world(), s.BodyFrame(plate));
  s.AddJoint("arm", Joint::Revolute(), s.world(), s.BodyFrame(arm));
  const FrameIndex corner = s.AddFrame("corner", plate, PVec(0.2, 0.1));
  const FrameIndex tip = s.AddFrame("tip", arm, PVec(1.0, 0.0));
  const FrameIndex rail =
      s.AddFrame("rail", s.ground(), PVec(1.0, 0.0), mb::RotationZ(M_PI / 4));
  s.AddCoincidence("pin", tip, corner);
  s.AddDistance("rope", s.world(), corner, 2.0);
  s.AddPointOnLine("on_rail", corner, rail, Eigen::Vector3d::UnitX());
  s.AddRelativeAngle("level", s.world(), corner, 0.25);
  const mb::Kinematics kin = std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  ASSERT_EQ(model.nc(), 5);
  const double x = 0.3, y = -0.4, th = 0.6, a = 1.1;
  Eigen::VectorXd q(4);
  q << x, y, th, a;
  Workspace ws(model);
  ws.SetState(0.0, q, Eigen::VectorXd::Zero(4));
  EvaluatePosition(&ws);
  const Eigen::Vector2d pc(x + 0.2 * std::cos(th) - 0.1 * std::sin(th),
                           y + 0.2 * std::sin(th) + 0.1 * std::cos(th));
  const Eigen::Vector2d pt(std::cos(a), std::sin(a));
  EXPECT_NEAR(ws.phi[0], pc[0] - pt[0], kRoundOff);
  EXPECT_NEAR(ws.phi[1], pc[1] - pt[1], kRoundOff);
  EXPECT_NEAR(ws.phi[2], pc.norm() - 2.0, kRoundOff);
  const Eigen::Vector2d n(-std::sin(M_PI / 4), std::cos(M_PI / 4));
  EXPECT_NEAR(ws.phi[3], n.dot(pc - Eigen::Vector2d(1.0, 0.0)), kRoundOff);
  EXPECT_NEAR(ws.phi[4], th - 0.25, kRoundOff);
  const Eigen::VectorXd p = model.default_parameters();
  const Eigen::MatrixXd jpin =
      kin.Jacobian<double>(corner, q, p).middleRows(3, 2) -
      kin.Jacobian<double>(tip, q, p).middleRows(3, 2);
  EXPECT_TRUE(testing::NearRel(ws.J.topRows(2), jpin, kRoundOff));
}

// Spatial closures and loads on two hinges about z at (0, 0, 0) and
// (1, 0, 0): the constant angle between x on A and y on B is
// Phi = (R_z(qa) e_x) . (R_z(qb) e_y) - cos(angle) = sin(qa - qb) -
// cos(angle), J = cos(qa - qb) (1, -1); a world torque t on B loads only
// B's hinge, Q = (0, t_z).
TEST(Multibody, ConstantAngleAndTorqueHaveTheirClosedForms) {
  ModelBuilder b("hinges");
  Multibody s(Dimension::kSpatial);
  const mb::BodySpec spec =
      mb::SpatialBody(1.0, PVec(0.2, 0.1, 0.0), 0.1, 0.2, 0.3);
  const BodyIndex ba = s.AddBody("A", spec), bb = s.AddBody("B", spec);
  s.AddJoint("qa", Joint::Revolute(), s.world(), s.BodyFrame(ba));
  const FrameIndex pivot = s.AddFrame("pivot", s.ground(), PVec(1.0, 0.0, 0.0));
  s.AddJoint("qb", Joint::Revolute(), pivot, s.BodyFrame(bb));
  const double angle = 1.2;
  s.AddConstantAngle("keep", s.BodyFrame(ba), Eigen::Vector3d::UnitX(),
                     s.BodyFrame(bb), Eigen::Vector3d::UnitY(), angle);
  s.AddTorque("twist", s.BodyFrame(bb), PVec(0.2, 0.3, 0.7));
  std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  Workspace ws(model);
  const double qa = 0.4, qb = -0.9;
  ws.SetState(0.0, Eigen::Vector2d(qa, qb), Eigen::Vector2d(0.3, -0.2));
  EvaluateAll(&ws);
  EXPECT_NEAR(ws.phi[0], std::sin(qa - qb) - std::cos(angle), kRoundOff);
  EXPECT_NEAR(ws.J(0, 0), std::cos(qa - qb), kRoundOff);
  EXPECT_NEAR(ws.J(0, 1), -std::cos(qa - qb), kRoundOff);
  EXPECT_EQ(ws.Qr[0], 0.0);
  EXPECT_NEAR(ws.Qr[1], 0.7, kRoundOff);
}

// A free-floating planar pair without gravity: a plate on a planar joint
// and an arm on a sprung, damped revolute joint. Translation and rotation
// invariance (Noether) conserve the linear momentum P and the angular
// momentum L_O although the damper dissipates energy. The generalized
// momenta of the base coordinates are P (x, y) and the angular momentum
// about the base point, L_O - (x, y) x P, at every state.
TEST(Multibody, FreeFloatingPairConservesMomenta) {
  ModelBuilder b("floating_pair");
  Multibody s(Dimension::kPlanar);
  const BodyIndex plate =
      s.AddBody("plate", mb::PlanarBody(2.0, PVec(0.1, 0.05), 0.3));
  const BodyIndex arm =
      s.AddBody("arm", mb::PlanarBody(1.0, PVec(0.4, 0.0), 0.1));
  s.AddJoint("base", Joint::Planar(), s.world(), s.BodyFrame(plate));
  const FrameIndex hinge = s.AddFrame("hinge", plate, PVec(0.5, 0.1));
  const mb::JointIndex elbow =
      s.AddJoint("elbow", Joint::Revolute(), hinge, s.BodyFrame(arm));
  s.AddJointSpring(elbow, 2.0, 0.3);
  s.AddJointDamper(elbow, 0.05);
  const mb::Kinematics kin = std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  const Eigen::VectorXd p = model.default_parameters();

  Workspace ws(model);
  std::mt19937 gen(13);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 4, -1.5, 1.5);
    const Eigen::VectorXd v = testing::RandomVector(gen, 4, -1.5, 1.5);
    ws.SetState(0.0, q, v);
    EvaluateAll(&ws);
    const Eigen::Vector3d lin = kin.LinearMomentum<double>(q, v, p);
    const Eigen::Vector3d ang = kin.AngularMomentum<double>(q, v, p);
    EXPECT_NEAR(ws.momentum[0], lin[0], kRoundOff * lin.norm());
    EXPECT_NEAR(ws.momentum[1], lin[1], kRoundOff * lin.norm());
    const double about_base = ang[2] - (q[0] * lin[1] - q[1] * lin[0]);
    EXPECT_NEAR(ws.momentum[2], about_base, kRoundOff * (1 + ang.norm()));
    EXPECT_NEAR(ws.kinetic, kin.KineticEnergy<double>(q, v, p),
                kRoundOff * ws.kinetic);
  }

  SimulationOptions o;
  o.t_end = 5.0;
  o.output_step = 0.05;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  InitialState x0;
  x0.q = Eigen::Vector4d(0.1, -0.2, 0.3, 1.0);
  x0.v = Eigen::Vector4d(0.5, -0.3, 0.8, -2.0);
  testing::Collector c;
  const SimulationSummary sum = Simulate(model, x0, p, o, &c);
  ASSERT_TRUE(sum.ok) << sum.error;
  const Eigen::Vector3d lin0 = kin.LinearMomentum<double>(x0.q, x0.v, p);
  const Eigen::Vector3d ang0 = kin.AngularMomentum<double>(x0.q, x0.v, p);
  ASSERT_GT(lin0.norm(), 0.1);
  ASSERT_GT(std::abs(ang0[2]), 0.1);
  double dlin = 0.0, dang = 0.0, elbow_swing = 0.0;
  for (const Sample& smp : c.samples) {
    dlin = std::max(
        dlin, (kin.LinearMomentum<double>(smp.q, smp.v, p) - lin0).norm());
    dang = std::max(
        dang, (kin.AngularMomentum<double>(smp.q, smp.v, p) - ang0).norm());
    elbow_swing = std::max(elbow_swing, std::abs(smp.q[3] - x0.q[3]));
  }
  EXPECT_GT(elbow_swing, 0.5);  // the internal motion is real
  EXPECT_GT(c.samples.back().damping_loss, 1e-3);
  // Global error at rtol 1e-11 on momenta of order one.
  EXPECT_LT(dlin, 1e-8);
  EXPECT_LT(dang, 1e-8);
  EXPECT_LT(sum.energy_residual_max, 1e-8);
}

TEST(Multibody, DeclarationErrorsNameTheCulprit) {
  {
    Multibody s(Dimension::kPlanar);
    s.AddBody("loose", mb::PlanarBody(1.0, PVec(), 0.1));
    ModelBuilder b("m");
    EXPECT_THAT([&] { std::move(s).AddTo(&b); },
                ::testing::ThrowsMessage<std::invalid_argument>(
                    HasSubstr("body 'loose' has no joint")));
  }
  {
    Multibody s(Dimension::kPlanar);
    const BodyIndex a = s.AddBody("a", mb::PlanarBody(1.0, PVec(), 0.1));
    s.AddJoint("j1", Joint::Revolute(), s.world(), s.BodyFrame(a));
    EXPECT_THAT(
        [&] { s.AddJoint("j2", Joint::Revolute(), s.world(), s.BodyFrame(a)); },
        ::testing::ThrowsMessage<std::invalid_argument>(
            HasSubstr("already has a joint (joint 'j1')")));
    EXPECT_THAT(
        [&] {
          s.AddJoint("u", Joint::Universal(), s.world(),
                     s.BodyFrame(s.AddBody("b", mb::PlanarBody(1, PVec(), 1))));
        },
        ::testing::ThrowsMessage<std::invalid_argument>(
            HasSubstr("universal joint needs a spatial system")));
  }
  {
    Multibody s(Dimension::kPlanar);
    const BodyIndex a = s.AddBody("a", mb::PlanarBody(1.0, PVec(), 0.1));
    const BodyIndex c = s.AddBody("c", mb::PlanarBody(1.0, PVec(), 0.1));
    EXPECT_THAT(
        [&] {
          s.AddJoint("j", Joint::Revolute(), s.BodyFrame(c), s.BodyFrame(a));
        },
        ::testing::ThrowsMessage<std::invalid_argument>(
            HasSubstr("parent body 'c' has no joint yet")));
    s.AddJoint("j", Joint::Revolute(), s.world(), s.BodyFrame(a));
    ModelBuilder b("m");
    s.AddJoint("k", Joint::Revolute(), s.world(), s.BodyFrame(c));
    const mb::Kinematics kin = std::move(s).AddTo(&b);
    EXPECT_THAT([&] { kin.Frame("nope"); },
                ::testing::ThrowsMessage<std::invalid_argument>(
                    HasSubstr("frames are: ground a c")));
  }
}

}  // namespace multibody_test
}  // namespace
}  // namespace daedalus
