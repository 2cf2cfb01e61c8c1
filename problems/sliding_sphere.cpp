#include "sliding_sphere.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::SlidingSphereProblem, argc, argv);
}
