#include "heavy_top.hpp"

// --dynamics auto|energy|recursive: M and h by automatic differentiation of the
// energies or by the recursive algorithms (docs/multibody.md).
int main(int argc, char** argv) {
  using daedalus::mb::DynamicsForm;
  using daedalus::problems::HeavyTopProblemForm;
  const daedalus::ProblemVariants choice{
      "dynamics",
      {{"auto", [] { return HeavyTopProblemForm(DynamicsForm::kAuto); }},
       {"energy", [] { return HeavyTopProblemForm(DynamicsForm::kEnergy); }},
       {"recursive",
        [] { return HeavyTopProblemForm(DynamicsForm::kRecursive); }}}};
  return daedalus::run(choice, argc, argv);
}
