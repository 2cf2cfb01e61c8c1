// The recursive algorithms (include/daedalus/multibody_dynamics.hpp) with
// ball and free joints (quaternions, nq != nv) against the energy form of
// the same description: at random states (quaternions of norm 1 and 1.3)
// of a branched floating tree (a free base on a rotated, offset frame; a
// ball-jointed arm whose child frame is offset and rotated; a second free
// joint inside the tree; universal, revolute, prismatic and weld joints;
// a spring after the quaternions) and of a chain of two balls and a
// revolute joint: CRBA's M and RNEA's h agree with the energy-derived ones,
// ABA with solving M vdot = tau - h, RNEA(ABA(tau)) = tau; ABA's tangent
// with central differences; a DynamicsForm::kRecursive model with the
// energy model (values, tangents and the KKT solve with a loop closure);
// and a free chain on the recursive form conserves its momenta.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/multibody_dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace recursive_floating_test {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;
using mb::BodyIndex;
using mb::BodySpec;
using mb::Dimension;
using mb::DynamicsForm;
using mb::FrameIndex;
using mb::Joint;
using mb::Multibody;
using mb::PExpr;
using mb::PVec;

// The two routes sum the same terms in different orders: entries agree to
// a few hundred ulps of the largest entry (brief: 1e-12 relative).
constexpr double kAgree = 1e-12;
// ABA against a Cholesky solve of M: both backward stable, the difference
// bounded by cond(M) eps; these trees have cond(M) below 1e4.
constexpr double kSolve = 1e-10;

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  EXPECT_GT(scale, 0.0) << "the reference is all zero";
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

Matrix3d Rotation(double a, double b, double c) {
  return (Eigen::AngleAxisd(a, Vector3d::UnitZ()) *
          Eigen::AngleAxisd(b, Vector3d::UnitY()) *
          Eigen::AngleAxisd(c, Vector3d::UnitX()))
      .toRotationMatrix();
}

// A body with a centre of mass off its frame's origin and a full inertia
// tensor R diag(b + c, a + c, a + b) R' (triangle inequalities hold).
BodySpec FullBody(std::mt19937& gen, PExpr mass) {
  std::uniform_real_distribution<double> u(0.05, 0.3), s(-0.2, 0.2),
      ang(-3.0, 3.0);
  const double a = u(gen), b = u(gen), c = u(gen);
  const Matrix3d r = Rotation(ang(gen), ang(gen), ang(gen));
  const Matrix3d in =
      r * Vector3d(b + c, a + c, a + b).asDiagonal() * r.transpose();
  return mb::SpatialBody(mass, PVec(s(gen), s(gen), s(gen)), in(0, 0), in(1, 1),
                         in(2, 2), in(0, 1), in(0, 2), in(1, 2));
}

struct Options {
  bool gravity = true;
  bool closure = false;
};

