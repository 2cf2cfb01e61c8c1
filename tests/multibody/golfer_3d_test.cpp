// The 3-D golfer (problems/golfer_3d): the description's M and h against
// finite differences of the body poses and of the energies, the shaft
// mode's frequency, and a downswing to impact: clubhead speed, energy
// balance, the grip-interface power balance of seed 000 and the quaternion
// drift under the index-1 forms (docs/problems.md, "golfer_3d").
#include "golfer_3d.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace golfer_3d_test {

namespace gd = problems::golfer_detail;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;

// q advanced by eps along the velocity v: q + eps v for the scalar
// coordinates, q (x) exp(eps w / 2) for each quaternion (w its body-frame
// angular velocity), so that dq/deps = N(q) v.
VectorXd Advance(const Model& m,
                 const VectorXd& q,
                 const VectorXd& v,
                 double eps) {
  const auto& qn = m.coordinate_names();
  const auto& vn = m.velocity_names();
  auto vindex = [&](const std::string& name) {
    const auto it = std::find(vn.begin(), vn.end(), name);
    EXPECT_NE(it, vn.end()) << name;
    return static_cast<int>(it - vn.begin());
  };
  VectorXd out = q;
  for (int i = 0; i < m.nq(); ++i) {
    const std::string& name = qn[i];
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos) {
      out[i] = q[i] + eps * v[vindex(name)];
    } else if (name.substr(dot) == ".w") {
      const int j = vindex(name.substr(0, dot) + ".wx");
      const Eigen::Quaterniond q0(q[i], q[i + 1], q[i + 2], q[i + 3]);
      const Vector3d w = v.segment<3>(j);
      const double angle = eps * w.norm();
      const Eigen::Quaterniond dq(Eigen::AngleAxisd(
          angle, angle != 0.0 ? Vector3d(w.normalized()) : Vector3d::UnitX()));
      const Eigen::Quaterniond q1 = q0 * dq;
      out.segment<4>(i) << q1.w(), q1.x(), q1.y(), q1.z();
    }
  }
  return out;
}

// A random state: the swing's start with every coordinate perturbed by up
// to 0.5 rad, random unit quaternions, velocities up to 10 rad/s.
struct State {
  VectorXd q, v;
};
State RandomState(const problems::Golfer3d& g, std::mt19937& gen) {
  const Model& m = g.problem.model;
  const VectorXd prm = m.default_parameters();
  const InitialState x0 = g.problem.initial(prm);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  State s{x0.q, VectorXd(m.nv())};
  for (int i = 0; i < m.nq(); ++i) s.q[i] += 0.5 * u(gen);
  for (int i = 0; i < m.nq(); ++i) {
    const std::string& name = m.coordinate_names()[i];
    if (name.size() > 2 && name.substr(name.size() - 2) == ".w")
      s.q.segment<4>(i).normalize();
  }
  for (int j = 0; j < m.nv(); ++j) s.v[j] = 10.0 * u(gen);
  return s;
}

// Parameters with the dampers off (h then holds only the inertial,
// gravity and spring forces).
VectorXd Undamped(const Model& m) {
  VectorXd p = m.default_parameters();
  for (const char* c :
       {"zeta_shaft", "c_elbow", "c_roll", "c_shoulder", "c_trail"})
    p[m.ParameterIndex(c)] = 0.0;
  return p;
}

