// Moreau-Jean time stepping (--integrator moreau-jean; docs/moreau_jean.md)
// against closed forms:
//   the bouncing ball (h0 = 1, e = 0.9, g = 9.81): the first impact time
//     and the post-impact velocity converge at first order in h to
//     sqrt(2 h0 / g) and e sqrt(2 g h0); with theta = 1/2 under gravity
//     alone the energy balance with the impulses' work booked is exact
//     (the residual is round-off);
//   Newton's cradle: the touching row (3 and 5 balls) takes the
//     simultaneous impulse law in one step;
//   block_on_incline: below the friction angle the cone solve sticks
//     exactly (no creep); above, s = g (sin alpha - mu_k cos alpha) t^2/2;
//   the cone solver: each contact's local solution satisfies Coulomb's
//     law on the isotropic cone, the projected Gauss-Seidel residual ends
//     below its tolerance;
// and bad input: no --step, a non-positive step, theta out of range, a
// stalled solver (a tiny sweep cap) reported with its residual and
// iterations, the samples kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "block_on_incline.hpp"
#include "bouncing_ball_contact.hpp"
#include "contact/cone_solver.hpp"
#include "daedalus/simulate.hpp"
#include "newtons_cradle.hpp"
#include "spheres_in_box.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace moreau_jean_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

using daedalus::testing::Keep;

SimulationOptions MjOptions(double h, double t_end) {
  SimulationOptions o;
  o.integrator = Integrator::kMoreauJean;
  o.formulation = Formulation::kUnstabilized;
  o.step = h;
  o.output_step = h;
  o.t_end = t_end;
  return o;
}

// The first sample with a nonzero impulse: the end of the impact step.
const Sample* FirstImpact(const Keep& k) {
  for (const Sample& s : k.samples)
    if (s.impulse.size() > 0 && s.impulse.cwiseAbs().maxCoeff() > 0.0)
      return &s;
  return nullptr;
}

TEST(MoreauJean, BouncingBallFirstImpactConvergesAtFirstOrder) {
  const Problem p = problems::BouncingBallContactProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double g = 9.81, h0 = 1.0, e = 0.9;
  const double t1 = std::sqrt(2.0 * h0 / g), v1 = std::sqrt(2.0 * g * h0);
  std::vector<double> et, ev;
  for (double h : {1e-2, 1e-3, 1e-4}) {
    Keep keep;
    const SimulationSummary s =
        Simulate(p.model, p.initial(prm), prm, MjOptions(h, 0.5), &keep);
    ASSERT_TRUE(s.ok) << s.error;
    const Sample* imp = FirstImpact(keep);
    ASSERT_NE(imp, nullptr) << "h = " << h;
    // The impact step [t_k, t_k + h] is the first whose predicted gap
    // y_k + h v_k is <= 0: the contact lies within two steps of its end,
    // and the ball leaves at e |v_k| with |v_k| = g t_k (the free flight
    // is exact), so both errors are at most 2 h (times e g for v+).
    const double dt = std::abs(imp->t - t1);
    const double dv = std::abs(imp->v[0] - e * v1);
    EXPECT_LE(dt, 2.0 * h) << "h = " << h;
    EXPECT_LE(dv, 2.0 * e * g * h) << "h = " << h;
    EXPECT_GT(imp->v[0], 0.0);
    et.push_back(dt);
    ev.push_back(dv);
    // The impulse stops and reverses the ball: P = m (v+ - v-) - m g h.
    // theta = 1/2 under gravity: the energy balance with the impulse work
    // is exact (docs/moreau_jean.md, "Energy"): round-off only.
    // (Round-off of up to 5000 steps of energies ~10 J: 1e-11.)
    EXPECT_LE(s.energy_residual_max, 1e-11) << "h = " << h;
    EXPECT_LT(s.final.impact_work, 0.0);
    EXPECT_TRUE(s.contact.time_stepping.used);
    EXPECT_LE(s.contact.time_stepping.residual_max, 1e-10);
  }
  // First order: two decades of h take both errors down by at least 20
  // (they are not O(1)); the bounds above make them O(h).
  EXPECT_LT(et[2], et[0] / 20.0);
  EXPECT_LT(ev[2], ev[0] / 20.0);
}

