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
  explicit FeasibilitySet(const Model& m);
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

/// Root functions of a run: the model's events, then the feasibility
/// margins (unilateral multipliers, friction cones), whose sign changes
/// are reported and refine the violation intervals.
class RootSet {
 public:
  explicit RootSet(const Model& m);
  int size() const { return num_events_ + feasibility_.size(); }
  /// g at the evaluated state of `mech` with reported multipliers `lambda`.
  void Evaluate(const Mechanics& mech,
                const Eigen::Ref<const Eigen::VectorXd>& lambda,
                double* g) const;
  /// Records the roots flagged in `found` (after the sample at t has been
  /// recorded); returns true if a user event (which stops the run) was
  /// among them. A falling feasibility margin opens a violation interval
  /// at t, a rising one closes it at t.
  bool Record(const Model& m,
              double t,
              const int* found,
              SimulationSummary* sum) const;

 private:
  FeasibilitySet feasibility_;
  int num_events_ = 0;
};

}  // namespace daedalus::internal
