// The guard of the contact and friction stages against a mode that does
// not settle at one instant (docs/contact.md, "The switch"): each stage
// counts its switches at the same time t and ends the run, naming the
// contacts, beyond kMaxSwitchesAtOneInstant, never a hang.
#pragma once

#include <limits>

namespace daedalus::internal {

// Far above any consistent sequence at one instant (an impact, the
// closures it leaves, a friction mode per contact), far below a hang.
inline constexpr int kMaxSwitchesAtOneInstant = 50;

class SwitchCounter {
 public:
  /// Counts a switch at t; true when the switches at this instant exceed
  /// kMaxSwitchesAtOneInstant (the caller throws naming its contacts).
  bool Exceeded(double t) {
    if (t != t_) {
      t_ = t;
      n_ = 0;
      return false;
    }
    return ++n_ > kMaxSwitchesAtOneInstant;
  }
  /// The switches counted at the current instant after its first.
  int count() const { return n_; }

 private:
  double t_ = std::numeric_limits<double>::quiet_NaN();
  int n_ = 0;
};

}  // namespace daedalus::internal
