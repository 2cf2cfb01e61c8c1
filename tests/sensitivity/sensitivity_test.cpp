// Forward (IDAS) and adjoint (CVODES) parameter sensitivities against the
// idasSlCrank_FSA_dns reference, against each other, and against central
// differences of whole runs (issue 5).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"
#include "four_bar.hpp"
#include "pendulum.hpp"
#include "slider_crank.hpp"

namespace daedalus {
namespace {
namespace sensitivity_test {

// dG/dp for (k, c) of idasSlCrank_FSA_dns at high accuracy (issue 5).
constexpr double kRefDk = 0.333448106128, kRefDc = -0.363754033971;

double Rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

SimulationOptions SliderOptions(double rtol, double atol) {
  SimulationOptions o = problems::SliderCrankProblem().defaults;
  o.rtol = rtol;
  o.atol = atol;
  o.output_step = o.t_end;  // only the final value matters here
  return o;
}

SimulationSummary RunSlider(const SimulationOptions& o,
                            const Eigen::VectorXd& params) {
  const Problem pr = problems::SliderCrankProblem();
  return Simulate(pr.model, pr.initial(params), params, o);
}

Eigen::VectorXd Quad(const SimulationSummary& s, const std::string& name) {
  for (const auto& [n, g] : s.sensitivities.quadratures)
    if (n == name) return g;
  for (const auto& [n, g] : s.sensitivities.functionals)
    if (n == name) return g;
  ADD_FAILURE() << "no sensitivity entry '" << name << "': " << s.error;
  return Eigen::VectorXd::Constant(8, std::nan(""));
}

TEST(Sensitivity, SliderCrankForwardAtTheExampleTolerances) {
  SimulationOptions o = SliderOptions(1e-6, 1e-7);
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"k", "c"};
  const Problem pr = problems::SliderCrankProblem();
  const SimulationSummary s = RunSlider(o, pr.model.default_parameters());
  ASSERT_TRUE(s.ok) << s.error;
  const Eigen::VectorXd g = Quad(s, "G");
  // The example prints (3.3346e-01, -3.6375e-01). At rtol 1e-6 over ten
  // seconds the global error is ~1e2 rtol relative.
  EXPECT_LT(Rel(g[0], kRefDk), 1e-4) << g[0];
  EXPECT_LT(Rel(g[1], kRefDc), 1e-4) << g[1];
  // The simultaneous corrector (the default on IDAS is the staggered one)
  // and a run without the sensitivities in the error test reach the same
  // accuracy class (measured 1e-5 and 2e-5).
  for (int variant = 0; variant < 2; ++variant) {
    SimulationOptions v = o;
    if (variant == 0)
      v.sensitivity.corrector = SensCorrector::kSimultaneous;
    else
      v.sensitivity.error_control = false;
    const Eigen::VectorXd gv =
        Quad(RunSlider(v, pr.model.default_parameters()), "G");
    EXPECT_LT(Rel(gv[0], kRefDk), 1e-4) << variant << ": " << gv[0];
    EXPECT_LT(Rel(gv[1], kRefDc), 1e-4) << variant << ": " << gv[1];
  }
}

TEST(Sensitivity, SliderCrankForwardAndAdjointConvergeToTheReference) {
  const Problem pr = problems::SliderCrankProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  // Forward, GGL on IDAS. The multipliers' Newton tolerance is loosened
  // (they are outside the error test), which tight tolerances need.
  // rtol 1e-12: at 1e-11 the forward error is 2e-9 or 1.3e-8 depending
  // on round-off-level differences in the tangent evaluation (dual numbers
  // or the compiled program), which change the step sequence; the error is
  // not monotone in rtol at this level (see below).
  SimulationOptions f = SliderOptions(1e-12, 1e-14);
  f.formulation = Formulation::kGgl;
  f.integrator = Integrator::kIdas;
  f.multiplier_atol = 1.0;
  f.sensitivity.method = SensMethod::kForward;
  f.sensitivity.parameters = {"k", "c"};
  const SimulationSummary sf = RunSlider(f, p);
  ASSERT_TRUE(sf.ok) << sf.error;
  const Eigen::VectorXd gf = Quad(sf, "G");
  // Adjoint, the Baumgarte ODE on CVODES (same motion on the manifold).
  SimulationOptions a = SliderOptions(1e-11, 1e-12);
  a.formulation = Formulation::kBaumgarte;
  a.integrator = Integrator::kCvodesBdf;
  a.sensitivity.method = SensMethod::kAdjoint;
  a.sensitivity.parameters = {"k", "c"};
  // Built, then moved in: GCC 12 misreads the inlined assignment of a
  // one-character literal as an overlapping memcpy (-Wrestrict).
  a.sensitivity.functional = std::string("G");
  const SimulationSummary sa = RunSlider(a, p);
  ASSERT_TRUE(sa.ok) << sa.error;
  const Eigen::VectorXd ga = Quad(sa, "G");
  // Measured: forward 1.3e-10, adjoint 4e-9 relative from the reference
  // (forward dG/dk, compiled tangents: 7e-7, 1.6e-6, 8e-8, 1.3e-8, 1.3e-10
  // at rtol 1e-8 ... 1e-12, atol rtol/100; dual-number tangents: 7e-7,
  // 3e-7, 6e-8, 2e-9, 5e-11).
  for (int i = 0; i < 2; ++i) {
    const double ref = i == 0 ? kRefDk : kRefDc;
    EXPECT_LT(Rel(gf[i], ref), 1e-8) << "forward " << gf[i];
    EXPECT_LT(Rel(ga[i], ref), 1e-8) << "adjoint " << ga[i];
    EXPECT_LT(Rel(gf[i], ga[i]), 1e-6);
  }
  EXPECT_NEAR(sa.sensitivities.functional_value, 3.336606799482804, 1e-8);
  // The tighter run is much closer than the example-tolerance run: the
  // result converges rather than sitting on a bias.
  SimulationOptions loose = f;
  loose.rtol = 1e-6;
  loose.atol = 1e-7;
  loose.multiplier_atol = 0.0;
  const Eigen::VectorXd gl = Quad(RunSlider(loose, p), "G");
  EXPECT_LT(std::abs(gf[0] - kRefDk), 1e-3 * std::abs(gl[0] - kRefDk));
}

TEST(Sensitivity, SliderCrankForwardMatchesCentralDifferencesOfRuns) {
  const Problem pr = problems::SliderCrankProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  SimulationOptions o = SliderOptions(1e-10, 1e-12);
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.multiplier_atol = 1.0;
  SimulationOptions fo = o;
  fo.sensitivity.method = SensMethod::kForward;
  fo.sensitivity.parameters = {"k", "c"};
  const Eigen::VectorXd g = Quad(RunSlider(fo, p), "G");
  const char* names[2] = {"k", "c"};
  for (int i = 0; i < 2; ++i) {
    const int idx = pr.model.ParameterIndex(names[i]);
    // Step 1e-3 relative: truncation ~1e-6 |G'''| p^2, and the runs' own
    // error divided by 2h must stay small too: at rtol 1e-10 G is good to
    // only ~2e-9 relative, ~2e-5 after the division, so the differenced
    // runs are at rtol 1e-12 (G to ~1e-11, ~3e-8 after the division).
    const double h = 1e-3 * std::abs(p[idx]);
    Eigen::VectorXd pp = p, pm = p;
    pp[idx] += h;
    pm[idx] -= h;
    SimulationOptions od = o;
    od.rtol = 1e-12;
    od.atol = 1e-13;
    const double Gp = RunSlider(od, pp).final.quadratures[0];
    const double Gm = RunSlider(od, pm).final.quadratures[0];
    const double fd = (Gp - Gm) / (2.0 * h);
    EXPECT_LT(Rel(g[i], fd), 1e-5) << names[i] << ": fd " << fd;
  }
}

TEST(Sensitivity, DifferenceQuotientResidualsAgreeWithTheExactOnes) {
  // At the example's tolerances: with tighter ones the DQ residuals' noise
  // (index 2 amplifies it by 1/h) stalls the corrector, which the exact
  // residuals do not (docs/sensitivities.md).
  SimulationOptions o = SliderOptions(1e-6, 1e-7);
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"k", "c"};
  const Problem pr = problems::SliderCrankProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  const Eigen::VectorXd exact = Quad(RunSlider(o, p), "G");
  o.sensitivity.difference_quotient = true;
  const Eigen::VectorXd dq = Quad(RunSlider(o, p), "G");
  // SUNDIALS's DQ uses steps ~sqrt(eps) p: agreement to ~1e-5 relative.
  EXPECT_LT(Rel(dq[0], exact[0]), 1e-4);
  EXPECT_LT(Rel(dq[1], exact[1]), 1e-4);
}

// SUNDIALS 6.4's internal difference quotient for quadrature
// sensitivities writes into a work vector of the state's length; the
// pendulum's Baumgarte ODE (4 states) carries more energy-balance
// quadratures than that, and the run overran the heap (AddressSanitizer).
// With --sens-dq the quadratures' sensitivities are exact instead; the
// state's by difference quotients agree with the exact ones.
TEST(Sensitivity, DifferenceQuotientsWithMoreQuadraturesThanStates) {
  const Problem pr = problems::PendulumProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  for (Integrator in : {Integrator::kCvodesBdf, Integrator::kIdas}) {
    SimulationOptions o = pr.defaults;
    o.t_end = 1.3;
    o.output_step = o.t_end;
    o.rtol = 1e-7;
    o.atol = 1e-8;
    o.integrator = in;
    // IDAS: GGL (the multipliers' difference quotients stall the Baumgarte
    // DAE's corrector at the first steps).
    o.formulation =
        in == Integrator::kIdas ? Formulation::kGgl : Formulation::kBaumgarte;
    o.multiplier_atol = in == Integrator::kIdas ? 1.0 : 0.0;
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.parameters = {"m", "l"};
    const SimulationSummary exact = Simulate(pr.model, pr.initial(p), p, o);
    o.sensitivity.difference_quotient = true;
    const SimulationSummary dq = Simulate(pr.model, pr.initial(p), p, o);
    ASSERT_TRUE(exact.ok) << ToString(in) << ": " << exact.error;
    ASSERT_TRUE(dq.ok) << ToString(in) << ": " << dq.error;
    // Positions and velocities (the multipliers are outside the error test
    // on IDAS); DQ steps ~sqrt(rtol) p: ~1e-4 agreement.
    const Eigen::MatrixXd a = exact.sensitivities.final.topRows(4);
    const Eigen::MatrixXd b = dq.sensitivities.final.topRows(4);
    EXPECT_LT((a - b).norm(), 1e-3 * (1.0 + a.norm())) << ToString(in);
    EXPECT_GT(a.col(1).norm(), 0.1) << ToString(in);
  }
}

// ---- pendulum: a final-state functional, a length and initial conditions

struct PendulumCase {
  Problem pr = problems::PendulumProblem();
  Eigen::VectorXd p = pr.model.default_parameters();
  SimulationOptions base() const {
    SimulationOptions o = pr.defaults;
    o.t_end = 1.3;  // away from the turning points
    o.output_step = o.t_end;
    o.rtol = 1e-10;
    o.atol = 1e-10;
    o.multiplier_atol = 1.0;
    return o;
  }
};

// The pendulum with the final height as a terminal functional.
Problem PendulumWithFunctional() {
  Problem pr = problems::PendulumProblem();
  // Rebuild with the functional: the problem's model is immutable.
  ModelBuilder b("pendulum_functional");
  b.Coordinates({"x", "y"});
  const Param m = b.Parameter("m", 1.0);
  const Param l = b.Parameter("l", 1.0);
  const Param g = b.Parameter("g", problems::kPendulumGravity);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]);
  });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1]; });
  b.Holonomic("rod", [=](const auto& x) {
    return x.q[0] * x.q[0] + x.q[1] * x.q[1] - x.p[l] * x.p[l];
  });
  b.TerminalFunctional("y_final", [](const auto& x) { return x.q[1]; });
  pr.model = std::move(b).Build();
  return pr;
}

