// MJCF import (include/daedalus/mjcf.hpp) against MuJoCo's own numbers:
// the mass matrix and the bias and passive forces that MuJoCo 2.2.2
// computes for the same files at the same states (mj_fullM, qfrc_bias,
// qfrc_passive after mj_forward), recorded by bench/mjcf_reference.cpp in
// tests/multibody/data/mujoco_reference*.json (bench/mjcf_reference.sh).
// Daedalus's h = c + dV/dq + D v is MuJoCo's qfrc_bias - qfrc_passive, its
// M MuJoCo's (armature included), with q = qpos and v = qvel exactly
// (docs/models.md, "Coordinates"). Models: Debian's libmujoco-samples
// (humanoid.xml, slider_crank.xml without its position actuators,
// humanoid100.xml), the project's MJCF twins of its URDF robots and the
// importer's test models (every joint, orientation, inertia and default).
#include "daedalus/mjcf.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/urdf.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace mjcf_test {

using ::testing::HasSubstr;

const std::string kSource = DAEDALUS_SOURCE_DIR;
const std::string kData = kSource + "/tests/multibody/data/";
// Debian's libmujoco-samples (scripts/setup installs it).
const std::string kSamples = "/usr/share/mujoco/model/";

// MuJoCo and Daedalus sum the same terms in different orders; 1e-12 of the
// largest entry leaves room for a few hundred roundings.
constexpr double kAgree = 1e-12;

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  EXPECT_GT(scale, 0.0) << "the reference is all zero";
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

Eigen::VectorXd Vector(const nlohmann::json& j) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(j.size()));
  for (size_t i = 0; i < j.size(); ++i)
    v[static_cast<Eigen::Index>(i)] = j[i].get<double>();
  return v;
}

nlohmann::json Reference(const std::string& file, const std::string& label) {
  std::ifstream in(kData + file);
  EXPECT_TRUE(in.good()) << "cannot read " << kData + file;
  const nlohmann::json all = nlohmann::json::parse(in);
  for (const auto& m : all["models"])
    if (m["label"] == label) return m;
  ADD_FAILURE() << "no model '" << label << "' in " << file;
  return {};
}

struct Agreement {
  double m = 0.0, h = 0.0;
};

// Imports `path`, checks that its joints are MuJoCo's (names, types and
// qpos/qvel addresses), and compares M and h with the reference at every
// recorded state; the largest relative differences.
Agreement Compare(const std::string& path,
                  const nlohmann::json& ref,
                  mb::DynamicsForm form,
                  bool skip_actuators = false) {
  ModelBuilder b("mjcf");
  mjcf::ImportOptions options;
  options.dynamics = form;
  options.skip_unsupported_actuators = skip_actuators;
  const mjcf::Model imported = mjcf::Import(path, &b, options);
  const Model model = std::move(b).Build();
  EXPECT_EQ(model.nq(), ref["nq"].get<int>()) << path;
  EXPECT_EQ(model.nv(), ref["nv"].get<int>()) << path;
  const auto& joints = ref["joints"];
  EXPECT_EQ(imported.joints.size(), joints.size()) << path;
  for (size_t i = 0; i < joints.size() && i < imported.joints.size(); ++i) {
    const mjcf::MjcfJoint& j = imported.joints[i];
    if (!joints[i]["name"].get<std::string>().empty()) {
      EXPECT_EQ(j.name, joints[i]["name"].get<std::string>());
    }
    EXPECT_EQ(j.type, joints[i]["type"].get<std::string>()) << j.name;
    EXPECT_EQ(j.qpos, joints[i]["qpos"].get<int>()) << j.name;
    EXPECT_EQ(j.qvel, joints[i]["qvel"].get<int>()) << j.name;
  }
  EXPECT_TRUE(imported.gravity.isApprox(Vector(ref["gravity"]), 1e-15));
  Workspace ws(model);
  ws.use_compiled = false;
  ws.SetParameters(model.default_parameters());
  Agreement worst;
  for (const auto& s : ref["states"]) {
    ws.SetState(0.0, Vector(s["qpos"]), Vector(s["qvel"]));
    EvaluateAll(&ws);
    const Eigen::VectorXd h_ref = Vector(s["bias"]) - Vector(s["passive"]);
    if (s.contains("M")) {
      const int nv = model.nv();
      const Eigen::VectorXd flat = Vector(s["M"]);
      const Eigen::MatrixXd m_ref =
          Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic,
                                         Eigen::RowMajor>>(flat.data(), nv, nv);
      worst.m = std::max(worst.m, RelDiff(ws.M, m_ref));
    } else {
      worst.m =
          std::max(worst.m, RelDiff(ws.M.diagonal(), Vector(s["M_diag"])));
    }
    worst.h = std::max(worst.h, RelDiff(ws.h, h_ref));
  }
  return worst;
}

