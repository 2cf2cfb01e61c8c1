// How a model's events act (ModelBuilder::Event and ModelBuilder::Reset in
// model.hpp; docs/sensitivities.md, "Events" and "Resets").
#pragma once

#include <string>

namespace daedalus {

/// Which zero crossings of an event function g fire the event:
/// kFalling from g > 0 to g < 0 (a gap closing), kRising the reverse, kAny
/// both.
enum class EventDirection { kAny, kRising, kFalling };
const char* ToString(EventDirection d);
/// @throws std::invalid_argument listing the valid names (any, rising,
/// falling).
EventDirection EventDirectionFromString(const std::string& s);

/// How an event acts.
struct EventOptions {
  EventDirection direction = EventDirection::kAny;
  /// The run stops at the event's first occurrence. false: the run
  /// records each occurrence and goes on, applying the event's reset map
  /// (ModelBuilder::Reset) when it has one.
  bool stop = true;
};

}  // namespace daedalus
