#include "free_body.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::FreeBodyProblem, argc, argv);
}