// T = v' M v / 2 from the model against T from the body poses by central
// differences along q(eps): v_C = dp_WC/deps, [w_W]x = dR/deps R', T =
// sum m |v_C|^2 / 2 + w_W' R I_C R' w_W / 2 (seed 000's T_i). The
// difference is the central difference's truncation error, relative
// eps^2 w^2 / 6 for body angular speeds w up to ~40 rad/s here (joint
// rates up to 10 rad/s summed along the chains): 3e-8 at eps = 1e-5 (9e-7
// was measured at eps = 1e-4, as that estimate says), plus round-off
// 1e-16 / eps ~ 1e-11: asserted below 1e-7.
TEST(Golfer3d, KineticEnergyMatchesFiniteDifferencedPoses) {
  const problems::Golfer3d g = problems::MakeGolfer3d();
  const Model& m = g.problem.model;
  EXPECT_EQ(m.nq(), 15);
  EXPECT_EQ(m.nv(), 13);
  EXPECT_EQ(m.nc(), 3);
  EXPECT_EQ(m.num_inputs(), 6);
  // The quaternion blocks where the names put them.
  ASSERT_EQ(m.quaternions().size(), 2u);
  for (const auto& b : m.quaternions()) {
    EXPECT_EQ(m.coordinate_names()[b.q], b.name + ".w") << b.name;
    EXPECT_EQ(m.velocity_names()[b.v], b.name + ".wx") << b.name;
  }
  const VectorXd prm = m.default_parameters();
  const auto& tree = g.kin.tree();
  std::mt19937 gen(7);
  double worst = 0.0;
  // Random states, then each velocity alone (one column of M at a time).
  for (int trial = 0; trial < 5 + m.nv(); ++trial) {
    State s = RandomState(g, gen);
    if (trial >= 5) s.v = 10.0 * VectorXd::Unit(m.nv(), trial - 5);
    Workspace ws(m);
    ws.SetParameters(prm);
    ws.SetState(0.0, s.q, s.v);
    EvaluateAll(&ws);
    // M symmetric positive definite.
    EXPECT_LT((ws.M - ws.M.transpose()).cwiseAbs().maxCoeff(),
              1e-14 * ws.M.cwiseAbs().maxCoeff());
    EXPECT_EQ(Eigen::LLT<Eigen::MatrixXd>(ws.M).info(), Eigen::Success);
    const double t_model = 0.5 * s.v.dot(ws.M * s.v);
    const double eps = 1e-5;
    const VectorXd qp = Advance(m, s.q, s.v, eps);
    const VectorXd qm = Advance(m, s.q, s.v, -eps);
    double t_fd = 0.0;
    for (size_t b = 1; b < tree.bodies.size(); ++b) {
      const auto& spec = tree.bodies[b].spec;
      const mb::FrameIndex f{tree.bodies[b].frame};
      const auto pose0 = g.kin.Pose<double>(f, s.q, prm);
      const auto posep = g.kin.Pose<double>(f, qp, prm);
      const auto posem = g.kin.Pose<double>(f, qm, prm);
      const Vector3d c(spec.com.x.Value(prm), spec.com.y.Value(prm),
                       spec.com.z.Value(prm));
      const Vector3d vc =
          ((posep.p + posep.R * c) - (posem.p + posem.R * c)) / (2.0 * eps);
      const Matrix3d w_skew =
          (posep.R - posem.R) / (2.0 * eps) * pose0.R.transpose();
      const Vector3d w(w_skew(2, 1), w_skew(0, 2), w_skew(1, 0));
      Matrix3d ic;
      ic << spec.ixx.Value(prm), spec.ixy.Value(prm), spec.ixz.Value(prm),
          spec.ixy.Value(prm), spec.iyy.Value(prm), spec.iyz.Value(prm),
          spec.ixz.Value(prm), spec.iyz.Value(prm), spec.izz.Value(prm);
      t_fd += 0.5 * spec.mass.Value(prm) * vc.squaredNorm() +
              0.5 * w.dot(pose0.R * ic * pose0.R.transpose() * w);
    }
    const double rel = std::abs(t_model - t_fd) / t_model;
    worst = std::max(worst, rel);
    EXPECT_LT(rel, 1e-7) << "T model " << t_model << " vs poses " << t_fd
                         << " (trial " << trial << ")";
  }
  std::printf("golfer_3d: v'Mv/2 vs finite-differenced poses: %.1e\n", worst);
}

