// build/problems/mjcf --model FILE.xml [--dynamics auto|energy|recursive]
//     [--gravity G|gx,gy,gz] [--skip-actuators] [--ground [--ground-height Z]
//     [--ground-restitution E] [--ground-mu MU]] and the common command
//     line (run.hpp; the flags: problems/import_cli.hpp).
#include "mjcf.hpp"

#include <iostream>
#include <optional>

#include "import_cli.hpp"

int main(int argc, char** argv) {
  using daedalus::problems::ImportFlag;
  const std::vector<ImportFlag> flags = {
      {"model", "FILE.xml", "the MuJoCo model (required)"},
      {"dynamics", "F", "how M and h are evaluated: auto | energy | recursive",
       "auto"},
      {"gravity", "G|gx,gy,gz",
       "gravity instead of <option gravity> [m/s^2]: -G along z, or a vector"},
      {"skip-actuators", "",
       "import without the actuators that cannot be honoured (position, "
       "velocity, muscle, tendon or site transmissions), each named on "
       "stderr, instead of refusing the file"},
      {"ground", "",
       "contacts between the colliding sphere and box geoms (box corners) "
       "and a ground plane"},
      {"ground-height", "Z", "the ground plane z = Z [m] (with --ground)", "0"},
      {"ground-restitution", "E",
       "Newton's restitution of the ground contacts, in [0, 1]", "0"},
      {"ground-mu", "MU",
       "Coulomb friction of the ground contacts, >= 0 (0: frictionless)", "0"},
  };
  return daedalus::problems::RunImporter(
      argc, argv, "mjcf", flags, [](const auto& v) {
        std::optional<Eigen::Vector3d> g;
        if (v.count("gravity"))
          g = daedalus::problems::ParseGravity(v.at("gravity"));
        daedalus::mjcf::ImportOptions o;
        o.dynamics = daedalus::mb::DynamicsFormFromString(v.at("dynamics"));
        o.gravity = g;
        o.skip_unsupported_actuators = v.count("skip-actuators") != 0;
        o.notes = &std::cerr;
        daedalus::problems::SetGroundOptions(v, &o);
        return daedalus::problems::MjcfProblem(v.at("model"), o);
      });
}