// Newton's cradle: the touching row takes the impact in one step, as one
// impulse problem over all its contacts, so the velocities are those of
// the simultaneous law (problems::NewtonsCradleSimultaneous), like the
// event-driven stage's. The 5-ball row's last gap starts at +1.4e-17 m
// (3 x 0.05 in floating point): a contact is active when its predicted
// gap is within ContactOptions::gap_tolerance, or that contact would be
// left out of the impact step (bench/cradle_side_by_side.py measured
// (-0.5, 0.25, 0.25, 0.25, 0.75) before). Bound: 1e-9 m/s, the impulse
// problem's round-off (1.9e-11 measured on 3 balls at this step).
TEST(MoreauJean, CradleRowTakesTheSimultaneousImpact) {
  for (int n : {3, 5}) {
    const Problem p = problems::NewtonsCradleProblem(n);
    Eigen::VectorXd prm = p.model.default_parameters();
    prm[p.model.ParameterIndex("spacing")] = 0.0;
    const SimulationSummary s =
        Simulate(p.model, p.initial(prm), prm, MjOptions(1e-4, 0.2));
    ASSERT_TRUE(s.ok) << s.error;
    const Eigen::VectorXd exact = problems::NewtonsCradleSimultaneous(n, 1.0);
    ASSERT_EQ(s.final.v.size(), n);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(s.final.v[i], exact[i], 1e-9) << n << " balls, ball " << i;
  }
}

// The broad phase (MoreauJeanOptions::broad_phase, docs/moreau_jean.md)
// leaves the rows of contacts that cannot close within a step
// unevaluated; it must not change the step. Nine spheres settling in
// their box (81 contact rows, a few dozen impacts and resting contacts):
// the run with it and the run evaluating every row agree to the last bit.
TEST(MoreauJean, BroadPhaseKeepsTheRunBitwise) {
  const Problem p = problems::SpheresInBoxProblem(9);
  const Eigen::VectorXd prm = p.model.default_parameters();
  SimulationOptions o = MjOptions(1e-3, 0.4);
  o.output_step = 0.01;
  std::vector<SimulationSummary> runs;
  std::vector<Keep> keeps(2);
  for (bool broad : {true, false}) {
    o.moreau_jean.broad_phase = broad;
    runs.push_back(
        Simulate(p.model, p.initial(prm), prm, o, &keeps[runs.size()]));
    ASSERT_TRUE(runs.back().ok) << runs.back().error;
  }
  const TimeSteppingReport &a = runs[0].contact.time_stepping,
                           &b = runs[1].contact.time_stepping;
  EXPECT_GT(a.solves, 100);  // the spheres strike and rest
  EXPECT_GE(a.active_max, 9);
  EXPECT_EQ(a.solves, b.solves);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.active_max, b.active_max);
  EXPECT_EQ(a.impulse_work, b.impulse_work);
  EXPECT_EQ(a.penetration_max, b.penetration_max);
  ASSERT_EQ(keeps[0].samples.size(), keeps[1].samples.size());
  for (size_t i = 0; i < keeps[0].samples.size(); ++i) {
    EXPECT_TRUE(keeps[0].samples[i].q == keeps[1].samples[i].q) << i;
    EXPECT_TRUE(keeps[0].samples[i].v == keeps[1].samples[i].v) << i;
  }
}

TEST(MoreauJean, BlockBelowTheFrictionAngleDoesNotMove) {
  const Problem p = problems::BlockOnInclineProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();  // alpha 0.3
  SimulationOptions o = MjOptions(1e-3, 2.0);
  o.output_step = 0.1;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
  ASSERT_TRUE(s.ok) << s.error;
  // The stick impulse makes the local velocity zero exactly (u = W P + q
  // = 0 solved directly): no creep at all.
  EXPECT_LE(std::abs(s.final.q[0]), 1e-12);
  EXPECT_LE(std::abs(s.final.v[0]), 1e-12);
  EXPECT_LE(s.contact.time_stepping.penetration_max, 1e-12);
  // The friction impulse holds m g sin(alpha) h per step: its work is 0.
  EXPECT_LE(std::abs(s.final.friction_work), 1e-12);
}

