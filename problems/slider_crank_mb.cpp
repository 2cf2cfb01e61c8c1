#include "slider_crank_mb.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::SliderCrankMbProblem, argc, argv);
}
