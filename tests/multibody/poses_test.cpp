// Body poses and marker trajectories as a file beside the CSV
// (include/daedalus/multibody_output.hpp, docs/output.md "Files beside the
// CSV"): four_bar_mb's poses against the closed-form forward kinematics of
// four_bar at every sample, the loop closure's two points, the heavy top's
// against its Euler angles, and the momenta file of a run.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/multibody_output.hpp"
#include "daedalus/run.hpp"
#include "four_bar_mb.hpp"
#include "heavy_top.hpp"

namespace daedalus {
namespace {
namespace poses_test {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("daedalus_poses_test_" + name);
  fs::remove_all(d);
  return d;
}

int RunProblem(const Problem& problem, std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string prog = "problem";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  return run(problem, static_cast<int>(argv.size()), argv.data());
}

// A CSV as columns by name (every cell a number).
struct Table {
  std::vector<std::string> header;
  std::map<std::string, std::vector<double>> col;
  size_t rows = 0;
  const std::vector<double>& operator[](const std::string& name) const {
    const auto it = col.find(name);
    if (it == col.end()) throw std::runtime_error("no column " + name);
    return it->second;
  }
};
Table ReadCsv(const fs::path& path) {
  Table t;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line, cell;
  std::getline(in, line);
  std::stringstream hs(line);
  while (std::getline(hs, cell, ',')) t.header.push_back(cell);
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    size_t k = 0;
    while (std::getline(ls, cell, ',')) {
      EXPECT_LT(k, t.header.size());
      if (k < t.header.size()) t.col[t.header[k]].push_back(std::stod(cell));
      ++k;
    }
    EXPECT_EQ(k, t.header.size()) << "row " << t.rows;
    ++t.rows;
  }
  return t;
}

// The rotation of a (w, x, y, z) quaternion column group.
Eigen::Matrix3d Rotation(const Table& t, const std::string& f, size_t r) {
  const Eigen::Quaterniond q(t[f + ".qw"][r], t[f + ".qx"][r], t[f + ".qy"][r],
                             t[f + ".qz"][r]);
  EXPECT_NEAR(q.norm(), 1.0, 1e-15);
  return q.toRotationMatrix();
}
Eigen::Vector3d Position(const Table& t, const std::string& f, size_t r) {
  return Eigen::Vector3d(t[f + ".x"][r], t[f + ".y"][r], t[f + ".z"][r]);
}
Eigen::Matrix3d Rz(double a) {
  return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()).toRotationMatrix();
}
Eigen::Matrix3d Rx(double a) {
  return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()).toRotationMatrix();
}

TEST(Poses, QuaternionOfRotations) {
  for (double a : {0.0, 0.3, M_PI / 2, 3.0, M_PI, -2.5}) {
    const Eigen::Matrix3d R = Rz(a) * Rx(0.7 * a) * Rz(-1.3 * a);
    const Eigen::Vector4d q = mb::QuaternionOf(R);
    EXPECT_GE(q[0], 0.0);
    const Eigen::Quaterniond e(q[0], q[1], q[2], q[3]);
    EXPECT_LT((e.toRotationMatrix() - R).cwiseAbs().maxCoeff(), 1e-15);
  }
}