TEST(Sensitivity, PendulumLengthAndInitialConditionsForwardAdjointAndFd) {
  const Problem pr = PendulumWithFunctional();
  const Eigen::VectorXd p = pr.model.default_parameters();
  SimulationOptions o = PendulumCase().base();
  o.sensitivity.initial_tangent = InitialStateTangent(pr, p);
  const std::vector<std::string> names = {"l", "g", "q0[y]", "v0[1]"};

  SimulationOptions fo = o;
  fo.formulation = Formulation::kBaumgarte;
  fo.integrator = Integrator::kIdas;
  fo.sensitivity.method = SensMethod::kForward;
  fo.sensitivity.parameters = names;
  const SimulationSummary sf = Simulate(pr.model, pr.initial(p), p, fo);
  ASSERT_TRUE(sf.ok) << sf.error;
  ASSERT_EQ(sf.sensitivities.components[1], "y");
  const Eigen::VectorXd fwd = sf.sensitivities.final.row(1).transpose();

  SimulationOptions ao = o;
  ao.formulation = Formulation::kBaumgarte;
  ao.integrator = Integrator::kCvodesBdf;
  ao.sensitivity.method = SensMethod::kAdjoint;
  ao.sensitivity.parameters = names;
  ao.sensitivity.functional = "y_final";
  const SimulationSummary sa = Simulate(pr.model, pr.initial(p), p, ao);
  ASSERT_TRUE(sa.ok) << sa.error;
  const Eigen::VectorXd adj = Quad(sa, "y_final");

  // Central differences of whole runs (plain GGL), perturbing a parameter
  // (the start moves with l) or the initial state (re-projected).
  SimulationOptions plain = o;
  plain.formulation = Formulation::kBaumgarte;
  plain.integrator = Integrator::kCvodesBdf;
  for (size_t i = 0; i < names.size(); ++i) {
    const double h = 1e-4;
    auto final_y = [&](double s) {
      Eigen::VectorXd pp = p;
      InitialState x0;
      if (i < 2) {
        pp[pr.model.ParameterIndex(names[i])] += s;
        x0 = pr.initial(pp);
      } else {
        x0 = pr.initial(p);
        if (i == 2)
          x0.q[1] += s;
        else
          x0.v[1] += s;
      }
      const SimulationSummary r = Simulate(pr.model, x0, pp, plain);
      EXPECT_TRUE(r.ok) << r.error;
      return r.final.q[1];
    };
    const double fd = (final_y(h) - final_y(-h)) / (2.0 * h);
    // FD: truncation ~h^2 |y'''| ~ 1e-8 plus run error / h ~ 1e-6 at
    // worst; measured differences 4e-7 (FD), 3e-8 (forward vs adjoint).
    EXPECT_NEAR(fwd[i], fd, 2e-6 * (1.0 + std::abs(fd))) << names[i];
    EXPECT_NEAR(adj[i], fd, 2e-6 * (1.0 + std::abs(fd))) << names[i];
    EXPECT_NEAR(fwd[i], adj[i], 2e-7 * (1.0 + std::abs(fd))) << names[i];
  }
}

