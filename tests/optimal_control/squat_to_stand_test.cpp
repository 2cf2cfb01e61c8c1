// squat_to_stand (problems/squat_to_stand.hpp): the anthropometry against
// Winter's HAT, the model's gravity forces and inertia against closed
// forms, the default torques holding the squat, the shooting NLP's gradients
// against central differences, and a coarse minimum-effort rise to standing
// that converges to its end conditions within the joint ranges
// (docs/optimal_control.md, "squat_to_stand").
#include "squat_to_stand.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/optimal_control.hpp"
#include "daedalus/run.hpp"
#include "optimal_control/shooting.hpp"
#include "optimal_control/shooting_differences.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace squat_to_stand_test {

using problems::kSquatJoints;
namespace sq = problems::squat_detail;

constexpr double kDeg = 3.14159265358979323846 / 180.0;

// Pelvis and upper body together are Winter's HAT (Table 4.1: 0.678 M, COM
// 0.626 of the hip-shoulder distance above the hip, radius of gyration
// 0.496 of it) when the lumbar joint is straight: mass, first and second
// moments about the hip, to round-off.
TEST(SquatToStand, PelvisAndUpperBodyAreWintersHat) {
  const double M = 75.0, H = 1.75;
  const sq::Segments<double> s = sq::Anthropometry(M, H, 0.25);
  const double trunk = 0.288 * H;
  const double m = s.m[2] + s.m[3];
  const double y_p = s.c[2], y_u = s.L[2] + s.c[3];  // above the hip
  EXPECT_NEAR(m, 0.678 * M, 1e-12);
  EXPECT_NEAR((s.m[2] * y_p + s.m[3] * y_u) / m, 0.626 * trunk, 1e-12);
  const double y = 0.626 * trunk;
  const double I =
      s.I[3] + s.m[2] * (y_p - y) * (y_p - y) + s.m[3] * (y_u - y) * (y_u - y);
  EXPECT_NEAR(I, m * (0.496 * trunk) * (0.496 * trunk), 1e-12);
  EXPECT_GT(s.I[3], 0.0);
  // The legs: both shanks and thighs, 0.093 M and 0.2 M in all.
  EXPECT_NEAR(s.m[0] + s.m[1] + m, (2 * 0.0465 + 2 * 0.100 + 0.678) * M, 1e-12);
}

sq::Params ParamsOf(const Model& model) {
  sq::Params P;
  P.mass.index = model.ParameterIndex("mass");
  P.height.index = model.ParameterIndex("height");
  P.g.index = model.ParameterIndex("g");
  P.lumbar_fraction.index = model.ParameterIndex("lumbar_fraction");
  for (size_t k = 0; k < 4; ++k)
    P.squat[k].index =
        model.ParameterIndex(std::string("squat_") + kSquatJoints[k]);
  return P;
}

// The model's bias force at rest, h = dV/dq (automatic differentiation of
// V), against the closed-form moments of the weights above each joint
// (GravityTorques), at the squat and at three seeded postures; its default
// inputs B u at the squat are the same torques. The mass matrix against two
// closed forms: the lumbar entry I_3 + m_3 c_3^2 (the upper body turning
// about L4-L5) at any posture, and the ankle entry upright, sum_i I_i +
// m_i y_i^2 (every segment turning about the ankle, y_i its COM height).
// Round-off: torques of about 100 N m from a few dozen operations.
TEST(SquatToStand, GravityAndInertiaMatchClosedForms) {
  const Problem p = problems::SquatToStandProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const sq::Params P = ParamsOf(p.model);
  const sq::Segments<double> s =
      sq::Anthropometry(prm[P.mass], prm[P.height], prm[P.lumbar_fraction]);
  Workspace ws(p.model);
  ws.SetParameters(prm);
  const double tol = 1e3 * testing::kRoundOff;  // 1.4e-11 relative
  std::vector<Eigen::VectorXd> postures = {p.initial(prm).q};
  std::mt19937 rng(7);
  for (int i = 0; i < 3; ++i)
    postures.push_back(testing::RandomVector(rng, 4, -1.0, 1.0));
  for (const Eigen::VectorXd& q : postures) {
    ws.SetState(0.0, q, Eigen::VectorXd::Zero(4));
    EvaluateAll(&ws);
    const Eigen::Vector4d closed = sq::GravityTorques(s, prm[P.g], q);
    ASSERT_GT(closed.cwiseAbs().maxCoeff(), 1.0);
    EXPECT_TRUE(testing::NearRel(ws.h, closed, tol)) << q.transpose();
    EXPECT_NEAR(ws.M(3, 3), s.I[3] + s.m[3] * s.c[3] * s.c[3], tol);
  }
  ws.SetState(0.0, p.initial(prm).q, Eigen::VectorXd::Zero(4));
  EvaluateAll(&ws);
  EXPECT_TRUE(testing::NearRel(ws.Bu, ws.h, tol));
  ws.SetState(0.0, Eigen::VectorXd::Zero(4), Eigen::VectorXd::Zero(4));
  EvaluateAll(&ws);
  double m00 = 0.0, base = 0.0;
  for (size_t i = 0; i < 4; ++i) {
    const double y = base + s.c[i];
    m00 += s.I[i] + s.m[i] * y * y;
    base += s.L[i];
  }
  EXPECT_NEAR(ws.M(0, 0), m00, tol * m00);
}

