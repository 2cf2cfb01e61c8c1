// Definitions of the problem declared in urdf.hpp.
#include "urdf.hpp"

#include <algorithm>

#include "daedalus/multibody_output.hpp"

namespace daedalus::problems {

Problem UrdfProblem(const std::string& path,
                    mb::DynamicsForm dynamics,
                    bool floating_base,
                    double gravity,
                    std::ostream* notes) {
  urdf::ImportOptions options;
  options.dynamics = dynamics;
  options.floating_base = floating_base;
  options.gravity = gravity;
  options.notes = notes;
  return UrdfProblem(path, options);
}

Problem UrdfProblem(const std::string& path,
                    const urdf::ImportOptions& options) {
  ModelBuilder b("urdf");
  const urdf::Robot robot = urdf::Import(path, &b, options);
  const mb::DynamicsForm dynamics = options.dynamics;
  const bool floating_base = options.floating_base;
  const double gravity = options.gravity;
  Problem p;
  p.model = std::move(b).Build();
  p.side_outputs.push_back(mb::PosesFile(robot.kinematics));
  p.description =
      std::string(floating_base ? "A floating-base" : "A fixed-base") +
      " robot from the URDF file " + path + " (M and h by the " +
      mb::ToString(dynamics) + " form, gravity " + std::to_string(gravity) +
      " m/s^2 along -z): " + robot.Describe() +
      "Inputs: one channel per joint, the constant tau_<joint> "
      "(--param tau_<joint>=VALUE); start q = 0 clamped into the joint "
      "limits (identity quaternions), v = 0 (--q0, --v0). The limits are "
      "contacts (limit:<joint>:lower|upper, restitution 0; "
      "--no-joint-limits frees the joints)." +
      (robot.contacts.empty()
           ? std::string()
           : " Ground contacts (--ground): " +
                 std::to_string(robot.contacts.size()) +
                 " contact points of the collision spheres and box corners "
                 "against the plane z = " +
                 std::to_string(options.ground_height) + " (restitution " +
                 std::to_string(options.ground_restitution) + ", mu " +
                 std::to_string(options.ground_mu) +
                 "); a start below the plane is refused naming the contact "
                 "(--q0, or --project-penetration).");
  // q = 0 clamped into the joints' limits (a limit that excludes 0 would
  // start the run penetrating the limit's contact).
  Eigen::VectorXd q0 = robot.kinematics.Neutral();
  for (const urdf::UrdfJoint& j : robot.joints)
    if (j.has_position_limits)
      q0[j.coordinate] = std::clamp(q0[j.coordinate], j.lower, j.upper);
  const int nv = p.model.nv();
  p.initial = [q0, nv](const Eigen::VectorXd& /*params*/) {
    return InitialState{q0, Eigen::VectorXd::Zero(nv)};
  };
  p.defaults.t_end = 2.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-8;
  p.defaults.atol = 1e-10;
  p.defaults.integrator = Integrator::kCvodesAdams;
  // Ground contacts strike at speeds the joint limits do not: the
  // accumulation threshold must stay above the resolution of atol 1e-10 (a
  // bounce at 1e-3 m/s rises 5e-8 m, 500 atol; at the stage's default 1e-5
  // m/s, 5e-12 m, a sphere on a pendulum lost its gap witness near the
  // accumulation point and passed through the plane; docs/contact.md,
  // "Accumulation (Zeno)").
  if (!robot.contacts.empty()) p.defaults.contact.zeno_velocity = 1e-3;
  // A box resting flat closes 4 corners of rank 3 (docs/contact.md,
  // "Contact geometry"): minimum-norm multipliers, as --allow-redundant.
  if (!robot.contacts.empty()) p.defaults.kkt.allow_redundant = true;
  return p;
}

}  // namespace daedalus::problems
