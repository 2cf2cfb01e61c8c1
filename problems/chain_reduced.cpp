#include "chain_reduced.hpp"

int main(int argc, char** argv) {
  return daedalus::run(
      {{"bodies", 10, 1, 200, "number of links"}},
      [](const std::vector<daedalus::IntOption>& o) {
        return daedalus::problems::ChainReducedProblem(o[0].value);
      },
      argc, argv);
}
