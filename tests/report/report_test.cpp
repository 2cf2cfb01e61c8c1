// Reports a person reads: the human summary, the JSON and CSV diagnostics
// (checked against the samples they come from), the progress line, and
// scripts/plot with its bad-input behaviour.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/output.hpp"
#include "daedalus/simulate.hpp"
#include "monitor/diagnostic_models.hpp"
#include "pendulum.hpp"
#include "support/seed_models.hpp"

namespace daedalus {
namespace {
namespace report_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Collector : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

SimulationOptions Options(double t_end, double step) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_step = step;
  o.rtol = 1e-10;
  o.atol = 1e-10;
  return o;
}

fs::path TempDir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("daedalus_diagnostics_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
  return out;
}

int Column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  ADD_FAILURE() << "no column " << name;
  return 0;
}

// ------------------------------------------------------ human summary

TEST(Report, FullReportListsFeasibilityWorkAndKktHealth) {
  const Model m = testing::PulledBlock(0.4);
  const SimulationSummary s =
      Simulate(m, {Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero()},
               m.default_parameters(), Options(1.0, 0.1));
  ASSERT_TRUE(s.ok) << s.error;
  const std::string r = s.FullReport(m);
  EXPECT_THAT(r, HasSubstr("1 unilateral row(s), 1 friction cone(s) watched: "
                           "1 violation interval(s)"));
  EXPECT_THAT(r, HasSubstr("cone 'grip'  t = 6.000e-01 .. 1.000e+00 (still "
                           "violated at the end)"));
  EXPECT_THAT(r, HasSubstr("KKT health"));
  EXPECT_THAT(r, HasSubstr("power identity gap"));
  EXPECT_THAT(r, HasSubstr("work [J]               other "));
  EXPECT_THAT(r, HasSubstr("event                  'cone_grip'"));
  EXPECT_THAT(r, Not(HasSubstr("WARNING")));
  // One screen: the whole report fits in 30 lines.
  EXPECT_LE(std::count(r.begin(), r.end(), '\n'), 30);
  const std::string brief = s.BriefReport();
  EXPECT_THAT(brief, HasSubstr("1 feasibility violation,"));
  EXPECT_EQ(std::count(brief.begin(), brief.end(), '\n'), 0);
}

// A run that fails before its first sample (the pendulum released at its
// pivot: J = 0) printed "energy ()" and empty state vectors (issue 18).
TEST(Report, RunWithoutSamplesSaysSoInsteadOfEmptyFields) {
  const Problem p = problems::PendulumProblem();
  SimulationOptions o = p.defaults;
  o.t_end = 0.1;
  const SimulationSummary s =
      Simulate(p.model, {Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero()},
               p.model.default_parameters(), o);
  ASSERT_FALSE(s.ok);
  ASSERT_EQ(s.samples, 0);
  const std::string r = s.FullReport(p.model);
  EXPECT_THAT(r, HasSubstr("no sample recorded"));
  EXPECT_THAT(r, Not(HasSubstr("energy (")));
  EXPECT_THAT(r, Not(HasSubstr("final q")));
  EXPECT_THAT(r, HasSubstr("error"));
}

