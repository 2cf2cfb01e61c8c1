#include "daedalus/simulate.hpp"

#include <cvodes/cvodes.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iomanip>
#include <memory>
#include <sstream>

#include "daedalus/projection.hpp"
#include "daedalus/symplectic.hpp"
#include "integrate/idas_integrate.hpp"
#include "integrate/integrator_common.hpp"
#include "integrate/sparse_simulate.hpp"
#include "integrate/sundials_util.hpp"
#include "sensitivity/sens_common.hpp"

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
  if (sensitivity.method != SensMethod::kNone &&
      integrator != Integrator::kCvodesBdf &&
      integrator != Integrator::kCvodesAdams && integrator != Integrator::kIdas)
    return fail(
        "sensitivities come from the SUNDIALS integrators: use --integrator "
        "idas or cvodes-bdf (the fixed-step schemes have none)");
  if (!(output_step > 0.0)) return fail("output step must be positive");
  if (!(rtol > 0.0) || rtol >= 1.0) return fail("rtol must be in (0, 1)");
  if (!(atol > 0.0)) return fail("atol must be positive");
  if (!(multiplier_atol >= 0.0))
    return fail("multiplier atol must be >= 0 (0: same as atol)");
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
     << ", " << violations.size() << " feasibility violation"
     << (violations.size() == 1 ? "" : "s");
  if (kkt_health.checked) os << ", min KKT rcond " << kkt_health.rcond_min;
  os << ", " << stats.steps << " steps";
  if (!warnings.empty()) os << ", " << warnings.size() << " warning(s)";
  if (!ok) os << ": " << error;
  return os.str();
}

namespace {

// "name=value" pairs of a vector, or the values alone without names.
void PutVector(std::ostream& os,
               const Eigen::VectorXd& x,
               const std::function<std::string(int)>& name) {
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    os << " ";
    if (name) os << name(static_cast<int>(i)) << "=";
    os << x[i];
  }
}

}  // namespace