// Cartesian double pendulum (two point masses, two rods as holonomic
// constraints) with the final x of the second mass as the functional.
Problem DoublePendulum() {
  ModelBuilder b("double_pendulum_cartesian");
  b.Coordinates({"x1", "y1", "x2", "y2"});
  const Param m1 = b.Parameter("m1", 1.0), m2 = b.Parameter("m2", 0.7);
  const Param l1 = b.Parameter("l1", 1.0), l2 = b.Parameter("l2", 0.8);
  const Param g = b.Parameter("g", 9.81);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m1] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]) +
           0.5 * x.p[m2] * (x.v[2] * x.v[2] + x.v[3] * x.v[3]);
  });
  b.PotentialEnergy([=](const auto& x) {
    return x.p[g] * (x.p[m1] * x.q[1] + x.p[m2] * x.q[3]);
  });
  b.Holonomic("rod1", [=](const auto& x) {
    return x.q[0] * x.q[0] + x.q[1] * x.q[1] - x.p[l1] * x.p[l1];
  });
  b.Holonomic("rod2", [=](const auto& x) {
    const auto dx = x.q[2] - x.q[0], dy = x.q[3] - x.q[1];
    return dx * dx + dy * dy - x.p[l2] * x.p[l2];
  });
  b.TerminalFunctional("x2_final", [](const auto& x) { return x.q[2]; });
  Problem pr;
  pr.model = std::move(b).Build();
  pr.initial = [=](const Eigen::VectorXd& p) {
    InitialState s;
    const double a1 = 0.9, a2 = 1.6;  // angles from the downward vertical
    s.q.resize(4);
    s.q << p[l1] * std::sin(a1), -p[l1] * std::cos(a1),
        p[l1] * std::sin(a1) + p[l2] * std::sin(a2),
        -p[l1] * std::cos(a1) - p[l2] * std::cos(a2);
    s.v = Eigen::VectorXd::Zero(4);
    return s;
  };
  return pr;
}

