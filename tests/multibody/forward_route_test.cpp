// The O(n) forward route of recursive multibody models (EvaluateForward,
// dynamics.hpp; InertialFn::forward, model.hpp; the planar ABA of
// src/multibody/planar_aba.cpp) against the KKT route (M by CRBA, h by
// RNEA, a Cholesky solve), and chain_reduced's recursive form against its
// hand-written energy form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "chain_reduced.hpp"
#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "multibody/planar_aba.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace forward_route_test {

using mb::BodyIndex;
using mb::Dimension;
using mb::DynamicsForm;
using mb::FrameIndex;
using mb::Joint;
using mb::Multibody;
using mb::PVec;
using ::testing::HasSubstr;

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  EXPECT_GT(scale, 0.0) << "the reference is all zero";
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

// A branched spatial tree with every force the forward route must carry:
// revolute joints about three axes, a prismatic joint, a ball joint, a
// joint spring (part of the inertial forces, moved to the right-hand
// side), a joint damper (D v), an actuator (B u) and a force at a frame
// (Q_r).
Model SpatialTree() {
  ModelBuilder b("spatial_tree");
  Multibody s(Dimension::kSpatial);
  s.SetGravity(PVec(0.3, -0.2, -9.81));
  auto body = [&](const char* name, double m) {
    return s.AddBody(name, mb::SpatialBody(m, PVec(0.02, 0.01, 0.1), 0.02,
                                           0.025, 0.01, 1e-3, -2e-3, 3e-3));
  };
  const BodyIndex a = body("a", 1.0), c = body("c", 0.7), d = body("d", 0.5),
                  e = body("e", 0.8), f = body("f", 0.6);
  const mb::JointIndex ja =
      s.AddJoint("ja", Joint::Revolute(Eigen::Vector3d::UnitZ()), s.world(),
                 s.BodyFrame(a));
  const FrameIndex a_tip = s.AddFrame("a_tip", a, PVec(0.0, 0.05, 0.2));
  const mb::JointIndex jc = s.AddJoint(
      "jc", Joint::Revolute(Eigen::Vector3d::UnitY()), a_tip, s.BodyFrame(c));
  const FrameIndex a_side = s.AddFrame("a_side", a, PVec(0.1, 0.0, 0.1));
  s.AddJoint("jd", Joint::Prismatic(Eigen::Vector3d(1.0, 0.0, 0.0)), a_side,
             s.BodyFrame(d));
  const FrameIndex c_tip = s.AddFrame("c_tip", c, PVec(0.0, 0.0, 0.2));
  s.AddJoint("je", Joint::Ball(), c_tip, s.BodyFrame(e));
  const FrameIndex d_tip = s.AddFrame("d_tip", d, PVec(0.0, 0.1, 0.05));
  s.AddJoint("jf", Joint::Revolute(Eigen::Vector3d::UnitX()), d_tip,
             s.BodyFrame(f));
  s.AddJointSpring(jc, 3.0, 0.2);
  s.AddJointDamper(ja, 0.4);
  s.AddActuator("motor", ja, [](const auto& x) { return 0.5 * cos(x.t); });
  s.AddForce("push", s.AddFrame("f_tip", f, PVec(0.0, 0.0, 0.1)),
             PVec(1.0, -0.5, 0.3));
  std::move(s).AddTo(&b, DynamicsForm::kRecursive);
  return std::move(b).Build();
}

