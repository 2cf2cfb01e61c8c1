// The recursive algorithms (include/daedalus/multibody_dynamics.hpp) against
// the energy form of the same description: at random states of a 7-joint
// arm, a branched spatial tree (revolute, prismatic, universal, planar and
// weld joints) and a planar tree (with an absolute-angle joint), CRBA's M and
// RNEA's h agree with the M and h the library derives from the energies by
// automatic differentiation; ABA agrees with solving M vdot = tau - h and
// RNEA(ABA(tau)) = tau; their tangents (dual numbers through the algorithms)
// agree with the energy form's; and a model built with DynamicsForm::kRecursive
// gives the same equations and the same trajectory as the energy form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_dynamics.hpp"
#include "four_bar_mb.hpp"
#include "problems/catalogue_support.hpp"
#include "slider_crank_mb.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace recursive_test {

using mb::BodyIndex;
using mb::BodySpec;
using mb::Dimension;
using mb::DynamicsForm;
using mb::FrameIndex;
using mb::Joint;
using mb::Multibody;
using mb::PExpr;
using mb::PVec;
using ::testing::HasSubstr;

// The two routes sum the same terms in different orders: entries agree to
// a few hundred ulps of the largest entry (brief: 1e-12 relative).
constexpr double kAgree = 1e-12;
// ABA against a Cholesky solve of M: both backward stable, the difference
// bounded by cond(M) eps; the trees here have cond(M) below 1e4.
constexpr double kSolve = 1e-10;

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  EXPECT_GT(scale, 0.0) << "the reference is all zero";
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

