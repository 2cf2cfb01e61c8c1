// Adjoint sensitivities with IDAS (IDAAdjInit / IDASolveF / IDASolveB) for
// a functional G = int g dt + phi(T) of the index-1 DAE forms
// (unstabilized, Baumgarte) and GGL. Index 1: F(t, y, y', p) = 0 with y = (q,
// v, lambda),
//   F_q = q' - v,  F_v = M v' + h - B u - J' lambda,
//   F_l = J v' + b (+ the Baumgarte terms)        (docs/sensitivities.md).
//
// The adjoint DAE (Cao, Li, Petzold and Serban 2003, SIAM J. Sci. Comput.
// 24(3), eq. 2.7) is (l' F_y')' - l' F_y = -g_y. F_y' depends on q (M and
// J), so that written out it would need d/dt F_y', a second derivative of
// the model. Instead the backward unknowns carry nu = F_y'' l for the
// components whose F_y' column is not zero: F_y' has columns
// [e_q; 0; 0] for q' and [0; M; J] for v' and none for lambda', so
// nu_q = l_q and nu_v = M l_v + J' l_l =: w. With z = [l (n) | w (nv)]:
//   l_q' - (F_y' l)_q + g_q = 0        (nq, differential in l_q)
//   w'   - (F_y' l)_v + g_v = 0        (nv, differential in w)
//   w - (F_y'' l)_v        = 0        (nv, algebraic)
//   -(F_y' l)_lambda      = 0         (nc, algebraic: J l_v = 0)
// (g reads (q, v) only: g_lambda = 0). The algebraic pair is the KKT
// system [M J'; J 0] (l_v, l_l) = (w, 0): the augmented adjoint is index 1
// whenever the forward KKT matrix is regular. With s = dy/dp,
// F_y s + F_y' s' + F_p = 0, integrating l' (F_y s + F_y' s' + F_p) by
// parts gives
//   dG/dp = nu(t0)' s_d(t0) + int_t0^T (g_p - l' F_p) dt + phi_p(T),
// s_d = (s_q, s_v), when nu(T) = (phi_q, phi_v)(T): the terminal values of
// the differential adjoint unknowns are free (any s(T) is admissible), and
// the algebraic ones follow from the KKT pair above (solved here, exactly,
// from the same Jacobians: no IDACalcICB iteration is needed).
//
// GGL (index 2) has the same augmented form; its algebraic rows are the
// adjoint constraints G l_q = 0, J l_v = 0, and its terminal values are
// restricted to them (IdasAdjointRun::GglTerminal).
//
// F_y, F_y' and F_p are exact: DaeForm's Jacobian dF/dy + cj dF/dy'
// (compiled programs, or tangents) at cj = 0 and 1, and F_p from one
// compiled program per state (formulation/sens_programs.hpp; without one,
// its sensitivity residual along (0, 0, e_i) per parameter).
#include <idas/idas.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_newton.h>

#include <Eigen/LU>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "contact/contact_stage.hpp"
#include "eval/chart.hpp"
#include "eval/function_derivatives.hpp"
#include "events/event_jump.hpp"
#include "events/functional_target.hpp"
#include "formulation/dae_form.hpp"
#include "formulation/sens_programs.hpp"
#include "integrate/adapters.hpp"
#include "integrate/adjoint_idas_run.hpp"
#include "integrate/common.hpp"
#include "integrate/idas_newton.hpp"
#include "integrate/sundials_util.hpp"
#include "sensitivity/forward.hpp"

namespace daedalus::internal {

namespace {

int Res(realtype t, N_Vector y, N_Vector yp, N_Vector r, void* ud) {
  auto* run = static_cast<IdasAdjointRun*>(ud);
  return run->Trap([&] {
    run->form.Residual(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                       N_VGetArrayPointer(r));
  });
}

int Jac(realtype t,
        realtype cj,
        N_Vector y,
        N_Vector yp,
        N_Vector /*r*/,
        SUNMatrix J,
        void* ud,
        N_Vector,
        N_Vector,
        N_Vector) {
  auto* run = static_cast<IdasAdjointRun*>(ud);
  return run->Trap([&] {
    run->form.DenseJacobian(t, cj, N_VGetArrayPointer(y),
                            N_VGetArrayPointer(yp), SM_DATA_D(J));
  });
}

int Quad(realtype t, N_Vector y, N_Vector /*yp*/, N_Vector qd, void* ud) {
  auto* run = static_cast<IdasAdjointRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    run->mech->SetState(t, yv, yv + run->nq);
    const double g = run->fun->running.f0(run->mech->point());
    if (!std::isfinite(g))
      throw std::runtime_error("functional '" + run->fun->name +
                               "' returned a non-finite value at " +
                               run->mech->DescribeState());
    View(qd)[0] = g;
  });
}