std::string SimulationSummary::FullReport(const Model& model) const {
  std::ostringstream os;
  const auto coord = [&](int i) { return model.coordinate_names()[i]; };
  const auto row = [&](int r) { return model.RowName(r); };
  os.precision(6);
  os << "Daedalus run: " << problem << "  [" << ToString(formulation) << ", "
     << ToString(integrator) << ", rtol " << rtol << ", atol " << atol << "]\n";
  os << "  status                 " << (ok ? "ok" : "FAILED") << "\n";
  if (!ok) os << "  error                  " << error << "\n";
  os << "  time reached           " << t_reached << " s (" << samples
     << " samples)\n";
  os << "  final q               ";
  PutVector(os, final.q, coord);
  os << "\n  final v               ";
  PutVector(os, final.v, nullptr);
  os << "\n";
  if (final.lambda.size() > 0) {
    os << "  final lambda          ";
    PutVector(os, final.lambda, row);
    os << "\n";
  }
  os << std::scientific << std::setprecision(3);
  os << "  initial correction     position " << initial_correction_position
     << ", velocity " << initial_correction_velocity << "\n";
  os << "  max drift              position " << drift_position_max
     << ", velocity " << drift_velocity_max;
  if (drift_tol > 0.0) os << " (limit " << drift_tol << ")";
  os << "\n";
  for (const auto& e : escalations)
    os << "  escalation             t = " << e.t << ": " << ToString(e.from)
       << " -> " << ToString(e.to) << " (drift " << e.drift << " of '"
       << e.constraint << "')\n";
  os << "  energy (" << energy_kind << ")  initial " << energy_initial
     << ", final " << energy_final << ", change "
     << energy_final - energy_initial << " J\n";
  os << "  max energy residual    " << energy_residual_max
     << " J  (E - E0 - work; integration error only)\n";

  // Work terms: what changed the energy, by source.
  if (final.input_work.size() > 0 || model.has_damping() ||
      model.has_other_loads() || model.nc() > 0 ||
      final.explicit_time_work != 0.0 || final.stabilization_work != 0.0) {
    std::vector<std::pair<std::string, double>> terms;
    for (int k = 0; k < model.num_inputs() && k < final.input_work.size(); ++k)
      terms.emplace_back("input '" + model.inputs()[k].name + "'",
                         final.input_work[k]);
    if (model.has_damping())
      terms.emplace_back("damping loss", final.damping_loss);
    if (model.has_other_loads()) terms.emplace_back("other", final.other_work);
    if (final.explicit_time_work != 0.0)
      terms.emplace_back("explicit time", final.explicit_time_work);
    if (final.stabilization_work != 0.0)
      terms.emplace_back("stabilization", final.stabilization_work);
    if (model.nc() > 0)
      terms.emplace_back("constraints", final.constraint_work.sum());
    os << "  work [J]              ";
    for (size_t k = 0; k < terms.size(); ++k)
      os << (k ? ", " : " ") << terms[k].first << " " << terms[k].second;
    os << "\n";
  }
  if (model.nc() > 0 && final.constraint_work.size() == model.nc()) {
    // Per row: integrated lambda J v, and the largest gap of the identity
    // lambda J v = -lambda Phi_t met at a sample.
    const int shown = std::min(model.nc(), 6);
    os << "  constraint work [J]   ";
    for (int r = 0; r < shown; ++r)
      os << " " << row(r) << " " << final.constraint_work[r];
    if (shown < model.nc()) os << " ... (" << model.nc() - shown << " more)";
    double gap = 0.0;
    for (Eigen::Index r = 0; r < power_gap_max.size(); ++r)
      gap = std::max(gap, power_gap_max[r]);
    os << "\n  power identity gap     max |lambda J v + lambda Phi_t| = " << gap
       << " W\n";
  }
  for (Eigen::Index k = 0; k < final.quadratures.size(); ++k)
    os << "  quadrature '" << model.quadrature_name(static_cast<int>(k))
       << "'  " << std::setprecision(16) << final.quadratures[k]
       << std::setprecision(3) << "\n";

  // Feasibility: what was watched and every violation interval.
  if (unilateral_rows + friction_cones > 0) {
    os << "  feasibility            " << unilateral_rows
       << " unilateral row(s), " << friction_cones
       << " friction cone(s) watched: ";
    if (violations.empty())
      os << "no violation\n";
    else
      os << violations.size() << " violation interval(s)\n";
    for (const auto& v : violations) {
      const bool cone = v.kind == "friction_cone";
      os << "    " << (cone ? "cone" : "unilateral") << " '" << v.name
         << "'  t = " << v.t_start << " .. " << v.t_end
         << (v.ongoing ? " (still violated at the end)" : "") << ", worst "
         << (cone ? "mu lambda_n - |lambda_t| " : "lambda ") << v.worst
         << " at t = " << v.t_worst << "\n";
    }
  }
  if (kkt_health.checked && samples > 0) {
    os << "  KKT health             min rcond(J M^-1 J') "
       << kkt_health.rcond_min << " at t = " << kkt_health.t_worst
       << ", min rank(J) " << kkt_health.rank_J_min << " of " << model.nc()
       << "\n";
  }
  for (const auto& e : events)
    os << "  event                  '" << e.name << "' at t = " << e.t
       << (e.direction > 0 ? " (rising)" : " (falling)")
       << (e.stopped ? " (run stopped)" : "") << "\n";
  os << "  evaluator              " << evaluator << "\n";
  os << "  solver                 " << stats.steps << " steps, "
     << stats.rhs_evals
     << (integrator == Integrator::kIdas ? " residual evals, " : " RHS evals, ")
     << stats.jacobian_evals << " Jacobians, " << stats.error_test_failures
     << " error-test fails, " << stats.nonlinear_conv_failures
     << " convergence fails";
  if (stats.projections > 0) os << ", " << stats.projections << " projections";
  os << "\n";
  for (const auto& w : warnings) os << "  WARNING                " << w << "\n";
  return os.str();
}

// --------------------------------------------------------- integration

namespace internal {
SensitivityResult AdjointGradient(const Model& model,
                                  const InitialState& x0,
                                  const Eigen::VectorXd& params,
                                  const SimulationOptions& options,
                                  std::string* error);
}  // namespace internal

