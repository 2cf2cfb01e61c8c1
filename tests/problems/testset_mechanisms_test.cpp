// The two mechanisms of the Test Set for IVP Solvers (Mazzia and Magherini,
// Bari) in the catalogue, problems/andrews_squeezer.hpp and
// problems/car_axis.hpp: the equations against the Test Set's consistent
// initial accelerations and multipliers, the final state against its
// published reference solution, and every formulation the catalogue offers
// for constrained problems with default options (docs/problems.md,
// "andrews_squeezer" and "car_axis").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "andrews_squeezer.hpp"
#include "car_axis.hpp"
#include "catalogue_support.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace testset_mechanisms_test {

using ::testing::HasSubstr;

template <size_t N>
Eigen::VectorXd Vec(const std::array<double, N>& a) {
  return Eigen::Map<const Eigen::VectorXd>(a.data(),
                                           static_cast<Eigen::Index>(N));
}

// The Test Set's error measure: the largest |x - ref| / max(1, |ref|).
double Mixed(const Eigen::VectorXd& x, const Eigen::VectorXd& ref) {
  return ((x - ref).array().abs() / ref.array().abs().max(1.0)).maxCoeff();
}

struct Errors {
  double q, v, lambda;
};

// A run to t_end (at the default output step, as the command line runs it:
// the output times are stops that change the steps) and its final state's
// errors.
struct Final {
  testing::Run run;
  Errors e{};
};

template <class Ref>
Final RunTo(const Problem& p,
            const Ref& ref,
            Formulation f,
            Integrator i,
            double rtol,
            double atol) {
  SimulationOptions o = p.defaults;
  o.formulation = f;
  o.integrator = i;
  o.rtol = rtol;
  o.atol = atol;
  Final r;
  r.run = testing::RunProblem(p, o);
  if (r.run.summary.ok) {
    const Sample& s = r.run.summary.final;
    r.e = {Mixed(s.q, Vec(ref.q)), Mixed(s.v, Vec(ref.v)),
           Mixed(s.lambda, Vec(ref.lambda))};
  }
  return r;
}

// Andrews: the Test Set's consistent initial values include the
// accelerations (y15, y16 = 14222.44..., -10666.83..., the others 0) and
// the multipliers (y22, y23 = 98.56..., -6.122..., the others 0), given to
// 30 digits. Daedalus's KKT solve at the start reproduces them: its
// equations are the Test Set's (and its multipliers minus the Test Set's).
TEST(AndrewsSqueezer, TheStartIsTheTestSetsToRoundOff) {
  const Problem p = problems::AndrewsSqueezerProblem();
  SimulationOptions o = p.defaults;
  o.t_end = 1e-4;
  o.output_step = 1e-4;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  // The given start is on the loops (to 30 digits): nothing to correct.
  EXPECT_LT(r.summary.initial_correction_position, 1e-15);
  EXPECT_EQ(r.summary.initial_correction_velocity, 0.0);
  const Sample& s = r.samples.front();
  Eigen::VectorXd a = Eigen::VectorXd::Zero(7),
                  lambda = Eigen::VectorXd::Zero(6);
  a[0] = 14222.4439199541138705911625887;
  a[1] = -10666.8329399655854029433719415;
  lambda[0] = -98.5668703962410896057654982170;
  lambda[1] = 6.12268834425566265503114393122;
  // Measured: 3.4e-15 relative (accelerations, the largest 1.4e4 rad/s^2)
  // and 3.0e-16 (multipliers); the zero entries come out below 3e-11
  // rad/s^2 and 2e-15 N. Bound: 1e-12 of the scale, round-off of a 13 x 13
  // KKT solve whose mass matrix spans four decades.
  EXPECT_LT((s.vdot - a).lpNorm<Eigen::Infinity>(),
            1e-12 * a.cwiseAbs().maxCoeff());
  EXPECT_LT((s.lambda - lambda).lpNorm<Eigen::Infinity>(),
            1e-12 * lambda.cwiseAbs().maxCoeff());
}

// The car axis at t = 0: springs at rest length, so only gravity acts:
// accelerations (0, -g, 0, -g) and multipliers 0, the Test Set's
// consistent values (its y9 = y10 = 0 and u' = f / k).
TEST(CarAxis, TheStartIsTheTestSets) {
  const Problem p = problems::CarAxisProblem();
  SimulationOptions o = p.defaults;
  o.t_end = 1e-3;
  o.output_step = 1e-3;
  const testing::Run r = testing::RunProblem(p, o);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  EXPECT_LT(r.summary.initial_correction_position, 1e-15);
  EXPECT_LT(r.summary.initial_correction_velocity, 1e-15);
  const Sample& s = r.samples.front();
  EXPECT_LT((s.vdot - Eigen::Vector4d(0.0, -1.0, 0.0, -1.0)).norm(), 1e-13);
  EXPECT_LT(s.lambda.norm(), 1e-15);
  // A road higher than the axis is long is refused with the parameters.
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("r")] = 1.5;
  EXPECT_THAT([&] { p.initial(prm); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("--param r or raise --param L")));
}