// four_bar_mb's default run (1 s): every frame's pose at every sample is
// four_bar's closed-form forward kinematics at the CSV's angles, a bar at
// angle th pointing along e(th) = (sin th, -cos th): crank tip l1 e(th1),
// coupler tip l1 e(th1) + l2 e(th2), rocker tip (l0, 0) + l3 e(th3), each
// body rotated by its angle about z. The pose file's q is the CSV's
// (both written to round trip), so the agreement is round-off: 1e-15 m on
// lengths of order 1 (2e-15, about 8 ulps of the largest coordinate). The loop
// closure's two points coincide to the run's position drift (drift_position,
// the max |Phi|).
TEST(Poses, FourBarPosesAreTheClosedFormKinematics) {
  const fs::path dir = TempDir("four_bar");
  ASSERT_EQ(
      RunProblem(problems::FourBarMbProblem(),
                 {"--t-end", "1", "--output-dir", dir.string(), "--quiet"}),
      0);
  const Table run = ReadCsv(dir / "four_bar_mb.csv");
  const Table poses = ReadCsv(dir / "four_bar_mb.poses.csv");
  ASSERT_EQ(poses.rows, run.rows);
  ASSERT_EQ(poses.rows, 101u);
  const std::vector<std::string> frames = {
      "ground",       "crank",     "coupler",     "rocker",
      "rocker_pivot", "crank_tip", "coupler_tip", "rocker_tip"};
  ASSERT_EQ(poses.header.size(), 1 + 7 * frames.size());
  for (size_t f = 0; f < frames.size(); ++f)
    EXPECT_EQ(poses.header[1 + 7 * f], frames[f] + ".x");
  const double l0 = 1.0, l1 = 0.4, l2 = 1.0, l3 = 0.8;  // the defaults
  auto e = [](double th) {
    return Eigen::Vector3d(std::sin(th), -std::cos(th), 0.0);
  };
  double worst = 0.0, worst_loop = 0.0;
  for (size_t r = 0; r < run.rows; ++r) {
    EXPECT_EQ(poses["t"][r], run["t"][r]);
    const double th1 = run["theta1"][r], th2 = run["theta2"][r],
                 th3 = run["theta3"][r];
    const Eigen::Vector3d pivot_c(l0, 0.0, 0.0);
    const std::map<std::string, std::pair<Eigen::Vector3d, double>> expect = {
        {"ground", {Eigen::Vector3d::Zero(), 0.0}},
        {"crank", {Eigen::Vector3d::Zero(), th1}},
        {"coupler", {l1 * e(th1), th2}},
        {"rocker", {pivot_c, th3}},
        {"rocker_pivot", {pivot_c, 0.0}},
        {"crank_tip", {l1 * e(th1), th1}},
        {"coupler_tip", {l1 * e(th1) + l2 * e(th2), th2}},
        {"rocker_tip", {pivot_c + l3 * e(th3), th3}}};
    for (const auto& [name, pose] : expect) {
      const double dp = (Position(poses, name, r) - pose.first).norm();
      const double dr =
          (Rotation(poses, name, r) - Rz(pose.second)).cwiseAbs().maxCoeff();
      worst = std::max({worst, dp, dr});
      EXPECT_LT(dp, 2e-15) << name << " at t = " << run["t"][r];
      EXPECT_LT(dr, 2e-15) << name << " at t = " << run["t"][r];
    }
    const double loop =
        (Position(poses, "coupler_tip", r) - Position(poses, "rocker_tip", r))
            .cwiseAbs()
            .maxCoeff();
    worst_loop = std::max(worst_loop, loop);
    EXPECT_LE(loop, run["drift_position"][r] + 1e-15);
  }
  EXPECT_LT(worst_loop, 1e-8);
  std::printf(
      "four_bar_mb poses vs closed form: %.1e; loop points apart "
      "by at most %.1e m\n",
      worst, worst_loop);
  // The summary lists the file and describes the mechanism.
  std::ifstream js(dir / "four_bar_mb.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  ASSERT_EQ(j["side_files"].size(), 1u);
  const nlohmann::json& side = j["side_files"][0];
  EXPECT_EQ(side["file"], "four_bar_mb.poses.csv");
  EXPECT_EQ(side["kind"], "poses");
  EXPECT_EQ(side["dimension"], "planar");
  EXPECT_EQ(side["frames"].size(), frames.size());
  EXPECT_EQ(side["bodies"][1]["name"], "crank");
  EXPECT_EQ(side["bodies"][1]["frames"],
            (std::vector<std::string>{"crank", "crank_tip"}));
  EXPECT_EQ(side["joints"][1]["name"], "coupler");
  EXPECT_EQ(side["joints"][1]["parent"], "crank_tip");
  EXPECT_EQ(side["joints"][1]["child"], "coupler");
  EXPECT_FALSE(fs::exists(dir / "four_bar_mb.poses.csv.partial"));
}

// The heavy top: R_WT = Rz(psi) Rx(theta) Rz(phi) and the centre of mass
// at l (sin psi sin theta, -cos psi sin theta, cos theta), to round-off
// (2e-15 on rotation entries, 2e-16 m on l = 0.1 m);
// the quaternion columns are continuous (the top spins at 60 rad/s, so a
// sign fixed by w >= 0 would flip every 0.1 s); the momenta file's p_psi
// and p_phi are dL/dv in closed form and constant to the integration
// error. Started with --v0 psi=0, so the top nutates.
TEST(Poses, HeavyTopPosesAndMomentaFiles) {
  const fs::path dir = TempDir("heavy_top");
  ASSERT_EQ(RunProblem(problems::HeavyTopProblem(),
                       {"--t-end", "1", "--v0", "psi=0", "--output-dir",
                        dir.string(), "--quiet"}),
            0);
  const Table run = ReadCsv(dir / "heavy_top.csv");
  const Table poses = ReadCsv(dir / "heavy_top.poses.csv");
  const Table mom = ReadCsv(dir / "heavy_top.momenta.csv");
  ASSERT_EQ(poses.rows, run.rows);
  ASSERT_EQ(mom.rows, run.rows);
  EXPECT_EQ(mom.header,
            (std::vector<std::string>{"t", "p_psi", "p_theta", "p_phi"}));
  const double l = 0.1, I1 = 0.008, I3 = 0.004;  // the defaults
  double worst = 0.0;
  for (size_t r = 0; r < run.rows; ++r) {
    const double psi = run["psi"][r], th = run["theta"][r], phi = run["phi"][r];
    const Eigen::Matrix3d R = Rz(psi) * Rx(th) * Rz(phi);
    const double dr = (Rotation(poses, "top", r) - R).cwiseAbs().maxCoeff();
    EXPECT_LT(dr, 2e-15);
    const Eigen::Vector3d com(l * std::sin(psi) * std::sin(th),
                              -l * std::cos(psi) * std::sin(th),
                              l * std::cos(th));
    const double dc = (Position(poses, "com", r) - com).norm();
    EXPECT_LT(dc, 2e-16);
    worst = std::max({worst, dr, dc / l});
    EXPECT_EQ(Position(poses, "top", r).norm(), 0.0);  // the tip
    if (r > 0) {
      double dot = 0.0;
      for (const char* c : {".qw", ".qx", ".qy", ".qz"})
        dot += poses[std::string("top") + c][r] *
               poses[std::string("top") + c][r - 1];
      EXPECT_GT(dot, 0.0) << "quaternion sign flips at row " << r;
    }
    // p = dL/dv in closed form at the CSV's state (round-off), and
    // constant along the run (the integration error, as in
    // heavy_top_test.cpp: 1e-9 relative at the default rtol = 1e-10).
    const double psid = run["v_psi"][r], phid = run["v_phi"][r];
    const double c = std::cos(th), sn = std::sin(th);
    const double p_psi = (I1 * sn * sn + I3 * c * c) * psid + I3 * c * phid;
    const double p_phi = I3 * (psid * c + phid);
    const double scale = std::abs(mom["p_phi"][0]);
    EXPECT_NEAR(mom["p_psi"][r], p_psi, 1e-14 * scale);
    EXPECT_NEAR(mom["p_phi"][r], p_phi, 1e-14 * scale);
    EXPECT_NEAR(mom["p_psi"][r], mom["p_psi"][0], 1e-9 * scale);
    EXPECT_NEAR(mom["p_phi"][r], mom["p_phi"][0], 1e-9 * scale);
  }
  std::printf("heavy_top poses vs Euler angles: %.1e\n", worst);
  std::ifstream js(dir / "heavy_top.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  ASSERT_EQ(j["side_files"].size(), 2u);
  EXPECT_EQ(j["side_files"][0]["dimension"], "spatial");
  EXPECT_EQ(j["side_files"][1]["file"], "heavy_top.momenta.csv");
}

// A run that fails before its first sample leaves the side files with
// their header only, as the CSV (docs/output.md), and no partial file.
TEST(Poses, FailedStartLeavesHeaderOnly) {
  const fs::path dir = TempDir("failed");
  EXPECT_EQ(RunProblem(
                problems::HeavyTopProblem(),
                {"--param", "spin=1", "--output-dir", dir.string(), "--quiet"}),
            1);
  for (const char* f :
       {"heavy_top.csv", "heavy_top.poses.csv", "heavy_top.momenta.csv"}) {
    const Table t = ReadCsv(dir / f);
    EXPECT_EQ(t.rows, 0u) << f;
    EXPECT_EQ(t.header[0], "t") << f;
  }
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".partial"), std::string::npos)
        << entry.path();
}

}  // namespace poses_test
}  // namespace
}  // namespace daedalus
