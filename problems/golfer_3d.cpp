#include "golfer_3d.hpp"

// --dynamics energy|recursive: M and h by automatic differentiation of the
// energies or by the recursive algorithms (docs/multibody.md).
int main(int argc, char** argv) {
  using daedalus::mb::DynamicsForm;
  using daedalus::problems::Golfer3dProblemForm;
  const daedalus::ProblemVariants choice{
      "dynamics",
      {{"energy", [] { return Golfer3dProblemForm(DynamicsForm::kEnergy); }},
       {"recursive",
        [] { return Golfer3dProblemForm(DynamicsForm::kRecursive); }}}};
  return daedalus::run(choice, argc, argv);
}
