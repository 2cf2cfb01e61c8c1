#include "spheres_in_box.hpp"

int main(int argc, char** argv) {
  return daedalus::run(
      {{"spheres", 18, 1, 400, "number of spheres"}},
      [](const std::vector<daedalus::IntOption>& o) {
        return daedalus::problems::SpheresInBoxProblem(o[0].value);
      },
      argc, argv);
}
