// Definitions of the problem declared in mjcf.hpp.
#include "mjcf.hpp"

#include <sstream>

#include "daedalus/multibody_output.hpp"

namespace daedalus::problems {

Problem MjcfProblem(const std::string& path,
                    mb::DynamicsForm dynamics,
                    std::optional<Eigen::Vector3d> gravity,
                    bool skip_actuators,
                    std::ostream* notes) {
  mjcf::ImportOptions options;
  options.dynamics = dynamics;
  options.gravity = gravity;
  options.skip_unsupported_actuators = skip_actuators;
  options.notes = notes;
  return MjcfProblem(path, options);
}

Problem MjcfProblem(const std::string& path,
                    const mjcf::ImportOptions& options) {
  ModelBuilder b("mjcf");
  const mb::DynamicsForm dynamics = options.dynamics;
  const mjcf::Model m = mjcf::Import(path, &b, options);
  Problem p;
  p.model = std::move(b).Build();
  p.side_outputs.push_back(mb::PosesFile(m.kinematics));
  std::ostringstream d;
  d << "A model from the MJCF file " << path << " (M and h by the "
    << mb::ToString(dynamics)
    << " form; coordinates and velocities are MuJoCo's qpos and qvel): "
    << m.Describe()
    << "Inputs: one channel per <motor>, the constant ctrl_<actuator> "
       "(--param ctrl_<actuator>=VALUE); start: qpos0, the file's pose "
       "(--q0, --v0).";
  if (!m.notes.empty()) {
    d << "\nLeft out or changed by the import:";
    for (const std::string& n : m.notes) d << "\n  " << n;
  }
  p.description = d.str();
  const Eigen::VectorXd q0 = m.qpos0;
  const int nv = p.model.nv();
  p.initial = [q0, nv](const Eigen::VectorXd& /*params*/) {
    return InitialState{q0, Eigen::VectorXd::Zero(nv)};
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-8;
  p.defaults.atol = 1e-10;
  p.defaults.integrator = Integrator::kCvodesAdams;
  // Ground contacts: as the urdf problem's (docs/contact.md, "Contact
  // geometry"): the accumulation threshold above atol's resolution, and
  // minimum-norm multipliers for a box resting on four corners.
  if (!m.contacts.empty()) {
    p.defaults.contact.zeno_velocity = 1e-3;
    p.defaults.kkt.allow_redundant = true;
  }
  return p;
}

}  // namespace daedalus::problems
