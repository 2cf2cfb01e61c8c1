// The planar golf downswing: shaft-mode inertia against closed-form
// integrals, the energy account of a swing driven by a prescribed hand
// path, and the clubhead speed at impact.
#include "golf_swing.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "catalogue_support.hpp"
#include "daedalus/dynamics.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace golf_swing_test {

double Prm(const Problem& p, const char* name) {
  return p.model.default_parameters()[p.model.ParameterIndex(name)];
}

// With phi = (3x^2 - x^3)/2: int phi = 3/8, int x phi = 11/40,
// int phi^2 = 33/140 (x = s / lc on [0, 1]); the Gauss rule must give the
// uniform shaft's exact inertia.
TEST(GolfSwing, ShaftModeInertiaAndStiffnessMatchClosedForm) {
  const Problem p = problems::GolfSwingProblem();
  const double ma = Prm(p, "ma"), la = Prm(p, "la"), mc = Prm(p, "mc"),
               lc = Prm(p, "lc"), mh = Prm(p, "mh"), k = Prm(p, "k_shaft"),
               g = Prm(p, "g");
  Workspace ws(p.model);
  ws.SetParameters(p.model.default_parameters());
  const double ta = 0.3, tc = 1.1, eta = 0.01;
  ws.SetState(0.0, Eigen::Vector3d(ta, tc, 0.0), Eigen::Vector3d::Zero());
  EvaluateAll(&ws);
  Eigen::Matrix3d m;
  const double c = std::cos(ta - tc);
  m(0, 0) = ma * la * la / 3 + (mc + mh) * la * la;
  m(0, 1) = (mc * lc / 2 + mh * lc) * la * c;
  m(0, 2) = (mc * 3.0 / 8 + mh) * la * c;
  m(1, 1) = mc * lc * lc / 3 + mh * lc * lc;
  m(1, 2) = mc * lc * 11.0 / 40 + mh * lc;
  m(2, 2) = mc * 33.0 / 140 + mh;
  m(1, 0) = m(0, 1);
  m(2, 0) = m(0, 2);
  m(2, 1) = m(1, 2);
  EXPECT_TRUE(testing::NearRel(ws.M, m, testing::kRoundOff));
  // At rest h = dV/dq; its eta row: gravity on the bent shaft and head plus
  // the spring, g (3/8 mc + mh) sin(tc) + k eta.
  ws.SetState(0.0, Eigen::Vector3d(ta, tc, eta), Eigen::Vector3d::Zero());
  EvaluateAll(&ws);
  EXPECT_NEAR(ws.h[2], g * (mc * 3.0 / 8 + mh) * std::sin(tc) + k * eta,
              testing::kRoundOff * 10);
}

TEST(GolfSwing, HandPathPowerWristWorkAndImpactSpeed) {
  const Problem p = problems::GolfSwingProblem();
  SimulationOptions o = p.defaults;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  const Eigen::VectorXd prm = p.model.default_parameters();
  const testing::Run r = testing::RunProblem(p, o, prm);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  // Impact: the run stops where the club passes the vertical.
  ASSERT_EQ(r.summary.events.size(), 1u);
  EXPECT_EQ(r.summary.events[0].name, "impact");
  EXPECT_TRUE(r.summary.events[0].stopped);
  const Sample& f = r.samples.back();
  EXPECT_NEAR(f.q[1], 0.0, 1e-12);
  // The arm follows the prescribed hand path.
  const double top = Prm(p, "psi_top"), end = Prm(p, "psi_impact"),
               dur = Prm(p, "T_down");
  for (const Sample& s : r.samples)
    EXPECT_NEAR(s.q[0], problems::golf_detail::Psi(s.t, top, end, dur), 1e-9)
        << s.t;
  // The hand path's work, integrated as lambda J v and as -lambda Phi_t,
  // agrees (they are equal on the manifold), and it is the main source.
  const double hand = f.constraint_work[0];
  EXPECT_NEAR(f.ideal_constraint_work[0], hand, 1e-7 * std::abs(hand));
  EXPECT_GT(hand, 10.0);
  EXPECT_GT(f.input_work[0], 1.0);  // the wrist adds energy too
  // Energy account: E - E0 = hand path + wrist - shaft damping, to the
  // global error at rtol 1e-10 on a ~150 J scale.
  EXPECT_LT(r.summary.energy_residual_max, 1e-7);
  EXPECT_NEAR(f.energy - r.samples.front().energy,
              hand + f.input_work[0] - f.damping_loss, 1e-7);
  // Clubhead speed: the closed-form velocity agrees with a central
  // difference of the head position between regular samples (error
  // h^2 |r'''| / 6 ~ 2e-2 m/s at h = 1 ms).
  auto head = [&](const Sample& s) {
    const double la = prm[p.model.ParameterIndex("la")];
    const double lc = prm[p.model.ParameterIndex("lc")];
    return Eigen::Vector2d(la * std::sin(s.q[0]) + lc * std::sin(s.q[1]) +
                               s.q[2] * std::cos(s.q[1]),
                           -la * std::cos(s.q[0]) - lc * std::cos(s.q[1]) +
                               s.q[2] * std::sin(s.q[1]));
  };
  const size_t n = r.samples.size();
  ASSERT_GT(n, 10u);
  const Sample &a = r.samples[n - 4], &b = r.samples[n - 3],
               &c = r.samples[n - 2];
  const double fd = (head(c) - head(a)).norm() / (c.t - a.t);
  const double speed = problems::ClubheadSpeed(p.model, prm, b.q, b.v);
  EXPECT_NEAR(fd / speed, 1.0, 2e-3);
  const double impact_speed = problems::ClubheadSpeed(p.model, prm, f.q, f.v);
  // The lever: the head moves much faster than the hand.
  EXPECT_GT(impact_speed,
            3.0 * prm[p.model.ParameterIndex("la")] * std::abs(f.v[0]));
  // Without the wrist torque the same hand path delivers a slower head.
  Eigen::VectorXd off = prm;
  off[p.model.ParameterIndex("u_wrist")] = 0.0;
  const testing::Run r0 = testing::RunProblem(p, o, off);
  ASSERT_TRUE(r0.summary.ok) << r0.summary.error;
  const Sample& f0 = r0.samples.back();
  EXPECT_LT(problems::ClubheadSpeed(p.model, off, f0.q, f0.v), impact_speed);
}

}  // namespace golf_swing_test
}  // namespace
}  // namespace daedalus
