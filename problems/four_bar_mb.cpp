#include "four_bar_mb.hpp"

// --dynamics auto|energy|recursive: M and h by automatic differentiation of
// the energies or by the recursive algorithms (docs/multibody.md); auto,
// the default, picks by the description (mb::DynamicsForm::kAuto).
int main(int argc, char** argv) {
  using daedalus::mb::DynamicsForm;
  using daedalus::problems::FourBarMbProblemForm;
  const daedalus::ProblemVariants choice{
      "dynamics",
      {{"auto", [] { return FourBarMbProblemForm(DynamicsForm::kAuto); }},
       {"energy", [] { return FourBarMbProblemForm(DynamicsForm::kEnergy); }},
       {"recursive",
        [] { return FourBarMbProblemForm(DynamicsForm::kRecursive); }}}};
  return daedalus::run(choice, argc, argv);
}
