#include "daedalus/simulate.hpp"

#include <cvodes/cvodes.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <memory>
#include <sstream>

#include "daedalus/projection.hpp"
#include "integrator_common.hpp"
#include "sparse_simulate.hpp"
#include "sundials_util.hpp"

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
  }
  return "?";
}

Integrator IntegratorFromString(const std::string& s) {
  if (s == "cvodes-bdf" || s == "cvodes") return Integrator::kCvodesBdf;
  if (s == "cvodes-adams") return Integrator::kCvodesAdams;
  if (s == "idas") return Integrator::kIdas;
  throw std::invalid_argument("unknown integrator '" + s +
                              "'; valid: cvodes-bdf (alias cvodes), "
                              "cvodes-adams, idas");
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
  if (!(baumgarte_alpha >= 0.0) || !(baumgarte_beta >= 0.0))
    return fail("Baumgarte gains must be non-negative");
  if (max_steps <= 0) return fail("max_steps must be positive");
  if (!(drift_tol >= 0.0)) return fail("drift tolerance must be >= 0");
  if (formulation == Formulation::kProjection &&
      integrator != Integrator::kCvodesBdf)
    return fail(
        "the projection formulation needs --integrator cvodes-bdf "
        "(CVODES projects only with BDF)");
  if ((formulation == Formulation::kGgl ||
       formulation == Formulation::kIndex3) &&
      integrator != Integrator::kIdas)
    return fail(std::string("the ") + ToString(formulation) +
                " formulation is a DAE and needs --integrator idas");
  if (!(initial_projection_tol > 0.0))
    return fail("initial projection tolerance must be positive");
  return true;
}

// ----------------------------------------------------------- reports

std::string SimulationSummary::BriefReport() const {
  std::ostringstream os;
  os.precision(3);
  os << problem << ": " << (ok ? "ok" : "FAILED") << ", t=" << t_reached
     << ", drift " << std::scientific << drift_position_max << " (pos) "
     << drift_velocity_max << " (vel), energy residual " << energy_residual_max
     << ", " << stats.steps << " steps";
  if (!ok) os << ": " << error;
  return os.str();
}

std::string SimulationSummary::FullReport(const Model& model) const {
  std::ostringstream os;
  os.precision(6);
  os << "Daedalus run: " << problem << "  [" << ToString(formulation) << ", "
     << ToString(integrator) << ", rtol " << rtol << ", atol " << atol << "]\n";
  os << "  status                 " << (ok ? "ok" : "FAILED") << "\n";
  if (!ok) os << "  error                  " << error << "\n";
  os << "  time reached           " << t_reached << " s (" << samples
     << " samples)\n";
  os << "  final q               ";
  for (Eigen::Index i = 0; i < final.q.size(); ++i)
    os << " " << model.coordinate_names()[i] << "=" << final.q[i];
  os << "\n  final v               ";
  for (Eigen::Index i = 0; i < final.v.size(); ++i) os << " " << final.v[i];
  os << "\n";
  if (final.lambda.size() > 0) {
    os << "  final lambda          ";
    for (Eigen::Index i = 0; i < final.lambda.size(); ++i)
      os << " " << model.RowName(static_cast<int>(i)) << "=" << final.lambda[i];
    os << "\n";
  }
  os << std::scientific << std::setprecision(3);
  os << "  initial correction     position " << initial_correction_position
     << ", velocity " << initial_correction_velocity << "\n";
  os << "  max drift              position " << drift_position_max
     << ", velocity " << drift_velocity_max << "\n";
  os << "  energy (" << energy_kind << ")  initial " << energy_initial
     << ", final " << energy_final << "\n";
  os << "  max energy residual    " << energy_residual_max << " J\n";
  double cw = 0.0;
  for (Eigen::Index i = 0; i < final.constraint_work.size(); ++i)
    cw += final.constraint_work[i];
  os << "  constraint work        " << cw << " J\n";
  if (final.stabilization_work != 0.0)
    os << "  stabilization work     " << final.stabilization_work << " J\n";
  for (Eigen::Index k = 0; k < final.quadratures.size(); ++k)
    os << "  quadrature '" << model.quadrature_name(static_cast<int>(k))
       << "'  " << std::setprecision(16) << final.quadratures[k]
       << std::setprecision(3) << "\n";
  for (int k = 0; k < model.num_inputs(); ++k)
    os << "  input work '" << model.inputs()[k].name << "'  "
       << final.input_work[k] << " J\n";
  if (model.has_damping())
    os << "  damping loss           " << final.damping_loss << " J\n";
  if (model.has_other_loads())
    os << "  other work             " << final.other_work << " J\n";
  for (const auto& e : events)
    os << "  event                  '" << e.name << "' at t = " << e.t
       << (e.stopped ? " (run stopped)" : "") << "\n";
  os << "  solver                 " << stats.steps << " steps, "
     << stats.rhs_evals
     << (integrator == Integrator::kIdas ? " residual evals, " : " RHS evals, ")
     << stats.jacobian_evals << " Jacobians, " << stats.error_test_failures
     << " error-test fails, " << stats.nonlinear_conv_failures
     << " convergence fails";
  if (stats.projections > 0) os << ", " << stats.projections << " projections";
  os << "\n";
  return os.str();
}

