#include "car_axis.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::CarAxisProblem, argc, argv);
}
