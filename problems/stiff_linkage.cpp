#include "stiff_linkage.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::StiffLinkageProblem, argc, argv);
}