// A planar tree of revolute joints about z and one prismatic joint in the
// plane, as a spatial description; z_offset moves every joint frame off the
// plane, which leaves the in-plane dynamics as they are but makes the tree
// non-planar for TreeDynamics (the 6D ABA). Without the prismatic joint
// (revolute = true: that link revolute too, and the joint frames turned
// about z) the planar tree takes the revolute-only planar ABA
// (src/multibody/planar_aba_revolute.cpp). Without the branch (branch =
// false) it is an unbranched chain, which that ABA runs on its own path.
Model PlanarTree(double z_offset, bool revolute = false, bool branch = true) {
  ModelBuilder b("planar_tree");
  Multibody s(Dimension::kSpatial);
  s.SetGravity(PVec(0.0, -9.81, 0.0));
  FrameIndex parent = s.world();
  BodyIndex mid{};
  for (int i = 0; i < 6; ++i) {
    // (GCC 12 warns falsely, -Wstringop-overflow, on "literal" + string.)
    std::string name = "l";
    name += std::to_string(i);
    const BodyIndex l = s.AddBody(
        name, mb::SpatialBody(0.2 + 0.1 * i, PVec(0.01, -0.1, 0.03), 0.01,
                              0.012, 0.004 + 0.001 * i, 1e-4, -2e-4, 3e-4));
    if (i == 3 && !revolute) {
      s.AddJoint(name, Joint::Prismatic(Eigen::Vector3d(0.6, 0.8, 0.0)), parent,
                 s.BodyFrame(l));
    } else {
      s.AddJoint(name,
                 Joint::Revolute(i == 2 ? Eigen::Vector3d(0.0, 0.0, -1.0)
                                        : Eigen::Vector3d::UnitZ()),
                 parent, s.BodyFrame(l));
    }
    parent = s.AddFrame(name + "_tip", l, PVec(0.02, -0.2, z_offset),
                        mb::RotationZ(revolute ? 0.4 - 0.3 * i : 0.0));
    if (i == 1) mid = l;
  }
  if (!branch) {
    std::move(s).AddTo(&b, DynamicsForm::kRecursive);
    return std::move(b).Build();
  }
  // A branch off link 1.
  const BodyIndex br =
      s.AddBody("branch", mb::SpatialBody(0.4, PVec(0.1, 0.0, 0.0), 0.002,
                                          0.003, 0.004, 0.0, 0.0, 0.0));
  s.AddJoint("branch", Joint::Revolute(Eigen::Vector3d::UnitZ()),
             s.AddFrame("mid_side", mid, PVec(0.1, -0.05, z_offset)),
             s.BodyFrame(br));
  std::move(s).AddTo(&b, DynamicsForm::kRecursive);
  return std::move(b).Build();
}

struct RandomStates {
  std::mt19937 gen{11};
  std::uniform_real_distribution<double> u{-1.0, 1.0};
  void Fill(const Model& m, Eigen::VectorXd* q, Eigen::VectorXd* v) {
    *q = Eigen::VectorXd(m.nq());
    *v = Eigen::VectorXd(m.nv());
    for (Eigen::Index i = 0; i < q->size(); ++i) (*q)[i] = u(gen);
    for (Eigen::Index i = 0; i < v->size(); ++i) (*v)[i] = 2.0 * u(gen);
  }
};

// EvaluateForward against M \ (B u - h) from EvaluateAll at random states,
// and its energies against v'Mv/2 and the potential of the full route.
void ExpectForwardMatchesKkt(const Model& m, int states) {
  ASSERT_TRUE(HasForwardDynamics(m));
  Workspace ws(m);
  ws.use_compiled = false;
  ws.SetParameters(m.default_parameters());
  RandomStates rs;
  for (int k = 0; k < states; ++k) {
    Eigen::VectorXd q, v;
    rs.Fill(m, &q, &v);
    ws.SetState(0.3 * k, q, v);
    EvaluateAll(&ws);
    const Eigen::LLT<Eigen::MatrixXd> llt(ws.M);
    ASSERT_EQ(llt.info(), Eigen::Success);
    const Eigen::VectorXd rhs = ws.Bu - ws.h;
    const Eigen::VectorXd ref = llt.solve(rhs);
    const double kinetic = 0.5 * v.dot(ws.M * v), potential = ws.potential;
    const Eigen::MatrixXd mass = ws.M;
    Eigen::VectorXd vdot;
    ws.SetState(0.3 * k, q, v);
    EvaluateForward(&ws, true, &vdot);
    // Both solves are backward stable: the forward difference is bounded
    // by about cond(M) eps relative. That is the brief's 1e-12 while
    // cond(M) < 4e3 (most states here); the planar tree, whose prismatic
    // link and light branch make M poorly scaled, reaches cond(M) ~ 1e4 at
    // a few states, where the bound is 4 cond(M) eps. The backward error
    // below is checked at round-off whatever cond(M).
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(mass);
    const double cond = svd.singularValues()[0] /
                        svd.singularValues()[svd.singularValues().size() - 1];
    const double bound = std::max(1e-12, 4.0 * cond * 2.22e-16);
    EXPECT_LT(RelDiff(vdot, ref), bound) << "state " << k << ", cond " << cond;
    // Backward error of the ABA's vdot in the KKT route's M: round-off.
    EXPECT_LT((mass * vdot - rhs).norm(),
              1e-13 * (mass.norm() * vdot.norm() + rhs.norm()))
        << "state " << k;
    // Kinetic energy from the body velocities (O(n)) against v'Mv/2; sums
    // of a few dozen terms of one sign.
    EXPECT_NEAR(ws.kinetic, kinetic, 1e-13 * (1.0 + kinetic));
    EXPECT_EQ(ws.potential, potential);
    EXPECT_NEAR(ws.energy, kinetic + potential, 1e-13 * (1.0 + kinetic));
    EXPECT_EQ(ws.stage(), Stage::kVelocity);  // M not formed: no KKT solve
  }
}