// The final state against the published reference. GGL on IDAS at rtol
// 1e-10, atol 1e-12 (measured: q 3.7e-10, v 1.2e-7, lambda 1.27e-6 in the
// Test Set's mixed measure). The multipliers' floor is the reference's own:
// at rtol 1e-12 and 1e-13 GGL, projection on CVODES BDF and Baumgarte on
// CVODES Adams agree with one another to 1e-8 in lambda, but with the
// reference only to 1.26e-6 (its lambda_6, 11.6 N, is 1.5e-5 N off; q and
// v agree to 3e-10 and 1e-7): PSIDE's multipliers of the index-3 form at
// 1e-14 are its least accurate part (the Test Set scores this problem on
// y1..y7 only). Bounds: 3 times the measured q and v errors, 2 times
// lambda's floor. The defaults (rtol 1e-6, atol 1e-7): q 1.2e-5, v 4.0e-3,
// lambda 4.1e-4; bounds 3 times that.
TEST(AndrewsSqueezer, ReachesThePublishedReference) {
  const Problem p = problems::AndrewsSqueezerProblem();
  const Final tight = RunTo(p, problems::kAndrewsReference, Formulation::kGgl,
                            Integrator::kIdas, 1e-10, 1e-12);
  ASSERT_TRUE(tight.run.summary.ok) << tight.run.summary.error;
  std::printf("andrews_squeezer ggl 1e-10: q %.2e v %.2e lambda %.2e\n",
              tight.e.q, tight.e.v, tight.e.lambda);
  EXPECT_LT(tight.e.q, 1.1e-9);
  EXPECT_LT(tight.e.v, 3.6e-7);
  EXPECT_LT(tight.e.lambda, 2.5e-6);
  // The torque's work is mom (beta - beta0), 0.5238 J: the integrated
  // quadrature against the closed form (measured 7.6e-12 J, its integration
  // error at rtol 1e-10; bound 1e-10 J), and the energy balance closes to
  // the integration error (measured 1.9e-9 J; bound 1e-8 J).
  const Sample& f = tight.run.summary.final;
  const double beta0 = tight.run.samples.front().q[0];
  EXPECT_NEAR(f.other_work, 0.033 * (f.q[0] - beta0), 1e-10);
  double residual = 0.0;
  for (const Sample& s : tight.run.samples)
    residual = std::max(residual, std::abs(s.energy_residual));
  EXPECT_LT(residual, 1e-8);
  const Final d =
      RunTo(p, problems::kAndrewsReference, p.defaults.formulation,
            p.defaults.integrator, p.defaults.rtol, p.defaults.atol);
  ASSERT_TRUE(d.run.summary.ok) << d.run.summary.error;
  std::printf("andrews_squeezer defaults: q %.2e v %.2e lambda %.2e\n", d.e.q,
              d.e.v, d.e.lambda);
  EXPECT_LT(d.e.q, 3.7e-5);
  EXPECT_LT(d.e.v, 1.2e-2);
  EXPECT_LT(d.e.lambda, 1.3e-3);
}

// The car axis's reference (GAMD in quadruple precision) is good to more
// digits than a double run reaches: GGL at rtol 1e-13 agrees to 4.5e-13 in
// q. At rtol 1e-10, atol 1e-12 (measured: q 1.9e-9, v 5.0e-8, lambda
// 6.1e-11) and at the defaults (q 4.8e-6, v 8.9e-5, lambda 1.8e-7) the
// bounds are 3 times the measured errors.
TEST(CarAxis, ReachesThePublishedReference) {
  const Problem p = problems::CarAxisProblem();
  const Final tight = RunTo(p, problems::kCarAxisReference, Formulation::kGgl,
                            Integrator::kIdas, 1e-10, 1e-12);
  ASSERT_TRUE(tight.run.summary.ok) << tight.run.summary.error;
  std::printf("car_axis ggl 1e-10: q %.2e v %.2e lambda %.2e\n", tight.e.q,
              tight.e.v, tight.e.lambda);
  EXPECT_LT(tight.e.q, 5.7e-9);
  EXPECT_LT(tight.e.v, 1.5e-7);
  EXPECT_LT(tight.e.lambda, 1.8e-10);
  const Final d =
      RunTo(p, problems::kCarAxisReference, p.defaults.formulation,
            p.defaults.integrator, p.defaults.rtol, p.defaults.atol);
  ASSERT_TRUE(d.run.summary.ok) << d.run.summary.error;
  std::printf("car_axis defaults: q %.2e v %.2e lambda %.2e\n", d.e.q, d.e.v,
              d.e.lambda);
  EXPECT_LT(d.e.q, 1.5e-5);
  EXPECT_LT(d.e.v, 2.7e-4);
  EXPECT_LT(d.e.lambda, 5.5e-7);
}

struct FormCase {
  Formulation f;
  Integrator i;
  // The measured position error at the problem's default tolerances
  // (rtol 1e-6, atol 1e-7), Test Set measure: Andrews, the car axis.
  double andrews, car;
};