Eigen::Matrix3d Rotation(double a, double b, double c) {
  return (Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()) *
          Eigen::AngleAxisd(b, Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(c, Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

// A body with a centre of mass off its frame's origin and a full inertia
// tensor R diag(b + c, a + c, a + b) R' from positive second moments a, b,
// c (so the triangle inequalities hold).
BodySpec FullBody(std::mt19937& gen, PExpr mass) {
  std::uniform_real_distribution<double> u(0.05, 0.3), s(-0.2, 0.2),
      ang(-3.0, 3.0);
  const double a = u(gen), b = u(gen), c = u(gen);
  const Eigen::Matrix3d r = Rotation(ang(gen), ang(gen), ang(gen));
  const Eigen::Matrix3d in =
      r * Eigen::Vector3d(b + c, a + c, a + b).asDiagonal() * r.transpose();
  return mb::SpatialBody(mass, PVec(s(gen), s(gen), s(gen)), in(0, 0), in(1, 1),
                         in(2, 2), in(0, 1), in(0, 2), in(1, 2));
}

// A description added to a builder with the given form.
using Describe = std::function<mb::Kinematics(ModelBuilder*, DynamicsForm)>;

// A 7-joint arm: revolute joints about z, y, z, y, z, y, z of rotated,
// offset frames; the first link's mass is the parameter "m1".
mb::Kinematics Arm(ModelBuilder* b, DynamicsForm form) {
  const Param m1 = b->Parameter("m1", 3.0, ParamRange::Positive());
  std::mt19937 gen(11);
  Multibody s(Dimension::kSpatial);
  s.SetGravity(PVec(0.0, 0.0, -9.81));
  FrameIndex parent = s.world();
  for (int i = 0; i < 7; ++i) {
    const std::string n = "link" + std::to_string(i + 1);
    const BodyIndex body =
        s.AddBody(n, FullBody(gen, i == 0 ? PExpr(m1) : PExpr(2.0 - 0.2 * i)));
    const Eigen::Vector3d axis =
        i % 2 == 0 ? Eigen::Vector3d::UnitZ() : Eigen::Vector3d::UnitY();
    s.AddJoint("joint" + std::to_string(i + 1), Joint::Revolute(axis), parent,
               s.BodyFrame(body));
    parent = s.AddFrame(n + "_tip", body, PVec(0.02 * i, -0.01, 0.3),
                        Rotation(0.1 * i, 0.2, -0.1));
  }
  return std::move(s).AddTo(b, form);
}

// A branched tree: a prismatic base carrying two branches, one with a
// revolute joint about an oblique axis and a universal joint, the other
// with a planar joint, a welded body and an oblique prismatic joint.
mb::Kinematics Branched(ModelBuilder* b, DynamicsForm form) {
  std::mt19937 gen(5);
  Multibody s(Dimension::kSpatial);
  s.SetGravity(PVec(1.0, -2.0, -9.0));
  const BodyIndex base = s.AddBody("base", FullBody(gen, 4.0));
  const BodyIndex arm = s.AddBody("arm", FullBody(gen, 1.5));
  const BodyIndex hand = s.AddBody("hand", FullBody(gen, 0.7));
  const BodyIndex plate = s.AddBody("plate", FullBody(gen, 1.2));
  const BodyIndex tool = s.AddBody("tool", FullBody(gen, 0.4));
  const BodyIndex slide = s.AddBody("slide", FullBody(gen, 0.9));
  s.AddJoint("rail", Joint::Prismatic(Eigen::Vector3d(1, 0, 0)), s.world(),
             s.BodyFrame(base));
  const FrameIndex shoulder = s.AddFrame("shoulder", base, PVec(0.1, 0.2, 0.3),
                                         Rotation(0.3, -0.2, 0.5));
  s.AddJoint("hinge", Joint::Revolute(Eigen::Vector3d(1, 2, 3)), shoulder,
             s.BodyFrame(arm));
  const FrameIndex wrist =
      s.AddFrame("wrist", arm, PVec(0.0, 0.4, 0.1), Rotation(-0.4, 0.1, 0.2));
  const FrameIndex hand_m = s.AddFrame("hand_m", hand, PVec(0.05, 0.0, -0.1),
                                       Rotation(0.2, 0.3, 0.1));
  s.AddJoint("cardan", Joint::Universal(), wrist, hand_m);
  const FrameIndex side =
      s.AddFrame("side", base, PVec(-0.3, 0.0, 0.1), Rotation(1.0, 0.0, 0.4));
  s.AddJoint("plane", Joint::Planar(), side, s.BodyFrame(plate));
  const FrameIndex mount = s.AddFrame("mount", plate, PVec(0.2, 0.1, 0.0));
  s.AddJoint("weld", Joint::Weld(), mount, s.BodyFrame(tool));
  const FrameIndex tip = s.AddFrame("tool_tip", tool, PVec(0.0, 0.0, 0.25),
                                    Rotation(0.0, 0.7, 0.0));
  s.AddJoint("slide", Joint::Prismatic(Eigen::Vector3d(0, 1, 1)), tip,
             s.BodyFrame(slide));
  return std::move(s).AddTo(b, form);
}

// A planar tree: a crank and a slider on the ground, a rod on the slider
// and a free plate (planar joint) on the crank.
mb::Kinematics PlanarTree(ModelBuilder* b, DynamicsForm form) {
  Multibody s(Dimension::kPlanar);
  s.SetGravity(PVec(0.3, -9.81));
  const BodyIndex crank =
      s.AddBody("crank", mb::PlanarBody(1.0, PVec(0.2, 0.05), 0.1));
  const BodyIndex slider =
      s.AddBody("slider", mb::PlanarBody(2.0, PVec(0.0, 0.1), 0.05));
  const BodyIndex rod =
      s.AddBody("rod", mb::PlanarBody(0.5, PVec(-0.3, 0.02), 0.2));
  const BodyIndex plate =
      s.AddBody("plate", mb::PlanarBody(0.8, PVec(0.1, -0.1), 0.07));
  s.AddJoint("crank", Joint::Revolute(), s.world(), s.BodyFrame(crank));
  s.AddJoint("slider", Joint::Prismatic(Eigen::Vector3d(1, 0.5, 0)),
             s.AddFrame("rail", s.ground(), PVec(1.0, 0.0), mb::RotationZ(0.2)),
             s.BodyFrame(slider));
  s.AddJoint("rod", Joint::Revolute(),
             s.AddFrame("pin", slider, PVec(0.0, 0.1), mb::RotationZ(-0.5)),
             s.BodyFrame(rod));
  s.AddJoint("plate", Joint::Planar(),
             s.AddFrame("crank_tip", crank, PVec(0.4, 0.0)),
             s.BodyFrame(plate));
  // An absolute-angle joint below a rotated frame of the plate, and a
  // relative one below it: their relative angles depend on the crank's,
  // the plate's and the wrist's coordinates.
  const BodyIndex wrist =
      s.AddBody("wrist", mb::PlanarBody(0.6, PVec(0.15, 0.05), 0.04));
  const BodyIndex finger =
      s.AddBody("finger", mb::PlanarBody(0.3, PVec(0.1, -0.02), 0.01));
  s.AddJoint(
      "wrist", Joint::AbsoluteRevolute(),
      s.AddFrame("plate_edge", plate, PVec(0.2, 0.1), mb::RotationZ(0.7)),
      s.AddFrame("wrist_pin", wrist, PVec(-0.05, 0.0), mb::RotationZ(-0.3)));
  s.AddJoint("finger", Joint::Revolute(),
             s.AddFrame("wrist_tip", wrist, PVec(0.3, 0.0), mb::RotationZ(0.2)),
             s.BodyFrame(finger));
  return std::move(s).AddTo(b, form);
}

struct Case {
  const char* name;
  Describe describe;
};
const Case kCases[] = {
    {"arm", Arm}, {"branched", Branched}, {"planar", PlanarTree}};

Model BuildModel(const Describe& describe,
                 DynamicsForm form,
                 mb::Kinematics* kin = nullptr) {
  ModelBuilder b("tree");
  const mb::Kinematics k = describe(&b, form);
  if (kin) *kin = k;
  return std::move(b).Build();
}

TEST(RecursiveDynamics, AgreesWithTheEnergyForm) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    mb::Kinematics kin;
    const Model model = BuildModel(c.describe, DynamicsForm::kEnergy, &kin);
    const mb::TreeDynamics dyn(kin);
    const int n = model.nv();
    ASSERT_EQ(dyn.nv(), n);
    Workspace ws(model);
    ws.use_compiled = false;
    const Eigen::VectorXd p = model.default_parameters();
    ws.SetParameters(p);
    mb::TreeData<double> data = dyn.MakeData<double>();
    dyn.SetParameters<double>(p, &data);
    double worst_m = 0.0, worst_h = 0.0, worst_aba = 0.0;
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const testing::RandomState s(n, n, seed, 0.0);
      ws.SetState(s.t, 2.0 * s.q, 2.0 * s.v);
      EvaluateAll(&ws);
      ASSERT_GT(ws.M.cwiseAbs().maxCoeff(), 0.01);
      ASSERT_GT(ws.h.cwiseAbs().maxCoeff(), 0.1);
      // CRBA and RNEA against the derivatives of the energies.
      const Eigen::MatrixXd m = dyn.MassMatrix<double>(ws.q, &data);
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
      const Eigen::VectorXd h =
          dyn.InverseDynamics<double>(ws.q, ws.v, zero, &data);
      worst_m = std::max(worst_m, RelDiff(m, ws.M));
      worst_h = std::max(worst_h, RelDiff(h, ws.h));
      const Eigen::VectorXd tau =
          dyn.InverseDynamics<double>(ws.q, ws.v, s.vdot, &data);
      EXPECT_LT(RelDiff(tau, ws.M * s.vdot + ws.h), kAgree);
      // ABA against solving M vdot = tau - h, and RNEA(ABA(tau)) = tau.
      const Eigen::VectorXd vdot =
          dyn.ForwardDynamics<double>(ws.q, ws.v, tau, &data);
      const Eigen::VectorXd solved = ws.M.llt().solve(tau - ws.h);
      worst_aba = std::max(worst_aba, RelDiff(vdot, solved));
      EXPECT_LT(RelDiff(vdot, s.vdot), kSolve);
      const Eigen::VectorXd back =
          dyn.InverseDynamics<double>(ws.q, ws.v, vdot, &data);
      EXPECT_LT(RelDiff(back, tau), kAgree);
    }
    std::printf("%s: largest relative difference M %.1e, h %.1e, ABA %.1e\n",
                c.name, worst_m, worst_h, worst_aba);
    EXPECT_LT(worst_m, kAgree);
    EXPECT_LT(worst_h, kAgree);
    EXPECT_LT(worst_aba, kSolve);
  }
}

