// golfer_3d striking a ball (problems/golfer_3d_strike.hpp, issue 36):
//   - the strike model keeps golfer_3d's description: its coordinates,
//     parameters, closure rows and initial pose come first, unchanged;
//   - a free head of golfer_3d's head mass striking the ball on its tee
//     obliquely (the ball's declarations and functionals shared with the
//     problem): the closed-form impulse, smash factor and loss, the launch
//     functionals equal to the strike's direction after a flight under
//     gravity, and d ball_speed/de, d ball_speed/dm_ball in closed form;
//   - the swing: the ball sits where golfer_3d's head arrives; one strike,
//     Newton's law on its row, the smash factor that the club's effective
//     mass (the Delassus operator at the strike) predicts, between the
//     free head's and (1 + e); the energy balance with the strike's loss
//     booked as impact work; the gradient of ball_speed across the strike
//     against its closed forms and central differences of whole runs.
#include "golfer_3d_strike.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "golf_impact.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace golfer_3d_strike_test {

namespace sd = problems::strike_detail;
using Eigen::Vector3d;
using Eigen::VectorXd;

// Velocities after one impulse LCP: round-off of a few dense solves.
constexpr double kImpulseRoundOff = 1e-12;

struct Collector : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

std::vector<ContactEvent> Impacts(const SimulationSummary& s) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : s.contact.events)
    if (e.kind == "impact") out.push_back(e);
  return out;
}

// The row of a one-row constraint (constraint rows in declaration order).
int Row(const Model& model, const std::string& name) {
  int row = 0;
  for (const internal::ConstraintDecl& c : model.constraints()) {
    if (c.name == name) return row;
    row += c.rows;
  }
  ADD_FAILURE() << "no constraint " << name;
  return 0;
}

double Functional(const SimulationSummary& s, const std::string& name) {
  for (const FunctionalValue& f : s.functionals)
    if (f.name == name) return f.value;
  ADD_FAILURE() << "no functional " << name;
  return 0.0;
}

// The samples just before and just after the impact at t (the run writes
// one on each side of a switch).
struct AroundImpact {
  const Sample* before = nullptr;
  const Sample* after = nullptr;
};
AroundImpact Around(const std::vector<Sample>& samples, double t) {
  AroundImpact a;
  for (size_t i = 0; i + 1 < samples.size(); ++i)
    if (samples[i].t == t && samples[i + 1].t == t) {
      a.before = &samples[i];
      a.after = &samples[i + 1];
    }
  return a;
}

// A point mass on three prismatic joints from the world (two massless
// carriages), as the ball.
mb::BodyIndex PointBody(mb::Multibody* s, const std::string& name, double m) {
  const mb::BodySpec none = mb::SpatialBody(0.0, mb::PVec(), 0.0, 0.0, 0.0);
  const mb::BodyIndex cx = s->AddBody(name + "_carriage_x", none);
  const mb::BodyIndex cy = s->AddBody(name + "_carriage_y", none);
  const mb::BodyIndex body =
      s->AddBody(name, mb::SpatialBody(m, mb::PVec(), 0.0, 0.0, 0.0));
  s->AddJoint(name + "_x", mb::Joint::Prismatic(Vector3d::UnitX()), s->world(),
              s->BodyFrame(cx));
  s->AddJoint(name + "_y", mb::Joint::Prismatic(Vector3d::UnitY()),
              s->BodyFrame(cx), s->BodyFrame(cy));
  s->AddJoint(name + "_z", mb::Joint::Prismatic(Vector3d::UnitZ()),
              s->BodyFrame(cy), s->BodyFrame(body));
  return body;
}

// golfer_3d's head mass [kg] (docs/problems.md, "golfer_3d": the club).
constexpr double kHeadMass = 0.200;

