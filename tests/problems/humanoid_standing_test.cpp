// humanoid_standing (problems/humanoid_standing.hpp, docs/problems.md): the
// shipped humanoid on box feet, held by its exact static-equilibrium
// torques and a PD about the pose. Release build only: the model runs on
// dual numbers (its URDF is read at run time) and takes minutes under the
// sanitizers. The 5 s of standing run here (7 steps, under a
// second in release); bench/humanoid_standing.py measures it with
// MuJoCo's side.
#include "humanoid_standing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus::problems {
namespace {
namespace humanoid_standing_test {

class Collect : public Observer {
 public:
  Collect(const HumanoidStanding& h, const Eigen::VectorXd& p) : h_(h), p_(p) {}
  void OnSample(const Sample& s) override {
    m.push_back(MeasureStanding(h_, s.q, s.lambda, p_));
    speed.push_back(s.v.cwiseAbs().maxCoeff());
  }
  std::vector<StandingMeasures> m;
  std::vector<double> speed;  ///< max |v_i| per sample

 private:
  const HumanoidStanding& h_;
  Eigen::VectorXd p_;
};

// The standing run at the problem's defaults over [0, t_end].
SimulationSummary Stand(const HumanoidStanding& h,
                        const Eigen::VectorXd& p,
                        double t_end,
                        Collect* c,
                        KktMethod kkt = KktMethod::kAuto) {
  SimulationOptions o = h.problem.defaults;
  o.t_end = t_end;
  if (kkt != KktMethod::kAuto) o.kkt.method = kkt;
  return Simulate(h.problem.model, h.problem.initial(p), p, o, c);
}

// The inverse statics balances the base to round-off: the normal forces
// sum to m g, the pose is symmetric (equal feet), and the CoP of the
// corner forces is the centre of mass's projection (moments about the
// ground point of a body at rest under gravity and ground forces only).
TEST(HumanoidStanding, InverseStaticsBalancesTheBase) {
  const HumanoidStanding h = MakeHumanoidStanding(HumanoidUrdfPath());
  EXPECT_NEAR(h.mass, 62.9, 1e-9);  // the file's comment
  ASSERT_EQ(h.corners.size(), 8u);
  // Round-off of sums of ~600 N terms: 1e-9 relative is loose by 1e4.
  EXPECT_LE(h.base_residual, 1e-9 * h.weight);
  EXPECT_LE(h.joint_residual, 1e-9 * h.weight);
  EXPECT_NEAR(h.lambda_stand.sum(), h.weight, 1e-9 * h.weight);
  EXPECT_NEAR(h.lambda_stand.head<4>().sum(), h.lambda_stand.tail<4>().sum(),
              1e-9 * h.weight);
  EXPECT_GT(h.lambda_stand.minCoeff(), 0.0);
  const StandingMeasures m = MeasureStanding(
      h, h.q_stand,
      [&] {
        Eigen::VectorXd l = Eigen::VectorXd::Zero(h.problem.model.nc());
        for (int k = 0; k < 8; ++k) l[h.normal_rows[k]] = h.lambda_stand[k];
        return l;
      }(),
      h.problem.model.default_parameters());
  EXPECT_LE((m.cop - m.com).norm(), 1e-12);
  EXPECT_EQ(m.drift, 0.0);
  EXPECT_GT(m.cop_margin, 0.05);  // well inside both feet's hull
  // The torques are within the URDF's effort limits.
  for (size_t j = 0; j < h.robot.joints.size(); ++j)
    EXPECT_LE(std::abs(h.tau_stand[static_cast<Eigen::Index>(j)]),
              h.robot.joints[j].effort)
        << h.robot.joints[j].name;
}

// Convex hull margin: a unit square's centre is 0.5 inside, a point
// outside is negative, collinear points are no polygon.
TEST(HumanoidStanding, ConvexHullMargin) {
  const std::vector<Eigen::Vector2d> sq = {
      {0, 0}, {1, 0}, {1, 1}, {0, 1}, {0.5, 0.5}};
  EXPECT_DOUBLE_EQ(ConvexHullMargin(sq, {0.5, 0.5}), 0.5);
  EXPECT_DOUBLE_EQ(ConvexHullMargin(sq, {0.9, 0.5}), 0.1);
  EXPECT_DOUBLE_EQ(ConvexHullMargin(sq, {1.5, 0.5}), -0.5);
  EXPECT_TRUE(std::isinf(ConvexHullMargin({{0, 0}, {1, 1}, {2, 2}}, {1, 1})));
}

// Standing 5 s at the exact equilibrium: the feet do not move (a closed
// sticking contact is a constraint: the drift is integration round-off),
// the ground carries the weight, the CoP stays inside the support polygon
// of the 8 closed corners, and no contact changes mode.
TEST(HumanoidStanding, StandsStillWithoutCreep) {
  DAEDALUS_RELEASE_BUILD_ONLY("dual numbers, minutes");
  const HumanoidStanding h = MakeHumanoidStanding(HumanoidUrdfPath());
  const Eigen::VectorXd p = h.problem.model.default_parameters();
  Collect c(h, p);
  const SimulationSummary s = Stand(h, p, 5.0, &c);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GT(c.m.size(), 400u);
  double drift = 0.0, reaction = 0.0, margin = 1.0;
  for (const StandingMeasures& m : c.m) {
    drift = std::max(drift, m.drift);
    reaction = std::max(reaction, std::abs(m.reaction_error));
    margin = std::min(margin, m.cop_margin);
    EXPECT_EQ(m.closed, 8);
  }
  EXPECT_LE(drift, 1e-10);
  EXPECT_LE(reaction, 1e-9);
  EXPECT_GT(margin, 0.05);
  // Only the start's mode: no impact, release, closure or slip.
  ASSERT_EQ(s.contact.events.size(), 1u);
  EXPECT_EQ(s.contact.events[0].kind, "start");
  for (const FrictionContactReport& f : s.contact.friction)
    EXPECT_EQ(f.stick_to_slip, 0) << f.contact;
  // At rest the solution is constant: BDF's corrector converges and its
  // steps grow. CVODES's own difference-quotient Newton matrix, whose
  // increments at v = 0 were ~1e-27, failed at 7262 of 9935 steps over
  // 5 s (docs/formulations.md, "Newton systems"); measured now: 7 steps,
  // none.
  EXPECT_LE(s.stats.nonlinear_conv_failures, 1);
  EXPECT_LE(s.stats.steps, 20);
  std::cout << "humanoid standing 5 s: drift " << drift
            << " m, |reaction - m g|/(m g) " << reaction << ", CoP margin "
            << margin << " m, " << s.stats.steps << " steps\n";
}

// The same 5 s on the sparse KKT path (--kkt sparse-lu; docs/contact.md,
// "Where it runs"): the sparse evaluator differentiates the energy terms;
// the closed sole corners' rows (a normal and two sticking rows each,
// dependent within a foot: the minimum-norm split the problem allows) go
// to the sparse solver, the open joint limits and top corners do not.
// The same bounds as on the dense path, and each foot's normal force as
// the dense run's (each foot's wrench is unique: J' is injective on the
// two feet's wrenches, problems/humanoid_standing.hpp).
TEST(HumanoidStanding, StandsStillOnTheSparseKktPath) {
  DAEDALUS_RELEASE_BUILD_ONLY("dual numbers, minutes");
  const HumanoidStanding h = MakeHumanoidStanding(HumanoidUrdfPath());
  const Eigen::VectorXd p = h.problem.model.default_parameters();
  Collect c(h, p);
  const SimulationSummary s = Stand(h, p, 5.0, &c, KktMethod::kSparseLu);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GT(c.m.size(), 400u);
  double drift = 0.0, reaction = 0.0, margin = 1.0;
  for (const StandingMeasures& m : c.m) {
    drift = std::max(drift, m.drift);
    reaction = std::max(reaction, std::abs(m.reaction_error));
    margin = std::min(margin, m.cop_margin);
    EXPECT_EQ(m.closed, 8);
  }
  EXPECT_LE(drift, 1e-10);
  EXPECT_LE(reaction, 1e-9);
  EXPECT_GT(margin, 0.05);
  ASSERT_EQ(s.contact.events.size(), 1u);
  EXPECT_EQ(s.contact.events[0].kind, "start");
  for (const FrictionContactReport& f : s.contact.friction)
    EXPECT_EQ(f.stick_to_slip, 0) << f.contact;
  // The last sample's feet forces against the dense run's.
  Collect cd(h, p);
  const SimulationSummary d = Stand(h, p, 5.0, &cd);
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_NEAR(c.m.back().left_fz, cd.m.back().left_fz, 1e-9 * h.weight);
  EXPECT_NEAR(c.m.back().right_fz, cd.m.back().right_fz, 1e-9 * h.weight);
  std::cout << "humanoid standing 5 s, sparse-lu: drift " << drift
            << " m, |reaction - m g|/(m g) " << reaction << ", CoP margin "
            << margin << " m, " << s.stats.steps << " steps\n";
}

// A small push (0.5 N s along +x on the pelvis at t = 0, the closed rows'
// impact map) is rejected by the PD: the feet stay closed and sticking (no
// contact event, drift <= 1e-10 m) and the motion decays. An 8 Hz
// critically damped mode alone would leave e^(-omega t)(1 + omega t) =
// 5e-6 of its speed after 0.3 s; gravity's squat mode decays slower
// (measured: 0.151 -> 3.05e-5, a ratio of 2.0e-4), so the bound is 1e-3.
TEST(HumanoidStanding, RejectsASmallPush) {
  DAEDALUS_RELEASE_BUILD_ONLY("dual numbers, minutes");
  const HumanoidStanding h = MakeHumanoidStanding(HumanoidUrdfPath());
  Eigen::VectorXd p = h.problem.model.default_parameters();
  p[h.problem.model.ParameterIndex("push_impulse")] = 0.5;
  Collect c(h, p);
  const SimulationSummary s = Stand(h, p, 0.3, &c);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_GT(c.speed.size(), 20u);
  EXPECT_GT(c.speed.front(), 0.1);  // the push moved it
  EXPECT_LE(c.speed.back(), 1e-3 * c.speed.front());
  double drift = 0.0;
  for (const StandingMeasures& m : c.m) {
    drift = std::max(drift, m.drift);
    EXPECT_EQ(m.closed, 8);
    EXPECT_GT(m.cop_margin, 0.0);
  }
  EXPECT_LE(drift, 1e-10);
  ASSERT_EQ(s.contact.events.size(), 1u);
  std::cout << "pushed 0.5 N s: max |v| " << c.speed.front() << " -> "
            << c.speed.back() << " at 0.3 s, drift " << drift << " m\n";
}

// A push of 1 N s tips it onto its toes: with the sole corners sticking,
// the heels' normal forces would be negative in every split of the
// redundant forces (-9.13 N each, the toes 154.4 N), so the four heel
// corners release at t = 0 (decided with the sticking rows held,
// src/contact/frictional_release.hpp; the frictionless contact stage
// alone kept them closed, and the run ended at t = 0 with a singular
// slipping KKT system). The PD brings them back: the heels strike at
// 2.49 ms (restitution 0), and all eight corners are closed and stick
// again, with no slip.
TEST(HumanoidStanding, APushLiftsTheHeelsAndTheyLandAgain) {
  DAEDALUS_RELEASE_BUILD_ONLY("dual numbers, minutes");
  const HumanoidStanding h = MakeHumanoidStanding(HumanoidUrdfPath());
  Eigen::VectorXd p = h.problem.model.default_parameters();
  p[h.problem.model.ParameterIndex("push_impulse")] = 1.0;
  Collect c(h, p);
  const SimulationSummary s = Stand(h, p, 0.05, &c);
  ASSERT_TRUE(s.ok) << s.error;
  std::vector<std::string> kinds, heels;
  for (const ContactEvent& e : s.contact.events) {
    kinds.push_back(e.kind);
    if (e.kind == "release") {
      EXPECT_EQ(e.t, 0.0);
      heels = e.rows;
    }
    if (e.kind == "impact") {
      EXPECT_GT(e.t, 2e-3);
      EXPECT_LT(e.t, 3e-3);
    }
  }
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"start", "release", "impact", "stick"}));
  ASSERT_EQ(heels.size(), 4u);
  for (const std::string& n : heels)
    EXPECT_NE(n.find(":-x"), std::string::npos) << n;  // heel corners
  EXPECT_EQ(c.m.back().closed, 8);
  EXPECT_LE(std::abs(s.energy_residual_max), 1e-8);
  std::cout << "pushed 1 N s: heels released at 0, impacts at";
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "impact") std::cout << " " << e.t;
  std::cout << " s; energy residual " << s.energy_residual_max << " J\n";
}

