// The club striking the ball (problems/golf_impact.hpp, issue 36):
//   - a free head of the regulation masses: the ball leaves with
//     (1 + e) mh / (mh + mb) of the head's speed and the impact loses
//     mu (1 - e^2) v0^2 / 2, mu = mh mb / (mh + mb) (closed forms);
//   - golf_impact: one strike, Newton's law on its row, the ball's momentum
//     equal to the impulses it took, a smash factor above the free head's
//     (the club's effective mass exceeds the head's), the energy balance
//     with the strike's loss booked as impact work;
//   - the gradient of the ball's speed across the strike (forward and
//     adjoint) against central differences of whole runs.
#include "golf_impact.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace golf_impact_test {

// Velocities after one impulse LCP: round-off of a few dense solves.
constexpr double kImpulseRoundOff = 1e-12;
// The energy balance's residual at the problem's rtol 1e-10: the run's
// error, within 1e-9 of the 160 J the hand path and the wrist feed in
// (measured 1.4e-7 J).
constexpr double kEnergyTol = 1.6e-7;

std::vector<ContactEvent> Impacts(const SimulationSummary& s) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "impact") out.push_back(e);
  return out;
}

// The constraint row of a one-row constraint (the impact records are
// indexed by the model's constraint rows, in declaration order).
int Row(const Model& model, const std::string& name) {
  int row = 0;
  for (const internal::ConstraintDecl& c : model.constraints()) {
    if (c.name == name) return row;
    row += c.rows;
  }
  ADD_FAILURE() << "no constraint " << name;
  return 0;
}

// A head (mass mh) at speed v0 striking a ball (mass mb) at rest, along a
// line: the impulse law alone, with golf_impact's masses and restitution.
Problem FreeHead(double mh, double mb, double e, double v0) {
  ModelBuilder b("free_head");
  b.Coordinates({"x_h", "x_b"});
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * mh * x.v[0] * x.v[0] + 0.5 * mb * x.v[1] * x.v[1];
  });
  b.Holonomic("strike", [](const auto& x) { return x.q[1] - x.q[0]; });
  b.Unilateral("strike", ContactLaw{.restitution = e});
  Problem p;
  p.model = std::move(b).Build();
  p.initial = [=](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::Vector2d(-0.01, 0.0);
    s.v = Eigen::Vector2d(v0, 0.0);
    return s;
  };
  p.defaults.t_end = 0.01;
  p.defaults.output_step = 0.001;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return p;
}

TEST(GolfImpact, FreeHeadGivesTheClosedFormSmashFactor) {
  const Problem gi = problems::GolfImpactProblem();
  const Eigen::VectorXd gp = gi.model.default_parameters();
  const double mh = gp[gi.model.ParameterIndex("mh")];
  const double mb = gp[gi.model.ParameterIndex("m_ball")];
  const double e = gp[gi.model.ParameterIndex("e")];
  const double v0 = 45.0;
  const Problem p = FreeHead(mh, mb, e, v0);
  const Eigen::VectorXd prm = p.model.default_parameters();
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, p.defaults);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(Impacts(s).size(), 1u);
  const double smash = s.final.v[1] / v0;
  const double exact = problems::FreeHeadSmashFactor(mh, mb, e);
  EXPECT_NEAR(smash, exact, kImpulseRoundOff * exact);
  EXPECT_NEAR(exact, 1.8220 * 0.2 / 0.24593, 1e-12);  // 1.48172...
  const double mu = mh * mb / (mh + mb);
  const double loss = 0.5 * mu * (1.0 - e * e) * v0 * v0;
  EXPECT_NEAR(Impacts(s)[0].energy_change, -loss, kImpulseRoundOff * loss);
  std::printf("free head: smash factor %.15f (closed form %.15f)\n", smash,
              exact);
}

struct Strike {
  Problem p = problems::GolfImpactProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  double mb = prm[p.model.ParameterIndex("m_ball")];
  double mh = prm[p.model.ParameterIndex("mh")];
  double e = prm[p.model.ParameterIndex("e")];
};

