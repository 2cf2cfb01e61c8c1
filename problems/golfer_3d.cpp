#include "golfer_3d.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::Golfer3dProblem, argc, argv);
}
