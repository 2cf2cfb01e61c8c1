#include "moving_support.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::MovingSupportProblem, argc, argv);
}
