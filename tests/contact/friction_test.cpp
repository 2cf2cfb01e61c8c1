// Coulomb friction as stick/slip modes of event-driven contacts
// (docs/friction.md) on the catalogue's friction problems against their
// closed forms (docs/problems.md):
//   sliding_sphere: the roll time t* = 2 v0 / (7 mu g), the rolling speed
//     5 v0 / 7 and the kinetic energy lost, 2/7, to 1e-9 relative, the
//     loss equal to the integrated friction work, and no work while it
//     rolls (sticks);
//   block_on_incline: below the friction angle no motion at all (|s| <=
//     1e-12 m after 10 s), the friction force m g sin alpha inside the
//     cone; above it s = g (sin alpha - mu_k cos alpha) t^2 / 2 and the
//     force on the cone;
//   painleve_rod: above mu = 4/3 at tan theta = 2 the start is reported
//     inconsistent naming the contact and mu, below it the rod slides;
// and bad input (mu < 0, a friction constraint that is not a velocity
// row, a normal with two rows, a 3D cone on IDAS refused). The planar
// problems run on CVODES and on IDAS, whose residual takes a slipping
// row's equation lambda_t + mu sigma lambda_n = 0 (docs/friction.md, "On
// IDAS"), in its index-1 form and in GGL.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "block_on_incline.hpp"
#include "daedalus/simulate.hpp"
#include "formulation/dae_form.hpp"
#include "formulation/mechanics.hpp"
#include "painleve_rod.hpp"
#include "sliding_sphere.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace friction_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The bound (issue 37) on t*, the final speed and the energy
// lost: 1e-9 relative. The runs are at rtol 1e-12: the slip phase is a
// polynomial flow (constant accelerations) that BDF integrates to
// round-off, and the root of the linear slip speed is located to ~1e-15 s.
constexpr double kClosedForm = 1e-9;

using daedalus::testing::Keep;

double Prm(const Problem& p, const Eigen::VectorXd& prm, const char* name) {
  return prm[p.model.ParameterIndex(name)];
}

std::vector<ContactEvent> Kind(const SimulationSummary& s, const char* kind) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == kind) out.push_back(e);
  return out;
}

using daedalus::testing::Solver;
using daedalus::testing::SolverName;

const Solver kSolvers[] = {
    {Integrator::kCvodesBdf, Formulation::kBaumgarte},
    {Integrator::kCvodesAdams, Formulation::kBaumgarte},
    {Integrator::kIdas, Formulation::kBaumgarte},
    {Integrator::kIdas, Formulation::kGgl},
    {Integrator::kIdas, Formulation::kGgl, LinearSolver::kKlu}};

class SlidingSphere : public ::testing::TestWithParam<Solver> {};

TEST_P(SlidingSphere, RollsAtTheClosedFormTimeAndSpeedLosingTwoSevenths) {
  const Problem p = problems::SlidingSphereProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double m = Prm(p, prm, "m"), g = Prm(p, prm, "g");
  const double mu = Prm(p, prm, "mu"), v0 = Prm(p, prm, "v0");
  SimulationOptions o = p.defaults;
  GetParam().ApplyTo(&o);
  Keep keep;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.contact.friction.size(), 1u);
  const FrictionContactReport& f = s.contact.friction[0];
  // One switch: slip -> stick (rolling), at t*.
  const std::vector<ContactEvent> stick = Kind(s, "stick");
  ASSERT_EQ(stick.size(), 1u);
  EXPECT_EQ(f.slip_to_stick, 1);
  EXPECT_EQ(f.stick_to_slip, 0);
  EXPECT_EQ(Kind(s, "slip").size(), 0u);
  const double t_star = problems::SlidingSphereRollTime(v0, mu, g);
  EXPECT_NEAR(stick[0].t, t_star, kClosedForm * t_star);
  // Rolling at 5 v0 / 7, r w = -vx.
  const Sample& last = s.final;
  const double r = Prm(p, prm, "r");
  EXPECT_NEAR(last.v[0], 5.0 * v0 / 7.0, kClosedForm * v0);
  EXPECT_NEAR(last.v[0] + r * last.v[2], 0.0, kClosedForm * v0);
  // 2/7 of the kinetic energy lost, all of it friction work.
  const double e0 = 0.5 * m * v0 * v0;
  const double lost = keep.samples.front().energy - last.energy;
  EXPECT_NEAR(lost, 2.0 * e0 / 7.0, kClosedForm * e0);
  EXPECT_NEAR(last.friction_work, -2.0 * e0 / 7.0, kClosedForm * e0);
  EXPECT_NEAR(last.energy_residual, 0.0, kClosedForm * e0);
  // While it slips the force lies on the cone; rolling, the contact does
  // no work and needs no friction force.
  EXPECT_LT(f.max_slip_cone_error, 1e-12 * m * g);
  ASSERT_TRUE(f.any_stick);
  EXPECT_LT(f.max_stick_power, 1e-12 * m * g * v0);
  EXPECT_NEAR(f.min_stick_margin, mu * m * g, 1e-12 * m * g);
  for (const Sample& x : keep.samples) {
    if (x.t <= t_star) continue;
    EXPECT_NEAR(x.friction_work, last.friction_work, 1e-12 * e0) << x.t;
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers,
                         SlidingSphere,
                         ::testing::ValuesIn(kSolvers),
                         SolverName);