// --------------------------------------------------------- integration

namespace internal {
SimulationSummary SimulateIdas(const Model& model,
                               const InitialState& x0,
                               const Eigen::VectorXd& params,
                               const SimulationOptions& options,
                               Observer* observer);
}  // namespace internal

namespace {

// Everything the CVODES callbacks need. Callbacks are noexcept trampolines:
// they stash the exception text and return +1 (recoverable) or -1.
struct CvodeRun : internal::CallbackGuard {
  CvodeRun(const Model& m, const SimulationOptions& o)
      : model(m), ws(m), kkt(m, o.kkt), opt(o) {}
  const Model& model;
  Workspace ws;
  KktSolver kkt;
  KktResult r;
  SimulationOptions opt;
  Eigen::VectorXd bias;
  std::vector<bool> holonomic_row;
  // Energy changes made by projection steps, by step time (popped when
  // CVODES redoes a step).
  std::vector<std::pair<double, double>> projection_jumps;
  int nq = 0, nv = 0, nc = 0, nu = 0, nquad = 0;
  const internal::QuadLayout* layout = nullptr;
  const internal::RootSet* roots = nullptr;

  void Accelerations(double t, const double* y) {
    ws.SetState(t, Eigen::Map<const Eigen::VectorXd>(y, nq),
                Eigen::Map<const Eigen::VectorXd>(y + nq, nv));
    EvaluateAll(&ws);
    bias = ws.bias;
    if (opt.formulation == Formulation::kBaumgarte) {
      const double a = opt.baumgarte_alpha, b = opt.baumgarte_beta;
      for (int i = 0; i < nc; ++i) {
        if (holonomic_row[i])
          bias[i] += 2.0 * a * ws.vel_residual[i] + b * b * ws.phi[i];
        else
          bias[i] += a * ws.vel_residual[i];
      }
    }
    kkt.Solve(ws, bias, &r);
  }
};

int RhsFn(realtype t, N_Vector y, N_Vector ydot, void* ud) {
  auto* run = static_cast<CvodeRun*>(ud);
  return run->Trap([&] {
    run->Accelerations(t, N_VGetArrayPointer(y));
    auto yd = internal::View(ydot);
    yd.head(run->nq) = run->ws.v;
    yd.tail(run->nv) = run->r.vdot;
  });
}

int QuadFn(realtype t, N_Vector y, N_Vector yqdot, void* ud) {
  auto* run = static_cast<CvodeRun*>(ud);
  return run->Trap([&] {
    run->Accelerations(t, N_VGetArrayPointer(y));
    internal::QuadratureIntegrands(*run->layout, run->ws, run->r.lambda, 0.0,
                                   internal::View(yqdot));
  });
}

int RootFn(realtype t, N_Vector y, realtype* gout, void* ud) {
  auto* run = static_cast<CvodeRun*>(ud);
  return run->Trap([&] {
    run->Accelerations(t, N_VGetArrayPointer(y));
    run->roots->Evaluate(run->ws, run->r.lambda, gout);
  });
}

int ProjFn(realtype t,
           N_Vector ycur,
           N_Vector corr,
           realtype /*eps*/,
           N_Vector err,
           void* ud) {
  auto* run = static_cast<CvodeRun*>(ud);
  return run->Trap([&] {
    const int nq = run->nq, nv = run->nv;
    auto y = internal::ConstView(ycur);
    Eigen::VectorXd q = y.head(nq), v = y.tail(nv);
    Workspace& ws = run->ws;
    // Energy before the projection.
    ws.SetState(t, q, v);
    EvaluateAll(&ws);
    const double e_before = ws.energy;
    // Gauss-Newton to round-off: it converges quadratically, so a handful
    // of iterations reach |Phi| ~ 1e-15; failing that, let CVODES retry.
    const ProjectionResult pr = ProjectPositions(&ws, t, &q, v, 1e-13, 8);
    if (!pr.converged) {
      throw std::runtime_error(
          "position projection did not converge (|Phi| = " +
          std::to_string(pr.residual) + ")");
    }
    ProjectVelocities(&ws, t, q, &v);
    EvaluateDynamics(&ws);
    const double e_after = ws.energy;
    auto c = internal::View(corr);
    c.head(nq) = q - y.head(nq);
    c.tail(nv) = v - y.tail(nv);
    // Error projection: remove the components of the local error estimate
    // normal to the manifold (in the mass metric), as cvsPendulum_dns does.
    if (err != nullptr) {
      auto e = internal::View(err);
      EvaluateAll(&ws);
      Eigen::LLT<Eigen::MatrixXd> llt_m(ws.M);
      std::vector<int> hrows;
      for (int i = 0; i < run->nc; ++i)
        if (run->holonomic_row[i]) hrows.push_back(i);
      if (!hrows.empty()) {
        Eigen::MatrixXd G(static_cast<Eigen::Index>(hrows.size()), nv);
        for (size_t i = 0; i < hrows.size(); ++i) G.row(i) = ws.J.row(hrows[i]);
        const Eigen::MatrixXd Y = llt_m.solve(G.transpose());
        const Eigen::VectorXd eq = e.head(nq);
        e.head(nq) = eq - Y * (G * Y).llt().solve(G * eq);
      }
      if (run->nc > 0) {
        const Eigen::MatrixXd Y = llt_m.solve(ws.J.transpose());
        const Eigen::VectorXd ev = e.tail(nv);
        e.tail(nv) = ev - Y * (ws.J * Y).llt().solve(ws.J * ev);
      }
    }
    auto& jumps = run->projection_jumps;
    while (!jumps.empty() && jumps.back().first >= t) jumps.pop_back();
    jumps.emplace_back(t, e_after - e_before);
  });
}

std::string HintFor(int flag) {
  switch (flag) {
    case CV_TOO_MUCH_WORK:
      return "raise the step limit, loosen --rtol/--atol, or shorten --t-end";
    case CV_TOO_MUCH_ACC:
      return "the tolerances are below what double precision allows; loosen "
             "--rtol/--atol";
    case CV_ERR_FAILURE:
    case CV_CONV_FAILURE:
      return "tighten --rtol/--atol, try another --formulation (projection), "
             "or check for a singular configuration near this time";
    case CV_RHSFUNC_FAIL:
    case CV_FIRST_RHSFUNC_ERR:
    case CV_REPTD_RHSFUNC_ERR:
    case CV_UNREC_RHSFUNC_ERR:
      return "a model function failed; see the message above";
    default:
      return "check the model and the options";
  }
}

}  // namespace

