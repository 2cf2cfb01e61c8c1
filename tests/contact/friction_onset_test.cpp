// A slip that starts from rest where other contacts hold part of its
// tangential motion (docs/friction.md, "Slip onset"): two point masses
// joined by a rigid rod of length L lie on the ground, each on its own 3D
// friction cone. Mass 1 (mu 1) sticks and mass 2 (mu 0.1) is pushed by a
// constant force F along y, the rod at theta0 = 0.1 rad from x. Mass 2 can
// only turn about mass 1, so it slips along the circle's tangent
// (-sin phi, cos phi), whatever the split of the sticking forces says:
//   m L phi'' = F cos phi - mu_2 m g,   mass 1 at rest,
// and the friction work is -mu_2 m g L (phi - theta0). The stick test's
// force at mass 2 points along x (its y row depends on the rod and mass 1's
// rows, so it carries none), 96 degrees from the tangent: taken as the slip
// direction, its witness d . v_t falls from zero at once (d . tangent =
// -sin theta0), as the pushed humanoid's heel corner's did. The tolerances:
// rtol 1e-12 over 0.5 s against an RK4 reference at h = 1e-4 (its error
// ~1e-15).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "contact/switch_counter.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace friction_onset_test {

constexpr double kM = 1.0, kG = 9.81, kL = 1.0, kF = 2.0;
constexpr double kMu1 = 1.0, kMu2 = 0.1, kTheta0 = 0.1;

Model TwoMassesOnARod() {
  ModelBuilder b("rod_on_ground");
  b.Coordinates({"x1", "y1", "z1", "x2", "y2", "z2"});
  b.KineticEnergy([](const auto& x) { return 0.5 * kM * x.v.squaredNorm(); });
  b.PotentialEnergy([](const auto& x) { return kM * kG * (x.q[2] + x.q[5]); });
  b.OtherLoads([](const auto& x) {
    using S = Scalar<decltype(x)>;
    VecX<S> f = VecX<S>::Zero(6);
    f[4] = S(kF);
    return f;
  });
  b.Holonomic("rod", [](const auto& x) {
    const auto dx = x.q[3] - x.q[0], dy = x.q[4] - x.q[1], dz = x.q[5] - x.q[2];
    return 0.5 * (dx * dx + dy * dy + dz * dz - kL * kL);
  });
  for (int i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i + 1);
    b.Holonomic("ground" + n, [i](const auto& x) { return x.q[3 * i + 2]; });
    b.Nonholonomic(
        "slip" + n,
        [i](const auto& x) {
          using S = Scalar<decltype(x)>;
          VecX<S> u(2);
          u << x.v[3 * i], x.v[3 * i + 1];
          return u;
        },
        2);
    ContactLaw law;
    law.friction = "slip" + n;
    law.mu_static = law.mu_kinetic = i == 0 ? kMu1 : kMu2;
    b.Unilateral("ground" + n, law);
  }
  return std::move(b).Build();
}

