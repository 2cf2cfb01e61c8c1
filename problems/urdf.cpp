// build/problems/urdf --model FILE.urdf [--dynamics auto|energy|recursive]
//     [--base fixed|floating] [--gravity G] [--ground [--ground-height Z]
//     [--ground-restitution E] [--ground-mu MU]] and the common command line
//     (run.hpp; the flags: problems/import_cli.hpp).
#include "urdf.hpp"

#include <iostream>

#include "import_cli.hpp"

int main(int argc, char** argv) {
  using daedalus::problems::ImportFlag;
  const std::vector<ImportFlag> flags = {
      {"model", "FILE.urdf", "the robot (required)"},
      {"dynamics", "F", "how M and h are evaluated: auto | energy | recursive",
       "auto"},
      {"base", "B",
       "fixed (the root link is the ground) | floating (on a free joint)",
       "fixed"},
      {"gravity", "G", "gravity -G along z [m/s^2] (0: none)", "9.81"},
      {"ground", "",
       "contacts between the links' <collision> spheres and box corners and "
       "a ground plane"},
      {"ground-height", "Z", "the ground plane z = Z [m] (with --ground)", "0"},
      {"ground-restitution", "E",
       "Newton's restitution of the ground contacts, in [0, 1]", "0"},
      {"ground-mu", "MU",
       "Coulomb friction of the ground contacts, >= 0 (0: frictionless)", "0"},
  };
  return daedalus::problems::RunImporter(
      argc, argv, "urdf", flags, [](const auto& v) {
        const std::string base = v.at("base");
        if (base != "fixed" && base != "floating")
          throw std::invalid_argument("--base: unknown base '" + base +
                                      "'; valid: fixed, floating");
        const Eigen::Vector3d g =
            daedalus::problems::ParseGravity(v.at("gravity"));
        if (g[0] != 0.0 || g[1] != 0.0)
          throw std::invalid_argument(
              "--gravity: a URDF world has gravity along -z; give its "
              "magnitude G");
        daedalus::urdf::ImportOptions o;
        o.dynamics = daedalus::mb::DynamicsFormFromString(v.at("dynamics"));
        o.floating_base = base == "floating";
        o.gravity = -g[2];
        o.notes = &std::cerr;
        daedalus::problems::SetGroundOptions(v, &o);
        return daedalus::problems::UrdfProblem(v.at("model"), o);
      });
}
