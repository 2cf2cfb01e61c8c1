// Adjoint sensitivities with CVODES (CVodeAdjInit / CVodeF / CVodeB)
// for a functional G = int g dt + phi(T) of the ODE forms (unstabilized or
// Baumgarte): y = (q, v), y' = f(t, y, p) = (v, vdot(q, v, p)) with vdot
// from the KKT system (docs/sensitivities.md).
//
// With s = dy/dp (s' = f_y s + f_p, s(t0) = dy0/dp) and the adjoint
//   mu' = -f_y' mu - g_y',   mu(T) = phi_y(T)',
// d/dt (mu' s) = -g_y s + mu' f_p, so
//   dG/dp = mu(t0)' s(t0) + int_t0^T (g_p + mu' f_p) dt + phi_p(T).
// f_y and f_p are exact. On the compiled path one program gives every entry
// of dR/d(q, v) and K of the KKT system R = 0 at the state's solution
// (formulation/sens_programs.hpp), f_y = -K^-1 dR/d(q, v) in the
// acceleration rows, kept per state for the backward right-hand side
// (CVODES's Newton iterations evaluate it several times at one state). The
// quadrature needs f_p only in the product mu_v' a_p = -w' dR/dp, w =
// K^-T [mu_v; 0]: one transposed solve and one run of a program made by
// reverse mode on R (KktVjp), whose cost does not grow with the number of
// parameters, where -K^-1 dR/dp would form every column. Otherwise each
// column is one tangent-workspace evaluation followed by a solve with the
// KKT matrix factored once per state, skipped off a parameter's declared
// time support (ModelBuilder::ParameterTimeSupport: the controls' spline
// coefficients).
#include <cvodes/cvodes.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "contact/contact_stage.hpp"
#include "eval/chart.hpp"
#include "eval/function_derivatives.hpp"
#include "events/event_jump.hpp"
#include "events/functional_target.hpp"
#include "formulation/ode_form.hpp"
#include "formulation/sens_programs.hpp"
#include "integrate/adapters.hpp"
#include "integrate/adjoint_quadrature.hpp"
#include "integrate/common.hpp"
#include "integrate/cvodes_flags.hpp"
#include "integrate/sundials_util.hpp"
#include "sensitivity/forward.hpp"

namespace daedalus::internal {

namespace {

struct AdjointRun : CallbackGuard {
  AdjointRun(Mechanics* m, const SimulationOptions& o)
      : mech(m),
        form(m, o),
        lin(KktLinearization::Make(
            m->compiled(), m->model(), m->rows(), o, o.formulation)),
        vjp(lin && AdjointShortcutsEnabled()
                ? KktVjp::Make(m->compiled(),
                               m->model(),
                               m->rows(),
                               o,
                               o.formulation,
                               nullptr,
                               /*params_only=*/true)
                : nullptr) {}
  Mechanics* mech;
  OdeForm form;
  // Compiled derivatives (null: the tangent path).
  std::unique_ptr<KktLinearization> lin;
  std::unique_ptr<KktVjp> vjp;
  std::unique_ptr<FunctionalGradient> running_gradient;
  const ModelData::FunctionalDecl* fun = nullptr;
  std::vector<SensParameter> sens;
  int nq = 0, nv = 0, np = 0;
  std::vector<double> offsets;  // per event (AdjRoot)
  // The contacts' mode switcher (src/contact/), or null; its witnesses
  // follow the events' root functions (AdjRoot).
  ModeSwitcher* modes = nullptr;

  int n() const { return nq + nv; }