TEST(Sensitivity, DoublePendulumMassAndLengthForwardAdjointAndFd) {
  const Problem pr = DoublePendulum();
  const Eigen::VectorXd p = pr.model.default_parameters();
  SimulationOptions o;
  o.t_end = 1.0;
  o.output_step = 1.0;
  o.rtol = 1e-10;
  o.atol = 1e-10;
  o.multiplier_atol = 1.0;
  o.formulation = Formulation::kBaumgarte;
  o.sensitivity.initial_tangent = InitialStateTangent(pr, p);
  const std::vector<std::string> names = {"m2", "l1"};

  SimulationOptions fo = o;
  fo.integrator = Integrator::kIdas;
  fo.sensitivity.method = SensMethod::kForward;
  fo.sensitivity.parameters = names;
  const SimulationSummary sf = Simulate(pr.model, pr.initial(p), p, fo);
  ASSERT_TRUE(sf.ok) << sf.error;
  const Eigen::VectorXd fwd = sf.sensitivities.final.row(2).transpose();

  SimulationOptions ao = o;
  ao.integrator = Integrator::kCvodesBdf;
  ao.sensitivity.method = SensMethod::kAdjoint;
  ao.sensitivity.parameters = names;
  ao.sensitivity.functional = "x2_final";
  const SimulationSummary sa = Simulate(pr.model, pr.initial(p), p, ao);
  ASSERT_TRUE(sa.ok) << sa.error;
  const Eigen::VectorXd adj = Quad(sa, "x2_final");
  EXPECT_NEAR(sa.sensitivities.functional_value, sf.final.q[2], 1e-8);

  for (size_t i = 0; i < names.size(); ++i) {
    const int idx = pr.model.ParameterIndex(names[i]);
    // Step 1e-3: the runs' own noise (~2e-10 in x2) over h stays ~1e-7;
    // at 1e-4 it reaches 3e-6 (measured), at 1e-5 3e-5.
    const double h = 1e-3;
    auto final_x2 = [&](double s) {
      Eigen::VectorXd pp = p;
      pp[idx] += s;
      const SimulationSummary r = Simulate(pr.model, pr.initial(pp), pp, o);
      EXPECT_TRUE(r.ok) << r.error;
      return r.final.q[2];
    };
    const double fd = (final_x2(h) - final_x2(-h)) / (2.0 * h);
    EXPECT_NEAR(fwd[i], fd, 2e-6 * (1.0 + std::abs(fd))) << names[i];
    EXPECT_NEAR(adj[i], fd, 2e-6 * (1.0 + std::abs(fd))) << names[i];
    EXPECT_NEAR(fwd[i], adj[i], 2e-7 * (1.0 + std::abs(fd))) << names[i];
  }
}