// h against the energies: with the dampers off, M v' + h = B u + J' lambda
// conserves E = T + V up to the input and constraint power, so v' h(q, v)
// = d/deps [T(q(eps), v) + V(q(eps))] at eps = 0 along q' = N(q) v (T at
// fixed v: the body-frame velocities are the coordinates of the tangent).
// At v = 0 the same with the direction w: w' h(q, 0) = dV/deps along w.
// Central differences with eps = 1e-5: truncation eps^2 |E'''| / 6 ~
// 1e-10 relative, round-off 1e-16 |E| / eps ~ 1e-11 |E|; asserted at 1e-7
// of the scale |v| |h|.
TEST(Golfer3d, BiasForcesMatchTheEnergyRate) {
  const problems::Golfer3d g = problems::MakeGolfer3d();
  const Model& m = g.problem.model;
  const VectorXd prm = Undamped(m);
  std::mt19937 gen(11);
  auto energy = [&](const VectorXd& q, const VectorXd& v, double* t,
                    double* pot) {
    Workspace ws(m);
    ws.SetParameters(prm);
    ws.SetState(0.0, q, v);
    EvaluateAll(&ws);
    *t = ws.kinetic;
    *pot = ws.potential;
  };
  double worst = 0.0;
  for (int trial = 0; trial < 5; ++trial) {
    const State s = RandomState(g, gen);
    for (bool moving : {true, false}) {
      const VectorXd v = moving ? s.v : VectorXd::Zero(m.nv());
      Workspace ws(m);
      ws.SetParameters(prm);
      ws.SetState(0.0, s.q, v);
      EvaluateAll(&ws);
      const VectorXd dir = s.v;  // the path's velocity
      const double eps = 1e-5;
      double tp, vp, tm, vm;
      energy(Advance(m, s.q, dir, eps), v, &tp, &vp);
      energy(Advance(m, s.q, dir, -eps), v, &tm, &vm);
      const double rate = ((tp + vp) - (tm + vm)) / (2.0 * eps);
      const double model = dir.dot(ws.h);
      const double scale = dir.norm() * ws.h.norm();
      const double rel = std::abs(model - rate) / scale;
      worst = std::max(worst, rel);
      EXPECT_LT(rel, 1e-7) << (moving ? "v' h " : "w' h(q, 0) ") << model
                           << " vs energy rate " << rate;
    }
  }
  std::printf("golfer_3d: v'h vs d(T+V)/deps: %.1e of |v| |h|\n", worst);
}

// The shaft mode: the club_tip is the last body of its branch, so M's
// shaft_flex diagonal entry is its inertia about the hinge axis, and the
// spring's stiffness is d h_flex / d q_flex at rest (gravity off). Their
// ratio gives the clamped-butt frequency f_shaft by construction
// (k = I (2 pi f)^2): a check of the joint spring and of M, to round-off
// (1e-12) and to the finite difference's error (eps = 1e-6 on a linear
// spring: round-off 1e-16 k / eps ~ 1e-10 relative; asserted at 1e-8).
TEST(Golfer3d, ShaftModeHasTheDeclaredFrequency) {
  const problems::Golfer3d g = problems::MakeGolfer3d();
  const Model& m = g.problem.model;
  VectorXd prm = m.default_parameters();
  prm[m.ParameterIndex("g")] = 0.0;
  const VectorXd q0 = g.kin.Neutral();
  const VectorXd v0 = VectorXd::Zero(m.nv());
  int flex = -1, flex_q = -1;
  for (int j = 0; j < m.nv(); ++j)
    if (m.velocity_names()[j] == "shaft_flex") flex = j;
  for (int i = 0; i < m.nq(); ++i)
    if (m.coordinate_names()[i] == "shaft_flex") flex_q = i;
  ASSERT_GE(flex, 0);
  ASSERT_GE(flex_q, 0);
  auto h_at = [&](double angle) {
    VectorXd q = q0;
    q[flex_q] = angle;
    Workspace ws(m);
    ws.SetParameters(prm);
    ws.SetState(0.0, q, v0);
    EvaluateAll(&ws);
    return std::make_pair(ws.M(flex, flex), ws.h[flex]);
  };
  const double inertia = h_at(0.0).first;
  EXPECT_NEAR(inertia, gd::TipInertiaAboutHinge(), 1e-12 * inertia);
  const double eps = 1e-6;
  const double k = (h_at(eps).second - h_at(-eps).second) / (2.0 * eps);
  const double f = std::sqrt(k / inertia) / (2.0 * M_PI);
  EXPECT_NEAR(f, prm[m.ParameterIndex("f_shaft")], 1e-8 * f);
  std::printf(
      "golfer_3d: shaft tip inertia %.4e kg m^2, k %.2f N m/rad, "
      "f %.4f Hz\n",
      inertia, k, f);
}