// A planar two-link arm (angles from the x axis, gravity -g e_y, links of
// length l1, centres of mass at c1, c2 along them) against its textbook
// equations (e.g. Spong, Hutchinson, Vidyasagar, Robot Modeling and
// Control, 2006, section 7.4): with C = cos q2, s = sin q2,
//   M11 = I1 + I2 + m1 c1^2 + m2 (l1^2 + c2^2 + 2 l1 c2 C),
//   M12 = I2 + m2 (c2^2 + l1 c2 C),  M22 = I2 + m2 c2^2,
//   h1 = -m2 l1 c2 s (2 q1' q2' + q2'^2)
//        + (m1 c1 + m2 l1) g cos q1 + m2 c2 g cos(q1 + q2),
//   h2 = m2 l1 c2 s q1'^2 + m2 c2 g cos(q1 + q2).
TEST(RecursiveDynamics, TwoLinkArmClosedForm) {
  const double m1 = 1.3, m2 = 0.7, l1 = 0.9, c1 = 0.4, c2 = 0.35, i1 = 0.08,
               i2 = 0.03, g = 9.81;
  ModelBuilder b("two_link");
  Multibody s(Dimension::kPlanar);
  s.SetGravity(PVec(0.0, -g));
  const BodyIndex a = s.AddBody("a", mb::PlanarBody(m1, PVec(c1, 0.0), i1));
  const BodyIndex f = s.AddBody("f", mb::PlanarBody(m2, PVec(c2, 0.0), i2));
  s.AddJoint("shoulder", Joint::Revolute(), s.world(), s.BodyFrame(a));
  s.AddJoint("elbow", Joint::Revolute(), s.AddFrame("tip", a, PVec(l1, 0.0)),
             s.BodyFrame(f));
  const mb::TreeDynamics dyn(std::move(s).AddTo(&b));
  const Eigen::Vector2d q(0.4, -1.1), v(0.7, -1.3), vdot(0.3, 2.0);
  const double cq = std::cos(q[1]), sq = std::sin(q[1]);
  Eigen::Matrix2d m;
  m(0, 0) =
      i1 + i2 + m1 * c1 * c1 + m2 * (l1 * l1 + c2 * c2 + 2 * l1 * c2 * cq);
  m(0, 1) = m(1, 0) = i2 + m2 * (c2 * c2 + l1 * c2 * cq);
  m(1, 1) = i2 + m2 * c2 * c2;
  const double g12 = m2 * c2 * g * std::cos(q[0] + q[1]);
  const Eigen::Vector2d h(-m2 * l1 * c2 * sq * (2 * v[0] * v[1] + v[1] * v[1]) +
                              (m1 * c1 + m2 * l1) * g * std::cos(q[0]) + g12,
                          m2 * l1 * c2 * sq * v[0] * v[0] + g12);
  const Eigen::VectorXd none;
  const Eigen::VectorXd qx = q, vx = v, ax = vdot;
  EXPECT_TRUE(testing::NearRel(dyn.MassMatrix<double>(qx, none), m,
                               testing::kRoundOff));
  EXPECT_TRUE(testing::NearRel(dyn.InverseDynamics<double>(qx, vx, ax, none),
                               m * vdot + h, testing::kRoundOff));
  const Eigen::VectorXd tau = m * vdot + h;
  EXPECT_TRUE(testing::NearRel(dyn.ForwardDynamics<double>(qx, vx, tau, none),
                               ax, testing::kRoundOff));
}