// The default torques are the closed-form moments of the weights above each
// joint at the squat (GravityTorques). If they equal the model's dV/dq
// (formed by automatic differentiation of V), the squat is an equilibrium
// and the body stays at rest; a wrong sign or lever arm would accelerate a
// joint at about g / L ~ 20 rad/s^2, 6 rad/s after 0.3 s. The equilibrium is
// unstable (an inverted chain, time constant about sqrt(L / g) ~ 0.2 s), so
// the integration error (rtol 1e-10) grows by about e^1.5 over the run;
// bound 1e-6 rad/s.
TEST(SquatToStand, DefaultTorquesHoldTheSquat) {
  const Problem p = problems::SquatToStandProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  SimulationOptions sim = p.defaults;
  sim.t_end = 0.3;
  sim.rtol = 1e-10;
  sim.atol = 1e-12;
  const InitialState x0 = p.initial(prm);
  const SimulationSummary s = Simulate(p.model, x0, prm, sim);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_LE((s.final.q - x0.q).lpNorm<Eigen::Infinity>(), 1e-6);
  EXPECT_LE(s.final.v.lpNorm<Eigen::Infinity>(), 1e-6);
  // The torques are not zero: the knee, hip and lumbar extensors hold the
  // squat (negative), the ankle holds the body from falling back.
  const Eigen::Vector4d tau = sq::HoldTorques<double>(prm, ParamsOf(p.model));
  EXPECT_GT(tau[0], 10.0);
  for (int k = 1; k < 4; ++k) EXPECT_LT(tau[k], -10.0) << kSquatJoints[k];
}

std::vector<double> Grid(double a, double b, int n) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) t.push_back(a + (b - a) * i / (n - 1));
  return t;
}

// The rise on a coarse grid: cubic B-splines on `knots` knots per joint,
// the torques as fractions u of their peaks (|u| <= 1, effort int u^2 dt), the
// standing posture (0, 5, 5, 0 deg) at rest at 1 s, the joint ranges as path
// constraints (examples/optimal_control/ squat_to_stand.json is the same on 11
// knots).
constexpr double kStand[4] = {0.0, 5.0 * kDeg, 5.0 * kDeg, 0.0};
constexpr double kLower[4] = {-50.0 * kDeg, 0.0, -15.0 * kDeg, -30.0 * kDeg};
constexpr double kUpper[4] = {20.0 * kDeg, 130.0 * kDeg, 125.0 * kDeg,
                              75.0 * kDeg};

