#include "integrate/idas_segment.hpp"

#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "kkt/sparse_backend.hpp"

namespace daedalus::internal {

namespace {

// Round-off floors of the absolute tolerances, as multiples of what double
// precision can resolve (IdasEwtFn).
constexpr double kRoundoffFloor = 10.0;

// IDAS's error weights 1 / (rtol |y_i| + atol_i), with atol_i raised to the
// round-off the residual carries in that component. A coordinate q_i is
// known to eps |q_i|; through the constraints (and the forces) that error
// moves the velocities by about |v_i| eps |q_i| (a rotation's angle error
// times its rate), so no velocity can be resolved better than
// eps max_i |q_i v_i|, nor a coordinate better than eps |q|_inf. When the
// user's atol is below that, every weighted increment and error estimate
// of a velocity near zero is round-off of order one or more: GGL on
// stiff_linkage at rtol = atol = 1e-12, its crank winding to 200 rad at
// 1e3 rad/s (J v carries 2e-12 m/s of round-off), took 95,139 steps over
// 0.2 s and 2.07 million over 0.5 s, and started 32 turns on it stopped
// at t = 5.8e-8 with IDA_TOO_MUCH_WORK, h held near 1e-13 with one Newton
// iteration per step, each correcting the piston's velocity by about
// 4e-12 m/s (docs/formulations.md, "Round-off floors of the tolerances"). Each
// floor is kRoundoffFloor times that resolution; above it the user's atol
// stands unchanged.
int IdasEwtFn(N_Vector y, N_Vector ewt, void* ud) {
  const auto* run = static_cast<const IdasRun*>(ud);
  const auto Y = ConstView(y);
  auto W = View(ewt);
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const Eigen::Index n = Y.size(), nq = run->nq, nv = run->nv;
  if (run->atol.size() != n || nq + nv > n) return -1;
  const double qfloor = kRoundoffFloor * eps * Y.head(nq).cwiseAbs().maxCoeff();
  const double vfloor =
      kRoundoffFloor * eps *
      (nq == nv
           ? Y.head(nq).cwiseProduct(Y.segment(nq, nv)).cwiseAbs().maxCoeff()
           : Y.head(nq).cwiseAbs().maxCoeff() *
                 Y.segment(nq, nv).cwiseAbs().maxCoeff());
  // One loop per segment (q, v, the rest) without a branch per entry (the
  // weights are set at every step, and once more per sensitivity);
  // whether every d is positive and finite is checked once at the end.
  const double rtol = run->rtol;
  const double* yd = Y.data();
  const double* at = run->atol.data();
  double* wd = W.data();
  bool ok = true;
  const auto weigh = [&](Eigen::Index from, Eigen::Index to, double floor) {
    for (Eigen::Index i = from; i < to; ++i) {
      const double d = rtol * std::abs(yd[i]) + std::max(at[i], floor);
      ok &= (d > 0.0) & (d <= std::numeric_limits<double>::max());
      wd[i] = 1.0 / d;
    }
  };
  weigh(0, nq, qfloor);
  weigh(nq, nq + nv, vfloor);
  weigh(nq + nv, n, -std::numeric_limits<double>::infinity());
  return ok ? 0 : -1;
}

// A Newton iterate that left the finite range (the corrector diverged
// within a step) is a recoverable failure: IDAS cuts the step and tries
// again. Evaluated, it would reach the model and be reported as the model's
// fault, with a NaN state.
int IdasResFn(realtype t, N_Vector y, N_Vector yp, N_Vector rr, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  // The first evaluation after the state corrector converged, into another
  // vector than its own: IDAS's staggered evaluation at the converged
  // state (SkipsConvergedResidual), whose value nothing reads.
  const bool converged = run->state_converged;
  run->state_converged = false;
  if (run->skip_converged_residual && converged && rr != run->newton_delta)
    return 0;
  return run->Trap([&] {
    if (!View(y).allFinite() || !View(yp).allFinite()) {
      std::ostringstream os;
      os << "the corrector's iterate left the finite range at t = " << t
         << " (the Newton iteration diverged within a step; the step was "
            "cut and retried)";
      throw std::runtime_error(os.str());
    }
    run->form->Residual(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                        N_VGetArrayPointer(rr));
  });
}

int IdasQuadFn(realtype t, N_Vector y, N_Vector /*yp*/, N_Vector rq, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    run->form->Quadratures(t, N_VGetArrayPointer(y), N_VGetArrayPointer(rq));
  });
}

