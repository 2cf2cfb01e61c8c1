// Impacts on isotropic 3D friction cones (docs/friction.md, "Impacts with
// friction"; src/contact/impulse.hpp, SolveConeImpulse):
//   one contact against the closed forms of an oblique impact: a point
//     mass (the normal impulse (1 + e) m v_n; stick with -m v_t inside the
//     cone, else -mu P_N along v_t), a sphere whose contact point's
//     tangential inertia is 2 m / 7;
//   coupled contacts (a box's corners, redundant normals): every Coulomb
//     and Newton condition, and no energy gained;
//   end to end: a sphere on a free joint dropped with horizontal velocity
//     and spin onto the ground: its velocities after the bounce (e = 0.5)
//     are the closed form's; with e = 0 it rolls at 5/7 of its horizontal
//     speed whatever mu is (the angular momentum about the contact point
//     is kept by the contact impulses), the energy lost booked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "contact/impulse.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace cone_impact_test {

// The closed forms are met to round-off; the cone solve is accepted at
// kLcpTolerance (1e-10) of the velocity scale and aims at 1e-13.
constexpr double kTol = 1e-11;

// One contact: rows (normal, t1, t2) of a body whose Delassus operator is
// diag(1 / m, 1 / m_t, 1 / m_t).
internal::ImpulseProblem OneContact(
    double m, double mt, double e, double mu, const Eigen::Vector3d& u) {
  internal::ImpulseProblem ip;
  ip.A = Eigen::Vector3d(1.0 / m, 1.0 / mt, 1.0 / mt).asDiagonal();
  ip.u = u;
  ip.e = {e};
  ip.mu = {mu};
  ip.poisson = {false};
  ip.tangent = {1};
  ip.tangent2 = {2};
  return ip;
}

// Newton's law with Coulomb's cone, closed form for one contact:
// P_N = (1 + e) m v_n; the sticking impulse -m_t u_t when it lies in the
// cone of mu, else -mu P_N u_t / |u_t|.
Eigen::Vector3d ClosedForm(
    double m, double mt, double e, double mu, const Eigen::Vector3d& u) {
  const double pn = -(1.0 + e) * m * u[0];
  const Eigen::Vector2d ut = u.tail<2>();
  Eigen::Vector2d pt = -mt * ut;
  if (pt.norm() > mu * pn) pt = -mu * pn * ut / ut.norm();
  return Eigen::Vector3d(pn, pt[0], pt[1]);
}

TEST(ConeImpulse, OneContactIsTheClosedFormStickingOrSliding) {
  const double m = 2.0;
  // A point mass (m_t = m) and a solid sphere's contact point (2 m / 7).
  for (double mt : {m, 2.0 * m / 7.0})
    for (double e : {0.0, 0.5, 1.0})
      for (double mu : {0.1, 0.4, 1.5})
        for (const Eigen::Vector2d& ut :
             {Eigen::Vector2d(0.3, -0.2), Eigen::Vector2d(-2.0, 1.1),
              Eigen::Vector2d(0.0, 4.0)}) {
          const Eigen::Vector3d u(-1.3, ut[0], ut[1]);
          const internal::ImpulseSolution s =
              internal::SolveImpulse(OneContact(m, mt, e, mu, u));
          ASSERT_TRUE(s.solved) << s.last.method << " " << s.last.residual;
          const Eigen::Vector3d want = ClosedForm(m, mt, e, mu, u);
          EXPECT_LT((s.P - want).cwiseAbs().maxCoeff(), kTol * m * 4.0)
              << "mt " << mt << " e " << e << " mu " << mu << " ut "
              << ut.transpose() << ": " << s.P.transpose() << " against "
              << want.transpose();
          EXPECT_EQ(s.law, "newton");
        }
}