TEST(MoreauJean, BlockAboveTheFrictionAngleSlidesAtTheClosedForm) {
  const Problem p = problems::BlockOnInclineProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("alpha")] = 0.5;
  const double g = 9.81, mu = 0.3, al = 0.5, T = 1.0, h = 1e-3;
  const double a = g * (std::sin(al) - mu * std::cos(al));
  SimulationOptions o = MjOptions(h, T);
  o.output_step = 0.1;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
  ASSERT_TRUE(s.ok) << s.error;
  // O(h) at most (under constant forces the slip is exact: v = a t,
  // s = a t^2 / 2 by the trapezoidal positions of theta = 1/2).
  EXPECT_NEAR(s.final.v[0], a * T, a * h);
  EXPECT_NEAR(s.final.q[0], 0.5 * a * T * T, a * T * h);
  // The friction work: -mu m g cos(alpha) s.
  EXPECT_NEAR(s.final.friction_work, -mu * g * std::cos(al) * s.final.q[0],
              1e-9);
  EXPECT_LE(s.energy_residual_max, 1e-9);
}

// Coulomb's law at one contact's local solution u = W P + q.
void ExpectCoulomb(const Eigen::MatrixXd& W,
                   const Eigen::VectorXd& q,
                   const Eigen::VectorXd& P,
                   double mus,
                   double muk) {
  const Eigen::VectorXd u = W * P + q;
  const double scale = q.cwiseAbs().maxCoeff();
  const double tol = 1e-12 * scale;
  const double pt = P.tail(P.size() - 1).norm();
  EXPECT_GE(P[0], 0.0);
  EXPECT_GE(u[0], -tol);
  EXPECT_LE(std::abs(u[0] * P[0]), tol * std::abs(P[0]) + 1e-300);
  if (P[0] == 0.0) return;  // take-off
  const double ut = u.tail(u.size() - 1).norm();
  if (ut <= tol) {
    EXPECT_LE(pt, mus * P[0] * (1 + 1e-12));  // stick inside the cone
  } else {
    // Slip: on the cone of mu_k, the force against the slip velocity.
    EXPECT_NEAR(pt, muk * P[0], 1e-12 * P[0]);
    const double c = u.tail(u.size() - 1).dot(P.tail(P.size() - 1)) / (ut * pt);
    EXPECT_NEAR(c, -1.0, 1e-9);
  }
}

TEST(MoreauJean, LocalConeSolveSatisfiesCoulombOnTheCone) {
  // A 3D contact with coupled normal and tangential rows: the three
  // branches by the free velocity q.
  Eigen::MatrixXd W(3, 3);
  W << 2.0, 0.3, -0.2, 0.3, 1.5, 0.1, -0.2, 0.1, 1.2;
  const double mu = 0.5;
  // stick: the free velocity of an impulse inside the cone, q = -W P*.
  const Eigen::Vector3d inside(1.0, 0.1, -0.1);
  const Eigen::Vector3d take_off(0.1, -1.0, 2.0), slip(-1.0, 3.0, -2.0);
  const Eigen::Vector3d stick = -W * inside;
  for (const Eigen::Vector3d& q : {take_off, stick, slip}) {
    const Eigen::VectorXd P = internal::LocalConeSolve(W, q, mu, mu);
    ExpectCoulomb(W, q, P, mu, mu);
  }
  EXPECT_EQ(internal::LocalConeSolve(W, take_off, mu, mu).norm(), 0.0);
  const Eigen::VectorXd Ps = internal::LocalConeSolve(W, stick, mu, mu);
  EXPECT_LE((W * Ps + stick).norm(), 1e-15);
  EXPECT_LE((Ps - inside).norm(), 1e-15);
  // Planar (one tangential row), static above kinetic: a free velocity
  // the static cone holds sticks; one it does not slips on mu_k.
  Eigen::MatrixXd W2(2, 2);
  W2 << 1.0, 0.0, 0.0, 1.0;
  const Eigen::Vector2d hold(-1.0, 0.35), go(-1.0, 0.5);
  const Eigen::VectorXd Ph = internal::LocalConeSolve(W2, hold, 0.4, 0.3);
  EXPECT_EQ((W2 * Ph + hold).norm(), 0.0);
  const Eigen::VectorXd Pg = internal::LocalConeSolve(W2, go, 0.4, 0.3);
  ExpectCoulomb(W2, go, Pg, 0.4, 0.3);
  EXPECT_NEAR(Pg[1], -0.3 * Pg[0], 1e-15);
}