int ResB(realtype t,
         N_Vector y,
         N_Vector yp,
         N_Vector z,
         N_Vector zp,
         N_Vector rr,
         void* ud) {
  auto* run = static_cast<IdasAdjointRun*>(ud);
  return run->Trap([&] {
    run->ResidualB(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                   N_VGetArrayPointer(z), N_VGetArrayPointer(zp),
                   N_VGetArrayPointer(rr));
  });
}

int JacB(realtype t,
         realtype cj,
         N_Vector y,
         N_Vector yp,
         N_Vector /*z*/,
         N_Vector /*zp*/,
         N_Vector /*rr*/,
         SUNMatrix JB,
         void* ud,
         N_Vector,
         N_Vector,
         N_Vector) {
  auto* run = static_cast<IdasAdjointRun*>(ud);
  return run->Trap([&] {
    run->JacobianB(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), JB);
  });
}

int QuadB(realtype t,
          N_Vector y,
          N_Vector yp,
          N_Vector z,
          N_Vector /*zp*/,
          N_Vector qd,
          void* ud) {
  auto* run = static_cast<IdasAdjointRun*>(ud);
  return run->Trap([&] {
    run->QuadratureB(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                     N_VGetArrayPointer(z), N_VGetArrayPointer(qd));
  });
}

// The model's events, each shifted by its re-arming offset
// (formulation/roots.hpp, Rearm); the adjoint needs no feasibility roots.
int RootF(realtype t, N_Vector y, N_Vector /*yp*/, realtype* gout, void* ud) {
  auto* run = static_cast<IdasAdjointRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    StatePoint x;
    x.t = t;
    x.q = Eigen::Map<const Eigen::VectorXd>(yv, run->nq);
    x.v = Eigen::Map<const Eigen::VectorXd>(yv + run->nq, run->nv);
    x.p = run->mech->parameters();
    const ModelData& md = run->mech->model().data();
    for (size_t k = 0; k < md.events.size(); ++k)
      gout[k] = ValueAt(md, md.events[k].fn, x) - run->offsets[k];
    if (run->modes && !run->modes->NeedsMultipliers()) {
      // No contact closed: the witnesses read (t, q, v, p) alone
      // (DaeForm::Roots).
      run->mech->SetState(t, yv, yv + run->nq);
      run->modes->EvaluateRoots(*run->mech, Eigen::VectorXd(),
                                gout + md.events.size());
    } else if (run->modes) {
      const KktResult& r = run->form.SampleState(t, yv);
      run->modes->EvaluateRoots(*run->mech, r.lambda, gout + md.events.size());
    }
  });
}

// One forward segment of the IDAS adjoint (adjoint_cvodes.cpp's
// AdjSegment): its IDAS memory with the checkpoints, its end state, the
// reset that ends it, and its backward problem's vectors.
struct IdasAdjSegment {
  ~IdasAdjSegment() {
    if (mem) IDAFree(&mem);
  }
  void* mem = nullptr;
  double t0 = 0.0, t1 = 0.0;
  VectorPtr y, yp, id, atol, yq;
  MatrixPtr A, AB;
  LinSolPtr LS, LSB;
  std::unique_ptr<std::remove_pointer_t<SUNNonlinearSolver>, NlsFree> nls;
  ScaledNewtonTest test;
  VectorPtr z, zp, idB, qB;
  Eigen::VectorXd yT, ypT;     // (y, y') at t1
  double running = 0.0;        // int_t0^t1 L dt
  std::vector<int> open_rows;  // the contacts' mode during it
  // The reset or contact switch at t1 (null: none, or a restart that
  // switched nothing).
  std::unique_ptr<EventJump> jump;
  double running_minus = 0.0, running_plus = 0.0;
};

