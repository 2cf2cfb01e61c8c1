#include "golfer_3d.hpp"

// --dynamics auto|energy|recursive: M and h by automatic differentiation of
// the energies or by the recursive algorithms (docs/multibody.md); auto,
// the default, picks by the description (mb::DynamicsForm::kAuto).
int main(int argc, char** argv) {
  using daedalus::mb::DynamicsForm;
  using daedalus::problems::Golfer3dProblemForm;
  const daedalus::ProblemVariants choice{
      "dynamics",
      {{"auto", [] { return Golfer3dProblemForm(DynamicsForm::kAuto); }},
       {"energy", [] { return Golfer3dProblemForm(DynamicsForm::kEnergy); }},
       {"recursive",
        [] { return Golfer3dProblemForm(DynamicsForm::kRecursive); }}}};
  return daedalus::run(choice, argc, argv);
}
