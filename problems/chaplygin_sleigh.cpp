#include "chaplygin_sleigh.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::ChaplyginSleighProblem, argc, argv);
}
