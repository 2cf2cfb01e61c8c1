// Definitions of the problem declared in humanoid_standing.hpp.
#include "humanoid_standing.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_output.hpp"
#include "daedalus/side_outputs.hpp"

#ifndef DAEDALUS_HUMANOID_URDF
#define DAEDALUS_HUMANOID_URDF "problems/data/humanoid.urdf"
#endif

namespace daedalus::problems {
namespace {

// The feet boxes: the foot link's own box (the file's comment: box 0.22 x
// 0.10 x 0.06 m, centre of mass (0.05, 0, -0.04) of a uniform box).
const Eigen::Vector3d kSoleCentre(0.05, 0.0, -0.04);
const Eigen::Vector3d kSoleHalf(0.11, 0.05, 0.03);
constexpr double kMu = 0.8;
constexpr double kBend = 0.1;    // a [rad]: knee 2a, hip and ankle -a
constexpr double kElbow = -0.3;  // [rad]
constexpr double kOmega = 16.0 * 3.14159265358979323846;  // 8 Hz
constexpr double kZeta = 1.0;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::invalid_argument(
        "humanoid_standing: cannot read the URDF file '" + path +
        "' (the problem reads problems/data/humanoid.urdf of the source tree "
        "at run time; run it from a build of an intact source tree)");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

int IndexOf(const std::vector<std::string>& names,
            const std::string& name,
            const char* what) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    throw std::invalid_argument(std::string("humanoid_standing: no ") + what +
                                " '" + name + "' in the model");
  return static_cast<int>(it - names.begin());
}

void Build(const std::string& xml,
           const std::string& path,
           urdf::Robot* robot,
           ModelBuilder* b) {
  urdf::ImportOptions o;
  o.floating_base = true;
  o.ground = true;
  o.ground_mu = kMu;
  *robot = urdf::ImportString(xml, path, b, o);
}

}  // namespace

std::string HumanoidUrdfPath() { return DAEDALUS_HUMANOID_URDF; }

std::string HumanoidWithFeetUrdf(const std::string& path) {
  std::string xml = ReadText(path);
  for (const char* side : {"left", "right"}) {
    const std::string link = std::string("<link name=\"") + side + "_foot\">";
    const size_t at = xml.find(link);
    const size_t end = at == std::string::npos ? at : xml.find("</link>", at);
    if (end == std::string::npos)
      throw std::invalid_argument("humanoid_standing: URDF file '" + path +
                                  "' has no link '" + side +
                                  "_foot' (the humanoid's feet carry the "
                                  "boxes; give the shipped humanoid.urdf)");
    std::ostringstream box;
    box.precision(17);
    box << "  <collision name=\"" << side << "_sole\"><origin xyz=\""
        << kSoleCentre.x() << " " << kSoleCentre.y() << " " << kSoleCentre.z()
        << "\"/><geometry><box size=\"" << 2 * kSoleHalf.x() << " "
        << 2 * kSoleHalf.y() << " " << 2 * kSoleHalf.z()
        << "\"/></geometry></collision>\n  ";
    xml.insert(end, box.str());
  }
  return xml;
}