int IdasRootFn(
    realtype t, N_Vector y, N_Vector /*yp*/, realtype* gout, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap(
      [&] { run->form->Roots(t, N_VGetArrayPointer(y), *run->roots, gout); });
}

// Exact Jacobian dF/dy + cj dF/dyp into a dense or a compressed-sparse-
// column SUNMatrix (the sparse pattern is fixed at setup).
int IdasJacFn(realtype t,
              realtype cj,
              N_Vector y,
              N_Vector yp,
              N_Vector /*r*/,
              SUNMatrix Jac,
              void* ud,
              N_Vector,
              N_Vector,
              N_Vector) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    DaeForm& f = *run->form;
    if (SUNMatGetID(Jac) == SUNMATRIX_DENSE) {
      f.DenseJacobian(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                      SM_DATA_D(Jac));
      return;
    }
    const auto& pattern = f.Pattern();
    sunindextype* colptr = SM_INDEXPTRS_S(Jac);
    sunindextype* rowval = SM_INDEXVALS_S(Jac);
    sunindextype k = 0;
    for (size_t j = 0; j < pattern.size(); ++j) {
      colptr[j] = k;
      for (int i : pattern[j]) rowval[k++] = i;
    }
    colptr[pattern.size()] = k;
    f.SparseJacobian(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                     SM_DATA_S(Jac));
  });
}

// Sensitivity residuals: the tangent of F along (s_i, s_i', e_i).
int IdasSensResFn(int ns,
                  realtype t,
                  N_Vector y,
                  N_Vector yp,
                  N_Vector /*r*/,
                  N_Vector* yS,
                  N_Vector* ypS,
                  N_Vector* rS,
                  void* ud,
                  N_Vector,
                  N_Vector,
                  N_Vector) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    const double* ypv = N_VGetArrayPointer(yp);
    for (int i = 0; i < ns; ++i)
      run->form->SensResidual(t, yv, ypv, N_VGetArrayPointer(yS[i]),
                              N_VGetArrayPointer(ypS[i]), run->directions[i],
                              N_VGetArrayPointer(rS[i]));
  });
}

// Quadrature sensitivities: the tangent of the integrands along (s_i, e_i)
// (of the model's own only, when user_quad_sens_only).
int IdasQuadSensFn(int ns,
                   realtype t,
                   N_Vector y,
                   N_Vector /*yp*/,
                   N_Vector* yS,
                   N_Vector* /*ypS*/,
                   N_Vector /*rq*/,
                   N_Vector* rqS,
                   void* ud,
                   N_Vector,
                   N_Vector,
                   N_Vector) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    for (int i = 0; i < ns; ++i)
      if (run->user_quad_sens_only)
        run->form->UserQuadSens(t, yv, N_VGetArrayPointer(yS[i]),
                                run->directions[i], N_VGetArrayPointer(rqS[i]));
      else
        run->form->QuadSens(t, yv, N_VGetArrayPointer(yS[i]),
                            run->directions[i], N_VGetArrayPointer(rqS[i]));
  });
}

}  // namespace

// Staggered unless asked otherwise: the state converges first, then the
// sensitivities (linear in themselves) are solved with the same iteration
// matrix. The simultaneous corrector tests one norm over both, in which
// the sensitivities lag the state by an iteration; on the index-1 forms
// it stalled or failed at t = 0 on the pendulum, the four-bar and the
// chain at rtol = atol 1e-6 and 1e-9, where the staggered corrector ran
// all 32 cases (docs/sensitivities.md, "The corrector"). Without the
// sensitivities in the error test the staggered corrector lets them
// diverge (formulation/support.cpp refuses that pair when asked for), so
// auto then takes the simultaneous one.
bool Staggered(const SensitivityOptions& so) {
  return so.corrector == SensCorrector::kStaggered ||
         (so.corrector == SensCorrector::kAuto && so.error_control);
}

