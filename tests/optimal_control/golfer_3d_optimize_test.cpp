// golfer_3d's optimization (docs/optimal_control.md, "golfer_3d"): the
// functionals added for it (the clubhead's offset from the ball, the joint
// angles, the lead shoulder's swing and twist) against the frames' poses,
// and the shooting NLP's objective gradient and constraint Jacobian against
// central differences.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "daedalus/optimal_control.hpp"
#include "daedalus/run.hpp"
#include "golfer_3d.hpp"
#include "optimal_control/shooting.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace golfer_3d_optimize_test {

// The five drives of golfer_3d as piecewise-linear controls on `knots`
// knots over [0, 0.36] s, each starting at `guess` (N m), the head on the
// ball at impact, and joint ranges as path constraints: those of
// examples/optimal_control/golfer_3d.json and the lead elbow's and the
// lead arm's twist, which the spec leaves out (the elbow and the twist
// are passive; docs/optimal_control.md, "golfer_3d").
OptimalControlProblem Swing(int knots,
                            const std::map<std::string, double>& guess,
                            int path_samples) {
  OptimalControlProblem ocp;
  const std::vector<std::pair<std::string, double>> drives = {
      {"pelvis_drive", 200.0},
      {"torso_drive", 150.0},
      {"shoulder_drive_x", 90.0},
      {"shoulder_drive_z", 90.0},
      {"wrist_drive", 22.0}};
  for (const auto& [input, bound] : drives) {
    ControlChannel c;
    c.input = input;
    c.basis = ControlBasis::kPiecewiseLinear;
    for (int j = 0; j < knots; ++j) c.knots.push_back(0.36 * j / (knots - 1));
    c.initial = Eigen::VectorXd::Constant(knots, guess.at(input));
    c.lower = Eigen::VectorXd::Constant(1, -bound);
    c.upper = Eigen::VectorXd::Constant(1, bound);
    ocp.controls.push_back(c);
  }
  ocp.objective.push_back({"head_speed@impact", 1.0});
  ocp.maximize = true;
  ocp.constraints.push_back({"head_dx@impact", -0.005, 0.005});
  ocp.constraints.push_back({"head_dz@impact", -0.005, 0.005});
  ocp.path_constraints.push_back({"pelvis_turn", -0.96, 0.96});
  ocp.path_constraints.push_back({"torso_turn", -0.7854, 0.7854});
  ocp.path_constraints.push_back({"lead_elbow_flexion", -0.0873, 2.618});
  ocp.path_constraints.push_back({"wrist_cock", -0.1745, 0.6981});
  ocp.path_constraints.push_back({"lead_arm_swing", 0.0, 1.1736});
  ocp.path_constraints.push_back({"lead_arm_twist_cos", 0.342, 1.0});
  ocp.path_samples = path_samples;
  return ocp;
}

// A downswing that reaches impact within the horizon: torques on, the
// wrist uncocking.
const std::map<std::string, double> kGuess = {{"pelvis_drive", 150.0},
                                              {"torso_drive", 60.0},
                                              {"shoulder_drive_x", 20.0},
                                              {"shoulder_drive_z", 60.0},
                                              {"wrist_drive", -10.0}};

