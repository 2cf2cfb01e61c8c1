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

// Witness roots that come ever closer without settling at one instant (a
// slip whose speed hovers at zero while its stick test fails, each root
// re-arming the witness a few 1e-11 s further): more than
// kMaxRootsInWindow roots within a window of kChatterWindow times the
// run's horizon. Each root costs the integrator a restart, so such a run
// would otherwise take millions of steps and days (the humanoid pushed at
// 20 N s: 1490 roots in 5.7e-8 s, 200 s, before it was stopped by hand).
// A physical stick-slip cycle or a burst of impacts takes far longer than
// 1e-6 of the horizon per 200 switches.
inline constexpr int kMaxRootsInWindow = 200;
inline constexpr double kChatterWindow = 1e-6;

class ChatterGuard {
 public:
  explicit ChatterGuard(double horizon)
      : window_(kChatterWindow * (horizon > 0.0 ? horizon : 1.0)) {}
  /// Counts a root at t; true when the roots since the window's start
  /// exceed kMaxRootsInWindow (the caller throws naming its contacts).
  bool Exceeded(double t) {
    if (!(t - start_ <= window_)) {
      start_ = t;
      n_ = 0;
      return false;
    }
    return ++n_ > kMaxRootsInWindow;
  }
  double start() const { return start_; }
  double window() const { return window_; }
  int count() const { return n_; }

 private:
  double window_;
  double start_ = std::numeric_limits<double>::quiet_NaN();
  int n_ = 0;
};

}  // namespace daedalus::internal
