// The `--dynamics auto|energy|recursive` option of the catalogue's
// multibody descriptions (four_bar_mb, slider_crank_mb, heavy_top,
// golfer_3d): one problem per mb::DynamicsForm, `auto` first (the
// default; docs/multibody.md, "Recursive algorithms").
#pragma once

#include "daedalus/multibody.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

inline ProblemVariants DynamicsVariants(Problem (*make)(mb::DynamicsForm)) {
  ProblemVariants v{"dynamics", {}};
  for (mb::DynamicsForm f : {mb::DynamicsForm::kAuto, mb::DynamicsForm::kEnergy,
                             mb::DynamicsForm::kRecursive})
    v.variants.emplace_back(mb::ToString(f), [make, f] { return make(f); });
  return v;
}

}  // namespace daedalus::problems