// The branched floating tree; the torso's mass is the parameter "m_torso".
mb::Kinematics FloatingTree(ModelBuilder* b, DynamicsForm form, Options o) {
  const Param mt = b->Parameter("m_torso", 3.0, ParamRange::Positive());
  std::mt19937 gen(21);
  Multibody s(Dimension::kSpatial);
  if (o.gravity) s.SetGravity(PVec(0.5, -1.0, -9.81));
  const BodyIndex torso = s.AddBody("torso", FullBody(gen, PExpr(mt)));
  const BodyIndex arm = s.AddBody("arm", FullBody(gen, 1.5));
  const BodyIndex forearm = s.AddBody("forearm", FullBody(gen, 0.8));
  const BodyIndex tool = s.AddBody("tool", FullBody(gen, 0.4));
  const BodyIndex thigh = s.AddBody("thigh", FullBody(gen, 2.0));
  const BodyIndex shin = s.AddBody("shin", FullBody(gen, 1.1));
  const BodyIndex shoe = s.AddBody("shoe", FullBody(gen, 0.3));
  const FrameIndex base = s.AddFrame("base", s.ground(), PVec(0.2, -0.1, 0.4),
                                     Rotation(0.3, -0.4, 0.2));
  s.AddJoint("root", Joint::Free(), base, s.BodyFrame(torso));
  const FrameIndex shoulder = s.AddFrame(
      "shoulder", torso, PVec(0.3, 0.2, -0.5), Rotation(-0.2, 0.5, 0.1));
  const FrameIndex socket = s.AddFrame("socket", arm, PVec(-0.05, 0.02, 0.1),
                                       Rotation(0.4, 0.1, -0.3));
  s.AddJoint("shoulder", Joint::Ball(), shoulder, socket);
  const FrameIndex elbow =
      s.AddFrame("elbow", arm, PVec(0.0, 0.35, 0.05), Rotation(0.1, 0.2, 0.3));
  s.AddJoint("elbow", Joint::Revolute(Vector3d(1, 2, 3)), elbow,
             s.BodyFrame(forearm));
  // A free joint inside the tree (a tool floating relative to the hand).
  const FrameIndex hand = s.AddFrame("hand", forearm, PVec(0.1, 0.0, 0.3),
                                     Rotation(-0.6, 0.3, 0.2));
  const mb::JointIndex grip =
      s.AddJoint("grip", Joint::Free(), hand, s.BodyFrame(tool));
  s.AddJointSpring(grip, 5.0, 0.1, 1);  // the grip's y translation
  const FrameIndex hip =
      s.AddFrame("hip", torso, PVec(-0.1, -0.2, -0.6), Rotation(0.0, 0.3, 0.0));
  s.AddJoint("hip", Joint::Universal(), hip, s.BodyFrame(thigh));
  const FrameIndex knee = s.AddFrame("knee", thigh, PVec(0.0, 0.0, -0.4));
  const mb::JointIndex kj = s.AddJoint(
      "knee", Joint::Prismatic(Vector3d(0, 1, 1)), knee, s.BodyFrame(shin));
  s.AddJointSpring(kj, 20.0, -0.05);
  const FrameIndex ankle =
      s.AddFrame("ankle", shin, PVec(0.05, 0.0, -0.3), Rotation(0.2, 0.0, 0.0));
  s.AddJoint("ankle", Joint::Weld(), ankle, s.BodyFrame(shoe));
  if (o.closure) {
    const FrameIndex marker = s.AddFrame("marker", shoe, PVec(0.1, 0.0, 0.0));
    const FrameIndex anchor =
        s.AddFrame("anchor", s.ground(), PVec(0.3, -0.2, -0.4));
    s.AddCoincidence("stand", anchor, marker);
  }
  return std::move(s).AddTo(b, form);
}

// Two balls and a revolute joint hanging from a rotated, offset frame.
mb::Kinematics BallChain(ModelBuilder* b, DynamicsForm form, Options o) {
  b->Parameter("m_torso", 1.0, ParamRange::Positive());  // unused here
  std::mt19937 gen(8);
  Multibody s(Dimension::kSpatial);
  if (o.gravity) s.SetGravity(PVec(0.0, 0.0, -9.81));
  const BodyIndex b1 = s.AddBody("b1", FullBody(gen, 2.0));
  const BodyIndex b2 = s.AddBody("b2", FullBody(gen, 1.3));
  const BodyIndex b3 = s.AddBody("b3", FullBody(gen, 0.6));
  const FrameIndex pivot = s.AddFrame("pivot", s.ground(), PVec(0.1, 0.2, 1.0),
                                      Rotation(0.7, 0.2, -0.5));
  s.AddJoint("top", Joint::Ball(), pivot, s.BodyFrame(b1));
  const FrameIndex h1 =
      s.AddFrame("h1", b1, PVec(0.1, -0.1, -0.4), Rotation(0.2, 0.1, 0.0));
  s.AddJoint("middle", Joint::Ball(), h1, s.BodyFrame(b2));
  const FrameIndex h2 = s.AddFrame("h2", b2, PVec(0.0, 0.05, -0.3));
  s.AddJoint("bottom", Joint::Revolute(Vector3d(0, 1, 0)), h2, s.BodyFrame(b3));
  return std::move(s).AddTo(b, form);
}

using Describe =
    std::function<mb::Kinematics(ModelBuilder*, DynamicsForm, Options)>;
struct Case {
  const char* name;
  Describe describe;
};
const Case kCases[] = {{"floating_tree", FloatingTree},
                       {"ball_chain", BallChain}};

Model BuildModel(const Describe& describe,
                 DynamicsForm form,
                 Options o = {},
                 mb::Kinematics* kin = nullptr) {
  ModelBuilder b("tree");
  const mb::Kinematics k = describe(&b, form, o);
  if (kin) *kin = k;
  return std::move(b).Build();
}

// A random state: coordinates in [-1, 1], each quaternion random of norm
// 1 or (odd trials) 1.3, velocities N(0, 1).
void RandomState(
    const Model& m, std::mt19937* rng, int trial, VectorXd* q, VectorXd* v) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> n(0.0, 1.0);
  *q = VectorXd(m.nq());
  *v = VectorXd(m.nv());
  for (int i = 0; i < m.nq(); ++i) (*q)[i] = u(*rng);
  for (const auto& blk : m.quaternions()) {
    Eigen::Vector4d r(n(*rng), n(*rng), n(*rng), n(*rng));
    q->segment<4>(blk.q) = (trial % 2 ? 1.3 : 1.0) * r / r.norm();
  }
  for (int i = 0; i < m.nv(); ++i) (*v)[i] = n(*rng);
}