// The functionals at the start of the swing (the path rows at t = 0 sample
// the initial state) against the same quantities formed from the frames'
// poses: the joint coordinates the parameters set, the clubhead's centre
// of mass minus BallPosition(), and the lead shoulder's rotation R = R_S' R_B
// (socket and ball frames, whose y axis is the upper arm's at address)
// split into swing (the arm's axis turned from e_y to d = R e_y, cos = d_y)
// and twist (R_s' R about e_y, R_s the least rotation taking e_y to d).
// A shoulder start with a component about the arm's axis (shoulder0_y =
// 0.5 rad) makes the twist nonzero. Round-off of a few dozen operations.
TEST(Golfer3dOptimize, FunctionalsMatchTheFramePoses) {
  problems::Golfer3d g = problems::MakeGolfer3d(mb::DynamicsForm::kRecursive);
  Problem& p = g.problem;
  Eigen::VectorXd prm = p.model.default_parameters();
  prm[p.model.ParameterIndex("shoulder0_x")] = -0.5;
  prm[p.model.ParameterIndex("shoulder0_y")] = 0.5;
  prm[p.model.ParameterIndex("shoulder0_z")] = -1.2;
  OptimalControlProblem ocp = Swing(2, kGuess, 1);
  ocp.path_constraints.push_back({"head_dx", -10.0, 10.0});
  ocp.path_constraints.push_back({"head_dz", -10.0, 10.0});
  SimulationOptions sim = p.defaults;
  sim.t_end = 0.38;
  OptimizeOptions o;
  o.shooting_intervals = 1;
  internal::ShootingNlp nlp(p, ocp, sim, prm, o);
  double f = 0.0;
  Eigen::VectorXd gv;
  ASSERT_TRUE(nlp.Values(nlp.x0(), &f, &gv)) << nlp.error();
  std::map<std::string, double> at0;
  const std::vector<std::string>& names = nlp.constraint_names();
  for (size_t r = 0; r < names.size(); ++r) {
    const std::string tail = " at t = 0";
    const std::string& n = names[r];
    if (n.rfind("path ", 0) == 0 && n.size() > tail.size() &&
        n.compare(n.size() - tail.size(), tail.size(), tail) == 0)
      at0[n.substr(5, n.size() - 5 - tail.size())] = gv[Eigen::Index(r)];
  }
  ASSERT_EQ(at0.size(), 8u);

  const InitialState x0 = p.initial(prm);
  const mb::Kinematics& kin = g.kin;
  const double tol = 1e3 * testing::kRoundOff;
  EXPECT_NEAR(at0["pelvis_turn"], prm[p.model.ParameterIndex("pelvis0")], tol);
  EXPECT_NEAR(at0["torso_turn"], prm[p.model.ParameterIndex("torso0")], tol);
  EXPECT_NEAR(at0["wrist_cock"], prm[p.model.ParameterIndex("cock0")], tol);
  EXPECT_NEAR(at0["lead_elbow_flexion"], 0.0, tol);
  const Eigen::Vector3d head =
      kin.Pose<double>(kin.Frame("clubhead"), x0.q, prm).p -
      problems::golfer_detail::BallPosition();
  EXPECT_GT(head.norm(), 0.5);  // the top of the backswing
  EXPECT_NEAR(at0["head_dx"], head.x(), tol);
  EXPECT_NEAR(at0["head_dz"], head.z(), tol);

  const Eigen::Matrix3d rs =
      kin.Pose<double>(kin.Frame("lead_shoulder_socket"), x0.q, prm).R;
  const Eigen::Matrix3d rb =
      kin.Pose<double>(kin.Frame("lead_shoulder_ball"), x0.q, prm).R;
  const Eigen::Matrix3d r = rs.transpose() * rb;
  const Eigen::Vector3d ey = Eigen::Vector3d::UnitY();
  const Eigen::Vector3d d = r * ey;
  const Eigen::Matrix3d swing =
      Eigen::Quaterniond::FromTwoVectors(ey, d).toRotationMatrix();
  const Eigen::Matrix3d twist = swing.transpose() * r;
  EXPECT_NEAR((twist * ey - ey).norm(), 0.0, tol);  // a rotation about e_y
  const double twist_cos = twist(0, 0);
  EXPECT_LT(twist_cos, 0.99);  // shoulder0_y twists the arm
  EXPECT_NEAR(at0["lead_arm_swing"], 1.0 - d.y(), tol);
  EXPECT_NEAR(at0["lead_arm_twist_cos"], twist_cos, tol);
}