TEST(BlockOnIncline, BelowTheFrictionAngleItDoesNotMoveAtAll) {
  const Problem p = problems::BlockOnInclineProblem();
  const Eigen::VectorXd prm = p.model.default_parameters();
  const double m = Prm(p, prm, "m"), g = Prm(p, prm, "g");
  const double alpha = Prm(p, prm, "alpha"), mu_s = Prm(p, prm, "mu_s");
  ASSERT_LT(std::tan(alpha), mu_s);
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, p.defaults);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_NEAR(s.final.t, 10.0, 1e-12);
  // The bound: displacement after 10 s <= 1e-12 m (no creep).
  EXPECT_LE(std::abs(s.final.q[0]), 1e-12);
  EXPECT_LE(std::abs(s.final.v[0]), 1e-12);
  const FrictionContactReport& f = s.contact.friction[0];
  EXPECT_EQ(f.stick_to_slip, 0);
  ASSERT_TRUE(f.any_stick);
  // The friction force m g sin alpha inside the cone mu_s m g cos alpha.
  EXPECT_NEAR(f.min_stick_margin,
              m * g * (mu_s * std::cos(alpha) - std::sin(alpha)),
              1e-12 * m * g);
  EXPECT_LT(f.max_stick_power, 1e-12 * m * g);
  EXPECT_EQ(s.final.friction_work, 0.0);
}

TEST(BlockOnIncline, AboveTheFrictionAngleItSlidesAtTheClosedFormRate) {
  const Problem p = problems::BlockOnInclineProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("alpha")] = 0.5;
  const double m = Prm(p, prm, "m"), g = Prm(p, prm, "g");
  const double alpha = 0.5, mu_k = Prm(p, prm, "mu_k");
  ASSERT_GT(std::tan(alpha), Prm(p, prm, "mu_s"));
  SimulationOptions o = p.defaults;
  o.t_end = 2.0;
  Keep keep;
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o, &keep);
  ASSERT_TRUE(s.ok) << s.error;
  const double a = g * (std::sin(alpha) - mu_k * std::cos(alpha));
  ASSERT_GT(keep.samples.size(), 10u);
  for (const Sample& x : keep.samples) {
    const double exact = 0.5 * a * x.t * x.t;
    EXPECT_NEAR(x.q[0], exact, kClosedForm * (1.0 + exact)) << x.t;
    EXPECT_NEAR(x.v[0], a * x.t, kClosedForm * (1.0 + a * x.t)) << x.t;
    // The friction work -mu_k m g cos(alpha) s.
    EXPECT_NEAR(x.friction_work, -mu_k * m * g * std::cos(alpha) * exact,
                kClosedForm * (1.0 + exact));
  }
  EXPECT_LT(s.contact.friction[0].max_slip_cone_error, 1e-12 * m * g);
  EXPECT_NEAR(s.final.energy_residual, 0.0, 1e-9);
}