// A frictionless contact, a planar one and a cone in one problem: the
// frictionless and planar ones alone are the LCP's exact solutions.
TEST(ConeImpulse, AFrictionlessContactBesideAConeIsNewtonsLaw) {
  internal::ImpulseProblem ip;
  // Two decoupled bodies: contact 0 frictionless (m = 1), contact 1 on a
  // cone (m = 2): rows (n0, n1, t1a, t1b).
  ip.A = Eigen::Vector4d(1.0, 0.5, 0.5, 0.5).asDiagonal();
  ip.u = Eigen::Vector4d(-2.0, -1.0, 3.0, 0.0);
  ip.e = {0.7, 0.2};
  ip.mu = {0.0, 0.5};
  ip.poisson = {false, false};
  ip.tangent = {-1, 2};
  ip.tangent2 = {-1, 3};
  const internal::ImpulseSolution s = internal::SolveImpulse(ip);
  ASSERT_TRUE(s.solved);
  EXPECT_NEAR(s.P[0], 1.7 * 2.0, kTol);
  EXPECT_NEAR(s.u_plus[0], 0.7 * 2.0, kTol);
  // Contact 1: P_N = 1.2 * 2 * 1 = 2.4; sticking needs 2 * 3 = 6 > 0.5 *
  // 2.4: it slides, P_t = -1.2 along x.
  EXPECT_NEAR(s.P[1], 2.4, kTol);
  EXPECT_NEAR(s.P[2], -1.2, kTol);
  EXPECT_NEAR(s.P[3], 0.0, kTol);
}

// The Coulomb and Newton conditions of a solution, checked one by one
// (not by the solver's own residual): returns the worst violation in
// velocity units (impulses times the contact's A_NN).
double WorstViolation(const internal::ImpulseProblem& ip,
                      const internal::ImpulseSolution& s) {
  const size_t m = ip.e.size();
  double worst = 0.0;
  for (size_t i = 0; i < m; ++i) {
    const Eigen::Index n = static_cast<Eigen::Index>(i);
    const double w = ip.A(n, n);
    const double pn = s.P[n];
    const double xi = s.u_plus[n] + ip.e[i] * ip.u[n];
    worst = std::max({worst, -w * pn, -xi, std::abs(std::min(w * pn, xi))});
    Eigen::Vector2d pt(s.P[ip.tangent[i]], s.P[ip.tangent2[i]]);
    Eigen::Vector2d ut(s.u_plus[ip.tangent[i]], s.u_plus[ip.tangent2[i]]);
    const double mu = ip.mu[i];
    worst = std::max(worst, w * (pt.norm() - mu * pn));
    // Sliding: the impulse on the cone's edge against the slip left (and
    // a slip only where the contact is pressed).
    if (ut.norm() > 1e-9 && pn > 1e-12)
      worst = std::max(worst, w * (pt + mu * pn * ut / ut.norm()).norm());
  }
  return worst;
}

