// Any fixed-base robot from a URDF file (include/daedalus/urdf.hpp):
// `build/problems/urdf --model FILE.urdf [--dynamics energy|recursive]
// [--base fixed|floating] [--gravity G]` with the common command line. The
// coordinates are the joints (named after them), each movable joint is an input
// channel whose constant value is the parameter tau_<joint> (default 0),
// <dynamics damping> becomes joint damping; the start is q = 0, v = 0
// (clamped into the joint limits) unless --q0/--v0 say otherwise. The
// joint limits are listed by --help and are contacts (docs/contact.md,
// "Joint limits"; --no-joint-limits frees the joints). With --ground the
// links' <collision> spheres and boxes are contacts against the plane z =
// --ground-height (--ground-restitution, --ground-mu; docs/contact.md,
// "Contact geometry").
// problems/data/arm7.urdf is the
// project's 7-joint arm (docs/problems.md).
#pragma once

#include <ostream>
#include <string>

#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"
#include "daedalus/urdf.hpp"

namespace daedalus::problems {

/// The problem of the URDF file `path`, gravity `gravity` [m/s^2] along -z;
/// the elements the import does not read are listed on `notes` (when not
/// null). @throws std::invalid_argument as urdf::Import does.
Problem UrdfProblem(const std::string& path,
                    mb::DynamicsForm dynamics = mb::DynamicsForm::kEnergy,
                    bool floating_base = false,
                    double gravity = 9.81,
                    std::ostream* notes = nullptr);
/// The same with every import option (urdf::ImportOptions: the ground
/// contacts of --ground among them).
Problem UrdfProblem(const std::string& path,
                    const urdf::ImportOptions& options);

}  // namespace daedalus::problems
