// The command line of the analyses: --counterfactual and the fixed-step
// integrators, through run() on small problems.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "daedalus/run.hpp"
#include "pendulum.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace counterfactual_cli_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::kRoundOff;

Problem CoupledProblem() {
  Problem p;
  p.model = testing::SeedCoupled(4.0);
  p.description = "seed 003 coupled rigid/shaft model";
  p.initial = [](const Eigen::VectorXd&) {
    return InitialState{Eigen::Vector2d(0.2, -0.1), Eigen::Vector2d(1.0, 2.0)};
  };
  p.defaults.t_end = 2.0;
  p.defaults.output_step = 0.1;
  return p;
}

Problem SupportProblem() {
  Problem p;
  p.model = testing::SeedMovingSupport();
  p.initial = [](const Eigen::VectorXd&) {
    return InitialState{Eigen::VectorXd::Zero(1),
                        Eigen::VectorXd::Constant(1, 0.3)};
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.1;
  return p;
}

int RunMain(const Problem& problem, std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string prog = "cf_test";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  return run(problem, static_cast<int>(argv.size()), argv.data());
}

fs::path TempDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("daedalus_cf_test_" + name);
  fs::remove_all(d);
  return d;
}

nlohmann::json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// Seed 003's coupled model with its constant torque u = 4 on B = (1, 0):
// removing the torque changes the acceleration by exactly M^-1 B u =
// (20/9, -10/9) at every state, the ZVCF at the initial configuration is
// (-17/36, 31/36), and a branch without the torque does no input work.
TEST(CounterfactualCli, CoupledModelAllThreeKinds) {
  const fs::path dir = TempDir("coupled");
  ASSERT_EQ(RunMain(CoupledProblem(),
                    {"--counterfactual", "ztcf:torque@0.5", "--counterfactual",
                     "pointwise-ztcf@all", "--counterfactual=zvcf@0", "--rtol",
                     "1e-10", "--atol", "1e-12", "--output-dir", dir.string(),
                     "--quiet"}),
            0);
  const nlohmann::json j = ReadJson(dir / "seed003_coupled.json");
  ASSERT_EQ(j["status"], "ok");
  const auto& cf = j["counterfactuals"];
  ASSERT_EQ(cf.size(), 3u);

  const auto& b = cf[0];
  EXPECT_EQ(b["kind"], "branched-ztcf");
  EXPECT_EQ(b["status"], "ok");
  EXPECT_EQ(b["channels"], std::vector<std::string>{"torque"});
  EXPECT_EQ(b["common_samples"].get<int>(), 16);  // 0.5, 0.6, ..., 2.0
  EXPECT_EQ(b["counterfactual"]["final"]["input_work"][0].get<double>(), 0.0);
  EXPECT_GT(b["original"]["final"]["input_work"][0].get<double>(), 0.1);
  EXPECT_GT(b["max_position_difference"].get<double>(), 0.1);
  {
    std::ifstream csv(b["file"].get<std::string>());
    std::string header;
    std::getline(csv, header);
    EXPECT_THAT(header, ::testing::StartsWith(
                            "t,z1,z2,cf_z1,cf_z2,v_z1,v_z2,cf_v_z1,cf_v_z2,"
                            "energy,cf_energy,work_input_torque,"
                            "cf_work_input_torque"));
    std::string first;
    std::getline(csv, first);
    EXPECT_THAT(first, ::testing::StartsWith("0.5,"));
  }

  const auto& pw = cf[1];
  EXPECT_EQ(pw["kind"], "pointwise-ztcf");
  EXPECT_EQ(pw["samples"].get<int>(), 21);
  EXPECT_NEAR(pw["max_acceleration_difference"].get<double>(), 20.0 / 9.0,
              kRoundOff * 10);

  const auto& z = cf[2];
  EXPECT_EQ(z["kind"], "zvcf");
  EXPECT_TRUE(z["defined"].get<bool>());
  EXPECT_NEAR(z["vdot"][0].get<double>(), -17.0 / 36.0, kRoundOff);
  EXPECT_NEAR(z["vdot"][1].get<double>(), 31.0 / 36.0, kRoundOff);
  EXPECT_NEAR(z["drift_load"][0].get<double>(), -0.6, kRoundOff);
}

// Seed 003's moving support: the ZVCF is reported undefined, with the
// reason, and is not a failed run; the CSV has empty cells, not numbers.
TEST(CounterfactualCli, ZvcfUndefinedUnderAMovingSupport) {
  const fs::path dir = TempDir("support");
  ASSERT_EQ(
      RunMain(SupportProblem(), {"--counterfactual", "zvcf@0.5", "--output-dir",
                                 dir.string(), "--quiet"}),
      0);
  const nlohmann::json j = ReadJson(dir / "moving_support.json");
  const auto& z = j["counterfactuals"][0];
  EXPECT_EQ(z["status"], "undefined");
  EXPECT_FALSE(z["defined"].get<bool>());
  EXPECT_FALSE(z.contains("vdot"));
  EXPECT_THAT(z["reason"].get<std::string>(),
              HasSubstr("constraint 'support' (moving)"));
  std::ifstream csv(z["file"].get<std::string>());
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(row, "0.5,0,,,");
}

TEST(CounterfactualCli, BadRequestsAreUsageErrors) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain(CoupledProblem(), {"--counterfactual", "ztcf:motor@1"}), 2);
  EXPECT_EQ(RunMain(CoupledProblem(), {"--counterfactual", "ztcf@2"}), 2);
  EXPECT_EQ(RunMain(CoupledProblem(), {"--counterfactual", "zvcf@-1"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("unknown input channel 'motor'; valid channels "
                             "are: torque"));
  EXPECT_THAT(err, HasSubstr("'ztcf@2': time 2 is outside the run [0, 2)"));
  EXPECT_THAT(err, HasSubstr("'zvcf@-1': time -1 is outside the run [0, 2]"));
}

TEST(SymplecticCli, RattleRunAndMisfits) {
  const fs::path dir = TempDir("rattle");
  const Problem pendulum = problems::PendulumProblem();
  ASSERT_EQ(
      RunMain(pendulum, {"--integrator", "rattle", "--step", "0.01", "--t-end",
                         "4", "--output-dir", dir.string(), "--quiet"}),
      0);
  const nlohmann::json j = ReadJson(dir / "pendulum.json");
  EXPECT_EQ(j["integrator"], "rattle");
  EXPECT_EQ(j["stats"]["steps"].get<long>(), 400);
  EXPECT_LT(j["drift"]["position_max"].get<double>(), 1e-15);
  EXPECT_GT(j["energy_behaviour"]["max_error"].get<double>(), 0.0);

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain(pendulum, {"--integrator", "rattle"}), 2);
  const fs::path dir2 = TempDir("misfit");
  EXPECT_EQ(RunMain(CoupledProblem(),
                    {"--integrator", "stormer-verlet", "--step", "0.01",
                     "--output-dir", dir2.string(), "--quiet"}),
            2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("needs --step H > 0"));
  EXPECT_THAT(err, HasSubstr("declares damping"));
  // Refused before the run: nothing written.
  EXPECT_FALSE(fs::exists(dir2 / "seed003_coupled.json"));
  EXPECT_FALSE(fs::exists(dir2 / "seed003_coupled.csv"));
}

}  // namespace counterfactual_cli_test
}  // namespace
}  // namespace daedalus