  // f_y (n x n), exact (OdeForm::StateJacobian). CVODES evaluates the
  // backward right-hand side, its Jacobian and the backward quadrature at
  // the same states: f_y is kept for the last state, with the mechanics
  // still evaluated there.
  Eigen::MatrixXd fy;
  // f_p (nv rows: the accelerations'; q' = v does not read p), when the
  // compiled path formed it with f_y (fp_valid: not when it has the
  // products, Products()).
  Eigen::MatrixXd fp;
  bool fp_valid = false;
  double fy_t = 0.0;
  Eigen::VectorXd fy_y;
  bool SameState(double t, const double* y) const {
    if (fy_y.size() != n() || t != fy_t || mech->t() != t) return false;
    const auto Y = Eigen::Map<const Eigen::VectorXd>(y, n());
    return Y == fy_y && mech->q() == Y.head(nq) && mech->v() == Y.tail(nv);
  }
  // `need_fp`: f_p too on the compiled path (without the products it is
  // always formed; the tangent path forms none and prepares the tangents).
  bool fy_compiled = false;
  void StateJacobian(double t, const double* y, bool need_fp = false) {
    if (SameState(t, y) && (!need_fp || fp_valid || !fy_compiled)) return;
    fy_y.resize(0);
    fp_valid = false;
    fy_compiled = CompiledJacobians(t, y, need_fp || !vjp);
    if (!fy_compiled) form.StateJacobian(t, y, &fy);
    fy_t = t;
    fy_y = Eigen::Map<const Eigen::VectorXd>(y, n());
  }

  // [f_y f_p] = -K^-1 dR/d(q, v, p) in the acceleration rows, f_y's q'
  // rows from the chart (the identity block without quaternions). False
  // when there is no compiled linearization or an entry is not finite.
  Eigen::MatrixXd x_;
  bool CompiledJacobians(double t, const double* y, bool with_fp) {
    if (!lin) return false;
    form.Accelerations(t, y);
    const KktResult& r = form.applied();
    if (!lin->Linearize(t, y, y + nq, mech->parameters(), r.vdot, r.lambda,
                        with_fp))
      return false;
    lin_a = r.vdot;
    lin_lambda = r.lambda;
    x_ = lin->K().solve(with_fp ? lin->Z() : lin->Z().leftCols(n()));
    if (!x_.allFinite()) return false;
    fy.setZero(n(), n());
    CoordinateRatesJacobian(mech->model().data(), mech->q(), mech->v(),
                            fy.topLeftCorner(nq, nq),
                            fy.topRightCorner(nq, nv));
    fy.bottomRows(nv) = -x_.topLeftCorner(nv, n());
    if (with_fp) fp = -x_.topRightCorner(nv, np);
    fp_valid = with_fp;
    return true;
  }

  // ---- the compiled product (vjp): mu_v' f_p (np) at (t, y), plus g_p
  // when the product holds the running functional (vjp->with_running())
  // (the backward right-hand side keeps f_y' mu, cheap for CVODES's Newton
  // iterations at one state; the quadrature takes f_p only through this
  // product).
  Eigen::VectorXd mu_fp, prod_;
  Eigen::VectorXd lin_a, lin_lambda;  // the KKT solution of CompiledJacobians
  double vjp_t = 0.0;
  Eigen::VectorXd vjp_y;  // the state of the last Prepare
  bool vjp_state = false;
  // False when the product is not available at this state (the caller
  // takes the dense f_p or the tangent path).
  bool Products(double t, const double* y, const Eigen::VectorXd& mu) {
    if (!vjp) return false;
    const auto Y = Eigen::Map<const Eigen::VectorXd>(y, n());
    const bool same = vjp_y.size() == n() && t == vjp_t && Y == vjp_y &&
                      mech->t() == t && mech->q() == Y.head(nq) &&
                      mech->v() == Y.tail(nv);
    if (!same) {
      // K and the KKT solution at the state: from the last f_y there, or
      // one solve (a quadrature node: f_y itself is not needed).
      vjp_y.resize(0);
      if (SameState(t, y) && fy_compiled) {
        vjp_state =
            vjp->Prepare(t, y, y + nq, mech->parameters(), lin_a, lin_lambda);
      } else {
        form.Accelerations(t, y);
        const KktResult& r = form.applied();
        vjp_state =
            vjp->Prepare(t, y, y + nq, mech->parameters(), r.vdot, r.lambda);
      }
      vjp_t = t;
      vjp_y = Y;
    }
    if (!vjp_state) return false;
    Eigen::VectorXd e = Eigen::VectorXd::Zero(vjp->rows());
    e.head(nv) = mu.tail(nv);
    const Eigen::VectorXd w = vjp->SolveTransposed(e);
    if (!w.allFinite() || !vjp->Product(w, &prod_)) return false;
    mu_fp = -prod_.tail(np);
    return true;
  }

