// Daedalus's recursive algorithms side by side with MuJoCo 2.2.2 (Debian's
// libmujoco-dev; a benchmark-only dependency) on the same models: the
// 7-joint arm (problems/data/arm7.urdf and its MJCF twin arm7.xml, written
// by bench/arm7_mjcf.py) and spatial chains of 10, 100 and 1000 links in
// joint coordinates (the chain of bench/recursive_bench.cpp, generated as
// MJCF here). docs/performance.md, "Side by side with MuJoCo".
//
//   build-bench/bench/mujoco_side_by_side [check] [time] [simulate]
//       [--rounds R] [--batch-ms B] [--data DIR]
//
// (no mode: all three). `check` compares the mass matrix, the bias forces,
// the accelerations and the inverse dynamics of both at random states;
// `time` prints the per-call tables (CPU time, medians of R interleaved
// rounds, each of every case in turn); `simulate` runs the arm for 5 s on
// both at equal accuracy: Daedalus (CVODES Adams, whole Simulate call) at
// rtol = atol = 1e-4, 1e-6, 1e-8 against a 1e-12 reference, and MuJoCo
// RK4 and semi-implicit Euler (mj_step) with the fewest steps that reach
// the same final error.
//
// What is timed, per call, from (q, v, tau) or (q, v, vdot) already in
// memory to the result in memory:
//  - forward dynamics. Daedalus: ABA (TreeDynamics::ForwardDynamics), and
//    CRBA + RNEA + dense Cholesky. MuJoCo "smooth": exactly the stages
//    forward dynamics of this model needs, mj_kinematics, mj_comPos, mj_crb,
//    mj_factorM (sparse LDL'), mj_comVel, mj_rne (bias), then
//    qfrc = tau - bias and mj_solveM; "stages": mj_fwdPosition,
//    mj_fwdVelocity, mj_fwdActuation, mj_fwdAcceleration (what mj_forward
//    runs before the constraint solver; they add camera/light, tendon,
//    collision, passive-force and constraint bookkeeping that is empty
//    here); "mj_forward": the whole call (adds sensors and the constraint
//    stage, empty here). The ratios are against "smooth", MuJoCo's best.
//  - inverse dynamics. Daedalus: RNEA. MuJoCo "smooth": mj_kinematics,
//    mj_comPos, mj_comVel, mj_rne with acceleration; "mj_inverse": the
//    whole call (also forms and factors M for the constraint stage).
//  - the mass matrix. Daedalus: CRBA into a dense matrix. MuJoCo:
//    mj_kinematics, mj_comPos, mj_crb, mj_fullM (dense).
// Chains deeper than about 90 bodies exceed tinyxml2 9's element-depth
// limit of 100, so the generated MJCF nests them through <include> files
// of 50 bodies held in a MuJoCo virtual file system.
#include <mujoco/mujoco.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/multibody_dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/urdf.hpp"

#ifndef DAEDALUS_DATA_DIR
#define DAEDALUS_DATA_DIR "problems/data"
#endif

