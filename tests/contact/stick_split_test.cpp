// The stick test over statically indeterminate contact forces
// (src/contact/stick_split.hpp; docs/friction.md, "Redundant sticking
// contacts"):
//   a planar body on two sticking contacts at one height: the tangential
//     rows are equal, the split t1 + t2 = T is free, and the split that
//     maximizes the smaller margin equalizes them, t1 = (T + mu (N1 - N2))
//     / 2, margin (mu (N1 + N2) - T) / 2, feasible or not;
//   a box on its four bottom corners under gravity tilted by alpha with
//     mu / 2 < tan alpha < mu (a block on an incline below its friction
//     angle): it sticks, not moving at all; read on the KKT solve's split
//     (the dropped tangential rows carry nothing) two corners would leave
//     their cones. Every corner's margin is m g (mu cos alpha - sin
//     alpha) / 4 at the best split (the margins' mean bounds their
//     minimum, and equal margins balance the moments);
//   a cube on an incline sloping along its base's diagonal: the
//     minimum-norm split makes the uphill corner pull while splits that
//     push everywhere exist, and the certificate reads such a split;
//   a box sliding on its four corners stops where the closed form says,
//     its normal forces indeterminate (minimum norm) while it slips;
//   a box pushed along its base's diagonal lifts its three other corners
//     at once when its centre of pressure reaches the fourth;
//   a tall box (half sizes a along x, c along z) on four sticking corners
//     under gravity tilted by alpha, a / c < tan alpha < mu: frictionless
//     it would slide on all four; sticking, the uphill corners must pull,
//     so they release at t = 0 (the release decided with the sticking rows
//     held, src/contact/frictional_release.hpp) and it pivots about its
//     downhill edge with theta'' = 3 g (c sin alpha - a cos alpha) /
//     (4 (a^2 + c^2)) (the torque of the weight about the edge over the
//     moment of inertia about it, 4 m (a^2 + c^2) / 3).
#include "contact/stick_split.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "daedalus/multibody.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace stick_split_test {

using internal::StickCone;
using internal::StickSplit;

// Rows (n1, t1, n2, t2) on the velocities (x, z, theta) of a planar body
// whose contacts are at (-a, -h) and (+a, -h) from its centre of mass.
Eigen::MatrixXd PlanarTwoContacts(double a, double h) {
  Eigen::MatrixXd J(4, 3);
  J << 0.0, 1.0, -a,  // n1
      1.0, 0.0, h,    // t1
      0.0, 1.0, a,    // n2
      1.0, 0.0, h;    // t2
  return J;
}

TEST(StickSplit, TwoPlanarContactsShareTheFrictionForceToEqualMargins) {
  const double mu = 0.5, N1 = 3.0, N2 = 5.0;
  StickSplit split;
  split.Prepare(PlanarTwoContacts(0.2, 0.05),
                {StickCone{0, {1}, mu}, StickCone{2, {3}, mu}});
  ASSERT_TRUE(split.active());
  for (const double T : {1.5, 3.9, 5.0}) {
    Eigen::VectorXd lambda(4);
    lambda << N1, T, N2, 0.0;  // the KKT solve's split: all on t1
    const StickSplit::Result r = split.Best(lambda);
    const double margin = (mu * (N1 + N2) - T) / 2.0;
    const double t1 = (T + mu * (N1 - N2)) / 2.0;
    EXPECT_NEAR(r.margin, margin, 1e-12 * T) << "T = " << T;
    EXPECT_NEAR(r.lambda[1], t1, 1e-12 * T) << "T = " << T;
    EXPECT_NEAR(r.lambda[1] + r.lambda[3], T, 1e-14 * T);
    EXPECT_NEAR(r.lambda[0], N1, 1e-14 * T);  // determinate here
    EXPECT_NEAR(r.lambda[2], N2, 1e-14 * T);
    EXPECT_LT(r.newton, 400);
  }
}

TEST(StickSplit, WithoutRedundancyTheSplitIsTheSolves) {
  // One contact: nothing to redistribute.
  Eigen::MatrixXd J(2, 3);
  J << 0.0, 1.0, 0.0, 1.0, 0.0, 0.05;
  StickSplit split;
  split.Prepare(J, {StickCone{0, {1}, 0.5}});
  EXPECT_FALSE(split.active());
  Eigen::VectorXd lambda(2);
  lambda << 2.0, 3.0;
  const StickSplit::Result r = split.Best(lambda);
  EXPECT_EQ(r.lambda, lambda);
  EXPECT_DOUBLE_EQ(r.margin, 0.5 * 2.0 - 3.0);
}

constexpr double kG = 9.81;