OptimalControlProblem Rise(const Problem& p, int knots, int path_samples) {
  OptimalControlProblem ocp;
  // Start from the torques holding the squat, as fractions of the peaks
  // (exactly: the squat is an unstable equilibrium, time constant 1/19 s,
  // and rounded torques make the first trajectory fall).
  const Eigen::Vector4d hold =
      sq::HoldTorques<double>(p.model.default_parameters(), ParamsOf(p.model))
          .cwiseQuotient(Eigen::Map<const Eigen::Vector4d>(sq::kTauMax.data()));
  for (int k = 0; k < 4; ++k) {
    ControlChannel c;
    c.input = kSquatJoints[size_t(k)];
    c.basis = ControlBasis::kCubicBSpline;
    c.knots = Grid(0.0, 1.0, knots);
    c.initial = Eigen::VectorXd::Constant(knots, hold[k]);
    c.lower = Eigen::VectorXd::Constant(1, -1.0);
    c.upper = Eigen::VectorXd::Constant(1, 1.0);
    ocp.controls.push_back(c);
    ocp.objective.push_back({"effort:" + c.input, 1.0});
    ocp.constraints.push_back({"q_" + c.input, kStand[k], kStand[k]});
    ocp.constraints.push_back({"v_" + c.input, 0.0, 0.0});
    ocp.path_constraints.push_back({"q_" + c.input, kLower[k], kUpper[k]});
  }
  ocp.path_samples = path_samples;
  return ocp;
}

// Central differences of the NLP's f and g against Gradients() at the
// initial guess moved off its trajectory (so the continuity rows are not
// zero): 3 knots per joint, six shooting intervals (forward sensitivities
// with continuity and path rows, the end conditions on the last), rtol
// 1e-12 (Adams). Richardson extrapolation of two central differences at h
// and h/2, h = 2e-4 relative (truncation O(h^4)); bound 1e-6 of each row's
// largest entry, as optimal_control_test.cpp asserts on the other models.
// The model has no constraints, so the node columns need no step of their
// own.
//
// The step is the differences', not the gradients', concern. The squat is
// unstable (its fastest mode grows at 19/s) and the point is far from any
// trajectory the controls hold, so the runs' values are strongly nonlinear
// in w, and the h^4 term is large: at h = 1e-3 (this test's former step,
// when it was disabled) the extrapolated differences were off by up to
// 3.3e-5 of a row's largest entry (30 rows over 1e-6), at 5e-4 by 2.1e-6
// and at 2.5e-4 by 1.3e-7, 16-fold per halving as h^4 predicts; below, the
// runs' own error over h takes over: 9.8e-8 at h = 1e-4 and 6.1e-7 at
// 1e-5, which tightening rtol from 1e-11 to 1e-12 to 1e-13 takes from
// 2.6e-6 to 6.1e-7 to 1.2e-7 (docs/optimal_control.md, "squat_to_stand").
// The exact gradients agree with the differences to their floor, about
// 1e-7. The path rows at the end of the horizon sample the state the end
// conditions take (the interval run's last sample): row for row the same
// values and Jacobian entries, which the test asserts.
TEST(SquatToStand, ShootingGradientsMatchCentralDifferences) {
  Problem p = problems::SquatToStandProblem();
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.output_step = 1.0 / 60;
  OptimizeOptions o;
  o.shooting_intervals = 6;
  o.gradient = GradientMethod::kForward;
  internal::ShootingNlp nlp(p, Rise(p, 3, 2), p.defaults,
                            p.model.default_parameters(), o);
  Eigen::VectorXd w = nlp.x0();
  for (int i = 0; i < w.size(); ++i)
    w[i] += 0.01 * std::max(1.0, std::abs(w[i])) * std::sin(1.0 + i);
  Eigen::VectorXd grad;
  Eigen::MatrixXd jac;
  ASSERT_TRUE(nlp.Gradients(w, &grad, &jac)) << nlp.error();
  Eigen::VectorXd fd_grad;
  Eigen::MatrixXd fd_jac;
  ASSERT_TRUE(test_support::ShootingDifferences(
      nlp, w,
      [](int) {
        return test_support::DifferenceStep{2e-4, true};
      },
      &fd_grad, &fd_jac));
  test_support::ExpectObjectiveGradientMatches(grad, fd_grad, 1e-6);
  // The path rows at t = 0 sample the fixed initial state: constant rows
  // (zero in both), one per joint. Every other row is compared relative to
  // its largest entry.
  int constant_rows = 0;
  for (int r = 0; r < nlp.m(); ++r) {
    const double scale = jac.row(r).lpNorm<Eigen::Infinity>();
    if (scale == 0.0) {
      const std::string& name = nlp.constraint_names()[size_t(r)];
      EXPECT_TRUE(name.size() > 9 &&
                  name.compare(name.size() - 9, 9, " at t = 0") == 0)
          << name;
      EXPECT_LE(fd_jac.row(r).lpNorm<Eigen::Infinity>(), 1e-9);
      ++constant_rows;
      continue;
    }
    test_support::ExpectJacobianRowMatches(nlp, jac, fd_jac, r, 1e-6);
  }
  EXPECT_EQ(constant_rows, 4);
  EXPECT_GT(nlp.forward_runs, 0);
  // The path rows at t_end and the end conditions q_<joint> at t_end: the
  // same value and Jacobian row to the last bit.
  Eigen::VectorXd g;
  double f = 0.0;
  ASSERT_TRUE(nlp.Values(w, &f, &g));
  const std::vector<std::string>& names = nlp.constraint_names();
  for (int k = 0; k < 4; ++k) {
    const std::string q = std::string("q_") + kSquatJoints[size_t(k)];
    const auto path =
        std::find(names.begin(), names.end(), "path " + q + " at t = 1");
    const auto end = std::find(names.begin(), names.end(), "constraint " + q);
    ASSERT_TRUE(path != names.end() && end != names.end()) << q;
    const Eigen::Index a = path - names.begin(), b = end - names.begin();
    EXPECT_EQ(g[a], g[b]) << q;
    EXPECT_TRUE(jac.row(a) == jac.row(b)) << q;
  }
}

