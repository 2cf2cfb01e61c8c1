// The support matrix (docs/support.md): which combinations of formulation,
// integrator, KKT path and feature run, and for every other one the
// mathematical reason it is refused. One source: Simulate() and the
// command line refuse with these texts before anything is written, the
// support-matrix test (tests/formulation/support_matrix_test.cpp) runs
// every combination this says runs, and docs/support.md is generated from
// it (SupportTableMarkdown).
#pragma once

#include <string>
#include <vector>

#include "daedalus/simulate.hpp"

namespace daedalus::internal {

/// The evaluator and KKT solvers a run uses.
enum class KktPath { kDense, kSparse };
const char* ToString(KktPath p);

/// A feature a run may ask for, beyond integrating.
enum class Feature {
  kNone,
  kEvents,              ///< user events (root finding)
  kFeasibility,         ///< unilateral rows and friction cones watched
  kForward,             ///< forward sensitivities
  kAdjoint,             ///< adjoint gradient of a functional
  kDriftEscalation,     ///< --drift-tol with --drift-action escalate
  kCounterfactual,      ///< --counterfactual branches and pointwise analyses
  kResets,              ///< events that do not stop, with reset maps
  kEventSensitivities,  ///< forward and adjoint sensitivities across
                        ///< events: stops, resets, functionals at events
};
const char* ToString(Feature f);

/// What the support matrix needs to know about a model.
struct ModelTraits {
  bool constraints = false;   ///< nc > 0
  bool moving = false;        ///< a rheonomic constraint
  bool nonholonomic = false;  ///< a nonholonomic constraint
  bool events = false;
  bool resets = false;  ///< an event with a reset map (ModelBuilder::Reset)
  bool feasibility = false;   ///< unilateral rows or friction cones
  bool quaternions = false;   ///< nq != nv (ModelBuilder::Quaternion)
  bool unilateral = false;    ///< a unilateral constraint
  bool contact_laws = false;  ///< a unilateral constraint with a ContactLaw
  bool joint_limits = false;  ///< a joint limit's contact (ContactLaw::joint)
  bool friction = false;  ///< a contact with friction (ContactLaw::friction)
  bool friction_cone3d = false;  ///< one on 2 tangential rows (a 3D cone)
};
ModelTraits TraitsOf(const Model& model);

/// The run treats its unilateral rows as event-driven contacts
/// (ContactOptions::mode, docs/contact.md).
bool EventDrivenContact(const SimulationOptions& options,
                        const ModelTraits& traits);

/// Stormer-Verlet, symplectic Euler and RATTLE: fixed steps (--step), no
/// error control.
bool IsFixedStep(Integrator i);

/// Generalized-alpha and HHT (integrate/generalized_alpha.cpp): the
/// index-3 form, step-size control or a fixed --step.
bool IsAlpha(Integrator i);

/// The first option value out of its range (tolerances, steps, gains), or
/// empty: SimulationOptions::IsValid without the combinations.
std::string OptionsRangeError(const SimulationOptions& options);

/// The combination `options` asks for on a model with `traits`, on `path`:
/// empty when it runs, else why not (the mathematical reason) and what
/// runs instead.
std::string Refusal(const SimulationOptions& options,
                    KktPath path,
                    const ModelTraits& traits);

/// A combination that runs but fails on typical mechanisms for a known
/// numerical reason, with that reason (empty: none). The support-matrix
/// test expects the failure until it is fixed.
std::string KnownDefect(Formulation f, Integrator i);

/// One cell: formulation x integrator x path with one feature switched on,
/// on a model with constraints (and the events and feasibility conditions
/// the feature needs).
std::string CellRefusal(Formulation f,
                        Integrator i,
                        KktPath path,
                        Feature feature);

/// The "sensitivities at events" cell of a combination that runs it:
/// "forward, adjoint", "forward" or "adjoint" (the methods that run
/// across events with resets).
std::string EventSensitivityCell(Formulation f, Integrator i, KktPath path);

/// A cell of the same table on a model with quaternions: CellRefusal, or
/// else what QuaternionRefusal adds (empty: runs).
std::string QuaternionCellRefusal(Formulation f,
                                  Integrator i,
                                  KktPath path,
                                  Feature feature);

/// The KKT path `options` select for `model`: an explicit sparse --kkt
/// method, or auto resolving to one for the model's declared structure (on
/// CVODES and the fixed-step schemes; IDAS's residual Jacobian is
/// evaluated densely, so auto keeps it on the dense evaluator).
KktPath ResolveKktPath(const Model& model, const SimulationOptions& options);

/// The drift contract's escalation target for a run (kUnstabilized when
/// the run cannot escalate and fails at a violation instead), with the
/// reason in `why` when it cannot.
Formulation EscalationTarget(const SimulationOptions& options,
                             std::string* why);

/// docs/support.md, generated from CellRefusal.
std::string SupportTableMarkdown();

}  // namespace daedalus::internal
