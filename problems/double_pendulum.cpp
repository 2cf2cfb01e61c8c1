#include "double_pendulum.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::DoublePendulumProblem, argc, argv);
}
