// Parameter sensitivities through the SUNDIALS sensitivity APIs
// (docs/sensitivities.md).
//
// Forward: IDAS (IDASensInit) or CVODES (CVodeSensInit) integrate
// s_i = dy/dp_i beside the state. The sensitivity residuals (right-hand
// sides) are the exact directional derivatives of the DAE residual (ODE
// right-hand side) along (s_i, s_i', e_i), computed by the tangent
// workspace (dynamics.hpp), not by differences; `difference_quotient`
// selects SUNDIALS's own DQ instead, for comparison.
//
// Parameters are the model's named parameters and initial conditions,
// written q0[i] / v0[i] (i an index, or a coordinate name for q0 and a
// velocity name for v0: v0[R.wz] for a quaternion R). Initial-condition
// sensitivities pass through the consistent-initialization projection: at a
// consistent start, dq0/dq0_i is the mass-metric projector applied to e_i
// and the velocity is re-projected to first order.
#pragma once

#include <Eigen/Core>
#include <string>
#include <utility>
#include <vector>

namespace daedalus {

class Model;

enum class SensMethod { kNone, kForward, kAdjoint };
const char* ToString(SensMethod m);
/// @throws std::invalid_argument listing the valid names.
SensMethod SensMethodFromString(const std::string& s);

/// How the forward sensitivities' corrector is coupled to the state's:
/// SUNDIALS's simultaneous corrector (one Newton iteration on state and
/// sensitivities together) or its staggered one (the state converges
/// first, then the sensitivities' linear systems are solved with the same
/// iteration matrix). kAuto picks staggered on IDAS and simultaneous on
/// CVODES (docs/sensitivities.md, "The corrector").
enum class SensCorrector { kAuto, kSimultaneous, kStaggered };
const char* ToString(SensCorrector c);
/// @throws std::invalid_argument listing the valid names.
SensCorrector SensCorrectorFromString(const std::string& s);

struct SensitivityOptions {
  SensMethod method = SensMethod::kNone;
  /// Names: model parameters, q0[i], v0[i]. Empty with a method set: all
  /// model parameters.
  std::vector<std::string> parameters;
  /// Include the sensitivities in the local error test (as
  /// idasSlCrank_FSA_dns does); off lets the state alone control the step.
  bool error_control = true;
  /// The corrector (IDA_/CV_SIMULTANEOUS or IDA_/CV_STAGGERED).
  SensCorrector corrector = SensCorrector::kAuto;
  /// Use SUNDIALS's internal difference quotients for the sensitivity
  /// residuals instead of the exact AD tangents (model parameters only).
  bool difference_quotient = false;
  /// The functional (ModelBuilder::Functional) to evaluate and, with
  /// sensitivities, differentiate: "NAME" at the end of the run,
  /// "NAME@EVENT" at the event's first occurrence, "NAME@EVENT#K" at its
  /// K-th (docs/sensitivities.md, "Functionals at events"). Required by
  /// the adjoint; with forward sensitivities its gradient is reported
  /// too.
  std::string functional;
  /// Further functionals in the same syntax, evaluated beside
  /// `functional` in the same run: each one's value, and with forward
  /// sensitivities its gradient, in SimulationSummary::functionals (one
  /// forward run then serves several functionals at an event; the adjoint
  /// differentiates `functional` alone).
  std::vector<std::string> more_functionals;
  /// Adjoint: steps between checkpoints (IDAAdjInit / CVodeAdjInit).
  long checkpoint_steps = 100;
  /// d x0 / d p of the caller's initial state ((nq + nv) x np: rows q then
  /// v), when the start itself depends on model parameters; empty means it
  /// does not. The run linearizes the consistent projection of x0 + dx0.
  Eigen::MatrixXd initial_tangent;
};

/// One requested sensitivity parameter, resolved against a model.
struct SensParameter {
  enum class Kind { kModel, kInitialQ, kInitialV };
  std::string name;
  Kind kind = Kind::kModel;
  int index = 0;  ///< parameter index, or coordinate index for q0/v0
};

/// Checks a functional specification (SensitivityOptions::functional)
/// against a model. @throws std::invalid_argument naming what is unknown or
/// malformed and listing the model's functionals and events.
void CheckFunctionalSpec(const Model& model, const std::string& spec);

/// Resolves names to parameters.
/// @throws std::invalid_argument naming the bad entry and listing the
/// valid ones.
std::vector<SensParameter> ResolveSensParameters(
    const Model& model, const std::vector<std::string>& names);

struct SensitivityResult {
  SensMethod method = SensMethod::kNone;
  std::vector<std::string> parameters;
  /// Names of the rows of `final`: coordinates, velocities, multipliers.
  std::vector<std::string> components;
  /// d(component)/d(parameter) at the final time (rows x parameters).
  Eigen::MatrixXd final;
  /// d(quadrature)/d(parameter) at the final time, per named quadrature.
  std::vector<std::pair<std::string, Eigen::VectorXd>> quadratures;
  /// Adjoint: the functional's value and gradient.
  std::vector<std::pair<std::string, Eigen::VectorXd>> functionals;
  double functional_value = 0.0;
};

}  // namespace daedalus
