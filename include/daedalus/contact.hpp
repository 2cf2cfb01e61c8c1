// Unilateral contact, event-driven (docs/contact.md): a unilateral
// constraint (ModelBuilder::Unilateral, gap Phi >= 0) is *open* (no row in
// the KKT system, its multiplier 0) or *closed* (a row, lambda >= 0).
// Impacts follow Newton's restitution law per contact, solved as an
// impulse LCP over every contact that closes or is closed; releases are
// decided by the contact LCP at acceleration level. This header holds the
// contact law a unilateral constraint declares, the run options and what
// a run reports; it names nothing of model.hpp, which includes it.
//
// After Pfeiffer and Glocker, "Multibody Dynamics with Unilateral
// Contacts" (Wiley 1996), and Acary and Brogliato, "Numerical Methods for
// Nonsmooth Dynamical Systems" (Springer 2008), chapter 8 (the
// event-driven scheme Siconos implements).
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

namespace daedalus {

/// How a contact restitutes at an impact (docs/contact.md, "Impacts"):
/// kNewton, on the velocity, u_N+ = -e u_N- (the impulse LCP's xi_N =
/// u_N+ + e u_N- >= 0); kPoisson, on the impulse, in two phases:
/// compression (the impulse LCP with e = 0, impulse P_c) then expansion,
/// at least e P_c more. For one frictionless contact both give u+ = -e u-;
/// for several, or with friction, they differ, and Poisson's law is not
/// energetically consistent in general (it can gain energy with several
/// coupled contacts; a frictional impact that would gain energy ends the
/// run).
enum class ImpactLaw { kNewton, kPoisson };
const char* ToString(ImpactLaw law);

/// The impact law of one unilateral constraint (each of its rows is one
/// contact): Newton's restitution u+ = -e u- on the normal velocity
/// u = J v + Phi_t of a contact that strikes, simultaneous impacts
/// together (docs/contact.md, "Impacts").
struct ContactLaw {
  /// Newton's coefficient of restitution e, in [0, 1].
  double restitution = 0.0;
  /// When not empty: e is this model parameter's value (so that --param
  /// and ensembles can set it), checked to lie in [0, 1] at the start.
  std::string restitution_parameter = {};
  /// When not empty: this contact is a position limit of the multibody
  /// joint of this name (mb::JointLimits, declared by mb::Multibody::AddTo
  /// as the rows `limit:<joint>:lower` and `limit:<joint>:upper`), which
  /// --no-joint-limits (WithoutJointLimits) removes from the model
  /// (docs/contact.md, "Joint limits").
  std::string joint = {};
  /// Coulomb friction (docs/friction.md), when not empty: the name of the
  /// constraint whose rows are this contact's tangential velocities
  /// (declared with Nonholonomic: 1 row for a planar contact, 2 for a 3D
  /// isotropic cone). The contact's normal constraint then has one row.
  /// While the contact is closed its tangential rows *stick* (they are
  /// bilateral velocity constraints, admissible while |lambda_t| <=
  /// mu_static lambda_n) or *slip* (they leave the KKT system and the
  /// force -mu_kinetic lambda_n v_t / |v_t| acts along them); while it is
  /// open they carry no force. Build() checks the names and the values.
  std::string friction = {};
  /// Static and kinetic coefficients, >= 0; a negative mu_kinetic (the
  /// default) takes mu_static.
  double mu_static = 0.0;
  double mu_kinetic = -1.0;
  /// When not empty: mu_static (mu_kinetic) is this model parameter's
  /// value (so that --param can set it), checked >= 0 at the start.
  std::string mu_static_parameter = {};
  std::string mu_kinetic_parameter = {};
  /// Newton's law (the default) or Poisson's for `restitution`; Build()
  /// refuses any other value.
  ImpactLaw impact_law = ImpactLaw::kNewton;
};

/// How a run treats its unilateral constraints.
enum class ContactMode {
  /// kEventDriven when a unilateral constraint declares a ContactLaw
  /// (ModelBuilder::Unilateral(name, law)), else kMonitor.
  kAuto,
  /// Every unilateral row is an equality whose multiplier's sign is
  /// watched and reported (docs/diagnostics.md); nothing lets go.
  kMonitor,
  /// Every unilateral row is a contact that opens and closes
  /// (docs/contact.md); rows without a declared law have e = 0.
  kEventDriven
};
const char* ToString(ContactMode m);
/// @throws std::invalid_argument listing the valid names.
ContactMode ContactModeFromString(const std::string& s);

struct ContactOptions {
  ContactMode mode = ContactMode::kAuto;
  /// Accumulation (Zeno), docs/contact.md: a contact that would rebound
  /// below the integrator's resolution closes persistently (its
  /// restitution taken as 0): its rebound u+ would rise u+^2 / (2 |a|)
  /// (a < 0 the gap's free-flight acceleration) no higher than the gap's
  /// error tolerance (atol + rtol |q| through the contact's Jacobian), or
  /// land within the root finder's time resolution 2 u+ / |a|. Always on:
  /// it follows the physics and the tolerances, whatever the units.
  /// zeno_velocity > 0 is an explicit override on top of it: a contact
  /// that strikes slower than this [m/s, or the gap's unit per second]
  /// closes persistently too (a coarser rest, fewer impacts); 0 (the
  /// default) leaves the decision to the resolution criterion alone.
  double zeno_velocity = 0.0;
  /// A gap below this (in the gap's unit) counts as touching when a
  /// contact's mode is decided (at the start and at every switch); a gap
  /// below -gap_tolerance at the start is a penetration.
  double gap_tolerance = 1e-9;
  /// Initial penetration deeper than gap_tolerance: false refuses the run
  /// naming the contact and the depth; true projects the state onto the
  /// closed contact and reports the correction.
  bool project_penetration = false;
};

/// The Moreau-Jean time-stepping scheme (--integrator moreau-jean;
/// docs/moreau_jean.md): the theta-method at velocity level with the
/// contact impulses of each fixed step solved as a frictional contact
/// problem on the second-order cone by projected Gauss-Seidel.
struct MoreauJeanOptions {
  /// Positions q+ = q + h (theta v+ + (1 - theta) v-), theta in [1/2, 1]:
  /// 1/2 conserves the energy of a free flight under constant forces
  /// exactly, 1 is the fully implicit (dissipative) velocity update.
  double theta = 0.5;
  /// The projected Gauss-Seidel solver stops when one sweep moves no
  /// contact's local velocity W_ii dP_i by more than this, relative to
  /// the step's velocity scale max(|u_free|, |u-|, 1e-300 m/s) (--pgs-tol).
  double tolerance = 1e-10;
  /// Sweeps allowed per step (--pgs-max-iter); a solve that has not
  /// reached the tolerance then ends the run with its residual.
  int max_iterations = 5000;
  /// Leave the rows of contacts that cannot close within a step (their
  /// gaps at q +- h v say so) unevaluated: the step is the same, and a
  /// scene of thousands of contact rows evaluates only the near ones
  /// (docs/moreau_jean.md, "The broad phase"). false (--no-broad-phase)
  /// evaluates every row at every step.
  bool broad_phase = true;
};

/// What a Moreau-Jean run reports about its contacts (ContactReport::
/// time_stepping, JSON contact.time_stepping).
struct TimeSteppingReport {
  bool used = false;
  double theta = 0.0, step = 0.0, tolerance = 0.0;
  int max_iterations = 0;
  /// Steps with at least one active contact (a cone problem solved), the
  /// Gauss-Seidel sweeps over all of them, the most at one step, the
  /// largest final residual of a converged solve and the most contacts
  /// active at one step.
  long solves = 0, iterations = 0;
  int iterations_max = 0, active_max = 0;
  double residual_max = 0.0;
  /// The deepest penetration of a contact at the end of a step (>= 0:
  /// -min(gap, 0)), where and when: the scheme works at velocity level,
  /// so positions drift by O(h) at impacts.
  double penetration_max = 0.0, t_penetration_max = 0.0;
  std::string row_penetration_max;
  /// The work of the normal impulses (sum over steps of P_n (u_n- +
  /// u_n+) / 2, in the energy balance as impact work) and of the
  /// tangential ones (in the friction rows' constraint work).
  double impulse_work = 0.0, friction_impulse_work = 0.0;
  /// A solve that did not reach the tolerance ended the run here.
  bool stalled = false;
  double t_stalled = 0.0, stalled_residual = 0.0;
  int stalled_iterations = 0;
};

/// One contact switch of a run: an impact (impulse LCP), a release
/// (multiplier through zero), a closure at rest, or the start's mode.
struct ContactEvent {
  double t = 0.0;
  /// "start", "impact", "release" or "close"; with friction also "slip"
  /// (stick -> slip, or a slip that reverses) and "stick" (slip -> stick).
  std::string kind;
  /// The contact rows whose witness fired (names of the rows).
  std::vector<std::string> rows;
  /// Impact: the impulse of every contact row (nc; 0 on other rows) [N s].
  Eigen::VectorXd impulse;
  /// Impact: the normal velocities before and after (nc).
  Eigen::VectorXd u_minus, u_plus;
  /// E+ - E- (<= 0 for an impact with e <= 1) [J]: in the energy balance
  /// as impact work.
  double energy_change = 0.0;
  /// Contacts closed persistently by accumulation (e taken as 0): their
  /// rebound would fall below the integrator's resolution, or they struck
  /// slower than ContactOptions::zeno_velocity (docs/contact.md).
  std::vector<std::string> zeno;
  /// The closed contact rows after the switch (names).
  std::vector<std::string> closed;
  /// The LCP size solved and its residual (max of |min(w, z)|).
  int lcp_size = 0;
  double lcp_residual = 0.0;
  /// Projection of the restart onto the new mode's closed rows (max-norms).
  double correction_position = 0.0, correction_velocity = 0.0;
};

/// One contact with Coulomb friction (ContactLaw::friction) over a run
/// (docs/friction.md). Its friction work is the constraint work of its
/// tangential rows (Sample::constraint_work; their sum over all contacts
/// is Sample::friction_work).
struct FrictionContactReport {
  std::string contact, tangential;  ///< the normal row, the tangential rows
  double mu_static = 0.0, mu_kinetic = 0.0;
  int stick_to_slip = 0, slip_to_stick = 0, reversals = 0;
  /// Over the samples where it sticks: the largest |power| of its
  /// tangential rows (|lambda_t . (J_t v)|: 0 to round-off certifies that
  /// a sticking contact does no work) and the smallest slip margin
  /// mu_static lambda_n - |lambda_t| (>= 0: the stick was admissible).
  double max_stick_power = 0.0;
  double min_stick_margin = 0.0, t_min_stick_margin = 0.0;
  bool any_stick = false;
  /// Samples where it slips: the largest |lambda_t| - mu_kinetic lambda_n
  /// (0 to round-off: the force lies on the cone).
  double max_slip_cone_error = 0.0;
};

/// The contacts of a run: their switches and the feasibility certificate
/// of the modes it went through (docs/contact.md, "The certificate").
struct ContactReport {
  bool event_driven = false;
  std::vector<std::string> rows;  ///< contact rows (names)
  std::vector<double> restitution;
  std::vector<ContactEvent> events;
  int impacts = 0, releases = 0, closures = 0;
  /// The smallest gap of an open contact and the smallest multiplier of
  /// a closed one over the samples, with their times and rows: both >= 0
  /// (within gap_tolerance and the multipliers' round-off) certify every
  /// mode the run went through.
  double min_open_gap = 0.0, t_min_open_gap = 0.0;
  std::string row_min_open_gap;
  double min_closed_lambda = 0.0, t_min_closed_lambda = 0.0;
  std::string row_min_closed_lambda;
  bool any_open = false, any_closed = false;
  /// The time of the last switch after which every contact stayed closed
  /// (the run came to rest on its contacts), or -1.
  double t_rest = -1.0;
  /// At the last accumulation (a contact closed for good, ContactEvent::
  /// zeno): the accumulation point of its impact times, from the
  /// geometric tail of the last (up to eight), t_K + d r / (1 - r) with d
  /// the last interval and r the intervals' mean ratio (exact for the
  /// bouncing ball's t_k); -1 when there was none or fewer than three
  /// impacts.
  double t_accumulation = -1.0;
  /// Witness roots of an open contact met while it separates: crossings
  /// below the integrator's resolution (a gap within atol of zero),
  /// re-armed without a switch.
  int spurious_roots = 0;
  double impact_work = 0.0;  ///< sum of the impacts' E+ - E- [J]
  std::vector<FrictionContactReport> friction;
  /// --integrator moreau-jean: the contact solves and the penetration.
  TimeSteppingReport time_stepping;
};

}  // namespace daedalus
