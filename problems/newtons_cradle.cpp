#include "newtons_cradle.hpp"

int main(int argc, char** argv) {
  return daedalus::run(
      {{"balls", 3, 2, 20, "number of balls"}},
      [](const std::vector<daedalus::IntOption>& o) {
        return daedalus::problems::NewtonsCradleProblem(o[0].value);
      },
      argc, argv);
}
