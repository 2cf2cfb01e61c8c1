#include "slider_crank.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::SliderCrankProblem, argc, argv);
}