// int_0^1 u^2 dt of a control by 4-point Gauss-Legendre on each knot
// interval: exact for the squared cubic (degree 6) between knots.
double SplineEffort(const ControlChannel& c) {
  static constexpr double kX[4] = {0.0694318442029737, 0.3300094782075719,
                                   0.6699905217924281, 0.9305681557970263};
  static constexpr double kW[4] = {0.1739274225687269, 0.3260725774312731,
                                   0.3260725774312731, 0.1739274225687269};
  Eigen::VectorXd t(4 * Eigen::Index(c.knots.size() - 1));
  Eigen::VectorXd wt(t.size());
  for (size_t j = 0; j + 1 < c.knots.size(); ++j) {
    const double a = c.knots[j], h = c.knots[j + 1] - a;
    for (int i = 0; i < 4; ++i) {
      t[Eigen::Index(4 * j) + i] = a + kX[i] * h;
      wt[Eigen::Index(4 * j) + i] = kW[i] * h;
    }
  }
  const Eigen::VectorXd u = EvaluateControl(c, c.initial, t);
  return wt.dot(u.cwiseAbs2());
}

// The coarse rise's optimum (5 knots per joint, five intervals, the
// settings of the test below), as IPOPT returned it from the torques that
// hold the squat: Solve_Succeeded after 183 iterations, objective
// 0.142116189959, KKT residual 4.8e-9, 72 s in release (1514 plain and 920
// forward runs). Per joint, the coefficients at t = 0, 0.25, .., 1.
constexpr double kRiseOptimum[4][5] = {
    {0.24037048660855118, 0.012155253293139951, 0.042866745388931086,
     0.078485840641844037, 0.13856023613387972},
    {-0.23855636370616973, -0.28636851746074421, -0.12634479221398326,
     0.014705516338918725, -0.10887514613909023},
    {-0.51802069986511268, -0.26463775976692594, -0.10809613283786129,
     -0.042929735045113195, 0.041332579564238137},
    {-0.73567580104266406, -0.1188281307393295, -0.1114725161462172,
     0.068815922996966108, 0.0094571121048582577}};
constexpr double kRiseObjective = 0.142116189959;