// A box of mass m on a free joint resting on the plane z = 0 on its four
// bottom corners (contacts box_ground:<corner>, restitution 0, mu), with
// gravity tilted by alpha (about y, or toward the azimuth beta from +x):
// a block on an incline.
Model TiltedBox(double m,
                const Eigen::Vector3d& h,
                double mu,
                double alpha,
                double beta = 0.0) {
  ModelBuilder b("stick_split_box");
  mb::Multibody s(mb::Dimension::kSpatial);
  const double ixx = m * (h[1] * h[1] + h[2] * h[2]) / 3.0;
  const double iyy = m * (h[0] * h[0] + h[2] * h[2]) / 3.0;
  const double izz = m * (h[0] * h[0] + h[1] * h[1]) / 3.0;
  const mb::BodyIndex box =
      s.AddBody("box", mb::SpatialBody(m, {0.0, 0.0, 0.0}, ixx, iyy, izz));
  s.AddJoint("base", mb::Joint::Free(), s.world(), s.BodyFrame(box));
  s.SetGravity({kG * std::sin(alpha) * std::cos(beta),
                kG * std::sin(alpha) * std::sin(beta), -kG * std::cos(alpha)});
  mb::Geometry g;
  g.name = "box";
  g.type = mb::GeometryType::kBox;
  g.size = h;
  g.collision = true;
  const mb::GeometryIndex gi = s.AddGeometry(box, g);
  s.AddContact("box_ground", gi, s.AddGroundPlane(),
               {.restitution = 0.0, .mu_static = mu});
  std::move(s).AddTo(&b);
  return std::move(b).Build();
}

// A box on a free joint resting on its bottom face, its centre of mass
// at height c.
InitialState BoxAtRest(double c) {
  InitialState x0;
  x0.q = Eigen::VectorXd::Zero(7);
  x0.q[2] = c;
  x0.q[3] = 1.0;
  x0.v = Eigen::VectorXd::Zero(6);
  return x0;
}

// The boxes' runs: CVODES BDF with Baumgarte at rtol 1e-10, atol 1e-12;
// four closed corners are 4 normal rows of rank 3, solved with
// minimum-norm multipliers (allow_redundant).
SimulationSummary RunBox(const Model& model,
                         const InitialState& x0,
                         double t_end,
                         double output_step = 0.01) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = output_step;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.integrator = Integrator::kCvodesBdf;
  o.formulation = Formulation::kBaumgarte;
  o.kkt.allow_redundant = true;
  return Simulate(model, x0, model.default_parameters(), o);
}

TEST(StickSplit, ABoxOnFourCornersBelowItsFrictionAngleDoesNotMove) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const double m = 2.0, mu = 0.5, alpha = std::atan(0.4);
  const Eigen::Vector3d h(0.2, 0.1, 0.05);
  const Model model = TiltedBox(m, h, mu, alpha);
  const InitialState x0 = BoxAtRest(h[2]);
  const SimulationSummary s = RunBox(model, x0, 1.0);
  ASSERT_TRUE(s.ok) << s.error;
  // The bound for a block below its friction angle (zero creep;
  // Baumgarte's correction leaves round-off, 2e-16 m).
  EXPECT_LE((s.final.q - x0.q).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT(s.final.v.cwiseAbs().maxCoeff(), 1e-12);
  const double margin = m * kG * (mu * std::cos(alpha) - std::sin(alpha)) / 4;
  int sticking = 0;
  for (const FrictionContactReport& f : s.contact.friction) {
    EXPECT_EQ(f.stick_to_slip, 0) << f.contact;
    if (!f.any_stick) continue;
    ++sticking;
    EXPECT_NEAR(f.min_stick_margin, margin, 1e-9 * m * kG) << f.contact;
  }
  EXPECT_EQ(sticking, 4);
  for (const ContactEvent& e : s.contact.events)
    EXPECT_NE(e.kind, "slip") << "at t = " << e.t;
}

