#include "formulation/support.hpp"

#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include "daedalus/sparse_kkt.hpp"

namespace daedalus::internal {

const char* ToString(KktPath p) {
  return p == KktPath::kDense ? "dense" : "sparse";
}

const char* ToString(Feature f) {
  switch (f) {
    case Feature::kNone:
      return "integration";
    case Feature::kEvents:
      return "events";
    case Feature::kFeasibility:
      return "unilateral and friction-cone monitoring";
    case Feature::kForward:
      return "forward sensitivities";
    case Feature::kAdjoint:
      return "adjoint sensitivities";
    case Feature::kDriftEscalation:
      return "drift escalation";
    case Feature::kCounterfactual:
      return "counterfactuals";
    case Feature::kResets:
      return "state resets";
    case Feature::kEventSensitivities:
      return "sensitivities at events";
  }
  return "?";
}

ModelTraits TraitsOf(const Model& model) {
  ModelTraits t;
  t.constraints = model.nc() > 0;
  t.moving = model.has_moving_constraints();
  t.nonholonomic = model.has_nonholonomic_constraints();
  t.events = !model.data().events.empty();
  for (const auto& e : model.data().events)
    t.resets |= static_cast<bool>(e.reset);
  t.feasibility = !model.data().friction_cones.empty();
  for (const auto& c : model.constraints()) {
    t.feasibility |= c.unilateral;
    t.unilateral |= c.unilateral;
    t.contact_laws |= c.unilateral && c.law.has_value();
    t.joint_limits |= c.unilateral && c.law && !c.law->joint.empty();
    const bool friction = c.unilateral && c.law && !c.law->friction.empty();
    t.friction |= friction;
    if (friction)
      for (const auto& tc : model.constraints())
        t.friction_cone3d |= tc.name == c.law->friction && tc.rows == 2;
  }
  t.quaternions = !model.quaternions().empty();
  return t;
}

bool EventDrivenContact(const SimulationOptions& o, const ModelTraits& t) {
  switch (o.contact.mode) {
    case ContactMode::kMonitor:
      return false;
    case ContactMode::kEventDriven:
      return t.unilateral;
    case ContactMode::kAuto:
      return t.contact_laws;
  }
  return false;
}

bool IsFixedStep(Integrator i) {
  return i == Integrator::kStormerVerlet || i == Integrator::kSymplecticEuler ||
         i == Integrator::kRattle;
}

bool IsAlpha(Integrator i) {
  return i == Integrator::kGeneralizedAlpha || i == Integrator::kHht;
}

namespace {

bool Cvodes(Integrator i) {
  return i == Integrator::kCvodesBdf || i == Integrator::kCvodesAdams;
}

std::string Flag(Integrator i) { return std::string(ToString(i)); }

// Event-driven contact (docs/contact.md): what it runs on.
std::string ContactRefusal(const SimulationOptions& o,
                           KktPath path,
                           const ModelTraits& traits) {
  if (IsFixedStep(o.integrator) || IsAlpha(o.integrator))
    return "--integrator " + Flag(o.integrator) +
           " does not restart after a contact switch (a mode change is a "
           "reset, which the fixed-step and generalized-alpha schemes do "
           "not take); use --integrator cvodes-bdf, cvodes-adams or idas";
  // GGL restarts cleanly (its multipliers are held at velocity level and
  // start from the acceleration-level KKT solution, as the index-1
  // forms'): an open contact's rows are lambda_i = 0 and mu_k = 0
  // (DaeForm::OpenRows). Index 3 holds its multipliers at position level
  // only, and a restart with the bodies moving leaves them an O(1/h)
  // transient that shifts the constraint work (Refusal's reason for
  // index 3 with reset maps); every contact switch is such a restart.
  if (o.formulation == Formulation::kIndex3)
    return "event-driven contact does not run on --formulation index3: "
           "each contact switch restarts IDAS, and the index-3 form's "
           "multipliers, determined at position level only, carry an "
           "O(1/h) transient after a restart with the bodies moving, which "
           "shifts the constraint work and the energy balance (the transient "
           "for which index 3 refuses reset maps too); use --formulation "
           "ggl (IDAS's default), unstabilized or baumgarte "
           "(docs/contact.md)";
  // The sparse path takes the mode's row mask in its KKT solves,
  // projections and Newton preconditioner (sparse_mechanics.cpp): the ODE
  // forms on CVODES. IDAS's residual Jacobian and the sensitivities are
  // taken there by a dense tangent shadow that has no mask.
  const std::string or_monitor =
      traits.joint_limits ? ""
                          : ", or --contact monitor to keep the unilateral "
                            "rows as monitored equalities";
  if (path == KktPath::kSparse && o.integrator == Integrator::kIdas)
    return "event-driven contact on IDAS runs on the dense evaluator: the "
           "sparse evaluator's residual Jacobian (its dense tangent shadow) "
           "does not drop the open contacts' rows; use --kkt dense, or "
           "--integrator cvodes-bdf or cvodes-adams with the sparse KKT "
           "path" +
           or_monitor;
  if (path == KktPath::kSparse && o.sensitivity.method != SensMethod::kNone)
    return "sensitivities across contact switches run on the dense "
           "evaluator (the saltation matrices and the start's linearization "
           "take the sparse evaluator's dense tangent shadow, which does not "
           "drop the open contacts' rows); use --kkt dense" +
           or_monitor;
  // A planar slipping row's equation lambda_t = -mu sigma lambda_n has a
  // fixed sigma for the mode (DaeForm::Residual); a 3D cone's sigma is
  // v_t / |v_t|, which the IDAS residual does not evaluate.
  if (traits.friction_cone3d && o.integrator == Integrator::kIdas)
    return "contacts with a 3D friction cone run on CVODES (cvodes-bdf, "
           "cvodes-adams): a slipping cone's direction v_t / |v_t| is not in "
           "the IDAS residual (planar friction runs on IDAS; "
           "docs/friction.md)";
  if (traits.friction && o.sensitivity.method == SensMethod::kAdjoint)
    return "adjoint sensitivities with friction are not implemented (the "
           "backward pass does not take a slipping row's equation); use "
           "--sens-method forward (docs/friction.md, \"Sensitivities\")";
  if (traits.friction_cone3d && o.sensitivity.method != SensMethod::kNone)
    return "sensitivities with a 3D friction cone are not implemented (the "
           "slip direction v_t / |v_t| is held in the linearization); "
           "forward sensitivities take planar friction only "
           "(docs/friction.md, \"Sensitivities\")";
  if (o.drift_tol > 0.0 && o.drift_action == DriftAction::kEscalate)
    return "drift escalation restarts the run without the contact stage's "
           "mode; use --drift-action fail with event-driven contact";
  return "";
}

// Formulation x integrator on a model with `traits`.
std::string PairRefusal(Formulation f,
                        Integrator i,
                        const ModelTraits& traits) {
  if (IsFixedStep(i)) {
    // Without constraints there is nothing for a formulation to enforce:
    // every formulation is the same ODE.
    if (!traits.constraints) return "";
    if (i != Integrator::kRattle)
      return "--integrator " + Flag(i) +
             " integrates an unconstrained Hamiltonian system and has no "
             "constraint forces; use --integrator rattle (stationary "
             "holonomic constraints) or a SUNDIALS integrator";
    if (traits.nonholonomic)
      return "a nonholonomic constraint makes the flow non-Hamiltonian, so "
             "no symplectic scheme applies; use a SUNDIALS integrator";
    if (traits.moving)
      return "RATTLE's position step solves Phi(q) = 0 for stationary "
             "constraints; a moving constraint Phi(q, t) needs a SUNDIALS "
             "integrator";
    if (f != Formulation::kIndex3)
      return "RATTLE discretizes the index-3 formulation (Phi(q) = 0 at "
             "every position step, J v = 0 at every velocity step) and no "
             "other; use --formulation index3 (the default with --integrator "
             "rattle)";
    return "";
  }
  if (IsAlpha(i)) {
    // Without constraints every formulation is the same ODE.
    if (!traits.constraints || f == Formulation::kIndex3) return "";
    return "--integrator " + Flag(i) +
           " discretizes the index-3 formulation (the equations of motion "
           "and Phi = 0 at every step, nonholonomic rows at velocity level) "
           "and no other; use --formulation index3 (the default with "
           "--integrator " +
           Flag(i) + ")";
  }
  if ((f == Formulation::kGgl || f == Formulation::kIndex3) && Cvodes(i))
    return "the ggl and index3 formulations are DAEs (their multipliers are "
           "algebraic unknowns and their constraints algebraic equations) "
           "and CVODES integrates ODEs only; use --integrator idas";
  if (f == Formulation::kProjection && i == Integrator::kIdas)
    return "IDAS has no projection step (it advances the DAE by BDF on the "
           "residual alone); use --formulation ggl, which enforces the "
           "position and velocity constraints as equations, or projection "
           "on --integrator cvodes-bdf";
  if (f == Formulation::kProjection && i == Integrator::kCvodesAdams)
    return "CVODES projects after BDF steps only (the projection corrects "
           "the BDF error estimate); use --integrator cvodes-bdf";
  return "";
}

// Moreau-Jean time stepping (docs/moreau_jean.md): the whole decision for
// --integrator moreau-jean. Its contacts are its own stage
// (contact/moreau_jean.cpp), at velocity level with impulses.
std::string MoreauJeanRefusal(const SimulationOptions& o,
                              KktPath path,
                              const ModelTraits& traits) {
  if (path == KktPath::kSparse)
    return "moreau-jean runs on the dense evaluator (its Delassus operator "
           "J M^-1 J' is built from the dense M and J of the active rows); "
           "use --kkt dense";
  if (traits.constraints && o.formulation != Formulation::kUnstabilized)
    return "moreau-jean states every constraint at velocity level (the "
           "bilateral rows J v+ + Phi_t = 0 and the contacts' impulse law "
           "at the end of each step) and no position-level form; use "
           "--formulation unstabilized (the default with --integrator "
           "moreau-jean)";
  if (traits.unilateral && o.contact.mode == ContactMode::kMonitor)
    return "moreau-jean treats every unilateral row as a contact (impulses "
           "P >= 0 at velocity level); --contact monitor would hold them as "
           "equalities: use --contact auto";
  if (traits.quaternions)
    return "moreau-jean updates positions as q+ = q + h (theta v+ + (1 - "
           "theta) v-), which needs nq = nv: the model has quaternion "
           "coordinates (the Lie-group update is not implemented for it); use "
           "--integrator cvodes-bdf";
  if (traits.events)
    return "moreau-jean does not locate the model's events (its steps are "
           "fixed and its contacts are impulses within them); use "
           "--integrator cvodes-bdf, cvodes-adams or idas";
  if (o.sensitivity.method != SensMethod::kNone)
    return "moreau-jean has no sensitivities (the step map through the "
           "cone solver is not differentiated); use --integrator cvodes-bdf "
           "with event-driven contact";
  if (o.drift_tol > 0.0)
    return "moreau-jean lets positions drift by O(h) at impacts (it "
           "reports the drift and the deepest penetration) and does not "
           "hold a --drift-tol; leave --drift-tol out";
  return "";
}

}  // namespace

Formulation EscalationTarget(const SimulationOptions& o, std::string* why) {
  const Formulation f = o.formulation;
  auto none = [&](const std::string& m) {
    if (why) *why = m;
    return Formulation::kUnstabilized;
  };
  if (f != Formulation::kUnstabilized && f != Formulation::kBaumgarte)
    return none(
        "ggl, index3 and projection already enforce the position and "
        "velocity constraints: there is no stronger form to escalate to");
  if (o.integrator == Integrator::kCvodesBdf) return Formulation::kProjection;
  if (o.integrator == Integrator::kCvodesAdams)
    return none(
        "escalation switches to projection, which CVODES applies "
        "after BDF steps only; use --integrator cvodes-bdf");
  if (o.integrator == Integrator::kIdas) return Formulation::kGgl;
  if (IsAlpha(o.integrator))
    return none(
        "generalized-alpha and HHT discretize index 3 only: there is no "
        "stronger form to escalate to");
  return none("the fixed-step schemes have no formulation to escalate to");
}

namespace {

// What a model with quaternions (nq != nv, eval/chart.hpp) does not run on
// yet: every formulation on CVODES, IDAS and the fixed-step schemes with
// either evaluator does (the sparse one seeds the chart direction by
// direction, eval/sparse_chart.hpp), with forward and adjoint sensitivities.
std::string QuaternionRefusal(const SimulationOptions& o, KktPath /*path*/) {
  const std::string head =
      "the model has quaternion coordinates (nq != nv: velocities that are "
      "not coordinate derivatives), which ";
  // Generalized-alpha and HHT run: their update is the Lie-group one of
  // Bruls, Cardona and Arnold (2012) there (integrate/alpha_step.cpp).
  // Forward sensitivities map their position rows through the tangent of
  // q' = N(q) v (CVODES: OdeForm::RateTangent; IDAS: the tangent of the
  // residual and DaeForm::InitialSensitivity), and the adjoints are their
  // exact transposes, with the functionals differentiated with respect to
  // the raw q through n(q) (docs/sensitivities.md, "Quaternions"): both
  // run wherever they run without quaternions, but for the index-3 form's
  // forward sensitivities below.
  if (o.sensitivity.method == SensMethod::kForward &&
      o.formulation == Formulation::kIndex3)
    return head +
           "forward sensitivities of the index-3 form do not support: on a "
           "top held by its tip (tests/sensitivity/"
           "quaternion_sensitivity_test.cpp) they missed central differences "
           "by 2e-6 relative at rtol 1e-10 and by 2e-4 at 1e-11, not "
           "converging, while every other form agreed to 1e-7; use "
           "--formulation ggl, unstabilized or baumgarte on --integrator "
           "idas";
  return "";
}

}  // namespace

std::string Refusal(const SimulationOptions& o,
                    KktPath path,
                    const ModelTraits& traits) {
  if (o.integrator == Integrator::kMoreauJean)
    return MoreauJeanRefusal(o, path, traits);
  // Both KKT paths run every formulation, integrator and feature: the
  // formulations are stated on the Mechanics interface (mechanics.hpp).
  std::string why = PairRefusal(o.formulation, o.integrator, traits);
  if (!why.empty()) return why;
  const SensMethod sens = o.sensitivity.method;
  const bool fixed = IsFixedStep(o.integrator);
  // A monitored unilateral row is an equality: a joint limit monitored
  // would hold the joint on both of its limits.
  if (traits.joint_limits && o.contact.mode == ContactMode::kMonitor)
    return "--contact monitor holds every unilateral row as an equality, "
           "which would hold each limited joint on its limits; the model's "
           "joint limits are contacts (--contact auto or event-driven), or "
           "--no-joint-limits runs without them (the joints free)";
  if (EventDrivenContact(o, traits)) {
    why = ContactRefusal(o, path, traits);
    // Joint limits are contacts by default (docs/contact.md, "Joint
    // limits"): say how to run without them.
    if (!why.empty() && traits.joint_limits)
      why +=
          "; the model's joint limits are contacts: --no-joint-limits "
          "runs without them (the joints free)";
    if (!why.empty()) return why;
  }
  if (traits.resets && (fixed || IsAlpha(o.integrator)))
    return "--integrator " + Flag(o.integrator) +
           " does not restart at an event's reset map: its events stop the "
           "run or are recorded, and a restart would need the scheme's own "
           "start-up from the new state (its acceleration-like variables), "
           "not implemented; use --integrator cvodes-bdf, cvodes-adams or "
           "idas, which restart SUNDIALS consistently after each reset";
  if (traits.resets && o.formulation == Formulation::kIndex3)
    return "the index-3 form does not restart cleanly after a reset map: its "
           "multipliers are determined at position level only, and in the "
           "first steps from a restart with the bodies moving IDAS's "
           "multipliers carry an O(1/h) transient (on the support chain, "
           "reversing the velocities mid-swing shifted the constraint work, "
           "and so the energy balance, by 4.5e-4 J and the sensitivities by "
           "0.6 %, where GGL restarts to 1e-11 J); use --formulation ggl";
  if (sens != SensMethod::kNone && IsAlpha(o.integrator))
    return "--integrator " + Flag(o.integrator) +
           " has no sensitivity module (the sensitivities of its step would "
           "be the linearized step map with the same KKT iteration matrix, "
           "not implemented); use --integrator idas with --formulation ggl "
           "or index3";
  if (sens != SensMethod::kNone && fixed)
    return "--integrator " + Flag(o.integrator) +
           " takes fixed steps without error control, and sensitivities are "
           "integrated under the state's error test by the SUNDIALS "
           "sensitivity modules; use --integrator cvodes-bdf or idas";
  if (sens == SensMethod::kForward && o.integrator == Integrator::kIdas &&
      o.sensitivity.corrector == SensCorrector::kStaggered &&
      !o.sensitivity.error_control)
    return "IDAS's staggered corrector with the sensitivities left out of "
           "the error test lets them grow without bound (the slider-crank's "
           "d q / d k reached 1e9 on GGL, 1e23 unstabilized, while the state "
           "was right); keep them in the error test, or use "
           "--sens-corrector simultaneous with --sens-no-error-control";
  if (sens == SensMethod::kForward && o.formulation == Formulation::kProjection)
    return "CVODES projects the state only: the sensitivities would need "
           "the derivative of the projection, which CVODES does not apply; "
           "use --formulation baumgarte on CVODES, or ggl on IDAS";
  if (sens == SensMethod::kAdjoint) {
    if (o.formulation == Formulation::kProjection)
      return "the adjoint of a projected integration needs the adjoint of "
             "the projection, which CVODES's adjoint module does not have; "
             "use --formulation baumgarte or unstabilized";
    if (o.formulation == Formulation::kIndex3)
      return "the adjoint of the index-3 form is a DAE of index 3 whose "
             "terminal values must satisfy the adjoint constraints and "
             "their derivatives (Cao, Li, Petzold and Serban 2003), which "
             "Daedalus does not construct; the adjoint runs with "
             "--formulation unstabilized, baumgarte or ggl on --integrator "
             "idas (the adjoint DAE of the run's residual), or unstabilized "
             "or baumgarte on cvodes-bdf/cvodes-adams (the ODE's adjoint), "
             "or use forward sensitivities, which run on index3";
  }
  const bool escalate =
      o.drift_tol > 0.0 && o.drift_action == DriftAction::kEscalate;
  if (escalate && sens != SensMethod::kNone) {
    std::string none;
    EscalationTarget(o, &none);
    if (none.empty())
      return "escalation switches formulation mid-run, and the sensitivities "
             "of the switched run would need the derivative of the "
             "projection onto the manifold at the switch; use --drift-action "
             "fail with --sens";
  }
  // Last: a cell refused on every model gives that reason on a quaternion
  // model too, as docs/support.md's quaternion table says
  // (QuaternionCellRefusal).
  if (traits.quaternions) return QuaternionRefusal(o, path);
  return "";
}

std::string KnownDefect(Formulation /*f*/, Integrator /*i*/) {
  // None today. The index-3 form on IDAS was one until its Newton test
  // weighed the velocities by the step and capped the weights at
  // round-off (src/integrate/idas.cpp, ScaledConvTest): the support-matrix
  // chain at rtol 1e-8, atol 1e-10 failed with IDA_CONV_FAIL at t = 6e-9.
  return "";
}

std::string CellRefusal(Formulation f,
                        Integrator i,
                        KktPath path,
                        Feature feature) {
  SimulationOptions o;
  o.formulation = f;
  o.integrator = i;
  if (IsFixedStep(i) || i == Integrator::kMoreauJean) o.step = o.output_step;
  ModelTraits traits;
  traits.constraints = true;
  switch (feature) {
    case Feature::kEvents:
      traits.events = true;
      break;
    case Feature::kFeasibility:
      traits.feasibility = true;
      break;
    case Feature::kForward:
      o.sensitivity.method = SensMethod::kForward;
      break;
    case Feature::kAdjoint:
      o.sensitivity.method = SensMethod::kAdjoint;
      break;
    case Feature::kDriftEscalation:
      o.drift_tol = 1e-6;
      o.drift_action = DriftAction::kEscalate;
      break;
    case Feature::kResets:
      traits.events = traits.resets = true;
      break;
    case Feature::kEventSensitivities: {
      // Both methods across events with resets: the cell runs when either
      // does (the table says which, EventSensitivityCell).
      traits.events = traits.resets = true;
      o.sensitivity.method = SensMethod::kForward;
      const std::string fwd = Refusal(o, path, traits);
      o.sensitivity.method = SensMethod::kAdjoint;
      const std::string adj = Refusal(o, path, traits);
      return fwd.empty() || adj.empty() ? "" : fwd;
    }
    default:
      break;
  }
  return Refusal(o, path, traits);
}

std::string EventSensitivityCell(Formulation f, Integrator i, KktPath path) {
  SimulationOptions o;
  o.formulation = f;
  o.integrator = i;
  if (IsFixedStep(i) || i == Integrator::kMoreauJean) o.step = o.output_step;
  ModelTraits traits;
  traits.constraints = traits.events = traits.resets = true;
  o.sensitivity.method = SensMethod::kForward;
  const bool fwd = Refusal(o, path, traits).empty();
  o.sensitivity.method = SensMethod::kAdjoint;
  const bool adj = Refusal(o, path, traits).empty();
  if (fwd && adj) return "forward, adjoint";
  return fwd ? "forward" : adj ? "adjoint" : "no";
}

std::string QuaternionCellRefusal(Formulation f,
                                  Integrator i,
                                  KktPath path,
                                  Feature feature) {
  const std::string plain = CellRefusal(f, i, path, feature);
  if (!plain.empty()) return plain;
  SimulationOptions o;
  o.formulation = f;
  o.integrator = i;
  if (IsFixedStep(i) || i == Integrator::kMoreauJean) o.step = o.output_step;
  if (feature == Feature::kForward) o.sensitivity.method = SensMethod::kForward;
  if (feature == Feature::kAdjoint) o.sensitivity.method = SensMethod::kAdjoint;
  return QuaternionRefusal(o, path);
}

KktPath ResolveKktPath(const Model& model, const SimulationOptions& o) {
  const KktMethod m = o.kkt.method;
  if (IsSparseMethod(m)) return KktPath::kSparse;
  if (m != KktMethod::kAuto) return KktPath::kDense;
  // IDAS, generalized-alpha and HHT evaluate the residual Jacobian by
  // dense tangents (or compiled programs): auto keeps them on the dense
  // evaluator.
  if (o.integrator == Integrator::kIdas || IsAlpha(o.integrator) ||
      o.integrator == Integrator::kMoreauJean)
    return KktPath::kDense;
  // Event-driven contact (joint limits included): auto takes the dense
  // evaluator (the sparse one runs it on CVODES when asked, ContactRefusal).
  if (EventDrivenContact(o, TraitsOf(model))) return KktPath::kDense;
  // A model whose M and h come from recursive algorithms has them on the
  // dense evaluator only (the sparse one differentiates the energies).
  if (model.data().inertial_dynamics) return KktPath::kDense;
  const SparseWorkspace ws(model);
  return IsSparseMethod(ResolveKktMethod(KktMethod::kAuto, ws.M, ws.J))
             ? KktPath::kSparse
             : KktPath::kDense;
}

std::string SupportTableMarkdown() {
  const Formulation forms[] = {
      Formulation::kUnstabilized, Formulation::kBaumgarte,
      Formulation::kProjection, Formulation::kGgl, Formulation::kIndex3};
  const Integrator integrators[] = {Integrator::kCvodesBdf,
                                    Integrator::kCvodesAdams,
                                    Integrator::kIdas,
                                    Integrator::kStormerVerlet,
                                    Integrator::kSymplecticEuler,
                                    Integrator::kRattle,
                                    Integrator::kGeneralizedAlpha,
                                    Integrator::kHht};
  const Feature features[] = {Feature::kNone,
                              Feature::kEvents,
                              Feature::kFeasibility,
                              Feature::kForward,
                              Feature::kAdjoint,
                              Feature::kDriftEscalation,
                              Feature::kCounterfactual,
                              Feature::kResets,
                              Feature::kEventSensitivities};
  // Reasons are numbered in order of first appearance.
  std::vector<std::string> reasons;
  auto cell = [&](const std::string& why) -> std::string {
    if (why.empty()) return "yes";
    for (size_t k = 0; k < reasons.size(); ++k)
      if (reasons[k] == why) return "no (" + std::to_string(k + 1) + ")";
    reasons.push_back(why);
    return "no (" + std::to_string(reasons.size()) + ")";
  };
  std::ostringstream os;
  os << "# Support matrix\n\n"
     << "Generated from `src/formulation/support.cpp` by "
        "`build/tests/support_table > docs/support.md`; "
        "`tests/formulation/support_matrix_test.cpp` fails when this file "
        "differs from what the source says. Every combination marked yes is "
        "run by that test on a small constrained mechanism and compared with "
        "a reference combination on the same mechanism (Baumgarte on CVODES "
        "BDF at a tighter tolerance); every combination marked no is refused "
        "before the run (an exception from `Simulate`, exit status 2 on the "
        "command line, nothing written) with the numbered reason.\n\n"
     << "Rows: `--formulation` x `--integrator` on a model with stationary "
        "holonomic constraints (without constraints every formulation is "
        "the same ODE and every integrator runs it). Columns: the feature "
        "switched on. A cell reads the same on both KKT paths (`--kkt "
        "dense|full-lu` and `--kkt schur|sparse-cholesky|sparse-lu|qr`): ";
  bool same = true;
  for (Formulation f : forms)
    for (Integrator i : integrators)
      for (Feature x : features)
        same &= CellRefusal(f, i, KktPath::kDense, x) ==
                CellRefusal(f, i, KktPath::kSparse, x);
  os << (same ? "they agree everywhere.\n\n"
              : "they differ; see the sparse table.\n\n");
  auto table = [&](KktPath path) {
    os << "| formulation | integrator |";
    for (Feature x : features) os << " " << ToString(x) << " |";
    os << "\n|---|---|";
    for (size_t k = 0; k < std::size(features); ++k) os << "---|";
    os << "\n";
    for (Formulation f : forms) {
      for (Integrator i : integrators) {
        os << "| " << ToString(f) << " | " << ToString(i) << " |";
        for (Feature x : features) {
          std::string c = cell(CellRefusal(f, i, path, x));
          if (c == "yes" && !KnownDefect(f, i).empty()) c = "yes (defect)";
          if (x == Feature::kEventSensitivities && c == "yes")
            c = EventSensitivityCell(f, i, path);
          if (x == Feature::kDriftEscalation && c == "yes") {
            SimulationOptions o;
            o.formulation = f;
            o.integrator = i;
            std::string none;
            const Formulation to = EscalationTarget(o, &none);
            c = none.empty() ? std::string("to ") + ToString(to)
                             : "fails at a violation";
          }
          os << " " << c << " |";
        }
        os << "\n";
      }
    }
    os << "\n";
  };
  table(KktPath::kDense);
  if (!same) {
    os << "Sparse path:\n\n";
    table(KktPath::kSparse);
  }
  // Moreau-Jean (docs/moreau_jean.md): its own rows, the same columns.
  os << "Time stepping with contact impulses (`--integrator moreau-jean`, "
        "docs/moreau_jean.md; a first-order scheme, so the test above does "
        "not compare it with the reference: tests/contact/"
        "moreau_jean_test.cpp checks it against closed forms). Dense "
        "path; the sparse path refuses it:\n\n";
  os << "| formulation | integrator |";
  for (Feature x : features) os << " " << ToString(x) << " |";
  os << "\n|---|---|";
  for (size_t k = 0; k < std::size(features); ++k) os << "---|";
  os << "\n";
  for (Formulation f : forms) {
    os << "| " << ToString(f) << " | moreau-jean |";
    for (Feature x : features) {
      std::string c =
          cell(CellRefusal(f, Integrator::kMoreauJean, KktPath::kDense, x));
      if (x == Feature::kEventSensitivities && c == "yes") c = "no";
      os << " " << c << " |";
    }
    os << "\n";
  }
  os << "\n";
  os << "Drift escalation: \"to F\" switches to formulation F at the first "
        "sample whose drift exceeds `--drift-tol`; \"fails at a violation\" "
        "stops the run there with the drift, the row and the time, because ";
  {
    SimulationOptions o;
    o.formulation = Formulation::kGgl;
    std::string why;
    EscalationTarget(o, &why);
    os << why << ", or because ";
    o.formulation = Formulation::kBaumgarte;
    o.integrator = Integrator::kCvodesAdams;
    EscalationTarget(o, &why);
    os << why << " (Adams).\n\n";
  }
  for (Formulation f : forms)
    for (Integrator i : integrators)
      if (!KnownDefect(f, i).empty())
        os << "Known defect: " << ToString(f) << " on " << ToString(i)
           << " runs, but " << KnownDefect(f, i)
           << " (the support-matrix test expects the failure, so that it "
              "notices the fix).\n\n";
  // Models with quaternions: the refusals that QuaternionRefusal adds, per
  // integrator and feature over the formulations that run the cell on a
  // model with constraints.
  os << "## Models with quaternions\n\n"
     << "On a model with unit quaternions (nq != nv, "
        "`ModelBuilder::Quaternion`; docs/conventions.md, \"Velocities\") "
        "a combination runs when the table above says yes and this one "
        "does not refuse it (\"as above\": refused on every model with "
        "constraints, in the table above; \"not F\": refused with "
        "formulation F only). Dense path:\n\n";
  os << "| integrator |";
  for (Feature x : features) os << " " << ToString(x) << " |";
  os << "\n|---|";
  for (size_t k = 0; k < std::size(features); ++k) os << "---|";
  os << "\n";
  for (Integrator i : integrators) {
    os << "| " << ToString(i) << " |";
    for (Feature x : features) {
      int runs = 0;  // formulations that run the cell on any model
      std::vector<Formulation> refused;
      std::string why;
      for (Formulation f : forms) {
        if (!CellRefusal(f, i, KktPath::kDense, x).empty()) continue;
        ++runs;
        const std::string q = QuaternionCellRefusal(f, i, KktPath::kDense, x);
        if (q.empty()) continue;
        refused.push_back(f);
        // One reason per cell: QuaternionRefusal reads the formulation for
        // index 3's forward sensitivities only.
        why = q;
      }
      std::string c;
      if (runs == 0) {
        c = "as above";
      } else if (refused.empty()) {
        c = "yes";
      } else if (static_cast<int>(refused.size()) == runs) {
        c = cell(why);
      } else {
        // "no (n)" becomes "not F (n)".
        std::ostringstream nf;
        nf << "not";
        for (Formulation f : refused) nf << ' ' << ToString(f);
        const std::string no = cell(why);
        nf << ' ' << std::string_view(no).substr(3);
        c = nf.str();
      }
      os << " " << c << " |";
    }
    os << "\n";
  }
  bool qsame = true;
  for (Formulation f : forms)
    for (Integrator i : integrators)
      for (Feature x : features)
        qsame &= QuaternionCellRefusal(f, i, KktPath::kDense, x) ==
                 QuaternionCellRefusal(f, i, KktPath::kSparse, x);
  os << (qsame ? "\nThe sparse path (`--kkt sparse` and the other sparse "
                 "methods) reads the same: its evaluator seeds the "
                 "quaternions' chart direction by direction "
                 "(`src/eval/sparse_chart.hpp`).\n\n"
               : "\nThe sparse path differs from this table.\n\n");
  // Event-driven contact (docs/contact.md, "Where it runs"): what
  // ContactRefusal leaves, per KKT path, on a model with a frictionless
  // contact (ContactLaw) and no other feature.
  os << "## Event-driven contact\n\n"
     << "On a model with a contact (`ModelBuilder::Unilateral` with a "
        "`ContactLaw`, docs/contact.md), frictionless, event-driven "
        "contact runs per KKT path as below (`ContactRefusal`; the "
        "fixed-step and "
        "generalized-alpha schemes refuse it: "
     <<
      [&] {
        SimulationOptions o;
        o.integrator = Integrator::kRattle;
        o.formulation = Formulation::kIndex3;
        o.step = o.output_step;
        ModelTraits t;
        t.constraints = t.unilateral = true;
        t.contact_laws = t.feasibility = true;
        const std::string no = cell(Refusal(o, KktPath::kDense, t));
        return "reason " + no.substr(4, no.size() - 5);  // "no (N)"
      }()
     << "). IDAS with `--linear-solver klu` runs the dense KKT path with "
        "KLU factoring its Newton matrix:\n\n"
     << "| formulation | integrator | dense | sparse | forward "
        "sensitivities, dense | forward sensitivities, sparse |\n"
     << "|---|---|---|---|---|---|\n";
  {
    ModelTraits t;
    t.constraints = t.unilateral = t.contact_laws = t.feasibility = true;
    const std::pair<Integrator, LinearSolver> runs[] = {
        {Integrator::kCvodesBdf, LinearSolver::kDense},
        {Integrator::kCvodesAdams, LinearSolver::kDense},
        {Integrator::kIdas, LinearSolver::kDense},
        {Integrator::kIdas, LinearSolver::kKlu}};
    for (Formulation f : forms) {
      for (const auto& [i, ls] : runs) {
        os << "| " << ToString(f) << " | " << ToString(i)
           << (ls == LinearSolver::kKlu ? ", `--linear-solver klu`" : "")
           << " |";
        for (SensMethod sm : {SensMethod::kNone, SensMethod::kForward}) {
          for (KktPath path : {KktPath::kDense, KktPath::kSparse}) {
            SimulationOptions o;
            o.formulation = f;
            o.integrator = i;
            o.linear_solver = ls;
            o.sensitivity.method = sm;
            os << " " << cell(Refusal(o, path, t)) << " |";
          }
        }
        os << "\n";
      }
    }
    os << "\n";
  }
  os << "Reasons:\n\n";
  for (size_t k = 0; k < reasons.size(); ++k)
    os << (k + 1) << ". " << reasons[k] << "\n";
  return os.str();
}

}  // namespace daedalus::internal