// The coarse rise (5 knots per joint, five intervals) from the stored
// optimum above (the cold start from the holding torques takes 183
// iterations, too long for CI). The nodes start on one run of those
// controls from the squat, which the unstable squat (1/19 s) carries off
// the multiple-shooting trajectory: infeasibility 2e-2 at the first
// iterate, so IPOPT has the continuity and end rows to restore (about 20
// iterations, 6-11 s). Rounded to 4 decimals the stored controls make that
// first run fall, and IPOPT wanders: the guess must be the optimum to the
// last digit. Asserted: IPOPT converges, the KKT residual is below 1e-6
// (the bound, as optimal_control_test.cpp asserts), it returns to
// the stored optimum (objective to 1e-7 relative), the end conditions
// (standing at rest) hold to IPOPT's constraint tolerance 1e-8, no joint
// leaves its range at a path sample and the lumbar joint reaches its
// extension limit (-30 deg, at t = 0.4 s: the limits shape the rise),
// every torque stays within its bound, and each effort term equals the
// integral of its spline squared by exact quadrature (to 1e-7 relative:
// the run integrates it as an error-controlled quadrature at rtol 1e-10).
TEST(SquatToStand, MinimumEffortRiseReachesStandingWithinTheRanges) {
  DAEDALUS_RELEASE_BUILD_ONLY("an IPOPT solve of a few hundred runs");
  Problem p = problems::SquatToStandProblem();
  SimulationOptions sim = p.defaults;
  sim.rtol = 1e-10;
  sim.atol = 1e-12;
  sim.output_step = 0.05;
  OptimizeOptions o;
  o.shooting_intervals = 5;
  // As the spec: a first quasi-Newton matrix 100 I, so that the first
  // steps do not move the torques by their whole range (u is normalized),
  // then IPOPT's scaled one.
  o.max_iterations = 500;
  // IPOPT's scaled tolerance 1e-6 (its constraint tolerance stays 1e-8):
  // the gradients come from runs at rtol 1e-10 through an unstable motion,
  // and near 1e-8 the iterates of the spec's problem cycled on that noise.
  o.tolerance = 1e-6;
  o.ipopt_options = {"limited_memory_initialization=scalar1",
                     "limited_memory_init_val=100"};
  OptimalControlProblem ocp = Rise(p, 5, 2);
  for (int k = 0; k < 4; ++k)
    ocp.controls[size_t(k)].initial =
        Eigen::Map<const Eigen::VectorXd>(kRiseOptimum[k], 5);
  const OptimizeResult r =
      Optimize(p, ocp, sim, p.model.default_parameters(), o);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_LE(r.kkt_residual, 1e-6);
  EXPECT_GT(r.iterations, 0);
  EXPECT_NEAR(r.objective, kRiseObjective, 1e-7 * kRiseObjective);
  ASSERT_TRUE(r.run.ok) << r.run.error;
  // The end conditions as the NLP's rows (the last interval's run from its
  // node). The solution's single run from t = 0 is not the check: through
  // the unstable squat (1/19 s) its error grows about 1e8-fold over 1 s.
  EXPECT_TRUE(r.violated.empty()) << r.message;
  int path_rows = 0, end_rows = 0;
  bool lumbar_limit = false;
  for (const ConstraintValue& c : r.constraints) {
    EXPECT_LE(c.violation, 1e-8) << c.name;
    if (c.name.rfind("path", 0) == 0) ++path_rows;
    if (c.name == "path q_lumbar at t = 0.4") {
      EXPECT_NEAR(c.value, kLower[3], 1e-6);
      lumbar_limit = true;
    }
    for (int k = 0; k < 4; ++k) {
      const std::string joint = kSquatJoints[size_t(k)];
      if (c.name == "constraint q_" + joint) {
        EXPECT_NEAR(c.value, kStand[k], 1e-8) << c.name;
        ++end_rows;
      }
      if (c.name == "constraint v_" + joint) {
        EXPECT_NEAR(c.value, 0.0, 1e-8) << c.name;
        ++end_rows;
      }
    }
  }
  EXPECT_EQ(end_rows, 8);
  EXPECT_TRUE(lumbar_limit);
  EXPECT_EQ(path_rows, 4 * (5 * 2 + 1));  // 2 per interval and the end
  ASSERT_EQ(r.controls.size(), 4u);
  ASSERT_EQ(r.objective_terms.size(), 4u);
  double objective = 0.0;
  for (int k = 0; k < 4; ++k) {
    const ControlChannel& c = r.controls[size_t(k)];
    EXPECT_LE(c.initial.cwiseAbs().maxCoeff(), 1.0 + 1e-12);
    const double effort = SplineEffort(c);
    ASSERT_GT(effort, 0.0);
    EXPECT_NEAR(r.objective_terms[size_t(k)].value, effort, 1e-7 * effort)
        << c.input;
    objective += effort;
  }
  EXPECT_NEAR(r.objective, objective, 1e-7 * objective);
}

}  // namespace squat_to_stand_test
}  // namespace
}  // namespace daedalus