// A free head (a point mass kHeadMass with the clubhead's sphere) at 40
// m/s along d, rising 0.2 rad and turned 0.05 rad to the right of the
// target line, 4 mm short of the ball on its tee; gravity on both.
problems::Golfer3dStrike FreeHeadStrike(Vector3d* d) {
  ModelBuilder b("free_head_strike");
  mb::Multibody s(mb::Dimension::kSpatial);
  const Param g = b.Parameter("g", 9.81);
  s.SetGravity(mb::PVec(0.0, 0.0, -mb::PExpr(g)));
  const mb::BodyIndex head = PointBody(&s, "head", kHeadMass);
  const Vector3d address(0.3, 0.1, 0.06);
  const sd::Ball ball = sd::DeclareBall(&b, &s, g, address);
  const mb::GeometryIndex hs = s.AddGeometry(
      head,
      sd::CollisionSphere("head_sphere", sd::kHeadRadius, Vector3d::Zero()));
  s.AddContact("strike", hs, ball.sphere, sd::StrikeLaw());
  problems::Golfer3dStrike out;
  out.kin = std::move(s).AddTo(&b);
  Problem& p = out.problem;
  p.model = std::move(b).Build();
  const double el = 0.2, az = 0.05, speed = 40.0;
  *d = Vector3d(std::cos(el) * std::sin(az), std::cos(el) * std::cos(az),
                std::sin(el));
  const Vector3d dir = *d;
  const int bq = ball.q;
  p.initial = [=](const VectorXd&) {
    InitialState st;
    st.q = VectorXd::Zero(6);
    st.v = VectorXd::Zero(6);
    st.q.head<3>() =
        address - (sd::kHeadRadius + sd::kBallRadius + 0.004) * dir;
    st.v.head<3>() = speed * dir;
    st.q.segment<3>(bq) = address;
    return st;
  };
  p.defaults.t_end = 0.05;
  p.defaults.output_step = 0.001;
  p.defaults.rtol = 1e-12;
  p.defaults.atol = 1e-14;
  p.defaults.integrator = Integrator::kCvodesBdf;
  p.defaults.formulation = Formulation::kBaumgarte;
  return out;
}

// The model's description is golfer_3d's, with the ball after it: the
// same coordinates, velocities, parameters (names and values) and closure
// rows first, and golfer_3d's pose at the top of the backswing exactly.
TEST(Golfer3dStrike, KeepsGolfer3dsDescriptionFirst) {
  const Problem g = problems::Golfer3dProblemForm(mb::DynamicsForm::kAuto);
  const Problem s = problems::MakeGolfer3dStrike().problem;
  const Model& mg = g.model;
  const Model& ms = s.model;
  ASSERT_EQ(ms.nq(), mg.nq() + 3);
  ASSERT_EQ(ms.nv(), mg.nv() + 3);
  for (int i = 0; i < mg.nq(); ++i)
    EXPECT_EQ(ms.coordinate_names()[i], mg.coordinate_names()[i]);
  EXPECT_EQ(ms.coordinate_names()[mg.nq()], "ball_x");
  EXPECT_EQ(ms.coordinate_names()[mg.nq() + 2], "ball_z");
  const VectorXd pg = mg.default_parameters(), ps = ms.default_parameters();
  ASSERT_EQ(ps.size(), pg.size() + 2);
  for (Eigen::Index i = 0; i < pg.size(); ++i) {
    EXPECT_EQ(ms.parameter_names()[i], mg.parameter_names()[i]);
    EXPECT_EQ(ps[i], pg[i]) << mg.parameter_names()[i];
  }
  EXPECT_EQ(ps[ms.ParameterIndex("m_ball")], sd::kBallMass);
  EXPECT_EQ(ps[ms.ParameterIndex("e")], sd::kDriverRestitution);
  EXPECT_EQ(Row(ms, "trail_grip"), 0);
  EXPECT_EQ(Row(ms, "tee"), 3);  // the ball's, then the strike
  EXPECT_EQ(Row(ms, "strike"), 4);
  const InitialState xg = g.initial(pg), xs = s.initial(ps);
  EXPECT_EQ(xs.q.head(mg.nq()), xg.q);
  EXPECT_EQ(xs.v.head(mg.nv()), xg.v);
  EXPECT_EQ(Vector3d(xs.q.tail<3>()), sd::StrikeBallAddress());
  EXPECT_TRUE(xs.v.tail<3>().isZero(0.0));
}