TEST(Sensitivity, CvodesForwardMatchesTheReference) {
  SimulationOptions o = SliderOptions(1e-10, 1e-11);
  o.formulation = Formulation::kBaumgarte;
  o.integrator = Integrator::kCvodesBdf;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"k", "c"};
  const Problem pr = problems::SliderCrankProblem();
  const SimulationSummary s = RunSlider(o, pr.model.default_parameters());
  ASSERT_TRUE(s.ok) << s.error;
  const Eigen::VectorXd g = Quad(s, "G");
  // Measured 7e-9 and 4e-9 relative.
  EXPECT_LT(Rel(g[0], kRefDk), 5e-8) << g[0];
  EXPECT_LT(Rel(g[1], kRefDc), 5e-8) << g[1];
}

// The pendulum's motion does not depend on its mass and its tension is
// proportional to it: d lambda / d m = lambda / m exactly, and the state's
// sensitivities to m vanish. The multiplier sensitivity no multibody peer
// reports, on both integrators.
TEST(Sensitivity, MultiplierSensitivityToMassIsTensionOverMass) {
  const Problem pr = problems::PendulumProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  for (Integrator in : {Integrator::kIdas, Integrator::kCvodesBdf}) {
    SimulationOptions o = pr.defaults;
    o.t_end = 1.3;
    o.output_step = 0.1;
    o.rtol = 1e-9;
    o.atol = 1e-9;
    o.formulation = Formulation::kBaumgarte;
    o.integrator = in;
    // Default corrector: staggered on IDAS. The simultaneous one stalled
    // here (lambda(0) = 0, its sensitivity O(10)): it needed
    // --multiplier-atol 1e-6, then took 130280 steps for 1.3 s and its
    // sensitivities were good to 1e-5 (lambda) and 1e-6 (state) only.
    // IDAS's sensitivities now carry the integration error of ~10 rtol
    // (measured: state 9e-9, lambda 3.6e-8); CVODES's state sensitivities
    // stay at round-off (their equations are homogeneous in m).
    const bool idas = in == Integrator::kIdas;
    const double tol_lambda = idas ? 1e-7 : 1e-8,
                 tol_state = idas ? 2e-8 : 1e-9;
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.parameters = {"m"};
    struct Keep : Observer {
      std::vector<Sample> s;
      void OnSample(const Sample& x) override { s.push_back(x); }
    } keep;
    const SimulationSummary r = Simulate(pr.model, pr.initial(p), p, o, &keep);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_GT(keep.s.size(), 10u);
    for (const Sample& x : keep.s) {
      ASSERT_EQ(x.sens.rows(), 5);
      EXPECT_NEAR(x.sens(4, 0), x.lambda[0] / p[0],
                  tol_lambda * (1 + std::abs(x.lambda[0])))
          << ToString(in) << " t=" << x.t;
      EXPECT_LT(x.sens.col(0).head(4).norm(), tol_state) << ToString(in);
    }
  }
}

