// The root functions of a run (docs/formulations.md, "Events and
// unilateral multipliers"): the model's events, then the feasibility
// margins of its unilateral rows and friction cones. The integrators'
// root finders watch them; the monitor (monitor/recorder.hpp) checks the
// same margins at every output sample.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/simulate.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// The feasibility conditions a run watches, in this order: every
/// unilateral row (margin lambda_i, admissible when >= 0), then every
/// friction cone (margin mu lambda_n - |lambda_t|). The same margins are
/// root functions and are checked at every output sample.
class FeasibilitySet {
 public:
  /// `contacts`: the unilateral rows are event-driven contacts
  /// (docs/contact.md), whose own stage certifies them; only the friction
  /// cones are watched here.
  explicit FeasibilitySet(const Model& m, bool contacts = false);
  int num_unilateral() const {
    return static_cast<int>(unilateral_rows_.size());
  }
  int size() const { return static_cast<int>(names_.size()); }
  bool is_cone(int k) const { return k >= num_unilateral(); }
  const char* kind(int k) const {
    return is_cone(k) ? "friction_cone" : "unilateral";
  }
  /// Root-function name of condition k (as reported in the events).
  std::string event_name(int k) const {
    return (is_cone(k) ? "cone_" : "lambda_") + names_[k];
  }
  void Margins(const Eigen::Ref<const Eigen::VectorXd>& lambda,
               double* g) const;
  /// The open violation interval of condition k, or nullptr.
  FeasibilityViolation* Open(SimulationSummary* sum, int k) const;
  FeasibilityViolation* Start(SimulationSummary* sum,
                              int k,
                              double t,
                              double g) const;
  /// Sample-level check: opens, extends or closes the interval of each
  /// condition from the sign of its margin at time t. (A root located
  /// between samples refines the start and end; see RootSet::Record.)
  void Check(SimulationSummary* sum,
             double t,
             const Eigen::Ref<const Eigen::VectorXd>& lambda) const;

 private:
  std::vector<int> unilateral_rows_;
  const std::vector<FrictionConeDecl>* cones_ = nullptr;
  std::vector<std::string> names_;  // row or cone name, per condition
};

/// Root functions that a stage above the formulation supplies (the contact
/// stage's witnesses, src/contact/): appended after the model's events and
/// the feasibility margins. Their roots are that stage's to act on.
class ModeRoots {
 public:
  virtual ~ModeRoots() = default;
  virtual int num_roots() const = 0;
  /// SUNDIALS's direction of each root (+1 rising, -1 falling, 0 both).
  virtual std::vector<int> RootDirections() const = 0;
  /// g (num_roots()) at the evaluated state of `mech` with the reported
  /// multipliers `lambda` (nc).
  virtual void EvaluateRoots(const Mechanics& mech,
                             const Eigen::Ref<const Eigen::VectorXd>& lambda,
                             double* g) const = 0;
  /// Whether EvaluateRoots reads `lambda` in the current mode. When it
  /// does not, the roots are functions of (t, q, v, p) alone and may be
  /// evaluated at a state that was set without the KKT solve
  /// (Mechanics::SetState; `lambda` then empty).
  virtual bool NeedsMultipliers() const { return true; }
};

/// Root functions of a run: the model's events, then the feasibility
/// margins (unilateral multipliers, friction cones), whose sign changes
/// are reported and refine the violation intervals, then the roots of an
/// attached ModeRoots.
///
/// Re-arming after a reset (docs/sensitivities.md, "Resets"): the state
/// a reset restarts from lies on the event's surface only to within the
/// root finder's tolerance, on either side, so the event function could
/// cross zero again at once. Rearm(k, g0) subtracts g0, the function's
/// value at the restart, until Settle finds the function clear of zero;
/// the shifted function is exactly zero at the restart, which SUNDIALS's
/// root finders treat as "not a crossing" (a component that is zero at
/// the initial time is watched from the sign it takes next).
class RootSet {
 public:
  /// `mode`: the roots of a stage above (the contact stage; nullptr:
  /// none), which then also owns the unilateral rows' feasibility.
  explicit RootSet(const Model& m, const ModeRoots* mode = nullptr);
  int size() const {
    return num_events_ + feasibility_.size() +
           (mode_ != nullptr ? mode_->num_roots() : 0);
  }
  /// Index of the first root of the attached ModeRoots.
  int mode_offset() const { return num_events_ + feasibility_.size(); }
  int num_events() const { return num_events_; }
  /// SUNDIALS's root directions (CVodeSetRootDirection,
  /// IDASetRootDirection): +1 rising, -1 falling, 0 both, per root.
  const std::vector<int>& Directions() const { return directions_; }
  /// Whether Evaluate reads the multipliers: when there are feasibility
  /// margins, or the attached ModeRoots needs them. The model's events
  /// are functions of (t, q, v, p) only (Point).
  bool NeedsMultipliers() const {
    return feasibility_.size() > 0 ||
           (mode_ != nullptr && mode_->NeedsMultipliers());
  }
  /// g at the evaluated state of `mech` with reported multipliers `lambda`.
  void Evaluate(const Mechanics& mech,
                const Eigen::Ref<const Eigen::VectorXd>& lambda,
                double* g) const;
  /// Shifts event k's root function by g0 (its value at a restart).
  void Rearm(int k, double g0) { offset_[static_cast<size_t>(k)] = g0; }
  /// Drops the shifts whose events' functions are now clear of zero
  /// (|g| above twice the shift) at the evaluated state of `mech`: called
  /// at output samples, between solver calls.
  void Settle(const Mechanics& mech);
  /// The user events among the roots flagged in `found` (in the declared
  /// direction), by index.
  std::vector<int> FiredEvents(const Model& m, const int* found) const;
  /// Records the roots flagged in `found` (after the sample at t has been
  /// recorded); returns true if an event that stops the run was among
  /// them. A falling feasibility margin opens a violation interval at t, a
  /// rising one closes it at t. Each user event's record gets its
  /// occurrence number.
  bool Record(const Model& m,
              double t,
              const int* found,
              SimulationSummary* sum) const;

 private:
  FeasibilitySet feasibility_;
  const ModeRoots* mode_ = nullptr;
  int num_events_ = 0;
  std::vector<double> offset_;   // per event (Rearm)
  std::vector<int> directions_;  // per root (Directions)
};

}  // namespace daedalus::internal