TEST(RecursiveFloating, AgreesWithTheEnergyForm) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    mb::Kinematics kin;
    const Model model =
        BuildModel(c.describe, DynamicsForm::kEnergy, Options{}, &kin);
    const mb::TreeDynamics dyn(kin);
    const int nv = model.nv();
    ASSERT_EQ(dyn.nv(), nv);
    ASSERT_EQ(dyn.nq(), model.nq());
    ASSERT_GT(model.nq(), nv);
    Workspace ws(model);
    const VectorXd p = model.default_parameters();
    ws.SetParameters(p);
    mb::TreeData<double> data = dyn.MakeData<double>();
    dyn.SetParameters<double>(p, &data);
    std::mt19937 rng(3);
    std::normal_distribution<double> n(0.0, 1.0);
    double worst_m = 0.0, worst_h = 0.0, worst_aba = 0.0, worst_rt = 0.0;
    for (int trial = 0; trial < 10; ++trial) {
      VectorXd q, v;
      RandomState(model, &rng, trial, &q, &v);
      ws.SetState(0.0, q, v);
      EvaluateAll(&ws);
      ASSERT_GT(ws.h.cwiseAbs().maxCoeff(), 0.1);
      // The energy model's h has the springs' forces, the tree's only the
      // bodies and gravity: subtract k (q - rest) of each spring.
      VectorXd h_bodies = ws.h;
      if (std::string(c.name) == "floating_tree") {
        // Velocity indices of the springs: the grip's y translation and
        // the knee (see FloatingTree); positions after the quaternions.
        const auto& names = model.velocity_names();
        const auto& qnames = model.coordinate_names();
        for (const auto& [name, k, rest] :
             {std::tuple<const char*, double, double>{"grip_y", 5.0, 0.1},
              {"knee_position", 20.0, -0.05}}) {
          const auto iv = std::find(names.begin(), names.end(), name);
          const auto iq = std::find(qnames.begin(), qnames.end(), name);
          ASSERT_NE(iv, names.end()) << name;
          ASSERT_NE(iq, qnames.end()) << name;
          h_bodies[iv - names.begin()] -= k * (q[iq - qnames.begin()] - rest);
        }
      }
      // CRBA and RNEA (raw q: the tree divides each quaternion by its
      // norm, as the workspace does before the energy form sees it).
      const Eigen::MatrixXd m = dyn.MassMatrix<double>(q, &data);
      const VectorXd zero = VectorXd::Zero(nv);
      const VectorXd h = dyn.InverseDynamics<double>(q, v, zero, &data);
      worst_m = std::max(worst_m, RelDiff(m, ws.M));
      worst_h = std::max(worst_h, RelDiff(h, h_bodies));
      VectorXd vdot(nv);
      for (int i = 0; i < nv; ++i) vdot[i] = n(rng);
      const VectorXd tau = dyn.InverseDynamics<double>(q, v, vdot, &data);
      EXPECT_LT(RelDiff(tau, ws.M * vdot + h_bodies), kAgree);
      // ABA against the energy form's solve, and the round trip.
      const VectorXd a = dyn.ForwardDynamics<double>(q, v, tau, &data);
      const VectorXd solved = ws.M.llt().solve(tau - h_bodies);
      worst_aba = std::max(worst_aba, RelDiff(a, solved));
      EXPECT_LT(RelDiff(a, vdot), kSolve);
      const VectorXd back = dyn.InverseDynamics<double>(q, v, a, &data);
      worst_rt = std::max(worst_rt, RelDiff(back, tau));
    }
    std::printf(
        "%s: largest relative difference M %.1e, h %.1e, ABA %.1e, "
        "RNEA(ABA) %.1e\n",
        c.name, worst_m, worst_h, worst_aba, worst_rt);
    EXPECT_LT(worst_m, kAgree);
    EXPECT_LT(worst_h, kAgree);
    EXPECT_LT(worst_aba, kSolve);
    EXPECT_LT(worst_rt, kAgree);
  }
}

