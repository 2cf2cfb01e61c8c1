#include "planet.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::PlanetProblem, argc, argv);
}
