#include "painleve_rod.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::PainleveRodProblem, argc, argv);
}
