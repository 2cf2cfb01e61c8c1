// --inverse-dynamics on the common command line: seed 003's holding load
// from a CSV, the round trip through a forward run of the golf swing, and
// motion files that cannot be used.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daedalus/analysis.hpp"
#include "daedalus/inverse_dynamics.hpp"
#include "daedalus/run.hpp"
#include "golf_swing.hpp"
#include "rod_pair.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace inverse_dynamics_cli_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

int RunMain(const Problem& problem, std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string prog = "id_test";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  return run(problem, static_cast<int>(argv.size()), argv.data());
}

fs::path TempDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("daedalus_id_cli_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

nlohmann::json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// A CSV as columns by name.
struct Table {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  std::vector<double> Column(const std::string& name) const {
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    std::vector<double> c;
    if (it == names.end()) return c;
    const size_t k = static_cast<size_t>(it - names.begin());
    for (const auto& r : rows) c.push_back(r[k]);
    return c;
  }
};

Table ReadCsv(const fs::path& p) {
  std::ifstream in(p);
  Table t;
  std::string line, cell;
  std::getline(in, line);
  std::stringstream hs(line);
  while (std::getline(hs, cell, ',')) t.names.push_back(cell);
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::vector<double> r;
    while (std::getline(ls, cell, ',')) r.push_back(std::stod(cell));
    t.rows.push_back(r);
  }
  return t;
}

Problem CoupledProblem() {
  Problem p;
  p.model = testing::SeedCoupled(4.0);
  p.initial = [](const Eigen::VectorXd&) {
    return InitialState{Eigen::Vector2d(0.2, -0.1), Eigen::Vector2d::Zero()};
  };
  return p;
}