// `ggl_newton`: a GGL run whose multipliers are held to --atol in the
// Newton test, where the backward pass's index-2 adjoint multipliers stall
// the corrector at atol 1e-11 or below (golfer_3d at rtol 1e-10: IDA_CONV_FAIL
// at atol 1e-12, 1e-11 and 1e-10, the gradient within 5e-7 of central
// differences with --multiplier-atol 1).
std::string IdasFlagText(int flag,
                         const char* call,
                         double t,
                         const CallbackGuard& g,
                         bool ggl_newton = false) {
  std::unique_ptr<char, decltype(&std::free)> name(IDAGetReturnFlagName(flag),
                                                   &std::free);
  std::ostringstream os;
  os << "adjoint " << call << " failed with " << name.get() << " (flag " << flag
     << ") at t = " << t << g.Detail() << "; hint: "
     << (ggl_newton && flag == IDA_CONV_FAIL
             ? "the GGL adjoint's index-2 multipliers stall the backward "
               "corrector under a tight Newton test: pass --multiplier-atol 1 "
               "(they are outside the error test), or loosen --atol"
             : "loosen --rtol/--atol or check the functional");
  return os.str();
}

// The support matrix refuses the other forms before a run (support.cpp);
// this guards direct calls.
std::string FormRefusal(Formulation f) {
  if (f == Formulation::kUnstabilized || f == Formulation::kBaumgarte ||
      f == Formulation::kGgl)
    return "";
  return std::string("the IDAS adjoint serves the index-1 forms only ") +
         "(--formulation unstabilized or baumgarte with --integrator idas; " +
         "--formulation " + ToString(f) +
         " is an index-2 or index-3 DAE whose adjoint needs terminal values "
         "restricted to the adjoint constraints (Cao, Li, Petzold and Serban "
         "2003), not built yet); use --formulation baumgarte or "
         "unstabilized, or forward sensitivities with --formulation " +
         ToString(f);
}

}  // namespace

