#include "rod_pair.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::RodPairVariants(), argc, argv);
}
