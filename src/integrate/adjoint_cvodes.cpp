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
// of dR/d(q, v, p) and K of the KKT system R = 0 at the state's solution
// (formulation/sens_programs.hpp), and [f_y f_p] = -K^-1 dR/d(q, v, p)
// (the acceleration rows): one program run and one LU per state, whatever
// the number of parameters. Otherwise each column is one tangent-workspace
// evaluation followed by a solve with the KKT matrix factored once per
// state.
#include <cvodes/cvodes.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <cstdlib>
#include <memory>
#include <sstream>

#include "eval/chart.hpp"
#include "formulation/ode_form.hpp"
#include "formulation/sens_programs.hpp"
#include "integrate/adapters.hpp"
#include "integrate/common.hpp"
#include "integrate/sundials_util.hpp"
#include "sensitivity/forward.hpp"

namespace daedalus::internal {

namespace {

struct AdjointRun : CallbackGuard {
  AdjointRun(Mechanics* m, const SimulationOptions& o)
      : mech(m),
        form(m, o),
        lin(KktLinearization::Make(
            m->compiled(), m->model(), m->rows(), o, o.formulation)) {}
  Mechanics* mech;
  OdeForm form;
  // Compiled derivatives (null: the tangent path).
  std::unique_ptr<KktLinearization> lin;
  std::unique_ptr<FunctionalGradient> running_gradient;
  const ModelData::FunctionalDecl* fun = nullptr;
  std::vector<SensParameter> sens;
  int nq = 0, nv = 0, np = 0;

  int n() const { return nq + nv; }

  // f_y (n x n), exact (OdeForm::StateJacobian). CVODES evaluates the
  // backward right-hand side, its Jacobian and the backward quadrature at
  // the same states: f_y is kept for the last state, with the mechanics
  // still evaluated there.
  Eigen::MatrixXd fy;
  // f_p (nv rows: the accelerations'; q' = v does not read p), when the
  // compiled path formed it with f_y (fp_valid).
  Eigen::MatrixXd fp;
  bool fp_valid = false;
  double fy_t = 0.0;
  Eigen::VectorXd fy_y;
  bool SameState(double t, const double* y) const {
    if (fy_y.size() != n() || t != fy_t || mech->t() != t) return false;
    const auto Y = Eigen::Map<const Eigen::VectorXd>(y, n());
    return Y == fy_y && mech->q() == Y.head(nq) && mech->v() == Y.tail(nv);
  }
  void StateJacobian(double t, const double* y) {
    if (SameState(t, y)) return;
    fy_y.resize(0);
    fp_valid = CompiledJacobians(t, y);
    if (!fp_valid) form.StateJacobian(t, y, &fy);
    fy_t = t;
    fy_y = Eigen::Map<const Eigen::VectorXd>(y, n());
  }

  // [f_y f_p] = -K^-1 dR/d(q, v, p) in the acceleration rows, f_y's q'
  // rows from the chart (the identity block without quaternions). False
  // when there is no compiled linearization or an entry is not finite.
  Eigen::MatrixXd x_;
  bool CompiledJacobians(double t, const double* y) {
    if (!lin) return false;
    form.Accelerations(t, y);
    const KktResult& r = form.applied();
    if (!lin->Linearize(t, y, y + nq, mech->parameters(), r.vdot, r.lambda))
      return false;
    x_ = lin->K().solve(lin->Z());
    if (!x_.allFinite()) return false;
    fy.setZero(n(), n());
    CoordinateRatesJacobian(mech->model().data(), mech->q(), mech->v(),
                            fy.topLeftCorner(nq, nq),
                            fy.topRightCorner(nq, nv));
    fy.bottomRows(nv) = -x_.topLeftCorner(nv, n());
    fp = -x_.topRightCorner(nv, np);
    return true;
  }