struct Collector : Observer {
  void OnSample(const Sample& s) override { samples.push_back(s); }
  std::vector<Sample> samples;
};

SimulationOptions SwingOptions(const Problem& p) {
  SimulationOptions o = p.defaults;
  o.rtol = 1e-6;
  o.atol = 1e-8;
  o.output_step = 0.002;
  return o;
}

// The default downswing (Baumgarte on CVODES BDF, rtol 1e-6, atol 1e-8)
// stops at the impact event with the clubhead at the ball's target-line
// position, moving at 35-50 m/s (docs/problems.md cites the range), on
// the ball; the energy balance and the grip power balance close.
TEST(Golfer3d, SwingReachesImpactWithBalancedPowers) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "the whole downswing on dual numbers: 2.2 s in release, 261 s under "
      "the sanitizers (-O0); IndexOneFormsKeepTheQuaternionsUnit runs the "
      "same model's simulation there");
  const problems::Golfer3d g = problems::MakeGolfer3d();
  const Problem& p = g.problem;
  const VectorXd prm = p.model.default_parameters();
  Collector c;
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, SwingOptions(p), &c);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].name, "impact");
  EXPECT_TRUE(s.events[0].stopped);
  const Sample& last = c.samples.back();
  EXPECT_NEAR(last.t, s.events[0].t, 1e-12);
  const Vector3d ball = gd::BallPosition();
  const Vector3d head =
      g.kin.Pose<double>(g.kin.Frame("clubhead"), last.q, prm).p;
  // The event's root: y of the head at the ball's, to the root finder's
  // tolerance (far below 1 um at these speeds).
  EXPECT_NEAR(head.y(), ball.y(), 1e-6);
  const double speed = gd::ClubheadVelocity(g.kin, last.q, last.v, prm).norm();
  EXPECT_GT(speed, 35.0);
  EXPECT_LT(speed, 50.0);
  // The strike (the design's goal, bench/golfer_search.py): the head's
  // centre of mass within 0.02 m of the ball's height and 0.03 m of it
  // along x when it crosses the ball's line.
  EXPECT_LT(std::abs(head.z() - ball.z()), 0.02);
  EXPECT_LT(std::abs(head.x() - ball.x()), 0.03);
  // The shaft hinge's peak |angle| over the downswing's samples (every 2
  // ms; the 4.5 Hz mode's period is 222 ms). The design reaches 0.37 rad
  // (0.27 m at the tip; the previous one 0.48 rad), asserted below 0.4:
  // the 0.2 rad (0.15 m) that would match real drivers was not reached by
  // the search (docs/problems.md, "Where it falls short").
  int flex_q = -1;
  for (int i = 0; i < p.model.nq(); ++i)
    if (p.model.coordinate_names()[i] == "shaft_flex") flex_q = i;
  ASSERT_GE(flex_q, 0);
  double peak_flex = 0.0;
  for (const Sample& smp : c.samples)
    peak_flex = std::max(peak_flex, std::abs(smp.q[flex_q]));
  EXPECT_LE(peak_flex, 0.4);

  // Energy balance: the residual E - E0 - (work) is integration error,
  // of order rtol times the energy scale; asserted at 10 rtol of the
  // total input work (absolute values).
  double work = 0.0;
  for (Eigen::Index k = 0; k < last.input_work.size(); ++k)
    work += std::abs(last.input_work[k]);
  EXPECT_GT(work, 100.0);
  EXPECT_LT(s.energy_residual_max, 10.0 * 1e-6 * work);

  // Grip power: -lambda . v_hand + lambda . v_club = lambda . (J v), the
  // constraint power, which Baumgarte keeps at the velocity drift: by
  // Cauchy-Schwarz |sum| <= |lambda| |J v| <= |lambda| sqrt(3) max|J_i v|
  // (plus round-off of the two powers, 1e-12 of their size). Relative to
  // the peak grip power it is of order the drift (rtol |v| ~ 1e-5 m/s)
  // times |lambda| over that peak: asserted below 1e-5.
  double peak = 0.0, worst_sum = 0.0;
  for (const Sample& smp : c.samples) {
    const Vector3d lam = smp.lambda.head<3>();
    const gd::GripPowers gp = gd::GripPower(g.kin, smp.q, smp.v, prm, lam);
    const double sum = gp.hand + gp.club;
    EXPECT_LE(std::abs(sum),
              lam.norm() * std::sqrt(3.0) * smp.drift_velocity +
                  1e-12 * (std::abs(gp.hand) + std::abs(gp.club)))
        << "t = " << smp.t;
    // The same as the model's constraint power lambda_i (J_i v).
    EXPECT_NEAR(sum, smp.power.sum(),
                1e-9 * (std::abs(gp.hand) + std::abs(gp.club)) + 1e-12);
    peak = std::max(peak, std::abs(gp.club));
    worst_sum = std::max(worst_sum, std::abs(sum));
  }
  EXPECT_GT(peak, 100.0);
  EXPECT_LT(worst_sum, 1e-5 * peak);
  EXPECT_LT(s.drift_quaternion_max, 1e-5);
  std::printf(
      "golfer_3d: impact at t = %.4f s, clubhead %.2f m/s, head %.3f m "
      "above the ball, %.3f m along x; peak shaft hinge %.3f rad; input "
      "work %.1f J, energy residual %.2e J; grip power peak %.1f W, |hand "
      "+ club| <= %.2e W; quaternion drift %.1e\n",
      last.t, speed, head.z() - ball.z(), head.x() - ball.x(), peak_flex, work,
      s.energy_residual_max, peak, worst_sum, s.drift_quaternion_max);
}