// ABA on dual numbers: its exact tangent along a direction of (q, v, tau,
// p) against central differences of ABA on doubles (step 1e-6: truncation
// and round-off both near 1e-10 for quantities of order one).
TEST(RecursiveDynamics, ForwardDynamicsTangentMatchesDifferences) {
  mb::Kinematics kin;
  const Model model = BuildModel(Arm, DynamicsForm::kEnergy, &kin);
  const mb::TreeDynamics dyn(kin);
  const int n = model.nv();
  std::mt19937 gen(4);
  const Eigen::VectorXd q = testing::RandomVector(gen, n, -1, 1);
  const Eigen::VectorXd v = testing::RandomVector(gen, n, -1, 1);
  const Eigen::VectorXd tau = testing::RandomVector(gen, n, -5, 5);
  const Eigen::VectorXd p = model.default_parameters();
  const Eigen::VectorXd dq = testing::RandomVector(gen, n, -1, 1);
  const Eigen::VectorXd dv = testing::RandomVector(gen, n, -1, 1);
  const Eigen::VectorXd dtau = testing::RandomVector(gen, n, -1, 1);
  const Eigen::VectorXd dp = Eigen::VectorXd::Ones(p.size());
  auto lift = [](const Eigen::VectorXd& x, const Eigen::VectorXd& dx) {
    VecX<D1> out(x.size());
    for (Eigen::Index i = 0; i < x.size(); ++i) out[i] = D1(x[i], dx[i]);
    return out;
  };
  const VecX<D1> a = dyn.ForwardDynamics<D1>(lift(q, dq), lift(v, dv),
                                             lift(tau, dtau), lift(p, dp));
  const double h = 1e-6;
  const Eigen::VectorXd fd =
      (dyn.ForwardDynamics<double>(q + h * dq, v + h * dv, tau + h * dtau,
                                   p + h * dp) -
       dyn.ForwardDynamics<double>(q - h * dq, v - h * dv, tau - h * dtau,
                                   p - h * dp)) /
      (2 * h);
  Eigen::VectorXd exact(n);
  for (int i = 0; i < n; ++i) exact[i] = a[i].d;
  ASSERT_GT(exact.cwiseAbs().maxCoeff(), 0.1);
  EXPECT_LT(RelDiff(exact, fd), 1e-7);
}