// Seed 003's holding load from a file of positions only: u = 0.6 N m on
// the first coordinate, -0.5 N m unexplained on the second, in the CSV and
// the JSON summary.
TEST(InverseDynamicsCli, SeedHoldingLoadFromAFile) {
  const fs::path dir = TempDir("holding");
  {
    std::ofstream m(dir / "held.csv");
    m << "t,z1,z2\n";
    for (int i = 0; i <= 10; ++i) m << 0.1 * i << ",0.2,-0.1\n";
  }
  ASSERT_EQ(RunMain(CoupledProblem(),
                    {"--inverse-dynamics", (dir / "held.csv").string(),
                     "--output-dir", dir.string(), "--quiet"}),
            0);
  const nlohmann::json j =
      ReadJson(dir / "seed003_coupled.inverse_dynamics.json");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["analysis"], "inverse_dynamics");
  EXPECT_EQ(j["actuation"]["classification"], "under-actuated");
  EXPECT_NEAR(j["residual"]["max_norm"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(j["residual"]["max_per_coordinate"]["z2"].get<double>(), 0.5,
              1e-12);
  EXPECT_NEAR(j["input_max_abs"]["torque"].get<double>(), 0.6, 1e-12);
  EXPECT_EQ(j["motion"]["samples"], 11);
  EXPECT_EQ(j["motion"]["accelerations"], "differentiated positions");
  const Table t = ReadCsv(dir / "seed003_coupled.inverse_dynamics.csv");
  ASSERT_EQ(t.rows.size(), 11u);
  for (double u : t.Column("u_torque")) EXPECT_NEAR(u, 0.6, 1e-12);
  for (double r : t.Column("residual_z2")) EXPECT_NEAR(r, -0.5, 1e-12);
  for (double r : t.Column("residual_norm")) EXPECT_NEAR(r, 0.5, 1e-12);
}

// The round trip (issue 16): simulate the golf swing with its known wrist
// torque a(t) = u_wrist (1 - exp(-(t - t_on) / T_act)) after t_on, run the
// inverse dynamics on the CSV it wrote (positions and v_ columns), and
// recover the torque and the hand path's multiplier (the forward run's
// lambda_hand_path column).
//
// Tolerances from the differentiation error (docs/inverse_dynamics.md):
// the accelerations are the derivatives of degree-4 local interpolants of
// the velocity samples, O(h^4) where v is smooth. The torque has a kink at
// t_on (slope jump s = u_wrist / T_act = -667 N m/s), so v'' jumps there
// and the centred 5-point stencil on the kink errs by exactly h/6 times the
// jump of vdot' (its weights (1, -8, 0, 8, -1) / 12h applied to
// (t - t_on)_+^2 / 2); every quantity affine in vdot at the fixed state
// inherits h/6 times the jump of its own slope: the torque h s / 6, the
// multiplier h (dlambda/du) s / 6. The next term is O(h / T_act) = 3 % of
// that, hence 5 %. Elsewhere the error must fall by 2^4 = 16 when h halves
// (at least 12 asserted) and the integration error (rtol 1e-9) stays far
// below it (the same figures at rtol 1e-12).
TEST(InverseDynamicsCli, GolfSwingRoundTripRecoversTheWristTorque) {
  const Problem golf = problems::GolfSwingProblem();
  const Model& m = golf.model;
  const Eigen::VectorXd p = m.default_parameters();
  const double u_wrist = p[m.ParameterIndex("u_wrist")];
  const double t_on = p[m.ParameterIndex("t_on")];
  const double t_act = p[m.ParameterIndex("T_act")];
  const double slope = u_wrist / t_act;
  double far_u[2], far_lambda[2];
  int pass = 0;
  for (double h : {1e-3, 5e-4}) {
    const fs::path dir = TempDir("golf" + std::to_string(pass));
    std::ostringstream hs;
    hs << h;
    ASSERT_EQ(RunMain(golf, {"--output-step", hs.str(), "--output-dir",
                             dir.string(), "--quiet"}),
              0);
    ASSERT_EQ(
        RunMain(golf, {"--inverse-dynamics", (dir / "golf_swing.csv").string(),
                       "--output-dir", dir.string(), "--quiet"}),
        0);
    const Table fwd = ReadCsv(dir / "golf_swing.csv");
    const Table inv = ReadCsv(dir / "golf_swing.inverse_dynamics.csv");
    ASSERT_EQ(fwd.rows.size(), inv.rows.size());
    ASSERT_GT(fwd.rows.size(), 250u);  // to impact at t = 0.283 s
    const auto t = fwd.Column("t");
    const auto lambda_fwd = fwd.Column("lambda_hand_path");
    const auto u_inv = inv.Column("u_wrist");
    const auto lambda_inv = inv.Column("lambda_hand_path");
    far_u[pass] = far_lambda[pass] = 0.0;
    bool kink_seen = false;
    double lambda_u = 0.0, du_kink = 0.0, dl_kink = 0.0;
    for (size_t i = 0; i < t.size(); ++i) {
      const double u_true =
          t[i] <= t_on ? 0.0
                       : u_wrist * (1.0 - std::exp(-(t[i] - t_on) / t_act));
      const double du = u_inv[i] - u_true;
      const double dl = lambda_inv[i] - lambda_fwd[i];
      if (std::abs(t[i] - t_on) < 1e-12) {
        kink_seen = true;
        // dlambda/du at the kink's state, from the control-affine split.
        Eigen::VectorXd q(3), v(3);
        for (int j = 0; j < 3; ++j) {
          q[j] = fwd.Column(m.coordinate_names()[static_cast<size_t>(j)])[i];
          v[j] = fwd.Column("v_" +
                            m.coordinate_names()[static_cast<size_t>(j)])[i];
        }
        const ControlAffineSplit split =
            ComputeControlAffineSplit(m, p, t[i], q, v);
        lambda_u = split.input_multipliers(0, 0);
        du_kink = du;
        dl_kink = dl;
      } else if (std::abs(t[i] - t_on) <= 2.5 * h) {
        // Stencils that reach the kink: below the error on it.
        EXPECT_LE(std::abs(du), std::abs(h * slope / 6.0)) << "t " << t[i];
      } else {
        far_u[pass] = std::max(far_u[pass], std::abs(du));
        far_lambda[pass] = std::max(far_lambda[pass], std::abs(dl));
      }
    }
    ASSERT_TRUE(kink_seen);
    // On the kink: the closed form, plus the smooth part of the error (as
    // large as elsewhere: for the multiplier it is 5 % of the kink's at
    // h = 1e-3, as the arm's large accelerations enter it).
    ASSERT_GT(std::abs(lambda_u), 0.1);
    const double kink_u = h * slope / 6.0, kink_l = h * lambda_u * slope / 6.0;
    EXPECT_NEAR(du_kink, kink_u, 0.05 * std::abs(kink_u) + far_u[pass]);
    EXPECT_NEAR(dl_kink, kink_l, 0.05 * std::abs(kink_l) + far_lambda[pass]);
    const nlohmann::json j = ReadJson(dir / "golf_swing.inverse_dynamics.json");
    EXPECT_EQ(j["status"], "ok");
    EXPECT_EQ(j["actuation"]["classification"], "under-actuated");
    EXPECT_EQ(j["motion"]["velocities"], "given");
    // The unexplained force is on the shaft mode only: the arm's row is
    // the reaction's, the club's the wrist's.
    EXPECT_LE(j["residual"]["max_per_coordinate"]["theta_a"].get<double>(),
              1e-9);
    EXPECT_LE(j["residual"]["max_per_coordinate"]["theta_c"].get<double>(),
              1e-9);
    // Work: trapezoid over the samples against the forward run's
    // quadratures; O(h^2), about (T/12) h^2 max|P''| ~ 3e-5 relative here.
    const nlohmann::json jf = ReadJson(dir / "golf_swing.json");
    const double w_fwd = jf["work"]["inputs"]["wrist"].get<double>();
    const double c_fwd = jf["constraint_work"]["total"].get<double>();
    ASSERT_GT(std::abs(w_fwd), 10.0);
    EXPECT_NEAR(j["input_work"]["wrist"].get<double>(), w_fwd,
                1e-4 * std::abs(w_fwd));
    EXPECT_NEAR(j["constraint_work"]["hand_path"].get<double>(), c_fwd,
                1e-4 * std::abs(c_fwd));
    ++pass;
  }
  // Away from the kink: fourth order, and small (1.5e-4 N m of the 20 N m
  // torque at h = 1e-3 when measured).
  ASSERT_GT(far_u[1], 0.0);
  EXPECT_GE(far_u[0] / far_u[1], 12.0);
  EXPECT_GE(far_lambda[0] / far_lambda[1], 12.0);
  EXPECT_LE(far_u[0], 1e-5 * std::abs(u_wrist));
}

// A fully actuated constrained round trip from positions alone: seed 000's
// rods in maximal coordinates (6 coordinates, two pin joints = 4 rows, dof
// 2) with the constant motors u1 = 0.2, u2 = -0.1 N m. The v_ columns are
// dropped, so v and vdot are the first and second derivatives of the
// position samples: O(h^4) inside (centred 5-point stencils), O(h^3) at
// the two first and last samples. Fully actuated, the residual is zero to
// round-off; the errors fall by 16 inside and by 8 at the ends when h
// halves (at least 12 and 6 asserted). The forward run is at rtol 1e-12 so
// that its error, amplified by the second-difference weights (about 5
// / h^2), stays far below the truncation error.
TEST(InverseDynamicsCli, RodPairMaximalFromPositionsRecoversTheMotors) {
  const Problem rods = problems::RodPairMaximalProblem();
  const Model& m = rods.model;
  double inner_u[2], inner_l[2], end_u[2], end_l[2];
  int pass = 0;
  for (const char* h : {"0.01", "0.005"}) {
    const fs::path dir = TempDir(std::string("rods") + h);
    ASSERT_EQ(RunMain(rods, {"--t-end", "2", "--output-step", h, "--rtol",
                             "1e-12", "--atol", "1e-14", "--output-dir",
                             dir.string(), "--quiet"}),
              0);
    MotionSamples motion =
        ReadMotionCsv((dir / "rod_pair_maximal.csv").string(), m);
    ASSERT_GT(motion.v.size(), 0);
    motion.v = Eigen::MatrixXd();
    const InverseDynamicsResult r =
        InverseDynamics(m, m.default_parameters(), motion);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.actuation(), "fully actuated");
    EXPECT_EQ(r.dof, 2);
    EXPECT_EQ(r.accelerations_from, "differentiated positions");
    EXPECT_LE(r.residual_max, 1e-10);
    const Table fwd = ReadCsv(dir / "rod_pair_maximal.csv");
    inner_u[pass] = inner_l[pass] = end_u[pass] = end_l[pass] = 0.0;
    const size_t n = r.samples.size();
    ASSERT_GT(n, 100u);
    for (int row = 0; row < m.nc(); ++row) {
      const auto lambda = fwd.Column("lambda_" + m.RowName(row));
      for (size_t i = 0; i < n; ++i) {
        const auto& s = r.samples[i];
        const double du =
            std::max(std::abs(s.u[0] - 0.2), std::abs(s.u[1] + 0.1));
        const double dl = std::abs(s.lambda[row] - lambda[i]);
        const bool inside = i >= 2 && i + 2 < n;
        double& eu = inside ? inner_u[pass] : end_u[pass];
        double& el = inside ? inner_l[pass] : end_l[pass];
        eu = std::max(eu, du);
        el = std::max(el, dl);
      }
    }
    ++pass;
  }
  ASSERT_GT(inner_u[1], 0.0);
  ASSERT_GT(end_l[1], 0.0);
  EXPECT_GE(inner_u[0] / inner_u[1], 12.0);
  EXPECT_GE(inner_l[0] / inner_l[1], 12.0);
  EXPECT_GE(end_u[0] / end_u[1], 6.0);
  EXPECT_GE(end_l[0] / end_l[1], 6.0);
  // Measured at h = 5 ms: 1.8e-5 N m of the motors inside, 1.3e-4 at the
  // ends; the multipliers (up to 36 N) 1.0e-4 and 1.1e-2 N.
  EXPECT_LE(inner_u[1], 1e-4);
}

