#include "particle_hemisphere.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::ParticleHemisphereProblem, argc,
                       argv);
}