  // Gradient of a scalar user function at the mechanics' state: (d/dy,
  // d/dp), by a compiled program for the running functional when there is
  // one, else by first-order duals.
  void Gradient(const ScalarFn& fn, Eigen::VectorXd* gy, Eigen::VectorXd* gp) {
    if (running_gradient && &fn == &fun->running &&
        running_gradient->Run(mech->t(), mech->q().data(), mech->v().data(),
                              mech->parameters(), gy, gp))
      return;
    const Point<double> x = mech->point();
    // With quaternions the state's q is the raw 4-vector the integrator
    // carries and fn sees n(q): the derivative is with respect to the raw
    // q, through the normalization (eval/chart.hpp, UserCoordinates), as
    // the forward sensitivities' tangents take it.
    const ModelData& md = mech->model().data();
    const bool chart = !md.quaternions.empty();
    const Eigen::VectorXd& q_at = chart ? mech->q() : x.q;
    VecX<D1> q(nq), v(nv), p(np), qn;
    const D1 t(x.t, 0.0);
    auto seed = [&](int k) {
      for (int i = 0; i < nq; ++i) q[i] = D1(q_at[i], k == i ? 1.0 : 0.0);
      for (int i = 0; i < nv; ++i) v[i] = D1(x.v[i], k == nq + i ? 1.0 : 0.0);
      for (int i = 0; i < np; ++i) p[i] = D1(x.p[i], k == n() + i ? 1.0 : 0.0);
      if (chart) qn = UserCoordinates(md, q, nv);
    };
    gy->setZero(n());
    gp->setZero(np);
    if (!fn) return;
    for (int k = 0; k < n() + np; ++k) {
      seed(k);
      const double d = fn.f1(Point<D1>{chart ? qn : q, v, t, p}).d;
      if (!std::isfinite(d))
        throw std::runtime_error("functional '" + fun->name +
                                 "' has a non-finite derivative at " +
                                 mech->DescribeState());
      if (k < n())
        (*gy)[k] = d;
      else
        (*gp)[k - n()] = d;
    }
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
    Eigen::VectorXd gy, gp;
    run->Gradient(run->fun->running, &gy, &gp);
    View(yBd) = -run->fy.transpose() * ConstView(yB) - gy;
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
    run->StateJacobian(t, N_VGetArrayPointer(y));  // factors K (cached)
    Eigen::VectorXd gy, gp;
    run->Gradient(run->fun->running, &gy, &gp);
    const auto mu = ConstView(yB);
    auto out = View(qBd);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(run->n());
    Eigen::VectorXd da;
    for (size_t i = 0; i < run->sens.size(); ++i) {
      const SensParameter& sp = run->sens[i];
      if (sp.kind != SensParameter::Kind::kModel) {
        out[i] = 0.0;
        continue;
      }
      if (run->fp_valid) {
        out[i] = -(gp[sp.index] + mu.tail(run->nv).dot(run->fp.col(sp.index)));
        continue;
      }
      Eigen::VectorXd dp = Eigen::VectorXd::Zero(run->np);
      dp[sp.index] = 1.0;
      run->form.Tangent(zero.data(), dp, &da, nullptr, nullptr);
      out[i] = -(gp[sp.index] + mu.tail(run->nv).dot(da));
    }
  });
}

std::string CvodeFlagText(int flag,
                          const char* call,
                          double t,
                          const CallbackGuard& g) {
  std::unique_ptr<char, decltype(&std::free)> name(CVodeGetReturnFlagName(flag),
                                                   &std::free);
  std::ostringstream os;
  os << "adjoint " << call << " failed with " << name.get() << " (flag " << flag
     << ") at t = " << t << g.Detail()
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
  const SensitivityOptions& so = options.sensitivity;
  auto fail = [&](const std::string& m) {
    *error = m;
    return out;
  };
  AdjointRun run(mech, options);
  run.stop = options.stop;
  try {
    if (so.functional.empty()) {
      std::string valid;
      for (const auto& f : model.data().functionals)
        valid += (valid.empty() ? "" : ", ") + f.name;
      return fail("adjoint sensitivities need --functional NAME; model '" +
                  model.name() +
                  "' declares: " + (valid.empty() ? "(none)" : valid));
    }
    run.fun = &model.data().functionals[model.FunctionalIndex(so.functional)];
    run.sens = ResolveSensParameters(model, so.parameters);
    run.running_gradient =
        FunctionalGradient::Make(mech->compiled(), model, run.fun->running);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  run.nq = model.nq();
  run.nv = model.nv();
  run.np = model.num_parameters();
  for (const auto& p : run.sens) out.parameters.push_back(p.name);
  const int ns = static_cast<int>(run.sens.size());
  const int n = run.n();

  // Consistent start and its linearization (s(t0) per parameter).
  SimulationSummary scratch;
  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!MakeConsistent(mech, options, &q, &v, &scratch))
    return fail(scratch.error);
  Eigen::MatrixXd s0(n, ns);
  try {
    mech->Evaluate(options.t0, q, v);
    KktResult r0;
    mech->SolveKkt(mech->bias(), &r0);
    for (int i = 0; i < ns; ++i) {
      const InitialSensitivity is = mech->LinearizeStart(
          r0.vdot, r0.lambda, run.sens[i], so.initial_tangent);
      s0.col(i) << is.dq, is.dv;
    }
  } catch (const std::exception& e) {
    return fail(std::string("adjoint initialization: ") + e.what());
  }

  auto ctx = MakeContext();
  auto y = MakeVector(n, ctx.get());
  View(y.get()) << q, v;
  void* mem = CVodeCreate(CV_BDF, ctx.get());
  if (mem == nullptr) return fail("CVodeCreate failed");
  struct MemGuard {
    void* m;
    ~MemGuard() { CVodeFree(&m); }
  } guard{mem};
  const bool running = static_cast<bool>(run.fun->running);
  auto yq = MakeVector(1, ctx.get());
  MatrixPtr A(SUNDenseMatrix(n, n, ctx.get()));
  LinSolPtr LS(MakeDenseLuSolver(y.get(), A.get(), ctx.get()));
  auto yB = MakeVector(n, ctx.get());
  auto qB = MakeVector(std::max(ns, 1), ctx.get());
  MatrixPtr AB(SUNDenseMatrix(n, n, ctx.get()));
  LinSolPtr LSB(MakeDenseLuSolver(yB.get(), AB.get(), ctx.get()));
  double T = options.t_end, t = options.t0;
  try {
    DAEDALUS_SUNDIALS_CHECK(CVodeInit(mem, Rhs, options.t0, y.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetUserData(mem, &run));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetErrHandlerFn(
        mem, SundialsErrHandler, static_cast<CallbackGuard*>(&run)));
    DAEDALUS_SUNDIALS_CHECK(CVodeSStolerances(mem, options.rtol, options.atol));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetLinearSolver(mem, LS.get(), A.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetJacFn(mem, Jac));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetMaxNumSteps(mem, options.max_steps));
    // The forward phase only: CVODES has no setter for the backward one.
    if (options.nonlin_conv_coef > 0.0)
      DAEDALUS_SUNDIALS_CHECK(
          CVodeSetNonlinConvCoef(mem, options.nonlin_conv_coef));
    if (running) {
      DAEDALUS_SUNDIALS_CHECK(CVodeQuadInit(mem, Quad, yq.get()));
      DAEDALUS_SUNDIALS_CHECK(
          CVodeQuadSStolerances(mem, options.rtol, options.atol));
      DAEDALUS_SUNDIALS_CHECK(CVodeSetQuadErrCon(mem, SUNTRUE));
    }
    DAEDALUS_SUNDIALS_CHECK(
        CVodeAdjInit(mem, std::max(1L, so.checkpoint_steps), CV_HERMITE));

    // Forward pass with checkpoints.
    int ncheck = 0;
    run.Reset();
    int flag = CVodeF(mem, T, y.get(), &t, CV_NORMAL, &ncheck);
    if (flag < 0)
      return fail(CvodeFlagText(flag, "forward pass (CVodeF)", t, run));
    double G = 0.0;
    if (running) {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(CVodeGetQuad(mem, &tq, yq.get()));
      G = ConstView(yq.get())[0];
    }

    // Terminal condition mu(T) = phi_y(T)', and phi_p(T).
    const double* yT = N_VGetArrayPointer(y.get());
    mech->SetState(T, yT, yT + run.nq);
    Eigen::VectorXd phi_y = Eigen::VectorXd::Zero(n);
    Eigen::VectorXd phi_p = Eigen::VectorXd::Zero(run.np);
    if (run.fun->terminal) {
      G += run.fun->terminal.f0(mech->point());
      run.Gradient(run.fun->terminal, &phi_y, &phi_p);
    }
    out.functional_value = G;

    // Backward pass.
    int which = 0;
    View(yB.get()) = phi_y;
    View(qB.get()).setZero();
    DAEDALUS_SUNDIALS_CHECK(CVodeCreateB(mem, CV_BDF, &which));
    DAEDALUS_SUNDIALS_CHECK(CVodeInitB(mem, which, RhsB, T, yB.get()));
    DAEDALUS_SUNDIALS_CHECK(
        CVodeSStolerancesB(mem, which, options.rtol, options.atol));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetUserDataB(mem, which, &run));
    DAEDALUS_SUNDIALS_CHECK(
        CVodeSetMaxNumStepsB(mem, which, options.max_steps));
    DAEDALUS_SUNDIALS_CHECK(
        CVodeSetLinearSolverB(mem, which, LSB.get(), AB.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetJacFnB(mem, which, JacB));
    DAEDALUS_SUNDIALS_CHECK(CVodeQuadInitB(mem, which, QuadB, qB.get()));
    DAEDALUS_SUNDIALS_CHECK(
        CVodeQuadSStolerancesB(mem, which, options.rtol, options.atol));
    DAEDALUS_SUNDIALS_CHECK(CVodeSetQuadErrConB(mem, which, SUNTRUE));
    run.Reset();
    flag = CVodeB(mem, options.t0, CV_NORMAL);
    if (flag < 0) {
      return fail(
          CvodeFlagText(flag, "backward pass (CVodeB)", options.t0, run));
    }
    double tb = options.t0;
    DAEDALUS_SUNDIALS_CHECK(CVodeGetB(mem, which, &tb, yB.get()));
    DAEDALUS_SUNDIALS_CHECK(CVodeGetQuadB(mem, which, &tb, qB.get()));
    const auto mu0 = ConstView(yB.get());
    const auto xi = ConstView(qB.get());
    Eigen::VectorXd grad(ns);
    for (int i = 0; i < ns; ++i) {
      grad[i] = mu0.dot(s0.col(i));
      if (run.sens[i].kind == SensParameter::Kind::kModel)
        grad[i] += xi[i] + phi_p[run.sens[i].index];
    }
    out.functionals.emplace_back(run.fun->name, grad);
  } catch (const std::exception& e) {
    return fail(std::string("adjoint: ") + e.what() + run.Detail());
  }
  return out;
}

}  // namespace daedalus::internal
