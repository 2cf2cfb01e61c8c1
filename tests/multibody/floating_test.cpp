// Ball and free joints (floating bases) in the multibody description
// (include/daedalus/multibody.hpp): M, h and J against the same systems
// written by hand with the quaternion helpers, the joints' kinematic map
// and motion subspace against central differences along the retraction,
// Noether's momenta of a floating chain, and the refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <random>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/quaternion.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace floating_test {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::Vector4d;
using Eigen::VectorXd;
using mb::BodyIndex;
using mb::Dimension;
using mb::FrameIndex;
using mb::Joint;
using mb::Multibody;
using mb::PVec;
using ::testing::HasSubstr;

constexpr double kG = 9.81;

Matrix3d Rotation(double a, double b, double c) {
  return (Eigen::AngleAxisd(a, Vector3d::UnitZ()) *
          Eigen::AngleAxisd(b, Vector3d::UnitY()) *
          Eigen::AngleAxisd(c, Vector3d::UnitX()))
      .toRotationMatrix();
}

Matrix3d InertiaOf(
    double ixx, double iyy, double izz, double ixy, double ixz, double iyz) {
  Matrix3d i;
  i << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
  return i;
}

Vector4d RandomQuaternion(std::mt19937* rng, double scale) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vector4d q(n(*rng), n(*rng), n(*rng), n(*rng));
  return scale * q / q.norm();
}

// The quaternion product a (x) b, (w, x, y, z).
Vector4d QuatProduct(const Vector4d& a, const Vector4d& b) {
  const Vector3d va = a.tail<3>(), vb = b.tail<3>();
  Vector4d out;
  out[0] = a[0] * b[0] - va.dot(vb);
  out.tail<3>() = a[0] * vb + b[0] * va + va.cross(vb);
  return out;
}

// exp(u / 2) as a unit quaternion (exact).
Vector4d ExpHalf(const Vector3d& u) {
  const double a = u.norm();
  Vector4d out(1.0, 0.0, 0.0, 0.0);
  if (a > 0.0) {
    out[0] = std::cos(a / 2);
    out.tail<3>() = std::sin(a / 2) * u / a;
  }
  return out;
}

// ---- the systems

// Body 1 (free base, or on a ball at a pivot frame) and body 2 on a ball
// joint at the hinge h1 of body 1; both with an offset centre of mass and
// a full inertia tensor. Gravity along -z.
const Vector3d kC1(0.1, -0.2, 0.3), kC2(0.05, 0.1, -0.4),
    kHinge(0.3, 0.2, -0.5);
const Vector3d kPivot(0.2, -0.1, 0.4), kMarker(-0.1, 0.3, 0.25);
const Vector3d kAnchor(0.4, -0.6, -0.2);
constexpr double kM1 = 2.0, kM2 = 1.3;
const Matrix3d kRf = Rotation(0.3, -0.4, 0.2);  // R_WF of the base frame

Matrix3d I1() { return InertiaOf(0.3, 0.4, 0.5, 0.02, -0.03, 0.01); }
Matrix3d I2() { return InertiaOf(0.2, 0.25, 0.1, -0.01, 0.02, 0.015); }

struct Built {
  Model model;
  mb::Kinematics kin;
};

