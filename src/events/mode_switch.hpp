// A stage that switches the run's mode at roots of its own (the contact
// stage, src/contact/; docs/contact.md): the integrator adapters see only
// this. It supplies root functions (ModeRoots, appended to the RootSet),
// decides the mode at the start, and at a root return says whether the
// run restarts and from which consistent state, with the energy the
// switch changed (an impact's loss) for the energy balance. The adapters
// restart SUNDIALS as after a reset map (docs/sensitivities.md, "Resets").
#pragma once

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "events/event_jump.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/roots.hpp"

namespace daedalus::internal {

/// What a mode switch asks of the adapter.
struct ModeRestart {
  /// The mode or the state changed: restart the integrator from (q, v).
  bool restart = false;
  Eigen::VectorXd q, v;  // nq, nv: consistent with the new mode
  /// E+ - E- across the switch [J] (the impact work).
  double energy_change = 0.0;
  /// nc: the impulses of an impact (zeros otherwise), for the sample after.
  Eigen::VectorXd impulse;
  /// A contact left the impact on a short rebound, whose flight carries
  /// the restart's errors into the impact times (contact/zeno.hpp,
  /// kFineStartMargin): CVODES restarts with steps growing by at most
  /// kFineStartGrowth per step over its first steps (integrate/cvodes.cpp).
  bool fine_start = false;
};

/// The largest growth of CVODES's step per step after a fine start, the
/// bound IDAS keeps on every step.
inline constexpr double kFineStartGrowth = 2.0;

class ModeSwitcher : public ModeRoots {
 public:
  /// The mode at the start (t, q, v); may project (q, v) onto it.
  /// @throws std::runtime_error for a state the stage refuses (initial
  /// penetration), naming the contact and the depth.
  virtual void Start(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) = 0;
  /// True when one of its roots is flagged in `found` (its own roots,
  /// num_roots() entries: the RootSet's from mode_offset()).
  virtual bool Fired(const int* found) const = 0;
  /// At a root return at (t, q, v) with its roots `found`: the new mode
  /// and the restart. @throws std::runtime_error when no mode is
  /// consistent (an LCP without solution), naming the contacts.
  virtual ModeRestart Switch(double t,
                             const Eigen::VectorXd& q,
                             const Eigen::VectorXd& v,
                             const int* found) = 0;
  /// The last Switch that restarted, linearized (docs/contact.md,
  /// "Sensitivities"): the witness that fired and the state map as an
  /// EventJump with its saltation matrices S, R (its restart projection
  /// included), given `minus` and `plus` as for SensitivitiesAfter;
  /// nullptr when nothing switched (the identity). Leaves the Mechanics in
  /// the new mode. @throws as SensitivitiesAfter.
  virtual std::unique_ptr<EventJump> Jump(const FlowPoint& minus,
                                          const FlowPoint& plus) = 0;
  /// Forward sensitivities across the last Switch that restarted
  /// (docs/contact.md, "Sensitivities"): s+ = S s- + R dp per direction
  /// (s_minus, n x ns; `directions` np each), given the state and rate
  /// before the switch in the mode before (`minus`) and after it in the
  /// new mode (`plus`); the switch time's derivative per direction into
  /// `tau` (zeros when nothing switched), also booked on the switch's
  /// EventRecord (dt_dp, rate). Leaves the
  /// Mechanics in the new mode. @throws std::runtime_error where the
  /// switch is not differentiable (a grazing witness, simultaneous
  /// witnesses), naming the contacts.
  virtual Eigen::MatrixXd SensitivitiesAfter(
      const FlowPoint& minus,
      const FlowPoint& plus,
      const Eigen::MatrixXd& s_minus,
      const std::vector<Eigen::VectorXd>& directions,
      Eigen::VectorXd* tau) = 0;
  /// At every output sample (mech evaluated there, `lambda` reported):
  /// the feasibility certificate, and the re-armed roots settled.
  virtual void AtSample(const Mechanics& mech,
                        const Eigen::VectorXd& lambda) = 0;
  /// Opens the closed contacts among the model rows `rows` at (t, q, v),
  /// without a root of their own: a stage around this one decided, in its
  /// own mode, that they release (the friction stage, with the sticking
  /// contacts' tangential rows held; frictional_release.hpp). Returns
  /// whether any opened. A switcher without contacts has none.
  virtual bool Release(double t,
                       const Eigen::VectorXd& q,
                       const Eigen::VectorXd& v,
                       const std::vector<int>& rows) {
    (void)t, (void)q, (void)v, (void)rows;
    return false;
  }
};

}  // namespace daedalus::internal