// A model built with DynamicsForm::kRecursive evaluates M and h by the
// algorithms, values and tangents (dual numbers through CRBA and RNEA,
// including the parameter m1), and they agree with the energy form.
TEST(RecursiveDynamics, RecursiveModelAgreesWithEnergyModel) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Model energy = BuildModel(c.describe, DynamicsForm::kEnergy);
    const Model rec = BuildModel(c.describe, DynamicsForm::kRecursive);
    std::string why;
    EXPECT_FALSE(IsCompiled(rec, &why));
    EXPECT_THAT(why, HasSubstr("recursive"));
    const int n = energy.nv();
    const Eigen::VectorXd p = energy.default_parameters();
    Workspace a(energy), b(rec);
    a.use_compiled = false;
    TangentWorkspace ta(energy), tb(rec);
    std::mt19937 gen(9);
    for (unsigned seed = 1; seed <= 3; ++seed) {
      const testing::RandomState s(n, n, seed, 0.0);
      for (Workspace* ws : {&a, &b}) {
        ws->SetParameters(p);
        ws->SetState(s.t, s.q, s.v);
        EvaluateAll(ws);
      }
      EXPECT_LT(RelDiff(b.M, a.M), kAgree);
      EXPECT_LT(RelDiff(b.h, a.h), kAgree);
      EXPECT_LT(RelDiff(b.momentum, a.momentum), kAgree);
      EXPECT_NEAR(b.energy, a.energy, kAgree * std::abs(a.energy));
      // Tangents along a random direction of (q, v, p).
      const Eigen::VectorXd dq = testing::RandomVector(gen, n, -1, 1);
      const Eigen::VectorXd dv = testing::RandomVector(gen, n, -1, 1);
      const Eigen::VectorXd dp =
          testing::RandomVector(gen, energy.num_parameters(), -1, 1);
      SeedTangent(a, dq, dv, dp, &ta);
      SeedTangent(b, dq, dv, dp, &tb);
      EvaluateAll(&ta);
      EvaluateAll(&tb);
      Eigen::MatrixXd dma(n, n), dmb(n, n);
      Eigen::VectorXd dha(n), dhb(n);
      for (int i = 0; i < n; ++i) {
        dha[i] = ta.h[i].d;
        dhb[i] = tb.h[i].d;
        for (int j = 0; j < n; ++j) {
          dma(i, j) = ta.M(i, j).d;
          dmb(i, j) = tb.M(i, j).d;
        }
      }
      EXPECT_LT(RelDiff(dmb, dma), kAgree);
      EXPECT_LT(RelDiff(dhb, dha), kAgree);
    }
  }
}