void ExpectAgrees(const std::string& label,
                  const std::string& path,
                  mb::DynamicsForm form,
                  bool skip_actuators = false,
                  const std::string& file = "mujoco_reference.json") {
  const nlohmann::json ref = Reference(file, label);
  ASSERT_FALSE(ref.is_null());
  const Agreement a = Compare(path, ref, form, skip_actuators);
  std::printf(
      "%s (%s form): largest relative difference from MuJoCo, M %.1e, "
      "h %.1e\n",
      label.c_str(), mb::ToString(form), a.m, a.h);
  EXPECT_LT(a.m, kAgree) << label;
  EXPECT_LT(a.h, kAgree) << label;
}

TEST(Mjcf, HumanoidAgreesWithMuJoCo) {
  ExpectAgrees("humanoid", kSamples + "humanoid/humanoid.xml",
               mb::DynamicsForm::kRecursive);
}

TEST(Mjcf, HumanoidEnergyFormAgreesWithMuJoCo) {
  ExpectAgrees("humanoid", kSamples + "humanoid/humanoid.xml",
               mb::DynamicsForm::kEnergy);
}

TEST(Mjcf, FeatureModelsAgreeWithMuJoCo) {
  for (const auto form :
       {mb::DynamicsForm::kRecursive, mb::DynamicsForm::kEnergy}) {
    ExpectAgrees("features", kData + "mjcf/features.xml", form);
    ExpectAgrees("features_radian", kData + "mjcf/features_radian.xml", form);
  }
}

TEST(Mjcf, TwinsAgreeWithMuJoCo) {
  ExpectAgrees("arm7", kSource + "/problems/data/arm7.xml",
               mb::DynamicsForm::kEnergy);
  ExpectAgrees("humanoid_twin", kSource + "/problems/data/humanoid.xml",
               mb::DynamicsForm::kRecursive);
}

// slider_crank.xml drives its hinges through position servos with
// slider-crank transmissions, which are refused; without them the three
// damped hinges are MuJoCo's.
TEST(Mjcf, SliderCrankWithoutItsActuatorsAgreesWithMuJoCo) {
  ExpectAgrees("slider_crank", kSamples + "slider_crank/slider_crank.xml",
               mb::DynamicsForm::kEnergy, /*skip_actuators=*/true);
}

TEST(Mjcf, Humanoid100AgreesWithMuJoCo) {
  ExpectAgrees("humanoid100", kSamples + "humanoid100/humanoid100.xml",
               mb::DynamicsForm::kRecursive, false,
               "mujoco_reference_humanoid100.json");
}