// ABA on dual numbers along a direction of (q, v, tau, p) against central
// differences of ABA on doubles (step 1e-6: truncation and round-off both
// near 1e-10 for quantities of order one). The direction moves the
// quaternions off unit norm: the tree divides by the norm, so the
// derivative is that of the normalized map on both sides.
TEST(RecursiveFloating, ForwardDynamicsTangentMatchesDifferences) {
  mb::Kinematics kin;
  const Model model =
      BuildModel(FloatingTree, DynamicsForm::kEnergy, Options{}, &kin);
  const mb::TreeDynamics dyn(kin);
  const int nq = model.nq(), nv = model.nv();
  std::mt19937 gen(4);
  VectorXd q, v;
  RandomState(model, &gen, 0, &q, &v);
  const VectorXd tau = testing::RandomVector(gen, nv, -5, 5);
  const VectorXd p = model.default_parameters();
  const VectorXd dq = testing::RandomVector(gen, nq, -1, 1);
  const VectorXd dv = testing::RandomVector(gen, nv, -1, 1);
  const VectorXd dtau = testing::RandomVector(gen, nv, -1, 1);
  const VectorXd dp = VectorXd::Ones(p.size());
  auto lift = [](const VectorXd& x, const VectorXd& dx) {
    VecX<D1> out(x.size());
    for (Eigen::Index i = 0; i < x.size(); ++i) out[i] = D1(x[i], dx[i]);
    return out;
  };
  const VecX<D1> a = dyn.ForwardDynamics<D1>(lift(q, dq), lift(v, dv),
                                             lift(tau, dtau), lift(p, dp));
  const double h = 1e-6;
  const VectorXd fd =
      (dyn.ForwardDynamics<double>(q + h * dq, v + h * dv, tau + h * dtau,
                                   p + h * dp) -
       dyn.ForwardDynamics<double>(q - h * dq, v - h * dv, tau - h * dtau,
                                   p - h * dp)) /
      (2 * h);
  VectorXd exact(nv);
  for (int i = 0; i < nv; ++i) exact[i] = a[i].d;
  ASSERT_GT(exact.cwiseAbs().maxCoeff(), 0.1);
  EXPECT_LT(RelDiff(exact, fd), 1e-7);
}

// A model built with DynamicsForm::kRecursive (CRBA and RNEA through the
// model's InertialDynamics, springs added) against the energy model:
// M, h, momenta, energy, their tangents along random (dq, dv, dp), and,
// with a loop closure, the accelerations and multipliers of the KKT
// solve.
TEST(RecursiveFloating, RecursiveModelAgreesWithEnergyModel) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Options o{true, std::string(c.name) == "floating_tree"};
    const Model energy = BuildModel(c.describe, DynamicsForm::kEnergy, o);
    const Model rec = BuildModel(c.describe, DynamicsForm::kRecursive, o);
    const int nq = energy.nq(), nv = energy.nv();
    const VectorXd p = energy.default_parameters();
    Workspace a(energy), b(rec);
    TangentWorkspace ta(energy), tb(rec);
    std::mt19937 gen(9);
    for (int trial = 0; trial < 4; ++trial) {
      VectorXd q, v;
      RandomState(energy, &gen, trial, &q, &v);
      KktResult ka, kb;
      for (Workspace* ws : {&a, &b}) {
        ws->SetParameters(p);
        (ws == &a ? ka : kb) = SolveKktAt(ws, 0.0, q, v);
      }
      EXPECT_LT(RelDiff(b.M, a.M), kAgree);
      EXPECT_LT(RelDiff(b.h, a.h), kAgree);
      EXPECT_LT(RelDiff(b.momentum, a.momentum), kAgree);
      EXPECT_NEAR(b.energy, a.energy, kAgree * std::abs(a.energy));
      // The KKT solve: accelerations (and, with the closure,
      // multipliers) of the recursive model against the energy model's.
      EXPECT_LT(RelDiff(kb.vdot, ka.vdot), kSolve);
      if (o.closure) {
        EXPECT_LT(RelDiff(kb.lambda, ka.lambda), kSolve);
      }
      const VectorXd dq = testing::RandomVector(gen, nq, -1, 1);
      const VectorXd dv = testing::RandomVector(gen, nv, -1, 1);
      const VectorXd dp =
          testing::RandomVector(gen, energy.num_parameters(), -1, 1);
      SeedTangent(a, dq, dv, dp, &ta);
      SeedTangent(b, dq, dv, dp, &tb);
      EvaluateAll(&ta);
      EvaluateAll(&tb);
      Eigen::MatrixXd dma(nv, nv), dmb(nv, nv);
      VectorXd dha(nv), dhb(nv);
      for (int i = 0; i < nv; ++i) {
        dha[i] = ta.h[i].d;
        dhb[i] = tb.h[i].d;
        for (int j = 0; j < nv; ++j) {
          dma(i, j) = ta.M(i, j).d;
          dmb(i, j) = tb.M(i, j).d;
        }
      }
      EXPECT_LT(RelDiff(dmb, dma), kAgree);
      EXPECT_LT(RelDiff(dhb, dha), kAgree);
    }
  }
}