// Central differences of the NLP's f and g against Gradients() at the
// guess, along a direction that moves every coefficient (2 knots per
// drive, 10 coefficients): single shooting (forward sensitivities for the
// path rows and an event functional, the other event functionals by the
// count's choice), rtol 1e-12. Richardson extrapolation of two central
// differences at h and h/2, h = 2e-4 (the direction's entries are
// max(1, |w_i|) sin(k + 1.7 i), about 0.03 N m per 150 N m): truncation
// O(h^4). Bound 1e-6 of sum_i |J_ri d_i| (the derivative's size if every
// term added), per row and for the objective. Measured: at rtol 1e-11 two
// rows (wrist_cock at 0.127 s, the twist at 0.253 s) missed it by 1.4 and
// 2 times (the runs' error); at 1e-12 all pass. Column by column at h =
// 1e-3 the path rows at the end of the horizon (0.38 s, after the impact,
// as the club whips through) differed by up to 2.8e-5 of their largest
// entry, the differences' h^4 term (as on squat_to_stand). The test took
// 53 s of CPU at rtol 1e-12 (37 s at 1e-11) for 8 plain runs and one
// gradient of the controlled swing along two directions, where the plain
// golfer_3d runs in 0.25 s at 1e-11; CI keeps the first direction (4
// plain runs; the second, sin(2 + 1.7 i), passed as well): the whole
// Jacobian column by column, or a solve, would not fit in CI
// (docs/optimal_control.md, "golfer_3d"). The path rows at t = 0 sample
// the fixed initial state: zero in both.
TEST(Golfer3dOptimize, ShootingGradientsMatchCentralDifferences) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "5 runs of the controlled golfer_3d at rtol 1e-12");
  Problem p = problems::Golfer3dProblemForm(mb::DynamicsForm::kRecursive);
  SimulationOptions sim = p.defaults;
  sim.t_end = 0.38;
  sim.rtol = 1e-12;
  sim.atol = 1e-14;
  OptimizeOptions o;
  o.shooting_intervals = 1;
  internal::ShootingNlp nlp(p, Swing(2, kGuess, 3), sim,
                            p.model.default_parameters(), o);
  const Eigen::VectorXd w = nlp.x0();
  Eigen::VectorXd grad;
  Eigen::MatrixXd jac;
  ASSERT_TRUE(nlp.Gradients(w, &grad, &jac)) << nlp.error();
  // One forward run gives the objective and both constraints at the
  // impact (SensitivityOptions::more_functionals): no adjoint runs.
  EXPECT_EQ(nlp.forward_runs, 1);
  EXPECT_EQ(nlp.adjoint_runs, 0);
  auto central = [&](const Eigen::VectorXd& d, double h, double* df,
                     Eigen::VectorXd* dg) {
    double fa = 0.0, fb = 0.0;
    Eigen::VectorXd ga, gb;
    if (!nlp.Values(w + h * d, &fa, &ga) || !nlp.Values(w - h * d, &fb, &gb))
      return false;
    *df = (fa - fb) / (2 * h);
    *dg = (ga - gb) / (2 * h);
    return true;
  };
  for (int k = 1; k <= 1; ++k) {
    SCOPED_TRACE("direction " + std::to_string(k));
    Eigen::VectorXd d(nlp.n());
    for (int i = 0; i < nlp.n(); ++i)
      d[i] = std::max(1.0, std::abs(w[i])) * std::sin(k + 1.7 * i);
    const double h = 2e-4;
    double d1 = 0.0, d2 = 0.0;
    Eigen::VectorXd g1, g2;
    ASSERT_TRUE(central(d, h, &d1, &g1)) << nlp.error();
    ASSERT_TRUE(central(d, 0.5 * h, &d2, &g2)) << nlp.error();
    const double fd_f = (4.0 * d2 - d1) / 3.0;
    const Eigen::VectorXd fd_g = (4.0 * g2 - g1) / 3.0;
    const double fscale = grad.cwiseProduct(d).cwiseAbs().sum();
    ASSERT_GT(fscale, 0.0);
    EXPECT_LE(std::abs(grad.dot(d) - fd_f), 1e-6 * fscale)
        << grad.dot(d) << " against " << fd_f;
    int constant_rows = 0;
    for (int r = 0; r < nlp.m(); ++r) {
      const std::string& name = nlp.constraint_names()[size_t(r)];
      const double scale =
          jac.row(r).cwiseProduct(d.transpose()).cwiseAbs().sum();
      if (scale == 0.0) {
        EXPECT_TRUE(name.size() > 9 &&
                    name.compare(name.size() - 9, 9, " at t = 0") == 0)
            << name;
        EXPECT_LE(std::abs(fd_g[r]), 1e-9) << name;
        ++constant_rows;
        continue;
      }
      EXPECT_LE(std::abs(jac.row(r).dot(d) - fd_g[r]), 1e-6 * scale)
          << name << ": " << jac.row(r).dot(d) << " against " << fd_g[r];
    }
    EXPECT_EQ(constant_rows, 6);
  }
}

}  // namespace golfer_3d_optimize_test
}  // namespace
}  // namespace daedalus
