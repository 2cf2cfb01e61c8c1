// build/problems/humanoid_standing: the shipped humanoid standing on box
// feet (problems/humanoid_standing.hpp, docs/problems.md) with the common
// command line (run.hpp); --param push_impulse=P pushes it at t = 0.
#include "humanoid_standing.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::HumanoidStandingProblem, argc, argv);
}