// A free head striking the ball: the impulse law alone on the problem's
// ball, tee and functionals. With one active contact (the tee lets go,
// the head rising) between point masses, Newton's law gives the impulse
// P = (1 + e) u / (1 / mh + 1 / mb), u the approach speed along the line
// of centres n, whatever the head's velocity across n; the ball leaves
// along n at P / mb = (1 + e) mh / (mh + mb) u, and the strike loses
// (1 - e^2) mu u^2 / 2, mu = mh mb / (mh + mb). In flight the functionals
// recover the launch: speed P / mb, elevation asin(n_z), direction
// atan2(n_x, n_y). Forward sensitivities: the state before the strike
// does not depend on e or mb, so d ball_speed/de = ball_speed / (1 + e)
// and d ball_speed/dmb = -ball_speed / (mh + mb).
TEST(Golfer3dStrike, AFreeHeadLaunchesTheBallInClosedForm) {
  Vector3d d;
  const problems::Golfer3dStrike fh = FreeHeadStrike(&d);
  const Problem& p = fh.problem;
  const VectorXd prm = p.model.default_parameters();
  const double mb = sd::kBallMass, mh = kHeadMass, e = sd::kDriverRestitution;
  Collector c;
  SimulationOptions o = p.defaults;
  o.sensitivity.method = SensMethod::kForward;
  o.sensitivity.parameters = {"e", "m_ball"};
  o.sensitivity.functional = "ball_speed";
  o.sensitivity.initial_tangent = InitialStateTangent(p, prm);
  const SimulationSummary s = Simulate(p.model, p.initial(prm), prm, o, &c);
  ASSERT_TRUE(s.ok) << s.error;
  const std::vector<ContactEvent> hits = Impacts(s);
  ASSERT_EQ(hits.size(), 1u);
  const ContactEvent& hit = hits[0];
  const int strike = Row(p.model, "strike"), tee = Row(p.model, "tee");
  const AroundImpact at = Around(c.samples, hit.t);
  ASSERT_NE(at.before, nullptr);
  const Vector3d ch = at.before->q.head<3>(), cb = at.before->q.tail<3>();
  const Vector3d n = (cb - ch).normalized();
  EXPECT_NEAR((cb - ch).norm(), sd::kHeadRadius + sd::kBallRadius, 1e-12);
  // The head has fallen for 0.1 ms: the strike is all but central.
  EXPECT_GT(n.dot(d), 0.999999);
  const double u = -hit.u_minus[strike];
  EXPECT_NEAR(u, n.dot(at.before->v.head<3>()), kImpulseRoundOff * u);
  EXPECT_NEAR(hit.u_plus[strike], e * u, kImpulseRoundOff * u);
  const double impulse = (1.0 + e) * u / (1.0 / mh + 1.0 / mb);
  EXPECT_NEAR(hit.impulse[strike], impulse, kImpulseRoundOff * impulse);
  EXPECT_EQ(hit.impulse[tee], 0.0);
  EXPECT_GT(hit.u_plus[tee], 0.0);  // the tee lets go
  const Vector3d vb = at.after->v.tail<3>();
  EXPECT_LT((vb - impulse / mb * n).norm(), kImpulseRoundOff * vb.norm());
  const double smash = vb.norm() / u;
  EXPECT_NEAR(smash, problems::FreeHeadSmashFactor(mh, mb, e),
              kImpulseRoundOff);
  const double mu = mh * mb / (mh + mb);
  const double loss = 0.5 * (1.0 - e * e) * mu * u * u;
  EXPECT_NEAR(hit.energy_change, -loss, kImpulseRoundOff * loss);
  EXPECT_NEAR(s.contact.impact_work, hit.energy_change, 1e-12 * loss);
  // After 0.05 s of flight (the ball 3 m from its tee, 0.58 m up) the
  // functionals give the launch to the run's error (rtol 1e-12).
  const double launch = Functional(s, "ball_speed");
  EXPECT_GT(s.final.q.tail<3>().z() - cb.z(), 0.3);
  EXPECT_NEAR(launch, vb.norm(), 1e-10 * launch);
  EXPECT_NEAR(Functional(s, "launch_angle"), std::asin(n.z()), 1e-10);
  EXPECT_NEAR(Functional(s, "launch_direction"), std::atan2(n.x(), n.y()),
              1e-10);
  ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
  const VectorXd grad = s.sensitivities.functionals[0].second;
  EXPECT_NEAR(grad[0], launch / (1.0 + e), 1e-9 * launch);
  EXPECT_NEAR(grad[1], -launch / (mh + mb), 1e-9 * launch / mb);
  std::printf(
      "free head: smash %.15f (closed form %.15f), launch %.6f m/s at %.6f "
      "rad, d/de %.9g (%.9g), d/dmb %.9g (%.9g)\n",
      smash, problems::FreeHeadSmashFactor(mh, mb, e), launch,
      Functional(s, "launch_angle"), grad[0], launch / (1.0 + e), grad[1],
      -launch / (mh + mb));
}

