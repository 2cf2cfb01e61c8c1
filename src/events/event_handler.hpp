// The events of one forward run (docs/sensitivities.md, "Events",
// "Resets", "Functionals at events"): which of the model's events a root
// return fired, their times' derivatives, whether the run stops, the
// reset map and the restart it leads to, the jump of the sensitivities,
// and the run's functionals at their events and at the end. The
// integrator adapters hand it the state, rates and sensitivities at a root
// return and carry out what it says (reinitialize SUNDIALS); it holds no
// SUNDIALS object and no formulation.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <optional>
#include <vector>

#include "daedalus/simulate.hpp"
#include "events/event_jump.hpp"
#include "events/functional_target.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/roots.hpp"

namespace daedalus::internal {

/// The user quadratures at one instant (nuq each; the functionals'
/// running integrals among them): values, integrands, and with forward
/// sensitivities their fixed-time sensitivities (nuq x ns).
struct QuadratureSnapshot {
  Eigen::VectorXd value, integrand;
  Eigen::MatrixXd sens;
};

class EventHandler {
 public:
  /// `directions`: the parameter direction (np) of each forward
  /// sensitivity; empty for a run without them.
  /// @throws std::invalid_argument for a bad options.sensitivity.functional.
  EventHandler(Mechanics* mech,
               const SimulationOptions& options,
               RootSet* roots,
               SimulationSummary* sum,
               std::vector<Eigen::VectorXd> directions);

  bool sensitivities() const { return !dirs_.empty(); }
  int ns() const { return static_cast<int>(dirs_.size()); }
  const std::vector<Eigen::VectorXd>& directions() const { return dirs_; }

  /// At a root return: the model's events among `found` (in their
  /// declared direction). False when none fired (feasibility roots only).
  bool Fire(const int* found);
  /// Linearizes the fired events at `minus` with the fixed-time state
  /// sensitivities `s` (n x ns; ignored without sensitivities).
  /// @throws std::runtime_error when sensitivities would have to cross a
  /// grazing event that stops the run, resets it or carries the
  /// functional.
  void Linearize(const FlowPoint& minus, const Eigen::MatrixXd& s);
  /// The run stops at this root return (an event with EventOptions::stop).
  bool stops() const { return stops_; }
  /// The event whose reset map acts (none when the run stops).
  const EventJump* reset() const {
    return reset_ >= 0 ? &jumps_[static_cast<size_t>(reset_)] : nullptr;
  }
  /// dt_e/dp per direction of the event that stops or resets the run.
  const Eigen::VectorXd& tau() const { return tau_; }
  /// The reported sensitivities (q, v, lambda) of the sample at a stop:
  /// the fixed-time ones plus y' tau (TotalSensitivityAtEvent).
  Eigen::MatrixXd TotalSensitivity(const Eigen::MatrixXd& s);
  /// The user quadratures' sensitivities at a stop: sQ + integrand tau.
  Eigen::MatrixXd TotalQuadratureSensitivity(const QuadratureSnapshot& q) const;
  /// After the event's sample and RootSet::Record: completes the records
  /// just added (from index `first`): dt/dp, rate, grazing, and the
  /// functionals at this occurrence when it is the target's (or one of
  /// SensitivityOptions::more_functionals's).
  void Annotate(size_t first, const QuadratureSnapshot& quad);

  // ---- the reset
  /// The consistent state after the reset: Delta(t, y-, p) projected onto
  /// the constraints (the correction in the event's record). Leaves
  /// `mech` evaluated there.
  void ResetState(Eigen::VectorXd* q, Eigen::VectorXd* v);
  /// The sensitivities after the reset, s+ = S s- + R dp (n x ns), given
  /// the restart `plus` with its rate and `mech` evaluated there with KKT
  /// solution `r_plus`; and re-arms the event's root function at plus.
  Eigen::MatrixXd SensitivitiesAfter(const FlowPoint& plus,
                                     const KktResult& r_plus,
                                     const Eigen::MatrixXd& s_minus);
  /// Records the energy the reset changed, E+ - E- (on the event's
  /// record), and re-arms its root function at the restart.
  void Restarted(double energy_minus, double energy_plus);

  // ---- the functionals
  /// Every declared functional at the end of the run (state `at` with
  /// total sensitivities `s` (n x ns) when the run has them, quadratures
  /// `quad` with total sensitivities); the target at its event must
  /// already have been evaluated (else it is reported as not reached).
  void AtEnd(const FlowPoint& at,
             const Eigen::MatrixXd& s,
             const QuadratureSnapshot& quad);

 private:
  FunctionalValue Evaluate(int functional,
                           const FlowPoint& at,
                           const Eigen::MatrixXd& s,
                           const Eigen::VectorXd& tau,
                           const QuadratureSnapshot& quad) const;

  Mechanics* mech_;
  const SimulationOptions& opt_;
  RootSet* roots_;
  SimulationSummary* sum_;
  std::vector<Eigen::VectorXd> dirs_;
  std::optional<FunctionalTarget> target_;
  // SensitivityOptions::more_functionals, and whether each one's event
  // occurrence was met.
  std::vector<FunctionalTarget> more_;
  std::vector<bool> more_done_;
  std::vector<int> fired_;
  std::vector<EventJump> jumps_;  // one per fired event
  Eigen::MatrixXd s_minus_;
  Eigen::VectorXd tau_, stop_tau_;
  bool stops_ = false;
  bool stopped_ = false;  // the run has stopped at an event
  int reset_ = -1;        // index into jumps_
  int stop_ = -1;         // index into jumps_
  size_t reset_record_ = 0;
  bool target_done_ = false;
  FlowPoint stop_point_;             // the state where the run stopped
  QuadratureSnapshot stop_quad_;     // and its quadratures
  Eigen::VectorXd plus_q_, plus_v_;  // the restart after a reset
};

}  // namespace daedalus::internal
