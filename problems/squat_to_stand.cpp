#include "squat_to_stand.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::SquatToStandProblem, argc, argv);
}