// IDAS's staggered corrector (IDAStep, IDAS 5.4) evaluates the residual at
// the converged state of each step into its work vector `delta`, for the
// sensitivity residuals (a difference quotient needs F(y) as its base
// point), before it solves for the sensitivities; IDAGetNumResEvals does
// not count it. Nothing reads that value when the sensitivity residuals
// are the exact tangents (IdasSensResFn ignores its `r`), the Jacobian is ours
// (IdasJacFn ignores its `r`; IDAS's difference-quotient Jacobian, which a
// matrix refresh of the sensitivity corrector would take around `delta`,
// would not) and the linear solver is direct (dense LU or KLU: they ignore
// the residual IDAS passes them). Then the call is skipped: on the
// sensitivity bench (ten carts, Baumgarte, n_p = 1) it cost 371
// residuals per run, 9.7 % of the plain run's instructions (callgrind).
bool SkipsConvergedResidual(const SimulationOptions& o, bool staggered) {
  return o.sensitivity.method == SensMethod::kForward && staggered &&
         !o.sensitivity.difference_quotient &&
         (o.jacobian == JacobianMethod::kAd ||
          o.linear_solver == LinearSolver::kKlu);
}

namespace {

// The state corrector's solve, which marks a converged state for IdasResFn.
int SolveMarkingConvergence(SUNNonlinearSolver nls,
                            N_Vector y0,
                            N_Vector ycor,
                            N_Vector w,
                            realtype tol,
                            booleantype call_setup,
                            void* mem) {
  const int flag =
      SUNNonlinSolSolve_Newton(nls, y0, ycor, w, tol, call_setup, mem);
  void* ud = nullptr;
  if (flag == SUN_NLS_SUCCESS && IDAGetUserData(mem, &ud) == IDA_SUCCESS &&
      ud != nullptr)
    static_cast<IdasRun*>(ud)->state_converged = true;
  return flag;
}

}  // namespace