// Painleve's rod at tan theta = 2: consistent below mu = 4/3, reported
// inconsistent above, naming the contact and mu.
TEST(PainleveRod, AboveFourThirdsTheStartIsInconsistent) {
  const Problem p = problems::PainleveRodProblem();
  Eigen::VectorXd prm = p.model.default_parameters();
  const double theta = Prm(p, prm, "theta0");
  EXPECT_LT(problems::PainleveRodNormalCoefficient(theta, 1.32), 0.1);
  EXPECT_GT(problems::PainleveRodNormalCoefficient(theta, 1.32), 0.0);
  EXPECT_LT(problems::PainleveRodNormalCoefficient(theta, 1.34), 0.0);
  prm[p.model.ParameterIndex("mu")] = 1.32;
  SimulationOptions o = p.defaults;
  o.t_end = 0.02;
  const SimulationSummary ok = Simulate(p.model, p.initial(prm), prm, o);
  EXPECT_TRUE(ok.ok) << ok.error;
  prm[p.model.ParameterIndex("mu")] = 1.34;
  const SimulationSummary bad = Simulate(p.model, p.initial(prm), prm, o);
  EXPECT_FALSE(bad.ok);
  EXPECT_THAT(bad.error,
              AllOf(HasSubstr("contact 'end'"), HasSubstr("1.34"),
                    HasSubstr("Painleve"), HasSubstr("inconsistent")));
}

// A block on a horizontal plane (coordinates s, n; the normal n >= 0,
// the friction row v_s; and for `cone` a third coordinate w with the
// friction rows (v_s, v_w)), pulled along s by a force `rate` t and held
// back by a spring `k` s.
struct PlaneBlock {
  double m = 1.0, g = 9.81, mu_s = 0.5, mu_k = 0.3, rate = 0.0, k = 0.0;
  bool cone = false;
  Model Build() const {
    ModelBuilder b("plane_block");
    b.Coordinates(cone ? std::vector<std::string>{"s", "n", "w"}
                       : std::vector<std::string>{"s", "n"});
    const double m_ = m, g_ = g, k_ = k, rate_ = rate;
    b.KineticEnergy(
        [m_](const auto& x) { return 0.5 * m_ * x.v.squaredNorm(); });
    b.PotentialEnergy([=](const auto& x) {
      return m_ * g_ * x.q[1] + 0.5 * k_ * x.q[0] * x.q[0];
    });
    const int nv = cone ? 3 : 2;
    b.OtherLoads([rate_, nv](const auto& x) {
      using S = Scalar<decltype(x)>;
      VecX<S> f = VecX<S>::Zero(nv);
      f[0] = rate_ * x.t;
      return f;
    });
    b.Holonomic("plane", [](const auto& x) { return x.q[1]; });
    if (cone) {
      b.Nonholonomic(
          "plane_slip",
          [](const auto& x) {
            using S = Scalar<decltype(x)>;
            VecX<S> u(2);
            u << x.v[0], x.v[2];
            return u;
          },
          2);
    } else {
      b.Nonholonomic("plane_slip", [](const auto& x) { return x.v[0]; });
    }
    ContactLaw law;
    law.friction = "plane_slip";
    law.mu_static = mu_s;
    law.mu_kinetic = mu_k;
    b.Unilateral("plane", law);
    return std::move(b).Build();
  }
};

SimulationOptions Tight(double t_end,
                        Solver solver = {Integrator::kCvodesBdf,
                                         Formulation::kBaumgarte}) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = 0.01;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  solver.ApplyTo(&o);
  return o;
}

// The planar switches on each solver.
class PlanarSwitch : public ::testing::TestWithParam<Solver> {};

// Stick -> slip: the force rate t reaches mu_s m g at t_s (the slip
// margin's root); then m s'' = rate t - mu_k m g.
TEST_P(PlanarSwitch, ARampForceBreaksStictionAtTheClosedFormTime) {
  PlaneBlock pb;
  pb.rate = 10.0;
  const Model model = pb.Build();
  InitialState x0;
  x0.q = Eigen::Vector2d::Zero();
  x0.v = Eigen::Vector2d::Zero();
  Keep keep;
  const SimulationSummary s = Simulate(model, x0, model.default_parameters(),
                                       Tight(1.0, GetParam()), &keep);
  ASSERT_TRUE(s.ok) << s.error;
  const double ts = pb.mu_s * pb.m * pb.g / pb.rate;
  const std::vector<ContactEvent> slip = Kind(s, "slip");
  ASSERT_EQ(slip.size(), 1u);
  EXPECT_NEAR(slip[0].t, ts, kClosedForm * ts);
  EXPECT_EQ(s.contact.friction[0].stick_to_slip, 1);
  for (const Sample& x : keep.samples) {
    if (x.t < ts) {
      EXPECT_EQ(x.q[0], 0.0) << x.t;  // stuck: no creep at all
      continue;
    }
    const double d = x.t - ts;
    const double exact =
        pb.rate * (x.t * x.t * x.t - ts * ts * ts) / (6.0 * pb.m) -
        pb.rate * ts * ts * d / (2.0 * pb.m) - 0.5 * pb.mu_k * pb.g * d * d;
    EXPECT_NEAR(x.q[0], exact, kClosedForm) << x.t;
  }
}

