// Optimize(): the shooting NLP handed to IPOPT, progress per iteration,
// the best iterate kept, the KKT residual recomputed at the end, and the
// solution's run (include/daedalus/optimal_control.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "model/dynamic_module.hpp"
#include "optimal_control/nlp_solver.hpp"
#include "optimal_control/shooting.hpp"

namespace daedalus {

namespace internal {

std::unique_ptr<NlpSolver> LoadIpopt() {
  const ModuleSearch search{"libdaedalus_ipopt.so", "DAEDALUS_IPOPT_MODULE",
                            "The NLP solver IPOPT (optimal control)",
                            "daedalus_ipopt_solver"};
  std::string error;
  void* entry = LoadModuleEntry(search, &error);
  if (entry == nullptr)
    throw std::runtime_error(
        error +
        "\n(the module is built when IPOPT is found: install Debian's "
        "coinor-libipopt-dev, scripts/setup does, and rebuild)");
  using Entry = NlpSolver* (*)(int abi, std::string* error);
  std::unique_ptr<NlpSolver> s(
      reinterpret_cast<Entry>(entry)(kNlpSolverAbi, &error));
  if (!s) throw std::runtime_error(error);
  return s;
}

namespace {

// Distance of v to [lo, hi].
double Outside(double v, double lo, double hi) {
  return std::max({lo - v, v - hi, 0.0});
}

double MaxViolation(const ShootingNlp& nlp, const Eigen::VectorXd& g) {
  double worst = 0.0;
  for (int r = 0; r < nlp.m(); ++r)
    worst = std::max(worst, Outside(g[r], nlp.g_l()[r], nlp.g_u()[r]));
  return worst;
}

}  // namespace

}  // namespace internal

const char* ToString(GradientMethod g) {
  switch (g) {
    case GradientMethod::kForward:
      return "forward";
    case GradientMethod::kAdjoint:
      return "adjoint";
    default:
      return "auto";
  }
}

GradientMethod GradientMethodFromString(const std::string& s) {
  if (s == "auto") return GradientMethod::kAuto;
  if (s == "forward") return GradientMethod::kForward;
  if (s == "adjoint") return GradientMethod::kAdjoint;
  throw std::invalid_argument("unknown gradient method '" + s +
                              "'; valid: auto, forward, adjoint");
}

OptimizeResult Optimize(const Problem& problem,
                        const OptimalControlProblem& ocp,
                        const SimulationOptions& sim,
                        const Eigen::VectorXd& params,
                        const OptimizeOptions& options) {
  using internal::ShootingNlp;
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  if (!sim.IsValid(&why)) throw std::invalid_argument(why);
  ShootingNlp nlp(problem, ocp, sim, params, options);
  std::unique_ptr<internal::NlpSolver> solver = internal::LoadIpopt();
  OptimizeResult res;
  res.warnings = nlp.warnings();
  std::ostream* out = options.progress;
  if (out) {
    for (const auto& w : res.warnings) *out << "warning: " << w << "\n";
    *out << "optimal control: " << nlp.n() << " variables, " << nlp.m()
         << " constraints, " << options.shooting_intervals
         << " shooting interval(s), gradients " << ToString(options.gradient)
         << "\n";
  }
  // The initial guess must simulate: say why not before IPOPT starts.
  if (!nlp.Values(nlp.x0(), nullptr, nullptr))
    throw std::runtime_error(
        "Optimize: the initial guess cannot be evaluated: " + nlp.error());
  // Its gradients too (cached for IPOPT's first iteration): options that
  // have no sensitivities are refused here, by Simulate's message.
  {
    Eigen::VectorXd g0;
    Eigen::MatrixXd j0;
    if (!nlp.Gradients(nlp.x0(), &g0, &j0))
      throw std::runtime_error(
          "Optimize: the gradients at the initial guess cannot be "
          "evaluated: " +
          nlp.error());
  }

  // The best point met: least infeasibility, then best objective.
  Eigen::VectorXd best = nlp.x0();
  double best_viol = kUnbounded, best_f = kUnbounded;
  auto consider = [&](const Eigen::VectorXd& w, double f,
                      const Eigen::VectorXd& g) {
    const double v = internal::MaxViolation(nlp, g);
    const double tol = options.constraint_tolerance;
    const bool better =
        (v <= tol && best_viol <= tol) ? f < best_f : v < best_viol;
    if (better) {
      best = w;
      best_viol = v;
      best_f = f;
    }
  };

  internal::NlpFunctions f;
  f.n = nlp.n();
  f.m = nlp.m();
  f.x0 = nlp.x0();
  f.x_l = nlp.x_l();
  f.x_u = nlp.x_u();
  f.g_l = nlp.g_l();
  f.g_u = nlp.g_u();
  for (const auto& [r, c] : nlp.pattern()) {
    f.jac_rows.push_back(r);
    f.jac_cols.push_back(c);
  }
  Eigen::VectorXd gbuf;
  f.f = [&](const double* x, double* value) {
    const Eigen::VectorXd w = Eigen::Map<const Eigen::VectorXd>(x, f.n);
    if (!nlp.Values(w, value, &gbuf)) return false;
    consider(w, *value, gbuf);
    return true;
  };
  f.g = [&](const double* x, double* g) {
    const Eigen::VectorXd w = Eigen::Map<const Eigen::VectorXd>(x, f.n);
    double value = 0.0;
    if (!nlp.Values(w, &value, &gbuf)) return false;
    consider(w, value, gbuf);
    std::copy_n(gbuf.data(), f.m, g);
    return true;
  };
  Eigen::VectorXd grad;
  Eigen::MatrixXd jac;
  f.grad_f = [&](const double* x, double* gf) {
    const Eigen::VectorXd w = Eigen::Map<const Eigen::VectorXd>(x, f.n);
    if (!nlp.Gradients(w, &grad, &jac)) return false;
    std::copy_n(grad.data(), f.n, gf);
    return true;
  };
  f.jac_g = [&](const double* x, double* values) {
    const Eigen::VectorXd w = Eigen::Map<const Eigen::VectorXd>(x, f.n);
    if (!nlp.Gradients(w, &grad, &jac)) return false;
    for (size_t k = 0; k < f.jac_rows.size(); ++k)
      values[k] = jac(f.jac_rows[k], f.jac_cols[k]);
    return true;
  };
  const double sign = ocp.maximize ? -1.0 : 1.0;
  f.iteration = [&](int iter, double obj, double inf_pr, double inf_du,
                    double mu, double alpha) {
    IterationInfo it;
    it.iteration = iter;
    it.objective = sign * obj;
    it.infeasibility = inf_pr;
    it.dual_infeasibility = inf_du;
    it.step = alpha;
    it.mu = mu;
    res.history.push_back(it);
    if (out) {
      // Each column is right-aligned in its width after one blank of its
      // own, so that a value filling its width (a step 0.000244, an
      // objective -4.56321309e+01) never runs into the one before.
      if (iter % 20 == 0)
        *out << " iter        objective  infeasibility  dual infeas.      step"
                "   runs (plain/fwd/adj)\n";
      *out << std::setw(5) << iter << " " << std::setw(16)
           << std::setprecision(9) << it.objective << " " << std::setw(14)
           << std::setprecision(3) << inf_pr << " " << std::setw(13) << inf_du
           << " " << std::setw(9) << std::setprecision(3) << alpha << "   "
           << nlp.plain_runs << "/" << nlp.forward_runs << "/"
           << nlp.adjoint_runs << "\n";
      out->flush();
    }
    return options.callback ? options.callback(it) : true;
  };

  internal::NlpSolverOptions so;
  so.max_iterations = options.max_iterations;
  so.tolerance = options.tolerance;
  so.constraint_tolerance = options.constraint_tolerance;
  so.lbfgs_memory = options.lbfgs_memory;
  so.print_level = options.ipopt_print_level;
  so.extra = options.ipopt_options;
  const internal::NlpSolution sol = solver->Solve(f, so);
  res.status = sol.status;
  res.iterations = sol.iterations;
  res.ok = sol.converged;

  // The point returned: IPOPT's when it converged, the best met otherwise.
  Eigen::VectorXd w = sol.x.size() == f.n ? sol.x : best;
  if (!sol.converged) w = best;
  const bool have_multipliers =
      sol.converged && sol.x.size() == f.n && sol.lambda.size() == f.m;
  double fw = 0.0;
  Eigen::VectorXd g;
  if (!nlp.Values(w, &fw, &g))
    throw std::runtime_error(
        "Optimize: the returned point cannot be "
        "evaluated: " +
        nlp.error());
  res.objective = sign * fw;
  // The KKT residual, unscaled, from IPOPT's multipliers (IPOPT's sign
  // convention: grad f + J' lambda - z_L + z_U = 0, lambda > 0 at an
  // upper bound of g).
  res.infeasibility = internal::MaxViolation(nlp, g);
  for (int i = 0; i < f.n; ++i)
    res.infeasibility = std::max(res.infeasibility,
                                 internal::Outside(w[i], f.x_l[i], f.x_u[i]));
  if (have_multipliers && nlp.Gradients(w, &grad, &jac)) {
    const Eigen::VectorXd r =
        grad + jac.transpose() * sol.lambda - sol.z_l + sol.z_u;
    res.stationarity = r.lpNorm<Eigen::Infinity>();
    double c = 0.0;
    for (int i = 0; i < f.n; ++i) {
      if (std::isfinite(f.x_l[i]))
        c = std::max(c, std::abs(sol.z_l[i] * (w[i] - f.x_l[i])));
      if (std::isfinite(f.x_u[i]))
        c = std::max(c, std::abs(sol.z_u[i] * (f.x_u[i] - w[i])));
    }
    for (int r2 = 0; r2 < f.m; ++r2) {
      if (f.g_l[r2] == f.g_u[r2]) continue;  // equality: no complementarity
      const double lam = sol.lambda[r2];
      const double gap = lam > 0 ? f.g_u[r2] - g[r2] : g[r2] - f.g_l[r2];
      c = std::max(c, std::isfinite(gap) ? std::abs(lam * gap) : std::abs(lam));
    }
    res.complementarity = c;
    res.kkt_residual =
        std::max({res.stationarity, res.infeasibility, res.complementarity});
  } else {
    res.stationarity = res.complementarity = res.kkt_residual =
        std::numeric_limits<double>::quiet_NaN();
  }
  // Named values of the objective terms and the constraints.
  for (size_t k = 0; k < ocp.objective.size(); ++k)
    res.objective_terms.push_back({ocp.objective[k].functional,
                                   nlp.objective_values()[Eigen::Index(k)],
                                   -kUnbounded, kUnbounded, 0.0});
  for (int r = 0; r < f.m; ++r) {
    ConstraintValue cv{nlp.constraint_names()[r], g[r], f.g_l[r], f.g_u[r],
                       internal::Outside(g[r], f.g_l[r], f.g_u[r])};
    if (r >= 0 && nlp.constraint_names()[r].rfind("continuity", 0) != 0)
      res.constraints.push_back(cv);
    if (cv.violation > options.constraint_tolerance) res.violated.push_back(cv);
  }
  std::ostringstream msg;
  msg << "IPOPT: " << res.status << " after " << res.iterations
      << " iterations";
  if (!res.ok)
    msg << "; the best iterate met (infeasibility " << res.infeasibility
        << ") is returned";
  if (sol.infeasible || !res.violated.empty()) {
    msg << (sol.infeasible ? "; IPOPT found the problem locally infeasible"
                           : "")
        << "; violated constraints:";
    const size_t shown = std::min<size_t>(res.violated.size(), 10);
    for (size_t k = 0; k < shown; ++k)
      msg << "\n  " << res.violated[k].name << " = " << res.violated[k].value
          << " (bounds [" << res.violated[k].lower << ", "
          << res.violated[k].upper << "], off by " << res.violated[k].violation
          << ")";
    if (res.violated.size() > shown)
      msg << "\n  ... and " << res.violated.size() - shown << " more";
  }
  res.message = msg.str();

  // The solution as one run over the horizon, events as the problem has
  // them.
  res.model = ModelWithControls(problem.model, ocp.controls, false);
  res.params = nlp.ModelParams(w);
  res.x0 = nlp.Start(w);
  res.free_parameters = nlp.FreeParameters(w);
  res.free_initial_state = nlp.FreeInitialState(w);
  for (size_t k = 0; k < ocp.controls.size(); ++k) {
    ControlChannel ch = ocp.controls[k];
    ch.initial = nlp.Coefficients(w, static_cast<int>(k));
    res.controls.push_back(ch);
  }
  SimulationOptions once = sim;
  once.sensitivity = SensitivityOptions();
  res.run = Simulate(res.model, res.x0, res.params, once);
  res.plain_runs = nlp.plain_runs;
  res.forward_runs = nlp.forward_runs;
  res.adjoint_runs = nlp.adjoint_runs;
  res.wall_time =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (out) {
    *out << res.message << "\n"
         << "objective " << std::setprecision(10) << res.objective;
    if (std::isfinite(res.kkt_residual))
      *out << ", KKT residual " << std::setprecision(3) << res.kkt_residual
           << " (stationarity " << res.stationarity << ", infeasibility "
           << res.infeasibility << ", complementarity " << res.complementarity
           << ")";
    else
      // Without IPOPT's multipliers (it did not converge) only the
      // infeasibility of the returned point is known.
      *out << ", infeasibility " << std::setprecision(3) << res.infeasibility
           << " (no KKT residual: IPOPT returned no multipliers, status "
           << res.status << ")";
    *out << ", " << res.plain_runs << " plain, " << res.forward_runs
         << " forward, " << res.adjoint_runs << " adjoint runs, "
         << std::setprecision(3) << res.wall_time << " s\n";
  }
  return res;
}

}  // namespace daedalus