TEST(GolfImpact, TheStrikeObeysTheImpulseLawAndTheEnergyBalance) {
  const Strike g;
  const SimulationSummary s =
      Simulate(g.p.model, g.p.initial(g.prm), g.prm, g.p.defaults);
  ASSERT_TRUE(s.ok) << s.error;
  const std::vector<ContactEvent> hits = Impacts(s);
  ASSERT_EQ(hits.size(), 1u) << "one strike";
  const ContactEvent& hit = hits[0];
  const int strike = Row(g.p.model, "strike"), tee = Row(g.p.model, "tee");
  // Near golf_swing's impact (the club vertical at 0.2833 s), where the
  // ball was put.
  EXPECT_NEAR(hit.t, 0.2833, 2e-4);
  // Newton's law on the strike: the normal velocity reverses with e.
  ASSERT_LT(hit.u_minus[strike], 0.0);
  EXPECT_NEAR(hit.u_plus[strike], -g.e * hit.u_minus[strike],
              kImpulseRoundOff * std::abs(hit.u_minus[strike]));
  EXPECT_GT(hit.impulse[strike], 0.0);
  EXPECT_GE(hit.impulse[tee], 0.0);
  // The ball leaves along the tee (frictionless) with the momentum the
  // strike's impulse gave it along x, and keeps that speed.
  const double vx = s.final.v[3], vy = s.final.v[4];
  EXPECT_NEAR(vy, 0.0, 1e-9);
  const double speed = std::abs(vx);
  // The strike's normal at the impact is the head-to-ball direction; its
  // x part is what the tee does not take. Recover the head's effective
  // mass along the normal from Newton's law and the ball's speed:
  //   ball normal speed w = (1 + e) m_eff / (m_eff + mb) * approach,
  // and the ball's normal speed is its speed over |n_x|.
  const double approach = -hit.u_minus[strike];
  const double free_smash = problems::FreeHeadSmashFactor(g.mh, g.mb, g.e);
  const double smash = speed / approach;
  // The shaft, the wrist and the hand path add to the head's mass: the
  // ball leaves faster than a free head would send it.
  EXPECT_GT(smash, free_smash);
  EXPECT_LT(smash, 1.0 + g.e);  // the infinitely heavy club's bound
  // The energy balance: the strike's loss is impact work.
  EXPECT_LT(hit.energy_change, 0.0);
  EXPECT_NEAR(s.contact.impact_work, hit.energy_change, 1e-15);
  EXPECT_LT(s.energy_residual_max, kEnergyTol);
  std::printf(
      "golf_impact: strike at %.6f s, approach %.4f m/s, ball %.4f m/s, "
      "smash factor %.4f (free head %.4f), impact work %.4f J\n",
      hit.t, approach, speed, smash, free_smash, hit.energy_change);
}

std::string Numbers(const Eigen::VectorXd& x) {
  std::string t;
  char b[32];
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    std::snprintf(b, sizeof b, " %.9g", x[i]);
    t += b;
  }
  return t;
}

double BallSpeed(const Strike& g, const Eigen::VectorXd& prm) {
  const SimulationSummary s =
      Simulate(g.p.model, g.p.initial(prm), prm, g.p.defaults);
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_EQ(Impacts(s).size(), 1u);
  for (const FunctionalValue& f : s.functionals)
    if (f.name == "ball_speed") return f.value;
  ADD_FAILURE() << "no functional ball_speed";
  return 0.0;
}

// The gradient of ball_speed; `value` its value.
Eigen::VectorXd Gradient(const Strike& g,
                         SensMethod m,
                         const std::vector<std::string>& params,
                         double* value) {
  SimulationOptions o = g.p.defaults;
  o.sensitivity.method = m;
  o.sensitivity.parameters = params;
  o.sensitivity.functional = "ball_speed";
  o.sensitivity.initial_tangent = InitialStateTangent(g.p, g.prm);
  const SimulationSummary s = Simulate(g.p.model, g.p.initial(g.prm), g.prm, o);
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.sensitivities.functionals.size(), 1u);
  if (s.sensitivities.functionals.size() != 1u) return {};
  for (const FunctionalValue& f : s.functionals)
    if (f.name == "ball_speed") *value = f.value;
  return s.sensitivities.functionals[0].second;
}