// Slip -> slip reversals and a final stick: a spring k pulls the block
// from s0; each half swing (pi sqrt(m / k)) ends at a turning point
// |s_n| = s0 - 2 n d, d = mu m g / k, until |s_n| <= mu_s m g / k holds
// it. With s0 = 0.2: two reversals, then stuck at s_3 = -(s0 - 6 d).
TEST_P(PlanarSwitch, ASpringOscillatorReversesTwiceThenSticks) {
  PlaneBlock pb;
  pb.k = 100.0;
  pb.mu_s = pb.mu_k = 0.3;
  const Model model = pb.Build();
  const double s0 = 0.2, d = pb.mu_k * pb.m * pb.g / pb.k;
  InitialState x0;
  x0.q = Eigen::Vector2d(s0, 0.0);
  x0.v = Eigen::Vector2d::Zero();
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), Tight(1.5, GetParam()));
  ASSERT_TRUE(s.ok) << s.error;
  const double half = std::acos(-1.0) * std::sqrt(pb.m / pb.k);
  const std::vector<ContactEvent> slip = Kind(s, "slip");
  const std::vector<ContactEvent> stick = Kind(s, "stick");
  ASSERT_EQ(slip.size(), 2u);
  ASSERT_EQ(stick.size(), 1u);
  EXPECT_EQ(s.contact.friction[0].reversals, 2);
  EXPECT_NEAR(slip[0].t, half, kClosedForm);
  EXPECT_NEAR(slip[1].t, 2.0 * half, kClosedForm);
  EXPECT_NEAR(stick[0].t, 3.0 * half, kClosedForm);
  const double s3 = -(s0 - 6.0 * d);
  EXPECT_NEAR(s.final.q[0], s3, kClosedForm);
  EXPECT_NEAR(s.final.friction_work, 0.5 * pb.k * (s3 * s3 - s0 * s0),
              kClosedForm);
  EXPECT_NEAR(s.final.energy_residual, 0.0, kClosedForm);
}

// A 3D cone (two friction rows): launched along (3, 4) / 5 at |v0| = 2,
// it slides straight, decelerating at mu_k g, and sticks after
// |v0| / (mu_k g) having gone |v0|^2 / (2 mu_k g).
TEST(FrictionSwitch, AConeSlidesStraightAndSticksAtTheClosedFormPoint) {
  PlaneBlock pb;
  pb.cone = true;
  const Model model = pb.Build();
  const double v0 = 2.0;
  InitialState x0;
  x0.q = Eigen::Vector3d::Zero();
  x0.v = Eigen::Vector3d(0.6 * v0, 0.0, 0.8 * v0);
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), Tight(1.5));
  ASSERT_TRUE(s.ok) << s.error;
  const std::vector<ContactEvent> stick = Kind(s, "stick");
  ASSERT_EQ(stick.size(), 1u);
  const double t_stop = v0 / (pb.mu_k * pb.g);
  const double dist = v0 * v0 / (2.0 * pb.mu_k * pb.g);
  EXPECT_NEAR(stick[0].t, t_stop, kClosedForm);
  EXPECT_NEAR(s.final.q[0], 0.6 * dist, kClosedForm);
  EXPECT_NEAR(s.final.q[2], 0.8 * dist, kClosedForm);
  EXPECT_NEAR(s.final.friction_work, -0.5 * pb.m * v0 * v0, kClosedForm);
  EXPECT_LT(s.contact.friction[0].max_slip_cone_error, 1e-12);
}

