// A spatial multibody system without gravity: Noether's momenta of two
// bodies with full inertia tensors, floating on a six-coordinate chain of
// joints (three prismatic, three revolute about z, y, x: Euler angles away
// from gimbal lock) with a sprung universal joint between them.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody.hpp"
#include "problems/catalogue_support.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace spatial_test {

using mb::BodyIndex;
using mb::Joint;
using mb::PVec;
using testing::kRoundOff;

struct Floating {
  Model model;
  mb::Kinematics kin;
};

Floating MakeFloatingPair() {
  ModelBuilder b("floating_spatial_pair");
  mb::Multibody s(mb::Dimension::kSpatial);
  // Massless carriers for the base's six coordinates.
  const mb::BodySpec none = mb::SpatialBody(0.0, PVec(), 0.0, 0.0, 0.0);
  const BodyIndex cx = s.AddBody("cx", none), cy = s.AddBody("cy", none),
                  cz = s.AddBody("cz", none), yaw = s.AddBody("yaw", none),
                  pitch = s.AddBody("pitch", none);
  const BodyIndex hull =
      s.AddBody("hull", mb::SpatialBody(3.0, PVec(0.1, -0.05, 0.2), 0.4, 0.5,
                                        0.6, 0.03, -0.02, 0.01));
  const BodyIndex boom =
      s.AddBody("boom", mb::SpatialBody(1.0, PVec(0.5, 0.0, 0.0), 0.02, 0.15,
                                        0.16, 0.0, 0.01, 0.0));
  s.AddJoint("x", Joint::Prismatic(Eigen::Vector3d::UnitX()), s.world(),
             s.BodyFrame(cx));
  s.AddJoint("y", Joint::Prismatic(Eigen::Vector3d::UnitY()), s.BodyFrame(cx),
             s.BodyFrame(cy));
  s.AddJoint("z", Joint::Prismatic(Eigen::Vector3d::UnitZ()), s.BodyFrame(cy),
             s.BodyFrame(cz));
  s.AddJoint("yaw", Joint::Revolute(Eigen::Vector3d::UnitZ()), s.BodyFrame(cz),
             s.BodyFrame(yaw));
  s.AddJoint("pitch", Joint::Revolute(Eigen::Vector3d::UnitY()),
             s.BodyFrame(yaw), s.BodyFrame(pitch));
  s.AddJoint("roll", Joint::Revolute(Eigen::Vector3d::UnitX()),
             s.BodyFrame(pitch), s.BodyFrame(hull));
  const mb::FrameIndex mount =
      s.AddFrame("mount", hull, PVec(0.3, 0.2, -0.1), mb::RotationZ(0.3));
  const mb::JointIndex cardan =
      s.AddJoint("cardan",
                 Joint::Universal(Eigen::Vector3d::UnitZ(),
                                  Eigen::Vector3d(0.0, 1.0, 1.0)),
                 mount, s.BodyFrame(boom));
  s.AddJointSpring(cardan, 0.8, 0.0, 0);
  s.AddJointSpring(cardan, 0.5, 0.2, 1);
  Floating f;
  f.kin = std::move(s).AddTo(&b);
  f.model = std::move(b).Build();
  return f;
}

TEST(MultibodySpatial, FloatingPairConservesLinearAndAngularMomentum) {
  const Floating f = MakeFloatingPair();
  ASSERT_EQ(f.model.nq(), 8);
  const Eigen::VectorXd p = f.model.default_parameters();
  // The generalized momenta of the base translations are the linear
  // momentum, at any state (translation invariance of T).
  Workspace ws(f.model);
  std::mt19937 gen(17);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, 8, -1.0, 1.0);
    const Eigen::VectorXd v = testing::RandomVector(gen, 8, -1.0, 1.0);
    ws.SetState(0.0, q, v);
    EvaluateAll(&ws);
    const Eigen::Vector3d lin = f.kin.LinearMomentum<double>(q, v, p);
    ASSERT_GT(lin.norm(), 0.1);
    EXPECT_LT((ws.momentum.head<3>() - lin).cwiseAbs().maxCoeff(),
              kRoundOff * lin.norm());
  }
  SimulationOptions o;
  o.t_end = 3.0;
  o.output_step = 0.05;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  InitialState x0;
  x0.q = Eigen::VectorXd(8);
  x0.q << 0.1, -0.2, 0.3, 0.4, -0.3, 0.2, 0.5, -0.4;
  x0.v = Eigen::VectorXd(8);
  x0.v << 0.3, 0.1, -0.2, 0.4, 0.3, -0.5, 1.5, -1.0;
  testing::Collector c;
  const SimulationSummary sum = Simulate(f.model, x0, p, o, &c);
  ASSERT_TRUE(sum.ok) << sum.error;
  const Eigen::Vector3d lin0 = f.kin.LinearMomentum<double>(x0.q, x0.v, p);
  const Eigen::Vector3d ang0 = f.kin.AngularMomentum<double>(x0.q, x0.v, p);
  ASSERT_GT(ang0.norm(), 0.1);
  double dlin = 0.0, dang = 0.0, spin = 0.0, pitch = 0.0;
  for (const Sample& smp : c.samples) {
    dlin = std::max(
        dlin, (f.kin.LinearMomentum<double>(smp.q, smp.v, p) - lin0).norm());
    dang = std::max(
        dang, (f.kin.AngularMomentum<double>(smp.q, smp.v, p) - ang0).norm());
    spin = std::max(spin, std::abs(smp.q[6] - x0.q[6]));
    pitch = std::max(pitch, std::abs(smp.q[4]));
  }
  EXPECT_LT(pitch, 1.3);  // away from the Euler angles' gimbal lock
  EXPECT_GT(spin, 0.5);   // the boom really moves on the hull
  // The base's rates change (momentum exchange) while the totals do not.
  EXPECT_GT((c.samples.back().v.segment<3>(3) - x0.v.segment<3>(3)).norm(),
            0.05);
  // Global error at rtol 1e-11 on momenta of order one.
  EXPECT_LT(dlin, 1e-8);
  EXPECT_LT(dang, 1e-8);
  EXPECT_LT(sum.energy_residual_max, 1e-8);
}

}  // namespace spatial_test
}  // namespace
}  // namespace daedalus