TEST(ForwardRoute, MatchesTheKktRouteOnASpatialTree) {
  ExpectForwardMatchesKkt(SpatialTree(), 20);
}

TEST(ForwardRoute, MatchesTheKktRouteOnAPlanarTree) {
  ExpectForwardMatchesKkt(PlanarTree(0.0), 20);
}

TEST(ForwardRoute, OnlyWithoutConstraintsAndWithRecursiveDynamics) {
  ModelBuilder b("closed");
  Multibody s(Dimension::kPlanar);
  s.SetGravity(PVec(0.0, -9.81));
  const BodyIndex a = s.AddBody("a", mb::PlanarBody(1.0, PVec(0.5, 0.0), 0.1));
  s.AddJoint("a", Joint::Revolute(), s.world(), s.BodyFrame(a));
  s.AddCoincidence("pin", s.AddFrame("tip", a, PVec(1.0, 0.0)),
                   s.AddFrame("fix", s.ground(), PVec(1.0, 0.0)));
  std::move(s).AddTo(&b, DynamicsForm::kRecursive);
  const Model closed = std::move(b).Build();
  EXPECT_FALSE(HasForwardDynamics(closed));
  EXPECT_FALSE(HasForwardDynamics(
      problems::ChainReducedProblem(4, DynamicsForm::kEnergy).model));
  Workspace ws(closed);
  Eigen::VectorXd vdot;
  ws.SetState(0.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1));
  EXPECT_THROW(EvaluateForward(&ws, false, &vdot), std::logic_error);
}

TEST(PlanarAba, EqualsTheSpatialAba) {
  // The same tree in the plane (planar ABA) and with its joint frames moved
  // off the plane along z (6D ABA): the in-plane equations do not depend
  // on z offsets, so the accelerations agree to round-off (brief: 1e-13).
  const Model planar = PlanarTree(0.0), lifted = PlanarTree(0.07);
  Workspace wp(planar), wl(lifted);
  wp.use_compiled = wl.use_compiled = false;
  wp.SetParameters(planar.default_parameters());
  wl.SetParameters(lifted.default_parameters());
  RandomStates rs;
  for (int k = 0; k < 20; ++k) {
    Eigen::VectorXd q, v, ap, al;
    rs.Fill(planar, &q, &v);
    wp.SetState(0.0, q, v);
    wl.SetState(0.0, q, v);
    EvaluateForward(&wp, true, &ap);
    EvaluateForward(&wl, true, &al);
    EXPECT_LT(RelDiff(ap, al), 1e-13) << "state " << k;
    EXPECT_NEAR(wp.kinetic, wl.kinetic, 1e-14 * (1.0 + wl.kinetic));
  }
}