SensitivityResult AdjointGradientIdas(Mechanics* mech,
                                      const InitialState& x0,
                                      const SimulationOptions& options,
                                      std::string* error) {
  SensitivityResult out;
  out.method = SensMethod::kAdjoint;
  const Model& model = mech->model();
  const SensitivityOptions& so = options.sensitivity;
  auto fail = [&](const std::string& m) {
    *error = m;
    return out;
  };
  {
    const std::string why = FormRefusal(options.formulation);
    if (!why.empty()) return fail(why);
  }
  std::unique_ptr<IdasAdjointRun> owned;
  try {
    owned = std::make_unique<IdasAdjointRun>(mech, options);
  } catch (const std::exception& e) {
    return fail(std::string("adjoint: ") + e.what());
  }
  IdasAdjointRun& run = *owned;
  run.stop = options.stop;
  FunctionalTarget target;
  try {
    if (so.functional.empty()) {
      std::string valid;
      for (const auto& f : model.data().functionals)
        valid += (valid.empty() ? "" : ", ") + f.name;
      return fail("adjoint sensitivities need --functional NAME; model '" +
                  model.name() +
                  "' declares: " + (valid.empty() ? "(none)" : valid));
    }
    target = ParseFunctionalTarget(model, so.functional);
    run.fun = &model.data().functionals[static_cast<size_t>(target.functional)];
    run.sens = ResolveSensParameters(model, so.parameters);
    run.running_gradient =
        FunctionalGradient::Make(mech->compiled(), model, run.fun->running);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  run.nq = model.nq();
  run.nv = model.nv();
  run.nc = run.form.layout().nc;
  run.np = model.num_parameters();
  run.n = run.form.size();
  run.offsets.assign(model.data().events.size(), 0.0);
  for (const auto& p : run.sens) out.parameters.push_back(p.name);
  const int ns = static_cast<int>(run.sens.size());
  const int n = run.n, nd = run.nd(), nB = run.nB();

  // Consistent start (y0, y0') and the differential part of s(t0); the
  // contacts' mode first (as the plain run, idas.cpp).
  SimulationSummary scratch;
  Eigen::VectorXd q = x0.q, v = x0.v;
  std::unique_ptr<ModeSwitcher> modes;
  try {
    modes = MakeContactStage(mech, options, &scratch);
    if (modes) modes->Start(options.t0, &q, &v);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  run.modes = modes.get();
  if (!MakeConsistent(mech, options, &q, &v, &scratch))
    return fail(scratch.error);
  Eigen::VectorXd y0(n), yp0(n);
  Eigen::MatrixXd s0(nd, ns);
  try {
    KktResult r0;
    run.form.ConsistentStart(options.t0, q, v, y0, yp0, &r0);
    for (int i = 0; i < ns; ++i) {
      const InitialSensitivity is = mech->LinearizeStart(
          r0.vdot, r0.lambda, run.sens[i], so.initial_tangent);
      s0.col(i) << is.dq, is.dv;
    }
  } catch (const std::exception& e) {
    return fail(std::string("adjoint initialization: ") + e.what());
  }

  auto ctx = MakeContext();
  const bool running = static_cast<bool>(run.fun->running);
  const ModelData& md = model.data();
  const int nev = static_cast<int>(md.events.size());
  std::vector<int> directions(static_cast<size_t>(nev), 0);
  for (int k = 0; k < nev; ++k) {
    const EventDirection d =
        md.events[static_cast<size_t>(k)].options.direction;
    directions[static_cast<size_t>(k)] = d == EventDirection::kRising    ? 1
                                         : d == EventDirection::kFalling ? -1
                                                                         : 0;
  }
  std::vector<int> occurrences(static_cast<size_t>(nev), 0);
  const int nmode = modes ? modes->num_roots() : 0;
  if (modes) {
    const std::vector<int> md_dirs = modes->RootDirections();
    directions.insert(directions.end(), md_dirs.begin(), md_dirs.end());
  }
  std::vector<int> found(static_cast<size_t>(nev + nmode), 0);
  std::vector<Eigen::VectorXd> dirs;
  for (const auto& sp : run.sens) dirs.push_back(ParameterDirection(model, sp));
  // The multipliers' Newton tolerance: --atol unless --multiplier-atol.
  // The forward pass's Newton test weighs the algebraic unknowns by the
  // step as the plain run does (ScaledConvTest below); with IDAS's own
  // test and the multipliers at --atol, GGL failed at t = 0 (the
  // support-matrix chain at atol 1e-10, the slider-crank at 1e-11), and
  // this pass used to fall back to a multiplier tolerance of 1.
  const double mult_atol = options.multiplier_atol;
  // (q, v) at t and their rates (q' = N(q) v, v' from the KKT system), as
  // the plain IDAS run takes them at its events (integrate/idas.cpp).
  auto flow = [&](double t, const double* yy) {
    FlowPoint f;
    f.t = t;
    f.y = Eigen::Map<const Eigen::VectorXd>(yy, nd);
    const KktResult& r = run.form.SampleState(t, yy);
    f.ydot.resize(nd);
    CoordinateRates<double>(md, f.y.head(run.nq), f.y.tail(run.nv),
                            f.ydot.head(run.nq));
    f.ydot.tail(run.nv) = r.vdot;
    return f;
  };
  auto running_at = [&](const FlowPoint& f) {
    if (!running) return 0.0;
    StatePoint x;
    x.t = f.t;
    x.q = f.y.head(run.nq);
    x.v = f.y.tail(run.nv);
    x.p = mech->parameters();
    return ValueAt(md, run.fun->running, x);
  };

  std::vector<std::unique_ptr<IdasAdjSegment>> segs;
  std::unique_ptr<EventJump> end_event;
  FlowPoint end;
  try {
    // ---- forward pass: one checkpointed IDAS run per segment, a new
    // segment after each reset (integrate/adjoint_cvodes.cpp).
    double t = options.t0;
    Eigen::VectorXd ystart = y0, ypstart = yp0;
    bool done = false;
    while (!done) {
      auto seg = std::make_unique<IdasAdjSegment>();
      seg->t0 = t;
      seg->open_rows = mech->open_rows();
      seg->y = MakeVector(n, ctx.get());
      seg->yp = MakeVector(n, ctx.get());
      seg->id = MakeVector(n, ctx.get());
      seg->atol = MakeVector(n, ctx.get());
      View(seg->y.get()) = ystart;
      View(seg->yp.get()) = ypstart;
      View(seg->id.get()).head(nd).setOnes();
      View(seg->atol.get()).setConstant(options.atol);
      if (mult_atol > 0.0)
        View(seg->atol.get()).tail(n - nd).setConstant(mult_atol);
      seg->yq = MakeVector(1, ctx.get());
      seg->A.reset(SUNDenseMatrix(n, n, ctx.get()));
      seg->LS.reset(MakeDenseLuSolver(seg->y.get(), seg->A.get(), ctx.get()));
      seg->mem = IDACreate(ctx.get());
      if (seg->mem == nullptr) return fail("IDACreate failed");
      void* mem = seg->mem;
      DAEDALUS_SUNDIALS_CHECK(
          IDAInit(mem, Res, t, seg->y.get(), seg->yp.get()));
      DAEDALUS_SUNDIALS_CHECK(IDASetUserData(mem, &run));
      DAEDALUS_SUNDIALS_CHECK(IDASetErrHandlerFn(
          mem, SundialsErrHandler, static_cast<CallbackGuard*>(&run)));
      DAEDALUS_SUNDIALS_CHECK(
          IDASVtolerances(mem, options.rtol, seg->atol.get()));
      DAEDALUS_SUNDIALS_CHECK(IDASetId(mem, seg->id.get()));
      // The multipliers out of the local error test, as in the plain run
      // (integrate/idas.cpp).
      DAEDALUS_SUNDIALS_CHECK(IDASetSuppressAlg(mem, SUNTRUE));
      DAEDALUS_SUNDIALS_CHECK(IDASetMaxNumSteps(mem, options.max_steps));
      // The forward phase only: IDAS has no setter for the backward one.
      if (options.nonlin_conv_coef > 0.0)
        DAEDALUS_SUNDIALS_CHECK(
            IDASetNonlinConvCoef(mem, options.nonlin_conv_coef));
      DAEDALUS_SUNDIALS_CHECK(
          IDASetLinearSolver(mem, seg->LS.get(), seg->A.get()));
      DAEDALUS_SUNDIALS_CHECK(IDASetJacFn(mem, Jac));
      if (!run.form.algebraic_weights().empty()) {
        // The plain run's Newton solver and scaled test (idas_segment.cpp).
        seg->nls.reset(SUNNonlinSol_Newton(seg->y.get(), ctx.get()));
        DAEDALUS_SUNDIALS_CHECK(IDASetNonlinearSolver(mem, seg->nls.get()));
        auto* content =
            static_cast<SUNNonlinearSolverContent_Newton>(seg->nls->content);
        seg->test.mem = mem;
        seg->test.inner = content->CTest;
        seg->test.inner_data = content->ctest_data;
        seg->test.nq = run.form.layout().nq;
        seg->test.nv = run.form.layout().nv;
        seg->test.first_algebraic = run.form.differential();
        seg->test.index3 = run.form.layout().form == Formulation::kIndex3;
        seg->test.weights = run.form.algebraic_weights();
        DAEDALUS_SUNDIALS_CHECK(SUNNonlinSolSetConvTestFn(
            seg->nls.get(), ScaledConvTest, &seg->test));
      }
      if (running) {
        DAEDALUS_SUNDIALS_CHECK(IDAQuadInit(mem, Quad, seg->yq.get()));
        DAEDALUS_SUNDIALS_CHECK(
            IDAQuadSStolerances(mem, options.rtol, options.atol));
        DAEDALUS_SUNDIALS_CHECK(IDASetQuadErrCon(mem, SUNTRUE));
      }
      if (nev + nmode > 0) {
        DAEDALUS_SUNDIALS_CHECK(IDARootInit(mem, nev + nmode, RootF));
        DAEDALUS_SUNDIALS_CHECK(IDASetRootDirection(mem, directions.data()));
      }
      DAEDALUS_SUNDIALS_CHECK(
          IDAAdjInit(mem, std::max(1L, so.checkpoint_steps), IDA_HERMITE));
      int ncheck = 0;
      for (;;) {
        run.Reset();
        const int flag = IDASolveF(mem, options.t_end, &t, seg->y.get(),
                                   seg->yp.get(), IDA_NORMAL, &ncheck);
        if (flag < 0)
          return fail(IdasFlagText(flag, "forward pass (IDASolveF)", t, run));
        if (flag != IDA_ROOT_RETURN) {
          done = true;
          break;
        }
        DAEDALUS_SUNDIALS_CHECK(IDAGetRootInfo(mem, found.data()));
        int reset = -1;
        bool stop = false, at_target = false;
        for (int k = 0; k < nev; ++k) {
          if (found[static_cast<size_t>(k)] == 0) continue;
          const EventDecl& ev = md.events[static_cast<size_t>(k)];
          ++occurrences[static_cast<size_t>(k)];
          if (target.event == k &&
              occurrences[static_cast<size_t>(k)] == target.occurrence)
            at_target = true;
          if (ev.options.stop) stop = true;
          if (ev.reset) reset = k;
        }
        const FlowPoint minus = flow(t, ConstView(seg->y.get()).data());
        const bool switched =
            modes && modes->Fired(found.data() + static_cast<size_t>(nev));
        if (switched && (stop || at_target || reset >= 0))
          return fail(
              "a model event and a contact switch at the same "
              "instant t = " +
              std::to_string(t) +
              ": the adjoint does not order them; separate them");
        if (switched) {
          // A contact switch (or a restart that switches nothing): this
          // segment ends; the next starts in the new mode
          // (adjoint_cvodes.cpp).
          const Eigen::VectorXd yy = ConstView(seg->y.get()).head(nd);
          const ModeRestart r =
              modes->Switch(t, yy.head(run.nq), yy.tail(run.nv),
                            found.data() + static_cast<size_t>(nev));
          if (!r.restart) continue;
          KktResult r1;
          run.form.ConsistentStart(t, r.q, r.v, ystart, ypstart, &r1);
          FlowPoint plus;
          plus.t = t;
          plus.y.resize(nd);
          plus.y << r.q, r.v;
          plus.ydot.resize(nd);
          plus.ydot << ypstart.head(run.nq), r1.vdot;
          seg->jump = modes->Jump(minus, plus);
          seg->running_minus = running_at(minus);
          seg->running_plus = running_at(plus);
          break;
        }
        if (stop || at_target) {
          int k = target.at_event() && at_target ? target.event : -1;
          for (int j = 0; k < 0 && j < nev; ++j)
            if (found[static_cast<size_t>(j)] != 0 &&
                md.events[static_cast<size_t>(j)].options.stop)
              k = j;
          end_event =
              std::make_unique<EventJump>(model, k, mech->parameters(), minus);
          if (end_event->grazing())
            return fail(GrazingMessage(model, *end_event));
          end = minus;
          done = true;
          break;
        }
        if (reset < 0) continue;
        seg->jump = std::make_unique<EventJump>(model, reset,
                                                mech->parameters(), minus);
        if (seg->jump->grazing())
          return fail(GrazingMessage(model, *seg->jump));
        Eigen::VectorXd qn = seg->jump->reset_value().head(run.nq);
        Eigen::VectorXd vn = seg->jump->reset_value().tail(run.nv);
        EventRecord unused;
        MakeRestartConsistent(mech, options, md.events[reset].name, t, &qn, &vn,
                              &unused);
        KktResult r1;
        run.form.ConsistentStart(t, qn, vn, ystart, ypstart, &r1);
        FlowPoint plus;
        plus.t = t;
        plus.y.resize(nd);
        plus.y << qn, vn;
        plus.ydot.resize(nd);
        plus.ydot << ypstart.head(run.nq), r1.vdot;
        seg->jump->Saltation(mech, r1, plus);
        seg->running_minus = running_at(minus);
        seg->running_plus = running_at(plus);
        StatePoint xp;
        xp.t = t;
        xp.q = qn;
        xp.v = vn;
        xp.p = mech->parameters();
        std::fill(run.offsets.begin(), run.offsets.end(), 0.0);
        run.offsets[static_cast<size_t>(reset)] =
            ValueAt(md, md.events[static_cast<size_t>(reset)].fn, xp);
        break;
      }
      seg->t1 = t;
      // Root finding off for the backward pass: its second forward pass
      // (the recomputation of each checkpoint interval) would otherwise
      // compare the root functions with their values after the last root
      // and find a root at the start of every interval, storing one data
      // point twice and corrupting the interpolation (IDAS 6.4.1: gradients
      // wrong by 3 % at 100 steps between checkpoints, right with one
      // checkpoint).
      if (nev + nmode > 0)
        DAEDALUS_SUNDIALS_CHECK(IDARootInit(mem, 0, nullptr));
      seg->yT = ConstView(seg->y.get());
      seg->ypT = ConstView(seg->yp.get());
      if (running) {
        double tq = t;
        DAEDALUS_SUNDIALS_CHECK(IDAGetQuad(mem, &tq, seg->yq.get()));
        seg->running = ConstView(seg->yq.get())[0];
      }
      if (done && !end_event) end = flow(t, seg->yT.data());
      segs.push_back(std::move(seg));
    }
    if (target.at_event() && !end_event)
      return fail(
          "functional '" + so.functional + "': event '" +
          md.events[static_cast<size_t>(target.event)].name + "' occurred " +
          std::to_string(occurrences[static_cast<size_t>(target.event)]) +
          " time(s) before the run ended at t = " + std::to_string(end.t) +
          ", not " + std::to_string(target.occurrence) +
          "; the functional has no value and no gradient");

    // Terminal condition (with the event terms when the functional ends
    // at an event) and the value.
    const AdjointTerminal term =
        TerminalCondition(model, target.functional, mech->parameters(), end,
                          end_event.get(), dirs);
    double G = term.value;
    for (const auto& sg : segs) G += sg->running;
    out.functional_value = G;
    Eigen::VectorXd grad = term.direct;
    Eigen::VectorXd nu = term.mu;

    // ---- backward pass, segment by segment: at each segment's end the
    // adjoint's terminal values from the target nu (IndexOneTerminal,
    // GglTerminal), across each reset the transposed saltation matrices.
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    for (size_t j = segs.size(); j-- > 0;) {
      IdasAdjSegment& sg = *segs[j];
      void* mem = sg.mem;
      if (sg.jump) {
        Eigen::VectorXd nu_minus, share;
        AdjointJump(*sg.jump, sg.running_minus, sg.running_plus, nu, dirs,
                    &nu_minus, &share);
        grad += share;
        nu = nu_minus;
      }
      const double T = sg.t1;
      const double* yT = sg.yT.data();
      const double* ypT = sg.ypT.data();
      // The segment's contact mode, for its backward residual and IDAS's
      // recomputation of its forward steps.
      if (modes) {
        mech->SetOpenRows(sg.open_rows);
        run.jy.resize(0);
      }
      run.Jacobians(T, yT, ypT);
      Eigen::VectorXd lT = Eigen::VectorXd::Zero(n), wT;
      // GGL: the terminal correction of the gradient (see GglTerminal).
      Eigen::VectorXd ab;
      std::string why;
      if (options.formulation == Formulation::kGgl)
        why = run.GglTerminal(nu, &lT, &wT, &ab);
      else
        why = run.IndexOneTerminal(nu, &lT, &wT);
      if (!why.empty()) {
        mech->SetState(T, yT, yT + run.nq);
        return fail("adjoint terminal values at t = " + std::to_string(T) +
                    " (" + mech->DescribeState() + "): " + why);
      }
      sg.z = MakeVector(nB, ctx.get());
      sg.zp = MakeVector(nB, ctx.get());
      sg.idB = MakeVector(nB, ctx.get());
      sg.qB = MakeVector(std::max(ns, 1), ctx.get());
      sg.AB.reset(SUNDenseMatrix(nB, nB, ctx.get()));
      sg.LSB.reset(MakeDenseLuSolver(sg.z.get(), sg.AB.get(), ctx.get()));
      View(sg.z.get()) << lT, wT;
      View(sg.zp.get()).setZero();
      {
        // z'(T) from the differential rows with z'(T) = 0 there.
        Eigen::VectorXd r(nB);
        run.ResidualB(T, yT, ypT, N_VGetArrayPointer(sg.z.get()),
                      N_VGetArrayPointer(sg.zp.get()), r.data());
        View(sg.zp.get()).head(run.nq) = -r.head(run.nq);
        View(sg.zp.get()).segment(n, run.nv) = -r.segment(run.nq, run.nv);
      }
      View(sg.idB.get()).setZero();
      View(sg.idB.get()).head(run.nq).setOnes();
      View(sg.idB.get()).tail(run.nv).setOnes();
      int which = 0;
      View(sg.qB.get()).setZero();
      DAEDALUS_SUNDIALS_CHECK(IDACreateB(mem, &which));
      DAEDALUS_SUNDIALS_CHECK(
          IDAInitB(mem, which, ResB, T, sg.z.get(), sg.zp.get()));
      DAEDALUS_SUNDIALS_CHECK(
          IDASetErrHandlerFn(IDAGetAdjIDABmem(mem, which), SundialsErrHandler,
                             static_cast<CallbackGuard*>(&run)));
      {
        // --multiplier-atol loosens the Newton test of the algebraic
        // adjoint unknowns as it does the multipliers' in the forward run.
        auto atolB = MakeVector(nB, ctx.get());
        View(atolB.get()).setConstant(options.atol);
        if (mult_atol > 0.0)
          View(atolB.get()).segment(run.nq, n - run.nq).setConstant(mult_atol);
        DAEDALUS_SUNDIALS_CHECK(
            IDASVtolerancesB(mem, which, options.rtol, atolB.get()));
      }
      DAEDALUS_SUNDIALS_CHECK(IDASetUserDataB(mem, which, &run));
      DAEDALUS_SUNDIALS_CHECK(IDASetIdB(mem, which, sg.idB.get()));
      // The algebraic adjoint unknowns (l_v, l_l) out of the local error
      // test, as the multipliers are in the forward run. They are solved
      // from the Hermite-interpolated forward state, whose y' carries the
      // interpolation's error: held to rtol they cut the steps
      // (slider-crank, 100 s at rtol 1e-8, Baumgarte: 78384 backward steps
      // and 113719 Jacobians with them in the test, 6082 and 368 without,
      // the gradient the same to 2e-5 relative). They enter the gradient
      // through the backward quadrature, which stays in the error test.
      DAEDALUS_SUNDIALS_CHECK(IDASetSuppressAlgB(mem, which, SUNTRUE));
      DAEDALUS_SUNDIALS_CHECK(
          IDASetMaxNumStepsB(mem, which, options.max_steps));
      DAEDALUS_SUNDIALS_CHECK(
          IDASetLinearSolverB(mem, which, sg.LSB.get(), sg.AB.get()));
      DAEDALUS_SUNDIALS_CHECK(IDASetJacFnB(mem, which, JacB));
      DAEDALUS_SUNDIALS_CHECK(IDAQuadInitB(mem, which, QuadB, sg.qB.get()));
      DAEDALUS_SUNDIALS_CHECK(
          IDAQuadSStolerancesB(mem, which, options.rtol, options.atol));
      DAEDALUS_SUNDIALS_CHECK(IDASetQuadErrConB(mem, which, SUNTRUE));
      run.Reset();
      if (T > sg.t0) {
        const int flag = IDASolveB(mem, sg.t0, IDA_NORMAL);
        if (flag < 0)
          return fail(IdasFlagText(flag, "backward pass (IDASolveB)", sg.t0,
                                   run,
                                   options.formulation == Formulation::kGgl &&
                                       !(options.multiplier_atol > 0.0)));
        double tb = sg.t0;
        DAEDALUS_SUNDIALS_CHECK(
            IDAGetB(mem, which, &tb, sg.z.get(), sg.zp.get()));
        DAEDALUS_SUNDIALS_CHECK(IDAGetQuadB(mem, which, &tb, sg.qB.get()));
      }
      const auto zb = ConstView(sg.z.get());
      nu.resize(nd);
      nu << zb.head(run.nq), zb.tail(run.nv);
      const auto xi = ConstView(sg.qB.get());
      Eigen::VectorXd FpT(n);
      for (int i = 0; i < ns; ++i) {
        if (run.sens[i].kind != SensParameter::Kind::kModel) continue;
        grad[i] += xi[i];
        if (ab.size() > 0) {
          Eigen::VectorXd dp = Eigen::VectorXd::Zero(run.np);
          dp[run.sens[i].index] = 1.0;
          run.form.SensResidual(T, yT, ypT, zero.data(), zero.data(), dp,
                                FpT.data());
          grad[i] += ab.dot(FpT.tail(n - nd));
        }
      }
    }
    for (int i = 0; i < ns; ++i) grad[i] += nu.dot(s0.col(i));
    out.functionals.emplace_back(run.fun->name, grad);
  } catch (const std::exception& e) {
    return fail(std::string("adjoint: ") + e.what() + run.Detail());
  }
  return out;
}

}  // namespace daedalus::internal
