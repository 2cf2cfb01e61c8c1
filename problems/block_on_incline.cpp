#include "block_on_incline.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::BlockOnInclineProblem, argc, argv);
}