// The revolute-only planar ABA against the 6D ABA (the same tree lifted off
// the plane) and against the generic planar ABA (switched off), at random
// states: round-off apart (brief: 1e-13 relative). The accelerations of
// these trees come from solves whose condition is a few hundred at most,
// so 1e-13 leaves a factor of ten or more over the round-off seen.
void ExpectRevoluteAbaMatches(const Model& planar, const Model* lifted) {
  Workspace wp(planar);
  wp.use_compiled = false;
  wp.SetParameters(planar.default_parameters());
  std::unique_ptr<Workspace> wl;
  if (lifted) {
    wl = std::make_unique<Workspace>(*lifted);
    wl->use_compiled = false;
    wl->SetParameters(lifted->default_parameters());
  }
  RandomStates rs;
  for (int k = 0; k < 22; ++k) {
    Eigen::VectorXd q, v, ar, ag, al;
    rs.Fill(planar, &q, &v);
    // Angles of many turns (the revolute ABA's own sin and cos reduce them
    // by multiples of pi/2), and one beyond its range (libm's then).
    if (k >= 10) q *= 40.0;
    if (k == 21) q[0] = 2e5;
    wp.SetState(0.0, q, v);
    ASSERT_TRUE(mb::internal::RevolutePlanarAbaInUse());
    EvaluateForward(&wp, true, &ar);
    const double kr = wp.kinetic;
    // Without the energies (the ODE forms' right-hand side): the same
    // accelerations up to round-off (the compiler fuses multiply-adds
    // differently in the version without the kinetic energy; 1.4e-14 seen)
    // and the energies NaN.
    Eigen::VectorXd an;
    EvaluateForward(&wp, false, &an);
    EXPECT_LT(RelDiff(an, ar), 1e-13) << "state " << k;
    EXPECT_TRUE(std::isnan(wp.kinetic));
    mb::internal::UseRevolutePlanarAba(false);
    EvaluateForward(&wp, true, &ag);
    mb::internal::UseRevolutePlanarAba(true);
    EXPECT_LT(RelDiff(ar, ag), 1e-13) << "state " << k;
    EXPECT_NEAR(kr, wp.kinetic, 1e-14 * (1.0 + wp.kinetic));
    // Every instruction-set version this CPU runs (baseline, AVX2 + FMA,
    // AVX-512): round-off apart, the same.
    for (int level = 0; level < mb::internal::RevoluteIsaLevels(); ++level) {
      Eigen::VectorXd ai;
      mb::internal::CapRevoluteIsa(level);
      EvaluateForward(&wp, true, &ai);
      mb::internal::CapRevoluteIsa(2);
      EXPECT_LT(RelDiff(ai, ag), 1e-13) << "state " << k << ", ISA " << level;
      EXPECT_NEAR(wp.kinetic, kr, 1e-14 * (1.0 + kr));
    }
    if (wl) {
      wl->SetState(0.0, q, v);
      EvaluateForward(wl.get(), true, &al);
      EXPECT_LT(RelDiff(ar, al), 1e-13) << "state " << k;
      EXPECT_NEAR(kr, wl->kinetic, 1e-14 * (1.0 + wl->kinetic));
    }
  }
}

TEST(PlanarAba, RevoluteOnlyEqualsTheSpatialAndTheGenericPlanarAba) {
  // Joint frames turned about z, an axis along -z, a branch.
  const Model planar = PlanarTree(0.0, true), lifted = PlanarTree(0.07, true);
  ExpectRevoluteAbaMatches(planar, &lifted);
}

TEST(PlanarAba, RevoluteOnlyUnbranchedChainEqualsTheOthers) {
  // The unbranched-chain path: joint frames turned about z, an axis along
  // -z, no branch.
  const Model planar = PlanarTree(0.0, true, false),
              lifted = PlanarTree(0.07, true, false);
  ExpectRevoluteAbaMatches(planar, &lifted);
  ExpectForwardMatchesKkt(planar, 20);
}

TEST(PlanarAba, RevoluteOnlyOnChainReducedsChain) {
  // chain_reduced's chain (planar description, 40 links) against the
  // generic planar ABA, and its forward route against the KKT route.
  const Model chain =
      problems::ChainReducedProblem(40, DynamicsForm::kRecursive).model;
  ExpectRevoluteAbaMatches(chain, nullptr);
}

TEST(PlanarAba, RevoluteOnlyRouteMatchesTheKktRoute) {
  ExpectForwardMatchesKkt(PlanarTree(0.0, true), 20);
}

