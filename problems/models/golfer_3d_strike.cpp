// Definitions of the model declared in golfer_3d_strike.hpp.
#include "golfer_3d_strike.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "daedalus/multibody_output.hpp"

namespace daedalus::problems {
namespace strike_detail {

Eigen::Vector3d StrikeBallAddress() {
  // golfer_3d's default run (the recursive form, rtol 1e-8, atol 1e-10)
  // at its impact event, t = 0.321940 s: the head's centre of mass plus
  // (kHeadRadius + kBallRadius) times its velocity's direction (the
  // velocity differentiated from the run's output at a 1e-5 s step;
  // Golfer3dStrike.TheBallSitsWhereTheHeadArrives recomputes it from the
  // state at the event).
  return Eigen::Vector3d(1.2026215610252544, -0.059437116699897305,
                         0.068023078580112875);
}

ContactLaw StrikeLaw() { return ContactLaw{.restitution_parameter = "e"}; }

mb::Geometry CollisionSphere(const std::string& name,
                             double r,
                             const Eigen::Vector3d& position) {
  mb::Geometry g;
  g.name = name;
  g.type = mb::GeometryType::kSphere;
  g.size = Eigen::Vector3d(r, 0.0, 0.0);
  g.position = position;
  g.collision = true;
  return g;
}

Ball DeclareBall(ModelBuilder* b,
                 mb::Multibody* s,
                 Param g,
                 const Eigen::Vector3d& address) {
  using mb::PExpr;
  using mb::PVec;
  Ball ball;
  ball.mass = b->Parameter("m_ball", kBallMass, ParamRange::Positive());
  ball.restitution =
      b->Parameter("e", kDriverRestitution, ParamRange::Between(0.0, 1.0));
  // A point mass carried by two massless carriages: three translations,
  // no rotation (its spin is out of scope). The sphere's inertia is
  // recorded for the poses and the mechanism report; no joint turns it.
  const PExpr m = ball.mass;
  const PExpr i = PExpr(0.4 * kBallRadius * kBallRadius) * m;
  const mb::BodyIndex cx = s->AddBody(
      "ball_carriage_x", mb::SpatialBody(0.0, PVec(), 0.0, 0.0, 0.0));
  const mb::BodyIndex cy = s->AddBody(
      "ball_carriage_y", mb::SpatialBody(0.0, PVec(), 0.0, 0.0, 0.0));
  const mb::BodyIndex body =
      s->AddBody("ball", mb::SpatialBody(m, PVec(), i, i, i));
  const mb::JointIndex jx = s->AddJoint(
      "ball_x",
      mb::Joint::Prismatic(Eigen::Vector3d::UnitX()).Named({"ball_x"}),
      s->world(), s->BodyFrame(cx));
  s->AddJoint("ball_y",
              mb::Joint::Prismatic(Eigen::Vector3d::UnitY()).Named({"ball_y"}),
              s->BodyFrame(cx), s->BodyFrame(cy));
  s->AddJoint("ball_z",
              mb::Joint::Prismatic(Eigen::Vector3d::UnitZ()).Named({"ball_z"}),
              s->BodyFrame(cy), s->BodyFrame(body));
  ball.q = s->Coordinate(jx);
  ball.v = s->Velocity(jx);
  ball.sphere = s->AddGeometry(body, CollisionSphere("ball_sphere", kBallRadius,
                                                     Eigen::Vector3d::Zero()));
  // The tee: the plane through the ball's lowest point at rest.
  const mb::GeometryIndex tee =
      s->AddGroundPlane("tee_plane", address.z() - kBallRadius);
  s->AddContact("tee", ball.sphere, tee, ContactLaw{});

  // The launch, from the ball's state at the end of the run while it
  // flies: its energy per unit mass |v|^2 / 2 + g (z - z0) and its
  // horizontal velocity are those it left the tee with. Before the strike
  // (a run that ends with the ball on its tee) the ball is at rest: the
  // functionals are 0 there, with derivative 0, which is exact, since a
  // small change of the parameters leaves it at rest. Rest is a squared
  // speed below (1e-6 m/s)^2, far below any launch and far above the
  // resting ball's drift, about 1e-16 m/s, which would otherwise put sqrt
  // near 0 (derivative 1 / (2 sqrt), infinite at 0).
  const int q = ball.q, v = ball.v;
  const double z0 = address.z();
  constexpr double kRest = 1e-12;
  b->TerminalFunctional("ball_speed", [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const auto& w = x.v;
    const S s2 = w[v] * w[v] + w[v + 1] * w[v + 1] + w[v + 2] * w[v + 2] +
                 2.0 * x.p[g] * (x.q[q + 2] - z0);
    return IfPositive(S(s2 - kRest), S(sqrt(s2)), S(0.0));
  });
  b->TerminalFunctional("launch_angle", [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const auto& w = x.v;
    const S up = w[v + 2] * w[v + 2] + 2.0 * x.p[g] * (x.q[q + 2] - z0);
    const S across = w[v] * w[v] + w[v + 1] * w[v + 1];
    return IfPositive(S(up + across - kRest), S(atan2(sqrt(up), sqrt(across))),
                      S(0.0));
  });
  b->TerminalFunctional("launch_direction", [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const S across = x.v[v] * x.v[v] + x.v[v + 1] * x.v[v + 1];
    return IfPositive(S(across - kRest), S(atan2(x.v[v], x.v[v + 1])), S(0.0));
  });
  return ball;
}

}  // namespace strike_detail

Golfer3dStrike MakeGolfer3dStrike(mb::DynamicsForm form) {
  namespace sd = strike_detail;
  ModelBuilder b("golfer_3d_strike");
  golfer_detail::GolferDescription d = golfer_detail::DeclareGolfer(&b);
  mb::Multibody& s = d.system;
  const Eigen::Vector3d address = sd::StrikeBallAddress();
  const sd::Ball ball = sd::DeclareBall(&b, &s, d.g, address);
  // The clubhead: a sphere about the head's centre of mass.
  const mb::GeometryIndex head = s.AddGeometry(
      d.club_tip,
      sd::CollisionSphere("clubhead_sphere", sd::kHeadRadius, d.head_in_tip));
  s.AddContact("strike", head, ball.sphere, sd::StrikeLaw());
  const mb::Kinematics kin = std::move(s).AddTo(&b, form);

  golfer_detail::AddHeadSpeed(&b, kin);

  Golfer3dStrike out;
  Problem& p = out.problem;
  p.model = std::move(b).Build();
  p.description =
      "golfer_3d's downswing striking a ball (45.93 g, 21.335 mm; a point "
      "mass, its spin out of scope) on a tee where the clubhead arrives: "
      "the strike is an event-driven sphere-sphere contact with Newton's "
      "restitution e = 0.822 (the Rules of Golf's driver limit), solved "
      "with the tee as one impulse LCP with the trail-grip loop; the ball "
      "flies and the golfer follows through. Functionals ball_speed, "
      "launch_angle, launch_direction (the launch, from the ball's state "
      "in flight) and head_speed; their gradients cross the strike.";
  const int bq = ball.q;
  p.initial = [kin, initial = d.initial, bq,
               address](const Eigen::VectorXd& prm) {
    InitialState st = initial(kin, prm);
    st.q.segment<3>(bq) = address;
    return st;
  };
  golfer_detail::SetSwingDefaults(&p, kin, 0.42);
  out.kin = kin;
  return out;
}

Problem Golfer3dStrikeProblemForm(mb::DynamicsForm form) {
  return MakeGolfer3dStrike(form).problem;
}

}  // namespace daedalus::problems