// golfer_3d's default run (the executable's: the recursive form at its
// defaults) to its impact event: the head's centre of mass there moved by
// r_head + r_ball along its velocity is the ball's address, to the
// integration error (rtol 1e-8 over 0.32 s; the address was computed from
// this run).
TEST(Golfer3dStrike, TheBallSitsWhereTheHeadArrives) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "golfer_3d's whole downswing; AFreeHeadLaunchesTheBallInClosedForm "
      "checks the ball's declarations under the sanitizers");
  const problems::Golfer3d g = problems::MakeGolfer3d(mb::DynamicsForm::kAuto);
  const Problem& p = g.problem;
  const VectorXd prm = p.model.default_parameters();
  const SimulationSummary s =
      Simulate(p.model, p.initial(prm), prm, p.defaults);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(s.events.size(), 1u);
  const Vector3d head =
      g.kin.Pose<double>(g.kin.Frame("clubhead"), s.final.q, prm).p;
  const Vector3d v = problems::golfer_detail::ClubheadVelocity(g.kin, s.final.q,
                                                               s.final.v, prm);
  const Vector3d ball =
      head + (sd::kHeadRadius + sd::kBallRadius) * v.normalized();
  std::printf("golfer_3d impact at %.9f s: ball address %.17g %.17g %.17g\n",
              s.final.t, ball.x(), ball.y(), ball.z());
  EXPECT_LT((ball - sd::StrikeBallAddress()).norm(), 1e-7);
}

// The default run of golfer_3d_strike.
struct Swing {
  problems::Golfer3dStrike g = problems::MakeGolfer3dStrike();
  const Problem& p = g.problem;
  VectorXd prm = p.model.default_parameters();
  double mb = prm[p.model.ParameterIndex("m_ball")];
  double e = prm[p.model.ParameterIndex("e")];
};

// The club's inverse mass along the strike's normal, 1 / m_eff: the
// strike's entry of the Delassus operator J_c W J_c' (docs/contact.md,
// "The LCPs"; W the inverse mass with the trail_grip rows eliminated) at
// the state before the strike, less the ball's 1 / m_ball.
double ClubInverseMass(const Swing& w, const Sample& before) {
  const Model& m = w.p.model;
  Workspace ws(m);
  ws.SetParameters(w.prm);
  ws.SetState(before.t, before.q, before.v);
  EvaluateAll(&ws);
  const Eigen::MatrixXd minv =
      ws.M.llt().solve(Eigen::MatrixXd::Identity(m.nv(), m.nv()));
  const Eigen::MatrixXd jb = ws.J.topRows(3);  // trail_grip
  const Eigen::MatrixXd mjb = minv * jb.transpose();
  const Eigen::MatrixXd wm =
      minv - mjb * (jb * mjb).fullPivLu().solve(mjb.transpose());
  const VectorXd js = ws.J.row(Row(m, "strike")).transpose();
  return js.dot(wm * js) - 1.0 / w.mb;
}