TEST(PlanarAba, RevoluteOnlyNamesAMasslessEnd) {
  // A massless link at the end of a planar revolute chain: its articulated
  // inertia about the joint is 0, and the revolute ABA names the
  // coordinate as the generic ABAs do.
  ModelBuilder c("massless");
  Multibody t(Dimension::kPlanar);
  const BodyIndex heavy =
      t.AddBody("heavy", mb::PlanarBody(2.0, PVec(0.1, -0.3), 0.1));
  const BodyIndex ghost = t.AddBody("ghost", mb::PlanarBody(0.0, PVec(), 0.0));
  t.AddJoint("a", Joint::Revolute(), t.world(), t.BodyFrame(heavy));
  t.AddJoint("b", Joint::Revolute(), t.AddFrame("tip", heavy, PVec(0.0, -0.6)),
             t.BodyFrame(ghost));
  const mb::TreeDynamics dyn(std::move(t).AddTo(&c));
  ASSERT_TRUE(dyn.planar());
  const Eigen::VectorXd z = Eigen::VectorXd::Zero(2);
  EXPECT_THAT([&] { dyn.ForwardDynamics<double>(z, z, z, Eigen::VectorXd()); },
              ::testing::ThrowsMessage<std::runtime_error>(
                  HasSubstr("coordinate 'b_angle'")));
}

TEST(PlanarAba, IsChosenForPlanarTreesOnly) {
  // TreeDynamics::planar() through a description: the chain_reduced chain
  // (planar description) and PlanarTree(0) are planar, with z offsets or a
  // ball joint it is not.
  auto planar = [](Multibody s) {
    ModelBuilder b("m");
    const mb::Kinematics kin = std::move(s).AddTo(&b, DynamicsForm::kEnergy);
    return mb::TreeDynamics(kin).planar();
  };
  auto chain = [](double z, bool ball) {
    Multibody s(Dimension::kSpatial);
    const BodyIndex a =
        s.AddBody("a", mb::SpatialBody(1.0, PVec(0.0, -0.5, 0.0), 0.1, 0.1, 0.1,
                                       0.0, 0.0, 0.0));
    const BodyIndex c =
        s.AddBody("c", mb::SpatialBody(1.0, PVec(0.0, -0.5, 0.0), 0.1, 0.1, 0.1,
                                       0.0, 0.0, 0.0));
    s.AddJoint("a", Joint::Revolute(Eigen::Vector3d::UnitZ()), s.world(),
               s.BodyFrame(a));
    s.AddJoint("c",
               ball ? Joint::Ball() : Joint::Revolute(Eigen::Vector3d::UnitZ()),
               s.AddFrame("tip", a, PVec(0.0, -1.0, z)), s.BodyFrame(c));
    return s;
  };
  EXPECT_TRUE(planar(chain(0.0, false)));
  EXPECT_FALSE(planar(chain(0.1, false)));
  EXPECT_FALSE(planar(chain(0.0, true)));
}

// ------------------------------------------------ chain_reduced, two forms

TEST(ChainReducedForms, RecursiveAndEnergyGiveTheSameEquations) {
  for (int n : {3, 12}) {
    const Model mr =
        problems::ChainReducedProblem(n, DynamicsForm::kRecursive).model;
    const Model me =
        problems::ChainReducedProblem(n, DynamicsForm::kEnergy).model;
    ASSERT_EQ(mr.nv(), n);
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(mr.coordinate_names()[i], me.coordinate_names()[i]);
    Workspace wr(mr), we(me);
    wr.use_compiled = we.use_compiled = false;
    wr.SetParameters(mr.default_parameters());
    we.SetParameters(me.default_parameters());
    RandomStates rs;
    for (int k = 0; k < 10; ++k) {
      Eigen::VectorXd q, v;
      rs.Fill(mr, &q, &v);
      wr.SetState(0.0, q, v);
      we.SetState(0.0, q, v);
      EvaluateAll(&wr);
      EvaluateAll(&we);
      // Sums of the same terms in other orders (brief: 1e-12 relative).
      EXPECT_LT(RelDiff(wr.M, we.M), 1e-12) << "n " << n << " state " << k;
      EXPECT_LT(RelDiff(wr.h, we.h), 1e-12) << "n " << n << " state " << k;
      EXPECT_NEAR(wr.energy, we.energy, 1e-13 * (1.0 + std::abs(we.energy)));
    }
  }
}

