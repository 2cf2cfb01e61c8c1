#include "heavy_top.hpp"

#include "dynamics_variants.hpp"

// --dynamics auto|energy|recursive: M and h by automatic differentiation of
// the energies or by the recursive algorithms; auto, the default, picks by
// the description (docs/multibody.md).
int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::DynamicsVariants(
                           daedalus::problems::HeavyTopProblemForm),
                       argc, argv);
}
