// The catalogue's four-bar and slider-crank written as multibody
// descriptions (problems/four_bar_mb, problems/slider_crank_mb) against the
// hand-derived models (problems/four_bar, problems/slider_crank): the same
// M, h, J, Phi, bias, energies and forces to round-off at random states and
// parameters, on both evaluators, and the same trajectory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "daedalus/dynamics.hpp"
#include "four_bar.hpp"
#include "four_bar_mb.hpp"
#include "problems/catalogue_support.hpp"
#include "slider_crank.hpp"
#include "slider_crank_mb.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace catalogue_mb_test {

// Agreement "to round-off": both models compute the same closed forms in a
// different order (per-body sums, frame offsets, a point coincidence
// instead of a hand-written loop), so entries differ by a few ulps of the
// largest entry.
constexpr double kAgree = 1e-12;

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  EXPECT_GT(scale, 0.0) << "the reference is all zero";
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

// The largest relative differences seen, printed by each test (M, h, J).
struct Worst {
  double M = 0.0, h = 0.0, J = 0.0;
  void Print(const char* what) const {
    std::printf("%s: largest relative difference M %.1e, h %.1e, J %.1e\n",
                what, M, h, J);
  }
};

// Evaluates both models at (t, q, v, params) and compares every quantity
// of the three stages.
void ExpectSameEquations(const Model& hand,
                         const Model& mb,
                         const Eigen::VectorXd& params,
                         const testing::RandomState& s,
                         bool compiled,
                         Worst* worst) {
  Workspace a(hand), b(mb);
  b.use_compiled = compiled;
  for (Workspace* ws : {&a, &b}) {
    ws->SetParameters(params);
    ws->SetState(s.t, s.q, s.v);
    EvaluateAll(ws);
  }
  worst->M = std::max(worst->M, RelDiff(b.M, a.M));
  worst->h = std::max(worst->h, RelDiff(b.h, a.h));
  worst->J = std::max(worst->J, RelDiff(b.J, a.J));
  EXPECT_LT(RelDiff(b.M, a.M), kAgree) << "M\n" << b.M << "\nvs\n" << a.M;
  EXPECT_LT(RelDiff(b.h, a.h), kAgree)
      << "h " << b.h.transpose() << " vs " << a.h.transpose();
  EXPECT_LT(RelDiff(b.J, a.J), kAgree) << "J\n" << b.J << "\nvs\n" << a.J;
  EXPECT_LT(RelDiff(b.phi, a.phi), kAgree);
  EXPECT_LT(RelDiff(b.bias, a.bias), kAgree);
  EXPECT_LT(RelDiff(b.inertial, a.inertial), kAgree);
  EXPECT_NEAR(b.kinetic, a.kinetic, kAgree * std::abs(a.kinetic));
  EXPECT_NEAR(b.potential, a.potential,
              kAgree * std::max(std::abs(a.potential), a.kinetic));
  EXPECT_EQ(b.phi_t.cwiseAbs().maxCoeff(), 0.0);
}

TEST(MultibodyCatalogue, FourBarEquationsAgreeWithHandDerived) {
  const Problem hand = problems::FourBarProblem();
  const Problem mb = problems::FourBarMbProblem();
  ASSERT_EQ(mb.model.nq(), hand.model.nq());
  ASSERT_EQ(mb.model.nc(), hand.model.nc());
  EXPECT_EQ(mb.model.coordinate_names(), hand.model.coordinate_names());
  EXPECT_EQ(mb.model.parameter_names(), hand.model.parameter_names());
  std::mt19937 gen(7);
  Worst worst;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    testing::RandomState s(3, 3, seed, 0.0);
    s.q *= M_PI;
    s.v *= 3.0;
    Eigen::VectorXd prm = hand.model.default_parameters();
    if (seed > 3) prm.head(8) = testing::RandomVector(gen, 8, 0.3, 2.0);
    for (bool compiled : {true, false}) {
      SCOPED_TRACE("seed " + std::to_string(seed) +
                   (compiled ? " compiled" : " dual numbers"));
      ExpectSameEquations(hand.model, mb.model, prm, s, compiled, &worst);
    }
  }
  worst.Print("four_bar_mb vs four_bar");
}

