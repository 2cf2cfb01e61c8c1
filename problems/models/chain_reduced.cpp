// Definitions of the models declared in chain_reduced.hpp, compiled once into a
// library (the headers are included by many tests).
#include "chain_reduced.hpp"

namespace daedalus::problems {

namespace {

void CheckBodies(int n, mb::DynamicsForm form) {
  if (n < 1)
    throw std::invalid_argument(
        "chain_reduced: --bodies must be at least 1, got " + std::to_string(n));
  if (form == mb::DynamicsForm::kEnergy && n > kChainReducedEnergyMax)
    throw std::invalid_argument(
        "chain_reduced: --bodies " + std::to_string(n) +
        " is too many for --dynamics energy (at most " +
        std::to_string(kChainReducedEnergyMax) +
        ": its dense mass matrix by automatic differentiation costs O(N^3) "
        "per evaluation); use --dynamics recursive (up to " +
        std::to_string(kChainReducedMax) + " links)");
  if (n > kChainReducedMax)
    throw std::invalid_argument("chain_reduced: --bodies " + std::to_string(n) +
                                " is above the limit of " +
                                std::to_string(kChainReducedMax) + " links");
}

void SetCommon(int n, Problem* p) {
  p->initial = [n](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::VectorXd::Zero(n);
    s.q[0] = kChainReleaseAngle;
    s.v = Eigen::VectorXd::Zero(n);
    return s;
  };
  p->defaults.t_end = 1.0;
  p->defaults.output_step = 0.01;
  p->defaults.rtol = 1e-6;
  p->defaults.atol = 1e-8;
}

// The same chain as a multibody description: link i's body frame at its
// proximal joint, the link hanging along its -y axis (centre at (0, -l/2),
// distal joint at (0, -l)), so that q_0 is link 0's angle from the hanging
// vertical and q_i link i's angle relative to link i-1.
Problem RecursiveChain(int n) {
  ModelBuilder b("chain_reduced");
  const mb::PExpr g = b.Parameter("g", 9.81);
  const mb::PExpr len = b.Parameter("length", 1.0, ParamRange::Positive());
  const mb::PExpr mass = b.Parameter("mass", 1.0, ParamRange::Positive());
  const mb::PExpr l = len / static_cast<double>(n);
  const mb::PExpr m = mass / static_cast<double>(n);
  mb::Multibody s(mb::Dimension::kPlanar);
  s.SetGravity(mb::PVec(0.0, -g));
  mb::FrameIndex parent = s.world();
  for (int i = 0; i < n; ++i) {
    const std::string name = IndexedName("link", i);
    const mb::BodyIndex link = s.AddBody(
        name, mb::PlanarBody(m, mb::PVec(0.0, -l / 2.0), m * l * l / 12.0));
    s.AddJoint(name, mb::Joint::Revolute().Named({IndexedName("q", i)}), parent,
               s.BodyFrame(link));
    parent = s.AddFrame(name + "_tip", link, mb::PVec(0.0, -l));
  }
  const mb::Kinematics kin =
      std::move(s).AddTo(&b, mb::DynamicsForm::kRecursive);
  Problem p;
  p.model = std::move(b).Build();
  (void)kin;  // no poses file: its per-body walks cost O(N^2) per sample
  p.description =
      "The planar chain of N uniform links (total length 1 m, mass 1 kg) in "
      "joint angles, as a multibody description with recursive dynamics "
      "(articulated-body algorithm, O(N) per evaluation); released at rest "
      "straight at 0.3 rad from the hanging vertical.";
  SetCommon(n, &p);
  // Adams: the steps are set by accuracy (the fast modes of the chain are
  // excited), and on the forward route it needs no Newton matrix; BDF's
  // dense difference-quotient Jacobian costs O(N^2) right-hand sides and
  // an O(N^3) factorization each.
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace

Problem ChainReducedProblem(int n, mb::DynamicsForm form) {
  // kAuto as for a multibody description (multibody.hpp): the recursive
  // form from kAutoRecursiveVelocities links.
  if (form == mb::DynamicsForm::kAuto)
    form = n >= mb::kAutoRecursiveVelocities ? mb::DynamicsForm::kRecursive
                                             : mb::DynamicsForm::kEnergy;
  CheckBodies(n, form);
  if (form == mb::DynamicsForm::kRecursive) return RecursiveChain(n);
  return ChainReducedProblem(n);
}

Problem ChainReducedProblem(int n) {
  CheckBodies(n, mb::DynamicsForm::kEnergy);
  ModelBuilder b("chain_reduced");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(IndexedName("q", i));
  b.Coordinates(names);
  const Param g = b.Parameter("g", 9.81);
  const Param len = b.Parameter("length", 1.0, ParamRange::Positive());
  const Param mass = b.Parameter("mass", 1.0, ParamRange::Positive());
  const double nd = n;
  b.KineticEnergy([=](const auto& s) {
    using S = Scalar<decltype(s)>;
    const S m = s.p[mass] / nd, l = s.p[len] / nd, inertia = m * l * l / 12.0;
    // Running sums of the joint velocities (x, y of the proximal end).
    S th = 0.0, om = 0.0, vx = 0.0, vy = 0.0, t = 0.0;
    for (int i = 0; i < n; ++i) {
      th = th + s.q[i];
      om = om + s.v[i];
      const S c = cos(th), sn = sin(th);
      const S cx = vx + 0.5 * l * c * om, cy = vy + 0.5 * l * sn * om;
      t = t + 0.5 * m * (cx * cx + cy * cy) + 0.5 * inertia * om * om;
      vx = vx + l * c * om;
      vy = vy + l * sn * om;
    }
    return t;
  });
  b.PotentialEnergy([=](const auto& s) {
    using S = Scalar<decltype(s)>;
    const S m = s.p[mass] / nd, l = s.p[len] / nd;
    S th = 0.0, y = 0.0, v = 0.0;
    for (int i = 0; i < n; ++i) {
      th = th + s.q[i];
      const S c = cos(th);
      v = v + m * s.p[g] * (y - 0.5 * l * c);
      y = y - l * c;
    }
    return v;
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "The planar chain of N uniform links (total length 1 m, mass 1 kg) in "
      "joint angles (dense mass matrix, no constraints); released at rest "
      "straight at 0.3 rad from the hanging vertical.";
  SetCommon(n, &p);
  return p;
}

}  // namespace daedalus::problems