HumanoidStanding MakeHumanoidStanding(const std::string& path) {
  const std::string xml = HumanoidWithFeetUrdf(path);
  HumanoidStanding h;
  // First the model without the hold channels: the pose, the inverse
  // statics and the joint inertias.
  ModelBuilder b0("humanoid_standing");
  Build(xml, path, &h.robot, &b0);
  const Model m0 = std::move(b0).Build();
  const mb::Kinematics& kin = h.robot.kinematics;
  const std::vector<std::string>& coords = m0.coordinate_names();
  const Eigen::VectorXd p0 = m0.default_parameters();
  Eigen::VectorXd q = kin.Neutral();
  for (const char* side : {"left", "right"}) {
    const std::string s = side;
    q[IndexOf(coords, s + "_hip_pitch", "coordinate")] = -kBend;
    q[IndexOf(coords, s + "_knee", "coordinate")] = 2.0 * kBend;
    q[IndexOf(coords, s + "_ankle_pitch", "coordinate")] = -kBend;
    q[IndexOf(coords, s + "_elbow", "coordinate")] = kElbow;
  }
  // The soles' corners (z = -half in the box frame, 4 per foot).
  for (const char* side : {"left", "right"}) {
    const std::string s = side;
    const mb::FrameIndex frame = kin.Frame(s + "_foot");
    for (const char* cx : {"+x", "-x"})
      for (const char* cy : {"+y", "-y"}) {
        const std::string name =
            s + "_sole:ground:" + std::string(cx) + cy + "-z";
        h.corners.push_back(name);
        h.corner_frame.push_back(frame);
        h.corner_local.push_back(
            kSoleCentre +
            Eigen::Vector3d(cx[0] == '+' ? kSoleHalf.x() : -kSoleHalf.x(),
                            cy[0] == '+' ? kSoleHalf.y() : -kSoleHalf.y(),
                            -kSoleHalf.z()));
      }
  }
  for (const std::string& c : h.corners) {
    int row = -1;
    for (int r = 0; r < m0.nc(); ++r)
      if (m0.RowName(r) == c) row = r;
    if (row < 0)
      throw std::invalid_argument("humanoid_standing: no contact row '" + c +
                                  "' in the model");
    h.normal_rows.push_back(row);
  }
  // The pelvis's height: the lowest sole corner on z = 0.
  const int zc = IndexOf(coords, "pelvis_z", "coordinate");
  q[zc] = 1.0;
  double zmin = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < h.corners.size(); ++k) {
    const auto pose = kin.Pose<double>(h.corner_frame[k], q, p0);
    zmin = std::min(zmin, (pose.p + pose.R * h.corner_local[k]).z());
  }
  q[zc] -= zmin;
  h.q_stand = q;
  h.mass = kin.TotalMass<double>(p0);

  Workspace ws(m0);
  ws.SetParameters(p0);
  ws.SetState(0.0, q, Eigen::VectorXd::Zero(m0.nv()));
  EvaluateAll(&ws);
  const int nv = m0.nv(), nu = m0.num_inputs();
  // The base rows: the velocities no input drives.
  std::vector<int> base;
  for (int i = 0; i < nv; ++i)
    if (ws.B.row(i).cwiseAbs().maxCoeff() == 0.0) base.push_back(i);
  if (base.size() != 6)
    throw std::logic_error("humanoid_standing: expected 6 unactuated rows");
  const int nk = static_cast<int>(h.corners.size());
  Eigen::MatrixXd Jn(nk, nv);  // the sole corners' normal rows
  for (int k = 0; k < nk; ++k) Jn.row(k) = ws.J.row(h.normal_rows[k]);
  Eigen::MatrixXd A(6, nk);
  Eigen::VectorXd hb(6);
  for (int i = 0; i < 6; ++i) {
    A.row(i) = Jn.col(base[i]).transpose();
    hb[i] = ws.h[base[i]];
  }
  h.lambda_stand = A.completeOrthogonalDecomposition().solve(hb);
  h.base_residual = (A * h.lambda_stand - hb).cwiseAbs().maxCoeff();
  h.weight = h.mass * urdf::ImportOptions().gravity;
  if (h.base_residual > 1e-9 * h.weight || h.lambda_stand.minCoeff() <= 0.0)
    throw std::runtime_error(
        "humanoid_standing: the sole corners cannot hold the base at the "
        "standing pose (residual " +
        std::to_string(h.base_residual) + " N, smallest corner force " +
        std::to_string(h.lambda_stand.minCoeff()) + " N)");
  const Eigen::VectorXd r = ws.h - Jn.transpose() * h.lambda_stand;
  const Eigen::VectorXd u = ws.B.colPivHouseholderQr().solve(r);
  h.joint_residual = (ws.B * u - r).cwiseAbs().maxCoeff();
  // The import's channels are tau_<joint> in robot.joints order.
  const int nj = static_cast<int>(h.robot.joints.size());
  if (nu != nj) throw std::logic_error("humanoid_standing: inputs != joints");
  h.tau_stand = u;
  const Eigen::MatrixXd M = ws.M;
  // The closed rows at q*: the soles' normal rows and their sticking rows.
  std::vector<int> closed = h.normal_rows;
  for (const std::string& c : h.corners)
    for (int r = 0; r < m0.nc(); ++r)
      if (m0.RowName(r).rfind(c + ":slip", 0) == 0) closed.push_back(r);
  Eigen::MatrixXd Jc(closed.size(), nv);
  for (size_t k = 0; k < closed.size(); ++k)
    Jc.row(static_cast<Eigen::Index>(k)) = ws.J.row(closed[k]);
  const Eigen::MatrixXd Jp =
      kin.Jacobian<double>(kin.Frame("pelvis"), q, p0).row(3);
  // The constrained mobility N = M^-1 - M^-1 Jc' (Jc M^-1 Jc')^+ Jc M^-1
  // (how the feet-on-the-ground body answers a generalized impulse) by
  // solves with M's LDLT and the Delassus operator's complete orthogonal
  // decomposition (Jc has rank 12 < rows: minimum norm).
  const Eigen::LDLT<Eigen::MatrixXd> mf(M);
  const Eigen::MatrixXd MiJc = mf.solve(Jc.transpose());
  const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> delassus(Jc *
                                                                         MiJc);
  auto mobility = [&](const Eigen::VectorXd& f) {
    const Eigen::VectorXd mi = mf.solve(f);
    return Eigen::VectorXd(mi - MiJc * delassus.solve(Jc * mi));
  };
  // The gains: the joints' inertia matrix seen from the ground. On the
  // feet-on-the-ground motions (Jc v = 0) the base velocity follows the
  // joints', v_b = G v_J with G = -pinv(Jc_b) Jc_J (least squares over
  // both feet; exact on the motions), so v = T v_J with T = [G; I] and the
  // kinetic energy is v_J' M_r v_J / 2, M_r = T' M T (nj x nj, at q*).
  // The PD torque u = -M_r (omega^2 (q_J - q*_J) + 2 zeta omega v_J) makes
  // every mode of that motion a critically damped oscillator at omega
  // (M_r^-1 K = omega^2 I, M_r^-1 D = 2 zeta omega I), against which
  // gravity's destabilizing stiffness must be small. It is largest in the
  // squat (knees bending further): near straight legs the pelvis's height
  // changes fast with the bend while its inertia is small. Measured: with
  // zeta = 0 and omega = 4 pi (2 Hz) that mode grows at 21 s^-1, so
  // gravity's rate^2 there is ~21^2 + (4 pi)^2 ~ 600 s^-2 (with zeta = 1
  // it still grew at ~12 s^-1 and the humanoid fell at 2.4 s); omega = 16
  // pi (8 Hz, omega^2 = 2527 s^-2) keeps a factor 4. Two diagonal gains
  // were tried first, at 2 Hz: the floating tree's M_jj (at the ankle a
  // foot's inertia, the foot being a leaf of the tree though it is held)
  // gave 0.5 ms steps with a Newton failure at nearly every one; the
  // apparent inertias 1 / N_jj with the feet held let the humanoid fold
  // (a corner slipped at 4.07 s and the run ended).
  {
    Eigen::MatrixXd Jb(Jc.rows(), 6), Jj(Jc.rows(), nj), T(nv, nj);
    for (int i = 0; i < 6; ++i) Jb.col(i) = Jc.col(base[i]);
    for (int j = 0; j < nj; ++j)
      Jj.col(j) = Jc.col(h.robot.joints[j].velocity_index);
    const Eigen::MatrixXd G = -Jb.completeOrthogonalDecomposition().solve(Jj);
    T.setZero();
    for (int i = 0; i < 6; ++i) T.row(base[i]) = G.row(i);
    for (int j = 0; j < nj; ++j) T(h.robot.joints[j].velocity_index, j) = 1.0;
    h.inertia = T.transpose() * M * T;
    h.inertia = (0.5 * (h.inertia + h.inertia.transpose())).eval();
  }

  // The model: the same import and the hold channels.
  ModelBuilder b("humanoid_standing");
  urdf::Robot robot;
  Build(xml, path, &robot, &b);
  const Param omega =
      b.Parameter("stand_omega", kOmega, ParamRange::NonNegative());
  const Param zeta =
      b.Parameter("stand_zeta", kZeta, ParamRange::NonNegative());
  b.Parameter("push_impulse", 0.0);
  std::vector<int> qidx(nj), vidx(nj);
  Eigen::VectorXd target(nj);
  for (int j = 0; j < nj; ++j) {
    qidx[j] = robot.joints[j].coordinate;
    vidx[j] = robot.joints[j].velocity_index;
    target[j] = q[qidx[j]];
  }
  for (int j = 0; j < nj; ++j) {
    const int vi = vidx[j];
    const double tau = u[j];
    const Eigen::VectorXd row = h.inertia.row(j).transpose();
    b.Input(
        "hold_" + robot.joints[j].name,
        [vi, nv](const auto& x) {
          using S = Scalar<decltype(x)>;
          VecX<S> c = VecX<S>::Zero(nv);
          c[vi] = S(1.0);
          return c;
        },
        [=](const auto& x) {
          const auto w = x.p[omega];
          const auto kp = w * w, kd = 2.0 * x.p[zeta] * w;
          auto sum = kp * 0.0;
          for (int k = 0; k < nj; ++k)
            sum +=
                row[k] * (kp * (x.q[qidx[k]] - target[k]) + kd * x.v[vidx[k]]);
          return tau - sum;
        });
  }
  h.problem.model = std::move(b).Build();
  h.robot = std::move(robot);
  const Model& model = h.problem.model;
  const int push_index = model.ParameterIndex("push_impulse");
  // The push: the closed rows' impact map for the impulse P e_x on the
  // pelvis's origin (M dv = Jp' P + Jc' Lambda, Jc dv = 0).
  const Eigen::VectorXd kick_unit = mobility(Jp.transpose());
  const Eigen::VectorXd q_stand = q;
  h.problem.initial = [q_stand, kick_unit,
                       push_index](const Eigen::VectorXd& params) {
    return InitialState{q_stand, params[push_index] * kick_unit};
  };
  h.problem.side_outputs.push_back(mb::PosesFile(h.robot.kinematics));
  // What the side file measures with (not the problem: no cycle).
  auto shared = std::make_shared<HumanoidStanding>(h);
  shared->problem = Problem{};
  SideOutput stand;
  stand.suffix = "standing.csv";
  stand.open = [shared](const std::string& file, const Eigen::VectorXd& prm) {
    const std::vector<std::string> cols = {
        "drift", "reaction_error", "cop_x",          "cop_y",   "com_x",
        "com_y", "cop_margin",     "closed_corners", "left_fz", "right_fz"};
    return std::make_unique<TableWriter>(
        file, cols, [shared, prm](const Sample& s, std::vector<double>* row) {
          const StandingMeasures m =
              MeasureStanding(*shared, s.q, s.lambda, prm);
          *row = {m.drift,      m.reaction_error,
                  m.cop.x(),    m.cop.y(),
                  m.com.x(),    m.com.y(),
                  m.cop_margin, static_cast<double>(m.closed),
                  m.left_fz,    m.right_fz};
        });
  };
  std::ostringstream js;
  js.precision(17);
  js << "{\"columns\": \"drift [m]: max over the 8 sole corners of |p_k - "
        "p_k(q*)|; reaction_error: (sum lambda_n - m g)/(m g); cop: centre "
        "of pressure of the total contact wrench [m]; com: centre of mass "
        "projected; cop_margin: CoP to the support polygon's nearest edge "
        "[m], > 0 inside\", \"mass_kg\": "
     << h.mass << ", \"weight_N\": " << h.weight << ", \"pelvis_z\": " << q[zc]
     << ", \"stand_omega\": " << kOmega << ", \"stand_zeta\": " << kZeta
     << ", \"inverse_statics\": {\"base_residual_N\": " << h.base_residual
     << ", \"joint_residual_Nm\": " << h.joint_residual
     << ", \"corner_forces_N\": {";
  for (int k = 0; k < nk; ++k)
    js << (k ? ", " : "") << "\"" << h.corners[k]
       << "\": " << h.lambda_stand[k];
  js << "}}, \"joints\": [";
  for (int j = 0; j < nj; ++j)
    js << (j ? ", " : "") << "{\"name\": \"" << h.robot.joints[j].name
       << "\", \"q\": " << q[h.robot.joints[j].coordinate]
       << ", \"tau\": " << u[j] << "}";
  js << "], \"reduced_inertia\": [";
  for (int j = 0; j < nj; ++j) {
    js << (j ? ", [" : "[");
    for (int k = 0; k < nj; ++k) js << (k ? ", " : "") << h.inertia(j, k);
    js << "]";
  }
  js << "]}";
  stand.summary_json = js.str();
  h.problem.side_outputs.push_back(stand);
  std::ostringstream d;
  d << "The shipped humanoid (" << path
    << ") standing on box feet (0.22 x 0.10 x 0.06 m, 4 sole corners "
       "each, mu 0.8) on the ground z = 0, on a floating base, knees bent "
       "0.2 rad: the exact static-equilibrium torques (inverse statics, "
       "minimum-norm normal corner forces, no tangential force) plus PD "
       "about the pose with gains omega^2 M_r, 2 zeta omega M_r (M_r the "
       "joints' inertia matrix seen from the ground) "
       "(stand_omega, stand_zeta), one channel hold_<joint> per joint. "
       "push_impulse [N s]: a horizontal impulse on the pelvis at t = 0. "
       "DIR/humanoid_standing.standing.csv: foot drift, reaction - weight, "
       "centre of pressure and its margin in the support polygon. Mass "
    << h.mass << " kg.";
  h.problem.description = d.str();
  SimulationOptions& o = h.problem.defaults;
  o.t_end = 5.0;
  o.output_step = 0.01;
  // rtol 1e-9, atol 1e-11: 5 s keep the reaction within 1.8e-11 of the
  // weight in 7 steps. (Chosen when CVODES's own difference quotients
  // made the Newton matrix round-off at rest: at 1e-8, 1e-10 the reaction
  // was then 1.21e-9, above the 1e-9; now 9.2e-12 in 6 steps.)
  o.rtol = 1e-9;
  o.atol = 1e-11;
  o.integrator = Integrator::kCvodesBdf;
  // Projection onto the closed rows after each step (at rtol 1e-8, atol
  // 1e-10 the sole corners' drift over 0.5 s was 1.0e-11 m; with Baumgarte
  // on Adams 1.7e-10 m, and at rtol 1e-10, atol 1e-12 still 1.6e-10 m).
  o.formulation = Formulation::kProjection;
  o.contact.zeno_velocity = 1e-3;
  o.kkt.allow_redundant = true;
  return h;
}

