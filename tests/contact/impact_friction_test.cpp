// Impacts with Coulomb friction and Poisson's restitution
// (docs/contact.md, "Impacts"; docs/friction.md, "Impacts with
// friction"), against closed forms:
//   a point mass striking the ground obliquely (normal speed vn, slip
//     speed vt, restitution e, friction mu): the sticking impulse
//     P_t = -m vt when |vt| <= mu (1 + e) vn, else the sliding impulse
//     -mu P_n sign(vt) with vt+ = vt - mu (1 + e) vn sign(vt); P_n =
//     (1 + e) m vn; Newton's and Poisson's laws alike (one contact), the
//     energy lost equal to the kinetic energy's closed-form change, and
//     the post-impact mode (stick or slip) that of the velocities left;
//   Poisson == Newton on one frictionless contact (the bouncing ball);
//   the impulse problem's Coulomb conditions on a coupled two-contact
//     problem, and its energy never increasing;
//   Housner's rocking block (rocking_block): w+ / w- = 1 - 1.5 sin^2
//     alpha at every impact to 1e-10, the impact losses as work, on
//     CVODES (the problem's defaults) and on IDAS in GGL (its sticking
//     and slipping corners in the residual, docs/friction.md, "On IDAS");
//   the woodpecker toy (woodpecker_toy): the limit cycle's period, the
//     interval between beak strikes, about 0.146 s (Glocker 1995), each
//     strike Newton's e = 0.5 with the sliding impulse on the cone's edge;
//   bad input: an impact law that is neither Newton's nor Poisson's, a
//     3D cone at an impact, an impact that would gain energy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/impulse.hpp"
#include "daedalus/simulate.hpp"
#include "rocking_block.hpp"
#include "woodpecker_toy.hpp"