// 0.3 s of motion from a recorded state against MuJoCo's RK4 at 1e-5 s
// (30 000 steps; bench/mjcf_reference.cpp, contacts, limits and equalities
// off as in the import): CVODES Adams at rtol = atol = 1e-12. The humanoid
// spins (its free joint at 2 rad/s) with every hinge moving; the arm
// swings under gravity. RK4's global error at this step is below 1e-13;
// the difference is Daedalus's integration error, a few hundred times the
// tolerance over the run.
TEST(Mjcf, TrajectoriesAgreeWithMuJoCoRk4) {
  for (const auto& [label, path, form] :
       {std::tuple{"humanoid", kSamples + "humanoid/humanoid.xml",
                   mb::DynamicsForm::kRecursive},
        std::tuple{"arm7", kSource + "/problems/data/arm7.xml",
                   mb::DynamicsForm::kRecursive}}) {
    const nlohmann::json ref = Reference("mujoco_reference.json", label);
    const auto& traj = ref["trajectory"];
    ModelBuilder b("mjcf");
    mjcf::ImportOptions options;
    options.dynamics = form;
    mjcf::Import(path, &b, options);
    // Limits off, as in the reference (and its recorded start may lie
    // outside a range).
    const Model model = WithoutJointLimits(std::move(b).Build());
    SimulationOptions o;
    o.integrator = Integrator::kCvodesAdams;
    o.rtol = o.atol = 1e-12;
    o.t_end = traj["t_end"].get<double>();
    o.output_step = o.t_end;
    const Eigen::VectorXd q0 = Vector(traj["qpos0"]),
                          v0 = Vector(traj["qvel0"]);
    const SimulationSummary s =
        Simulate(model, InitialState{q0, v0}, model.default_parameters(), o);
    ASSERT_TRUE(s.ok) << s.error;
    Eigen::VectorXd q = s.final.q;
    for (const auto& quat : model.quaternions())
      q.segment<4>(quat.q).normalize();
    const Eigen::VectorXd q_ref = Vector(traj["qpos"]);
    const Eigen::VectorXd v_ref = Vector(traj["qvel"]);
    const double dq = (q - q_ref).cwiseAbs().maxCoeff();
    const double dv = (s.final.v - v_ref).cwiseAbs().maxCoeff();
    std::printf(
        "%s: after %.1f s, |q - q_MuJoCo| %.1e (of %.2f moved), "
        "|v - v_MuJoCo| %.1e\n",
        label, o.t_end, dq, (q_ref - q0).cwiseAbs().maxCoeff(), dv);
    ASSERT_GT((q_ref - q0).cwiseAbs().maxCoeff(), 0.1);  // it moved
    EXPECT_LT(dq, 1e-8) << label;
    EXPECT_LT(dv, 1e-8) << label;
  }
}

// The bodies' masses and centres of mass against MuJoCo's compiled ones
// (inertia from geoms: MuJoCo's volumes, densities, fromto), and the
// inertia tensors against MuJoCo's principal moments and axes.
TEST(Mjcf, BodyInertiasAreMuJoCos) {
  for (const char* label : {"features", "features_radian", "humanoid"}) {
    const nlohmann::json ref = Reference("mujoco_reference.json", label);
    const std::string path = std::string(label) == "humanoid"
                                 ? kSamples + "humanoid/humanoid.xml"
                                 : kData + "mjcf/" + label + ".xml";
    ModelBuilder b("mjcf");
    const mjcf::Model m = mjcf::Import(path, &b);
    const auto& tree = m.kinematics.tree();
    for (const auto& body : ref["bodies"]) {
      const std::string name = body["name"];
      int found = -1;
      for (size_t i = 0; i < tree.bodies.size(); ++i)
        if (tree.bodies[i].name == name) found = static_cast<int>(i);
      ASSERT_GE(found, 0) << label << ": no body " << name;
      const mb::BodySpec& s = tree.bodies[static_cast<size_t>(found)].spec;
      const Eigen::VectorXd p = Eigen::VectorXd::Zero(0);
      const double mass = body["mass"].get<double>();
      EXPECT_NEAR(s.mass.Value(p), mass, 1e-14 * mass) << name;
      const Eigen::Vector3d com(s.com.x.Value(p), s.com.y.Value(p),
                                s.com.z.Value(p));
      EXPECT_LT((com - Vector(body["ipos"])).norm(), 1e-14) << name;
      Eigen::Matrix3d I;
      I << s.ixx.Value(p), s.ixy.Value(p), s.ixz.Value(p), s.ixy.Value(p),
          s.iyy.Value(p), s.iyz.Value(p), s.ixz.Value(p), s.iyz.Value(p),
          s.izz.Value(p);
      const Eigen::Vector4d q = Vector(body["iquat"]);
      const Eigen::Matrix3d r =
          Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
      const Eigen::Matrix3d mujoco =
          r * Vector(body["inertia"]).asDiagonal() * r.transpose();
      EXPECT_LT(RelDiff(I, mujoco), 1e-12) << label << ": body " << name;
    }
  }
}

}  // namespace mjcf_test
}  // namespace
}  // namespace daedalus
