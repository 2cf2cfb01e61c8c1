#include "rocking_block.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::RockingBlockProblem, argc, argv);
}