// One strike, near golfer_3d's impact, central to within the run's error;
// Newton's law on the strike's row; the tee lets go and the ball flies
// along the normal with the strike's impulse. The smash factor is the
// one the club's effective mass m_eff predicts, (1 + e) m_eff / (m_eff +
// mb), and the loss (1 - e^2) u^2 / (2 (1 / m_eff + 1 / mb)): with m_eff
// at least the head's mass (its kinetic energy is a part of the club's)
// the ball leaves faster than a free head would send it, and slower than
// (1 + e) u (an infinitely heavy club). The energy balance books the loss
// as impact work.
TEST(Golfer3dStrike, TheStrikeObeysTheImpulseLawAndTheEnergyBalance) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "golfer_3d's whole downswing and follow-through; "
      "AFreeHeadLaunchesTheBallInClosedForm runs the impulse law there");
  const Swing w;
  Collector c;
  const SimulationSummary s =
      Simulate(w.p.model, w.p.initial(w.prm), w.prm, w.p.defaults, &c);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_NEAR(s.t_reached, w.p.defaults.t_end, 1e-12);
  const std::vector<ContactEvent> hits = Impacts(s);
  ASSERT_EQ(hits.size(), 1u) << "one strike";
  const ContactEvent& hit = hits[0];
  const int strike = Row(w.p.model, "strike"), tee = Row(w.p.model, "tee");
  EXPECT_NEAR(hit.t, 0.3219, 2e-4);  // golfer_3d's impact
  const AroundImpact at = Around(c.samples, hit.t);
  ASSERT_NE(at.before, nullptr);
  const int bq = w.p.model.nq() - 3, bv = w.p.model.nv() - 3;
  const Vector3d cb = at.before->q.segment<3>(bq);
  const Vector3d ch =
      w.g.kin.Pose<double>(w.g.kin.Frame("clubhead"), at.before->q, w.prm).p;
  const Vector3d n = (cb - ch).normalized();
  const Vector3d vh = problems::golfer_detail::ClubheadVelocity(
      w.g.kin, at.before->q, at.before->v, w.prm);
  // Central: the normal along the head's velocity (the ball was put there
  // from golfer_3d's run; this run's error at rtol 1e-8 moves it by less
  // than a micrometre).
  EXPECT_GT(n.dot(vh.normalized()), 1.0 - 1e-9);
  // Newton's law on the strike's row.
  const double u = -hit.u_minus[strike];
  ASSERT_GT(u, 30.0);
  EXPECT_NEAR(u, n.dot(vh), kImpulseRoundOff * u);
  EXPECT_NEAR(hit.u_plus[strike], w.e * u, kImpulseRoundOff * u);
  const double impulse = hit.impulse[strike];
  EXPECT_GT(impulse, 0.0);
  EXPECT_EQ(hit.impulse[tee], 0.0);
  EXPECT_GT(hit.u_plus[tee], 0.0);
  const Vector3d vb = at.after->v.segment<3>(bv);
  EXPECT_LT((vb - impulse / w.mb * n).norm(), kImpulseRoundOff * vb.norm());
  EXPECT_GT(vb.z(), 0.0);
  // The smash factor from the club's effective mass along n.
  const double m_eff = 1.0 / ClubInverseMass(w, *at.before);
  const double smash = vb.norm() / u;
  const double free_smash = problems::FreeHeadSmashFactor(kHeadMass, w.mb, w.e);
  EXPECT_NEAR(smash, (1.0 + w.e) * m_eff / (m_eff + w.mb),
              kImpulseRoundOff * smash);
  EXPECT_GT(m_eff, kHeadMass);
  EXPECT_GT(smash, free_smash);
  EXPECT_LT(smash, 1.0 + w.e);
  const double loss =
      0.5 * (1.0 - w.e * w.e) * u * u / (1.0 / m_eff + 1.0 / w.mb);
  // The record's energy change also holds the restart's projection onto
  // trail_grip, which removes the velocity drift (2.7e-7 m/s at rtol
  // 1e-8; measured 1.3e-8 of the loss): 1e-7 of the loss.
  EXPECT_NEAR(hit.energy_change, -loss, 1e-7 * loss);
  // The energy balance: the loss is impact work, the residual the
  // integration error (golfer_3d's bound: 10 rtol of the input work).
  EXPECT_NEAR(s.contact.impact_work, hit.energy_change, 1e-12 * loss);
  EXPECT_NEAR(c.samples.back().impact_work, hit.energy_change, 1e-12 * loss);
  double work = 0.0;
  for (Eigen::Index k = 0; k < c.samples.back().input_work.size(); ++k)
    work += std::abs(c.samples.back().input_work[k]);
  EXPECT_LT(s.energy_residual_max, 10.0 * w.p.defaults.rtol * work);
  EXPECT_GE(s.contact.min_open_gap, -1e-9);
  // The functionals at the end, the ball 0.1 s into its flight.
  const double launch = Functional(s, "ball_speed");
  EXPECT_NEAR(launch, vb.norm(), 1e-6 * launch);
  EXPECT_NEAR(Functional(s, "launch_angle"), std::asin(n.z()), 1e-6);
  EXPECT_NEAR(Functional(s, "launch_direction"), std::atan2(n.x(), n.y()),
              1e-6);
  std::printf(
      "golfer_3d_strike: strike at %.6f s, approach %.4f m/s (head %.4f), "
      "ball %.4f m/s, smash factor %.4f (free head %.4f, m_eff %.4f kg), "
      "launch %.3f deg up, %.3f deg right; impact work %.4f J, energy "
      "residual %.2e J of %.1f J input work\n",
      hit.t, u, vh.norm(), vb.norm(), smash, free_smash, m_eff,
      std::asin(n.z()) * 180.0 / M_PI, std::atan2(n.x(), n.y()) * 180.0 / M_PI,
      hit.energy_change, s.energy_residual_max, work);
}

