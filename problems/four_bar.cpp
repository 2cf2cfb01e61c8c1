#include "four_bar.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::FourBarProblem, argc, argv);
}
