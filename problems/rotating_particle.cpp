#include "rotating_particle.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::RotatingParticleProblem, argc, argv);
}
