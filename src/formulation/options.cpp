// Names of the formulation, integrator and drift-action options, and the
// validity of SimulationOptions (the combinations themselves: support.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

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
    case Integrator::kGeneralizedAlpha:
      return "generalized-alpha";
    case Integrator::kHht:
      return "hht";
    case Integrator::kMoreauJean:
      return "moreau-jean";
  }
  return "?";
}

Integrator IntegratorFromString(const std::string& s) {
  if (s == "cvodes-bdf" || s == "cvodes") return Integrator::kCvodesBdf;
  if (s == "cvodes-adams") return Integrator::kCvodesAdams;
  if (s == "idas") return Integrator::kIdas;
  for (Integrator i : {Integrator::kStormerVerlet, Integrator::kSymplecticEuler,
                       Integrator::kRattle, Integrator::kGeneralizedAlpha,
                       Integrator::kHht, Integrator::kMoreauJean})
    if (s == ToString(i)) return i;
  throw std::invalid_argument("unknown integrator '" + s +
                              "'; valid: cvodes-bdf (alias cvodes), "
                              "cvodes-adams, idas, stormer-verlet, "
                              "symplectic-euler, rattle, generalized-alpha, "
                              "hht, moreau-jean");
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

namespace internal {
namespace {

// Below this, SUNDIALS' weights 1/atol overflow when squared in the WRMS
// norm of an error of order one (1e150^2 is near DBL_MAX).
constexpr double kMinAbsoluteTolerance = 1e-150;
// Largest 2 alpha T u (and beta T u) accepted: see OptionsRangeError.
constexpr double kMaxBaumgarteRoundoff = 1e-3;

}  // namespace

std::string OptionsRangeError(const SimulationOptions& o) {
  if (!(o.t_end > o.t0)) return "t_end must be greater than t0";
  if (!(o.output_step > 0.0)) return "output step must be positive";
  if (!(o.rtol > 0.0) || o.rtol >= 1.0) return "rtol must be in (0, 1)";
  if (!(o.atol > 0.0)) return "atol must be positive";
  if (!(o.multiplier_atol >= 0.0))
    return "multiplier atol must be >= 0 (0: same as atol)";
  if (!(o.baumgarte_alpha >= 0.0) || !(o.baumgarte_beta >= 0.0))
    return "Baumgarte gains must be non-negative";
  for (const auto& [flag, value] :
       {std::pair<const char*, double>{"--atol", o.atol},
        {"--multiplier-atol", o.multiplier_atol}}) {
    // multiplier_atol 0 means "same as atol".
    if (value == 0.0 && flag[2] == 'm') continue;
    if (!(value >= kMinAbsoluteTolerance)) {
      std::ostringstream os;
      os << flag << " " << value << " is below " << kMinAbsoluteTolerance
         << ": the integrator's error weights 1/atol overflow when squared "
            "in its norm (the run would fail at its first step blaming the "
            "model); use 1e-14 or larger";
      return os.str();
    }
  }
  if (o.max_steps <= 0) return "max_steps must be positive";
  if (!(o.contact.zeno_velocity >= 0.0) ||
      !std::isfinite(o.contact.zeno_velocity))
    return "--zeno-velocity must be a finite speed >= 0 (0: off)";
  if (!(o.contact.gap_tolerance >= 0.0) ||
      !std::isfinite(o.contact.gap_tolerance))
    return "--gap-tolerance must be a finite length >= 0";
  // 0 selects the integrator's own default; SUNDIALS would silently take
  // its default for a negative CVODES coefficient and refuse it in IDAS.
  if (!(o.nonlin_conv_coef >= 0.0) || !std::isfinite(o.nonlin_conv_coef)) {
    std::ostringstream os;
    os << "--nonlin-conv-coef " << o.nonlin_conv_coef
       << " is not a convergence coefficient: give a positive fraction of "
          "the local error tolerance (1 lets a fixed-point Adams corrector "
          "stop after one iteration; CVODES' default is 0.1), or 0 for the "
          "integrator's default";
    return os.str();
  }
  if (o.max_samples <= 0) return "max_samples must be positive";
  if (!std::isfinite(o.t0) || !std::isfinite(o.t_end) ||
      !std::isfinite(o.output_step))
    return "t0, t_end and the output step must be finite";
  {
    // In double: the ratio may be beyond what a long holds.
    const double n = std::ceil((o.t_end - o.t0) / o.output_step - 1e-9);
    if (!(n <= static_cast<double>(o.max_samples))) {
      std::ostringstream os;
      os << "the output grid has " << n << " samples ((t_end - t0) / "
         << "output step = " << (o.t_end - o.t0) << " / " << o.output_step
         << "), more than max_samples = " << o.max_samples
         << "; use a larger --output-step or a shorter --t-end, or raise "
            "--max-samples";
      return os.str();
    }
    // The run itself must be longer than the resolution of its times: a
    // span of 1e-300 s (or a subnormal one) made the first step's state NaN
    // and the failure blame the model. 1e3 ulps of the end time (2.2e-13 s
    // for times of order 1 s) leaves the integrator room for a step.
    const double scale = std::max({1.0, std::abs(o.t0), std::abs(o.t_end)});
    if (o.t_end - o.t0 < 1e3 * std::numeric_limits<double>::epsilon() * scale) {
      std::ostringstream os;
      os << "--t-end " << o.t_end << " is within " << (o.t_end - o.t0)
         << " s of the start t0 = " << o.t0
         << ", below the resolution of the times (1e3 ulps, "
         << 1e3 * std::numeric_limits<double>::epsilon() * scale
         << " s); use a longer run";
      return os.str();
    }
    // Every grid time must be distinct from its neighbours in double.
    if (o.t_end - o.output_step == o.t_end || o.t0 + o.output_step == o.t0) {
      std::ostringstream os;
      os << "the output step " << o.output_step
         << " is below the resolution of the times it separates (t up to "
         << o.t_end << "); use a larger --output-step";
      return os.str();
    }
  }
  if (!(o.drift_tol >= 0.0)) return "drift tolerance must be >= 0";
  {
    // Baumgarte's bias -2 alpha J v - beta^2 Phi makes the Newton matrix
    // of an implicit step condition like 2 alpha h (h up to the span T):
    // the tangential motion keeps about -log10(2 alpha T u) digits, u the
    // unit round-off. Measured on the pendulum over T = 1 s: alpha = 1e13,
    // 1e15, 1e16, 1e17 end 1e-6, 1e-5, 1e-2, 0.4 from the reference, and
    // alpha = 1e100 leaves the bob at its release point with status ok.
    // Refused above 2 alpha T u = 1e-3 (alpha 2.2e12 for T = 1 s), where
    // about three digits are left; the same bound on beta T.
    const double span = o.t_end - o.t0;
    const double limit =
        kMaxBaumgarteRoundoff / (std::numeric_limits<double>::epsilon() * span);
    const bool alpha = !(2.0 * o.baumgarte_alpha <= limit);
    if (alpha || !(o.baumgarte_beta <= limit)) {
      const char* name = alpha ? "--baumgarte-alpha" : "--baumgarte-beta";
      const double gain = alpha ? o.baumgarte_alpha : o.baumgarte_beta;
      std::ostringstream os;
      os << name << " " << gain
         << " is too large for double precision over a run of " << span
         << " s: a stabilization time constant that short leaves fewer "
            "than 3 significant digits of the motion (round-off 2 alpha T "
            "u > 1e-3); use a gain of at most "
         << (alpha ? limit / 2.0 : limit)
         << " (gains of 1 to 100 times the inverse of the time scale of "
            "the motion are typical), or --formulation projection";
      return os.str();
    }
  }
  if (o.integrator == Integrator::kMoreauJean) {
    // Moreau-Jean (docs/moreau_jean.md): the options of its scheme and of
    // its cone solver; the step as for the fixed-step schemes below.
    const MoreauJeanOptions& mj = o.moreau_jean;
    if (!(o.step > 0.0) || !std::isfinite(o.step))
      return "--integrator moreau-jean is a time-stepping scheme with a fixed "
             "step and needs --step H > 0 (e.g. --step 1e-3; the scheme is "
             "first order: its error at impacts is O(H))";
    if (!(mj.theta >= 0.5 && mj.theta <= 1.0)) {
      std::ostringstream os;
      os << "--theta " << mj.theta
         << " is outside [0.5, 1]: Moreau-Jean's theta-method is unstable "
            "below 1/2; use 0.5 (energy-conserving free flight) to 1 (fully "
            "implicit)";
      return os.str();
    }
    if (!(mj.tolerance > 0.0) || !(mj.tolerance < 1.0)) {
      std::ostringstream os;
      os << "--pgs-tol " << mj.tolerance
         << " is not a relative tolerance in (0, 1) for the contact solver "
            "(projected Gauss-Seidel); the default is 1e-10";
      return os.str();
    }
    if (mj.max_iterations < 1)
      return "--pgs-max-iter must be a positive number of Gauss-Seidel sweeps";
  }
  if (o.integrator == Integrator::kStormerVerlet ||
      o.integrator == Integrator::kSymplecticEuler ||
      o.integrator == Integrator::kRattle ||
      o.integrator == Integrator::kMoreauJean) {
    if (!(o.step > 0.0) || !std::isfinite(o.step))
      return std::string("--integrator ") + ToString(o.integrator) +
             " is a fixed-step scheme and needs --step H > 0";
    const double k = o.output_step / o.step;
    if (k < 1.0 - 1e-9 || std::abs(k - std::round(k)) > 1e-9 * k)
      return "the output step must be a multiple of --step";
    // --max-steps is the run's budget (simulate.hpp): checked at the start.
    const double n = std::ceil((o.t_end - o.t0) / o.step - 1e-9);
    if (n > static_cast<double>(o.max_steps)) {
      std::ostringstream os;
      os << "--step " << o.step << " takes " << n
         << " steps over the run, more than its budget --max-steps "
         << o.max_steps << "; use a larger --step or raise --max-steps";
      return os.str();
    }
  }
  if (!IsAlpha(o.integrator) && o.integrator != Integrator::kStormerVerlet &&
      o.integrator != Integrator::kSymplecticEuler &&
      o.integrator != Integrator::kRattle &&
      o.integrator != Integrator::kMoreauJean && o.step != 0.0)
    return std::string(
               "--step is the fixed step of stormer-verlet, "
               "symplectic-euler, rattle, generalized-alpha, hht and "
               "moreau-jean; "
               "--integrator ") +
           ToString(o.integrator) +
           " chooses its own steps from --rtol and --atol: leave --step out";
  if (IsAlpha(o.integrator)) {
    if (!(o.step >= 0.0) || !std::isfinite(o.step))
      return "--step must be >= 0 (0: step-size control by --rtol/--atol)";
    if (o.step > o.output_step * (1.0 + 1e-12)) {
      // Each output time is landed on, so no step would be H.
      std::ostringstream os;
      os << "--step " << o.step << " is longer than the output step "
         << o.output_step << ": every output time is a step's end, so "
         << ToString(o.integrator)
         << " would take steps of at most the output step, never " << o.step
         << "; use --step <= " << o.output_step << " or a longer --output-step";
      return os.str();
    }
    const bool hht = o.integrator == Integrator::kHht;
    const double lo = hht ? 0.5 : 0.0;
    if (!(o.rho_inf >= lo && o.rho_inf <= 1.0)) {
      std::ostringstream os;
      os << "--rho-inf " << o.rho_inf << " is outside [" << lo
         << ", 1] for --integrator " << ToString(o.integrator)
         << (hht ? " (HHT's alpha = (rho - 1) / (rho + 1) must be in "
                   "[-1/3, 0]; use --integrator generalized-alpha for "
                   "rho_inf below 1/2)"
                 : " (the spectral radius at infinite frequency)");
      return os.str();
    }
  }
  if (!(o.initial_projection_tol > 0.0))
    return "initial projection tolerance must be positive";
  return "";
}

}  // namespace internal

bool SimulationOptions::IsValid(std::string* why) const {
  auto fail = [why](const std::string& m) {
    if (why) *why = m;
    return false;
  };
  const std::string range = internal::OptionsRangeError(*this);
  if (!range.empty()) return fail(range);
  // The combinations that no model makes possible (the support matrix,
  // formulation/support.hpp; Simulate() checks the model-dependent ones).
  const std::string refusal = internal::Refusal(
      *this, internal::KktPath::kDense, internal::ModelTraits{});
  if (!refusal.empty()) return fail(refusal);
  return true;
}

}  // namespace daedalus