struct Recorded : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

TEST(ChainReducedForms, RecursiveAndEnergyRunsAgreeOnTheTip) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "two 1 s runs at rtol 1e-10 of a 20-link chain on dual numbers");
  for (int n : {5, 20}) {
    SimulationOptions o;
    o.t_end = 1.0;
    o.output_step = 0.05;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    o.integrator = Integrator::kCvodesAdams;
    const Problem pr =
        problems::ChainReducedProblem(n, DynamicsForm::kRecursive);
    const Problem pe = problems::ChainReducedProblem(n, DynamicsForm::kEnergy);
    const Eigen::VectorXd p = pr.model.default_parameters();
    Recorded rr, re;
    const SimulationSummary sr = Simulate(pr.model, pr.initial(p), p, o, &rr);
    const SimulationSummary se = Simulate(pe.model, pe.initial(p), p, o, &re);
    ASSERT_TRUE(sr.ok) << sr.error;
    ASSERT_TRUE(se.ok) << se.error;
    // The recursive form took the forward route: Adams by fixed-point
    // iteration, no Newton matrix.
    EXPECT_EQ(sr.stats.jacobian_evals, 0);
    ASSERT_EQ(rr.samples.size(), re.samples.size());
    double worst = 0.0, moved = 0.0;
    const Eigen::Vector2d tip0 = problems::ChainReducedTip(rr.samples[0].q);
    for (size_t k = 0; k < rr.samples.size(); ++k) {
      const Eigen::Vector2d a = problems::ChainReducedTip(rr.samples[k].q);
      const Eigen::Vector2d b = problems::ChainReducedTip(re.samples[k].q);
      worst = std::max(worst, (a - b).norm());
      moved = std::max(moved, (a - tip0).norm());
      // The energies reported at the samples agree (same state up to the
      // integration error, which moves the energy by far less than 1e-8).
      EXPECT_NEAR(rr.samples[k].energy, re.samples[k].energy, 1e-8);
    }
    EXPECT_GT(moved, 0.1) << "n = " << n;  // the tip really swings
    // Two independent integrations at rtol 1e-10 of a path of ~1 m: the
    // global errors, 1e-10 times the error growth over 1 s (brief: ~1e-8).
    EXPECT_LT(worst, 1e-8) << "n = " << n;
    // No work terms: the energy is conserved to the integration tolerance.
    EXPECT_LT(sr.energy_residual_max, 1e-8) << "n = " << n;
    EXPECT_LT(se.energy_residual_max, 1e-8) << "n = " << n;
  }
}