// IDAS's default corrector (staggered) runs the index-1 forms' forward
// sensitivities at the default tolerances, where the simultaneous one
// failed at the start: the pendulum at t = 8.5e-5 and the four-bar at
// 3.8e-5 (IDA_CONV_FAIL, rtol 1e-8, atol 1e-10). The final d q / d p
// agrees with a CVODES Baumgarte run at rtol 1e-12 (measured: pendulum
// 3.5e-8 and 2.0e-8, four-bar 2.6e-7 and 3.7e-7 relative, up to ~40 rtol,
// the global error of a sensitivity over a second of motion); the bound
// is 100 rtol.
TEST(Sensitivity, IdasDefaultCorrectorRunsTheIndexOneFormsAtDefaults) {
  struct Case {
    Problem pr;
    std::string param;
  };
  for (const Case& c : {Case{problems::PendulumProblem(), "l"},
                        Case{problems::FourBarProblem(), "m1"}}) {
    const Eigen::VectorXd p = c.pr.model.default_parameters();
    auto final_sens = [&](Formulation f, Integrator in, double rtol,
                          double atol, SensCorrector corr) {
      SimulationOptions o = c.pr.defaults;
      o.t_end = 1.0;
      o.output_step = o.t_end;
      o.rtol = rtol;
      o.atol = atol;
      o.formulation = f;
      o.integrator = in;
      o.sensitivity.method = SensMethod::kForward;
      o.sensitivity.parameters = {c.param};
      o.sensitivity.corrector = corr;
      struct Last : Observer {
        Eigen::MatrixXd s;
        void OnSample(const Sample& x) override { s = x.sens; }
      } last;
      const SimulationSummary r =
          Simulate(c.pr.model, c.pr.initial(p), p, o, &last);
      EXPECT_TRUE(r.ok) << c.pr.model.name() << " " << ToString(f) << " "
                        << ToString(corr) << ": " << r.error;
      return std::make_pair(r.ok, Eigen::VectorXd(last.s.col(0)));
    };
    const auto ref = final_sens(Formulation::kBaumgarte, Integrator::kCvodesBdf,
                                1e-12, 1e-13, SensCorrector::kAuto);
    ASSERT_TRUE(ref.first);
    const Eigen::Index n = c.pr.model.nq() + c.pr.model.nv();
    for (Formulation f :
         {Formulation::kUnstabilized, Formulation::kBaumgarte}) {
      const auto run =
          final_sens(f, Integrator::kIdas, 1e-8, 1e-10, SensCorrector::kAuto);
      if (!run.first) continue;
      const double err = (run.second.head(n) - ref.second.head(n)).norm() /
                         ref.second.head(n).norm();
      EXPECT_LT(err, 1e-6) << c.pr.model.name() << " " << ToString(f);
      std::printf("%s %s: d x / d %s relative error %.2e\n",
                  c.pr.model.name().c_str(), ToString(f), c.param.c_str(), err);
    }
  }
}

