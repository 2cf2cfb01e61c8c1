// The problem executable of the multi-start tests
// (multi_start_cli_test.py): the tilted double well of double_well.hpp.
#include "double_well.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::test_models::DoubleWellProblem, argc, argv);
}