// The multibody description: `free` chooses a Free root (else a Ball at
// the rotated, offset frame F), `second` adds body 2 on a ball, `closure`
// ties a marker on the last body to a world anchor.
Built Describe(bool free, bool second, bool closure, double g = kG) {
  ModelBuilder b(free ? "floating" : "top");
  Multibody s(Dimension::kSpatial);
  auto body = [&](const char* name, double m, const Vector3d& c,
                  const Matrix3d& i) {
    return s.AddBody(
        name, mb::SpatialBody(m, PVec(c.x(), c.y(), c.z()), i(0, 0), i(1, 1),
                              i(2, 2), i(0, 1), i(0, 2), i(1, 2)));
  };
  const BodyIndex b1 = body("b1", kM1, kC1, I1());
  const FrameIndex base = s.AddFrame(
      "base", s.ground(), PVec(kPivot.x(), kPivot.y(), kPivot.z()), kRf);
  s.AddJoint("root", free ? Joint::Free() : Joint::Ball(), base,
             s.BodyFrame(b1));
  BodyIndex last = b1;
  if (second) {
    const BodyIndex b2 = body("b2", kM2, kC2, I2());
    const FrameIndex h =
        s.AddFrame("hinge", b1, PVec(kHinge.x(), kHinge.y(), kHinge.z()));
    s.AddJoint("shoulder", Joint::Ball(), h, s.BodyFrame(b2));
    last = b2;
  }
  if (closure) {
    const FrameIndex m =
        s.AddFrame("marker", last, PVec(kMarker.x(), kMarker.y(), kMarker.z()));
    const FrameIndex a = s.AddFrame(
        "anchor", s.ground(), PVec(kAnchor.x(), kAnchor.y(), kAnchor.z()));
    s.AddCoincidence("tie", a, m);
  }
  s.SetGravity(PVec(0.0, 0.0, -g));
  mb::Kinematics kin = std::move(s).AddTo(&b);
  return {std::move(b).Build(), kin};
}

// The same system by hand: coordinates [p (free only)], quaternion of the
// root, [quaternion of the shoulder].
template <class S>
struct HandPoses {
  Mat3<S> r1, r2;
  Vec3<S> o1, o2, w1, w2;  // origins, world angular velocities
  Vec3<S> v1, v2;          // origin velocities
  Vec3<S> wb1, wb2;        // body-frame angular velocities
};

template <class S>
HandPoses<S> HandKinematics(bool free,
                            bool second,
                            const VecX<S>& q,
                            const VecX<S>& v) {
  HandPoses<S> h;
  const int iq = free ? 3 : 0, iv = free ? 3 : 0;
  const Mat3<S> rf = kRf.cast<S>();
  h.r1 = rf * RotationAt(q, iq);
  h.o1 = kPivot.cast<S>();
  h.v1 = Vec3<S>::Zero();
  if (free) {
    h.o1 += rf * Vec3<S>(q[0], q[1], q[2]);
    h.v1 += rf * Vec3<S>(v[0], v[1], v[2]);
  }
  h.wb1 = AngularVelocityAt(v, iv);
  h.w1 = h.r1 * h.wb1;
  if (second) {
    const Mat3<S> rel = RotationAt(q, iq + 4);
    h.r2 = h.r1 * rel;
    const Vec3<S> arm = h.r1 * kHinge.cast<S>();
    h.o2 = h.o1 + arm;
    h.v2 = h.v1 + mb::internal::Cross<S>(h.w1, arm);
    h.wb2 = rel.transpose() * h.wb1 + AngularVelocityAt(v, iv + 3);
    h.w2 = h.r2 * h.wb2;
  }
  return h;
}

Model ByHand(bool free, bool second, bool closure) {
  ModelBuilder b("by_hand");
  if (free) b.Coordinates({"root_x", "root_y", "root_z"});
  b.Quaternion("root");
  if (second) b.Quaternion("shoulder");
  b.KineticEnergy([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const HandPoses<S> h = HandKinematics<S>(free, second, x.q, x.v);
    const Vec3<S> vc1 =
        h.v1 + mb::internal::Cross<S>(h.w1, Vec3<S>(h.r1 * kC1.cast<S>()));
    S t =
        0.5 * kM1 * vc1.squaredNorm() + 0.5 * h.wb1.dot(I1().cast<S>() * h.wb1);
    if (second) {
      const Vec3<S> vc2 =
          h.v2 + mb::internal::Cross<S>(h.w2, Vec3<S>(h.r2 * kC2.cast<S>()));
      t += 0.5 * kM2 * vc2.squaredNorm() +
           0.5 * h.wb2.dot(I2().cast<S>() * h.wb2);
    }
    return t;
  });
  b.PotentialEnergy([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const VecX<S> zero = VecX<S>::Zero(x.v.size());
    const HandPoses<S> h = HandKinematics<S>(free, second, x.q, zero);
    S height = kM1 * (h.o1 + h.r1 * kC1.cast<S>())[2];
    if (second) height += kM2 * (h.o2 + h.r2 * kC2.cast<S>())[2];
    return S(kG * height);
  });
  if (closure) {
    b.Holonomic(
        "tie",
        [=](const auto& x) {
          using S = Scalar<decltype(x)>;
          const VecX<S> zero = VecX<S>::Zero(x.v.size());
          const HandPoses<S> h = HandKinematics<S>(free, second, x.q, zero);
          const Vec3<S> m = second ? Vec3<S>(h.o2 + h.r2 * kMarker.cast<S>())
                                   : Vec3<S>(h.o1 + h.r1 * kMarker.cast<S>());
          VecX<S> r(3);
          r << m[0] - kAnchor[0], m[1] - kAnchor[1], m[2] - kAnchor[2];
          return r;
        },
        3);
  }
  return std::move(b).Build();
}