// The gradient of ball_speed at the end of the run, across the strike
// (forward sensitivities, CVODES BDF). The state before the strike does
// not depend on e or m_ball, and the ball flies freely after it, so
//   d ball_speed/de  = ball_speed / (1 + e)
//   d ball_speed/dmb = -ball_speed / (m_eff + mb)
// (ball_speed = (1 + e) m_eff / (m_eff + mb) u); a swing parameter moves
// the strike itself, checked against fourth-order central differences
// (8 (f(h) - f(-h)) - (f(2h) - f(-2h))) / (12 h) of whole runs, h = 1e-3
// |p|, at rtol 1e-10.
TEST(Golfer3dStrike, BallSpeedGradientCrossesTheStrike) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "forward sensitivities and 4 whole runs of the swing; "
      "AFreeHeadLaunchesTheBallInClosedForm checks d/de and d/dm_ball of "
      "the ball's functionals there");
  const Swing w;
  SimulationOptions o = w.p.defaults;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  const std::vector<std::string> params = {"e", "m_ball", "U_wrist"};
  SimulationOptions os = o;
  os.sensitivity.method = SensMethod::kForward;
  os.sensitivity.parameters = params;
  os.sensitivity.functional = "ball_speed";
  os.sensitivity.initial_tangent = InitialStateTangent(w.p, w.prm);
  Collector c;
  const SimulationSummary s =
      Simulate(w.p.model, w.p.initial(w.prm), w.prm, os, &c);
  ASSERT_TRUE(s.ok) << s.error;
  ASSERT_EQ(Impacts(s).size(), 1u);
  ASSERT_EQ(s.sensitivities.functionals.size(), 1u);
  const VectorXd grad = s.sensitivities.functionals[0].second;
  const double speed = Functional(s, "ball_speed");
  const AroundImpact at = Around(c.samples, Impacts(s)[0].t);
  ASSERT_NE(at.before, nullptr);
  const double m_eff = 1.0 / ClubInverseMass(w, *at.before);
  EXPECT_NEAR(grad[0], speed / (1.0 + w.e), 1e-8 * grad[0]);
  EXPECT_NEAR(grad[1], -speed / (m_eff + w.mb), 1e-8 * std::abs(grad[1]));
  const int k = w.p.model.ParameterIndex("U_wrist");
  const double h = 1e-3 * std::abs(w.prm[k]);
  double f[4];
  int j = 0;
  for (double m : {1.0, -1.0, 2.0, -2.0}) {
    VectorXd x = w.prm;
    x[k] += m * h;
    const SimulationSummary r = Simulate(w.p.model, w.p.initial(x), x, o);
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(Impacts(r).size(), 1u);
    f[j++] = Functional(r, "ball_speed");
  }
  const double diff = (8.0 * (f[0] - f[1]) - (f[2] - f[3])) / (12.0 * h);
  ASSERT_GT(std::abs(diff), 0.0);
  EXPECT_NEAR(grad[2], diff, 1e-5 * std::abs(diff));
  std::printf(
      "golfer_3d_strike: ball_speed %.9g m/s; d/de %.9g (closed form "
      "%.9g), d/dm_ball %.9g (%.9g), d/dU_wrist %.9g (differences %.9g)\n",
      speed, grad[0], speed / (1.0 + w.e), grad[1], -speed / (m_eff + w.mb),
      grad[2], diff);
}

}  // namespace golfer_3d_strike_test
}  // namespace
}  // namespace daedalus