TEST(MoreauJean, GaussSeidelReachesItsToleranceOnCoupledContacts) {
  // Four frictional contacts and a bilateral row coupled through a
  // random SPD Delassus operator (W = A A' + 0.1 I).
  const int m = 13;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(m, m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) A(i, j) = std::sin(1.0 + 3.7 * i + 1.3 * j * j);
  internal::ConeProblem prob;
  prob.W = A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(m, m);
  prob.q = Eigen::VectorXd(m);
  for (int i = 0; i < m; ++i) prob.q[i] = std::cos(0.7 * i) - 0.5;
  prob.blocks.push_back({false, 0, 1, 0.0, 0.0});
  for (int c = 0; c < 4; ++c)
    prob.blocks.push_back({true, 1 + 3 * c, 3, 0.6, 0.6});
  const double tol = 1e-10;
  const internal::ConeSolution s =
      internal::SolveCone(prob, Eigen::VectorXd(), 1.0, tol, 100000);
  ASSERT_TRUE(s.converged) << s.residual << " after " << s.iterations;
  RecordProperty("sweeps", s.iterations);
  EXPECT_LE(s.residual, tol);
  const Eigen::VectorXd u = prob.W * s.P + prob.q;
  EXPECT_LE(std::abs(u[0]), 1e-8);  // the bilateral row
  for (int c = 0; c < 4; ++c) {
    const int i = 1 + 3 * c;
    const Eigen::VectorXd Pi = s.P.segment(i, 3);
    EXPECT_GE(Pi[0], 0.0);
    EXPECT_LE(Pi.tail(2).norm(), 0.6 * Pi[0] * (1 + 1e-12) + 1e-300);
    EXPECT_GE(u[i], -1e-8);
    EXPECT_LE(std::abs(u[i] * Pi[0]), 1e-8);
  }
}

TEST(MoreauJean, BadInputIsNamed) {
  const Problem p = problems::BouncingBallContactProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const InitialState x0 = p.initial(prm);
  // No step.
  SimulationOptions o = MjOptions(1e-3, 0.5);
  o.step = 0.0;
  EXPECT_THAT([&] { Simulate(p.model, x0, prm, o); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("moreau-jean"), HasSubstr("--step H > 0"))));
  o.step = -1e-3;
  EXPECT_THROW(Simulate(p.model, x0, prm, o), std::invalid_argument);
  // Theta below 1/2.
  o = MjOptions(1e-3, 0.5);
  o.moreau_jean.theta = 0.3;
  EXPECT_THAT([&] { Simulate(p.model, x0, prm, o); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("--theta 0.3")));
  // A position-level formulation.
  o = MjOptions(1e-3, 0.5);
  o.formulation = Formulation::kBaumgarte;
  EXPECT_THAT([&] { Simulate(p.model, x0, prm, o); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("--formulation unstabilized")));
  // A stalled solver: one sweep cannot certify a solution (the second
  // sweep is the one that finds nothing left to change).
  o = MjOptions(1e-3, 0.6);
  o.output_step = 0.01;
  o.moreau_jean.max_iterations = 1;
  Keep keep;
  const SimulationSummary s = Simulate(p.model, x0, prm, o, &keep);
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error,
              AllOf(HasSubstr("stalled"), HasSubstr("residual"),
                    HasSubstr("after 1 sweeps"), HasSubstr("--pgs-max-iter")));
  const TimeSteppingReport& ts = s.contact.time_stepping;
  EXPECT_TRUE(ts.stalled);
  EXPECT_EQ(ts.stalled_iterations, 1);
  EXPECT_GT(ts.stalled_residual, o.moreau_jean.tolerance);
  EXPECT_GT(ts.t_stalled, 0.4);  // at the first impact
  EXPECT_LT(ts.t_stalled, 0.46);
  // The samples up to it are kept, the last one at the stalled step.
  ASSERT_FALSE(keep.samples.empty());
  EXPECT_NEAR(keep.samples.back().t, ts.t_stalled, 1e-12);
}

}  // namespace moreau_jean_test
}  // namespace
}  // namespace daedalus
