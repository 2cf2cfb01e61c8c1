#include "four_bar_mb.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::FourBarMbProblem, argc, argv);
}
