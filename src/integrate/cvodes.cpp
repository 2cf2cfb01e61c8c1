// The CVODES adapter: integrates an ODE form (formulation/ode_form.hpp)
// with BDF or Adams, its energy-balance quadratures, forward
// sensitivities, root finding and the projection step, and applies the
// drift contract. No mechanics here: everything about the equations comes
// from the form and its Mechanics.
//
// Newton systems: on the dense evaluator CVODES factors its own dense
// Newton matrix (our difference quotients, JacFn); on the sparse one it runs
// GMRES preconditioned by the exact sparse Newton matrix
// (formulation/sparse_newton.hpp), or Adams with fixed-point iteration. The
// sparse evaluator also carries the energy-balance quadratures inside the
// ODE state (error-controlled like the state), so that their integrands
// come from the same evaluation as the accelerations instead of one more
// model evaluation and KKT solve per step. So does Adams with forward
// sensitivities, for another reason: on an order increase CVODES's Adams
// leaves the new Nordsieck column of the quadrature sensitivities unset
// (cvAdjustAdams zeroes those of the state, the quadratures and the state
// sensitivities only; SUNDIALS 6.4.1, still so in 7.5.0), so that they and
// the step-size choices read uninitialized memory (found by valgrind:
// runs that failed or passed from one process to the next); in the state,
// their sensitivities are state sensitivities, which Adams handles.
#include <cvodes/cvodes.h>
#include <sundials/sundials_nonlinearsolver.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include <memory>

#include "contact/contact_stage.hpp"
#include "events/event_handler.hpp"
#include "formulation/ode_form.hpp"
#include "integrate/adapters.hpp"
#include "integrate/common.hpp"
#include "integrate/cvodes_flags.hpp"
#include "integrate/step_budget.hpp"
#include "integrate/sundials_util.hpp"
#include "monitor/recorder.hpp"
#include "sensitivity/forward.hpp"

namespace daedalus::internal {

namespace {

struct CvodesRun : CallbackGuard {
  explicit CvodesRun(OdeForm* f) : form(f) {}
  OdeForm* form;
  const RootSet* roots = nullptr;
  int n = 0;  // nq + nv
  // Quadratures inside the state: their positions in the layout.
  std::vector<int> live;
  Eigen::VectorXd integrands;  // layout-size scratch
  // Forward sensitivities: one parameter direction per sensitivity.
  std::vector<Eigen::VectorXd> directions;
  Eigen::VectorXd da, dl, dr;
  const SimulationOptions* options = nullptr;  // JacFn's tolerances
};

int RhsFn(realtype t, N_Vector y, N_Vector ydot, void* ud) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    run->form->Rhs(t, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot));
    if (run->live.empty()) return;
    run->form->IntegrandsHere(run->integrands);
    double* w = N_VGetArrayPointer(ydot) + run->n;
    for (size_t j = 0; j < run->live.size(); ++j)
      w[j] = run->integrands[run->live[j]];
  });
}

// The dense Newton matrix's f_y (DifferenceQuotientJacobian: why not CVODES's).
int JacFn(realtype t,
          N_Vector y,
          N_Vector fy,
          SUNMatrix J,
          void* ud,
          N_Vector tmp1,
          N_Vector,
          N_Vector) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    DifferenceQuotientJacobian(
        [&](const double* yj, double* f) { run->form->Rhs(t, yj, f); }, run->n,
        N_VGetArrayPointer(y), N_VGetArrayPointer(fy), run->options->rtol,
        run->options->atol, SM_DATA_D(J), N_VGetArrayPointer(tmp1));
  });
}

int QuadFn(realtype t, N_Vector y, N_Vector yqdot, void* ud) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    run->form->Accelerations(t, N_VGetArrayPointer(y));
    run->form->IntegrandsHere(View(yqdot));
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
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    OdeForm& f = *run->form;
    f.PrepareTangents(t, N_VGetArrayPointer(y));
    const bool quads = !run->live.empty();
    for (int i = 0; i < ns; ++i) {
      const double* s = N_VGetArrayPointer(yS[i]);
      f.Tangent(s, run->directions[i], &run->da, quads ? &run->dl : nullptr,
                quads ? &run->dr : nullptr);
      auto out = View(ySdot[i]);
      f.RateTangent(s, out.data());
      out.segment(f.nq(), f.nv()) = run->da;
      if (!quads) continue;
      // The quadratures carried in the state: their integrands' tangents.
      f.IntegrandTangent(run->dl, run->dr, run->integrands);
      for (size_t j = 0; j < run->live.size(); ++j)
        out[run->n + static_cast<Eigen::Index>(j)] =
            run->integrands[run->live[j]];
    }
  });
}