// A cube (half size a) on an incline whose slope runs along its base's
// diagonal, tan alpha = 0.8 < mu = 1: the centre of pressure lies d = a
// tan alpha from the base's centre toward the downhill corner. The
// minimum-norm split of the normal forces, F/4 (1 + (x_c x_i + y_c y_i) /
// a^2), gives the uphill corner F/4 (1 - sqrt(2) d / a) = -0.033 F: a pull,
// though the centre of pressure is inside the base (d < sqrt(2) a), so
// that splits pushing at every corner exist. The release witnesses and the
// certificate read the stick test's split (docs/friction.md, "Redundant
// sticking contacts"): nothing releases, and the smallest closed normal
// force reported is a push. Every corner's margin is m g (mu cos alpha -
// sin alpha) / 4 (equal margins, tangential forces along the slope).
TEST(StickSplit, ACubeOnADiagonalInclineReportsAPushAtEveryCorner) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const double m = 2.0, a = 0.1, mu = 1.0, alpha = std::atan(0.8);
  const Model model =
      TiltedBox(m, Eigen::Vector3d(a, a, a), mu, alpha, 0.25 * M_PI);
  const InitialState x0 = BoxAtRest(a);
  const SimulationSummary s = RunBox(model, x0, 0.1);
  ASSERT_TRUE(s.ok) << s.error;
  for (const ContactEvent& e : s.contact.events)
    EXPECT_EQ(e.kind, "start") << e.kind << " at t = " << e.t;
  EXPECT_LE((s.final.q - x0.q).cwiseAbs().maxCoeff(), 1e-12);
  ASSERT_TRUE(s.contact.any_closed);
  EXPECT_GT(s.contact.min_closed_lambda, 0.0)
      << "'" << s.contact.row_min_closed_lambda
      << "' at t = " << s.contact.t_min_closed_lambda;
  const double margin = m * kG * (mu * std::cos(alpha) - std::sin(alpha)) / 4;
  int sticking = 0;
  for (const FrictionContactReport& f : s.contact.friction) {
    if (!f.any_stick) continue;
    ++sticking;
    EXPECT_NEAR(f.min_stick_margin, margin, 1e-9 * m * kG) << f.contact;
  }
  EXPECT_EQ(sticking, 4);
}

// A box launched sliding at v0 along x on its four bottom corners, mu =
// 0.5: the normal forces of the four corners are statically indeterminate
// (4 rows of rank 3), but the friction of a translation, -mu_k lambda_n
// along -x at every corner, sums to -mu m g whatever their split: it
// stops at t* = v0 / (mu g) after v0^2 / (2 mu g), the slip work equal to
// the kinetic energy m v0^2 / 2, and then sticks. (Its centre of pressure
// moves mu c = 0.025 m ahead of the centre, inside the half length 0.2
// m: it does not tip.) The slipping KKT system is singular here: the
// minimum-norm multipliers (src/kkt/kkt.cpp; docs/friction.md, "Redundant
// slipping contacts"). Before, the run ended at t = 0 with the slipping
// KKT system singular.
TEST(RedundantSlip, ABoxSlidingOnFourCornersStopsWhereTheClosedFormSays) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const double m = 2.0, mu = 0.5, v0 = 1.5;
  const Eigen::Vector3d h(0.2, 0.1, 0.05);
  const Model model = TiltedBox(m, h, mu, 0.0);
  InitialState x0 = BoxAtRest(h[2]);
  x0.v[0] = v0;
  const double t_star = v0 / (mu * kG);
  const SimulationSummary r = RunBox(model, x0, t_star + 0.1);
  ASSERT_TRUE(r.ok) << r.error;
  int sticks = 0;
  for (const ContactEvent& e : r.contact.events) {
    EXPECT_NE(e.kind, "release") << "at t = " << e.t;
    if (e.kind != "stick") continue;
    ++sticks;
    EXPECT_NEAR(e.t, t_star, 1e-9 * t_star);
  }
  EXPECT_GE(sticks, 1);
  const double x_star = v0 * v0 / (2.0 * mu * kG);
  EXPECT_NEAR(r.final.q[0], x_star, 1e-9 * x_star);
  EXPECT_LT(r.final.v.cwiseAbs().maxCoeff(), 1e-9);
  const double ke = 0.5 * m * v0 * v0;
  EXPECT_NEAR(-r.final.friction_work, ke, 1e-9 * ke);
}

