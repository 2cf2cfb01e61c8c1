// Definitions of the problem declared in urdf.hpp.
#include "urdf.hpp"

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
      "(--param tau_<joint>=VALUE); start q = 0 (identity "
      "quaternions), v = 0 (--q0, --v0).";
  const Eigen::VectorXd q0 = robot.kinematics.Neutral();
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