// Quadrature sensitivities: tangents of the user integrands along
// (s_i, e_i), forward-mode on their functions of (t, q, v, p); the energy
// balance's are not reported, and leaving them 0 spares a KKT tangent per
// direction and step (docs/optimal_control.md, "golfer_3d").
int QuadSensFn(int ns,
               realtype t,
               N_Vector y,
               N_Vector* yS,
               N_Vector /*yq*/,
               N_Vector* yQSdot,
               void* ud,
               N_Vector,
               N_Vector) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    const OdeForm& f = *run->form;
    for (int i = 0; i < ns; ++i)
      f.UserIntegrandTangent(t, N_VGetArrayPointer(y),
                             N_VGetArrayPointer(yS[i]), run->directions[i],
                             View(yQSdot[i]));
  });
}

int RootFn(realtype t, N_Vector y, realtype* gout, void* ud) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap(
      [&] { run->form->Roots(t, N_VGetArrayPointer(y), *run->roots, gout); });
}

int ProjFn(realtype t,
           N_Vector ycur,
           N_Vector corr,
           realtype /*eps*/,
           N_Vector err,
           void* ud) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    run->form->Project(t, N_VGetArrayPointer(ycur), N_VGetArrayPointer(corr),
                       err ? N_VGetArrayPointer(err) : nullptr);
    // The quadratures carried in the state are not projected.
    auto c = View(corr);
    c.tail(c.size() - run->n).setZero();
  });
}

// Newton preconditioner of the sparse evaluator: Jacobian blocks when CVODES
// asks for fresh ones (jok false), the augmented matrix for every gamma.
int PSetup(realtype t,
           N_Vector y,
           N_Vector /*fy*/,
           booleantype jok,
           booleantype* jcur,
           realtype gamma,
           void* ud) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    run->form->PreconditionerSetup(t, N_VGetArrayPointer(y), jok, gamma);
    *jcur = jok ? SUNFALSE : SUNTRUE;
  });
}

int PSolve(realtype /*t*/,
           N_Vector /*y*/,
           N_Vector /*fy*/,
           N_Vector r,
           N_Vector z,
           realtype /*gamma*/,
           realtype /*delta*/,
           int /*lr*/,
           void* ud) {
  auto* run = static_cast<CvodesRun*>(ud);
  return run->Trap([&] {
    // The quadrature components are left unpreconditioned.
    auto zz = View(z);
    const auto rr = ConstView(r);
    run->form->newton()->Solve(rr.head(run->n), zz.head(run->n));
    zz.tail(zz.size() - run->n) = rr.tail(rr.size() - run->n);
  });
}

struct NlsDeleter {
  void operator()(SUNNonlinearSolver s) const { SUNNonlinSolFree(s); }
};

}  // namespace

