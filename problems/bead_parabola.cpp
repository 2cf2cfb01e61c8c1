#include "bead_parabola.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::BeadParabolaVariants(), argc, argv);
}
