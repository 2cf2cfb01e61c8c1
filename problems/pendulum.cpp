#include "pendulum.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::PendulumProblem, argc, argv);
}
