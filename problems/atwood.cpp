#include "atwood.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::AtwoodVariants(), argc, argv);
}