// A push of 20 N s throws it off the ground; its toes land slipping, and
// at 19.2 ms a right toe corner whose slip has stopped fails its stick
// test while its neighbour sticks: slipping from rest it can only turn
// about that neighbour, and no slip direction is consistent (its
// acceleration opposes every one the onset's fixed point tries). The run
// ends there naming the corner, in seconds; before, the slip went on
// with its friction along a direction it did not move in, and CVODES's
// Newton iteration failed at nearly every step (5854 convergence failures
// in 11263 steps to 0.02 s, 120 s of CPU).
TEST(HumanoidStanding, AnInconsistentSlipOnsetEndsAHardPushByName) {
  DAEDALUS_RELEASE_BUILD_ONLY("dual numbers, minutes");
  const HumanoidStanding h = MakeHumanoidStanding(HumanoidUrdfPath());
  Eigen::VectorXd p = h.problem.model.default_parameters();
  p[h.problem.model.ParameterIndex("push_impulse")] = 20.0;
  Collect c(h, p);
  const SimulationSummary s = Stand(h, p, 0.05, &c);
  ASSERT_FALSE(s.ok);
  EXPECT_NE(s.error.find("no consistent slip onset was found for "
                         "'right_sole:ground:+x-y-z'"),
            std::string::npos)
      << s.error;
  EXPECT_GT(s.final.t, 0.019);
  EXPECT_LT(s.final.t, 0.0195);
  EXPECT_EQ(s.contact.impacts, 8);
  EXPECT_LE(std::abs(s.energy_residual_max), 1e-7);
  std::cout << "pushed 20 N s: ended at t = " << s.final.t << ": " << s.error
            << "\n";
}

}  // namespace humanoid_standing_test
}  // namespace
}  // namespace daedalus::problems