// A box (half sizes a, a, c = 2a) on the ground, pushed at its centre of
// mass by a horizontal force F = k t along its base's diagonal (+x+y),
// mu = 1: the centre of pressure runs along the diagonal, d = F c / (m g)
// from the centre, and splits that push at every corner exist until it
// reaches the corner +x+y, d = sqrt(2) a, at t* = sqrt(2) a m g / (c k)
// (F / m g = 0.707 < mu: it does not slide). There the other three
// corners' normal forces reach zero together at the split that keeps
// every corner in its cone: one release witness fires, and the other two
// corners, unloaded to round-off, release with it (a tie of the frictional
// release's LCP opens a sticking contact the split leaves unloaded,
// src/contact/frictional_release.hpp) rather than fail their cones and
// slip with no normal force. The box then pivots on the corner +x+y.
TEST(FrictionalRelease, ABoxPushedAlongItsDiagonalLiftsThreeCornersAtOnce) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const double m = 2.0, a = 0.05, c = 0.1, mu = 1.0, k = 20.0;
  ModelBuilder b("pushed_box");
  mb::Multibody s(mb::Dimension::kSpatial);
  const mb::BodyIndex box = s.AddBody(
      "box", mb::SpatialBody(m, {0.0, 0.0, 0.0}, m * (a * a + c * c) / 3.0,
                             m * (a * a + c * c) / 3.0, m * 2.0 * a * a / 3.0));
  const mb::JointIndex base =
      s.AddJoint("base", mb::Joint::Free(), s.world(), s.BodyFrame(box));
  s.SetGravity({0.0, 0.0, -kG});
  for (int axis = 0; axis < 2; ++axis)
    s.AddActuator(
        axis == 0 ? "push_x" : "push_y", base,
        [k](const auto& x) { return k * x.t / std::sqrt(2.0); }, axis);
  mb::Geometry g;
  g.name = "box";
  g.type = mb::GeometryType::kBox;
  g.size = Eigen::Vector3d(a, a, c);
  g.collision = true;
  s.AddContact("box_ground", s.AddGeometry(box, g), s.AddGroundPlane(),
               {.restitution = 0.0, .mu_static = mu});
  std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  const InitialState x0 = BoxAtRest(c);
  const double t_star = std::sqrt(2.0) * a * m * kG / (c * k);
  const SimulationSummary r = RunBox(model, x0, t_star + 0.01);
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<std::string> released;
  for (const ContactEvent& e : r.contact.events) {
    EXPECT_NE(e.kind, "slip") << "at t = " << e.t;
    EXPECT_NE(e.kind, "impact") << "at t = " << e.t;
    if (e.kind != "release") continue;
    EXPECT_NEAR(e.t, t_star, 1e-9 * t_star);
    released.insert(released.end(), e.rows.begin(), e.rows.end());
  }
  std::sort(released.begin(), released.end());
  EXPECT_EQ(released,
            (std::vector<std::string>{"box_ground:+x-y-z", "box_ground:-x+y-z",
                                      "box_ground:-x-y-z"}));
  // Pivoting on the corner +x+y: the box has turned about the axis
  // (-1, 1, 0) / sqrt(2) (its top toward +x+y), and the corner has not
  // moved.
  const Eigen::Vector4d qb = r.final.q.segment<4>(3);
  EXPECT_GT((qb[2] - qb[1]) / std::sqrt(2.0), 1e-6);
  const Eigen::Quaterniond rot(qb[0], qb[1], qb[2], qb[3]);
  const Eigen::Vector3d corner(a, a, -c);
  const Eigen::Vector3d p = r.final.q.head<3>() + rot.normalized() * corner;
  EXPECT_LT((p - (x0.q.head<3>() + corner)).norm(), 1e-9);
}

TEST(FrictionalRelease, ATallBoxOnStickingCornersTipsAboutItsDownhillEdge) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const double m = 2.0, mu = 0.5, alpha = std::atan(0.4);
  const double a = 0.05, c = 0.2;
  const Model model = TiltedBox(m, Eigen::Vector3d(a, 0.05, c), mu, alpha);
  const InitialState x0 = BoxAtRest(c);
  const SimulationSummary s = RunBox(model, x0, 1e-3, 1e-3);
  ASSERT_TRUE(s.ok) << s.error;
  // The uphill corners (-x) release at the start, nothing else switches.
  std::vector<std::string> released;
  for (const ContactEvent& e : s.contact.events) {
    if (e.kind == "release") {
      EXPECT_EQ(e.t, 0.0);
      released.insert(released.end(), e.rows.begin(), e.rows.end());
    }
    EXPECT_NE(e.kind, "slip") << "at t = " << e.t;
    EXPECT_NE(e.kind, "impact") << "at t = " << e.t;
  }
  std::sort(released.begin(), released.end());
  EXPECT_EQ(released, (std::vector<std::string>{"box_ground:-x+y-z",
                                                "box_ground:-x-y-z"}));
  EXPECT_EQ(s.contact.releases, 1);
  // Pivoting from rest: omega_y(t) / t = theta'' to O(theta): the arm
  // grows with theta (d ln theta'' / d theta = 7.3 per rad), 6e-6 at
  // theta = 2.4e-6 rad.
  const double theta_dd = 3.0 * kG *
                          (c * std::sin(alpha) - a * std::cos(alpha)) /
                          (4.0 * (a * a + c * c));
  EXPECT_NEAR(s.final.v[4] / s.final.t, theta_dd, 1e-5 * theta_dd);
  std::cout.precision(12);
  std::cout << "tall box: omega_y / t = " << s.final.v[4] / s.final.t
            << " rad/s^2, closed form " << theta_dd << "\n";
}

}  // namespace stick_split_test
}  // namespace
}  // namespace daedalus