TEST(Report, NearSingularRunPrintsItsWarning) {
  const Model m = testing::DrivenSliderCrank();
  const SimulationSummary s =
      Simulate(m, testing::DrivenSliderCrankStart(), m.default_parameters(),
               Options(0.998, 0.002));
  ASSERT_TRUE(s.ok) << s.error;
  const std::string r = s.FullReport(m);
  EXPECT_THAT(r,
              HasSubstr("WARNING                near-singular configuration"));
  EXPECT_THAT(s.BriefReport(), HasSubstr("1 warning(s)"));
  const nlohmann::json j =
      nlohmann::json::parse(SummaryJson(m, s, m.default_parameters()));
  EXPECT_TRUE(j["kkt_health"]["near_singular"].get<bool>());
  EXPECT_EQ(j["kkt_health"]["rank_J_min"], 3);
  EXPECT_EQ(j["kkt_health"]["worst"]["q"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["kkt_health"]["worst"]["t"].get<double>(),
                   s.kkt_health.t_worst);
  ASSERT_EQ(j["warnings"].size(), 1u);
}

// ------------------------------------------------------ JSON and CSV

// The JSON's diagnostics are the summary's, and the summary's maxima are
// the maxima of the samples it was built from.
TEST(Report, JsonDiagnosticsAgreeWithTheSamples) {
  const Model m = testing::LiftedBlock();
  Collector c;
  const SimulationSummary s =
      Simulate(m, {Eigen::Vector2d::Zero(), Eigen::Vector2d(0.3, 0.0)},
               m.default_parameters(), Options(1.0, 0.1), &c);
  ASSERT_TRUE(s.ok) << s.error;
  const nlohmann::json j =
      nlohmann::json::parse(SummaryJson(m, s, m.default_parameters()));
  ASSERT_EQ(j["feasibility"]["violations"].size(), 1u);
  const auto& v = j["feasibility"]["violations"][0];
  EXPECT_EQ(v["kind"], "unilateral");
  EXPECT_EQ(v["name"], "table");
  EXPECT_NEAR(v["t_start"].get<double>(), 0.25, 1e-8);
  EXPECT_NEAR(v["t_end"].get<double>(), 0.75, 1e-8);
  EXPECT_FALSE(v["ongoing"].get<bool>());
  EXPECT_EQ(j["feasibility"]["unilateral_rows"], 1);
  double gap = 0.0, worst = 0.0;
  for (const Sample& smp : c.samples) {
    gap = std::max(gap, std::abs(smp.power[0] - smp.ideal_power[0]));
    worst = std::min(worst, smp.lambda[0]);
  }
  EXPECT_EQ(j["constraint_power_identity"]["gap_max"].get<double>(), gap);
  EXPECT_EQ(v["worst"].get<double>(), worst);
  EXPECT_TRUE(j["kkt_health"].is_object());
  EXPECT_EQ(j["kkt_health"]["rows"], 1);
}

// Every CSV row has as many fields as the header, and the derived columns
// are what their names say: the identity gap is power minus its ideal
// side, the energy rate is the sum of the power terms.
TEST(Report, CsvDiagnosticColumnsAreConsistent) {
  const fs::path dir = TempDir("csv");
  const Model m = testing::SeedCoupled(4.0);
  {
    CsvWriter csv(m, (dir / "coupled.csv").string());
    const SimulationSummary s =
        Simulate(m, {Eigen::Vector2d(0.2, -0.1), Eigen::Vector2d(1.0, 2.0)},
                 m.default_parameters(), Options(0.5, 0.1), &csv);
    ASSERT_TRUE(s.ok) << s.error;
  }
  const Model pm = testing::SeedMovingSupport();
  {
    CsvWriter csv(pm, (dir / "support.csv").string());
    const SimulationSummary s = Simulate(
        pm, {Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, 0.3)},
        pm.default_parameters(), Options(0.5, 0.1), &csv);
    ASSERT_TRUE(s.ok) << s.error;
  }
  {
    std::ifstream in(dir / "coupled.csv");
    std::string line;
    std::getline(in, line);
    const auto h = Split(line);
    EXPECT_EQ(h, CsvColumns(m));
    int rows = 0;
    while (std::getline(in, line)) {
      const auto f = Split(line);
      ASSERT_EQ(f.size(), h.size());
      const double rate = std::stod(f[Column(h, "energy_rate")]);
      const double sum = std::stod(f[Column(h, "power_input_torque")]) -
                         std::stod(f[Column(h, "power_damping")]);
      EXPECT_NEAR(rate, sum, 1e-15 * std::max(1.0, std::abs(sum)));
      ++rows;
    }
    EXPECT_EQ(rows, 6);
  }
  {
    std::ifstream in(dir / "support.csv");
    std::string line;
    std::getline(in, line);
    const auto h = Split(line);
    EXPECT_EQ(h.back(), "rank_J");
    while (std::getline(in, line)) {
      const auto f = Split(line);
      ASSERT_EQ(f.size(), h.size());
      const double p = std::stod(f[Column(h, "power_support")]);
      const double ideal = std::stod(f[Column(h, "power_ideal_support")]);
      EXPECT_GT(p, 6.0);  // the support supplies >= 6.126 W
      EXPECT_EQ(std::stod(f[Column(h, "power_gap_support")]), p - ideal);
      EXPECT_EQ(std::stod(f[Column(h, "reaction_power_y")]), p);
      EXPECT_EQ(f[Column(h, "rank_J")], "1");
    }
  }
}

