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
  ModelBuilder b("urdf");
  urdf::ImportOptions options;
  options.dynamics = dynamics;
  options.floating_base = floating_base;
  options.gravity = gravity;
  options.notes = notes;
  const urdf::Robot robot = urdf::Import(path, &b, options);
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
      "--no-joint-limits frees the joints).";
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
  return p;
}

}  // namespace daedalus::problems