// A block dropped from h with a horizontal speed vx: the plastic impact
// at sqrt(2 h / g), normal speed vn = sqrt(2 g h), takes the normal
// impulse m vn and, sliding through it (vx > mu_k vn), the friction
// impulse -mu_k m vn (docs/friction.md, "Impacts with friction"): it
// leaves the impact slipping at vx+ = vx - mu_k vn, and sticks vx+ /
// (mu_k g) later, vx+^2 / (2 mu_k g) further, the slip's work -m vx+^2 /
// 2 and the impact's -m (vn^2 + vx^2 - vx+^2) / 2.
TEST_P(PlanarSwitch, AContactClosedByAnImpactSlipsThenSticks) {
  PlaneBlock pb;
  const Model model = pb.Build();
  const double h = 0.1, vx = 1.0;
  InitialState x0;
  x0.q = Eigen::Vector2d(0.0, h);
  x0.v = Eigen::Vector2d(vx, 0.0);
  const SimulationSummary s =
      Simulate(model, x0, model.default_parameters(), Tight(1.0, GetParam()));
  ASSERT_TRUE(s.ok) << s.error;
  const double t_imp = std::sqrt(2.0 * h / pb.g);
  const double vn = std::sqrt(2.0 * pb.g * h);
  const double vx_plus = vx - pb.mu_k * vn;
  ASSERT_GT(vx_plus, 0.0);
  const std::vector<ContactEvent> impact = Kind(s, "impact");
  const std::vector<ContactEvent> stick = Kind(s, "stick");
  ASSERT_EQ(impact.size(), 1u);
  ASSERT_EQ(stick.size(), 1u);
  EXPECT_NEAR(impact[0].t, t_imp, kClosedForm);
  EXPECT_NEAR(impact[0].u_plus[1], vx_plus, kClosedForm);
  EXPECT_NEAR(impact[0].impulse[1], -pb.mu_k * pb.m * vn, kClosedForm);
  EXPECT_NEAR(impact[0].energy_change,
              -0.5 * pb.m * (vn * vn + vx * vx - vx_plus * vx_plus),
              kClosedForm);
  EXPECT_NEAR(stick[0].t, t_imp + vx_plus / (pb.mu_k * pb.g), kClosedForm);
  const double dist = vx_plus * vx_plus / (2.0 * pb.mu_k * pb.g);
  EXPECT_NEAR(s.final.q[0], vx * t_imp + dist, kClosedForm);
  EXPECT_NEAR(s.final.friction_work, -0.5 * pb.m * vx_plus * vx_plus,
              kClosedForm);
  EXPECT_EQ(s.contact.friction[0].slip_to_stick, 1);
  EXPECT_EQ(s.contact.friction[0].stick_to_slip, 0);
}

INSTANTIATE_TEST_SUITE_P(Solvers,
                         PlanarSwitch,
                         ::testing::ValuesIn(kSolvers),
                         SolverName);

// A one-body model with friction, for bad input.
Model Block(double mu, const std::string& friction, int normal_rows = 1) {
  ModelBuilder b("block");
  b.Coordinates({"s", "n"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[1]; });
  if (normal_rows == 1)
    b.Holonomic("plane", [](const auto& x) { return x.q[1]; });
  else
    b.Holonomic(
        "plane",
        [](const auto& x) {
          return Eigen::Matrix<std::decay_t<decltype(x.q[0])>, 2, 1>(
              x.q[1], x.q[1] + x.q[0]);
        },
        2);
  b.Nonholonomic("slip", [](const auto& x) { return x.v[0]; });
  b.Holonomic("rail", [](const auto& x) { return x.q[0] - x.q[1]; });
  ContactLaw law;
  law.friction = friction;
  law.mu_static = mu;
  b.Unilateral("plane", law);
  return std::move(b).Build();
}

TEST(FrictionInput, BadDeclarationsAreRefusedNamingTheContact) {
  using Thrown = std::invalid_argument;
  EXPECT_THAT([] { Block(-0.2, "slip"); },
              ::testing::ThrowsMessage<Thrown>(
                  AllOf(HasSubstr("contact 'plane'"), HasSubstr("-0.2"),
                        HasSubstr("negative"))));
  EXPECT_THAT([] { Block(0.5, "rail"); },
              ::testing::ThrowsMessage<Thrown>(AllOf(
                  HasSubstr("contact 'plane'"), HasSubstr("Nonholonomic"))));
  EXPECT_THAT([] { Block(0.5, "nothing"); },
              ::testing::ThrowsMessage<Thrown>(HasSubstr("nothing")));
  EXPECT_THAT([] { Block(0.5, "slip", 2); },
              ::testing::ThrowsMessage<Thrown>(AllOf(
                  HasSubstr("contact 'plane'"), HasSubstr("one normal"))));
}