namespace {

// Everything the CVODES callbacks need. Callbacks are noexcept trampolines:
// they stash the exception text and return +1 (recoverable) or -1.
struct CvodeRun : internal::CallbackGuard {
  CvodeRun(const Model& m, const SimulationOptions& o)
      : model(m), ws(m), kkt(m, o.kkt), opt(o) {
    ws.use_compiled = o.compiled;
  }
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
  KktResult ideal;  // reported multipliers (internal::IdealMultipliers)

  // ---- forward sensitivities (CVodeSensInit): exact tangents.
  TangentWorkspace tws{model};
  internal::KktTangent kt, kt_ideal;
  std::vector<SensParameter> sens;
  const Eigen::VectorXd* dq_params = nullptr;  // --sens-dq: SUNDIALS's p
  Eigen::VectorXd dp;                          // parameter direction scratch

  // Factors the KKT systems at (t, y) for the tangents below.
  void PrepareTangents(double t, const double* y) {
    Accelerations(t, y);
    kt.Factor(ws, r.vdot, r.lambda);
    if (opt.formulation == Formulation::kBaumgarte && nc > 0) {
      Reported();
      kt_ideal.Factor(ws, ideal.vdot, ideal.lambda);
    }
  }
  // Seeds the tangent workspace along (s, e_i) and returns the tangents of
  // the accelerations and of the applied and reported multipliers.
  void Tangent(const double* s,
               int i,
               Eigen::VectorXd* da,
               Eigen::VectorXd* dl,
               Eigen::VectorXd* dl_reported) {
    dp.setZero(model.num_parameters());  // reuses its storage
    if (sens[i].kind == SensParameter::Kind::kModel) dp[sens[i].index] = 1.0;
    SeedTangent(ws, Eigen::Map<const Eigen::VectorXd>(s, nq),
                Eigen::Map<const Eigen::VectorXd>(s + nq, nv), dp, &tws);
    EvaluateAll(&tws);
    kt.Solve(tws, internal::StabilizedBias(tws, opt, holonomic_row), da, dl);
    if (opt.formulation == Formulation::kBaumgarte && nc > 0) {
      Eigen::VectorXd unused;
      kt_ideal.Solve(tws, tws.bias, &unused, dl_reported);
    } else {
      *dl_reported = *dl;
    }
  }

  // The multipliers to report at the current state: r.lambda, or for
  // Baumgarte the ideal ones (its correction force is stabilization).
  const Eigen::VectorXd& Reported() {
    if (opt.formulation != Formulation::kBaumgarte || nc == 0) return r.lambda;
    internal::IdealMultipliers(ws, &kkt, &ideal);
    return ideal.lambda;
  }

  void Accelerations(double t, const double* y) {
    if (dq_params) ws.SetParameters(*dq_params);
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
    const Eigen::VectorXd& lambda = run->Reported();
    internal::QuadratureIntegrands(
        *run->layout, run->ws, lambda,
        internal::StabilizationPower(run->ws, run->r.lambda, lambda),
        internal::View(yqdot));
  });
}

// Sensitivity right-hand sides: (s_v, d vdot) along (s_i, e_i).
int SensRhsFn(int ns,
              realtype t,
              N_Vector y,
              N_Vector /*ydot*/,
              N_Vector* yS,
              N_Vector* ySdot,
              void* ud,
              N_Vector,
              N_Vector) {
  auto* run = static_cast<CvodeRun*>(ud);
  return run->Trap([&] {
    run->PrepareTangents(t, N_VGetArrayPointer(y));
    Eigen::VectorXd da, dl, dr;
    for (int i = 0; i < ns; ++i) {
      const double* s = N_VGetArrayPointer(yS[i]);
      run->Tangent(s, i, &da, &dl, &dr);
      auto out = internal::View(ySdot[i]);
      out.head(run->nq) =
          Eigen::Map<const Eigen::VectorXd>(s + run->nq, run->nv);
      out.tail(run->nv) = da;
    }
  });
}