// GGL and index 3 on IDAS with forward sensitivities at tight tolerances,
// with respect to a geometric parameter (the crank length a, which enters
// the loop constraint, so the multiplier sensitivities are O(1)). The
// staggered corrector tests the sensitivities with the state's scaled
// Newton weights (src/integrate/idas.cpp, ScaledSensStgConvTest); with
// IDAS's own test GGL failed at t = 0 here (IDA_CONV_FAIL, h = 5.6e-16)
// and the simultaneous corrector ran out of steps at t = 0.18 (GGL) and
// 0.10 (index 3). The final d(q, v)/d(k, c, a) after 1 s is compared with
// a CVODES Baumgarte run at rtol 1e-12. GGL keeps q and v in the error
// test: bound 100 rtol relative, as for the index-1 forms above (measured
// 1.3e-9 at rtol 1e-10). Index 3 keeps only q in it, and its velocities
// and multipliers are resolved one and two orders of h less; its own
// positions carry 10 to 1e4 rtol of global error (a plain run here: 3.9e-9
// at rtol 1e-10 over this second; docs/work_precision.md, 2.4e-8 at 1e-12
// over 10 s). Its position sensitivities are held to 1e3 rtol (measured
// 2.5e-8), and must converge: at rtol 1e-12 the error falls at least
// fivefold (measured 4.6e-10, 55-fold).
TEST(Sensitivity, IdasGglAndIndexThreeRunAGeometricParameterAtTightTolerance) {
  const Problem pr = problems::SliderCrankProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  struct Last : Observer {
    Eigen::MatrixXd s;
    void OnSample(const Sample& x) override { s = x.sens; }
  };
  auto run = [&](Formulation f, Integrator in, double rtol) {
    SimulationOptions o = SliderOptions(rtol, rtol);
    o.t_end = 1.0;
    o.output_step = o.t_end;
    o.formulation = f;
    o.integrator = in;
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.parameters = {"k", "c", "a"};
    Last last;
    const SimulationSummary r = Simulate(pr.model, pr.initial(p), p, o, &last);
    EXPECT_TRUE(r.ok) << ToString(f) << ": " << r.error;
    return last;
  };
  const Last ref = run(Formulation::kBaumgarte, Integrator::kCvodesBdf, 1e-12);
  ASSERT_EQ(ref.s.cols(), 3);
  const Eigen::Index nq = pr.model.nq(), nv = pr.model.nv();
  auto error = [&](Formulation f, double rtol) {
    const Last x = run(f, Integrator::kIdas, rtol);
    EXPECT_EQ(x.s.cols(), 3) << ToString(f);
    if (x.s.cols() != 3) return 1.0;
    const Eigen::Index n = f == Formulation::kGgl ? nq + nv : nq;
    const double err =
        (x.s.topRows(n) - ref.s.topRows(n)).norm() / ref.s.topRows(n).norm();
    std::printf(
        "slider_crank %s rtol %.0e: d x / d (k, c, a) relative "
        "error %.2e\n",
        ToString(f), rtol, err);
    return err;
  };
  const double rtol = 1e-10;
  EXPECT_LT(error(Formulation::kGgl, rtol), 100 * rtol);
  const double e3 = error(Formulation::kIndex3, rtol);
  EXPECT_LT(e3, 1e3 * rtol);
  EXPECT_LT(error(Formulation::kIndex3, 1e-12), e3 / 5);
}

