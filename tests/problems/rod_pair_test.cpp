// Seed 000's rod pair (issue 4): energy minus motor work in absolute,
// relative and maximal coordinates, and the damped variant.
#include "rod_pair.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "catalogue_support.hpp"

namespace daedalus {
namespace {
namespace rod_pair_test {

using testing::RunProblem;

// Absolute angles (alpha1, alpha2) of a sample of each form.
Eigen::Vector2d AbsoluteAngles(const std::string& form, const Sample& s) {
  if (form == "relative")
    return {s.q[0] + M_PI / 2.0, s.q[0] + s.q[1] + M_PI / 2.0};
  if (form == "maximal") return {s.q[2], s.q[5]};
  return {s.q[0], s.q[1]};
}

Problem Form(const std::string& form) {
  if (form == "relative") return problems::RodPairRelativeProblem();
  if (form == "maximal") return problems::RodPairMaximalProblem();
  return problems::RodPairAbsoluteProblem();
}

// Largest |E - E0 - W| over the samples, with W = u1 da1 + u2 (da2 - da1)
// from the sampled angles (seed 000): independent of the quadratures.
double MaxWorkResidual(const std::string& form,
                       const testing::Run& r,
                       double u1,
                       double u2,
                       double* max_work) {
  const Eigen::Vector2d a0 = AbsoluteAngles(form, r.samples.front());
  const double e0 = r.samples.front().energy;
  double worst = 0.0;
  *max_work = 0.0;
  for (const Sample& s : r.samples) {
    const Eigen::Vector2d da = AbsoluteAngles(form, s) - a0;
    const double w = u1 * da[0] + u2 * (da[1] - da[0]);
    *max_work = std::max(*max_work, std::abs(w));
    worst = std::max(worst, std::abs(s.energy - e0 - w));
  }
  return worst;
}

SimulationOptions Tight(const Problem& p, double rtol) {
  SimulationOptions o = p.defaults;
  o.rtol = rtol;
  o.atol = rtol / 100.0;  // the seed's atol = rtol / 100 on angles and rates
  return o;
}

// Issue 4: max residual below 1e-7 J at rtol 1e-9 and below 1e-9 J at
// rtol 1e-11 (energy scale about 17 J), falling as the tolerance tightens,
// for the seed's torques (0.2, -0.1) and for zero torques.
TEST(RodPair, EnergyMinusMotorWorkFallsWithTolerance) {
  const Problem p = Form("absolute");
  for (const Eigen::Vector2d& u :
       {Eigen::Vector2d(0.2, -0.1), Eigen::Vector2d(0.0, 0.0)}) {
    Eigen::VectorXd prm = p.model.default_parameters();
    prm[p.model.ParameterIndex("u1")] = u[0];
    prm[p.model.ParameterIndex("u2")] = u[1];
    double residual[2], work = 0.0;
    const double rtols[2] = {1e-9, 1e-11};
    for (int k = 0; k < 2; ++k) {
      const testing::Run r = RunProblem(p, Tight(p, rtols[k]), prm);
      ASSERT_TRUE(r.summary.ok) << r.summary.error;
      ASSERT_EQ(r.samples.size(), 501u);
      residual[k] = MaxWorkResidual("absolute", r, u[0], u[1], &work);
      // The quadrature balance agrees with the analytic work.
      EXPECT_LT(r.summary.energy_residual_max, residual[k] + rtols[k]);
      if (u[0] != 0.0) {
        EXPECT_GT(work, 0.05);  // the motors do real work
        EXPECT_NEAR(r.samples.back().input_work.sum(),
                    r.samples.back().energy - r.samples.front().energy,
                    2 * residual[k]);
      }
    }
    EXPECT_LT(residual[0], 1e-7) << "u = " << u.transpose();
    EXPECT_LT(residual[1], 1e-9) << "u = " << u.transpose();
    EXPECT_LT(residual[1], residual[0] / 10.0);
    EXPECT_GT(residual[1], 0.0);
  }
}

// Seed 000 worked example 2 and exercise 16: the relative-coordinate arm
// under the same physical torques and start gives the same motion, and its
// motor power is u'q' (W = u1 dq1 + u2 dq2, the same W).
TEST(RodPair, RelativeCoordinatesGiveTheSameMotionAndBalance) {
  const Problem pa = Form("absolute"), pr = Form("relative");
  const testing::Run ra = RunProblem(pa, Tight(pa, 1e-11));
  const testing::Run rr = RunProblem(pr, Tight(pr, 1e-11));
  ASSERT_TRUE(ra.summary.ok && rr.summary.ok);
  ASSERT_EQ(ra.samples.size(), rr.samples.size());
  double worst = 0.0;
  for (size_t i = 0; i < ra.samples.size(); ++i)
    worst = std::max(worst, (AbsoluteAngles("relative", rr.samples[i]) -
                             AbsoluteAngles("absolute", ra.samples[i]))
                                .cwiseAbs()
                                .maxCoeff());
  // Two integrations at rtol 1e-11 of a motion with angles of order one:
  // their global errors (~1e-9 each) bound the difference.
  EXPECT_LT(worst, 1e-8);
  EXPECT_NEAR(rr.samples.front().energy, ra.samples.front().energy, 1e-13);
  double work = 0.0;
  EXPECT_LT(MaxWorkResidual("relative", rr, 0.2, -0.1, &work), 1e-9);
}

// Maximal coordinates: two free bodies and two revolute joints. Same motion,
// same energy balance, and joints that do no work.
TEST(RodPair, MaximalCoordinatesGiveTheSameMotionWithZeroJointWork) {
  const Problem pa = Form("absolute"), pm = Form("maximal");
  const testing::Run ra = RunProblem(pa, Tight(pa, 1e-11));
  for (const double rtol : {1e-9, 1e-11}) {
    const testing::Run rm = RunProblem(pm, Tight(pm, rtol));
    ASSERT_TRUE(rm.summary.ok) << rm.summary.error;
    ASSERT_EQ(ra.samples.size(), rm.samples.size());
    double worst = 0.0, joint_work = 0.0;
    for (size_t i = 0; i < ra.samples.size(); ++i) {
      worst = std::max(worst, (AbsoluteAngles("maximal", rm.samples[i]) -
                               AbsoluteAngles("absolute", ra.samples[i]))
                                  .cwiseAbs()
                                  .maxCoeff());
      joint_work =
          std::max(joint_work, std::abs(rm.samples[i].constraint_work.sum()));
    }
    double work = 0.0;
    const double residual = MaxWorkResidual("maximal", rm, 0.2, -0.1, &work);
    // The same thresholds as the reduced form (issue 4).
    EXPECT_LT(residual, rtol == 1e-9 ? 1e-7 : 1e-9) << rtol;
    // The motion agrees to the global error of the coarser run.
    EXPECT_LT(worst, 1000 * rtol) << rtol;
    // Ideal stationary joints: the work of the reactions is zero up to the
    // integration error of the power quadrature.
    EXPECT_LT(joint_work, 100 * rtol) << rtol;
    // The multipliers are the hinge forces: nonzero (they hold the rods up).
    EXPECT_GT(rm.samples.back().lambda.cwiseAbs().maxCoeff(), 1.0);
  }
}

// Seed 000, exercise 12: hinge dampers u1 = -b1 a1', u2 = -b2 (a2' - a1'),
// motors off. E falls, the damping loss accounts for it, and the balance
// residual stays at integration error.
TEST(RodPair, DampedBalanceClosesWhileEnergyFalls) {
  const Problem p = Form("absolute");
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("u1")] = 0.0;
  prm[p.model.ParameterIndex("u2")] = 0.0;
  prm[p.model.ParameterIndex("b1")] = 0.5;
  prm[p.model.ParameterIndex("b2")] = 0.3;
  const testing::Run r = RunProblem(p, Tight(p, 1e-11), prm);
  ASSERT_TRUE(r.summary.ok) << r.summary.error;
  const double lost = r.summary.energy_initial - r.summary.energy_final;
  EXPECT_GT(lost, 0.1);
  EXPECT_NEAR(r.samples.back().damping_loss, lost, 1e-9);
  // dE/dt = -v'D v <= 0: no sample's energy exceeds the previous one by more
  // than the integration error.
  for (size_t i = 1; i < r.samples.size(); ++i)
    EXPECT_LE(r.samples[i].energy, r.samples[i - 1].energy + 1e-10) << i;
  // Global error of E at rtol 1e-11 on a 17 J scale: below 1e-9 J, as for
  // the undamped balance above.
  EXPECT_LT(r.summary.energy_residual_max, 1e-9);
}

// The command-line choice of form.
TEST(RodPair, CoordinatesOptionSelectsTheForm) {
  const ProblemVariants v = problems::RodPairVariants();
  EXPECT_EQ(v.option, "coordinates");
  ASSERT_EQ(v.variants.size(), 3u);
  EXPECT_EQ(v.variants[0].first, "absolute");
  EXPECT_EQ(v.variants[0].second().model.name(), "rod_pair_absolute");
  EXPECT_EQ(v.variants[2].second().model.nc(), 4);
}

// The executable's command line: the option is taken out, the rest is the
// common command line; a bad form is a usage error naming the valid ones.
int RunRodPair(std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string prog = "rod_pair";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  return run(problems::RodPairVariants(), static_cast<int>(argv.size()),
             argv.data());
}

TEST(RodPair, CommandLineRunsTheChosenForm) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "daedalus_rod_pair_cli";
  fs::remove_all(dir);
  EXPECT_EQ(RunRodPair({"--coordinates", "relative", "--t-end", "0.1",
                        "--output-dir", dir.string(), "--quiet"}),
            0);
  EXPECT_TRUE(fs::exists(dir / "rod_pair_relative.csv"));
  EXPECT_EQ(RunRodPair({"--t-end=0.1", "--coordinates=maximal", "--output-dir",
                        dir.string(), "--quiet"}),
            0);
  EXPECT_TRUE(fs::exists(dir / "rod_pair_maximal.json"));
  EXPECT_FALSE(fs::exists(dir / "rod_pair_absolute.csv"));
  fs::remove_all(dir);
}

TEST(RodPair, UnknownFormIsAUsageErrorListingTheValidOnes) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunRodPair({"--coordinates", "polar"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("unknown --coordinates 'polar'"), std::string::npos)
      << err;
  EXPECT_NE(err.find("absolute, relative, maximal"), std::string::npos);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunRodPair({"--coordinates"}), 2);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("needs a value"),
            std::string::npos);
  // Other flags are still checked by the common parser.
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunRodPair({"--coordinates", "absolute", "--bogus"}), 2);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("unknown option"),
            std::string::npos);
}

}  // namespace rod_pair_test
}  // namespace
}  // namespace daedalus