// Every formulation and integrator the support matrix (docs/support.md)
// offers for stationary holonomic constraints, at the defaults' tolerances
// (the table in docs/problems.md). Index 3 on IDAS keeps only the positions
// in its error test and is 100 times less accurate (issue 40, item 2); the
// alpha schemes take 11,000 and 70,000 steps. Bound: 3 times the measured
// (the CVODES rows re-measured when their Newton matrix became ours).
const FormCase kForms[] = {
    {Formulation::kUnstabilized, Integrator::kCvodesBdf, 9.8e-5, 6.1e-5},
    {Formulation::kUnstabilized, Integrator::kCvodesAdams, 1.8e-5, 1.6e-6},
    {Formulation::kUnstabilized, Integrator::kIdas, 9.0e-6, 3.4e-6},
    {Formulation::kBaumgarte, Integrator::kCvodesBdf, 1.2e-4, 1.7e-5},
    // The car's 5.7e-8 is a cancellation (2.5e-7 with one output
    // interval); its larger value is the one recorded.
    {Formulation::kBaumgarte, Integrator::kCvodesAdams, 4.4e-5, 2.5e-7},
    {Formulation::kBaumgarte, Integrator::kIdas, 1.1e-5, 3.8e-6},
    // Andrews: 1.4e-5 with CVODES's own difference-quotient Newton
    // matrix, 4.4e-5 with ours (DifferenceQuotientJacobian, which the
    // standing humanoid needed). The error at rtol 1e-6 is not smooth in
    // rtol: q1's relative error with CVODES's matrix is 5.4e-6, 1.1e-5,
    // 6.8e-5 at rtol 8e-7, 1e-6, 1.2e-6, with ours 2.3e-6, 3.5e-5, 2.5e-5.
    {Formulation::kProjection, Integrator::kCvodesBdf, 4.4e-5, 3.5e-5},
    {Formulation::kGgl, Integrator::kIdas, 1.2e-5, 4.8e-6},
    {Formulation::kIndex3, Integrator::kIdas, 1.2e-3, 2.8e-4},
    {Formulation::kIndex3, Integrator::kGeneralizedAlpha, 9.6e-7, 1.3e-6},
    {Formulation::kIndex3, Integrator::kHht, 3.0e-6, 1.4e-6},
};

TEST(TestSetMechanisms, EveryFormulationRunsWithDefaultOptions) {
  DAEDALUS_RELEASE_BUILD_ONLY("22 runs, 81,000 steps of the alpha schemes");
  const Problem andrews = problems::AndrewsSqueezerProblem();
  const Problem car = problems::CarAxisProblem();
  for (const FormCase& c : kForms) {
    const std::string what =
        std::string(ToString(c.f)) + " on " + ToString(c.i);
    const Final a = RunTo(andrews, problems::kAndrewsReference, c.f, c.i,
                          andrews.defaults.rtol, andrews.defaults.atol);
    ASSERT_TRUE(a.run.summary.ok)
        << "andrews " << what << ": " << a.run.summary.error;
    EXPECT_DOUBLE_EQ(a.run.summary.t_reached, andrews.defaults.t_end);
    EXPECT_LT(a.e.q, 3.0 * c.andrews) << "andrews " << what;
    const Final b = RunTo(car, problems::kCarAxisReference, c.f, c.i,
                          car.defaults.rtol, car.defaults.atol);
    ASSERT_TRUE(b.run.summary.ok)
        << "car " << what << ": " << b.run.summary.error;
    EXPECT_DOUBLE_EQ(b.run.summary.t_reached, car.defaults.t_end);
    EXPECT_LT(b.e.q, 3.0 * c.car) << "car " << what;
    std::printf("%-32s andrews q %.2e  car q %.2e\n", what.c_str(), a.e.q,
                b.e.q);
  }
}

// RATTLE is refused on both, before the run, with the reason: Andrews's
// mass matrix depends on the angles (RATTLE needs a separable
// Hamiltonian), the car axis has a moving constraint.
TEST(TestSetMechanisms, RattleIsRefusedWithTheReason) {
  struct R {
    Problem p;
    const char* why;
  };
  const R cases[] = {
      {problems::AndrewsSqueezerProblem(), "its Hamiltonian is not separable"},
      {problems::CarAxisProblem(),
       "a moving constraint Phi(q, t) needs a "
       "SUNDIALS integrator"}};
  for (const R& c : cases) {
    SimulationOptions o = c.p.defaults;
    o.formulation = Formulation::kIndex3;
    o.integrator = Integrator::kRattle;
    o.step = 1e-4;
    const Eigen::VectorXd prm = c.p.model.default_parameters();
    EXPECT_THAT(
        [&] { Simulate(c.p.model, c.p.initial(prm), prm, o); },
        ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr(c.why)))
        << c.p.model.name();
  }
}

}  // namespace testset_mechanisms_test
}  // namespace
}  // namespace daedalus
