// Ensembles from the command line (issue 20), serial and in-process: the
// gathered table equals single runs of the same options member by member
// (exactly: same code, same options), a failing member is recorded and the
// others run, the journal lets a rerun skip finished members, bad input is
// refused before anything runs with file, line and column, and Monte Carlo
// draws depend only on (seed, member). The MPI runs are
// tests/cli/ensemble_mpi_test.py.
#include "daedalus/ensemble.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/ensemble_input.hpp"
#include "daedalus/run.hpp"
#include "pendulum.hpp"
#include "slider_crank.hpp"

namespace daedalus {
namespace {
namespace ensemble_test {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

int RunCli(std::vector<std::string> args, std::string* err = nullptr) {
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
  const fs::path d = fs::temp_directory_path() / ("daedalus_ensemble_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

void Write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::vector<std::string> Lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The journal's rows of finished members (beside its header and the
// {"started": m, "rank": r} lines).
std::vector<std::string> FinishedRows(const fs::path& journal) {
  std::vector<std::string> out;
  for (const std::string& l : Lines(journal))
    if (l.find("\"member\":") != std::string::npos) out.push_back(l);
  return out;
}

// A short sweep: three members of different mass, length and duration.
const char* const kSweep =
    "name,m,l,t_end\n"
    "light,0.5,1,0.3\n"
    "\"long, heavy\",2,1.5,0.5\n"
    "# a comment line\n"
    "short,1,0.5,0.4\n";

TEST(Ensemble, GatheredTableEqualsSingleRunsMemberByMember) {
  const fs::path dir = FreshDir("sweep");
  Write(dir / "sweep.csv", kSweep);
  const fs::path out = dir / "out";
  ASSERT_EQ(RunCli({"--ensemble", (dir / "sweep.csv").string(), "--rtol",
                    "1e-9", "--output-dir", out.string(), "--quiet"}),
            0);
  const json table = ReadJson(out / "pendulum.ensemble.json");
  ASSERT_EQ(table["rows"].size(), 3u);
  EXPECT_EQ(table["counts"]["ok"], 3);
  const std::vector<std::vector<std::string>> singles = {
      {"--param", "m=0.5", "--param", "l=1", "--t-end", "0.3"},
      {"--param", "m=2", "--param", "l=1.5", "--t-end", "0.5"},
      {"--param", "m=1", "--param", "l=0.5", "--t-end", "0.4"}};
  for (size_t i = 0; i < singles.size(); ++i) {
    const fs::path sdir = dir / ("single" + std::to_string(i));
    std::vector<std::string> args = singles[i];
    args.insert(args.end(),
                {"--rtol", "1e-9", "--output-dir", sdir.string(), "--quiet"});
    ASSERT_EQ(RunCli(args), 0);
    const json s = ReadJson(sdir / "pendulum.json");
    const json& row = table["rows"][i];
    EXPECT_EQ(row["member"], static_cast<int>(i));
    EXPECT_EQ(row["status"], "ok");
    // Exactly the single run's numbers (JSON keeps every double exactly).
    EXPECT_EQ(row["final"]["q"], s["final"]["q"]) << i;
    EXPECT_EQ(row["final"]["v"], s["final"]["v"]) << i;
    EXPECT_EQ(row["t_reached"], s["t_reached"]) << i;
    EXPECT_EQ(row["drift_position_max"], s["drift"]["position_max"]) << i;
    EXPECT_EQ(row["energy_residual_max"], s["energy"]["balance_residual_max"])
        << i;
    // The member's own files are the single run's.
    const fs::path mdir = out / row["dir"].get<std::string>();
    EXPECT_EQ(ReadJson(mdir / "pendulum.json")["final"], s["final"]) << i;
    EXPECT_EQ(Lines(mdir / "pendulum.csv"), Lines(sdir / "pendulum.csv"));
  }
  EXPECT_EQ(table["rows"][1]["name"], "long, heavy");
  EXPECT_EQ(table["rows"][1]["t_reached"], 0.5);
  // The CSV table: a header and one row per member, with the final state
  // written with 17 digits (read back exactly).
  const std::vector<std::string> csv = Lines(out / "pendulum.ensemble.csv");
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_THAT(csv[0], HasSubstr("member,name,m,l,t_end,status,wall_time,"
                                "t_reached,samples,x,y,v_x,v_y"));
  EXPECT_THAT(csv[2], HasSubstr("1,\"long, heavy\",2,1.5,0.5,ok,"));
  std::stringstream row0(csv[1]);
  std::vector<std::string> f;
  for (std::string c; std::getline(row0, c, ',');) f.push_back(c);
  ASSERT_GE(f.size(), 13u);
  EXPECT_EQ(std::stod(f[9]), table["rows"][0]["final"]["q"][0].get<double>());
  EXPECT_EQ(std::stod(f[10]), table["rows"][0]["final"]["q"][1].get<double>());
}

TEST(Ensemble, AFailingMemberIsRecordedAndTheOthersRun) {
  const fs::path dir = FreshDir("failing");
  // Member 1: a mass outside its range; member 2: too few steps allowed.
  Write(dir / "e.csv",
        "m,t_end,max_steps\n1,0.2,500000\n-1,0.2,500000\n1,0.5,3\n2,0.2,"
        "500000\n");
  std::string err;
  EXPECT_EQ(RunCli({"--ensemble", (dir / "e.csv").string(), "--output-dir",
                    (dir / "out").string(), "--quiet"},
                   &err),
            1);
  EXPECT_THAT(err, HasSubstr("member 1 failed"));
  EXPECT_THAT(err, HasSubstr("member 2 failed"));
  const json t = ReadJson(dir / "out" / "pendulum.ensemble.json");
  ASSERT_EQ(t["rows"].size(), 4u);
  EXPECT_EQ(t["rows"][0]["status"], "ok");
  EXPECT_EQ(t["rows"][1]["status"], "failed");
  EXPECT_THAT(t["rows"][1]["error"].get<std::string>(), HasSubstr("'m'"));
  EXPECT_EQ(t["rows"][2]["status"], "failed");
  EXPECT_THAT(t["rows"][2]["error"].get<std::string>(),
              HasSubstr("--max-steps"));
  EXPECT_LT(t["rows"][2]["t_reached"].get<double>(), 0.5);
  EXPECT_EQ(t["rows"][3]["status"], "ok");
  EXPECT_EQ(t["counts"]["failed"], 2);
}

TEST(Ensemble, TheJournalLetsARerunSkipFinishedMembers) {
  const fs::path dir = FreshDir("journal");
  Write(dir / "e.csv", kSweep);
  const fs::path out = dir / "out";
  const std::vector<std::string> cmd = {"--ensemble", (dir / "e.csv").string(),
                                        "--output-dir", out.string(),
                                        "--quiet"};
  ASSERT_EQ(RunCli(cmd), 0);
  const json first = ReadJson(out / "pendulum.ensemble.json");
  const fs::path journal = out / "pendulum.ensemble.journal";
  const std::vector<std::string> lines = Lines(journal);
  // The header, then per member a line when it starts and its row when it
  // finishes.
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[1], "{\"started\":0,\"rank\":0}");
  ASSERT_EQ(FinishedRows(journal).size(), 3u);
  // As if the process had died during member 2 while writing its row:
  // members 0 and 1 are finished, 2 started and its row is torn.
  std::string torn;
  std::string row2;
  for (const std::string& l : lines) {
    if (l.find("\"member\":2") != std::string::npos)
      row2 = l;
    else
      torn += l + "\n";
  }
  ASSERT_FALSE(row2.empty());
  torn += row2.substr(0, row2.size() / 2);
  Write(journal, torn);
  fs::remove_all(out / "members" / "000000");
  fs::remove_all(out / "members" / "000002");
  fs::remove(out / "pendulum.ensemble.json");
  std::string err;
  ASSERT_EQ(RunCli(cmd, &err), 0);
  // The lost member is named with its rank, even with --quiet.
  EXPECT_THAT(err, HasSubstr("ended while member 2 (rank 0) had started"));
  EXPECT_FALSE(fs::exists(out / "members" / "000000"));  // skipped
  EXPECT_TRUE(fs::exists(out / "members" / "000002" / "pendulum.json"));
  const json second = ReadJson(out / "pendulum.ensemble.json");
  EXPECT_EQ(second["resumed_from_journal"], 2);
  EXPECT_EQ(second["reissued"], json::parse("[{\"member\":2,\"rank\":0}]"));
  ASSERT_EQ(second["rows"].size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(second["rows"][i]["final"], first["rows"][i]["final"]) << i;
  EXPECT_EQ(FinishedRows(journal).size(), 3u);
  // Without --quiet a rerun says what it takes from the journal.
  std::vector<std::string> loud(cmd.begin(), cmd.end() - 1);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(RunCli(loud), 0);
  EXPECT_THAT(::testing::internal::GetCapturedStdout(),
              HasSubstr("3 of 3 members finished in"));
  // Another ensemble in the same folder: refused, nothing run.
  Write(dir / "other.csv", "m\n3\n");
  EXPECT_EQ(RunCli({"--ensemble", (dir / "other.csv").string(), "--output-dir",
                    out.string(), "--quiet"},
                   &err),
            2);
  EXPECT_THAT(err, HasSubstr("belongs to a different ensemble"));
}

TEST(Ensemble, BadInputIsRefusedWithFileLineAndColumn) {
  const fs::path dir = FreshDir("bad");
  struct Case {
    std::string text, where, what;
  };
  const std::vector<Case> cases = {
      {"m,mass\n1,2\n", "bad.csv:1:3:", "unknown column 'mass'"},
      {"m,l\n1,2\n1,abc\n", "bad.csv:3:3:", "'abc' is not a finite decimal"},
      {"m,l\n1,2\n1\n", "bad.csv:3:", "1 field, the header has 2"},
      {"m,l\n1,2\n1,2,3\n", "bad.csv:3:5:", "3 fields, the header has 2"},
      {"m,l\n1,2\n\n1,2\n", "bad.csv:3:1:", "empty row"},
      {"m,formulation\n1,ggl\n1,gl\n",
       "bad.csv:3:3:", "unknown formulation 'gl'"},
      {"m,m\n1,2\n", "bad.csv:1:3:", "appears twice"},
      {"m,l\n", "bad.csv:", "no members"},
  };
  for (const Case& c : cases) {
    Write(dir / "bad.csv", c.text);
    const fs::path out = dir / "out";
    fs::remove_all(out);
    std::string err;
    EXPECT_EQ(RunCli({"--ensemble", (dir / "bad.csv").string(), "--output-dir",
                      out.string()},
                     &err),
              2)
        << c.text;
    EXPECT_THAT(err, HasSubstr(c.where)) << c.text;
    EXPECT_THAT(err, HasSubstr(c.what)) << c.text;
    EXPECT_FALSE(fs::exists(out)) << c.text;  // nothing ran
  }
  std::string err;
  EXPECT_EQ(RunCli({"--ensemble", (dir / "missing.csv").string()}, &err), 2);
  EXPECT_THAT(err, HasSubstr("cannot read"));
  // A spreadsheet's byte-order mark before the header is not a column.
  Write(dir / "bom.csv", "\xEF\xBB\xBFm,t_end\n1,0.1\n");
  EXPECT_EQ(RunCli({"--ensemble", (dir / "bom.csv").string(), "--output-dir",
                    (dir / "bom").string(), "--quiet"}),
            0);
  // An output folder that cannot be made (below a regular file).
  Write(dir / "good.csv", "m\n1\n");
  Write(dir / "a_file", "");
  EXPECT_EQ(RunCli({"--ensemble", (dir / "good.csv").string(), "--output-dir",
                    (dir / "a_file" / "out").string()},
                   &err),
            2);
  EXPECT_THAT(err, HasSubstr("cannot create the output folder"));
  EXPECT_THAT(err, HasSubstr("writable --output-dir"));
  // Distributions and flags.
  const std::vector<std::pair<std::vector<std::string>, std::string>> flags = {
      {{"--monte-carlo", "3", "--dist", "m=normal:1,-0.1"}, "positive SD"},
      {{"--monte-carlo", "3", "--dist", "m=uniform:2,1"}, "LO < HI"},
      {{"--monte-carlo", "3", "--dist", "m=lognormal:0,0"}, "positive SIGMA"},
      {{"--monte-carlo", "3", "--dist", "m=gauss:0,1"}, "unknown distribution"},
      {{"--monte-carlo", "3", "--dist", "mass=normal:1,1"}, "mass"},
      {{"--monte-carlo", "3", "--dist", "m=normal:1"}, "two numbers"},
      {{"--monte-carlo", "0", "--dist", "m=normal:1,1"}, "positive whole"},
      {{"--monte-carlo", "3"}, "at least one --dist"},
      {{"--seed", "3"}, "needs --monte-carlo"},
      {{"--monte-carlo", "3", "--seed", "-1", "--dist", "m=normal:1,1"},
       "--seed"},
      {{"--monte-carlo", "2", "--dist", "m=normal:1,.1", "--dist",
        "m=normal:1,.1"},
       "already has a distribution"},
  };
  for (auto [args, what] : flags) {
    args.insert(args.end(), {"--output-dir", (dir / "mc").string()});
    EXPECT_EQ(RunCli(args, &err), 2) << what;
    EXPECT_THAT(err, HasSubstr(what));
    EXPECT_FALSE(fs::exists(dir / "mc")) << what;
  }
}

// SIGINT while member 3 of 5 runs: exit 130, members 0-2 ok in the table
// and the journal, the others interrupted or not run; the same command
// again runs only those and ends ok.
TEST(Ensemble, AnInterruptedEnsembleFinishesWhenRunAgain) {
  const fs::path dir = FreshDir("interrupt");
  Write(dir / "e.csv", "t_end\n0.05\n0.05\n0.05\n30\n30\n");
  const fs::path out = dir / "out";
  const fs::path journal = out / "pendulum.ensemble.journal";
  const std::vector<std::string> cmd = {"--ensemble", (dir / "e.csv").string(),
                                        "--output-dir", out.string(),
                                        "--quiet"};
  std::thread signaller([journal] {
    for (int i = 0; i < 20000; ++i) {  // 20 s at most
      if (fs::exists(journal) && FinishedRows(journal).size() >= 3) {
        std::raise(SIGINT);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::string err;
  const int rc = RunCli(cmd, &err);
  signaller.join();
  EXPECT_EQ(rc, 130);
  EXPECT_THAT(err, HasSubstr("interrupted by SIGINT"));
  const json t = ReadJson(out / "pendulum.ensemble.json");
  ASSERT_EQ(t["rows"].size(), 5u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t["rows"][i]["status"], "ok") << i;
  EXPECT_GE(
      t["counts"].value("interrupted", 0) + t["counts"].value("pending", 0), 1);
  ASSERT_EQ(RunCli(cmd, &err), 0);
  // Interrupted members were not lost: no fault to report.
  EXPECT_THAT(err, Not(HasSubstr("had started")));
  const json again = ReadJson(out / "pendulum.ensemble.json");
  EXPECT_EQ(again["reissued"], json::array());
  EXPECT_GE(again["resumed_from_journal"].get<int>(), 3);
  EXPECT_EQ(again["counts"]["ok"], 5);
  EXPECT_EQ(again["rows"][4]["t_reached"], 30.0);
}

// Initial-state overrides: --q0/--v0 on the command line and q0_<coordinate>
// / v0_<coordinate> columns of an ensemble file. A start on the rod's
// circle is kept exactly; one off it is made consistent (projected onto
// x^2 + y^2 = l^2), with the correction reported.
TEST(Ensemble, InitialStateOverridesAsFlagsAndColumns) {
  const fs::path dir = FreshDir("initial");
  const fs::path single = dir / "single";
  ASSERT_EQ(RunCli({"--q0", "x=0.6", "--q0", "y=-0.8", "--v0", "x=0.4", "--v0",
                    "y=0.3", "--t-end", "0.3", "--output-dir", single.string(),
                    "--quiet"}),
            0);
  const json s = ReadJson(single / "pendulum.json");
  EXPECT_EQ(s["initial_correction"]["position"], 0.0);
  EXPECT_EQ(s["initial_correction"]["velocity"], 0.0);
  const std::vector<std::string> rows = Lines(single / "pendulum.csv");
  ASSERT_GE(rows.size(), 2u);
  EXPECT_THAT(rows[1], HasSubstr("0,0.6,-0.8,0.4,0.3"));
  // The same start from an ensemble file, and one off the circle.
  Write(dir / "e.csv",
        "q0_x,q0_y,v0_x,v0_y,t_end\n0.6,-0.8,0.4,0.3,0.3\n"
        "0.7,-0.8,0,0,0.3\n");
  const fs::path out = dir / "out";
  ASSERT_EQ(RunCli({"--ensemble", (dir / "e.csv").string(), "--output-dir",
                    out.string(), "--quiet"}),
            0);
  const json t = ReadJson(out / "pendulum.ensemble.json");
  ASSERT_EQ(t["rows"].size(), 2u);
  EXPECT_EQ(t["rows"][0]["final"]["q"], s["final"]["q"]);
  EXPECT_EQ(t["rows"][0]["final"]["v"], s["final"]["v"]);
  const json m1 =
      ReadJson(out / t["rows"][1]["dir"].get<std::string>() / "pendulum.json");
  EXPECT_GT(m1["initial_correction"]["position"].get<double>(), 0.05);
  // The projected start lies on the circle of radius l = 1.
  const std::vector<std::string> r1 =
      Lines(out / t["rows"][1]["dir"].get<std::string>() / "pendulum.csv");
  ASSERT_GE(r1.size(), 2u);
  std::stringstream first(r1[1]);
  std::vector<double> f;
  for (std::string c; std::getline(first, c, ',');) f.push_back(std::stod(c));
  ASSERT_GE(f.size(), 3u);
  EXPECT_NEAR(std::hypot(f[1], f[2]), 1.0, 1e-12);
  // Unknown coordinates: a usage error naming the coordinates.
  std::string err;
  EXPECT_EQ(
      RunCli({"--q0", "z=1", "--output-dir", (dir / "bad").string()}, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown coordinate 'z'; the coordinates are "
                             "x, y"));
  Write(dir / "bad.csv", "q0_z\n1\n");
  EXPECT_EQ(RunCli({"--ensemble", (dir / "bad.csv").string(), "--output-dir",
                    (dir / "bad").string()},
                   &err),
            2);
  EXPECT_THAT(err, HasSubstr("unknown column 'q0_z'"));
  EXPECT_THAT(err, HasSubstr("(q0_<coordinate>: q0_x, ...; v0_<velocity>: "
                             "v0_x, ...)"));
}

// Started by mpirun as 2 processes (imitated by the launcher's
// environment) without an MPI transport, each process would run the whole
// ensemble, so it refuses before writing anything. Without MPI in the
// build it says so; with MPI the transport is the module
// libdaedalus_mpi.so (src/cli/ensemble_mpi.cpp), pointed here at a file
// that does not exist: the message names it and the fix.
TEST(Ensemble, WithoutMpiUnderAnMpiLauncherItRefusesWithAMessage) {
  const fs::path dir = FreshDir("no_mpi");
  Write(dir / "e.csv", "m\n1\n");
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("DAEDALUS_MPI_MODULE", "/nonexistent/libdaedalus_mpi.so", 1);
  std::string err;
  const int rc = RunCli({"--ensemble", (dir / "e.csv").string(), "--output-dir",
                         (dir / "out").string()},
                        &err);
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("DAEDALUS_MPI_MODULE");
  EXPECT_EQ(rc, 2);
#ifdef DAEDALUS_TEST_MPI_MODULE
  EXPECT_THAT(err, HasSubstr("cannot start MPI: The MPI transport of "
                             "ensembles is in the module libdaedalus_mpi.so"));
  EXPECT_THAT(err, HasSubstr("/nonexistent/libdaedalus_mpi.so: "));
  EXPECT_THAT(err, HasSubstr("or set DAEDALUS_MPI_MODULE to its path"));
#else
  EXPECT_THAT(err, HasSubstr("built without MPI"));
  EXPECT_THAT(err, HasSubstr("run it without mpirun"));
#endif
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Ensemble, MonteCarloDrawsDependOnlyOnSeedAndMember) {
  const fs::path dir = FreshDir("mc");
  const std::vector<std::string> common = {"--monte-carlo", "3",
                                           "--seed",        "7",
                                           "--dist",        "m=normal:1,0.1",
                                           "--dist",        "l=uniform:0.5,1.5",
                                           "--t-end",       "0.2",
                                           "--quiet"};
  std::vector<std::string> a = common, b = common;
  a.insert(a.end(), {"--output-dir", (dir / "a").string()});
  b.insert(b.end(), {"--output-dir", (dir / "b").string()});
  ASSERT_EQ(RunCli(a), 0);
  ASSERT_EQ(RunCli(b), 0);
  const json ta = ReadJson(dir / "a" / "pendulum.ensemble.json");
  const json tb = ReadJson(dir / "b" / "pendulum.ensemble.json");
  ASSERT_EQ(ta["rows"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ta["rows"][i]["inputs"], tb["rows"][i]["inputs"]);
    EXPECT_EQ(ta["rows"][i]["final"], tb["rows"][i]["final"]);
  }
  EXPECT_NE(ta["rows"][0]["inputs"], ta["rows"][1]["inputs"]);
  // Member 2 again as a single run with its drawn values, exactly.
  const json& r2 = ta["rows"][2];
  const std::string m = r2["inputs"][0][1], l = r2["inputs"][1][1];
  ASSERT_EQ(RunCli({"--param", "m=" + m, "--param", "l=" + l, "--t-end", "0.2",
                    "--output-dir", (dir / "single").string(), "--quiet"}),
            0);
  EXPECT_EQ(ReadJson(dir / "single" / "pendulum.json")["final"]["q"],
            r2["final"]["q"]);
  // A larger draw that does not run: same values from a 4-member draw
  // (member i's draws do not depend on how many are drawn), and the
  // sample moments near the distribution's (mean 1, sd 0.1; uniform mean
  // 1 and variance 1/12).
  const Model model = problems::PendulumProblem().model;
  std::vector<internal::Distribution> dists = {
      internal::ParseDistribution(model, "m=normal:1,0.1"),
      internal::ParseDistribution(model, "l=uniform:0.5,1.5")};
  const auto few = internal::DrawMembers(model, 4, 7, dists);
  EXPECT_EQ(few[2].inputs[0].second, m);
  EXPECT_EQ(few[2].inputs[1].second, l);
  const int n = 20000;
  const auto many = internal::DrawMembers(model, n, 11, dists);
  double sm = 0, sm2 = 0, sl = 0, sl2 = 0;
  for (const auto& mem : many) {
    const double x = std::stod(mem.inputs[0].second);
    const double y = std::stod(mem.inputs[1].second);
    sm += x, sm2 += x * x, sl += y, sl2 += y * y;
  }
  const double mean_m = sm / n, var_m = sm2 / n - mean_m * mean_m;
  const double mean_l = sl / n, var_l = sl2 / n - mean_l * mean_l;
  // 5 standard errors: 0.1/sqrt(n) for the mean, ~sd^2 sqrt(2/n) for the
  // variance.
  EXPECT_NEAR(mean_m, 1.0, 5 * 0.1 / std::sqrt(n));
  EXPECT_NEAR(var_m, 0.01, 5 * 0.01 * std::sqrt(2.0 / n));
  EXPECT_NEAR(mean_l, 1.0, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var_l, 1.0 / 12, 5 * 0.0745 / std::sqrt(n));
}

// A batch for an optimizer: the adjoint gradient of the slider-crank's
// functional G against central differences of its value from the same
// batch, and a member outside its parameter range failing alone.
TEST(Ensemble, ABatchGivesValuesAndAdjointGradients) {
  const Problem problem = problems::SliderCrankProblem();
  SimulationOptions o = problem.defaults;
  o.t_end = 1.0;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.formulation = Formulation::kBaumgarte;
  o.integrator = Integrator::kCvodesBdf;
  o.sensitivity.method = SensMethod::kAdjoint;
  o.sensitivity.functional = "G";
  o.sensitivity.parameters = {"k", "c"};
  const Model& m = problem.model;
  const int k = m.ParameterIndex("k"), c = m.ParameterIndex("c");
  const Eigen::VectorXd p = m.default_parameters();
  const double h = 1e-4;
  std::vector<Eigen::VectorXd> batch(6, p);
  batch[1][k] += h, batch[2][k] -= h, batch[3][c] += h, batch[4][c] -= h;
  batch[5][k] = -1.0;  // outside its range
  const std::vector<BatchResult> r = EvaluateBatch(problem, batch, o);
  ASSERT_EQ(r.size(), 6u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(r[i].ok) << i << ": " << r[i].error;
  ASSERT_EQ(r[0].gradient.size(), 2);
  EXPECT_NEAR(r[0].gradient[0], (r[1].value - r[2].value) / (2 * h),
              1e-5 * (1 + std::abs(r[0].gradient[0])));
  EXPECT_NEAR(r[0].gradient[1], (r[3].value - r[4].value) / (2 * h),
              1e-5 * (1 + std::abs(r[0].gradient[1])));
  EXPECT_FALSE(r[5].ok);
  EXPECT_THAT(r[5].error, HasSubstr("'k'"));
  o.sensitivity.method = SensMethod::kNone;
  EXPECT_THROW(EvaluateBatch(problem, batch, o), std::invalid_argument);
}

}  // namespace ensemble_test
}  // namespace
}  // namespace daedalus
