// The common command line: outputs, schema and usage errors.
#include "daedalus/run.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pendulum.hpp"

namespace daedalus {
namespace {
namespace run_test {

namespace fs = std::filesystem;

int RunMain(std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string prog = "pendulum";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  return run(problems::PendulumProblem(), static_cast<int>(argv.size()),
             argv.data());
}

fs::path TempDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("daedalus_run_test_" + name);
  fs::remove_all(d);
  return d;
}

TEST(Run, WritesCsvAndJsonWithTheContractedSchema) {
  const fs::path dir = TempDir("schema");
  ASSERT_EQ(RunMain({"--t-end", "1", "--output-step", "0.1", "--output-dir",
                     dir.string(), "--quiet"}),
            0);
  std::ifstream csv(dir / "pendulum.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_THAT(header, ::testing::StartsWith(
                          "t,x,y,v_x,v_y,lambda_rod,vdot_x,vdot_y,power_rod,"
                          "drift_position,drift_velocity,energy,"
                          "energy_residual"));
  int rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 11);
  std::ifstream js(dir / "pendulum.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  EXPECT_EQ(j["problem"], "pendulum");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["formulation"], "baumgarte");
  EXPECT_EQ(j["integrator"], "cvodes-bdf");
  EXPECT_EQ(j["coordinates"], (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(j["constraints"], (std::vector<std::string>{"rod"}));
  EXPECT_DOUBLE_EQ(j["final"]["t"].get<double>(), 1.0);
  EXPECT_EQ(j["final"]["q"].size(), 2u);
  EXPECT_EQ(j["final"]["lambda"].size(), 1u);
  for (const char* k : {"position_max", "velocity_max"})
    EXPECT_TRUE(j["drift"].contains(k)) << k;
  for (const char* k : {"initial", "final", "balance_residual_max"})
    EXPECT_TRUE(j["energy"].contains(k)) << k;
  EXPECT_TRUE(j.contains("constraint_work"));
  for (const char* k : {"steps", "rhs_evals", "jacobian_evals",
                        "error_test_failures", "nonlinear_conv_failures"})
    EXPECT_TRUE(j["stats"].contains(k)) << k;
  EXPECT_GT(j["stats"]["steps"].get<long>(), 10);
}

// ------------------------------------------------ compiled evaluation

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs build/problems/<name> with `args` into `dir`; returns the summary.
nlohmann::json RunExecutable(const std::string& name,
                             const std::string& args,
                             const fs::path& dir) {
  const char* build = std::getenv("DAEDALUS_BUILD_DIR");
  EXPECT_NE(build, nullptr) << "ctest sets DAEDALUS_BUILD_DIR";
  if (build == nullptr) return {};
  const std::string cmd = std::string(build) + "/problems/" + name + " " +
                          args + " --quiet --output-dir '" + dir.string() +
                          "' > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream js(dir / (name + ".json"));
  return nlohmann::json::parse(js);
}

TEST(Run, NativeKernelsGiveTheInterpretersNumbersBitForBit) {
  // The generated kernels perform the interpreter's operations in the same
  // order: every CSV row (all the diagnostics included) is identical. The
  // dual-number path agrees to the integration tolerance.
  struct Case {
    std::string name, args;
  };
  for (const Case& c :
       {Case{"slider_crank", "--t-end 4"}, Case{"pendulum", "--t-end 2"},
        Case{"rolling_disk",
             "--t-end 2 --formulation ggl --integrator idas "
             "--multiplier-atol 1"},
        Case{"double_pendulum", "--t-end 2 --formulation projection"}}) {
    const fs::path native = TempDir(c.name + "_native"),
                   interp = TempDir(c.name + "_interpreted"),
                   ad = TempDir(c.name + "_ad");
    const nlohmann::json jn = RunExecutable(c.name, c.args, native);
    const nlohmann::json ji =
        RunExecutable(c.name, c.args + " --evaluator interpreted", interp);
    const nlohmann::json ja =
        RunExecutable(c.name, c.args + " --evaluator ad", ad);
    ASSERT_EQ(jn["status"], "ok") << c.name;
    EXPECT_EQ(jn["evaluator"], "compiled (native kernels)") << c.name;
    EXPECT_EQ(ji["evaluator"], "compiled (interpreted)") << c.name;
    EXPECT_THAT(ja["evaluator"].get<std::string>(),
                ::testing::StartsWith("dual numbers"))
        << c.name;
    const std::string csv = Slurp(native / (c.name + ".csv"));
    EXPECT_GT(csv.size(), 1000u) << c.name;
    EXPECT_EQ(csv, Slurp(interp / (c.name + ".csv"))) << c.name;
    const auto qn = jn["final"]["q"].get<std::vector<double>>();
    const auto qa = ja["final"]["q"].get<std::vector<double>>();
    ASSERT_EQ(qn.size(), qa.size());
    for (size_t i = 0; i < qn.size(); ++i)
      EXPECT_NEAR(qn[i], qa[i], 1e-5) << c.name << " q[" << i << "]";
  }
}

TEST(Run, ModelsThatBranchOnValuesRunOnDualNumbers) {
  // golfer_3d's ramps clamp with `if` (golfer_3d.hpp; golf_swing's use
  // Clamp and IfPositive and are compiled). The energy form: the default
  // recursive form is not recorded, for another reason. A few steps: the
  // evaluator is chosen at the start (0.05 s took 61 s under the
  // sanitizers).
  const nlohmann::json j =
      RunExecutable("golfer_3d", "--dynamics energy --t-end 0.002",
                    TempDir("golf_evaluator"));
  EXPECT_EQ(j["status"], "ok");
  EXPECT_THAT(j["evaluator"].get<std::string>(),
              ::testing::HasSubstr("compares a value"));
}

TEST(Run, ParameterOverrideIsUsed) {
  const fs::path dir = TempDir("param");
  ASSERT_EQ(RunMain({"--t-end=0.2", "--param", "g=1.0", "--output-dir",
                     dir.string(), "--quiet"}),
            0);
  std::ifstream js(dir / "pendulum.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  EXPECT_DOUBLE_EQ(j["parameters"]["g"].get<double>(), 1.0);
}

TEST(Run, UnknownFlagExitsNonZeroListingValidOptions) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain({"--t-edn", "3"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ::testing::HasSubstr("unknown option '--t-edn'"));
  EXPECT_THAT(err, ::testing::HasSubstr("--t-end"));
}

TEST(Run, UnknownParameterExitsNonZeroListingValidNames) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain({"--param", "mass=2"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ::testing::HasSubstr("unknown parameter 'mass'"));
  EXPECT_THAT(err, ::testing::HasSubstr("m l g"));
}

TEST(Run, BadNumberAndBadFormulationAreUsageErrors) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain({"--rtol", "1e-x"}), 2);
  EXPECT_EQ(RunMain({"--formulation", "ggl2"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ::testing::HasSubstr("is not a finite decimal number"));
  EXPECT_THAT(err, ::testing::HasSubstr("valid: unstabilized, baumgarte"));
}

// --sens adds d<col>/d<param> columns and the JSON entry; the CSV values
// at the final row equal the summary's final sensitivities, and the
// pendulum's dx/dl at t = 0 is 1 (it starts at x = l, on the manifold).
TEST(Run, SensitivityColumnsAndSummary) {
  const fs::path dir = TempDir("sens");
  ASSERT_EQ(RunMain({"--t-end", "0.5", "--output-step", "0.25", "--sens", "l,m",
                     "--integrator", "idas", "--multiplier-atol", "1",
                     "--output-dir", dir.string(), "--quiet"}),
            0);
  std::ifstream csv(dir / "pendulum.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_THAT(header, ::testing::HasSubstr(
                          "dx/dl,dy/dl,dv_x/dl,dv_y/dl,dlambda_rod/dl,dx/dm"));
  std::vector<std::string> cols, vals;
  for (std::stringstream h(header); h.good();) {
    std::string c;
    std::getline(h, c, ',');
    cols.push_back(c);
  }
  for (std::stringstream r(first); r.good();) {
    std::string v;
    std::getline(r, v, ',');
    vals.push_back(v);
  }
  ASSERT_EQ(cols.size(), vals.size());
  const auto at = std::find(cols.begin(), cols.end(), "dx/dl") - cols.begin();
  EXPECT_DOUBLE_EQ(std::stod(vals[at]), 1.0);
  std::ifstream js(dir / "pendulum.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  ASSERT_TRUE(j.contains("sensitivities"));
  EXPECT_EQ(j["sensitivities"]["method"], "forward");
  EXPECT_EQ(j["sensitivities"]["parameters"],
            (std::vector<std::string>{"l", "m"}));
  EXPECT_EQ(j["sensitivities"]["final"].size(), 5u);  // x, y, vx, vy, lambda
  EXPECT_EQ(j["sensitivities"]["components"][4], "lambda_rod");
  // A typo in --sens is a usage error that lists the valid names.
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain({"--sens", "L", "--output-dir", dir.string()}), 2);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              ::testing::HasSubstr("valid: m, l, g"));
}

}  // namespace run_test
}  // namespace
}  // namespace daedalus