namespace {

namespace mb = daedalus::mb;
using Eigen::VectorXd;

volatile double g_sink = 0.0;  // keeps the timed results alive
double g_amplitude = 0.05;     // scales the simulation's q0 (--amplitude)

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string LoadAvg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

// ---- MuJoCo models

struct MjModel {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  std::vector<int> qpos;  // Daedalus coordinate i (q) -> MuJoCo qpos
  std::vector<int> dof;   // Daedalus velocity j (v) -> MuJoCo dof
  MjModel() = default;
  MjModel(const MjModel&) = delete;
  MjModel& operator=(const MjModel&) = delete;
  ~MjModel() {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
  }
};

// Loads `files` (name, text; the first is the model) from memory.
std::unique_ptr<MjModel> LoadMjcf(
    const std::vector<std::pair<std::string, std::string>>& files) {
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  for (const auto& [name, text] : files) {
    if (mj_makeEmptyFileVFS(vfs.get(), name.c_str(),
                            static_cast<int>(text.size())) != 0)
      throw std::runtime_error("MuJoCo VFS: cannot add " + name);
    const int id = mj_findFileVFS(vfs.get(), name.c_str());
    std::memcpy(vfs->filedata[id], text.data(), text.size());
  }
  char error[1000] = "";
  auto out = std::make_unique<MjModel>();
  out->m =
      mj_loadXML(files.front().first.c_str(), vfs.get(), error, sizeof(error));
  mj_deleteVFS(vfs.get());
  if (!out->m)
    throw std::runtime_error("MuJoCo cannot load " + files.front().first +
                             ": " + error);
  out->d = mj_makeData(out->m);
  return out;
}

// Maps the Daedalus coordinates and velocities to MuJoCo's qpos and dofs
// by name. A hinge is the joint of the same name (one coordinate, one
// velocity). A free joint F (the humanoid's floating base: urdf.hpp,
// multibody.hpp Joint::Free) has the coordinates F_x, F_y, F_z (its
// origin's position in the world) and F.w, F.x, F.y, F.z (the quaternion),
// MuJoCo's qpos[0:3] and qpos[3:7] (w first) of the free joint F; and the
// velocities F_x, F_y, F_z (their time derivatives: the linear velocity in
// the world) and F.wx, F.wy, F.wz (the angular velocity in the body
// frame), exactly MuJoCo's free-joint qvel[0:3] (linear, world frame) and
// qvel[3:6] (angular, local frame). So the map is a permutation, no
// rotation: the same numbers on both sides.
void MapJoints(const daedalus::Model& model, MjModel* mj) {
  if (model.nv() != mj->m->nv || model.nq() != mj->m->nq)
    throw std::runtime_error(
        "the models differ in size: Daedalus nq " + std::to_string(model.nq()) +
        ", nv " + std::to_string(model.nv()) + "; MuJoCo nq " +
        std::to_string(mj->m->nq) + ", nv " + std::to_string(mj->m->nv));
  // (MuJoCo joint, offset) of a Daedalus coordinate or velocity name.
  auto find = [&](const std::string& n, bool velocity) {
    int j = mj_name2id(mj->m, mjOBJ_JOINT, n.c_str());
    if (j >= 0 && mj->m->jnt_type[j] == mjJNT_HINGE) return std::pair(j, 0);
    const size_t cut = n.find_last_of("._");
    if (cut != std::string::npos) {
      const std::string base = n.substr(0, cut), tail = n.substr(cut);
      j = mj_name2id(mj->m, mjOBJ_JOINT, base.c_str());
      if (j >= 0 && mj->m->jnt_type[j] == mjJNT_FREE) {
        const std::vector<std::string> q_tails = {"_x", "_y", "_z", ".w",
                                                  ".x", ".y", ".z"};
        const std::vector<std::string> v_tails = {"_x",  "_y",  "_z",
                                                  ".wx", ".wy", ".wz"};
        const auto& tails = velocity ? v_tails : q_tails;
        const auto it = std::find(tails.begin(), tails.end(), tail);
        if (it != tails.end())
          return std::pair(j, static_cast<int>(it - tails.begin()));
      }
    }
    throw std::runtime_error("MuJoCo model has no joint for Daedalus's " +
                             std::string(velocity ? "velocity" : "coordinate") +
                             " '" + n + "'");
  };
  mj->qpos.clear();
  mj->dof.clear();
  for (const std::string& n : model.coordinate_names()) {
    const auto [j, k] = find(n, false);
    mj->qpos.push_back(mj->m->jnt_qposadr[j] + k);
  }
  for (const std::string& n : model.velocity_names()) {
    const auto [j, k] = find(n, true);
    mj->dof.push_back(mj->m->jnt_dofadr[j] + k);
  }
}

std::string Fmt(double x) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

// The chain's link inertia tensor about its centre of mass, as in
// recursive_bench: ixx iyy izz ixy ixz iyz.
const double kChainInertia[6] = {0.003, 0.0032, 0.001, 1e-4, -2e-4, 3e-4};

// Principal moments and axes of the chain's inertia, MJCF attributes.
std::string ChainInertial() {
  const double* g = kChainInertia;
  Eigen::Matrix3d t;
  t << g[0], g[3], g[4], g[3], g[1], g[5], g[4], g[5], g[2];
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(t);
  Eigen::Matrix3d axes = es.eigenvectors();
  if (axes.determinant() < 0) axes.col(0) = -axes.col(0);
  const Eigen::Quaterniond quat(axes);
  const VectorXd& moments = es.eigenvalues();
  return "<inertial pos=\"0 0.01 0.05\" mass=\"1\" quat=\"" + Fmt(quat.w()) +
         " " + Fmt(quat.x()) + " " + Fmt(quat.y()) + " " + Fmt(quat.z()) +
         "\" diaginertia=\"" + Fmt(moments[0]) + " " + Fmt(moments[1]) + " " +
         Fmt(moments[2]) + "\"/>";
}

std::unique_ptr<MjModel> MjChain(int n) {
  const int per_file = 50;
  const std::string inertial = ChainInertial();
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("chain.xml",
                     "<mujoco model=\"chain\"><compiler "
                     "inertiafromgeom=\"false\"/><option gravity=\"0 0 "
                     "-9.81\"/><worldbody><include "
                     "file=\"part0.xml\"/></worldbody></mujoco>");
  for (int first = 0, part = 0; first < n; first += per_file, ++part) {
    std::string x = "<mujoco>";
    const int last = std::min(n, first + per_file);
    for (int i = first; i < last; ++i) {
      x += "<body name=\"l" + std::to_string(i) + "\" pos=\"0 0 ";
      x += i == 0 ? "0" : "0.1";
      // The joint is named as Daedalus names its coordinate (multibody.hpp:
      // a revolute joint's is "<joint>_angle").
      x += "\"><joint name=\"l" + std::to_string(i) +
           "_angle\" type=\"hinge\" axis=\"";
      x += i % 2 == 0 ? "0 0 1" : "0 1 0";
      x += "\"/>" + inertial;
    }
    if (last < n)
      x += "<include file=\"part" + std::to_string(part + 1) + ".xml\"/>";
    for (int i = first; i < last; ++i) x += "</body>";
    x += "</mujoco>";
    files.emplace_back("part" + std::to_string(part) + ".xml", x);
  }
  return LoadMjcf(files);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- Daedalus models

struct DdModel {
  daedalus::Model model;
  mb::TreeDynamics dyn;
};

DdModel DdChain(int n) {
  std::string model_name = "chain";
  model_name += std::to_string(n);
  daedalus::ModelBuilder b(model_name);
  mb::Multibody s(mb::Dimension::kSpatial);
  s.SetGravity(mb::PVec(0.0, 0.0, -9.81));
  mb::FrameIndex parent = s.world();
  const double* g = kChainInertia;
  for (int i = 0; i < n; ++i) {
    std::string name = "l";
    name += std::to_string(i);
    const mb::BodyIndex body =
        s.AddBody(name, mb::SpatialBody(1.0, mb::PVec(0.0, 0.01, 0.05), g[0],
                                        g[1], g[2], g[3], g[4], g[5]));
    s.AddJoint(name,
               mb::Joint::Revolute(i % 2 == 0 ? Eigen::Vector3d::UnitZ()
                                              : Eigen::Vector3d::UnitY()),
               parent, s.BodyFrame(body));
    std::string tip = name;
    tip += "_tip";
    parent = s.AddFrame(tip, body, mb::PVec(0.0, 0.0, 0.1));
  }
  const mb::Kinematics kin =
      std::move(s).AddTo(&b, mb::DynamicsForm::kRecursive);
  return {std::move(b).Build(), mb::TreeDynamics(kin)};
}

// gravity: its magnitude along -z (negative: along +z).
DdModel DdArm(const std::string& urdf, double gravity = 9.81) {
  daedalus::ModelBuilder b("arm7");
  daedalus::urdf::ImportOptions opt;
  opt.dynamics = mb::DynamicsForm::kRecursive;
  opt.gravity = gravity;
  const daedalus::urdf::Robot robot = daedalus::urdf::Import(urdf, &b, opt);
  return {std::move(b).Build(), mb::TreeDynamics(robot.kinematics)};
}

// The humanoid on a floating base (the root link 'pelvis' on a free
// joint), as build/problems/urdf --base floating and humanoid_bench run it.
DdModel DdHumanoid(const std::string& urdf) {
  daedalus::ModelBuilder b("humanoid");
  daedalus::urdf::ImportOptions opt;
  opt.dynamics = mb::DynamicsForm::kRecursive;
  opt.floating_base = true;
  const daedalus::urdf::Robot robot = daedalus::urdf::Import(urdf, &b, opt);
  return {std::move(b).Build(), mb::TreeDynamics(robot.kinematics)};
}

struct Pair {
  std::string name;
  int n = 0;  // nv
  DdModel dd;
  std::unique_ptr<MjModel> mj;
};

// ---- state transfer

void ToMjQ(const VectorXd& q, const MjModel& mj, mjtNum* out) {
  for (int i = 0; i < static_cast<int>(mj.qpos.size()); ++i)
    out[mj.qpos[static_cast<size_t>(i)]] = q[i];
}
void ToMj(const VectorXd& x, const MjModel& mj, mjtNum* out) {
  for (int i = 0; i < static_cast<int>(mj.dof.size()); ++i)
    out[mj.dof[static_cast<size_t>(i)]] = x[i];
}
VectorXd FromMj(const mjtNum* x, const MjModel& mj) {
  VectorXd out(static_cast<Eigen::Index>(mj.dof.size()));
  for (int i = 0; i < static_cast<int>(mj.dof.size()); ++i)
    out[i] = x[mj.dof[static_cast<size_t>(i)]];
  return out;
}

struct State {
  VectorXd q, v, u;  // u: tau or vdot
};
// q in [-pi, pi] (a free joint's position in m), each quaternion then
// normalized; v in [-2, 2]; u in [-5, 5].
State RandomState(const daedalus::Model& model, std::mt19937* gen) {
  std::uniform_real_distribution<double> pos(-M_PI, M_PI), unit(-1.0, 1.0);
  const int nq = model.nq(), n = model.nv();
  State s{VectorXd(nq), VectorXd(n), VectorXd(n)};
  for (int i = 0; i < nq; ++i) s.q[i] = pos(*gen);
  for (const auto& b : model.quaternions()) s.q.segment<4>(b.q).normalize();
  for (int i = 0; i < n; ++i)
    s.v[i] = 2.0 * unit(*gen), s.u[i] = 5.0 * unit(*gen);
  return s;
}

double RelErr(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// ---- check

bool Check(std::vector<Pair>& pairs) {
  std::printf(
      "## Equivalence of the models (max over 5 random states; relative to "
      "the largest entry)\n\n| model | nv | M | bias c+g | vdot (forward) | "
      "tau (inverse) |\n|---|---|---|---|---|---|\n");
  bool ok = true;
  for (Pair& p : pairs) {
    if (p.n > 100) continue;  // the 1000-link M is ill-conditioned
    const int n = p.n;
    mjModel* m = p.mj->m;
    mjData* d = p.mj->d;
    auto data = p.dd.dyn.MakeData<double>();
    p.dd.dyn.SetParameters<double>(p.dd.model.default_parameters(), &data);
    std::mt19937 gen(11);
    double em = 0, eh = 0, ea = 0, et = 0;
    std::vector<mjtNum> full(static_cast<size_t>(m->nv * m->nv));
    for (int k = 0; k < 5; ++k) {
      const State s = RandomState(p.dd.model, &gen);
      ToMjQ(s.q, *p.mj, d->qpos);
      ToMj(s.v, *p.mj, d->qvel);
      ToMj(s.u, *p.mj, d->qfrc_applied);
      mj_forward(m, d);
      mj_fullM(m, full.data(), d->qM);
      Eigen::MatrixXd mm(n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          mm(i, j) =
              full[static_cast<size_t>(p.mj->dof[i] * m->nv + p.mj->dof[j])];
      const VectorXd zero = VectorXd::Zero(n);
      em = std::max(em, RelErr(p.dd.dyn.MassMatrix<double>(s.q, &data), mm));
      eh = std::max(
          eh, RelErr(p.dd.dyn.InverseDynamics<double>(s.q, s.v, zero, &data),
                     FromMj(d->qfrc_bias, *p.mj)));
      ea = std::max(
          ea, RelErr(p.dd.dyn.ForwardDynamics<double>(s.q, s.v, s.u, &data),
                     FromMj(d->qacc, *p.mj)));
      // Inverse dynamics at the same state with vdot = u.
      ToMj(s.u, *p.mj, d->qacc);
      mj_inverse(m, d);
      et = std::max(
          et, RelErr(p.dd.dyn.InverseDynamics<double>(s.q, s.v, s.u, &data),
                     FromMj(d->qfrc_inverse, *p.mj)));
    }
    std::printf("| %s | %d | %.1e | %.1e | %.1e | %.1e |\n", p.name.c_str(), n,
                em, eh, ea, et);
    // M and the bias forces are what the models are (the accelerations
    // also carry M's condition number).
    if (!(em < 1e-12 && eh < 1e-12)) ok = false;
  }
  std::printf("\nM and bias within 1e-12 relative: %s\n\n", ok ? "yes" : "NO");
  return ok;
}

// ---- timing

struct Case {
  std::string model, op, impl;
  int n = 0;
  std::function<void()> fn;
  long batch = 1;
  std::vector<double> us;  // per call, one per round
  double Median() const {
    std::vector<double> s = us;
    std::sort(s.begin(), s.end());
    return s.empty() ? -1.0 : s[s.size() / 2];
  }
};

std::vector<Case> MakeCases(std::vector<Pair>& pairs) {
  std::vector<Case> cases;
  for (Pair& p : pairs) {
    const int n = p.n;
    const mjModel* m = p.mj->m;
    mjData* d = p.mj->d;
    std::mt19937 gen(7);
    auto x = std::make_shared<State>(RandomState(p.dd.model, &gen));
    ToMjQ(x->q, *p.mj, d->qpos);
    ToMj(x->v, *p.mj, d->qvel);
    auto data =
        std::make_shared<mb::TreeData<double>>(p.dd.dyn.MakeData<double>());
    p.dd.dyn.SetParameters<double>(p.dd.model.default_parameters(), data.get());
    const mb::TreeDynamics* dyn = &p.dd.dyn;
    // qpos (nq), then qvel and tau or vdot (nv each).
    const int nq = m->nq;
    auto mjq = std::make_shared<std::vector<mjtNum>>(nq + 2 * m->nv);
    ToMjQ(x->q, *p.mj, mjq->data());
    ToMj(x->v, *p.mj, mjq->data() + nq);
    ToMj(x->u, *p.mj, mjq->data() + nq + m->nv);
    auto full = std::make_shared<std::vector<mjtNum>>(
        static_cast<size_t>(m->nv) * static_cast<size_t>(m->nv));
    const int nv = m->nv;
    // Sets qpos, qvel and (tau or vdot) in d, as the Daedalus calls get
    // them as arguments.
    auto set = [m, d, mjq, nq, nv](mjtNum* third) {
      (void)m;
      mju_copy(d->qpos, mjq->data(), nq);
      mju_copy(d->qvel, mjq->data() + nq, nv);
      mju_copy(third, mjq->data() + nq + nv, nv);
    };
    auto add = [&](const char* op, const char* impl, std::function<void()> f) {
      Case c;
      c.model = p.name, c.op = op, c.impl = impl, c.n = n, c.fn = std::move(f);
      cases.push_back(std::move(c));
    };
    add("forward", "Daedalus ABA", [dyn, x, data] {
      g_sink = dyn->ForwardDynamics<double>(x->q, x->v, x->u, data.get())[0];
    });
    add("forward", "Daedalus CRBA+RNEA+Cholesky", [dyn, x, data, n] {
      const Eigen::MatrixXd mm = dyn->MassMatrix<double>(x->q, data.get());
      const VectorXd h = dyn->InverseDynamics<double>(
          x->q, x->v, VectorXd::Zero(n), data.get());
      g_sink = mm.llt().solve(x->u - h)[0];
    });
    add("forward", "MuJoCo smooth", [m, d, set, nv] {
      set(d->qfrc_applied);
      mj_kinematics(m, d);
      mj_comPos(m, d);
      mj_crb(m, d);
      mj_factorM(m, d);
      mj_comVel(m, d);
      mj_rne(m, d, 0, d->qfrc_bias);
      for (int i = 0; i < nv; ++i)
        d->qfrc_smooth[i] = d->qfrc_applied[i] - d->qfrc_bias[i];
      mj_solveM(m, d, d->qacc_smooth, d->qfrc_smooth, 1);
      g_sink = d->qacc_smooth[0];
    });
    add("forward", "MuJoCo stages", [m, d, set] {
      set(d->qfrc_applied);
      mj_fwdPosition(m, d);
      mj_fwdVelocity(m, d);
      mj_fwdActuation(m, d);
      mj_fwdAcceleration(m, d);
      g_sink = d->qacc_smooth[0];
    });
    add("forward", "mj_forward", [m, d, set] {
      set(d->qfrc_applied);
      mj_forward(m, d);
      g_sink = d->qacc[0];
    });
    add("inverse", "Daedalus RNEA", [dyn, x, data] {
      g_sink = dyn->InverseDynamics<double>(x->q, x->v, x->u, data.get())[0];
    });
    add("inverse", "MuJoCo smooth", [m, d, set] {
      set(d->qacc);
      mj_kinematics(m, d);
      mj_comPos(m, d);
      mj_comVel(m, d);
      mj_rne(m, d, 1, d->qfrc_inverse);
      g_sink = d->qfrc_inverse[0];
    });
    add("inverse", "mj_inverse", [m, d, set] {
      set(d->qacc);
      mj_inverse(m, d);
      g_sink = d->qfrc_inverse[0];
    });
    add("mass", "Daedalus CRBA", [dyn, x, data] {
      g_sink = dyn->MassMatrix<double>(x->q, data.get())(0, 0);
    });
    add("mass", "MuJoCo smooth", [m, d, set, full] {
      set(d->qacc);
      mj_kinematics(m, d);
      mj_comPos(m, d);
      mj_crb(m, d);
      mj_fullM(m, full->data(), d->qM);
      g_sink = (*full)[0];
    });
  }
  return cases;
}

void Time(std::vector<Pair>& pairs, int rounds, double batch_ms) {
  std::vector<Case> cases = MakeCases(pairs);
  // Calibration: calls per batch for about batch_ms of CPU time.
  for (Case& c : cases) {
    c.fn();  // warm up
    long calls = 0;
    const double t0 = CpuSeconds();
    double t = 0.0;
    while ((t = CpuSeconds() - t0) < 0.2e-3 * batch_ms) c.fn(), ++calls;
    c.batch = std::max(1L, static_cast<long>(static_cast<double>(calls) *
                                             batch_ms * 1e-3 / t));
  }
  const std::string load0 = LoadAvg();
  for (int r = 0; r < rounds; ++r) {
    for (Case& c : cases) {
      const double t0 = CpuSeconds();
      for (long k = 0; k < c.batch; ++k) c.fn();
      c.us.push_back((CpuSeconds() - t0) * 1e6 / static_cast<double>(c.batch));
    }
  }
  const std::string load1 = LoadAvg();
  std::printf(
      "## Per call [us], CPU time, median of %d interleaved rounds (%.0f ms "
      "batches)\n\nCPU: %s; load average before %s, after %s\n",
      rounds, batch_ms, CpuModel().c_str(), load0.c_str(), load1.c_str());
  auto find = [&](const std::string& model, const std::string& op,
                  const std::string& impl) -> const Case* {
    for (const Case& c : cases)
      if (c.model == model && c.op == op && c.impl == impl) return &c;
    return nullptr;
  };
  struct Op {
    const char* op;
    const char* title;
    std::vector<const char*> impls;
    std::vector<std::pair<const char*, const char*>> ratios;
  };
  const std::vector<Op> ops = {
      {"forward",
       "Forward dynamics",
       {"Daedalus ABA", "Daedalus CRBA+RNEA+Cholesky", "MuJoCo smooth",
        "MuJoCo stages", "mj_forward"},
       {{"Daedalus ABA", "MuJoCo smooth"},
        {"Daedalus CRBA+RNEA+Cholesky", "MuJoCo smooth"},
        {"Daedalus ABA", "mj_forward"}}},
      {"inverse",
       "Inverse dynamics",
       {"Daedalus RNEA", "MuJoCo smooth", "mj_inverse"},
       {{"Daedalus RNEA", "MuJoCo smooth"}, {"Daedalus RNEA", "mj_inverse"}}},
      {"mass",
       "Mass matrix (dense)",
       {"Daedalus CRBA", "MuJoCo smooth"},
       {{"Daedalus CRBA", "MuJoCo smooth"}}},
  };
  for (const Op& op : ops) {
    std::printf("\n### %s\n\n| model | nv |", op.title);
    for (const char* i : op.impls) std::printf(" %s [us] |", i);
    for (const auto& [a, b] : op.ratios) std::printf(" %s / %s |", a, b);
    std::printf("\n|---|---|");
    for (size_t i = 0; i < op.impls.size() + op.ratios.size(); ++i)
      std::printf("---|");
    std::printf("\n");
    for (const Pair& p : pairs) {
      std::printf("| %s | %d |", p.name.c_str(), p.n);
      for (const char* i : op.impls)
        std::printf(" %.3g |", find(p.name, op.op, i)->Median());
      for (const auto& [a, b] : op.ratios)
        std::printf(" %.3g |", find(p.name, op.op, a)->Median() /
                                   find(p.name, op.op, b)->Median());
      std::printf("\n");
    }
    // Growth from 10 to 1000 links.
    const Case* small = find("chain10", op.op, op.impls[0]);
    const Case* large = find("chain1000", op.op, op.impls[0]);
    if (small && large) {
      std::printf("| t(1000)/t(10) | |");
      for (const char* i : op.impls)
        std::printf(" %.1f |", find("chain1000", op.op, i)->Median() /
                                   find("chain10", op.op, i)->Median());
      std::printf("\n| exponent | |");
      for (const char* i : op.impls)
        std::printf(" n^%.2f |",
                    std::log(find("chain1000", op.op, i)->Median() /
                             find("chain10", op.op, i)->Median()) /
                        std::log(100.0));
      std::printf("\n");
    }
  }
  std::printf("\n");
}

}  // namespace

int Simulate(Pair& arm, const std::string& urdf);

int main(int argc, char** argv) {
  bool check = false, time = false, simulate = false;
  int rounds = 11;
  double batch_ms = 20.0;
  std::string data_dir = DAEDALUS_DATA_DIR;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "check")
        check = true;
      else if (a == "time")
        time = true;
      else if (a == "simulate")
        simulate = true;
      else if (a == "--rounds")
        rounds = std::stoi(value());
      else if (a == "--batch-ms")
        batch_ms = std::stod(value());
      else if (a == "--amplitude")
        g_amplitude = std::stod(value());
      else if (a == "--data")
        data_dir = value();
      else
        throw std::invalid_argument(
            "unknown argument '" + a +
            "'; usage: mujoco_side_by_side [check] [time] [simulate] "
            "[--rounds R] [--batch-ms B] [--amplitude A] [--data DIR]");
    }
    if (rounds < 1 || batch_ms <= 0.0)
      throw std::invalid_argument("--rounds and --batch-ms must be positive");
    if (!check && !time && !simulate) check = time = simulate = true;

    std::printf("# Daedalus side by side with MuJoCo %s\n\n",
                mj_versionString());
    std::vector<Pair> pairs;
    {
      DdModel dd = DdArm(data_dir + "/arm7.urdf");
      const int n = dd.dyn.nv();
      pairs.push_back(
          Pair{"arm7", n, std::move(dd),
               LoadMjcf({{"arm7.xml", ReadFile(data_dir + "/arm7.xml")}})});
    }
    {
      DdModel dd = DdHumanoid(data_dir + "/humanoid.urdf");
      const int n = dd.dyn.nv();
      pairs.push_back(Pair{
          "humanoid", n, std::move(dd),
          LoadMjcf({{"humanoid.xml", ReadFile(data_dir + "/humanoid.xml")}})});
    }
    for (int n : {10, 100, 1000})
      pairs.push_back(
          Pair{"chain" + std::to_string(n), n, DdChain(n), MjChain(n)});
    for (Pair& p : pairs) MapJoints(p.dd.model, p.mj.get());
    int status = 0;
    if (check && !Check(pairs)) status = 1;
    if (time) Time(pairs, rounds, batch_ms);
    if (simulate)
      status =
          std::max(status, Simulate(pairs.front(), data_dir + "/arm7.urdf"));
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mujoco_side_by_side: %s\n", e.what());
    return 2;
  }
}