namespace daedalus {
namespace {
namespace impact_friction_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr double kM = 2.0, kG = 9.81;

// A point mass (x, y) above the ground: gap y >= 0, slip vx, law as given.
Model Particle(double e, double mu, ImpactLaw law) {
  ModelBuilder b("particle");
  b.Coordinates({"x", "y"});
  b.KineticEnergy([](const auto& x) {
    return 0.5 * kM * (x.v[0] * x.v[0] + x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([](const auto& x) { return kM * kG * x.q[1]; });
  b.Holonomic("ground", [](const auto& x) { return x.q[1]; });
  b.Nonholonomic("ground_slip", [](const auto& x) { return x.v[0]; });
  b.Unilateral("ground", ContactLaw{.restitution = e,
                                    .friction = "ground_slip",
                                    .mu_static = mu,
                                    .impact_law = law});
  return std::move(b).Build();
}

struct Strike {
  SimulationSummary s;
  ContactEvent impact;
};

// Dropped from h0 with horizontal speed vx0: the first impact at
// t1 = sqrt(2 h0 / g) with vn = g t1; the run ends shortly after.
Strike Drop(double e, double mu, ImpactLaw law, double vx0) {
  const Model model = Particle(e, mu, law);
  const double h0 = 0.5, t1 = std::sqrt(2.0 * h0 / kG);
  InitialState x0;
  x0.q = Eigen::Vector2d(0.0, h0);
  x0.v = Eigen::Vector2d(vx0, 0.0);
  SimulationOptions o;
  o.t_end = t1 + 0.01;
  o.output_step = 0.01;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  Strike out;
  out.s = Simulate(model, x0, model.default_parameters(), o);
  for (const ContactEvent& ev : out.s.contact.events)
    if (ev.kind == "impact") {
      out.impact = ev;
      break;
    }
  return out;
}

struct Oblique {
  ImpactLaw law;
  double e, vx0;  // vx0 against mu (1 + e) vn
};

class ObliqueImpact : public ::testing::TestWithParam<Oblique> {};

TEST_P(ObliqueImpact, ImpulsesAreTheClosedFormsAndTheEnergyOnlyFalls) {
  const Oblique c = GetParam();
  const double mu = 0.3, h0 = 0.5;
  const Strike r = Drop(c.e, mu, c.law, c.vx0);
  ASSERT_TRUE(r.s.ok) << r.s.error;
  const ContactEvent& ev = r.impact;
  ASSERT_EQ(ev.kind, "impact");
  const double vn = std::sqrt(2.0 * kG * h0);  // the normal speed
  EXPECT_NEAR(ev.t, std::sqrt(2.0 * h0 / kG), 1e-10);
  // Rows: ground (normal) 0, ground_slip 1.
  const double Pn = (1.0 + c.e) * kM * vn;
  const bool sticks = std::abs(c.vx0) <= mu * (1.0 + c.e) * vn;
  const double vt_plus =
      sticks ? 0.0 : c.vx0 - mu * (1.0 + c.e) * vn * (c.vx0 > 0.0 ? 1.0 : -1.0);
  const double Pt = kM * (vt_plus - c.vx0);
  const double tol = 1e-10 * kM * vn;
  EXPECT_NEAR(ev.impulse[0], Pn, tol);
  EXPECT_NEAR(ev.impulse[1], Pt, tol);
  EXPECT_LE(std::abs(ev.impulse[1]), mu * ev.impulse[0] * (1.0 + 1e-12));
  EXPECT_NEAR(ev.u_minus[0], -vn, 1e-10 * vn);
  EXPECT_NEAR(ev.u_plus[0], c.e * vn, 1e-10 * vn);
  EXPECT_NEAR(ev.u_plus[1], vt_plus, 1e-10 * vn);
  // The kinetic energy's change, booked as impact work, <= 0.
  const double dT =
      0.5 * kM *
      (vt_plus * vt_plus + c.e * c.e * vn * vn - c.vx0 * c.vx0 - vn * vn);
  EXPECT_LE(ev.energy_change, 0.0);
  EXPECT_NEAR(ev.energy_change, dT, 1e-9 * kM * vn * vn);
  EXPECT_NEAR(r.s.final.energy_residual, 0.0, 1e-9 * kM * vn * vn);
  // Plastic: the contact closes, sticking or slipping as the velocities
  // left by the impact say.
  if (c.e == 0.0) {
    ASSERT_FALSE(ev.closed.empty());
    const std::string mode = r.s.contact.events.back().closed.empty()
                                 ? ""
                                 : r.s.contact.events.back().closed[0];
    EXPECT_EQ(mode, sticks ? "ground:stick" : "ground:slip");
  }
}

INSTANTIATE_TEST_SUITE_P(
    StickAndSlide,
    ObliqueImpact,
    ::testing::Values(Oblique{ImpactLaw::kNewton, 0.5, 1.0},
                      Oblique{ImpactLaw::kNewton, 0.5, -4.0},
                      Oblique{ImpactLaw::kPoisson, 0.5, 1.0},
                      Oblique{ImpactLaw::kPoisson, 0.5, -4.0},
                      Oblique{ImpactLaw::kNewton, 0.0, 0.5},
                      Oblique{ImpactLaw::kNewton, 0.0, 2.0}));

// One frictionless contact: Poisson's law is Newton's.
TEST(PoissonRestitution, EqualsNewtonOnOneFrictionlessContact) {
  const double vx0 = 0.7;
  const Strike n = Drop(0.8, 0.0, ImpactLaw::kNewton, vx0);
  const Strike p = Drop(0.8, 0.0, ImpactLaw::kPoisson, vx0);
  ASSERT_TRUE(n.s.ok && p.s.ok) << n.s.error << p.s.error;
  ASSERT_EQ(n.s.contact.impacts, 1);
  ASSERT_EQ(p.s.contact.impacts, 1);
  EXPECT_EQ(n.impact.t, p.impact.t);
  EXPECT_NEAR(p.impact.impulse[0], n.impact.impulse[0],
              1e-14 * n.impact.impulse[0]);
  EXPECT_NEAR(p.impact.u_plus[0], n.impact.u_plus[0],
              1e-14 * n.impact.u_plus[0]);
  EXPECT_NEAR(p.impact.u_plus[0], -0.8 * p.impact.u_minus[0],
              1e-12 * p.impact.u_plus[0]);
  EXPECT_EQ(p.impact.impulse[1], 0.0);  // frictionless: no slip row
  EXPECT_NEAR(p.s.final.q[1], n.s.final.q[1], 1e-12);
}

// Two coupled contacts (a rod's ends on the ground, one striking): the
// solution satisfies every Coulomb and Newton condition, for both laws,
// and never gains kinetic energy.
TEST(ImpulseProblem, CoupledContactsSatisfyCoulombAndDissipate) {
  // A rod of mass 1, length 2, inertia 1/3, tilted at 0.3 rad: its ends'
  // normal and tangential velocity rows in (vx, vy, w).
  const double th = 0.3, c = std::cos(th), s = std::sin(th);
  Eigen::MatrixXd J(4, 3);
  J << 0, 1, -c,  // end 1, normal
      0, 1, c,    // end 2, normal
      1, 0, s,    // end 1, tangential
      1, 0, -s;   // end 2, tangential
  const Eigen::Vector3d Minv(1.0, 1.0, 3.0);
  const Eigen::MatrixXd A = J * Minv.asDiagonal() * J.transpose();
  for (ImpactLaw law : {ImpactLaw::kNewton, ImpactLaw::kPoisson})
    for (double vx : {-2.0, 0.1, 3.0}) {
      const Eigen::Vector3d v(vx, -1.0, 0.4);
      internal::ImpulseProblem ip;
      ip.A = A;
      ip.u = J * v;
      ip.e = {0.6, 0.0};
      ip.mu = {0.4, 0.4};
      ip.poisson = {law == ImpactLaw::kPoisson, law == ImpactLaw::kPoisson};
      ip.tangent = {2, 3};
      const internal::ImpulseSolution r = internal::SolveImpulse(ip);
      ASSERT_TRUE(r.solved) << vx;
      const Eigen::VectorXd& P = r.P;
      const Eigen::VectorXd& up = r.u_plus;
      const double tol = 1e-9;
      for (int i = 0; i < 2; ++i) {
        EXPECT_GE(P[i], -tol);
        // The cone, and sliding against the post-impact slip.
        EXPECT_LE(std::abs(P[2 + i]), 0.4 * P[i] + tol);
        // Newton: one phase, the total impulse on the cone's edge against
        // the slip left (Poisson's phases each carry the cone, their sum
        // may lie inside it).
        if (law == ImpactLaw::kNewton && std::abs(up[2 + i]) > tol) {
          EXPECT_NEAR(P[2 + i], -0.4 * P[i] * (up[2 + i] > 0 ? 1 : -1), tol);
        }
      }
      if (law == ImpactLaw::kNewton) {
        for (int i = 0; i < 2; ++i) {
          const double xi = up[i] + ip.e[static_cast<size_t>(i)] * ip.u[i];
          EXPECT_GE(xi, -tol);
          EXPECT_NEAR(std::min(xi, P[i]), 0.0, tol);
        }
      } else {
        EXPECT_GE(up[0], -tol);
        EXPECT_GE(up[1], -tol);
      }
      const Eigen::Vector3d dv = Minv.asDiagonal() * (J.transpose() * P);
      const double gain =
          dv.dot(Minv.cwiseInverse().asDiagonal() * (v + 0.5 * dv));
      EXPECT_LE(gain, 1e-12) << vx;
    }
}

class RockingBlock : public ::testing::TestWithParam<testing::Solver> {};

TEST_P(RockingBlock, AngularVelocityRatioIsHousnersAtEveryImpact) {
  const Problem p = problems::RockingBlockProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double b = prm[p.model.ParameterIndex("b")];
  const double h = prm[p.model.ParameterIndex("h")];
  const double ratio = problems::HousnerRatio(b, h);
  ASSERT_NEAR(ratio, 0.85, 1e-15);
  // To rest: the impacts accumulate near 2.01 s.
  SimulationOptions o = p.defaults;
  o.t_end = 2.5;
  GetParam().ApplyTo(&o);
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
  ASSERT_TRUE(s.ok) << s.error;
  // Rows: left 0, right 1 (normals), then left_slip 2, right_slip 3.
  int impacts = 0;
  double work = 0.0, worst = 0.0;
  for (const ContactEvent& ev : s.contact.events) {
    if (ev.kind != "impact") continue;
    ++impacts;
    // At theta = 0, w = (u_right - u_left) / (2 b) whatever the pivot.
    const double wm = (ev.u_minus[1] - ev.u_minus[0]) / (2.0 * b);
    const double wp = (ev.u_plus[1] - ev.u_plus[0]) / (2.0 * b);
    if (std::abs(wm) < 1e-3) break;  // the accumulation's tail
    EXPECT_NEAR(wp / wm, ratio, 1e-10) << "impact " << impacts << " t " << ev.t;
    worst = std::max(worst, std::abs(wp / wm - ratio));
    // No corner slides: both tangential velocities 0 after.
    // (to the impulse LCP's acceptance tolerance, kLcpTolerance of the
    // problem's scale)
    const double utol =
        internal::kLcpTolerance *
        std::max(std::abs(ev.u_minus[0]), std::abs(ev.u_minus[1]));
    EXPECT_NEAR(ev.u_plus[2], 0.0, utol) << ev.t;
    EXPECT_NEAR(ev.u_plus[3], 0.0, utol) << ev.t;
    EXPECT_LE(ev.energy_change, 0.0);
    work += ev.energy_change;
  }
  EXPECT_GE(impacts, 4);
  std::printf(
      "rocking_block: %d impacts, worst |ratio - Housner| %.2e, "
      "impact work %.6g J, energy residual %.2e J, t_rest %.6g s\n",
      impacts, worst, work, s.final.energy_residual, s.contact.t_rest);
  EXPECT_NEAR(s.final.energy_residual, 0.0, 1e-9);
  EXPECT_LT(s.contact.impact_work, 0.0);
  // At rest on both corners, sticking (one tangential row is redundant:
  // 4 rows on 3 velocities), the weight shared equally by the normals.
  const double mg = prm[p.model.ParameterIndex("m")] * 9.81;
  ASSERT_GT(s.contact.t_rest, 0.0);
  EXPECT_NEAR(s.final.lambda[0], 0.5 * mg, 1e-9 * mg);
  EXPECT_NEAR(s.final.lambda[1], 0.5 * mg, 1e-9 * mg);
  EXPECT_LT(s.final.v.norm(), 1e-12);
  for (const FrictionContactReport& f : s.contact.friction) {
    EXPECT_EQ(f.stick_to_slip, 0) << f.contact;
    EXPECT_GE(f.min_stick_margin, 0.0) << f.contact;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Solvers,
    RockingBlock,
    ::testing::Values(testing::Solver{Integrator::kCvodesBdf,
                                      Formulation::kBaumgarte},
                      testing::Solver{Integrator::kIdas, Formulation::kGgl},
                      testing::Solver{Integrator::kIdas, Formulation::kGgl,
                                      LinearSolver::kKlu}),
    testing::SolverName);

TEST(WoodpeckerToy, LimitCyclePeriodIsGlockers) {
  const Problem p = problems::WoodpeckerToyProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  SimulationOptions o = p.defaults;
  o.t_end = 1.0;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
  ASSERT_TRUE(s.ok) << s.error;
  // Rows: beak 0, sleeve_lower 1, sleeve_upper 2, beak_slip 3.
  std::vector<double> strikes;
  for (const ContactEvent& ev : s.contact.events) {
    if (ev.kind != "impact") continue;
    EXPECT_LE(ev.energy_change, 0.0) << ev.t;
    if (std::find(ev.rows.begin(), ev.rows.end(), "beak") == ev.rows.end())
      continue;
    strikes.push_back(ev.t);
    const double un = -ev.u_minus[0];
    ASSERT_GT(un, 0.0);
    EXPECT_NEAR(ev.u_plus[0], 0.5 * un, 1e-10 * un);
    // The beak slides through its strike: the impulse on the cone's edge.
    EXPECT_NEAR(std::abs(ev.impulse[3]), 0.3 * ev.impulse[0],
                1e-10 * ev.impulse[0]);
    EXPECT_GT(std::abs(ev.u_plus[3]), 1e-6);
  }
  ASSERT_GE(strikes.size(), 6u);
  // From the start near the cycle the intervals settle (alternating,
  // 0.145853, 0.146080, ... within 2e-4 s of each other after the first).
  for (size_t i = 1; i < strikes.size(); ++i)
    EXPECT_NEAR(strikes[i] - strikes[i - 1], 0.146, 5e-4) << i;
  const double period = (strikes.back() - strikes.front()) /
                        static_cast<double>(strikes.size() - 1);
  std::printf(
      "woodpecker_toy: %zu beak strikes, mean period %.6f s, "
      "energy residual %.2e J\n",
      strikes.size(), period, s.final.energy_residual);
  EXPECT_NEAR(period, 0.146, 5e-4);
  EXPECT_NEAR(s.final.energy_residual, 0.0, 1e-8);
}

TEST(ImpactInput, AnImpactLawThatIsNeitherIsRefused) {
  EXPECT_THAT([] { Particle(0.5, 0.3, static_cast<ImpactLaw>(7)); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("contact 'ground'"), HasSubstr("7"),
                        HasSubstr("kPoisson"))));
  EXPECT_THAT([] { Particle(1.5, 0.3, ImpactLaw::kPoisson); },
              ::testing::ThrowsMessage<std::invalid_argument>(AllOf(
                  HasSubstr("contact 'ground'"), HasSubstr("outside [0, 1]"))));
  EXPECT_STREQ(ToString(ImpactLaw::kPoisson), "poisson");
}

// An impact that would gain energy is refused; so is Poisson's law on a
// 3D cone (the cone's impulse problem is solved with Newton's law only,
// impulse.hpp), while Newton's law on the cone gives the closed form.
TEST(ImpactInput, AnEnergyGainAndPoissonsLawOnAConeAreRefused) {
  EXPECT_THAT(
      [] { internal::CheckDissipation(0.5, " 'a'", 1e-3, 1.0, "newton"); },
      ::testing::ThrowsMessage<std::runtime_error>(
          AllOf(HasSubstr("'a'"), HasSubstr("gain"), HasSubstr("kPoisson"))));
  EXPECT_NO_THROW(internal::CheckDissipation(0.5, " 'a'", 1e-12, 1.0, "x"));
  // A sphere point with a 3D cone (mu 0.5) dropped from 0.1 m on the
  // ground at 1 m/s along x.
  auto drop = [](ImpactLaw law) {
    ModelBuilder b("cone");
    b.Coordinates({"x", "y", "z"});
    b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
    b.PotentialEnergy([](const auto& x) { return kG * x.q[2]; });
    b.Holonomic("ground", [](const auto& x) { return x.q[2]; });
    b.Nonholonomic(
        "ground_slip",
        [](const auto& x) {
          using S = Scalar<decltype(x)>;
          VecX<S> u(2);
          u << x.v[0], x.v[1];
          return u;
        },
        2);
    b.Unilateral("ground", ContactLaw{.friction = "ground_slip",
                                      .mu_static = 0.5,
                                      .impact_law = law});
    const Model m = std::move(b).Build();
    InitialState x0;
    x0.q = Eigen::Vector3d(0.0, 0.0, 0.1);
    x0.v = Eigen::Vector3d(1.0, 0.0, 0.0);
    SimulationOptions o;
    o.t_end = 0.5;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    return Simulate(m, x0, m.default_parameters(), o);
  };
  const SimulationSummary poisson = drop(ImpactLaw::kPoisson);
  EXPECT_FALSE(poisson.ok);
  EXPECT_THAT(poisson.error, AllOf(HasSubstr("'ground'"), HasSubstr("3D"),
                                   HasSubstr("kNewton")));
  // Newton (e = 0): P_N = m v_n with v_n = sqrt(2 g 0.1); sticking needs
  // 1 > mu P_N = 0.70, so it slides: v_x+ = 1 - mu v_n, then slows at mu g
  // to rest.
  const SimulationSummary newton = drop(ImpactLaw::kNewton);
  ASSERT_TRUE(newton.ok) << newton.error;
  const double vn = std::sqrt(2.0 * kG * 0.1);
  const ContactEvent* impact = nullptr;
  for (const ContactEvent& e : newton.contact.events)
    if (e.kind == "impact" && impact == nullptr) impact = &e;
  ASSERT_NE(impact, nullptr);
  EXPECT_NEAR(impact->t, std::sqrt(2.0 * 0.1 / kG), 1e-9);
  EXPECT_NEAR(impact->impulse[0], vn, 1e-10 * vn);
  EXPECT_NEAR(impact->impulse[1], -0.5 * vn, 1e-10 * vn);
  EXPECT_NEAR(impact->impulse[2], 0.0, 1e-12);
  EXPECT_NEAR(impact->u_plus[1], 1.0 - 0.5 * vn, 1e-10);
  // At rest (sticking) after v1 / (mu g): x = t_impact + v1^2 / (2 mu g).
  const double v1 = 1.0 - 0.5 * vn;
  EXPECT_NEAR(newton.final.q[0], impact->t + v1 * v1 / (2.0 * 0.5 * kG), 1e-8);
  EXPECT_NEAR(newton.final.v[0], 0.0, 1e-10);
}

}  // namespace impact_friction_test
}  // namespace
}  // namespace daedalus