  // The running integrand's gradient at the mechanics' state, (d/dy) when
  // `wrt_y` else (d/dp), kept for the last state (the backward right-hand
  // side is evaluated several times per state, then the quadrature).
  Eigen::VectorXd run_gy, run_gp, run_q, run_v;
  double run_t = 0.0;
  const Eigen::VectorXd* RunningGradient(bool wrt_y) {
    if (!(run_q.size() == nq && run_t == mech->t() && run_q == mech->q() &&
          run_v == mech->v())) {
      Gradient(fun->running, &run_gy, &run_gp);
      run_t = mech->t();
      run_q = mech->q();
      run_v = mech->v();
    }
    return wrt_y ? &run_gy : &run_gp;
  }

  // Gradient of a scalar user function at the mechanics' state: (d/dy,
  // d/dp), by a compiled program for the running functional when there is
  // one, else by first-order duals.
  void Gradient(const ScalarFn& fn, Eigen::VectorXd* gy, Eigen::VectorXd* gp) {
    if (running_gradient && &fn == &fun->running &&
        running_gradient->Run(mech->t(), mech->q().data(), mech->v().data(),
                              mech->parameters(), gy, gp))
      return;
    gy->setZero(n());
    gp->setZero(np);
    if (!fn) return;
    // With quaternions the state's q is the raw 4-vector the integrator
    // carries and fn sees n(q): the derivative is with respect to the raw
    // q, through the normalization (eval/function_derivatives.hpp), as the
    // forward sensitivities' tangents take it.
    StatePoint x;
    x.t = mech->t();
    x.q = mech->q();
    x.v = mech->v();
    x.p = mech->parameters();
    StateGradientAt(mech->model().data(), fn, x,
                    "functional '" + fun->name + "'", gy, gp);
  }
};

int Rhs(realtype t, N_Vector y, N_Vector yd, void* ud) {
  auto* run = static_cast<AdjointRun*>(ud);
  return run->Trap(
      [&] { run->form.Rhs(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yd)); });
}

int Jac(realtype t,
        N_Vector y,
        N_Vector /*fy*/,
        SUNMatrix J,
        void* ud,
        N_Vector,
        N_Vector,
        N_Vector) {
  auto* run = static_cast<AdjointRun*>(ud);
  return run->Trap([&] {
    run->StateJacobian(t, N_VGetArrayPointer(y));
    for (int j = 0; j < run->n(); ++j)
      std::copy_n(run->fy.col(j).data(), run->n(), SM_COLUMN_D(J, j));
  });
}

int Quad(realtype t, N_Vector y, N_Vector qd, void* ud) {
  auto* run = static_cast<AdjointRun*>(ud);
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

// mu' = -f_y' mu - g_y'.
int RhsB(realtype t, N_Vector y, N_Vector yB, N_Vector yBd, void* ud) {
  auto* run = static_cast<AdjointRun*>(ud);
  return run->Trap([&] {
    run->StateJacobian(t, N_VGetArrayPointer(y));
    const Eigen::VectorXd* gy = run->RunningGradient(true);
    View(yBd) = -run->fy.transpose() * ConstView(yB) - *gy;
  });
}

int JacB(realtype t,
         N_Vector y,
         N_Vector /*yB*/,
         N_Vector /*fyB*/,
         SUNMatrix JB,
         void* ud,
         N_Vector,
         N_Vector,
         N_Vector) {
  auto* run = static_cast<AdjointRun*>(ud);
  return run->Trap([&] {
    run->StateJacobian(t, N_VGetArrayPointer(y));
    const int n = run->n();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) SM_ELEMENT_D(JB, i, j) = -run->fy(j, i);
  });
}

// xi' = -(g_p + mu' f_p) for the model parameters among the requested ones,
// so that xi(t0) = int_t0^T (g_p + mu' f_p) dt.
int QuadB(realtype t, N_Vector y, N_Vector yB, N_Vector qBd, void* ud) {
  auto* run = static_cast<AdjointRun*>(ud);
  return run->Trap([&] {
    const Eigen::VectorXd mu = ConstView(yB);
    auto out = View(qBd);
    if (AdjointShortcutsEnabled() && mu.tail(run->nv).isZero(0.0)) {
      // mu_v = 0 (e.g. an effort int u^2 dt, which no state reads: mu = 0
      // throughout): mu' f_p = 0 and the integrand is g_p alone, with no
      // KKT solution or product at the state.
      const double* yv = N_VGetArrayPointer(y);
      run->mech->SetState(t, yv, yv + run->nq);
      const Eigen::VectorXd& gp = *run->RunningGradient(false);
      for (size_t i = 0; i < run->sens.size(); ++i) {
        const SensParameter& sp = run->sens[i];
        out[i] = sp.kind == SensParameter::Kind::kModel ? -gp[sp.index] : 0.0;
      }
      return;
    }
    const bool products = run->Products(t, N_VGetArrayPointer(y), mu);
    // Without the product: the compiled f_p, or the tangents prepared
    // (K factored) at the state; f_y itself is not needed here.
    if (!products && run->lin)
      run->StateJacobian(t, N_VGetArrayPointer(y), /*need_fp=*/true);
    else if (!products && !run->SameState(t, N_VGetArrayPointer(y)))
      run->form.PrepareTangents(t, N_VGetArrayPointer(y));
    // g_p: in the product already, or from the running gradient.
    const bool with_gp = products && run->vjp->with_running();
    const Eigen::VectorXd* gp = with_gp ? nullptr : run->RunningGradient(false);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(run->n());
    Eigen::VectorXd da;
    for (size_t i = 0; i < run->sens.size(); ++i) {
      const SensParameter& sp = run->sens[i];
      if (sp.kind != SensParameter::Kind::kModel) {
        out[i] = 0.0;
        continue;
      }
      if (products) {
        out[i] = -((with_gp ? 0.0 : (*gp)[sp.index]) + run->mu_fp[sp.index]);
        continue;
      }
      if (run->fp_valid) {
        out[i] =
            -((*gp)[sp.index] + mu.tail(run->nv).dot(run->fp.col(sp.index)));
        continue;
      }
      // Off the parameter's declared time support f_p's column is zero
      // (ModelBuilder::ParameterTimeSupport), and so is gp's entry.
      const auto& support = run->mech->model().data().parameter_time_support;
      if (!support.empty() && AdjointShortcutsEnabled()) {
        const auto& s = support[static_cast<size_t>(sp.index)];
        if (t < s.first || t > s.second) {
          out[i] = 0.0;
          continue;
        }
      }
      Eigen::VectorXd dp = Eigen::VectorXd::Zero(run->np);
      dp[sp.index] = 1.0;
      run->form.Tangent(zero.data(), dp, &da, nullptr, nullptr);
      out[i] = -((*gp)[sp.index] + mu.tail(run->nv).dot(da));
    }
  });
}

// The model's events (only: the adjoint needs no feasibility roots), each
// shifted by its re-arming offset (formulation/roots.hpp, Rearm).
int AdjRoot(realtype t, N_Vector y, realtype* gout, void* ud) {
  auto* run = static_cast<AdjointRun*>(ud);
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
      // (OdeForm::Roots); StateJacobian's cache compares the mechanics'
      // state, so setting it here cannot stale it.
      run->mech->SetState(t, yv, yv + run->nq);
      run->modes->EvaluateRoots(*run->mech, Eigen::VectorXd(),
                                gout + md.events.size());
    } else if (run->modes) {
      run->form.Accelerations(t, yv);
      run->modes->EvaluateRoots(*run->mech, run->form.Reported(),
                                gout + md.events.size());
    }
  });
}