// A random state: translations in [-1, 1], random quaternions (norm 1.3 on
// odd trials: functions see them normalized), velocities N(0, 2).
void RandomState(
    const Model& m, std::mt19937* rng, int trial, VectorXd* q, VectorXd* v) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> n(0.0, 2.0);
  *q = VectorXd(m.nq());
  *v = VectorXd(m.nv());
  for (int i = 0; i < m.nq(); ++i) (*q)[i] = u(*rng);
  for (const auto& blk : m.quaternions())
    q->segment<4>(blk.q) = RandomQuaternion(rng, trial % 2 ? 1.3 : 1.0);
  for (int i = 0; i < m.nv(); ++i) (*v)[i] = n(*rng);
}

// Relative 1e-13: both sides are the same expressions in a different
// order (walks versus hand formulas), through the same AD; round-off of a
// few hundred operations on numbers of order one.
constexpr double kAgree = 1e-13;

void ExpectAgree(bool free, bool second, bool closure) {
  const Built mb = Describe(free, second, closure);
  const Model hand = ByHand(free, second, closure);
  ASSERT_EQ(mb.model.nq(), hand.nq());
  ASSERT_EQ(mb.model.nv(), hand.nv());
  EXPECT_EQ(mb.model.coordinate_names(), hand.coordinate_names());
  EXPECT_EQ(mb.model.velocity_names(), hand.velocity_names());
  std::mt19937 rng(free * 4 + second * 2 + closure);
  for (int trial = 0; trial < 20; ++trial) {
    VectorXd q, v;
    RandomState(hand, &rng, trial, &q, &v);
    Workspace a(mb.model), b(hand);
    a.SetState(0.0, q, v);
    b.SetState(0.0, q, v);
    EvaluateAll(&a);
    EvaluateAll(&b);
    EXPECT_LT((a.M - b.M).norm(), kAgree * b.M.norm()) << trial;
    EXPECT_LT((a.h - b.h).norm(), kAgree * (1.0 + b.h.norm())) << trial;
    EXPECT_NEAR(a.energy, b.energy, kAgree * (1.0 + std::abs(b.energy)));
    if (closure) {
      EXPECT_LT((a.J - b.J).norm(), kAgree * b.J.norm()) << trial;
      EXPECT_LT((a.phi - b.phi).norm(), kAgree) << trial;
      EXPECT_LT((a.bias - b.bias).norm(), kAgree * (1.0 + b.bias.norm()));
    }
  }
}

TEST(Floating, BallTopAgreesWithTheHandWrittenEnergies) {
  ExpectAgree(false, false, false);
}
TEST(Floating, DoubleBallPendulumAgreesWithTheHandWrittenEnergies) {
  ExpectAgree(false, true, true);
}
TEST(Floating, FreeBodyAgreesWithTheHandWrittenEnergies) {
  ExpectAgree(true, false, true);
}
TEST(Floating, FreeBaseWithBallLinkAgreesWithTheHandWrittenEnergies) {
  ExpectAgree(true, true, true);
}

