// Where a functional is evaluated (SensitivityOptions::functional,
// --functional): at the end of the run, or at an occurrence of one of the
// model's events (docs/sensitivities.md, "Functionals at events").
#pragma once

#include <string>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// "NAME" (the end of the run), "NAME@EVENT" (the event's first
/// occurrence) or "NAME@EVENT#K" (its K-th, K >= 1), resolved against a
/// model.
struct FunctionalTarget {
  int functional = -1;  ///< index into ModelData::functionals
  int event = -1;       ///< event index; -1: the end of the run
  int occurrence = 0;   ///< 1-based, when event >= 0
  bool at_event() const { return event >= 0; }
  /// "end", or "EVENT#K".
  std::string Where(const Model& m) const;
};

/// @throws std::invalid_argument naming what is unknown or malformed and
/// listing what the model declares.
FunctionalTarget ParseFunctionalTarget(const Model& m, const std::string& spec);

}  // namespace daedalus::internal
