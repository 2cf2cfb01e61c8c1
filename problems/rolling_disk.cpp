#include "rolling_disk.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::RollingDiskProblem, argc, argv);
}