TEST(MultibodyCatalogue, SliderCrankEquationsAgreeWithHandDerived) {
  const Problem hand = problems::SliderCrankProblem();
  const Problem mb = problems::SliderCrankMbProblem();
  ASSERT_EQ(mb.model.nq(), hand.model.nq());
  ASSERT_EQ(mb.model.nc(), hand.model.nc());
  EXPECT_EQ(mb.model.coordinate_names(), hand.model.coordinate_names());
  EXPECT_EQ(mb.model.parameter_names(), hand.model.parameter_names());
  std::mt19937 gen(11);
  Worst worst;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    testing::RandomState s(3, 3, seed, 0.0);
    s.q[0] *= M_PI;
    s.q[1] = 1.2 + 0.3 * s.q[1];  // the slider right of the crank
    s.q[2] *= M_PI;
    s.v *= 2.0;
    Eigen::VectorXd prm = hand.model.default_parameters();
    if (seed > 3) prm = testing::RandomVector(gen, 8, 0.2, 1.5);
    for (bool compiled : {true, false}) {
      SCOPED_TRACE("seed " + std::to_string(seed) +
                   (compiled ? " compiled" : " dual numbers"));
      ExpectSameEquations(hand.model, mb.model, prm, s, compiled, &worst);
      // The spring-damper and the force: D and Q_r separately.
      Workspace a(hand.model), b(mb.model);
      b.use_compiled = compiled;
      for (Workspace* ws : {&a, &b}) {
        ws->SetParameters(prm);
        ws->SetState(s.t, s.q, s.v);
        EvaluateAll(ws);
      }
      EXPECT_LT(RelDiff(b.D, a.D), kAgree);
      EXPECT_LT(RelDiff(b.Qr, a.Qr), kAgree);
    }
  }
  worst.Print("slider_crank_mb vs slider_crank");
}

// The same run of both descriptions at tight tolerances ends at the same
// state. The equations agree to round-off, but an adaptive integrator's
// step sequence reacts to ulp-level differences in them, so the final
// states differ at the level of the integration error, not of round-off:
// the hand-derived model run on dual numbers instead of compiled programs
// differs from itself by as much (measured at these settings: four_bar
// 8.5e-10 against itself, 6.0e-10 against four_bar_mb; slider_crank
// 1.5e-10 and 5.6e-10; neither shrinks steadily with the tolerance:
// four_bar_mb is 7.7e-10, 6.0e-10, 1.1e-9 from four_bar at rtol 1e-10,
// 1e-11, 1e-12). Both differences are held to the same 1e-9.
void ExpectWithinSelfDifference(const Problem& hand,
                                const SimulationOptions& o,
                                const Sample& hand_end,
                                const Sample& mb_end) {
  SimulationOptions dual = o;
  dual.compiled = false;
  const testing::Run self = testing::RunProblem(hand, dual);
  ASSERT_TRUE(self.summary.ok) << self.summary.error;
  const double own = (self.samples.back().q - hand_end.q).cwiseAbs().maxCoeff();
  const double mb = (mb_end.q - hand_end.q).cwiseAbs().maxCoeff();
  std::printf(
      "%s: hand-derived compiled vs dual numbers %.1e, vs multibody "
      "%.1e\n",
      hand.model.name().c_str(), own, mb);
  EXPECT_LT(own, 1e-9);
  EXPECT_LT(mb, 1e-9);
}

