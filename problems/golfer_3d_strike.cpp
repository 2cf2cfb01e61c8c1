// golfer_3d's downswing striking a ball (golfer_3d_strike.hpp).
#include "golfer_3d_strike.hpp"

#include "dynamics_variants.hpp"

// --dynamics auto|energy|recursive, as golfer_3d (auto: the recursive
// form, the description having quaternions).
int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::DynamicsVariants(
                           daedalus::problems::Golfer3dStrikeProblemForm),
                       argc, argv);
}