// ---- 5 s simulation of the arm at equal accuracy

namespace {

struct Final {
  VectorXd q, v;
  double cpu = 0.0;  // seconds
  long steps = 0;
  std::string note;
};

// The arm from q0, at rest, without inputs, for 5 s (it falls and swings).
VectorXd ArmQ0(int n) {
  VectorXd q0 = VectorXd::Zero(n);
  const double pose[7] = {0.3, 0.6, -0.4, -1.0, 0.5, 0.8, 0.2};
  for (int i = 0; i < n && i < 7; ++i) q0[i] = g_amplitude * pose[i];
  return q0;
}
constexpr double kTEnd = 5.0;

Final RunDaedalus(const DdModel& dd,
                  double rtol,
                  double atol,
                  daedalus::Integrator integrator) {
  daedalus::SimulationOptions o;
  o.t_end = kTEnd;
  o.output_step = kTEnd;
  o.rtol = rtol;
  o.atol = atol;
  o.integrator = integrator;
  const int n = dd.dyn.nv();
  const daedalus::InitialState x0{ArmQ0(n), VectorXd::Zero(n)};
  const double t0 = CpuSeconds();
  const daedalus::SimulationSummary s =
      daedalus::Simulate(dd.model, x0, dd.model.default_parameters(), o);
  const double cpu = CpuSeconds() - t0;
  if (!s.ok) throw std::runtime_error("Daedalus run failed: " + s.error);
  return {s.final.q, s.final.v, cpu, s.stats.steps, s.evaluator};
}

void QuietWarning(const char*) {}

// MuJoCo with the given integrator and number of steps; q is NaN when
// MuJoCo met a bad qpos, qvel or qacc (it then resets the state, so the
// final state would mean nothing).
Final RunMujoco(const MjModel& mj, int integrator, long steps) {
  mjModel* m = mj.m;
  mjData* d = mj.d;
  mj_resetData(m, d);
  const int n = static_cast<int>(mj.dof.size());
  ToMjQ(ArmQ0(n), mj, d->qpos);
  m->opt.integrator = integrator;
  m->opt.timestep = kTEnd / static_cast<double>(steps);
  const double t0 = CpuSeconds();
  for (long k = 0; k < steps; ++k) mj_step(m, d);
  const double cpu = CpuSeconds() - t0;
  Final out{FromMj(d->qpos, mj), FromMj(d->qvel, mj), cpu, steps, ""};
  for (int w : {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC})
    if (d->warning[w].number > 0) out.q.setConstant(std::nan(""));
  return out;
}

double Err(const Final& a, const Final& ref) {
  if (!a.q.allFinite()) return HUGE_VAL;
  return (a.q - ref.q).cwiseAbs().maxCoeff();
}

template <class F>
Final MedianCpu(F run, int repeats) {
  std::vector<Final> runs;
  for (int r = 0; r < repeats; ++r) runs.push_back(run());
  std::sort(runs.begin(), runs.end(),
            [](const Final& a, const Final& b) { return a.cpu < b.cpu; });
  return runs[runs.size() / 2];
}

// The fewest MuJoCo steps (to a few per cent) whose final error is at most
// `target`: doubling, then bisection; -1 when max_steps does not reach it.
long StepsFor(const MjModel& arm,
              int integrator,
              const Final& ref,
              double target,
              long max_steps,
              double* err_at_max) {
  long hi = 50;
  double e = 0.0;
  while ((e = Err(RunMujoco(arm, integrator, hi), ref)) > target) {
    if (hi >= max_steps) {
      *err_at_max = e;
      return -1;
    }
    hi = std::min(2 * hi, max_steps);
  }
  long lo = hi / 2;
  while (hi - lo > std::max(1L, hi / 50)) {
    const long mid = (lo + hi) / 2;
    if (Err(RunMujoco(arm, integrator, mid), ref) <= target)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

}  // namespace

int Simulate(Pair& pair, const std::string& urdf) {
  using daedalus::Integrator;
  // The arm hangs from a ceiling mount (gravity along +z of its base) and
  // is released at rest from q0 = 0.05 (0.3, ...): the off-axis centres of
  // mass swing it, and its vertical joints wind through several radians in
  // 5 s. Mounted upright it falls from the unstable equilibrium, and from
  // q0 = 0.2 (0.3, ...) hanging, the motion is so sensitive that CVODES
  // Adams and BDF at rtol = atol = 1e-12 end 1e2 rad and 3e-6 rad apart:
  // no reference. At 0.05 they agree to a few 1e-9 (printed).
  const DdModel dd = DdArm(urdf, -9.81);
  MjModel& mj = *pair.mj;
  const double g_saved = mj.m->opt.gravity[2];
  mj.m->opt.gravity[2] = 9.81;
  auto* warn_saved = mju_user_warning;
  mju_user_warning = QuietWarning;
  const std::string load0 = LoadAvg();
  // Reference: CVODES Adams at rtol = atol = 1e-12; its uncertainty is
  // estimated by BDF at the same tolerance and by MuJoCo RK4 at 1e-5 s.
  const Final ref = RunDaedalus(dd, 1e-12, 1e-12, Integrator::kCvodesAdams);
  const Final ref_bdf = RunDaedalus(dd, 1e-12, 1e-12, Integrator::kCvodesBdf);
  const Final ref_rk4 = RunMujoco(mj, mjINT_RK4, 500000);

  std::printf(
      "## 5 s of the arm at equal accuracy\n\nThe arm hanging (gravity +z), "
      "q0 = %g (0.3, 0.6, -0.4, -1.0, 0.5, 0.8, 0.2) rad, v0 = 0, no inputs; "
      "error = max |q_i(5) - q_ref,i(5)| [rad] against CVODES Adams at "
      "rtol = atol = 1e-12 (evaluator: %s). Reference checks: CVODES BDF at "
      "1e-12 differs by %.1e, MuJoCo RK4 at h = 1e-5 s by %.1e. "
      "Reference q(5) =",
      g_amplitude, ref.note.c_str(), Err(ref_bdf, ref), Err(ref_rk4, ref));
  for (int i = 0; i < ref.q.size(); ++i) std::printf(" %.4f", ref.q[i]);
  std::printf(" rad.\n\n");
  std::printf(
      "| Daedalus (CVODES Adams) | error | CPU [ms] | steps | MuJoCo RK4: "
      "steps for that error | h [s] | CPU [ms] | MuJoCo Euler: steps | "
      "CPU [ms] | RK4 / Daedalus "
      "|\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (double tol : {1e-4, 1e-6, 1e-8}) {
    const Final run = MedianCpu(
        [&] { return RunDaedalus(dd, tol, tol, Integrator::kCvodesAdams); }, 5);
    const double e = Err(run, ref);
    double e_max_rk = 0.0, e_max_eu = 0.0;
    const long n_rk = StepsFor(mj, mjINT_RK4, ref, e, 2000000, &e_max_rk);
    const long n_eu = StepsFor(mj, mjINT_EULER, ref, e, 1000000, &e_max_eu);
    std::printf("| rtol = atol = %.0e | %.1e | %.2f | %ld |", tol, e,
                run.cpu * 1e3, run.steps);
    double rk_cpu = -1.0;
    if (n_rk > 0) {
      const Final rk =
          MedianCpu([&] { return RunMujoco(mj, mjINT_RK4, n_rk); }, 5);
      rk_cpu = rk.cpu;
      std::printf(" %ld (error %.1e) | %.2e | %.2f |", n_rk, Err(rk, ref),
                  kTEnd / static_cast<double>(n_rk), rk.cpu * 1e3);
    } else {
      std::printf(" not reached in 2e6 steps (error %.1e) | - | - |", e_max_rk);
    }
    if (n_eu > 0) {
      const Final eu =
          MedianCpu([&] { return RunMujoco(mj, mjINT_EULER, n_eu); }, 3);
      std::printf(" %ld | %.2f |", n_eu, eu.cpu * 1e3);
    } else {
      std::printf(" not reached in 1e6 steps (error %.1e) | - |", e_max_eu);
    }
    if (rk_cpu > 0)
      std::printf(" %.2f |\n", rk_cpu / run.cpu);
    else
      std::printf(" - |\n");
  }
  std::printf("\nload average before %s, after %s\n", load0.c_str(),
              LoadAvg().c_str());
  mju_user_warning = warn_saved;
  mj.m->opt.gravity[2] = g_saved;
  return 0;
}