std::unique_ptr<Segment> StartSegment(DaeForm* form,
                                      IdasRun* run,
                                      const SimulationOptions& options,
                                      SUNContext ctx,
                                      double t0,
                                      const Eigen::VectorXd& y0,
                                      const Eigen::VectorXd& yp0,
                                      const Eigen::VectorXd& quad0,
                                      const std::vector<int>& directions,
                                      bool skip_converged_residual) {
  const int num_roots = static_cast<int>(directions.size());
  auto s = std::make_unique<Segment>();
  const int n = form->size();
  s->y = MakeVector(n, ctx);
  s->yp = MakeVector(n, ctx);
  s->id = MakeVector(n, ctx);
  s->yq = MakeVector(form->quad_layout().size(), ctx);
  View(s->y.get()) = y0;
  View(s->yp.get()) = yp0;
  View(s->yq.get()) = quad0;
  // Differential q and v; the multipliers algebraic. Index 3: v too, for
  // the error test only (IDAS reads id for IDASetSuppressAlg and its
  // initial-condition calculation, which is not used). In an index-3 BDF
  // solution the velocities are accurate to one order less than the
  // positions, the multipliers two (Brenan, Campbell and Petzold 1996,
  // ch. 3; Hairer and Wanner 1996, VII.3): held to the positions'
  // tolerance, their local error estimate fails the test at every step
  // size (the pendulum at rtol 1e-8: IDA_TOO_MUCH_WORK at t = 0.21; the
  // four-bar: IDA_ERR_FAIL at t = 0).
  View(s->id.get())
      .head(form->layout().form == Formulation::kIndex3 ? form->layout().nq
                                                        : form->differential())
      .setOnes();
  s->mem = IDACreate(ctx);
  if (s->mem == nullptr) throw std::runtime_error("IDACreate failed");
  void* mem = s->mem;
  if (options.linear_solver == LinearSolver::kKlu) {
    sunindextype nnz = 0;
    for (const auto& col : form->Pattern()) nnz += col.size();
    s->A.reset(SUNSparseMatrix(n, n, nnz, CSC_MAT, ctx));
    s->LS.reset(SparseModule().NewKluLinearSolver(s->y.get(), s->A.get(), ctx));
  } else {
    s->A.reset(SUNDenseMatrix(n, n, ctx));
    s->LS.reset(MakeDenseLuSolver(s->y.get(), s->A.get(), ctx));
  }
  DAEDALUS_SUNDIALS_CHECK(IDAInit(mem, IdasResFn, t0, s->y.get(), s->yp.get()));
  DAEDALUS_SUNDIALS_CHECK(IDASetUserData(mem, run));
  DAEDALUS_SUNDIALS_CHECK(IDASetErrHandlerFn(mem, SundialsErrHandler,
                                             static_cast<CallbackGuard*>(run)));
  // Multipliers are excluded from the error test; their tolerance enters
  // only the Newton convergence test, where an index-2 multiplier is
  // resolved no better than round-off / h^2. --multiplier-atol loosens it.
  s->atol = MakeVector(n, ctx);
  {
    auto a = View(s->atol.get());
    a.setConstant(options.atol);
    if (options.multiplier_atol > 0.0)
      a.tail(n - form->differential()).setConstant(options.multiplier_atol);
  }
  run->rtol = options.rtol;
  run->atol = View(s->atol.get());
  run->nq = form->layout().nq;
  run->nv = form->layout().nv;
  // IDASVtolerances first: IDAS keeps its rtol for the difference
  // quotients of sensitivity residuals (--sens-dq), whose increment is
  // sqrt(rtol); IDAWFtolerances alone leaves it 0 and the quotients' noise
  // stalled the corrector (sensitivity_test.cpp, DifferenceQuotient*).
  DAEDALUS_SUNDIALS_CHECK(IDASVtolerances(mem, options.rtol, s->atol.get()));
  DAEDALUS_SUNDIALS_CHECK(IDAWFtolerances(mem, IdasEwtFn));
  DAEDALUS_SUNDIALS_CHECK(IDASetId(mem, s->id.get()));
  // Multipliers (and GGL multipliers) are algebraic: excluded from the
  // local error test, as in idasSlCrank_dns.
  DAEDALUS_SUNDIALS_CHECK(IDASetSuppressAlg(mem, SUNTRUE));
  DAEDALUS_SUNDIALS_CHECK(IDASetMaxNumSteps(mem, options.max_steps));
  // 0 keeps IDAS' default (0.33); see SimulationOptions::nonlin_conv_coef.
  if (options.nonlin_conv_coef > 0.0)
    DAEDALUS_SUNDIALS_CHECK(
        IDASetNonlinConvCoef(mem, options.nonlin_conv_coef));
  DAEDALUS_SUNDIALS_CHECK(IDASetLinearSolver(mem, s->LS.get(), s->A.get()));
  if (!form->algebraic_weights().empty()) {
    // Our own Newton solver (IDAS gives no handle on its default one), its
    // convergence test wrapped by ScaledConvTest.
    s->NLS.reset(SUNNonlinSol_Newton(s->y.get(), ctx));
    DAEDALUS_SUNDIALS_CHECK(IDASetNonlinearSolver(mem, s->NLS.get()));
    auto* content =
        static_cast<SUNNonlinearSolverContent_Newton>(s->NLS->content);
    s->test.mem = mem;
    s->test.inner = content->CTest;
    s->test.inner_data = content->ctest_data;
    s->test.nq = form->layout().nq;
    s->test.nv = form->layout().nv;
    s->test.first_algebraic = form->differential();
    s->test.index3 = form->layout().form == Formulation::kIndex3;
    s->test.weights = form->algebraic_weights();
    DAEDALUS_SUNDIALS_CHECK(
        SUNNonlinSolSetConvTestFn(s->NLS.get(), ScaledConvTest, &s->test));
  }
  run->skip_converged_residual = skip_converged_residual;
  run->state_converged = false;
  run->newton_delta = nullptr;
  if (skip_converged_residual) {
    // Our own state corrector (IDAS's default is the same Newton solver
    // with the same test), its solve marking convergence.
    if (!s->NLS) {
      s->NLS.reset(SUNNonlinSol_Newton(s->y.get(), ctx));
      DAEDALUS_SUNDIALS_CHECK(IDASetNonlinearSolver(mem, s->NLS.get()));
    }
    s->NLS->ops->solve = SolveMarkingConvergence;
    run->newton_delta =
        static_cast<SUNNonlinearSolverContent_Newton>(s->NLS->content)->delta;
  }
  if (options.jacobian == JacobianMethod::kAd ||
      options.linear_solver == LinearSolver::kKlu)
    DAEDALUS_SUNDIALS_CHECK(IDASetJacFn(mem, IdasJacFn));
  DAEDALUS_SUNDIALS_CHECK(IDAQuadInit(mem, IdasQuadFn, s->yq.get()));
  // A huge absolute tolerance takes a component out of the error test (its
  // value is still the integral of the solver's own multipliers).
  s->qtol = MakeVector(form->quad_layout().size(), ctx);
  {
    auto Q = View(s->qtol.get());
    for (Eigen::Index k = 0; k < Q.size(); ++k)
      Q[k] = form->QuadratureOutsideErrorTest(static_cast<int>(k))
                 ? 1e300
                 : options.atol;
  }
  DAEDALUS_SUNDIALS_CHECK(
      IDAQuadSVtolerances(mem, options.rtol, s->qtol.get()));
  DAEDALUS_SUNDIALS_CHECK(IDASetQuadErrCon(mem, SUNTRUE));
  if (num_roots > 0) {
    DAEDALUS_SUNDIALS_CHECK(IDARootInit(mem, num_roots, IdasRootFn));
    std::vector<int> dirs = directions;
    DAEDALUS_SUNDIALS_CHECK(IDASetRootDirection(mem, dirs.data()));
  }
  return s;
}