// --nonlin-conv-coef 1 on the forward route (docs/output.md, "The
// corrector's convergence coefficient"): the fixed-point Adams corrector
// stops after one iteration when that is within the local error
// tolerance, so a step costs one right-hand side instead of two, while
// the error test keeps the accuracy: at 100 links the tip and the joint
// angles stay as close to an rtol 1e-10 reference as with CVODES' 0.1.
TEST(ChainReducedForms, ConvergenceCoefficientOneKeepsTheAccuracy) {
  DAEDALUS_RELEASE_BUILD_ONLY("three 1 s runs of a 100-link chain");
  const int n = 100;
  const Problem pr = problems::ChainReducedProblem(n, DynamicsForm::kRecursive);
  const Eigen::VectorXd p = pr.model.default_parameters();
  SimulationOptions o = pr.defaults;  // Adams, rtol 1e-6, atol 1e-8
  o.t_end = 1.0;
  o.output_step = 0.05;
  Recorded rd, rc, rr;
  o.nonlin_conv_coef = 0.0;  // CVODES' 0.1
  const SimulationSummary sd = Simulate(pr.model, pr.initial(p), p, o, &rd);
  o.nonlin_conv_coef = 1.0;
  const SimulationSummary sc = Simulate(pr.model, pr.initial(p), p, o, &rc);
  o.nonlin_conv_coef = 0.0;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  const SimulationSummary sr = Simulate(pr.model, pr.initial(p), p, o, &rr);
  ASSERT_TRUE(sd.ok) << sd.error;
  ASSERT_TRUE(sc.ok) << sc.error;
  ASSERT_TRUE(sr.ok) << sr.error;
  ASSERT_EQ(rd.samples.size(), rr.samples.size());
  ASSERT_EQ(rc.samples.size(), rr.samples.size());
  double err_d = 0.0, err_c = 0.0, qerr_d = 0.0, qerr_c = 0.0;
  for (size_t k = 0; k < rr.samples.size(); ++k) {
    qerr_d = std::max(
        qerr_d, (rd.samples[k].q - rr.samples[k].q).lpNorm<Eigen::Infinity>());
    qerr_c = std::max(
        qerr_c, (rc.samples[k].q - rr.samples[k].q).lpNorm<Eigen::Infinity>());
    const Eigen::Vector2d ref = problems::ChainReducedTip(rr.samples[k].q);
    err_d = std::max(err_d,
                     (problems::ChainReducedTip(rd.samples[k].q) - ref).norm());
    err_c = std::max(err_c,
                     (problems::ChainReducedTip(rc.samples[k].q) - ref).norm());
  }
  // About one right-hand side per step instead of two (at most 1.2 per
  // step, against 1.5 or more with 0.1; measured 1.05 and 2.0). The steps
  // are more (9219 against 4941: the one-correction scheme's smaller
  // stability region), the right-hand sides fewer (9676 against 9863 here;
  // 24 % fewer at 1000 links, docs/performance.md).
  EXPECT_LT(static_cast<double>(sc.stats.rhs_evals),
            1.2 * static_cast<double>(sc.stats.steps));
  EXPECT_GT(static_cast<double>(sd.stats.rhs_evals),
            1.5 * static_cast<double>(sd.stats.steps));
  EXPECT_LT(sc.stats.rhs_evals, sd.stats.rhs_evals);
  // Both within the tolerance's reach of the reference, and the loose
  // coefficient not less accurate than twice the default's error plus
  // rtol (errors of this size move with the step sequence).
  // The tip swings: its path is not trivially accurate.
  EXPECT_GT((problems::ChainReducedTip(rr.samples.back().q) -
             problems::ChainReducedTip(rr.samples.front().q))
                .norm(),
            0.1);
  // Both close to the reference (measured 3.2e-12 m with 0.1, 5.2e-12 m
  // with 1; the tip's error stays far below rtol times its path here):
  // 1e-10 m leaves a factor 20 for other round-off (an FMA-less CPU) and
  // catches a corrector error the error test let through.
  EXPECT_LT(err_d, 1e-10) << err_d;
  EXPECT_LT(err_c, 1e-10) << err_c;
  // The joint angles: measured 7.3e-7 rad with 0.1 and 7.8e-7 with 1
  // (at 1000 links the coefficient 1 takes 52 % more steps and doubles
  // the error, docs/performance.md); rtol 1e-6 with the error's growth over
  // 1 s gives 1e-5, and the loose coefficient must not be more than twice
  // as far off as the default here.
  EXPECT_LT(qerr_d, 1e-5) << qerr_d;
  EXPECT_LT(qerr_c, 2.0 * qerr_d) << qerr_c << " vs " << qerr_d;
}

TEST(ChainReducedForms, LimitsAreNamed) {
  try {
    problems::ChainReducedProblem(201, DynamicsForm::kEnergy);
    ADD_FAILURE() << "201 links accepted by the energy form";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--dynamics recursive"));
    EXPECT_THAT(e.what(), HasSubstr("at most 200"));
  }
  try {
    problems::ChainReducedProblem(2001, DynamicsForm::kRecursive);
    ADD_FAILURE() << "2001 links accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("2000"));
  }
  EXPECT_THROW(problems::ChainReducedProblem(0, DynamicsForm::kRecursive),
               std::invalid_argument);
  EXPECT_EQ(
      problems::ChainReducedProblem(200, DynamicsForm::kEnergy).model.nv(),
      200);
}

}  // namespace forward_route_test
}  // namespace
}  // namespace daedalus
