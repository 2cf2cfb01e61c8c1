// Names of the formulation, integrator and drift-action options, and the
// validity of SimulationOptions (the combinations themselves: support.cpp).
#include <cmath>
#include <stdexcept>
#include <string>

#include "daedalus/simulate.hpp"
#include "formulation/support.hpp"

namespace daedalus {

// ------------------------------------------------------------- enums

const char* ToString(Formulation f) {
  switch (f) {
    case Formulation::kUnstabilized:
      return "unstabilized";
    case Formulation::kBaumgarte:
      return "baumgarte";
    case Formulation::kProjection:
      return "projection";
    case Formulation::kGgl:
      return "ggl";
    case Formulation::kIndex3:
      return "index3";
  }
  return "?";
}

Formulation FormulationFromString(const std::string& s) {
  for (Formulation f :
       {Formulation::kUnstabilized, Formulation::kBaumgarte,
        Formulation::kProjection, Formulation::kGgl, Formulation::kIndex3}) {
    if (s == ToString(f)) return f;
  }
  throw std::invalid_argument(
      "unknown formulation '" + s +
      "'; valid: unstabilized, baumgarte, projection, ggl, index3");
}

const char* ToString(Integrator i) {
  switch (i) {
    case Integrator::kCvodesBdf:
      return "cvodes-bdf";
    case Integrator::kCvodesAdams:
      return "cvodes-adams";
    case Integrator::kIdas:
      return "idas";
    case Integrator::kStormerVerlet:
      return "stormer-verlet";
    case Integrator::kSymplecticEuler:
      return "symplectic-euler";
    case Integrator::kRattle:
      return "rattle";
  }
  return "?";
}

Integrator IntegratorFromString(const std::string& s) {
  if (s == "cvodes-bdf" || s == "cvodes") return Integrator::kCvodesBdf;
  if (s == "cvodes-adams") return Integrator::kCvodesAdams;
  if (s == "idas") return Integrator::kIdas;
  for (Integrator i : {Integrator::kStormerVerlet, Integrator::kSymplecticEuler,
                       Integrator::kRattle})
    if (s == ToString(i)) return i;
  throw std::invalid_argument("unknown integrator '" + s +
                              "'; valid: cvodes-bdf (alias cvodes), "
                              "cvodes-adams, idas, stormer-verlet, "
                              "symplectic-euler, rattle");
}

const char* ToString(DriftAction a) {
  return a == DriftAction::kFail ? "fail" : "escalate";
}

DriftAction DriftActionFromString(const std::string& s) {
  if (s == "fail") return DriftAction::kFail;
  if (s == "escalate") return DriftAction::kEscalate;
  throw std::invalid_argument("unknown drift action '" + s +
                              "'; valid: fail, escalate");
}

bool SimulationOptions::IsValid(std::string* why) const {
  auto fail = [why](const std::string& m) {
    if (why) *why = m;
    return false;
  };
  if (!(t_end > t0)) return fail("t_end must be greater than t0");
  if (!(output_step > 0.0)) return fail("output step must be positive");
  if (!(rtol > 0.0) || rtol >= 1.0) return fail("rtol must be in (0, 1)");
  if (!(atol > 0.0)) return fail("atol must be positive");
  if (!(multiplier_atol >= 0.0))
    return fail("multiplier atol must be >= 0 (0: same as atol)");
  if (!(baumgarte_alpha >= 0.0) || !(baumgarte_beta >= 0.0))
    return fail("Baumgarte gains must be non-negative");
  if (max_steps <= 0) return fail("max_steps must be positive");
  if (!(drift_tol >= 0.0)) return fail("drift tolerance must be >= 0");
  if (integrator == Integrator::kStormerVerlet ||
      integrator == Integrator::kSymplecticEuler ||
      integrator == Integrator::kRattle) {
    if (!(step > 0.0) || !std::isfinite(step))
      return fail(std::string("--integrator ") + ToString(integrator) +
                  " is a fixed-step scheme and needs --step H > 0");
    const double k = output_step / step;
    if (k < 1.0 - 1e-9 || std::abs(k - std::round(k)) > 1e-9 * k)
      return fail("the output step must be a multiple of --step");
  }
  // The combinations that no model makes possible (the support matrix,
  // formulation/support.hpp; Simulate() checks the model-dependent ones).
  const std::string refusal = internal::Refusal(
      *this, internal::KktPath::kDense, internal::ModelTraits{});
  if (!refusal.empty()) return fail(refusal);
  if (!(initial_projection_tol > 0.0))
    return fail("initial projection tolerance must be positive");
  return true;
}

}  // namespace daedalus
