// The command line's limits and numbers (issue 18): an output grid that
// would write gigabytes, or that a long cannot count, is refused before
// anything is written; an output step longer than the run ends it at
// t_end; --max-steps sets the integrator's step limit and the failure
// names it; numbers are decimal and complete.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daedalus/run.hpp"
#include "pendulum.hpp"

namespace daedalus {
namespace {
namespace limits_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

int RunPendulum(std::vector<std::string> args, std::string* err = nullptr) {
  std::vector<char*> argv;
  static std::string prog = "pendulum";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  const int rc = run(problems::PendulumProblem(), static_cast<int>(argv.size()),
                     argv.data());
  const std::string e = ::testing::internal::GetCapturedStderr();
  if (err) *err = e;
  return rc;
}

fs::path FreshDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("daedalus_limits_" + name);
  fs::remove_all(d);
  return d;
}

// Each of these ran "ok" with nothing integrated (1 sample at t = 0), or
// would write about 1 GB of CSV per 20 s: now exit 2, no file.
TEST(Limits, OutputGridsBeyondTheLimitAreRefusedBeforeWriting) {
  const std::vector<std::vector<std::string>> cases = {
      {"--output-step", "1e-300"}, {"--t-end", "1e17"}, {"--t-end", "1e300"},
      {"--output-step", "1e-9"},   {"--t-end", "1e15"},
  };
  for (auto args : cases) {
    const fs::path dir = FreshDir("grid");
    args.insert(args.end(), {"--output-dir", dir.string(), "--quiet"});
    std::string err;
    EXPECT_EQ(RunPendulum(args, &err), 2) << args[0] << " " << args[1];
    EXPECT_THAT(err, HasSubstr("samples")) << args[0] << " " << args[1];
    EXPECT_THAT(err, HasSubstr("--max-samples")) << args[0] << " " << args[1];
    EXPECT_FALSE(fs::exists(dir)) << args[0] << " " << args[1];
  }
}

TEST(Limits, MaxSamplesRaisesAndLowersTheLimit) {
  // 1 s at the pendulum's 0.01 s grid: 100 intervals.
  std::string err;
  EXPECT_EQ(RunPendulum({"--t-end", "1", "--max-samples", "99", "--quiet",
                         "--output-dir", FreshDir("ms1").string()},
                        &err),
            2);
  EXPECT_THAT(err, HasSubstr("100 samples"));
  EXPECT_EQ(RunPendulum({"--t-end", "1", "--max-samples", "100", "--quiet",
                         "--output-dir", FreshDir("ms2").string()}),
            0);
  EXPECT_EQ(RunPendulum({"--max-samples", "0"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("not a positive whole number"));
}

// --t-end 0.5 --output-step 1e9 ran "ok" reaching t = 0 with one sample.
TEST(Limits, AnOutputStepLongerThanTheRunEndsItAtTEnd) {
  const fs::path dir = FreshDir("long_step");
  ASSERT_EQ(RunPendulum({"--t-end", "0.5", "--output-step", "1e9",
                         "--output-dir", dir.string(), "--quiet"}),
            0);
  std::ifstream js(dir / "pendulum.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["t_reached"].get<double>(), 0.5);
  EXPECT_EQ(j["samples"].get<int>(), 2);
}

// The step limit is a flag, and the failure names it with its value.
TEST(Limits, MaxStepsIsAFlagAndTheFailureNamesIt) {
  const fs::path dir = FreshDir("max_steps");
  std::string err;
  EXPECT_EQ(RunPendulum({"--t-end", "1", "--max-steps", "5", "--output-dir",
                         dir.string(), "--quiet"},
                        &err),
            1);
  EXPECT_THAT(err, HasSubstr("--max-steps 5"));
  EXPECT_THAT(err, HasSubstr("raise --max-steps"));
  for (const char* integrator : {"idas", "cvodes-adams"}) {
    EXPECT_EQ(RunPendulum({"--t-end", "1", "--max-steps", "5", "--integrator",
                           integrator, "--output-dir", dir.string(), "--quiet"},
                          &err),
              1)
        << integrator;
    EXPECT_THAT(err, HasSubstr("raise --max-steps")) << integrator;
  }
  // Fixed-step schemes: the run's steps, (t_end - t0) / step, before it.
  EXPECT_EQ(RunPendulum({"--integrator", "rattle", "--step", "1e-9",
                         "--max-steps", "1000"},
                        &err),
            2);
  EXPECT_THAT(err, HasSubstr("raise --max-steps"));
}

// std::stod took leading blanks and hexadecimal: --param m=0x10 ran with
// m = 16 and --rtol " 1e-6" with 1e-6, though docs/output.md says numbers
// must parse completely.
TEST(Limits, NumbersAreDecimalAndComplete) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--param", "m=0x10"},
                                             {"--rtol", " 1e-6"},
                                             {"--rtol", "1e-6 "},
                                             {"--t-end", "inf"},
                                             {"--t-end", "nan"},
                                             {"--t-end", "+-1"},
                                             {"--t-end", "1,5"},
                                             {"--t-end", ""}}) {
    std::vector<std::string> a = args;
    a.push_back("--quiet");
    std::string err;
    EXPECT_EQ(RunPendulum(a, &err), 2) << args[0] << " '" << args[1] << "'";
    EXPECT_THAT(err, HasSubstr("is not a finite decimal number"))
        << args[0] << " '" << args[1] << "'";
  }
  const fs::path dir = FreshDir("numbers");
  EXPECT_EQ(RunPendulum({"--t-end", "+0.05", "--rtol", "1E-7", "--param",
                         "m=2.", "--output-dir", dir.string(), "--quiet"}),
            0);
  std::ifstream js(dir / "pendulum.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  EXPECT_EQ(j["parameters"]["m"].get<double>(), 2.0);
}

// Declared parameter ranges (include/daedalus/model.hpp, ParamRange):
// --param l=-1 ran "ok", m = -1 failed inside the run with a message about
// the mass matrix, l = 0 with one about redundant constraints.
TEST(Limits, ParametersOutsideTheirDeclaredRangeAreUsageErrors) {
  for (const char* arg : {"m=-1", "l=0", "l=-1"}) {
    const fs::path dir = FreshDir("param_range");
    std::string err;
    EXPECT_EQ(
        RunPendulum({"--param", arg, "--output-dir", dir.string(), "--quiet"},
                    &err),
        2)
        << arg;
    EXPECT_THAT(err, HasSubstr("is outside its range: model 'pendulum' "
                               "declares it > 0"))
        << arg;
    EXPECT_FALSE(fs::exists(dir)) << arg;
  }
  // g has no declared range (its sign is the direction of gravity).
  EXPECT_EQ(RunPendulum({"--param", "g=-9.81", "--t-end", "0.05", "--quiet",
                         "--output-dir", FreshDir("g").string()}),
            0);
  // --help shows the ranges.
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(RunPendulum({"--help"}), 0);
  const std::string help = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(help, HasSubstr("m = 1  (> 0)"));
  EXPECT_THAT(help, HasSubstr("l = 1  (> 0)"));
}

}  // namespace limits_test
}  // namespace
}  // namespace daedalus