// The index-1 forms keep the quaternions near unit norm over the first
// 0.1 s of the swing (projection: to round-off; the others: to the
// integration error, rtol 1e-6, asserted at 1e-5) and the closure at the
// drift their stabilization allows.
TEST(Golfer3d, IndexOneFormsKeepTheQuaternionsUnit) {
  // Under the sanitizers (-O0) the energy form's dual numbers took 327 s
  // for the three forms over 0.1 s (66 s over 0.005 s); the formulations'
  // handling of the quaternion does not depend on how M and h are
  // evaluated, so that build runs the recursive form (which
  // RecursiveFormMatchesTheEnergyForm ties to the energy form) over the
  // whole 0.1 s.
#ifdef DAEDALUS_SANITIZER_BUILD
  const problems::Golfer3d g =
      problems::MakeGolfer3d(mb::DynamicsForm::kRecursive);
#else
  const problems::Golfer3d g = problems::MakeGolfer3d();
#endif
  const Problem& p = g.problem;
  const VectorXd prm = p.model.default_parameters();
  for (Formulation f : {Formulation::kBaumgarte, Formulation::kUnstabilized,
                        Formulation::kProjection}) {
    SimulationOptions o = SwingOptions(p);
    o.formulation = f;
    o.integrator = Integrator::kCvodesBdf;
    o.t_end = 0.1;
    const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o);
    ASSERT_TRUE(s.ok) << ToString(f) << ": " << s.error;
    EXPECT_NEAR(s.t_reached, o.t_end, 1e-12) << ToString(f);
    EXPECT_LT(s.drift_quaternion_max,
              f == Formulation::kProjection ? 1e-12 : 1e-5)
        << ToString(f);
    std::printf("golfer_3d %s: quaternion drift %.1e, position drift %.1e\n",
                ToString(f), s.drift_quaternion_max, s.drift_position_max);
  }
}