// One forward segment of the adjoint (from the start, a reset or a contact
// switch to the next one or the end): its CVODES memory with the
// checkpoints, the contacts' mode during it, and the jump that ends it.
struct AdjSegment {
  ~AdjSegment() {
    if (mem) CVodeFree(&mem);
  }
  void* mem = nullptr;
  double t0 = 0.0, t1 = 0.0;
  VectorPtr y, yq;
  MatrixPtr A, AB;
  LinSolPtr LS, LSB;
  VectorPtr yB, qB;
  double running = 0.0;        // int_t0^t1 L dt
  std::vector<int> open_rows;  // the contacts' mode (Mechanics::SetOpenRows)
  // The reset or contact switch at t1 (when the segment ends at one; null
  // at a restart that switched nothing), with the running integrand on
  // either side.
  std::unique_ptr<EventJump> jump;
  double running_minus = 0.0, running_plus = 0.0;
};

std::string CvodeFlagText(int flag,
                          const char* call,
                          double t,
                          const CallbackGuard& g) {
  std::ostringstream os;
  os << "adjoint " << call << " failed with " << CvodesFlagName(flag)
     << " (flag " << flag << ") at t = " << t << g.Detail()
     << "; hint: loosen --rtol/--atol or check the functional";
  return os.str();
}

}  // namespace

