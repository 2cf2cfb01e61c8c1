#include "chain.hpp"

int main(int argc, char** argv) {
  return daedalus::run(
      {{"bodies", 10, 1, 10000, "number of links"}},
      [](const std::vector<daedalus::IntOption>& o) {
        return daedalus::problems::ChainProblem(o[0].value);
      },
      argc, argv);
}