void IntegrateCvodes(Mechanics* mech,
                     const InitialState& x0,
                     const SimulationOptions& options,
                     Observer* observer,
                     SimulationSummary* out) {
  SimulationSummary& sum = *out;
  const Model& model = mech->model();
  Recorder recorder(model, &sum, observer);

  // ---- consistent initialization; the contacts' mode first (a mode
  // switcher: src/contact/, events/mode_switch.hpp)
  Eigen::VectorXd q = x0.q, v = x0.v;
  std::unique_ptr<ModeSwitcher> modes;
  try {
    modes = MakeContactStage(mech, options, &sum);
    if (modes) {
      modes->Start(options.t0, &q, &v);
      recorder.SetContacts();
    }
  } catch (const std::exception& e) {
    sum.error = e.what();
    return;
  }
  if (!MakeConsistent(mech, options, &q, &v, &sum)) return;

  OdeForm form(mech, options);
  CvodesRun run(&form);
  run.stop = options.stop;
  const int nq = form.nq(), nv = form.nv();
  run.n = nq + nv;
  const SensitivityOptions& so = options.sensitivity;
  const bool fsa = so.method == SensMethod::kForward;
  const bool adams = options.integrator == Integrator::kCvodesAdams;
  // Adams on the sparse evaluator iterates to a fixed point (its steps are
  // set by accuracy, not stiffness); with sensitivities, whose corrector
  // CVODES runs by Newton, it takes the Krylov path as BDF does. So does
  // Adams on the forward route (OdeForm::forward(): no M, no Newton matrix).
  const bool fixed_point = (mech->sparse() || form.forward()) && adams && !fsa;
  const bool krylov = form.newton() != nullptr && !fixed_point;
  // The sparse evaluator integrates its quadratures in the state (see the
  // file comment); with sensitivities they stay CVODES quadratures, whose
  // own sensitivities CVODES integrates. So does the forward route: its
  // integrands then come from the right-hand side's evaluation too.
  const bool in_state =
      (mech->sparse() && !fsa) || (adams && fsa) || form.forward();
  if (in_state) run.live = form.LiveQuadratures();
  const int nlive = static_cast<int>(run.live.size());
  run.integrands = Eigen::VectorXd::Zero(form.layout().size());

  // ---- CVODES set-up
  auto ctx = MakeContext();
  const long n = run.n + nlive;
  auto y = MakeVector(n, ctx.get());
  View(y.get()).head(nq) = q;
  View(y.get()).segment(nq, nv) = v;
  auto yq = MakeVector(form.layout().size(), ctx.get());

  void* mem = CVodeCreate(adams ? CV_ADAMS : CV_BDF, ctx.get());
  if (mem == nullptr) throw std::runtime_error("CVodeCreate failed");
  struct MemGuard {
    void* m;
    ~MemGuard() { CVodeFree(&m); }
  } guard{mem};
  MatrixPtr A;
  LinSolPtr LS;
  std::unique_ptr<std::remove_pointer_t<SUNNonlinearSolver>, NlsDeleter> NLS;

  DAEDALUS_SUNDIALS_CHECK(CVodeInit(mem, RhsFn, options.t0, y.get()));
  DAEDALUS_SUNDIALS_CHECK(CVodeSetUserData(mem, &run));
  DAEDALUS_SUNDIALS_CHECK(CVodeSetErrHandlerFn(
      mem, SundialsErrHandler, static_cast<CallbackGuard*>(&run)));
  DAEDALUS_SUNDIALS_CHECK(CVodeSStolerances(mem, options.rtol, options.atol));
  if (krylov) {
    LS.reset(SUNLinSol_SPGMR(y.get(), SUN_PREC_LEFT, 0, ctx.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetLinearSolver(mem, LS.get(), nullptr));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetPreconditioner(mem, PSetup, PSolve));
  } else if (fixed_point) {
    NLS.reset(SUNNonlinSol_FixedPoint(y.get(), 0, ctx.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetNonlinearSolver(mem, NLS.get()));
  } else {
    A.reset(SUNDenseMatrix(n, n, ctx.get()));
    LS.reset(MakeDenseLuSolver(y.get(), A.get(), ctx.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetLinearSolver(mem, LS.get(), A.get()));
    if (!in_state) {  // JacFn differentiates the state only
      run.options = &options;
      DAEDALUS_SUNDIALS_CHECK(CVodeSetJacFn(mem, JacFn));
    }
  }
  DAEDALUS_SUNDIALS_CHECK(CVodeSetMaxNumSteps(mem, options.max_steps));
  // 0 keeps CVODES' default (0.1); see SimulationOptions::nonlin_conv_coef.
  if (options.nonlin_conv_coef > 0.0)
    DAEDALUS_SUNDIALS_CHECK(
        CVodeSetNonlinConvCoef(mem, options.nonlin_conv_coef));
  if (!in_state) {
    DAEDALUS_SUNDIALS_CHECK(CVodeQuadInit(mem, QuadFn, yq.get()));
    DAEDALUS_SUNDIALS_CHECK(
        CVodeQuadSStolerances(mem, options.rtol, options.atol));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetQuadErrCon(mem, SUNTRUE));
  }

  // ---- forward sensitivities (CVodeSensInit), consistent at t0.
  int ns = 0;
  VectorArrayPtr yS, qS;
  Eigen::VectorXd pvals = mech->parameters(), pbar;
  std::vector<int> plist;
  Eigen::MatrixXd sens_now;
  std::vector<SensParameter> sens;
  if (fsa) {
    try {
      sens = ResolveSensParameters(model, so.parameters);
      ns = static_cast<int>(sens.size());
      yS = MakeVectorArray(ns, y.get());
      qS = MakeVectorArray(ns, yq.get());
      form.PrepareTangents(options.t0, ConstView(y.get()).data());
      for (int i = 0; i < ns; ++i) {
        run.directions.push_back(ParameterDirection(model, sens[i]));
        const InitialSensitivity s0 =
            mech->LinearizeStart(form.applied().vdot, form.applied().lambda,
                                 sens[i], so.initial_tangent);
        View(yS.get()[i]).head(run.n) << s0.dq, s0.dv;
      }
      if (so.difference_quotient) {
        sum.error = DqParameters(sens, pvals, &plist, &pbar);
        if (!sum.error.empty()) return;
      }
    } catch (const std::exception& e) {
      sum.error = e.what();
      return;
    }
    DAEDALUS_SUNDIALS_CHECK(CVodeSensInit(
        mem, ns,
        so.corrector == SensCorrector::kStaggered ? CV_STAGGERED
                                                  : CV_SIMULTANEOUS,
        so.difference_quotient ? nullptr : SensRhsFn, yS.get()));
    if (so.difference_quotient) {
      form.set_dq_parameters(&pvals);
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
    if (!in_state) {
      DAEDALUS_SUNDIALS_CHECK(CVodeQuadSensInit(mem, QuadSensFn, qS.get()));
      DAEDALUS_SUNDIALS_CHECK(CVodeQuadSensEEtolerances(mem));
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSetQuadSensErrCon(mem, so.error_control ? SUNTRUE : SUNFALSE));
    }
    sens_now.resize(nq + nv + form.nc(), ns);
    recorder.AttachSensitivities(&sens_now);
    StartForwardResult(model, sens, &sum.sensitivities);
  }
  // Sensitivities at a sample: the state's from CVODES (or given: after a
  // reset, before CVODES has taken a step, it cannot interpolate), the
  // multipliers' (reported ones) from the linearized KKT system at that
  // state.
  auto read_sens = [&](double t, N_Vector yy, bool first,
                       const Eigen::MatrixXd* given) {
    if (!fsa) return;
    if (given != nullptr) {
      for (int i = 0; i < ns; ++i)
        View(yS.get()[i]).head(run.n) = given->col(i);
    } else if (!first) {
      double ts = t;
      DAEDALUS_SUNDIALS_CHECK(CVodeGetSens(mem, &ts, yS.get()));
    }
    form.PrepareTangents(t, ConstView(yy).data());
    for (int i = 0; i < ns; ++i) {
      const auto s = ConstView(yS.get()[i]).head(run.n);
      form.Tangent(s.data(), run.directions[i], &run.da, nullptr, &run.dr);
      sens_now.col(i) << s, run.dr;
    }
  };

  RootSet roots(model, modes.get());
  run.roots = &roots;
  std::vector<int> found(static_cast<size_t>(roots.size()), 0);
  if (roots.size() > 0) {
    DAEDALUS_SUNDIALS_CHECK(CVodeRootInit(mem, roots.size(), RootFn));
    std::vector<int> dirs = roots.Directions();
    DAEDALUS_SUNDIALS_CHECK(CVodeSetRootDirection(mem, dirs.data()));
  }
  auto projection_on = [&] {
    DAEDALUS_SUNDIALS_CHECK(CVodeSetProjFn(mem, ProjFn));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetProjErrEst(mem, SUNTRUE));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetProjFrequency(mem, 1));
  };
  if (form.projects()) projection_on();

  // ---- sampling
  Eigen::VectorXd w(form.layout().size());
  auto ysample = MakeVector(n, ctx.get());
  // The quadratures at t: carried in the state, or CVODES's (into yq).
  auto read_quad = [&](double t, N_Vector yy) {
    if (in_state) {
      w.setZero();
      const auto Y = ConstView(yy);
      for (int j = 0; j < nlive; ++j) w[run.live[j]] = Y[run.n + j];
    } else {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(CVodeGetQuad(mem, &tq, yq.get()));
      w = ConstView(yq.get());
    }
  };
  // `restart`: CVODES has just been reinitialized (after a reset) and
  // cannot interpolate yet: the state sensitivities are `given` (n x ns,
  // with forward sensitivities) and the quadratures w as they are.
  // `total`: the reported sensitivities (q, v, lambda rows) to write
  // instead (at an event that stops the run: with the event-time term).
  auto sample = [&](double t, N_Vector yy, bool first,
                    const Eigen::MatrixXd* total = nullptr,
                    bool restart = false,
                    const Eigen::MatrixXd* given = nullptr) {
    if (!first && !restart && form.projects()) {
      // Report the interpolated state on the manifold (ProjectSample).
      N_VScale(1.0, yy, ysample.get());
      form.ProjectSample(t, N_VGetArrayPointer(ysample.get()));
      yy = ysample.get();
    }
    read_sens(t, yy, first, given);
    if (total != nullptr) sens_now = *total;
    form.Accelerations(t, ConstView(yy).data());
    if (!first && !restart) read_quad(t, yy);
    recorder.Record(*mech, form.applied().vdot, form.Reported(), w,
                    form.ProjectionWork(t), first);
    if (modes) modes->AtSample(*mech, form.Reported());
  };

  // Statistics of the finished segments (a reset or an escalation
  // reinitializes CVODES, which zeroes its counters), and the current one's.
  SolverStats done;
  auto collect_stats = [&] {
    SolverStats c;
    CVodeGetNumSteps(mem, &c.steps);
    CVodeGetNumRhsEvals(mem, &c.rhs_evals);
    if (krylov)
      CVodeGetNumJtimesEvals(mem, &c.jacobian_evals);
    else if (A)
      CVodeGetNumJacEvals(mem, &c.jacobian_evals);
    CVodeGetNumErrTestFails(mem, &c.error_test_failures);
    CVodeGetNumNonlinSolvConvFails(mem, &c.nonlinear_conv_failures);
    if (form.projects()) CVodeGetNumProjEvals(mem, &c.projections);
    sum.stats.steps = done.steps + c.steps;
    sum.stats.rhs_evals = done.rhs_evals + c.rhs_evals;
    sum.stats.jacobian_evals = done.jacobian_evals + c.jacobian_evals;
    sum.stats.error_test_failures =
        done.error_test_failures + c.error_test_failures;
    sum.stats.nonlinear_conv_failures =
        done.nonlinear_conv_failures + c.nonlinear_conv_failures;
    sum.stats.projections = done.projections + c.projections;
  };

  // ---- events (events/event_handler.hpp)
  std::unique_ptr<EventHandler> events;
  try {
    events = std::make_unique<EventHandler>(mech, options, &roots, &sum,
                                            run.directions);
  } catch (const std::exception& e) {
    sum.error = e.what();
    return;
  }
  // y and y' at t (y' the form's right-hand side).
  auto flow_at = [&](double t, N_Vector yy) {
    FlowPoint f;
    f.t = t;
    f.y = ConstView(yy).head(run.n);
    f.ydot.resize(run.n);
    Eigen::VectorXd ydot(n);
    form.Rhs(t, ConstView(yy).data(), ydot.data());
    f.ydot = ydot.head(run.n);
    return f;
  };
  // The state sensitivities (n x ns) at t.
  auto state_sens = [&](double t) {
    Eigen::MatrixXd s(run.n, ns);
    if (!fsa) return s;
    double ts = t;
    DAEDALUS_SUNDIALS_CHECK(CVodeGetSens(mem, &ts, yS.get()));
    for (int i = 0; i < ns; ++i) s.col(i) = ConstView(yS.get()[i]).head(run.n);
    return s;
  };
  // The quadrature sensitivities (layout x ns) at t, into qS (or yS's
  // tail when carried in the state).
  const QuadLayout& QL = form.layout();
  auto quad_sens = [&](double t) {
    Eigen::MatrixXd qsens = Eigen::MatrixXd::Zero(QL.size(), ns);
    if (!fsa) return qsens;
    if (in_state) {
      for (int i = 0; i < ns; ++i)
        for (int j = 0; j < nlive; ++j)
          qsens(run.live[j], i) = ConstView(yS.get()[i])[run.n + j];
    } else {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(CVodeGetQuadSens(mem, &tq, qS.get()));
      for (int i = 0; i < ns; ++i) qsens.col(i) = ConstView(qS.get()[i]);
    }
    return qsens;
  };
  // The user quadratures at the state of the last Accelerations.
  Eigen::VectorXd integrands(QL.size());
  auto user_quads = [&](const Eigen::MatrixXd& qsens) {
    QuadratureSnapshot q;
    form.IntegrandsHere(integrands);
    q.value = w.segment(QL.user(), QL.nuq);
    q.integrand = integrands.segment(QL.user(), QL.nuq);
    if (fsa) q.sens = qsens.middleRows(QL.user(), QL.nuq);
    return q;
  };
  Eigen::MatrixXd stop_quad_sens;  // at a stop, with the event-time term

  // After a reset or a contact switch: the sensitivities s+ with the
  // quadratures' jump sQ+ = sQ- + (L- - L+) tau, written into yS (and qS).
  auto set_jumped_sens = [&](const Eigen::MatrixXd& s_plus,
                             const Eigen::MatrixXd& qsens,
                             const Eigen::MatrixXd& jump) {
    for (int i = 0; i < ns; ++i) {
      View(yS.get()[i]).head(run.n) = s_plus.col(i);
      if (in_state) {
        for (int j = 0; j < nlive; ++j)
          View(yS.get()[i])[run.n + j] += jump(run.live[j], i);
      } else {
        View(qS.get()[i]) = qsens.col(i) + jump.col(i);
      }
    }
  };
  // CVODES restarted at t from y (its quadratures and sensitivities too);
  // after a short rebound its first steps grow by at most kFineStartGrowth
  // (ModeRestart::fine_start, docs/contact.md; 0: CVODES's defaults).
  auto restart = [&](double t, bool fine_start) {
    collect_stats();
    done = sum.stats;
    const double eta = fine_start ? kFineStartGrowth : 0.0;
    DAEDALUS_SUNDIALS_CHECK(CVodeSetEtaMaxFirstStep(mem, eta));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetEtaMaxEarlyStep(mem, eta));
    DAEDALUS_SUNDIALS_CHECK(CVodeReInit(mem, t, y.get()));
    if (!in_state) {
      View(yq.get()) = w;
      DAEDALUS_SUNDIALS_CHECK(CVodeQuadReInit(mem, yq.get()));
    }
    if (fsa) {
      DAEDALUS_SUNDIALS_CHECK(CVodeSensReInit(
          mem,
          so.corrector == SensCorrector::kStaggered ? CV_STAGGERED
                                                    : CV_SIMULTANEOUS,
          yS.get()));
      if (!in_state)
        DAEDALUS_SUNDIALS_CHECK(CVodeQuadSensReInit(mem, qS.get()));
    }
    if (form.projects()) projection_on();
  };

  // At a root return that fired a model event: the sample before it
  // (with the event-time terms when the run stops there), the records,
  // and the restart after a reset. Returns true when the run stops.
  auto at_events = [&](double t) {
    const size_t first = sum.events.size();
    const FlowPoint minus = flow_at(t, y.get());
    const Eigen::MatrixXd s = state_sens(t);
    events->Linearize(minus, s);
    if (events->stops() && fsa) {
      const Eigen::MatrixXd total = events->TotalSensitivity(s);
      sample(t, y.get(), false, &total);
    } else {
      sample(t, y.get(), false);
    }
    const Eigen::MatrixXd qsens = quad_sens(t);
    form.Accelerations(t, ConstView(y.get()).data());
    const QuadratureSnapshot quads = user_quads(qsens);
    const Eigen::VectorXd before = integrands;
    roots.Record(model, t, found.data(), &sum);
    events->Annotate(first, quads);
    if (events->stops()) {
      if (fsa) {
        stop_quad_sens = qsens;
        if (events->tau().size() > 0)
          stop_quad_sens += before * events->tau().transpose();
      }
      return true;
    }
    if (events->reset() == nullptr) return false;
    // ---- the reset: the consistent state after it, then CVODES anew.
    const double energy_minus = sum.final.energy;
    Eigen::VectorXd qn, vn;
    events->ResetState(&qn, &vn);
    View(y.get()).head(nq) = qn;
    View(y.get()).segment(nq, nv) = vn;
    const FlowPoint plus = flow_at(t, y.get());
    form.IntegrandsHere(integrands);
    const double energy_plus = mech->energy();
    Eigen::MatrixXd s_plus;
    if (fsa) {
      mech->Evaluate(t, qn, vn);
      KktResult r_plus;
      mech->SolveKkt(mech->bias(), &r_plus);
      s_plus = events->SensitivitiesAfter(plus, r_plus, s);
      // Quadratures: sQ+ = sQ- + (L- - L+) tau.
      const Eigen::MatrixXd jump =
          (before - integrands) * events->tau().transpose();
      set_jumped_sens(s_plus, qsens, jump);
    }
    restart(t, false);
    events->Restarted(energy_minus, energy_plus);
    recorder.NoteReset(energy_plus - energy_minus);
    sample(t, y.get(), false, nullptr, true, &s_plus);
    return false;
  };

  // At a root of the mode switcher: the new mode, and CVODES restarted from
  // its consistent state (as after a reset map).
  // With forward sensitivities, they cross the switch by its saltation
  // matrices (docs/contact.md, "Sensitivities"), as across a reset.
  auto mode_switch = [&](double t) {
    FlowPoint minus;
    Eigen::MatrixXd s_minus, qsens;
    Eigen::VectorXd before;
    if (fsa) {
      minus = flow_at(t, y.get());
      s_minus = state_sens(t);
      qsens = quad_sens(t);
      form.IntegrandsHere(integrands);
      before = integrands;
    }
    const ModeRestart r = modes->Switch(t, ConstView(y.get()).head(nq),
                                        ConstView(y.get()).segment(nq, nv),
                                        found.data() + roots.mode_offset());
    if (!r.restart) return;
    View(y.get()).head(nq) = r.q;
    View(y.get()).segment(nq, nv) = r.v;
    Eigen::MatrixXd s_plus;
    if (fsa) {
      const FlowPoint plus = flow_at(t, y.get());
      Eigen::VectorXd tau;
      s_plus =
          modes->SensitivitiesAfter(minus, plus, s_minus, run.directions, &tau);
      // The integrands in the new mode; sQ+ = sQ- + (L- - L+) tau.
      flow_at(t, y.get());
      form.IntegrandsHere(integrands);
      const Eigen::MatrixXd jump = (before - integrands) * tau.transpose();
      set_jumped_sens(s_plus, qsens, jump);
    }
    restart(t, r.fine_start);
    recorder.NoteImpact(r.energy_change, r.impulse);
    sample(t, y.get(), false, nullptr, true, fsa ? &s_plus : nullptr);
  };

  try {
    sample(options.t0, y.get(), true);
    const long nout = NumOutputs(options);
    for (long k = 1; k <= nout; ++k) {
      const double tout = OutputTime(options, k);
      double tret = 0.0;
      run.Reset();
      collect_stats();  // --max-steps: what is left of the run's budget
      if (run.StopRequested()) {
        sum.error = "stop requested";  // Simulate reports it interrupted
        return;
      }
      if (StepsLeft(options.max_steps, sum.stats.steps) == 0) {
        sum.error =
            StepBudgetSpent(options.max_steps, OutputTime(options, k - 1));
        return;
      }
      DAEDALUS_SUNDIALS_CHECK(CVodeSetMaxNumSteps(
          mem, StepsLeft(options.max_steps, sum.stats.steps)));
      const int flag = CVode(mem, tout, y.get(), &tret, CV_NORMAL);
      if (flag < 0) {
        std::ostringstream os;
        os << "CVode failed with " << CvodesFlagName(flag) << " (flag " << flag
           << ") at t = " << tret;
        os << run.Detail();
        os << SingularityNote(mech, form.kind(), tret,
                              ConstView(y.get()).head(nq),
                              ConstView(y.get()).segment(nq, nv));
        std::string known = run.HintFromDetail();
        if (known.empty()) known = ToleranceHint(options);
        os << "; hint: "
           << (known.empty() ? CvodesHint(flag, options.max_steps) : known);
        sum.error = os.str();
        collect_stats();
        sum.t_reached = tret;
        return;
      }
      if (flag == CV_ROOT_RETURN) {
        DAEDALUS_SUNDIALS_CHECK(CVodeGetRootInfo(mem, found.data()));
        if (events->Fire(found.data())) {
          if (at_events(tret)) break;
        } else {
          sample(tret, y.get(), false);
          roots.Record(model, tret, found.data(), &sum);
        }
        if (modes && modes->Fired(found.data() + roots.mode_offset()))
          mode_switch(tret);
        // Go on to the same output time, unless the root fell on it.
        if (tret < tout) --k;
        continue;
      }
      sample(tret, y.get(), false);
      roots.Settle(*mech);
      // ---- drift contract
      int row = 0;
      double drift = 0.0;
      const std::string violation =
          DriftViolation(model, options, sum, &row, &drift);
      if (violation.empty()) continue;
      SimulationOptions now = options;
      now.formulation = form.kind();
      std::string cannot;
      const bool escalate =
          options.drift_action == DriftAction::kEscalate &&
          EscalationTarget(now, &cannot) == Formulation::kProjection;
      if (!escalate) {
        sum.error = violation +
                    (form.kind() == Formulation::kProjection
                         ? std::string("; hint: tighten --rtol/--atol, or "
                                       "check the KKT health in the report "
                                       "(a projection that does not "
                                       "converge leaves the drift)")
                         : std::string("; hint: tighten --rtol/--atol or use "
                                       "--formulation projection or ggl"));
        if (options.drift_action == DriftAction::kEscalate)
          sum.error += " (no escalation: " + cannot + ")";
        collect_stats();
        return;
      }
      Escalation e;
      e.t = tret;
      e.constraint = model.RowName(row);
      e.drift = drift;
      e.from = form.kind();
      e.to = Formulation::kProjection;
      sum.escalations.push_back(e);
      // Restart from the projected state with projection on every step.
      const Sample& f = sum.final;
      Eigen::VectorXd qn = f.q, vn = f.v;
      std::string why;
      if (!form.EscalateToProjection(tret, f.energy, &qn, &vn, &why)) {
        sum.error = violation + "; escalation to projection failed: " + why;
        collect_stats();
        return;
      }
      View(y.get()).head(nq) = qn;
      View(y.get()).segment(nq, nv) = vn;
      collect_stats();
      done = sum.stats;
      DAEDALUS_SUNDIALS_CHECK(CVodeReInit(mem, tret, y.get()));
      if (!in_state) DAEDALUS_SUNDIALS_CHECK(CVodeQuadReInit(mem, yq.get()));
      projection_on();
    }
  } catch (const std::exception& e) {
    sum.error = std::string("evaluation failed at an output time: ") + e.what();
    collect_stats();
    return;
  }
  collect_stats();
  try {
    // The quadratures' sensitivities at the end: CVODES's, or at a stop
    // with the event-time term.
    const bool stopped = stop_quad_sens.size() > 0;
    const Eigen::MatrixXd qsens =
        stopped ? stop_quad_sens : quad_sens(sum.t_reached);
    if (fsa) {
      SensitivityResult& sr = sum.sensitivities;
      sr.final = sens_now;
      for (int k = 0; k < QL.nuq; ++k)
        sr.quadratures.emplace_back(model.quadrature_name(k),
                                    qsens.row(QL.user() + k).transpose());
    }
    // The functionals at the end (at a stop the handler uses the event's
    // state and terms).
    const FlowPoint end = flow_at(sum.t_reached, y.get());
    form.Accelerations(sum.t_reached, ConstView(y.get()).data());
    events->AtEnd(end, state_sens(sum.t_reached), user_quads(qsens));
  } catch (const std::exception& e) {
    sum.error = std::string("functionals at the end of the run: ") + e.what();
    return;
  }
  sum.ok = true;
}

}  // namespace daedalus::internal
