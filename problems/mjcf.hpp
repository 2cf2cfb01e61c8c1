// Any model from a MuJoCo MJCF file (include/daedalus/mjcf.hpp):
// `build/problems/mjcf --model FILE.xml [--dynamics auto|energy|recursive]
// [--gravity G|gx,gy,gz] [--skip-actuators]` with the common command line.
// The coordinates and velocities are MuJoCo's qpos and qvel (named after
// the joints), each <motor> is an input channel whose value is the
// parameter ctrl_<actuator> (default 0, its range the ctrlrange), joint
// damping, springs and armature as in the file, the equality constraints
// as constraints; the start is MuJoCo's qpos0 (the file's pose), v = 0,
// unless --q0/--v0 say otherwise. What the import leaves out is listed on
// stderr (contacts, limits as constraints, solver settings, ...).
#pragma once

#include <Eigen/Core>
#include <optional>
#include <ostream>
#include <string>

#include "daedalus/mjcf.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// The problem of the MJCF file `path`; `gravity` replaces the file's
/// <option gravity>; `skip_actuators` imports without the actuators that
/// cannot be honoured (mjcf::ImportOptions); the notes go to `notes`.
/// @throws std::invalid_argument as mjcf::Import does.
Problem MjcfProblem(const std::string& path,
                    mb::DynamicsForm dynamics = mb::DynamicsForm::kAuto,
                    std::optional<Eigen::Vector3d> gravity = std::nullopt,
                    bool skip_actuators = false,
                    std::ostream* notes = nullptr);
/// The same with every import option (mjcf::ImportOptions: the ground
/// contacts of --ground among them).
Problem MjcfProblem(const std::string& path,
                    const mjcf::ImportOptions& options);

}  // namespace daedalus::problems