// ------------------------------------------------------- progress line

struct FakeClock {
  double now = 0.0;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

Sample At(double t) {
  Sample s;
  s.t = t;
  return s;
}

TEST(Report, ProgressLineAppearsOnlyAfterASecondAndIsErased) {
  FakeClock clock;
  std::ostringstream err;
  Collector next;
  {
    ProgressLine p("demo", 0.0, 10.0, &next, &err, true, clock.fn());
    clock.now = 0.5;
    p.OnSample(At(1.0));
    EXPECT_EQ(err.str(), "");  // under a second: silent
    clock.now = 2.0;
    p.OnSample(At(2.5));
    EXPECT_THAT(err.str(), HasSubstr("\rdemo: t = 2.5 / 10 s (25%), 2.0 s "
                                     "elapsed, ~6.0 s left"));
    const size_t len = err.str().size();
    clock.now = 2.1;  // within 0.2 s of the last update: no rewrite
    p.OnSample(At(2.6));
    EXPECT_EQ(err.str().size(), len);
    p.Finish();
    EXPECT_THAT(err.str(), ::testing::EndsWith("\r\033[K"));
  }
  EXPECT_EQ(next.samples.size(), 3u);  // every sample was forwarded
  // Disabled (stderr not a terminal): forwards, never writes.
  std::ostringstream quiet;
  Collector next2;
  {
    ProgressLine p("demo", 0.0, 10.0, &next2, &quiet, false, clock.fn());
    clock.now = 100.0;
    p.OnSample(At(5.0));
  }
  EXPECT_EQ(quiet.str(), "");
  EXPECT_EQ(next2.samples.size(), 1u);
}

// ------------------------------------------------------------ scripts/plot

std::string PlotCommand(const fs::path& csv, const fs::path& log) {
  return std::string("/usr/bin/python3 ") + DAEDALUS_SOURCE_DIR +
         "/scripts/plot '" + csv.string() + "' > '" + log.string() + "' 2>&1";
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int ExitStatus(int system_status) {
  return WIFEXITED(system_status) ? WEXITSTATUS(system_status) : -1;
}

TEST(PlotScript, WritesEveryFigureAndRejectsBadInputWithoutOverwriting) {
  // scripts/setup installs python3-matplotlib: its absence is a broken
  // set-up, not a reason to pass.
  ASSERT_EQ(std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null"),
            0)
      << "python3-matplotlib is not installed; run scripts/setup";
  const fs::path dir = TempDir("plot");
  const Model m = testing::PulledBlock(0.4);
  {
    CsvWriter csv(m, (dir / "run.csv").string());
    ASSERT_TRUE(Simulate(m, {Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero()},
                         m.default_parameters(), Options(1.0, 0.05), &csv)
                    .ok);
  }
  ASSERT_EQ(ExitStatus(std::system(
                PlotCommand(dir / "run.csv", dir / "log.txt").c_str())),
            0)
      << Slurp(dir / "log.txt");
  for (const char* f : {"trajectories", "drift", "multipliers", "power",
                        "energy", "overview"}) {
    const std::string png = Slurp(dir / (std::string("run_") + f + ".png"));
    ASSERT_GT(png.size(), 1000u) << f;
    EXPECT_EQ(png.substr(1, 3), "PNG") << f;  // the PNG signature
  }
  const std::string before = Slurp(dir / "run_overview.png");

  // Missing file: clear message, status 1.
  EXPECT_EQ(ExitStatus(std::system(
                PlotCommand(dir / "absent.csv", dir / "log.txt").c_str())),
            1);
  EXPECT_THAT(Slurp(dir / "log.txt"),
              HasSubstr("cannot read '" + (dir / "absent.csv").string() +
                        "': No such file or directory; no figure written"));

  // Truncated in the middle of a row (a killed run): rejected, and the
  // figures of the same name are left as they were.
  const std::string text = Slurp(dir / "run.csv");
  {
    std::ofstream cut(dir / "run.csv", std::ios::trunc);
    cut << text.substr(0, text.size() - 40);
  }
  EXPECT_EQ(ExitStatus(std::system(
                PlotCommand(dir / "run.csv", dir / "log.txt").c_str())),
            1);
  EXPECT_THAT(Slurp(dir / "log.txt"),
              HasSubstr("(the file ends in the middle of a row: truncated?)"));
  EXPECT_EQ(Slurp(dir / "run_overview.png"), before);

  // Header only: no data rows.
  {
    std::ofstream hdr(dir / "run.csv", std::ios::trunc);
    hdr << text.substr(0, text.find('\n') + 1);
  }
  EXPECT_EQ(ExitStatus(std::system(
                PlotCommand(dir / "run.csv", dir / "log.txt").c_str())),
            1);
  EXPECT_THAT(Slurp(dir / "log.txt"), HasSubstr("no data rows"));
  EXPECT_EQ(Slurp(dir / "run_overview.png"), before);
  // No temporary file is left behind.
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

// Non-finite data are drawn as gaps, and now named on stderr; --out naming
// a file said the folder "does not exist" (issue 18).
TEST(PlotScript, NamesNonFiniteColumnsAndRefusesAFileAsOutputDirectory) {
  ASSERT_EQ(std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null"),
            0)
      << "python3-matplotlib is not installed; run scripts/setup";
  const fs::path dir = TempDir("plot_nonfinite");
  const Model m = testing::PulledBlock(0.4);
  {
    CsvWriter csv(m, (dir / "run.csv").string());
    ASSERT_TRUE(Simulate(m, {Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero()},
                         m.default_parameters(), Options(1.0, 0.05), &csv)
                    .ok);
  }
  // Replace the energy of the third and fourth data rows by nan and inf.
  std::string text = Slurp(dir / "run.csv");
  std::vector<std::string> lines;
  for (std::stringstream ss(text); std::getline(ss, text);)
    lines.push_back(text);
  const std::vector<std::string> header = Split(lines[0]);
  const int e = Column(header, "energy");
  for (int row : {3, 4}) {
    std::vector<std::string> f = Split(lines[static_cast<size_t>(row)]);
    f[static_cast<size_t>(e)] = row == 3 ? "nan" : "inf";
    std::string joined;
    for (size_t k = 0; k < f.size(); ++k) joined += (k ? "," : "") + f[k];
    lines[static_cast<size_t>(row)] = joined;
  }
  {
    std::ofstream out(dir / "run.csv", std::ios::trunc);
    for (const auto& l : lines) out << l << "\n";
  }
  ASSERT_EQ(ExitStatus(std::system(
                PlotCommand(dir / "run.csv", dir / "log.txt").c_str())),
            0)
      << Slurp(dir / "log.txt");
  EXPECT_THAT(Slurp(dir / "log.txt"),
              HasSubstr("non-finite values (nan or inf, drawn as gaps) in 1 "
                        "column(s): 'energy' (2)"));

  std::ofstream(dir / "a_file") << "x";
  const std::string cmd = std::string("/usr/bin/python3 ") +
                          DAEDALUS_SOURCE_DIR + "/scripts/plot '" +
                          (dir / "run.csv").string() + "' --out '" +
                          (dir / "a_file").string() + "' > '" +
                          (dir / "log.txt").string() + "' 2>&1";
  EXPECT_EQ(ExitStatus(std::system(cmd.c_str())), 1);
  EXPECT_THAT(Slurp(dir / "log.txt"), HasSubstr("is a file, not a directory"));
}

}  // namespace report_test
}  // namespace
}  // namespace daedalus