TEST(Floating, NamesAndTheNeutralConfiguration) {
  const Built b = Describe(true, true, false);
  ASSERT_EQ(b.model.nq(), 11);
  ASSERT_EQ(b.model.nv(), 9);
  const std::vector<std::string> q = {
      "root_x", "root_y",     "root_z",     "root.w",     "root.x",    "root.y",
      "root.z", "shoulder.w", "shoulder.x", "shoulder.y", "shoulder.z"};
  const std::vector<std::string> v = {
      "root_x",  "root_y",      "root_z",      "root.wx",    "root.wy",
      "root.wz", "shoulder.wx", "shoulder.wy", "shoulder.wz"};
  EXPECT_EQ(b.model.coordinate_names(), q);
  EXPECT_EQ(b.model.velocity_names(), v);
  EXPECT_EQ(b.kin.velocity_names(), v);
  VectorXd neutral = VectorXd::Zero(11);
  neutral[3] = neutral[7] = 1.0;
  EXPECT_EQ(b.kin.Neutral(), neutral);
  // At the neutral configuration every joint's M is at its F.
  const VectorXd p = b.model.default_parameters();
  const mb::FramePose<double> pose =
      b.kin.Pose<double>(b.kin.Frame("b2"), neutral, p);
  EXPECT_LT((pose.R - kRf).norm(), 1e-15);
  EXPECT_LT((pose.p - (kPivot + kRf * kHinge)).norm(), 1e-15);
}

// ---- the kinematic map and the motion subspace

// Along the retraction q(s) = (p + s u, quat (x) exp(s w / 2)) of a
// velocity v = (u, w): the coordinates move with q' = N(q) v (N v = (u,
// quat (x) (0, w) / 2)), and each frame's pose with the frame Jacobian's
// J v: dp_WF/ds = v_WF, (dR_WF/ds) R_WF' = [w_WF]x. Central differences,
// step 1e-5: truncation ~1e-10 and round-off ~1e-11 on quantities of
// order one, so 1e-8.
TEST(Floating, KinematicMapAndMotionSubspaceMatchTheRetraction) {
  const Built b = Describe(true, true, false);
  const VectorXd p = b.model.default_parameters();
  const auto& blocks = b.model.quaternions();
  auto retract = [&](const VectorXd& q, const VectorXd& v, double s) {
    VectorXd out = q;
    out.head<3>() += s * v.head<3>();
    for (const auto& blk : blocks)
      out.segment<4>(blk.q) =
          QuatProduct(q.segment<4>(blk.q), ExpHalf(s * v.segment<3>(blk.v)));
    return out;
  };
  constexpr double kStep = 1e-5, kTol = 1e-8;
  std::mt19937 rng(5);
  const FrameIndex frames[] = {b.kin.Frame("b1"), b.kin.Frame("b2")};
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v;
    RandomState(b.model, &rng, 0, &q, &v);
    // N(q) v by the quaternion product.
    VectorXd nv = VectorXd::Zero(b.model.nq());
    nv.head<3>() = v.head<3>();
    for (const auto& blk : blocks) {
      Vector4d w(0.0, v[blk.v], v[blk.v + 1], v[blk.v + 2]);
      nv.segment<4>(blk.q) = 0.5 * QuatProduct(q.segment<4>(blk.q), w);
    }
    const VectorXd dq =
        (retract(q, v, kStep) - retract(q, v, -kStep)) / (2 * kStep);
    EXPECT_LT((dq - nv).cwiseAbs().maxCoeff(), kTol) << trial;
    for (const FrameIndex f : frames) {
      const Eigen::MatrixXd jac = b.kin.Jacobian<double>(f, q, p);
      ASSERT_EQ(jac.cols(), 9);
      // Each column (the motion subspace) and then a random combination.
      for (int k = 0; k <= 9; ++k) {
        const VectorXd dir = k < 9 ? VectorXd(VectorXd::Unit(9, k)) : v;
        const auto a = b.kin.Pose<double>(f, retract(q, dir, kStep), p);
        const auto c = b.kin.Pose<double>(f, retract(q, dir, -kStep), p);
        const auto o = b.kin.Pose<double>(f, q, p);
        const Vector3d dp = (a.p - c.p) / (2 * kStep);
        const Matrix3d w = (a.R - c.R) / (2 * kStep) * o.R.transpose();
        const VectorXd jv = jac * dir;
        EXPECT_LT((w + w.transpose()).cwiseAbs().maxCoeff(), kTol);
        EXPECT_LT((Vector3d(w(2, 1), w(0, 2), w(1, 0)) - jv.head<3>())
                      .cwiseAbs()
                      .maxCoeff(),
                  kTol)
            << "angular, direction " << k;
        EXPECT_LT((dp - jv.tail<3>()).cwiseAbs().maxCoeff(), kTol)
            << "linear, direction " << k;
      }
      const mb::FrameVelocity<double> fv = b.kin.Velocity<double>(f, q, v, p);
      const VectorXd jv = jac * v;
      EXPECT_LT((fv.w - jv.head<3>()).norm(), 1e-14 * (1.0 + fv.w.norm()));
      EXPECT_LT((fv.v - jv.tail<3>()).norm(), 1e-14 * (1.0 + fv.v.norm()));
    }
    // The ball's columns are the body-frame axes of M in the world: the
    // shoulder's three angular columns of b2 are R_W2 (identity).
    const Eigen::MatrixXd j2 = b.kin.Jacobian<double>(frames[1], q, p);
    const Matrix3d r2 = b.kin.Pose<double>(frames[1], q, p).R;
    EXPECT_LT((j2.block<3, 3>(0, 6) - r2).norm(), 1e-14);
    EXPECT_LT((j2.block<3, 3>(3, 6).norm()), 1e-14);  // origin at the ball
  }
}

