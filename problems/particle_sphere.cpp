#include "particle_sphere.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::ParticleSphereProblem, argc, argv);
}