SensitivityResult AdjointGradient(Mechanics* mech,
                                  const InitialState& x0,
                                  const SimulationOptions& options,
                                  std::string* error) {
  SensitivityResult out;
  out.method = SensMethod::kAdjoint;
  const Model& model = mech->model();
  const ModelData& md = model.data();
  const SensitivityOptions& so = options.sensitivity;
  auto fail = [&](const std::string& m) {
    *error = m;
    return out;
  };
  AdjointRun run(mech, options);
  run.stop = options.stop;
  FunctionalTarget target;
  try {
    if (so.functional.empty()) {
      std::string valid;
      for (const auto& f : md.functionals)
        valid += (valid.empty() ? "" : ", ") + f.name;
      return fail("adjoint sensitivities need --functional NAME; model '" +
                  model.name() +
                  "' declares: " + (valid.empty() ? "(none)" : valid));
    }
    target = ParseFunctionalTarget(model, so.functional);
    run.fun = &md.functionals[static_cast<size_t>(target.functional)];
    run.sens = ResolveSensParameters(model, so.parameters);
    run.running_gradient =
        FunctionalGradient::Make(mech->compiled(), model, run.fun->running);
    // The quadrature's product and the running functional's d/dp in one
    // sweep (KktVjp); RhsB keeps the gradient program for g_y.
    if (run.vjp && run.fun->running) {
      auto merged = KktVjp::Make(mech->compiled(), model, mech->rows(), options,
                                 options.formulation, &run.fun->running,
                                 /*params_only=*/true);
      if (merged) run.vjp = std::move(merged);
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  run.nq = model.nq();
  run.nv = model.nv();
  run.np = model.num_parameters();
  run.offsets.assign(md.events.size(), 0.0);
  for (const auto& p : run.sens) out.parameters.push_back(p.name);
  const int ns = static_cast<int>(run.sens.size());
  const int n = run.n();
  std::vector<Eigen::VectorXd> dirs;
  for (const auto& sp : run.sens) dirs.push_back(ParameterDirection(model, sp));

  // Consistent start and its linearization (s(t0) per parameter); the
  // contacts' mode first (as the plain run, cvodes.cpp). With contacts the
  // compiled KKT linearization, which holds every row, gives way to the
  // tangent path, which drops the open ones.
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
  if (modes) {
    run.lin.reset();
    run.vjp.reset();
  }
  if (!MakeConsistent(mech, options, &q, &v, &scratch))
    return fail(scratch.error);
  Eigen::MatrixXd s0(n, ns);
  try {
    mech->Evaluate(options.t0, q, v);
    KktResult r0;
    mech->SolveKkt(mech->bias(), &r0);
    for (int i = 0; i < ns; ++i) {
      if (OffSupportAtStart(md, run.sens[i], options.t0, so.initial_tangent)) {
        s0.col(i).setZero();
        continue;
      }
      const InitialSensitivity is = mech->LinearizeStart(
          r0.vdot, r0.lambda, run.sens[i], so.initial_tangent);
      s0.col(i) << is.dq, is.dv;
    }
  } catch (const std::exception& e) {
    return fail(std::string("adjoint initialization: ") + e.what());
  }

  auto ctx = MakeContext();
  const bool running = static_cast<bool>(run.fun->running);
  const int nev = static_cast<int>(md.events.size());
  std::vector<int> directions(static_cast<size_t>(nev), 0);
  for (int k = 0; k < nev; ++k) {
    const EventDirection d =
        md.events[static_cast<size_t>(k)].options.direction;
    directions[static_cast<size_t>(k)] = d == EventDirection::kRising    ? 1
                                         : d == EventDirection::kFalling ? -1
                                                                         : 0;
  }
  const int nmode = modes ? modes->num_roots() : 0;
  if (modes) {
    const std::vector<int> md_dirs = modes->RootDirections();
    directions.insert(directions.end(), md_dirs.begin(), md_dirs.end());
  }
  std::vector<int> occurrences(static_cast<size_t>(nev), 0);
  std::vector<int> found(static_cast<size_t>(nev + nmode), 0);
  // The rate y' = f(t, y) and the running integrand at y.
  auto flow = [&](double t, const Eigen::VectorXd& yy) {
    FlowPoint f;
    f.t = t;
    f.y = yy;
    f.ydot.resize(n);
    run.form.Rhs(t, yy.data(), f.ydot.data());
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

  std::vector<std::unique_ptr<AdjSegment>> segs;
  std::unique_ptr<EventJump> end_event;  // the event the functional ends at
  FlowPoint end;
  try {
    // ---- forward pass: one checkpointed CVODES run per segment, a new
    // segment after each reset; it stops where the plain run stops, or
    // at the functional's event.
    double t = options.t0;
    Eigen::VectorXd ystart(n);
    ystart << q, v;
    bool done = false;
    while (!done) {
      auto seg = std::make_unique<AdjSegment>();
      seg->t0 = t;
      seg->open_rows = mech->open_rows();
      seg->y = MakeVector(n, ctx.get());
      View(seg->y.get()) = ystart;
      seg->yq = MakeVector(1, ctx.get());
      seg->A.reset(SUNDenseMatrix(n, n, ctx.get()));
      seg->LS.reset(MakeDenseLuSolver(seg->y.get(), seg->A.get(), ctx.get()));
      seg->mem = CVodeCreate(CV_BDF, ctx.get());
      if (seg->mem == nullptr) return fail("CVodeCreate failed");
      void* mem = seg->mem;
      DAEDALUS_SUNDIALS_CHECK(CVodeInit(mem, Rhs, t, seg->y.get()));
      DAEDALUS_SUNDIALS_CHECK(CVodeSetUserData(mem, &run));
      DAEDALUS_SUNDIALS_CHECK(CVodeSetErrHandlerFn(
          mem, SundialsErrHandler, static_cast<CallbackGuard*>(&run)));
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSStolerances(mem, options.rtol, options.atol));
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSetLinearSolver(mem, seg->LS.get(), seg->A.get()));
      DAEDALUS_SUNDIALS_CHECK(CVodeSetJacFn(mem, Jac));
      DAEDALUS_SUNDIALS_CHECK(CVodeSetMaxNumSteps(mem, options.max_steps));
      // The forward phase only: CVODES has no setter for the backward one.
      if (options.nonlin_conv_coef > 0.0)
        DAEDALUS_SUNDIALS_CHECK(
            CVodeSetNonlinConvCoef(mem, options.nonlin_conv_coef));
      if (running) {
        DAEDALUS_SUNDIALS_CHECK(CVodeQuadInit(mem, Quad, seg->yq.get()));
        DAEDALUS_SUNDIALS_CHECK(
            CVodeQuadSStolerances(mem, options.rtol, options.atol));
        DAEDALUS_SUNDIALS_CHECK(CVodeSetQuadErrCon(mem, SUNTRUE));
      }
      if (nev + nmode > 0) {
        DAEDALUS_SUNDIALS_CHECK(CVodeRootInit(mem, nev + nmode, AdjRoot));
        DAEDALUS_SUNDIALS_CHECK(CVodeSetRootDirection(mem, directions.data()));
      }
      DAEDALUS_SUNDIALS_CHECK(
          CVodeAdjInit(mem, std::max(1L, so.checkpoint_steps), CV_HERMITE));
      int ncheck = 0;
      for (;;) {
        run.Reset();
        const int flag =
            CVodeF(mem, options.t_end, seg->y.get(), &t, CV_NORMAL, &ncheck);
        if (flag < 0)
          return fail(CvodeFlagText(flag, "forward pass (CVodeF)", t, run));
        if (flag != CV_ROOT_RETURN) {
          done = true;
          break;
        }
        DAEDALUS_SUNDIALS_CHECK(CVodeGetRootInfo(mem, found.data()));
        // The events that fired, as the plain run takes them.
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
        const FlowPoint minus = flow(t, ConstView(seg->y.get()));
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
          // segment ends; the next starts in the new mode.
          const Eigen::VectorXd yy = ConstView(seg->y.get());
          const ModeRestart r =
              modes->Switch(t, yy.head(run.nq), yy.tail(run.nv),
                            found.data() + static_cast<size_t>(nev));
          if (!r.restart) continue;
          ystart << r.q, r.v;
          const FlowPoint plus = flow(t, ystart);
          seg->jump = modes->Jump(minus, plus);
          seg->running_minus = running_at(minus);
          seg->running_plus = running_at(plus);
          break;
        }
        if (stop || at_target) {
          // The functional ends here: at its event, or where the run
          // stops (the event-time terms enter the terminal condition).
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
        if (reset < 0) continue;  // nothing to do at this root: go on
        // A reset: this segment ends; the next starts after it.
        seg->jump = std::make_unique<EventJump>(model, reset,
                                                mech->parameters(), minus);
        if (seg->jump->grazing())
          return fail(GrazingMessage(model, *seg->jump));
        Eigen::VectorXd qn = seg->jump->reset_value().head(run.nq);
        Eigen::VectorXd vn = seg->jump->reset_value().tail(run.nv);
        EventRecord unused;
        MakeRestartConsistent(mech, options, md.events[reset].name, t, &qn, &vn,
                              &unused);
        ystart << qn, vn;
        const FlowPoint plus = flow(t, ystart);
        mech->Evaluate(t, qn, vn);
        KktResult r_plus;
        mech->SolveKkt(mech->bias(), &r_plus);
        seg->jump->Saltation(mech, r_plus, plus);
        seg->running_minus = running_at(minus);
        seg->running_plus = running_at(plus);
        // Re-arm the event at the restart (as the plain run does).
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
      // point twice and corrupting the interpolation (CVODES 6.4.1: gradients
      // wrong by 3 % at 100 steps between checkpoints, right with one
      // checkpoint).
      if (nev + nmode > 0)
        DAEDALUS_SUNDIALS_CHECK(CVodeRootInit(mem, 0, nullptr));
      if (running) {
        double tq = t;
        DAEDALUS_SUNDIALS_CHECK(CVodeGetQuad(mem, &tq, seg->yq.get()));
        seg->running = ConstView(seg->yq.get())[0];
      }
      if (done && !end_event) end = flow(t, ConstView(seg->y.get()));
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

    // Terminal condition at the end (with the event terms when the
    // functional ends at an event), and the value.
    const AdjointTerminal term =
        TerminalCondition(model, target.functional, mech->parameters(), end,
                          end_event.get(), dirs);
    double G = term.value;
    for (const auto& sg : segs) G += sg->running;
    out.functional_value = G;
    Eigen::VectorXd grad = term.direct;
    Eigen::VectorXd mu = term.mu;

    // ---- backward pass, segment by segment, the adjoint jumping across
    // each reset with the transposed saltation matrices.
    for (size_t j = segs.size(); j-- > 0;) {
      AdjSegment& sg = *segs[j];
      void* mem = sg.mem;
      if (sg.jump) {
        Eigen::VectorXd mu_minus, share;
        AdjointJump(*sg.jump, sg.running_minus, sg.running_plus, mu, dirs,
                    &mu_minus, &share);
        grad += share;
        mu = mu_minus;
      }
      // The segment's contact mode, for its backward right-hand side and
      // CVODES's recomputation of its forward steps.
      if (modes) {
        mech->SetOpenRows(sg.open_rows);
        run.fy_y.resize(0);
      }
      sg.yB = MakeVector(n, ctx.get());
      sg.qB = MakeVector(std::max(ns, 1), ctx.get());
      sg.AB.reset(SUNDenseMatrix(n, n, ctx.get()));
      sg.LSB.reset(MakeDenseLuSolver(sg.yB.get(), sg.AB.get(), ctx.get()));
      View(sg.yB.get()) = mu;
      View(sg.qB.get()).setZero();
      int which = 0;
      DAEDALUS_SUNDIALS_CHECK(CVodeCreateB(mem, CV_BDF, &which));
      DAEDALUS_SUNDIALS_CHECK(CVodeInitB(mem, which, RhsB, sg.t1, sg.yB.get()));
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSStolerancesB(mem, which, options.rtol, options.atol));
      DAEDALUS_SUNDIALS_CHECK(CVodeSetUserDataB(mem, which, &run));
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSetMaxNumStepsB(mem, which, options.max_steps));
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSetLinearSolverB(mem, which, sg.LSB.get(), sg.AB.get()));
      DAEDALUS_SUNDIALS_CHECK(CVodeSetJacFnB(mem, which, JacB));
      // The parameters' quadrature: CVODES's, error-controlled, or by
      // Gauss-Legendre on the backward steps (GaussQuadrature).
      const bool gauss = GaussQuadrature(md, run.sens);
      if (!gauss) {
        DAEDALUS_SUNDIALS_CHECK(CVodeQuadInitB(mem, which, QuadB, sg.qB.get()));
        DAEDALUS_SUNDIALS_CHECK(
            CVodeQuadSStolerancesB(mem, which, options.rtol, options.atol));
        DAEDALUS_SUNDIALS_CHECK(CVodeSetQuadErrConB(mem, which, SUNTRUE));
      }
      run.Reset();
      if (sg.t1 > sg.t0 && !gauss) {
        const int flag = CVodeB(mem, sg.t0, CV_NORMAL);
        if (flag < 0)
          return fail(
              CvodeFlagText(flag, "backward pass (CVodeB)", sg.t0, run));
        double tb = sg.t0;
        DAEDALUS_SUNDIALS_CHECK(CVodeGetB(mem, which, &tb, sg.yB.get()));
        DAEDALUS_SUNDIALS_CHECK(CVodeGetQuadB(mem, which, &tb, sg.qB.get()));
      } else if (sg.t1 > sg.t0) {
        const std::string e = GaussBackward(
            mem, which, sg.t0, sg.t1, Breakpoints(md, run.sens, sg.t0, sg.t1),
            QuadB, &run, sg.yB.get(), sg.qB.get(), ctx.get(),
            [&](int flag, double tf) {
              return CvodeFlagText(flag, "backward pass (CVodeB)", tf, run);
            });
        if (!e.empty()) return fail(e + run.Detail());
      }
      mu = ConstView(sg.yB.get());
      const auto xi = ConstView(sg.qB.get());
      for (int i = 0; i < ns; ++i)
        if (run.sens[i].kind == SensParameter::Kind::kModel) grad[i] += xi[i];
    }
    for (int i = 0; i < ns; ++i) grad[i] += mu.dot(s0.col(i));
    out.functionals.emplace_back(run.fun->name, grad);
  } catch (const std::exception& e) {
    return fail(std::string("adjoint: ") + e.what() + run.Detail());
  }
  return out;
}

}  // namespace daedalus::internal