// The recursive form (CRBA and RNEA on the tree, --dynamics recursive)
// against the energy form: M and h at random states to 1e-12 relative
// (round-off of two independent computations, measured ~1e-15), and the
// first 0.05 s of the swing at rtol 1e-10 to 1e-8 (the two runs differ by
// the integration error only: 2e-6 over the whole swing at the default
// rtol 1e-8).
TEST(Golfer3d, RecursiveFormMatchesTheEnergyForm) {
  const problems::Golfer3d ge = problems::MakeGolfer3d();
  const problems::Golfer3d gr =
      problems::MakeGolfer3d(mb::DynamicsForm::kRecursive);
  const Model& me = ge.problem.model;
  const Model& mr = gr.problem.model;
  ASSERT_EQ(me.nq(), mr.nq());
  ASSERT_EQ(me.nv(), mr.nv());
  const VectorXd prm = me.default_parameters();
  Workspace we(me), wr(mr);
  we.SetParameters(prm);
  wr.SetParameters(prm);
  std::mt19937 gen(11);
  for (int k = 0; k < 5; ++k) {
    const State st = RandomState(ge, gen);
    we.SetState(0.1, st.q, st.v);
    wr.SetState(0.1, st.q, st.v);
    EvaluateAll(&we);
    EvaluateAll(&wr);
    const double m_scale = we.M.cwiseAbs().maxCoeff();
    const double h_scale = we.h.cwiseAbs().maxCoeff();
    ASSERT_GT(h_scale, 1.0);
    EXPECT_LT((we.M - wr.M).cwiseAbs().maxCoeff(), 1e-12 * m_scale) << k;
    EXPECT_LT((we.h - wr.h).cwiseAbs().maxCoeff(), 1e-12 * h_scale) << k;
    EXPECT_LT((we.J - wr.J).cwiseAbs().maxCoeff(), 1e-14) << k;
  }

  DAEDALUS_RELEASE_BUILD_ONLY(
      "0.05 s of swing at rtol 1e-10 on the energy form's dual numbers");
  SimulationOptions o = SwingOptions(ge.problem);
  o.t_end = 0.05;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  const SimulationSummary se = Simulate(me, ge.problem.initial(prm), prm, o);
  const SimulationSummary sr = Simulate(mr, gr.problem.initial(prm), prm, o);
  ASSERT_TRUE(se.ok) << se.error;
  ASSERT_TRUE(sr.ok) << sr.error;
  EXPECT_LT((se.final.q - sr.final.q).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((se.final.v - sr.final.v).cwiseAbs().maxCoeff(), 1e-7);
  std::printf(
      "golfer_3d energy vs recursive over 0.05 s: |dq| %.1e |dv| %.1e\n",
      (se.final.q - sr.final.q).cwiseAbs().maxCoeff(),
      (se.final.v - sr.final.v).cwiseAbs().maxCoeff());
}

// DynamicsForm::kAuto: a description with ball or free joints gets the
// recursive form (its energy form would run on dual numbers), and so does
// one with 12 or more velocities; a small one without quaternions keeps
// the compiled energy form.
TEST(DynamicsFormAuto, PicksByQuaternionsAndSize) {
  std::string why;
  const Model golfer =
      problems::MakeGolfer3d(mb::DynamicsForm::kAuto).problem.model;
  EXPECT_FALSE(IsCompiled(golfer, &why));
  EXPECT_NE(why.find("recursive"), std::string::npos) << why;
  auto chain = [](int n) {
    ModelBuilder b("chain");
    mb::Multibody s(mb::Dimension::kSpatial);
    mb::FrameIndex parent = s.world();
    for (int i = 0; i < n; ++i) {
      std::string name = "l";  // (GCC 12 warns falsely on "l" + string)
      name += std::to_string(i);
      const mb::BodyIndex body = s.AddBody(
          name,
          mb::SpatialBody(1.0, mb::PVec(0.0, 0.0, 0.05), 0.01, 0.01, 0.002));
      s.AddJoint(name, mb::Joint::Revolute(Vector3d::Unit(i % 3)), parent,
                 s.BodyFrame(body));
      parent = s.AddFrame(name + "_end", body, mb::PVec(0.0, 0.0, 0.1));
    }
    std::move(s).AddTo(&b, mb::DynamicsForm::kAuto);
    return std::move(b).Build();
  };
  EXPECT_TRUE(IsCompiled(chain(mb::kAutoRecursiveVelocities - 1), &why)) << why;
  EXPECT_FALSE(IsCompiled(chain(mb::kAutoRecursiveVelocities), &why));
  EXPECT_NE(why.find("recursive"), std::string::npos) << why;
  EXPECT_EQ(mb::DynamicsFormFromString("auto"), mb::DynamicsForm::kAuto);
  EXPECT_STREQ(mb::ToString(mb::DynamicsForm::kAuto), "auto");
}

}  // namespace golfer_3d_test
}  // namespace
}  // namespace daedalus