// phi(t_end) and phi'(t_end) of m L phi'' = F cos phi - mu_2 m g from
// (phi0, w0) at t0, RK4.
Eigen::Vector2d Reference(double t0, double phi0, double w0, double t_end) {
  auto f = [](const Eigen::Vector2d& y) {
    return Eigen::Vector2d(y[1],
                           (kF * std::cos(y[0]) - kMu2 * kM * kG) / (kM * kL));
  };
  Eigen::Vector2d y(phi0, w0);
  const int n = static_cast<int>(std::lround((t_end - t0) / 1e-4));
  const double h = (t_end - t0) / n;
  for (int k = 0; k < n; ++k) {
    const Eigen::Vector2d k1 = f(y), k2 = f(y + 0.5 * h * k1),
                          k3 = f(y + 0.5 * h * k2), k4 = f(y + h * k3);
    y += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  return y;
}

// The rod's angle and rate from a sample.
Eigen::Vector2d Angle(const Sample& x) {
  const double dx = x.q[3] - x.q[0], dy = x.q[4] - x.q[1];
  return Eigen::Vector2d(
      std::atan2(dy, dx),
      (dx * (x.v[4] - x.v[1]) - dy * (x.v[3] - x.v[0])) / (dx * dx + dy * dy));
}

TEST(FrictionOnset, ASlipHeldToACircleStartsAlongItsTangent) {
  const Model model = TwoMassesOnARod();
  InitialState x0;
  x0.q = Eigen::VectorXd::Zero(6);
  x0.q[3] = kL * std::cos(kTheta0);
  x0.q[4] = kL * std::sin(kTheta0);
  x0.v = Eigen::VectorXd::Zero(6);
  SimulationOptions o;
  o.t_end = 0.5;
  o.output_step = 0.05;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.integrator = Integrator::kCvodesBdf;
  o.formulation = Formulation::kProjection;
  daedalus::testing::Keep keep;
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  // Mass 1 sticks throughout, mass 2 slips from the start and never
  // reverses or sticks: one event, the start.
  ASSERT_EQ(s.contact.friction.size(), 2u);
  EXPECT_EQ(s.contact.friction[0].stick_to_slip, 0);
  EXPECT_EQ(s.contact.friction[1].slip_to_stick, 0);
  EXPECT_EQ(s.contact.friction[1].reversals, 0);
  ASSERT_EQ(s.contact.events.size(), 1u);
  EXPECT_EQ(s.contact.events.front().kind, "start");
  EXPECT_THAT(s.contact.events.front().closed,
              ::testing::ElementsAre("ground1:stick", "ground2:slip"));
  // Mass 1 held (the projection's round-off: 1e-12 m), mass 2 turning.
  EXPECT_LT(std::hypot(s.final.q[0], s.final.q[1]), 1e-12);
  ASSERT_GE(keep.samples.size(), 3u);
  const Sample& a = keep.samples[1];  // t = 0.05
  ASSERT_NEAR(a.t, 0.05, 1e-15);
  const Eigen::Vector2d pa = Angle(a);
  EXPECT_GT(pa[1], 0.0);  // counterclockwise, with F
  // From there on, the closed form's motion and friction work.
  const Eigen::Vector2d ref = Reference(a.t, pa[0], pa[1], o.t_end);
  const Eigen::Vector2d pe = Angle(s.final);
  EXPECT_NEAR(pe[0], ref[0], 1e-9);
  EXPECT_NEAR(pe[1], ref[1], 1e-9);
  EXPECT_NEAR(s.final.friction_work - a.friction_work,
              -kMu2 * kM * kG * kL * (ref[0] - pa[0]), 1e-9);
  EXPECT_NEAR(s.final.energy_residual, a.energy_residual, 1e-9);
  // The onset, against the closed form from rest: within 3e-7 rad at
  // 0.5 s (measured 2.0e-7; docs/friction.md, "Slip onset": the slip
  // direction follows v_t / |v_t| while |v_t| is at the integration
  // error's size).
  EXPECT_NEAR(pe[0], Reference(0.0, kTheta0, 0.0, o.t_end)[0], 3e-7);
}

// The friction stage's guard against witnesses that re-arm ever closer
// (switch_counter.hpp): more than 200 roots within 1e-6 of the horizon end
// the run; a stick-slip cycle's pace (roots 1e-5 of the horizon apart)
// never does, however many.
TEST(FrictionChatter, RootsCrowdingAMillionthOfTheHorizonEndTheRun) {
  internal::ChatterGuard slow(2.0);
  for (int i = 0; i < 5000; ++i) ASSERT_FALSE(slow.Exceeded(2e-5 * i)) << i;
  internal::ChatterGuard fast(2.0);
  EXPECT_DOUBLE_EQ(fast.window(), 2e-6);
  for (int i = 0; i <= internal::kMaxRootsInWindow; ++i)
    ASSERT_FALSE(fast.Exceeded(0.4 + 4e-11 * i)) << i;
  EXPECT_TRUE(fast.Exceeded(0.4 + 4e-11 * 201));
  EXPECT_EQ(fast.count(), 201);
  EXPECT_DOUBLE_EQ(fast.start(), 0.4);
  // A root past the window starts a new one.
  EXPECT_FALSE(fast.Exceeded(0.41));
  EXPECT_EQ(fast.count(), 0);
}

}  // namespace friction_onset_test
}  // namespace
}  // namespace daedalus