SimulationSummary Simulate(const Model& model,
                           const InitialState& x0,
                           const Eigen::VectorXd& params,
                           const SimulationOptions& options,
                           Observer* observer) {
  std::string why;
  if (!options.IsValid(&why)) throw std::invalid_argument("options: " + why);
  if (x0.q.size() != model.nq() || x0.v.size() != model.nv()) {
    throw std::invalid_argument(
        "initial state has " + std::to_string(x0.q.size()) +
        " coordinates and " + std::to_string(x0.v.size()) +
        " velocities; model '" + model.name() + "' has " +
        std::to_string(model.nq()) + " and " + std::to_string(model.nv()));
  }

  // Sparse KKT path (issue 6): explicit sparse --kkt, or auto on a model
  // with declared body structure; see src/sparse_simulate.hpp.
  if (internal::UseSparsePath(model, options))
    return internal::SimulateSparse(model, x0, params, options, observer);

  if (options.integrator == Integrator::kIdas) {
    return internal::SimulateIdas(model, x0, params, options, observer);
  }

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

  CvodeRun run(model, options);
  run.ws.SetParameters(params);
  run.nq = model.nq();
  run.nv = model.nv();
  run.nc = model.nc();
  run.nu = model.num_inputs();
  internal::Recorder recorder(model, &sum, observer);
  run.layout = &recorder.layout();
  run.nquad = recorder.layout().size();
  run.holonomic_row.assign(run.nc, true);
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = model.constraints()[ci];
    if (c.kind == ConstraintKind::kNonholonomic)
      for (int r = 0; r < c.rows; ++r)
        run.holonomic_row[model.constraint_row(ci) + r] = false;
  }

  // ---- consistent initialization
  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!internal::MakeConsistent(&run.ws, options, &q, &v, &sum)) return sum;

  // ---- CVODES set-up
  auto ctx = internal::MakeContext();
  const long n = run.nq + run.nv;
  auto y = internal::MakeVector(n, ctx.get());
  internal::View(y.get()).head(run.nq) = q;
  internal::View(y.get()).tail(run.nv) = v;
  auto yq = internal::MakeVector(run.nquad, ctx.get());

  void* mem = CVodeCreate(
      options.integrator == Integrator::kCvodesAdams ? CV_ADAMS : CV_BDF,
      ctx.get());
  if (mem == nullptr) throw std::runtime_error("CVodeCreate failed");
  struct MemGuard {
    void* m;
    ~MemGuard() { CVodeFree(&m); }
  } guard{mem};
  internal::MatrixPtr A(SUNDenseMatrix(n, n, ctx.get()));
  internal::LinSolPtr LS(SUNLinSol_Dense(y.get(), A.get(), ctx.get()));

  DAEDALUS_SUNDIALS_CHECK(CVodeInit(mem, RhsFn, options.t0, y.get()));
  DAEDALUS_SUNDIALS_CHECK(CVodeSetUserData(mem, &run));
  DAEDALUS_SUNDIALS_CHECK(
      CVodeSetErrHandlerFn(mem, internal::SundialsErrHandler,
                           static_cast<internal::CallbackGuard*>(&run)));
  DAEDALUS_SUNDIALS_CHECK(CVodeSStolerances(mem, options.rtol, options.atol));
  DAEDALUS_SUNDIALS_CHECK(CVodeSetLinearSolver(mem, LS.get(), A.get()));
  DAEDALUS_SUNDIALS_CHECK(CVodeSetMaxNumSteps(mem, options.max_steps));
  DAEDALUS_SUNDIALS_CHECK(CVodeQuadInit(mem, QuadFn, yq.get()));
  DAEDALUS_SUNDIALS_CHECK(
      CVodeQuadSStolerances(mem, options.rtol, options.atol));
  DAEDALUS_SUNDIALS_CHECK(CVodeSetQuadErrCon(mem, SUNTRUE));
  const internal::RootSet roots(model);
  run.roots = &roots;
  std::vector<int> found(static_cast<size_t>(roots.size()), 0);
  if (roots.size() > 0)
    DAEDALUS_SUNDIALS_CHECK(CVodeRootInit(mem, roots.size(), RootFn));
  if (options.formulation == Formulation::kProjection && run.nc > 0) {
    DAEDALUS_SUNDIALS_CHECK(CVodeSetProjFn(mem, ProjFn));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetProjErrEst(mem, SUNTRUE));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetProjFrequency(mem, 1));
  }

  // ---- sampling
  auto sample = [&](double t, N_Vector yy, bool first) {
    run.Accelerations(t, internal::ConstView(yy).data());
    Eigen::VectorXd w;
    if (!first) {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(CVodeGetQuad(mem, &tq, yq.get()));
      w = internal::ConstView(yq.get());
    }
    double stab = 0.0;
    for (const auto& j : run.projection_jumps)
      if (j.first <= t) stab += j.second;
    recorder.Record(run.ws, run.r.vdot, run.r.lambda, w, stab, first);
  };

  auto collect_stats = [&] {
    CVodeGetNumSteps(mem, &sum.stats.steps);
    CVodeGetNumRhsEvals(mem, &sum.stats.rhs_evals);
    CVodeGetNumJacEvals(mem, &sum.stats.jacobian_evals);
    CVodeGetNumErrTestFails(mem, &sum.stats.error_test_failures);
    CVodeGetNumNonlinSolvConvFails(mem, &sum.stats.nonlinear_conv_failures);
    if (run.opt.formulation == Formulation::kProjection && run.nc > 0)
      CVodeGetNumProjEvals(mem, &sum.stats.projections);
  };

  try {
    sample(options.t0, y.get(), true);
    const long nout = static_cast<long>(
        std::ceil((options.t_end - options.t0) / options.output_step - 1e-9));
    for (long k = 1; k <= nout; ++k) {
      const double tout =
          std::min(options.t0 + k * options.output_step, options.t_end);
      double tret = 0.0;
      run.Reset();
      const int flag = CVode(mem, tout, y.get(), &tret, CV_NORMAL);
      if (flag < 0) {
        std::ostringstream os;
        // CVodeGetReturnFlagName returns a malloc'd string we must free.
        std::unique_ptr<char, decltype(&std::free)> flag_name(
            CVodeGetReturnFlagName(flag), &std::free);
        os << "CVode failed with " << flag_name.get() << " (flag " << flag
           << ") at t = " << tret;
        os << run.Detail();
        os << "; hint: " << HintFor(flag);
        sum.error = os.str();
        collect_stats();
        sum.t_reached = tret;
        return sum;
      }
      sample(tret, y.get(), false);
      if (flag == CV_ROOT_RETURN) {
        DAEDALUS_SUNDIALS_CHECK(CVodeGetRootInfo(mem, found.data()));
        if (roots.Record(model, tret, found.data(), &sum)) break;
        // A multiplier sign change: go on to the same output time, unless
        // the root fell on it.
        if (tret < tout) --k;
        continue;
      }
      // ---- drift contract
      const Sample& f = sum.final;
      if (options.drift_tol > 0.0 &&
          std::max(f.drift_position, f.drift_velocity) > options.drift_tol) {
        int worst = 0;
        double wd = -1.0;
        for (int i = 0; i < run.nc; ++i) {
          const double d =
              std::max(recorder.holonomic_row(i) ? std::abs(f.phi[i]) : 0.0,
                       std::abs(f.vel_residual[i]));
          if (d > wd) {
            wd = d;
            worst = i;
          }
        }
        const bool can_escalate =
            options.drift_action == DriftAction::kEscalate &&
            run.opt.formulation != Formulation::kProjection &&
            options.integrator == Integrator::kCvodesBdf;
        std::ostringstream os;
        os << "drift " << wd << " of constraint '" << model.RowName(worst)
           << "' exceeds --drift-tol " << options.drift_tol
           << " at t = " << tret;
        if (!can_escalate) {
          os << "; hint: tighten --rtol/--atol or use --formulation projection "
                "or ggl";
          sum.error = os.str();
          collect_stats();
          return sum;
        }
        Escalation e;
        e.t = tret;
        e.constraint = model.RowName(worst);
        e.drift = wd;
        e.from = run.opt.formulation;
        e.to = Formulation::kProjection;
        sum.escalations.push_back(e);
        // Restart from the projected state with projection on every step.
        Eigen::VectorXd qn = f.q, vn = f.v;
        const ProjectionResult pp = ProjectPositions(
            &run.ws, tret, &qn, vn, 1e-13, options.initial_projection_max_iter);
        if (!pp.converged) {
          sum.error = os.str() + "; escalation to projection failed: " +
                      "the position projection did not converge";
          collect_stats();
          return sum;
        }
        ProjectVelocities(&run.ws, tret, qn, &vn);
        run.ws.SetState(tret, qn, vn);
        EvaluateAll(&run.ws);
        run.projection_jumps.emplace_back(tret, run.ws.energy - f.energy);
        run.opt.formulation = Formulation::kProjection;
        internal::View(y.get()).head(run.nq) = qn;
        internal::View(y.get()).tail(run.nv) = vn;
        DAEDALUS_SUNDIALS_CHECK(CVodeReInit(mem, tret, y.get()));
        DAEDALUS_SUNDIALS_CHECK(CVodeQuadReInit(mem, yq.get()));
        DAEDALUS_SUNDIALS_CHECK(CVodeSetProjFn(mem, ProjFn));
        DAEDALUS_SUNDIALS_CHECK(CVodeSetProjErrEst(mem, SUNTRUE));
        DAEDALUS_SUNDIALS_CHECK(CVodeSetProjFrequency(mem, 1));
      }
    }
  } catch (const std::exception& e) {
    sum.error = std::string("evaluation failed at an output time: ") + e.what();
    collect_stats();
    return sum;
  }
  collect_stats();
  sum.ok = true;
  return sum;
}

}  // namespace daedalus
