// The monitor: what a run records at its output times, whatever the
// formulation, integrator or evaluator (docs/diagnostics.md). The recorder
// turns an evaluated state into an output Sample (drift, multipliers,
// per-constraint and reaction power, energy and the work terms) and keeps
// the summary's running maxima, the feasibility intervals and the KKT
// health.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/simulate.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/roots.hpp"

namespace daedalus::internal {

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

  /// A reset map acted (ModelBuilder::Reset) and changed the energy by
  /// `energy_change` (E+ - E-): booked as reset work from now on, and the
  /// next Record, the state after the reset, may repeat the last
  /// sample's time.
  void NoteReset(double energy_change) {
    reset_work_ += energy_change;
    after_reset_ = true;
  }

  /// The unilateral rows are event-driven contacts (docs/contact.md): their
  /// stage certifies them (not the feasibility intervals), and the samples
  /// carry the impact work and impulses.
  void SetContacts();
  /// A contact switch changed the energy by `energy_change` (E+ - E-, an
  /// impact's loss) with impulses `impulse` (nc): booked as impact work,
  /// the impulses on the next sample (the state after it, which may
  /// repeat the last sample's time).
  void NoteImpact(double energy_change, const Eigen::VectorXd& impulse) {
    impact_work_ += energy_change;
    impulse_ = impulse;
    after_reset_ = true;
  }

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
  double reset_work_ = 0.0;
  double impact_work_ = 0.0;
  std::vector<int> friction_rows_;  // contacts' tangential rows
  bool contacts_ = false;
  Eigen::VectorXd impulse_;  // nc, with contacts
  bool after_reset_ = false;
  const Eigen::MatrixXd* sens_ = nullptr;
};

}  // namespace daedalus::internal
