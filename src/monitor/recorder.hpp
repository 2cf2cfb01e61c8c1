// The monitor: what a run watches and records at its output times and
// roots, whatever the formulation, integrator or evaluator
// (docs/diagnostics.md). The recorder turns an evaluated state into an
// output Sample (drift, multipliers, per-constraint and reaction power,
// energy and the work terms) and keeps the summary's running maxima, the
// feasibility intervals and the KKT health; the root set is the events and
// feasibility margins the integrators' root finders watch.
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

/// Builds samples and keeps the summary's maxima, feasibility intervals
/// and KKT health.
class Recorder {
 public:
  Recorder(const Model& model, SimulationSummary* sum, Observer* obs);

  const QuadLayout& layout() const { return layout_; }
  /// Sensitivities (components x parameters) copied into every sample;
  /// the matrix must outlive the recorder's use.
  void AttachSensitivities(const Eigen::MatrixXd* sens) { sens_ = sens; }

  /// Records one sample at the evaluated state of `mech` (all stages) with
  /// accelerations `vdot` and reported multipliers `lambda`. `quad` is the
  /// integrated quadrature vector (ignored at the first sample);
  /// `extra_stabilization` adds work not covered by the quadratures
  /// (projection jumps).
  void Record(Mechanics& mech,
              const Eigen::VectorXd& vdot,
              const Eigen::VectorXd& lambda,
              const Eigen::VectorXd& quad,
              double extra_stabilization,
              bool first);

  /// The constraint row with the largest drift in the last sample, and
  /// that drift (position for holonomic rows, velocity for all).
  int WorstDriftRow(double* drift) const;

 private:
  void RecordKktHealth(Mechanics& mech, Sample* s);

  QuadLayout layout_;
  SimulationSummary* sum_;
  Observer* obs_;
  ConstraintRows rows_;
  FeasibilitySet feasibility_;
  Model model_;
  double e0_ = 0.0;
  const Eigen::MatrixXd* sens_ = nullptr;
};

}  // namespace daedalus::internal
