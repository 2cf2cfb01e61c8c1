// The planar golf downswing striking a ball (golf_impact.hpp).
#include "golf_impact.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::GolfImpactProblem, argc, argv);
}
