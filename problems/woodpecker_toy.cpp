#include "woodpecker_toy.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::WoodpeckerToyProblem, argc, argv);
}