// A box (2 x 1 x 0.5, m = 3) striking the ground flat on its four bottom
// corners, tilted slightly or not, sliding and spinning: the normals are
// redundant (rank 3 of 4 when flat), the impulses not unique, the
// conditions all met, and the impact never gains energy.
TEST(ConeImpulse, FourCornersOfABoxMeetCoulombAndNewtonAndDissipate) {
  const double m = 3.0, a = 1.0, b = 0.5, h = 0.25;
  const Eigen::Vector3d inertia(m * (4 * b * b + 4 * h * h) / 12.0,
                                m * (4 * a * a + 4 * h * h) / 12.0,
                                m * (4 * a * a + 4 * b * b) / 12.0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  int sliding = 0, sticking = 0;
  for (double tilt : {0.0, 0.05})
    for (double mu : {0.2, 0.8})
      for (int trial = 0; trial < 6; ++trial) {
        const Eigen::Matrix3d R =
            Eigen::AngleAxisd(tilt, Eigen::Vector3d(1, 2, 0).normalized())
                .toRotationMatrix();
        // Rows: 4 normals (z), then each corner's x and y rows; columns
        // (v, w) with w in the world.
        Eigen::MatrixXd J(12, 6);
        int k = 0;
        for (double sx : {-1.0, 1.0})
          for (double sy : {-1.0, 1.0}) {
            const Eigen::Vector3d r = R * Eigen::Vector3d(sx * a, sy * b, -h);
            Eigen::Matrix3d cross;  // -[r]x: the point's velocity from w
            cross << 0, r.z(), -r.y(), -r.z(), 0, r.x(), r.y(), -r.x(), 0;
            Eigen::Matrix<double, 3, 6> Jp;
            Jp << Eigen::Matrix3d::Identity(), cross;
            J.row(k) = Jp.row(2);
            J.row(4 + 2 * k) = Jp.row(0);
            J.row(5 + 2 * k) = Jp.row(1);
            ++k;
          }
        const Eigen::Matrix3d Iw = R * inertia.asDiagonal() * R.transpose();
        Eigen::MatrixXd Minv = Eigen::MatrixXd::Zero(6, 6);
        Minv.topLeftCorner(3, 3) = Eigen::Matrix3d::Identity() / m;
        Minv.bottomRightCorner(3, 3) =
            Iw.ldlt().solve(Eigen::Matrix3d::Identity());
        Eigen::VectorXd v(6);
        v << 2.0 * U(rng), 2.0 * U(rng), -1.0 - 0.2 * std::abs(U(rng)),
            0.1 * U(rng), 0.1 * U(rng), 1.5 * U(rng);
        internal::ImpulseProblem ip;
        ip.A = J * Minv * J.transpose();
        ip.u = J * v;
        ip.e = {0.3, 0.3, 0.3, 0.3};
        ip.mu = {mu, mu, mu, mu};
        ip.poisson = {false, false, false, false};
        ip.tangent = {4, 6, 8, 10};
        ip.tangent2 = {5, 7, 9, 11};
        // Only the corners that approach touch an impact; here all four.
        const internal::ImpulseSolution s = internal::SolveImpulse(ip);
        ASSERT_TRUE(s.solved)
            << "tilt " << tilt << " mu " << mu << " trial " << trial << ": "
            << s.last.method << ", residual " << s.last.residual;
        const double vs = ip.u.cwiseAbs().maxCoeff();
        EXPECT_LT(WorstViolation(ip, s), 1e-10 * vs)
            << "tilt " << tilt << " mu " << mu << " trial " << trial;
        const Eigen::VectorXd dv = Minv * J.transpose() * s.P;
        Eigen::MatrixXd M = Eigen::MatrixXd::Zero(6, 6);
        M.topLeftCorner(3, 3) = m * Eigen::Matrix3d::Identity();
        M.bottomRightCorner(3, 3) = Iw;
        const double gain = dv.dot(M * (v + 0.5 * dv));
        EXPECT_LE(gain, 1e-12 * v.dot(M * v));
        bool slides = false;
        for (int c = 0; c < 4; ++c)
          slides = slides ||
                   std::hypot(s.u_plus[4 + 2 * c], s.u_plus[5 + 2 * c]) > 1e-9;
        (slides ? sliding : sticking) += 1;
      }
  // Both regimes were exercised.
  EXPECT_GT(sliding, 0);
  EXPECT_GT(sticking, 0);
}

// A sphere (m = 1, r = 0.1, inertia 2/5 m r^2) on a free joint, dropped
// from 0.2 m above the ground with horizontal velocity (vx, vy), no spin.
struct Drop {
  SimulationSummary sum;
  double t_impact = 0.0, vn = 0.0;
};

Drop DropSphere(double e, double mu, double vx, double vy, double t_end) {
  const double m = 1.0, r = 0.1, g = 9.81, h = 0.2;
  ModelBuilder b("cone_impact_sphere");
  mb::Multibody s(mb::Dimension::kSpatial);
  const double i = 0.4 * m * r * r;
  const mb::BodyIndex ball =
      s.AddBody("ball", mb::SpatialBody(m, {0.0, 0.0, 0.0}, i, i, i));
  s.AddJoint("base", mb::Joint::Free(), s.world(), s.BodyFrame(ball));
  s.SetGravity(mb::PVec(0.0, 0.0, -g));
  mb::Geometry sphere;
  sphere.name = "ball";
  sphere.type = mb::GeometryType::kSphere;
  sphere.size = Eigen::Vector3d(r, 0.0, 0.0);
  sphere.collision = true;
  const mb::GeometryIndex gs = s.AddGeometry(ball, sphere);
  const mb::GeometryIndex ground = s.AddGroundPlane();
  s.AddContact("ground", gs, ground, {.restitution = e, .mu_static = mu});
  std::move(s).AddTo(&b);
  const Model model = std::move(b).Build();
  InitialState x0;
  x0.q = Eigen::VectorXd::Zero(7);
  x0.q[2] = r + h;
  x0.q[3] = 1.0;
  x0.v = Eigen::VectorXd::Zero(6);
  x0.v[0] = vx;
  x0.v[1] = vy;
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = 0.01;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  Drop d;
  d.sum = Simulate(model, x0, model.default_parameters(), o);
  d.t_impact = std::sqrt(2.0 * h / g);
  d.vn = g * d.t_impact;
  return d;
}

// e = 0.5: after the bounce, mid-flight, the closed form of the oblique
// impact (sliding at mu = 0.05, sticking at mu = 1).
TEST(ConeImpact, ASphereBouncesOffTheGroundWithTheClosedFormVelocities) {
  const double m = 1.0, r = 0.1, g = 9.81, e = 0.5, vx = 0.6, vy = -0.8;
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const double t_impact = std::sqrt(2.0 * 0.2 / g);
  const double t_flight = 2.0 * e * g * t_impact / g;
  const double t_end = t_impact + 0.5 * t_flight;
  for (double mu : {0.05, 1.0}) {
    const Drop run = DropSphere(e, mu, vx, vy, t_end);
    ASSERT_TRUE(run.sum.ok) << run.sum.error;
    std::vector<ContactEvent> impacts;
    for (const ContactEvent& ev : run.sum.contact.events)
      if (ev.kind == "impact") impacts.push_back(ev);
    ASSERT_EQ(impacts.size(), 1u);
    EXPECT_NEAR(impacts[0].t, run.t_impact, 1e-9);
    const Eigen::Vector3d P =
        ClosedForm(m, 2.0 * m / 7.0, e, mu, Eigen::Vector3d(-run.vn, vx, vy));
    const Eigen::VectorXd& v = run.sum.final.v;
    EXPECT_NEAR(v[0], vx + P[1] / m, 1e-9);
    EXPECT_NEAR(v[1], vy + P[2] / m, 1e-9);
    EXPECT_NEAR(v[2], e * run.vn - g * (t_end - run.t_impact), 1e-9);
    // The impulse r_c x P_t, r_c = (0, 0, -r), spins the ball about the
    // horizontal axes; isotropic, its body-frame angular velocity is the
    // world's and stays constant in flight.
    const double I = 0.4 * m * r * r;
    EXPECT_NEAR(v[3], r * P[2] / I, 1e-8);
    EXPECT_NEAR(v[4], -r * P[1] / I, 1e-8);
    EXPECT_NEAR(v[5], 0.0, 1e-9);
    // The impact's kinetic energy loss is booked: the balance holds.
    EXPECT_NEAR(run.sum.final.energy_residual, 0.0, 1e-9);
    const bool sticks = mu == 1.0;
    std::cout << "mu " << mu << (sticks ? " (sticks)" : " (slides)")
              << ": impulse (" << P.transpose() << "), v+ error "
              << v[0] - (vx + P[1] / m) << ", energy residual "
              << run.sum.final.energy_residual << " J\n";
  }
}

// e = 0: the ball stays on the ground and ends rolling at 5/7 of its
// horizontal velocity, direction kept, whether it stuck at the impact
// (mu = 1) or slid through it and on until it rolled (mu = 0.05).
TEST(ConeImpact, ASphereThatLandsRollsAtFiveSeventhsWhateverMu) {
  DAEDALUS_RELEASE_BUILD_ONLY("a quaternion model on dual numbers");
  const double vx = 1.2, vy = 0.5;
  // mu = 0.05 slides through the impact and rolls from about 0.76 s.
  for (double mu : {0.05, 1.0}) {
    const Drop run = DropSphere(0.0, mu, vx, vy, 1.0);
    ASSERT_TRUE(run.sum.ok) << run.sum.error;
    const Eigen::VectorXd& v = run.sum.final.v;
    EXPECT_NEAR(v[0], 5.0 * vx / 7.0, 1e-9);
    EXPECT_NEAR(v[1], 5.0 * vy / 7.0, 1e-9);
    EXPECT_NEAR(v[2], 0.0, 1e-9);
    EXPECT_NEAR(run.sum.final.energy_residual, 0.0, 1e-9);
    // The energy the impact removed: the normal kinetic energy, and at mu
    // = 1 (sticking) the tangential energy beyond rolling's.
    if (mu == 1.0) {
      const double e0 = 0.5 * (vx * vx + vy * vy + run.vn * run.vn);
      const double e_roll =
          0.5 * (1.0 + 0.4) * (25.0 / 49.0) * (vx * vx + vy * vy);
      EXPECT_NEAR(run.sum.final.impact_work, e_roll - e0, 1e-9 * e0);
    }
    std::cout << "mu " << mu << ": rolls at (" << v[0] << ", " << v[1]
              << "), 5/7 error " << v[0] - 5.0 * vx / 7.0 << "; "
              << run.sum.contact.events.size() << " contact events\n";
  }
}

}  // namespace cone_impact_test
}  // namespace
}  // namespace daedalus