// Motion files that cannot be used: exit status 2, a message naming the
// columns or lines, and nothing written.
TEST(InverseDynamicsCli, BadMotionFilesAreUsageErrors) {
  const fs::path dir = TempDir("bad");
  std::ofstream(dir / "missing.csv") << "t,z1\n0,0\n";
  std::ofstream(dir / "back.csv")
      << "t,z1,z2\n0,0,0\n0.2,0,0\n0.1,0,0\n0.3,0,0\n0.4,0,0\n";
  std::ofstream(dir / "few.csv") << "t,z1,z2\n0,0,0\n0.1,0,0\n";
  for (const char* f : {"missing.csv", "back.csv", "few.csv", "absent.csv"}) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(RunMain(CoupledProblem(),
                      {"--inverse-dynamics", (dir / f).string(), "--output-dir",
                       (dir / "out").string(), "--quiet"}),
              2)
        << f;
    const std::string err = ::testing::internal::GetCapturedStderr();
    const std::string which = f;
    if (which == "missing.csv") {
      EXPECT_THAT(err, HasSubstr("missing column z2"));
    } else if (which == "back.csv") {
      EXPECT_THAT(err, HasSubstr("line 4 has t = 0.1 after t = 0.2 at line 3"));
    } else if (which == "few.csv") {
      EXPECT_THAT(err, HasSubstr("2 samples (line 2 to line 3)"));
    } else {
      EXPECT_THAT(err, HasSubstr("cannot read the motion file"));
    }
  }
  EXPECT_FALSE(fs::exists(dir / "out"));
  // Options of the analysis without it, and an unknown channel.
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain(CoupledProblem(), {"--id-degree", "3"}), 2);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("only with --inverse-dynamics"));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain(CoupledProblem(),
                    {"--inverse-dynamics", "x.csv", "--id-weights", "elbow=2"}),
            2);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("torque"));
}

}  // namespace inverse_dynamics_cli_test
}  // namespace
}  // namespace daedalus