void StartSensitivities(Segment* seg,
                        IdasRun* run,
                        DaeForm* form,
                        const SimulationOptions& options,
                        SUNContext ctx,
                        int ns,
                        N_Vector* yS,
                        N_Vector* ypS,
                        N_Vector* qS,
                        bool has_quad_sens,
                        Eigen::VectorXd* pvals,
                        std::vector<int>* plist,
                        Eigen::VectorXd* pbar) {
  const SensitivityOptions& so = options.sensitivity;
  void* mem = seg->mem;
  // The corrector: Staggered().
  const bool staggered = Staggered(so);
  const int ism = staggered ? IDA_STAGGERED : IDA_SIMULTANEOUS;
  DAEDALUS_SUNDIALS_CHECK(IDASensInit(
      mem, ns, ism, so.difference_quotient ? nullptr : IdasSensResFn, yS, ypS));
  if (so.difference_quotient) {
    // SUNDIALS perturbs pvals in place; the residual reads them back.
    form->set_dq_parameters(pvals);
    DAEDALUS_SUNDIALS_CHECK(
        IDASetSensParams(mem, pvals->data(), pbar->data(), plist->data()));
  }
  DAEDALUS_SUNDIALS_CHECK(IDASensEEtolerances(mem));
  if (!form->algebraic_weights().empty()) {
    // Our own sensitivity corrector, its test wrapped like the state's:
    // over the state and the sensitivities (simultaneous), or over the
    // sensitivities (staggered).
    seg->NLSsim.reset(
        SUNNonlinSol_NewtonSens(staggered ? ns : ns + 1, seg->y.get(), ctx));
    if (staggered)
      DAEDALUS_SUNDIALS_CHECK(
          IDASetNonlinearSolverSensStg(mem, seg->NLSsim.get()));
    else
      DAEDALUS_SUNDIALS_CHECK(
          IDASetNonlinearSolverSensSim(mem, seg->NLSsim.get()));
    auto* content =
        static_cast<SUNNonlinearSolverContent_Newton>(seg->NLSsim->content);
    seg->sens_test = seg->test;
    seg->sens_test.inner = content->CTest;
    seg->sens_test.inner_data = content->ctest_data;
    DAEDALUS_SUNDIALS_CHECK(SUNNonlinSolSetConvTestFn(
        seg->NLSsim.get(),
        staggered ? ScaledSensStgConvTest : ScaledSensSimConvTest,
        &seg->sens_test));
  }
  DAEDALUS_SUNDIALS_CHECK(
      IDASetSensErrCon(mem, so.error_control ? SUNTRUE : SUNFALSE));
  // Exact even with --sens-dq: IDAS 6.4's internal difference quotient
  // for the quadratures' sensitivities evaluates the integrands into a
  // work vector of the state's length (IDAQuadSensRhs1InternalDQ, its
  // tmpQS), past its end when there are more quadratures than states.
  if (has_quad_sens) {
    DAEDALUS_SUNDIALS_CHECK(IDAQuadSensInit(mem, IdasQuadSensFn, qS));
    DAEDALUS_SUNDIALS_CHECK(IDAQuadSensEEtolerances(mem));
    DAEDALUS_SUNDIALS_CHECK(
        IDASetQuadSensErrCon(mem, so.error_control ? SUNTRUE : SUNFALSE));
  }
  (void)run;
}

}  // namespace daedalus::internal