// The four-bar of the catalogue (the coupler's angle absolute, the loop
// closed by a point coincidence) runs the same trajectory with either form,
// to the integration error: the crank turns twice in 5 s and the adaptive
// steps react to ulp-level differences in the equations, so the two ends
// differ by about what tightening the tolerances tenfold changes (measured
// 7.5e-9 against 1.6e-8; held below three times that change).
TEST(RecursiveDynamics, FourBarTrajectoryAgrees) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "three runs at rtol 1e-11 and 1e-12; SliderCrankTrajectoryAgrees runs "
      "the recursive form in a simulation there");
  const Problem energy = problems::FourBarMbProblemForm(DynamicsForm::kEnergy);
  const Problem rec = problems::FourBarMbProblemForm(DynamicsForm::kRecursive);
  SimulationOptions o = energy.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  o.compiled = false;
  SimulationOptions tight = o;
  tight.rtol = 1e-12;
  tight.atol = 1e-14;
  const testing::Run a = testing::RunProblem(energy, o);
  const testing::Run b = testing::RunProblem(rec, o);
  const testing::Run c = testing::RunProblem(energy, tight);
  ASSERT_TRUE(a.summary.ok) << a.summary.error;
  ASSERT_TRUE(b.summary.ok) << b.summary.error;
  ASSERT_TRUE(c.summary.ok) << c.summary.error;
  ASSERT_EQ(a.samples.size(), b.samples.size());
  const Sample &ea = a.samples.back(), &eb = b.samples.back(),
               &ec = c.samples.back();
  EXPECT_GT(ea.q[0], 4 * M_PI);  // the crank really turned
  const double forms = (eb.q - ea.q).cwiseAbs().maxCoeff();
  const double tighter = (ec.q - ea.q).cwiseAbs().maxCoeff();
  std::printf(
      "four_bar_mb: final q, recursive vs energy %.1e; energy at rtol "
      "1e-11 vs 1e-12 %.1e\n",
      forms, tighter);
  EXPECT_GT(tighter, 0.0);
  EXPECT_LT(forms, 3.0 * tighter);
  EXPECT_LT(forms, 1e-7);
  EXPECT_NEAR(b.summary.energy_final, a.summary.energy_final, 1e-8);
}

// The slider-crank of the catalogue (a planar tree closed by a point
// coincidence, with a spring-damper and a force) runs the same trajectory
// with either form of the dynamics, to the integrator's sensitivity to
// ulp-level differences in the equations (catalogue_mb_test.cpp measured
// 1e-9 for the same run of one model on two evaluators).
TEST(RecursiveDynamics, SliderCrankTrajectoryAgrees) {
  const Problem energy =
      problems::SliderCrankMbProblemForm(DynamicsForm::kEnergy);
  const Problem rec =
      problems::SliderCrankMbProblemForm(DynamicsForm::kRecursive);
  SimulationOptions o = energy.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-12;
  o.compiled = false;
  const testing::Run a = testing::RunProblem(energy, o);
  const testing::Run b = testing::RunProblem(rec, o);
  ASSERT_TRUE(a.summary.ok) << a.summary.error;
  ASSERT_TRUE(b.summary.ok) << b.summary.error;
  ASSERT_EQ(a.samples.size(), b.samples.size());
  const Sample &ea = a.samples.back(), &eb = b.samples.back();
  EXPECT_GT((ea.q - a.samples.front().q).cwiseAbs().maxCoeff(), 0.1);
  std::printf("slider_crank_mb: recursive vs energy, final q %.1e, v %.1e\n",
              (eb.q - ea.q).cwiseAbs().maxCoeff(),
              (eb.v - ea.v).cwiseAbs().maxCoeff());
  EXPECT_LT((eb.q - ea.q).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((eb.v - ea.v).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_NEAR(b.summary.energy_final, a.summary.energy_final, 1e-9);
}

TEST(RecursiveDynamics, RefusesWhatItDoesNotDescribe) {
  // A massless end of the tree: ABA names the coordinate.
  ModelBuilder c("massless");
  Multibody t(Dimension::kSpatial);
  const BodyIndex heavy = t.AddBody(
      "heavy", mb::SpatialBody(2.0, PVec(0.1, 0.0, 0.0), 0.1, 0.2, 0.3));
  const BodyIndex ghost =
      t.AddBody("ghost", mb::SpatialBody(0.0, PVec(), 0, 0, 0));
  t.AddJoint("a", Joint::Revolute(), t.world(), t.BodyFrame(heavy));
  t.AddJoint("b", Joint::Prismatic(), t.BodyFrame(heavy), t.BodyFrame(ghost));
  const mb::TreeDynamics dyn(std::move(t).AddTo(&c));
  const Eigen::VectorXd z = Eigen::VectorXd::Zero(2);
  EXPECT_THAT([&] { dyn.ForwardDynamics<double>(z, z, z, Eigen::VectorXd()); },
              ::testing::ThrowsMessage<std::runtime_error>(
                  HasSubstr("coordinate 'b_position'")));

  // Energy terms declared after the recursive form.
  ModelBuilder d("extra");
  Arm(&d, DynamicsForm::kRecursive);
  d.PotentialEnergyTerm(Touches{{0}},
                        [](const auto& x) { return 0.5 * x.q[0] * x.q[0]; });
  EXPECT_THAT([&] { std::move(d).Build(); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("energy terms declared besides")));
}

}  // namespace recursive_test
}  // namespace
}  // namespace daedalus
