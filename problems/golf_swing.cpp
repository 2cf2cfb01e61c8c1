#include "golf_swing.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::GolfSwingProblem, argc, argv);
}