// The IDAS residual of a slipping mode (DaeForm, docs/friction.md, "On
// IDAS"): the row of lambda_t is lambda_t + mu sigma lambda_n, and the
// dense and KLU Jacobians dF/dy + cj dF/dy' (the KLU values scattered on
// their pattern) agree with central differences of the residual. A
// missing (lambda_t, lambda_n) entry only slows Newton down, which the
// runs above would not show.
TEST(FrictionOnIdas, SlippingRowResidualAndJacobians) {
  const Problem p = problems::SlidingSphereProblem();
  const Model& m = p.model;
  auto row_of = [&](const std::string& name) {
    for (int c = 0; c < m.num_constraints(); ++c)
      if (m.constraints()[c].name == name) return m.constraint_row(c);
    return -1;
  };
  const int row = row_of("ground_slip"), normal = row_of("ground");
  ASSERT_GE(row, 0);
  ASSERT_GE(normal, 0);
  for (LinearSolver ls : {LinearSolver::kDense, LinearSolver::kKlu}) {
    for (Formulation f : {Formulation::kBaumgarte, Formulation::kGgl}) {
      SimulationOptions o = p.defaults;
      Solver{Integrator::kIdas, f, ls}.ApplyTo(&o);
      const std::string at = std::string(ToString(f)) + " " + ToString(ls);
      auto mech = internal::MakeMechanics(m, o, /*sparse=*/false);
      mech->SetParameters(m.default_parameters());
      internal::DaeForm form(mech.get(), o, nullptr);
      SlipRow slip;
      slip.row = row;
      slip.normal = normal;
      slip.mu = 0.3;
      slip.sigma = -1.0;
      slip.d_row = -1.0;
      mech->SetOpenRows({row});
      mech->SetSlipRows({slip});
      const int n = form.size(), il = form.layout().il();
      std::mt19937 rng(5);
      std::uniform_real_distribution<double> U(-1.0, 1.0);
      Eigen::VectorXd y(n), yp(n), r(n), rp(n), rm(n);
      for (int i = 0; i < n; ++i) y[i] = U(rng), yp[i] = U(rng);
      form.Residual(0.1, y.data(), yp.data(), r.data());
      EXPECT_NEAR(r[il + row], y[il + row] - 0.3 * y[il + normal], 1e-15) << at;
      const double cj = 3.0, h = 1e-6;
      Eigen::MatrixXd fd(n, n), dense(n, n);
      for (int j = 0; j < n; ++j) {
        Eigen::VectorXd yj = y, ypj = yp;
        yj[j] += h;
        ypj[j] += cj * h;
        form.Residual(0.1, yj.data(), ypj.data(), rp.data());
        yj[j] -= 2.0 * h;
        ypj[j] -= 2.0 * cj * h;
        form.Residual(0.1, yj.data(), ypj.data(), rm.data());
        fd.col(j) = (rp - rm) / (2.0 * h);
      }
      form.DenseJacobian(0.1, cj, y.data(), yp.data(), dense.data());
      EXPECT_NEAR(dense(il + row, il + normal), -0.3, 1e-15) << at;
      EXPECT_TRUE(testing::NearRel(dense, fd, 1e-7)) << at;
      const auto& pattern = form.Pattern();
      std::size_t nnz = 0;
      for (const auto& col : pattern) nnz += col.size();
      std::vector<double> values(nnz);
      form.SparseJacobian(0.1, cj, y.data(), yp.data(), values.data());
      Eigen::MatrixXd sparse = Eigen::MatrixXd::Zero(n, n);
      std::size_t k = 0;
      for (int j = 0; j < n; ++j)
        for (int i : pattern[static_cast<std::size_t>(j)])
          sparse(i, j) = values[k++];
      EXPECT_TRUE(testing::NearRel(sparse, dense, 1e-14)) << at;
    }
  }
}

// A 3D cone's slip direction v_t / |v_t| is not in the IDAS residual.
// (Sensitivities: friction_sensitivity_test.cpp.)
TEST(FrictionInput, IdasRefusesA3dConeWithTheReason) {
  PlaneBlock pb;
  pb.cone = true;
  const Model model = pb.Build();
  InitialState x0;
  x0.q = Eigen::Vector3d::Zero();
  x0.v = Eigen::Vector3d(1.2, 0.0, 1.6);
  for (Formulation f : {Formulation::kBaumgarte, Formulation::kGgl}) {
    EXPECT_THAT(
        [&] {
          Simulate(model, x0, model.default_parameters(),
                   Tight(0.1, {Integrator::kIdas, f}));
        },
        ::testing::ThrowsMessage<std::invalid_argument>(
            AllOf(HasSubstr("3D friction cone"), HasSubstr("CVODES"),
                  HasSubstr("v_t / |v_t|"))));
  }
}

}  // namespace friction_test
}  // namespace
}  // namespace daedalus