// Sums the world momenta of the samples (quaternions normalized first):
// kinematics' sums of m v_C and R I R' w, independent of the equations.
struct MomentumLog : Observer {
  const mb::Kinematics* kin = nullptr;
  const Model* model = nullptr;
  VectorXd p;
  std::vector<double> energy;
  std::vector<Vector3d> lin, ang;
  void OnSample(const Sample& s) override {
    VectorXd q = s.q;
    for (const auto& blk : model->quaternions())
      q.segment<4>(blk.q).normalize();
    energy.push_back(s.energy);
    lin.push_back(kin->LinearMomentum<double>(q, s.v, p));
    ang.push_back(kin->AngularMomentum<double>(q, s.v, p));
  }
};

// The floating tree without gravity is a free chain
// with internal springs: Noether's linear and angular momentum (about W's
// origin) and the energy stay constant over 1 s on the recursive form, as
// the energy-form test (floating_test.cpp) checks. Tolerance: rtol 1e-10
// over 1 s of tumbling, 1e-8 relative (global error ~100 rtol).
TEST(RecursiveFloating, FreeChainConservesMomentaAndEnergy) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "a 1 s run of a 25-velocity tree; AgreesWithTheEnergyForm checks the "
      "same algorithms under the sanitizers");
  mb::Kinematics kin;
  const Model model = BuildModel(FloatingTree, DynamicsForm::kRecursive,
                                 Options{false, false}, &kin);
  MomentumLog log;
  log.kin = &kin;
  log.model = &model;
  log.p = model.default_parameters();
  InitialState x0;
  std::mt19937 rng(17);
  RandomState(model, &rng, 0, &x0.q, &x0.v);
  SimulationOptions so;
  so.formulation = Formulation::kProjection;
  so.integrator = Integrator::kCvodesBdf;
  so.t_end = 1.0;
  so.output_step = 0.05;
  so.rtol = 1e-10;
  so.atol = 1e-12;
  const SimulationSummary s = Simulate(model, x0, log.p, so, &log);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GT(log.lin.size(), 15u);
  // Linear momentum relative to sqrt(2 T m_total), which bounds |P|.
  const double mass = kin.TotalMass<double>(log.p);
  ASSERT_GT(log.energy[0], 0.0);
  const double scale_l = std::sqrt(2.0 * log.energy[0] * mass);
  const double scale_a = log.ang[0].norm();
  ASSERT_GT(scale_a, 0.5);
  double dl = 0.0, da = 0.0, de = 0.0;
  for (size_t i = 0; i < log.lin.size(); ++i) {
    dl = std::max(dl, (log.lin[i] - log.lin[0]).norm() / scale_l);
    da = std::max(da, (log.ang[i] - log.ang[0]).norm() / scale_a);
    de = std::max(
        de, std::abs(log.energy[i] - log.energy[0]) / std::abs(log.energy[0]));
  }
  std::printf(
      "recursive free chain: |dP|/sqrt(2 T m) <= %.1e, |dL|/|L| <= %.1e, "
      "|dE|/|E| <= %.1e over 1 s\n",
      dl, da, de);
  EXPECT_LT(dl, 1e-8);
  EXPECT_LT(da, 1e-8);
  EXPECT_LT(de, 1e-8);
}

// A ball joint whose outboard bodies have no rotational inertia about its
// centre: ABA names the joint.
TEST(RecursiveFloating, MasslessBallIsNamed) {
  ModelBuilder c("massless");
  Multibody t(Dimension::kSpatial);
  const BodyIndex ghost =
      t.AddBody("ghost", mb::SpatialBody(0.0, PVec(), 0, 0, 0));
  t.AddJoint("wrist", Joint::Ball(), t.world(), t.BodyFrame(ghost));
  const mb::TreeDynamics dyn(std::move(t).AddTo(&c));
  VectorXd q = VectorXd::Zero(4), v = VectorXd::Zero(3);
  q[0] = 1.0;
  EXPECT_THAT([&] { dyn.ForwardDynamics<double>(q, v, v, VectorXd()); },
              ::testing::ThrowsMessage<std::runtime_error>(
                  ::testing::HasSubstr("rotations of joint 'wrist'")));
  EXPECT_THAT([&] { dyn.MassMatrix<double>(v, VectorXd()); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::HasSubstr("q has 3 entries, the tree needs 4")));
}

}  // namespace recursive_floating_test
}  // namespace
}  // namespace daedalus