Problem HumanoidStandingProblem() {
  return MakeHumanoidStanding(HumanoidUrdfPath()).problem;
}

double ConvexHullMargin(std::vector<Eigen::Vector2d> pts,
                        const Eigen::Vector2d& x) {
  const double none = -std::numeric_limits<double>::infinity();
  if (pts.size() < 3) return none;
  std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) {
    return a.x() < b.x() || (a.x() == b.x() && a.y() < b.y());
  });
  auto cross = [](const Eigen::Vector2d& o, const Eigen::Vector2d& a,
                  const Eigen::Vector2d& b) {
    return (a - o).x() * (b - o).y() - (a - o).y() * (b - o).x();
  };
  // Andrew's monotone chain, counter-clockwise.
  std::vector<Eigen::Vector2d> hull(2 * pts.size());
  size_t k = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  for (size_t i = pts.size() - 1, t = k + 1; i > 0; --i) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], pts[i - 1]) <= 0) --k;
    hull[k++] = pts[i - 1];
  }
  hull.resize(k - 1);
  if (hull.size() < 3) return none;
  double margin = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < hull.size(); ++i) {
    const Eigen::Vector2d a = hull[i], e = hull[(i + 1) % hull.size()] - a;
    // Inside (left of every edge): positive distance to the edge's line.
    margin = std::min(margin, cross(a, a + e, x) / e.norm());
  }
  return margin;
}