// The staggered corrector without the sensitivities in the error test is
// refused on IDAS (the sensitivities grew without bound while the run said
// ok); auto then takes the simultaneous corrector, which is right.
TEST(Sensitivity, IdasStaggeredWithoutSensitivityErrorControlIsRefused) {
  const Problem pr = problems::SliderCrankProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  SimulationOptions o = SliderOptions(1e-6, 1e-7);
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"k", "c"};
  o.sensitivity.error_control = false;
  o.sensitivity.corrector = SensCorrector::kStaggered;
  EXPECT_THAT([&] { RunSlider(o, p); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::HasSubstr("--sens-corrector simultaneous")));
  o.sensitivity.corrector = SensCorrector::kAuto;
  const Eigen::VectorXd g = Quad(RunSlider(o, p), "G");
  EXPECT_LT(Rel(g[0], kRefDk), 1e-4) << g[0];
  EXPECT_LT(Rel(g[1], kRefDc), 1e-4) << g[1];
}

TEST(Sensitivity, BadRequestsNameWhatIsValid) {
  const Problem pr = problems::SliderCrankProblem();
  const Eigen::VectorXd p = pr.model.default_parameters();
  SimulationOptions o = SliderOptions(1e-6, 1e-7);
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"kk"};
  SimulationSummary s = RunSlider(o, p);
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, ::testing::HasSubstr("unknown sensitivity parameter"));
  EXPECT_THAT(s.error, ::testing::HasSubstr("k, c"));

  o.sensitivity.parameters = {"q0[z]"};
  s = RunSlider(o, p);
  EXPECT_THAT(s.error, ::testing::HasSubstr("no coordinate 'z'"));

  o.sensitivity.parameters = {"k"};
  o.sensitivity.method = SensMethod::kAdjoint;
  o.sensitivity.functional = std::string("H");
  // Combinations the support matrix refuses are refused before the run
  // (formulation/support.cpp); GGL runs on the IDAS adjoint, index 3 not.
  o.formulation = Formulation::kIndex3;
  EXPECT_THAT([&] { RunSlider(o, p); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::HasSubstr("adjoint of the index-3 form")));
  // An undeclared functional is refused before the run too, naming the
  // declared ones.
  o.formulation = Formulation::kBaumgarte;
  o.integrator = Integrator::kCvodesBdf;
  EXPECT_THAT([&] { RunSlider(o, p); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
                  ::testing::HasSubstr("declares no functional 'H'"),
                  ::testing::HasSubstr("declared: G"))));

  o.sensitivity.method = SensMethod::kForward;
  o.formulation = Formulation::kProjection;
  EXPECT_THAT([&] { RunSlider(o, p); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::HasSubstr("derivative of the projection")));
}

}  // namespace sensitivity_test
}  // namespace
}  // namespace daedalus