// ---- momenta

// Sums the world momenta of the samples (quaternions normalized first).
struct MomentumLog : Observer {
  const mb::Kinematics* kin = nullptr;
  const Model* model = nullptr;
  VectorXd p;
  std::vector<double> t, energy;
  std::vector<Vector3d> lin, ang;
  void OnSample(const Sample& s) override {
    VectorXd q = s.q;
    for (const auto& blk : model->quaternions())
      q.segment<4>(blk.q).normalize();
    t.push_back(s.t);
    energy.push_back(s.energy);
    lin.push_back(kin->LinearMomentum<double>(q, s.v, p));
    ang.push_back(kin->AngularMomentum<double>(q, s.v, p));
  }
};

// The sanitizer build (-O0; the energy form of ball and free joints runs on
// dual numbers, 29 s for the 1 s tumble there) integrates a fifth of each
// span, sampled five times as often, under the same checks; the release
// build runs the full spans.
#ifdef DAEDALUS_SANITIZER_BUILD
constexpr double kSpanScale = 0.2;
#else
constexpr double kSpanScale = 1.0;
#endif

SimulationOptions Tight(double t_end) {
  SimulationOptions o;
  o.formulation = Formulation::kProjection;
  o.integrator = Integrator::kCvodesBdf;
  o.t_end = t_end * kSpanScale;
  o.output_step = 0.05 * kSpanScale;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  return o;
}

InitialState Tumbling(const Model& m) {
  InitialState x0;
  std::mt19937 rng(17);
  RandomState(m, &rng, 0, &x0.q, &x0.v);
  return x0;
}