StandingMeasures MeasureStanding(const HumanoidStanding& h,
                                 const Eigen::VectorXd& q,
                                 const Eigen::VectorXd& lambda,
                                 const Eigen::VectorXd& params) {
  StandingMeasures m;
  const mb::Kinematics& kin = h.robot.kinematics;
  // The kinematics reads the import's parameters (the model's first).
  const Eigen::VectorXd p = params;
  double sum = 0.0;
  Eigen::Vector2d moment = Eigen::Vector2d::Zero();
  std::vector<Eigen::Vector2d> closed;
  for (size_t k = 0; k < h.corners.size(); ++k) {
    const auto now = kin.Pose<double>(h.corner_frame[k], q, p);
    const auto ref = kin.Pose<double>(h.corner_frame[k], h.q_stand, p);
    const Eigen::Vector3d pk = now.p + now.R * h.corner_local[k];
    const Eigen::Vector3d rk = ref.p + ref.R * h.corner_local[k];
    m.drift = std::max(m.drift, (pk - rk).norm());
    const double f = lambda[h.normal_rows[k]];
    sum += f;
    moment += f * pk.head<2>();
    (k < 4 ? m.left_fz : m.right_fz) += f;
    if (f > 0.0) {
      closed.push_back(pk.head<2>());
      ++m.closed;
    }
  }
  m.reaction_error = (sum - h.weight) / h.weight;
  m.cop =
      sum > 0.0
          ? Eigen::Vector2d(moment / sum)
          : Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN());
  m.com = kin.CenterOfMass<double>(q, p).head<2>();
  m.cop_margin = ConvexHullMargin(closed, m.cop);
  return m;
}

}  // namespace daedalus::problems