TEST(MultibodyCatalogue, FourBarTrajectoryAgrees) {
  const Problem hand = problems::FourBarProblem();
  const Problem mb = problems::FourBarMbProblem();
  SimulationOptions o = hand.defaults;
  // rtol 1e-13: the final energy's global error is 8e-9 per run at rtol
  // 1e-11 (both models; 1.0986157694 at 1e-13, where it is 3e-11), so the
  // 1e-9 bound on their difference held there only while the two step
  // sequences' errors happened to agree, and failed (1.9e-9) when
  // CVODES's Newton matrix, and so the step sequences, changed.
  o.rtol = 1e-13;
  o.atol = 1e-15;
  const testing::Run a = testing::RunProblem(hand, o);
  const testing::Run b = testing::RunProblem(mb, o);
  ASSERT_TRUE(a.summary.ok) << a.summary.error;
  ASSERT_TRUE(b.summary.ok) << b.summary.error;
  ASSERT_EQ(a.samples.size(), b.samples.size());
  const Sample &ea = a.samples.back(), &eb = b.samples.back();
  EXPECT_GT(ea.q[0], 4 * M_PI);  // the crank really turned
  EXPECT_LT((eb.q - ea.q).cwiseAbs().maxCoeff(), 1e-9);
  ExpectWithinSelfDifference(hand, o, ea, eb);
  EXPECT_LT((eb.v - ea.v).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((eb.lambda - ea.lambda).cwiseAbs().maxCoeff(),
            1e-8 * ea.lambda.cwiseAbs().maxCoeff());
  EXPECT_NEAR(b.summary.energy_final, a.summary.energy_final, 1e-9);
}

TEST(MultibodyCatalogue, SliderCrankTrajectoryAgrees) {
  const Problem hand = problems::SliderCrankProblem();
  const Problem mb = problems::SliderCrankMbProblem();
  SimulationOptions o = hand.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-12;
  const testing::Run a = testing::RunProblem(hand, o);
  const testing::Run b = testing::RunProblem(mb, o);
  ASSERT_TRUE(a.summary.ok) << a.summary.error;
  ASSERT_TRUE(b.summary.ok) << b.summary.error;
  ASSERT_EQ(a.samples.size(), b.samples.size());
  const Sample &ea = a.samples.back(), &eb = b.samples.back();
  EXPECT_GT((ea.q - a.samples.front().q).cwiseAbs().maxCoeff(), 0.1);
  EXPECT_LT((eb.q - ea.q).cwiseAbs().maxCoeff(), 1e-9);
  ExpectWithinSelfDifference(hand, o, ea, eb);
  EXPECT_LT((eb.v - ea.v).cwiseAbs().maxCoeff(), 1e-8);
  // The quadrature G (time integral of T), the running integral of the
  // functional G (the same integrand, integrated as "functional:G") and
  // the damping loss.
  ASSERT_EQ(eb.quadratures.size(), 2);
  EXPECT_GT(ea.quadratures[0], 0.0);
  EXPECT_NEAR(eb.quadratures[0], ea.quadratures[0], 1e-9 * ea.quadratures[0]);
  EXPECT_NEAR(eb.quadratures[1], eb.quadratures[0], 1e-9 * ea.quadratures[0]);
  EXPECT_GT(ea.damping_loss, 0.0);
  EXPECT_NEAR(eb.damping_loss, ea.damping_loss, 1e-9 * ea.damping_loss);
}

// The generated functions are recordable (no branch on a value), so the
// models run on compiled programs like the hand-written ones.
TEST(MultibodyCatalogue, GeneratedModelsAreCompiled) {
  for (const Problem& p :
       {problems::FourBarMbProblem(), problems::SliderCrankMbProblem()}) {
    std::string why;
    EXPECT_TRUE(IsCompiled(p.model, &why)) << p.model.name() << ": " << why;
  }
}

// The sparse path differentiates each body term and closure along its
// declared coordinates only and checks the declarations at its first
// evaluation: a wrong declaration would be an error, a missing coupling a
// different motion. Sparse KLU and the dense path end at the same state.
TEST(MultibodyCatalogue, DeclaredSparsityHoldsOnTheSparsePath) {
  const Problem mb = problems::FourBarMbProblem();
  SimulationOptions o = mb.defaults;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  o.t_end = 1.0;
  const testing::Run dense = testing::RunProblem(mb, o);
  o.kkt.method = KktMethod::kSparseLu;
  const testing::Run sparse = testing::RunProblem(mb, o);
  ASSERT_TRUE(dense.summary.ok) << dense.summary.error;
  ASSERT_TRUE(sparse.summary.ok) << sparse.summary.error;
  EXPECT_LT(
      (sparse.samples.back().q - dense.samples.back().q).cwiseAbs().maxCoeff(),
      1e-9);
}

// Forward sensitivities see through the description's parameter
// expressions: dG/dp of the slider-crank's quadrature for the spring (k),
// the damper (c), the rod inertia (J2) and the force (F) agree with the
// hand-derived model's.
TEST(MultibodyCatalogue, SliderCrankSensitivitiesAgree) {
  const Problem hand = problems::SliderCrankProblem();
  const Problem mb = problems::SliderCrankMbProblem();
  SimulationOptions o = hand.defaults;
  // As in tests/sensitivity: GGL on IDAS at tight tolerances needs the
  // multipliers' Newton tolerance loosened (they are outside the error
  // test); at rtol 1e-12 the forward error is about 1e-10 relative.
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.multiplier_atol = 1.0;
  o.output_step = o.t_end;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"k", "c", "J2", "F"};
  const Eigen::VectorXd prm = hand.model.default_parameters();
  const SimulationSummary a = Simulate(hand.model, hand.initial(prm), prm, o);
  const SimulationSummary b = Simulate(mb.model, mb.initial(prm), prm, o);
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(b.ok) << b.error;
  // G and the functional G's running integral (the same integrand).
  ASSERT_EQ(a.sensitivities.quadratures.size(), 2u);
  ASSERT_EQ(b.sensitivities.quadratures.size(), 2u);
  EXPECT_EQ(a.sensitivities.quadratures[1].first, "functional:G");
  EXPECT_LT((a.sensitivities.quadratures[1].second -
             a.sensitivities.quadratures[0].second)
                .cwiseAbs()
                .maxCoeff(),
            1e-8 * a.sensitivities.quadratures[0].second.cwiseAbs().maxCoeff());
  const Eigen::VectorXd ga = a.sensitivities.quadratures[0].second;
  const Eigen::VectorXd gb = b.sensitivities.quadratures[0].second;
  ASSERT_EQ(ga.size(), 4);
  EXPECT_GT(ga.cwiseAbs().minCoeff(), 1e-3);
  EXPECT_LT((gb - ga).cwiseAbs().maxCoeff(), 1e-8 * ga.cwiseAbs().maxCoeff())
      << gb.transpose() << " vs " << ga.transpose();
}

}  // namespace catalogue_mb_test
}  // namespace
}  // namespace daedalus