// No gravity, no damping: translation and rotation invariance (Noether,
// seed 000) conserve the total linear momentum and the angular momentum
// about W's origin; the energy is conserved too. The momenta are sums of
// m v_C and R I R' w over the bodies (Kinematics), independent of the
// model's equations, so the check is not circular. Tolerance: rtol 1e-10
// over 1 s of tumbling: 1e-8 relative (the global error, ~100 rtol; the
// measured values are printed).
TEST(Floating, FreeChainConservesMomentaAndEnergy) {
  const Built b = Describe(true, true, false, 0.0);
  MomentumLog log;
  log.kin = &b.kin;
  log.model = &b.model;
  log.p = b.model.default_parameters();
  const SimulationSummary s =
      Simulate(b.model, Tumbling(b.model), log.p, Tight(1.0), &log);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GT(log.t.size(), 15u);
  // Linear momentum relative to sqrt(2 T m_total), which bounds |P|
  // (Cauchy-Schwarz) and is the size of the bodies' momenta that cancel
  // in P (random velocities make |P| itself small).
  const double mass = b.kin.TotalMass<double>(log.p);
  const double scale_l = std::sqrt(2.0 * log.energy[0] * mass);
  const double scale_a = log.ang[0].norm();
  ASSERT_GT(scale_l, 0.5);
  ASSERT_GT(scale_a, 0.5);
  double dl = 0.0, da = 0.0, de = 0.0;
  for (size_t i = 0; i < log.t.size(); ++i) {
    dl = std::max(dl, (log.lin[i] - log.lin[0]).norm() / scale_l);
    da = std::max(da, (log.ang[i] - log.ang[0]).norm() / scale_a);
    de = std::max(
        de, std::abs(log.energy[i] - log.energy[0]) / std::abs(log.energy[0]));
  }
  std::printf(
      "free chain: |dP|/sqrt(2 T m) <= %.1e, |dL|/|L| <= %.1e, |dE|/|E| <= "
      "%.1e, "
      "quaternion drift %.1e over 1 s\n",
      dl, da, de, s.drift_quaternion_max);
  EXPECT_LT(dl, 1e-8);
  EXPECT_LT(da, 1e-8);
  EXPECT_LT(de, 1e-8);
  EXPECT_LT(s.drift_quaternion_max, 1e-14);  // projection: round-off
}

// With gravity the linear momentum changes as m_total g t exactly (the
// only external force), whatever the internal motion.
TEST(Floating, FreeChainInGravityGainsMomentumMgt) {
  const Built b = Describe(true, true, false, kG);
  MomentumLog log;
  log.kin = &b.kin;
  log.model = &b.model;
  log.p = b.model.default_parameters();
  const SimulationSummary s =
      Simulate(b.model, Tumbling(b.model), log.p, Tight(0.5), &log);
  ASSERT_TRUE(s.ok) << s.error;
  const double mass = kM1 + kM2;
  EXPECT_NEAR(b.kin.TotalMass<double>(log.p), mass, 1e-15);
  for (size_t i = 0; i < log.t.size(); ++i) {
    const Vector3d expected =
        log.lin[0] + mass * log.t[i] * Vector3d(0.0, 0.0, -kG);
    // The same 1e-8 relative as the conservation test (rtol 1e-10, global
    // error ~100 rtol; measured up to 2.3e-8 absolute at momenta of ~30 kg
    // m/s, about 1e-9 relative).
    EXPECT_LT((log.lin[i] - expected).norm(), 1e-8 * expected.norm())
        << log.t[i];
  }
}

// ---- bad input

TEST(Floating, BallAndFreeJointsAreRefusedInAPlanarSystem) {
  for (const Joint& j : {Joint::Ball(), Joint::Free()}) {
    Multibody s(Dimension::kPlanar);
    const BodyIndex body = s.AddBody("b", mb::PlanarBody(1.0, PVec(), 0.1));
    try {
      s.AddJoint("spherical", j, s.world(), s.BodyFrame(body));
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("joint 'spherical'"));
      EXPECT_THAT(e.what(), HasSubstr("needs a spatial system"));
    }
  }
}

TEST(Floating, ScalarDeclarationsOnAQuaternionAreRefused) {
  Multibody s(Dimension::kSpatial);
  const BodyIndex body =
      s.AddBody("b", mb::SpatialBody(1.0, PVec(), 0.1, 0.1, 0.1));
  const mb::JointIndex j =
      s.AddJoint("base", Joint::Free(), s.world(), s.BodyFrame(body));
  EXPECT_EQ(s.Coordinate(j, 3), 3);
  EXPECT_EQ(s.Velocity(j, 5), 5);
  s.AddJointSpring(j, 1.0, 0.0, 2);  // the z translation: allowed
  try {
    s.AddJointSpring(j, 1.0, 0.0, 4);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("joint 'base'"));
    EXPECT_THAT(e.what(), HasSubstr("quaternion"));
  }
  EXPECT_THROW(s.Velocity(j, 6), std::invalid_argument);
  EXPECT_THROW(
      s.AddJoint("x", Joint::Ball().Named({"a", "b"}), s.world(), s.world()),
      std::invalid_argument);
}

}  // namespace floating_test
}  // namespace
}  // namespace daedalus