// Quadrature sensitivities: tangents of the integrands (QuadFn) along
// (s_i, e_i), with the multipliers' own tangents.
int QuadSensFn(int ns,
               realtype t,
               N_Vector y,
               N_Vector* yS,
               N_Vector /*yq*/,
               N_Vector* yQSdot,
               void* ud,
               N_Vector,
               N_Vector) {
  auto* run = static_cast<CvodeRun*>(ud);
  return run->Trap([&] {
    run->PrepareTangents(t, N_VGetArrayPointer(y));
    const Eigen::VectorXd applied = run->r.lambda;
    const Eigen::VectorXd reported = run->Reported();
    const bool split = run->opt.formulation == Formulation::kBaumgarte;
    Eigen::VectorXd da, dl, dr;
    VecX<D1> lam(run->nc), app(run->nc), out(run->layout->size());
    for (int i = 0; i < ns; ++i) {
      run->Tangent(N_VGetArrayPointer(yS[i]), i, &da, &dl, &dr);
      for (int k = 0; k < run->nc; ++k) {
        lam[k] = D1(reported[k], dr[k]);
        app[k] = D1(applied[k], dl[k]);
      }
      D1 stab(0.0);
      if (split && run->nc > 0) stab = (app - lam).dot(run->tws.J * run->tws.v);
      internal::QuadratureIntegrands(*run->layout, run->tws, lam, stab, out);
      auto o = internal::View(yQSdot[i]);
      for (Eigen::Index k = 0; k < out.size(); ++k) o[k] = out[k].d;
    }
  });
}