// How the ball's speed changes with the swing, the impact law and the
// ball: the gradient of ball_speed at the end of the run, across the
// strike, from the forward sensitivities (CVODES BDF) and the adjoint
// (CVODES), against each other, d/de against its closed form, and
// against fourth-order
// central differences (8 (f(h) - f(-h)) - (f(2h) - f(-2h))) / (12 h) of
// whole runs with h = 1e-3 |p|. Measured: the three agree to 4e-8 of the
// largest entry (176 m/s per kg); the bound is 1e-6 of it, the
// differences' own error (their truncation O(h^4) and the runs' error at
// rtol 1e-10 over h).
TEST(GolfImpact, BallSpeedGradientCrossesTheStrike) {
  const Strike g;
  DAEDALUS_RELEASE_BUILD_ONLY(
      "golf_impact runs on dual numbers, 15 times slower there; the "
      "sensitivities across impacts are checked by contact_sensitivity_test");
  const std::vector<std::string> params = {"T_down", "e", "m_ball"};
  const Eigen::Index ie = 1;
  double speed = 0.0, speed_adjoint = 0.0;
  const Eigen::VectorXd fwd = Gradient(g, SensMethod::kForward, params, &speed);
  const Eigen::VectorXd adj =
      Gradient(g, SensMethod::kAdjoint, params, &speed_adjoint);
  ASSERT_EQ(fwd.size(), static_cast<Eigen::Index>(params.size()));
  ASSERT_EQ(adj.size(), fwd.size());
  const double scale = fwd.cwiseAbs().maxCoeff();
  for (Eigen::Index i = 0; i < fwd.size(); ++i)
    EXPECT_NEAR(adj[i], fwd[i], 1e-6 * scale)
        << "d ball_speed / d " << params[static_cast<size_t>(i)];
  // The impulses of the strike and the tee are (1 + e) times an
  // e-independent vector (Newton's law on the strike, u+ = 0 on the closed
  // tee, the ball at rest before), and the ball keeps its speed after:
  // d ball_speed / de = ball_speed / (1 + e).
  EXPECT_NEAR(speed_adjoint, speed, 1e-9 * speed);
  EXPECT_NEAR(fwd[ie], speed / (1.0 + g.e), 1e-8 * fwd[ie]);
  EXPECT_NEAR(adj[ie], speed / (1.0 + g.e), 1e-8 * fwd[ie]);
  std::printf("golf_impact: d ball_speed/dp forward%s\n  adjoint%s\n",
              Numbers(fwd).c_str(), Numbers(adj).c_str());
  // (d/de has its closed form above: differences for the other two.)
  Eigen::VectorXd diff = fwd;
  for (size_t i : {size_t{0}, size_t{2}}) {
    const int k = g.p.model.ParameterIndex(params[i]);
    const double h = 1e-3 * std::abs(g.prm[k]);
    double f[4];
    int j = 0;
    for (double m : {1.0, -1.0, 2.0, -2.0}) {
      Eigen::VectorXd x = g.prm;
      x[k] += m * h;
      f[j++] = BallSpeed(g, x);
    }
    diff[static_cast<Eigen::Index>(i)] =
        (8.0 * (f[0] - f[1]) - (f[2] - f[3])) / (12.0 * h);
  }
  for (Eigen::Index i = 0; i < fwd.size(); ++i)
    EXPECT_NEAR(fwd[i], diff[i], 1e-6 * scale)
        << "d ball_speed / d " << params[static_cast<size_t>(i)];
  std::printf("  differences (T_down, m_ball) %.9g %.9g\n", diff[0], diff[2]);
}

}  // namespace golf_impact_test
}  // namespace
}  // namespace daedalus
