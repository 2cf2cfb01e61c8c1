#include "coupled_springs.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::CoupledSpringsProblem, argc, argv);
}