int RootFn(realtype t, N_Vector y, realtype* gout, void* ud) {
  auto* run = static_cast<CvodeRun*>(ud);
  return run->Trap([&] {
    run->Accelerations(t, N_VGetArrayPointer(y));
    run->roots->Evaluate(run->ws, run->Reported(), gout);
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

  if (options.sensitivity.method == SensMethod::kAdjoint) {
    // The plain run gives the samples and the report; the adjoint pass
    // (its own checkpointed forward run and the backward run) the gradient.
    SimulationOptions plain = options;
    plain.sensitivity.method = SensMethod::kNone;
    SimulationSummary sum = Simulate(model, x0, params, plain, observer);
    std::string error;
    sum.sensitivities =
        internal::AdjointGradient(model, x0, params, options, &error);
    if (sum.ok && !error.empty()) {
      sum.ok = false;
      sum.error = error;
    }
    return sum;
  }
  // Sparse KKT path (issue 6): explicit sparse --kkt, or auto on a model
  // with declared body structure; see src/sparse_simulate.hpp.
  if (internal::UseSparsePath(model, options)) {
    if (options.sensitivity.method != SensMethod::kNone) {
      SimulationSummary sum = internal::StartSummary(model, options);
      sum.error =
          "sensitivities are not available on the sparse KKT path; pass "
          "--kkt dense (the dense path supports forward and adjoint)";
      return sum;
    }
    return internal::SimulateSparse(model, x0, params, options, observer);
  }

  if (options.integrator == Integrator::kIdas) {
    return internal::SimulateIdas(model, x0, params, options, observer);
  }
  if (options.integrator == Integrator::kStormerVerlet ||
      options.integrator == Integrator::kSymplecticEuler ||
      options.integrator == Integrator::kRattle) {
    return internal::SimulateStructurePreserving(model, x0, params, options,
                                                 observer);
  }

  SimulationSummary sum = internal::StartSummary(model, options);

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
  internal::LinSolPtr LS(
      internal::MakeDenseLuSolver(y.get(), A.get(), ctx.get()));

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

  // ---- forward sensitivities (CVodeSensInit), consistent at t0.
  const SensitivityOptions& so = options.sensitivity;
  const bool fsa = so.method == SensMethod::kForward;
  int ns = 0;
  internal::VectorArrayPtr yS, qS;
  Eigen::VectorXd pvals = params, pbar;
  std::vector<int> plist;
  Eigen::MatrixXd sens_now;
  if (fsa) {
    if (options.formulation == Formulation::kProjection) {
      sum.error =
          "forward sensitivities are not combined with CVODES's projection "
          "(the projection is not differentiated); use --formulation "
          "baumgarte, or ggl on IDAS";
      return sum;
    }
    try {
      run.sens = ResolveSensParameters(model, so.parameters);
      ns = static_cast<int>(run.sens.size());
      yS = internal::MakeVectorArray(ns, y.get());
      qS = internal::MakeVectorArray(ns, yq.get());
      run.PrepareTangents(options.t0, internal::ConstView(y.get()).data());
      for (int i = 0; i < ns; ++i) {
        const internal::InitialSensitivity s0 = internal::LinearizeInitialState(
            run.ws, &run.tws, run.r.vdot, run.r.lambda, run.sens[i],
            so.initial_tangent);
        internal::View(yS.get()[i]) << s0.dq, s0.dv;
      }
      if (so.difference_quotient) {
        sum.error = internal::DqParameters(run.sens, pvals, &plist, &pbar);
        if (!sum.error.empty()) return sum;
      }
    } catch (const std::exception& e) {
      sum.error = e.what();
      return sum;
    }
    DAEDALUS_SUNDIALS_CHECK(
        CVodeSensInit(mem, ns, so.staggered ? CV_STAGGERED : CV_SIMULTANEOUS,
                      so.difference_quotient ? nullptr : SensRhsFn, yS.get()));
    if (so.difference_quotient) {
      run.dq_params = &pvals;
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSetSensParams(mem, pvals.data(), pbar.data(), plist.data()));
    }
    DAEDALUS_SUNDIALS_CHECK(CVodeSensEEtolerances(mem));
    DAEDALUS_SUNDIALS_CHECK(
        CVodeSetSensErrCon(mem, so.error_control ? SUNTRUE : SUNFALSE));
    // The quadratures' sensitivities are exact even with --sens-dq: the
    // internal difference quotient of SUNDIALS 6.4 writes the integrands
    // (one per quadrature) into a work vector of the state's length, past
    // its end when there are more quadratures than states (found by
    // AddressSanitizer on the pendulum; IDAS has the same defect).
    DAEDALUS_SUNDIALS_CHECK(CVodeQuadSensInit(mem, QuadSensFn, qS.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeQuadSensEEtolerances(mem));
    DAEDALUS_SUNDIALS_CHECK(
        CVodeSetQuadSensErrCon(mem, so.error_control ? SUNTRUE : SUNFALSE));
    sens_now.resize(run.nq + run.nv + run.nc, ns);
    recorder.AttachSensitivities(&sens_now);
    internal::StartForwardResult(model, run.sens, &sum.sensitivities);
  }
  // Sensitivities at a sample: the state's from CVODES, the multipliers'
  // (reported ones) from the linearized KKT system at that state.
  auto read_sens = [&](double t, N_Vector yy, bool first) {
    if (!fsa) return;
    if (!first) {
      double ts = t;
      DAEDALUS_SUNDIALS_CHECK(CVodeGetSens(mem, &ts, yS.get()));
    }
    run.PrepareTangents(t, internal::ConstView(yy).data());
    Eigen::VectorXd da, dl, dr;
    for (int i = 0; i < ns; ++i) {
      const auto s = internal::ConstView(yS.get()[i]);
      run.Tangent(s.data(), i, &da, &dl, &dr);
      sens_now.col(i) << s, dr;
    }
  };

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
    read_sens(t, yy, first);
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
    recorder.Record(run.ws, run.r.vdot, run.Reported(), w, stab, first);
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
            options.integrator == Integrator::kCvodesBdf && !fsa;
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
  if (fsa) {
    SensitivityResult& sr = sum.sensitivities;
    sr.final = sens_now;
    double tq = sum.t_reached;
    DAEDALUS_SUNDIALS_CHECK(CVodeGetQuadSens(mem, &tq, qS.get()));
    const internal::QuadLayout& L = recorder.layout();
    for (int k = 0; k < L.nuq; ++k) {
      Eigen::VectorXd g(ns);
      for (int i = 0; i < ns; ++i)
        g[i] = internal::ConstView(qS.get()[i])[L.user() + k];
      sr.quadratures.emplace_back(model.quadrature_name(k), g);
    }
  }
  sum.ok = true;
  return sum;
}

}  // namespace daedalus
