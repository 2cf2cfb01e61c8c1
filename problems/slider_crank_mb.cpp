#include "slider_crank_mb.hpp"

// --dynamics auto|energy|recursive: M and h by automatic differentiation of
// the energies or by the recursive algorithms (docs/multibody.md); auto,
// the default, picks by the description (mb::DynamicsForm::kAuto).
int main(int argc, char** argv) {
  using daedalus::mb::DynamicsForm;
  using daedalus::problems::SliderCrankMbProblemForm;
  const daedalus::ProblemVariants choice{
      "dynamics",
      {{"auto", [] { return SliderCrankMbProblemForm(DynamicsForm::kAuto); }},
       {"energy",
        [] { return SliderCrankMbProblemForm(DynamicsForm::kEnergy); }},
       {"recursive",
        [] { return SliderCrankMbProblemForm(DynamicsForm::kRecursive); }}}};
  return daedalus::run(choice, argc, argv);
}
