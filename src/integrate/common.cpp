#include "integrate/common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "eval/chart.hpp"
#include "eval/compiled_model.hpp"

namespace daedalus::internal {

void SundialsErrHandler(int /*error_code*/,
                        const char* module,
                        const char* function,
                        char* msg,
                        void* guard) {
  // The return flag is already in the failure report (by name and value);
  // SUNDIALS' own code here can differ from it (IDA_TOO_MUCH_WORK, -1,
  // arrives as -22), so it is left out. Some SUNDIALS 6 messages format
  // an empty field (", ,"), which is tidied.
  std::string text = msg != nullptr ? msg : "";
  for (std::string::size_type at; (at = text.find(", ,")) != std::string::npos;)
    text.erase(at, 2);
  while (!text.empty() && (text.back() == '.' || text.back() == ' '))
    text.pop_back();  // the report goes on after it ("; hint: ...")
  std::ostringstream os;
  os << module << "/" << function << ": " << text;
  static_cast<CallbackGuard*>(guard)->sundials_message = os.str();
}

namespace {

// The evaluator a dense run uses, as the summary reports it.
std::string DenseEvaluator(const Model& model,
                           const SimulationOptions& options) {
  if (!options.compiled) return "dual numbers (--evaluator ad)";
  std::string why;
  const CompiledModel* cm = GetCompiled(model, &why);
  if (cm == nullptr) return "dual numbers: " + why;
  if (NativeKernelsEnabled() && cm->Stage(0).program.native())
    return "compiled (native kernels)";
  return "compiled (interpreted)";
}

}  // namespace

SimulationSummary StartSummary(const Model& model,
                               const SimulationOptions& options,
                               KktPath path) {
  SimulationSummary sum;
  sum.problem = model.name();
  sum.formulation = options.formulation;
  sum.integrator = options.integrator;
  sum.rtol = options.rtol;
  sum.atol = options.atol;
  sum.t_reached = options.t0;
  sum.drift_tol = options.drift_tol;
  sum.energy_kind =
      model.data().energy_is_lagrangian ? "energy function v'p - L" : "T+V";
  sum.evaluator = path == KktPath::kSparse
                      ? "sparse path (dual-number sweeps per body)"
                      : DenseEvaluator(model, options);
  return sum;
}

bool MakeConsistent(Mechanics* mech,
                    const SimulationOptions& options,
                    Eigen::VectorXd* q,
                    Eigen::VectorXd* v,
                    SimulationSummary* sum) {
  const double qdrift = QuaternionNormDrift(mech->model().data(), *q);
  if (qdrift > 1e-12) {
    std::ostringstream os;
    os.precision(3);
    os << "the initial quaternion";
    for (const QuaternionBlock& b : mech->model().quaternions())
      os << " '" << b.name << "' (|q| = " << q->segment<4>(b.q).norm() << ")";
    os << " normalized to unit length (the correction is part of the "
          "initial position correction)";
    sum->warnings.push_back(os.str());
  }
  try {
    const ProjectionResult pp = mech->ProjectPositions(
        options.t0, q, *v, options.initial_projection_tol,
        options.initial_projection_max_iter);
    if (!pp.converged) {
      std::ostringstream os;
      os << "initial state cannot be made consistent: after " << pp.iterations
         << " Gauss-Newton iterations the position residual max|Phi| is "
         << pp.residual << " (tolerance " << options.initial_projection_tol
         << "); start closer to the constraint manifold";
      sum->error = os.str();
      return false;
    }
    sum->initial_correction_position = pp.correction;
    const ProjectionResult pv = mech->ProjectVelocities(options.t0, *q, v);
    sum->initial_correction_velocity = pv.correction;
  } catch (const std::exception& e) {
    sum->error =
        std::string("initial state cannot be made consistent: ") + e.what();
    return false;
  }
  return true;
}

long NumOutputs(const SimulationOptions& o) {
  // At least one: an output step longer than the run ends it at t_end (the
  // 1e-9 slack, for a ratio that is an integer up to rounding, made such a
  // run end at t0 with status ok). OptionsRangeError bounds the count.
  return std::max(1L, static_cast<long>(
                          std::ceil((o.t_end - o.t0) / o.output_step - 1e-9)));
}

double OutputTime(const SimulationOptions& o, long k) {
  return std::min(o.t0 + k * o.output_step, o.t_end);
}

std::string ToleranceHint(const SimulationOptions& options) {
  const double atol = std::min(options.atol, options.multiplier_atol > 0.0
                                                 ? options.multiplier_atol
                                                 : options.atol);
  if (!(atol < 1e-30)) return "";
  std::ostringstream os;
  os << "--atol " << atol
     << " is far below the round-off of the state (about 1e-16 of its "
        "size); the error test cannot pass where a component crosses zero: "
        "loosen --atol (1e-10 to 1e-14 for states of order one)";
  return os.str();
}

std::string SingularityNote(Mechanics* mech,
                            Formulation form,
                            double t,
                            const Eigen::VectorXd& q,
                            const Eigen::VectorXd& v) {
  if (mech->nc() == 0 || !q.allFinite() || !v.allFinite()) return "";
  KktHealthSample h;
  try {
    mech->Evaluate(t, q, v);
    h = mech->Health(true);
  } catch (const std::exception&) {
    return "";  // the failure report already has the model's message
  }
  if (!(h.rcond < kSingularityNoteRcond)) return "";
  std::ostringstream os;
  os.precision(3);
  os << "; the mechanism is near a singular configuration there: "
        "J M^-1 J' has reciprocal condition "
     << h.rcond << " (rank of J " << h.rank_J << " of " << mech->nc() << ")";
  if (!h.weak_rows.empty()) {
    os << ", rows nearly dependent:";
    for (int r : h.weak_rows) os << " '" << mech->model().RowName(r) << "'";
  }
  if (form == Formulation::kGgl || form == Formulation::kIndex3) {
    os << ". The multipliers grow without bound there; an index-2 or "
          "index-3 form cannot step through it. Move the trajectory away "
          "from the singularity, or run --formulation baumgarte or "
          "projection on cvodes-bdf, which may pass it with a warning";
  } else {
    os << ". The multipliers grow without bound there: move the trajectory "
          "away from the singularity";
  }
  return os.str();
}

std::string DriftViolation(const Model& model,
                           const SimulationOptions& o,
                           const SimulationSummary& sum,
                           int* row,
                           double* drift) {
  const Sample& f = sum.final;
  if (!(o.drift_tol > 0.0) ||
      !(std::max(f.drift_position, f.drift_velocity) > o.drift_tol))
    return "";
  const ConstraintRows rows(model);
  int worst = 0;
  double wd = -1.0;
  for (int i = 0; i < rows.nc; ++i) {
    const double d = std::max(rows.holonomic[i] ? std::abs(f.phi[i]) : 0.0,
                              std::abs(f.vel_residual[i]));
    if (d > wd) {
      wd = d;
      worst = i;
    }
  }
  *row = worst;
  *drift = wd;
  std::ostringstream os;
  os << "drift " << wd << " of constraint '" << model.RowName(worst)
     << "' exceeds --drift-tol " << o.drift_tol << " at t = " << f.t;
  return os.str();
}

void DifferenceQuotientJacobian(
    const std::function<void(const double* y, double* f)>& f,
    int n,
    const double* y,
    const double* f0,
    double rtol,
    double atol,
    double* jac,
    double* work) {
  auto overflow = [](const std::string& what) {
    // As NonFiniteMessage (eval/dynamics_internal.hpp).
    throw std::runtime_error(
        what +
        " overflowed double precision (values beyond 1.8e308); check the "
        "magnitudes of the parameters and initial values (units); tighter "
        "tolerances do not help");
  };
  // f0 against the tolerances: CVODES's step size control (its first
  // step: 0) fails where this is not finite.
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(f0[i] / (rtol * std::abs(y[i]) + atol)))
      overflow("the right-hand side's component " + std::to_string(i) +
               " over its tolerance");
  const double srur = std::sqrt(std::numeric_limits<double>::epsilon());
  std::vector<double> yj(y, y + n);
  for (int j = 0; j < n; ++j) {
    const double saved = yj[j];
    double inc = std::max(srur * std::abs(saved), atol);
    inc = (saved + inc) - saved;  // the step y_j actually takes
    if (inc == 0.0) inc = srur;   // atol 0 at y_j = 0
    yj[j] = saved + inc;
    f(yj.data(), work);
    yj[j] = saved;
    double* col = jac + static_cast<std::ptrdiff_t>(j) * n;
    for (int i = 0; i < n; ++i) {
      col[i] = (work[i] - f0[i]) / inc;
      if (!std::isfinite(col[i]))
        overflow(
            "the difference quotient of the right-hand side's "
            "component " +
            std::to_string(i) + " along state component " + std::to_string(j));
    }
  }
}

}  // namespace daedalus::internal
