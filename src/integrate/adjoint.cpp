// Adjoint sensitivities with CVODES (CVodeAdjInit / CVodeF / CVodeB)
// for a functional G = int g dt + phi(T) of the ODE forms (unstabilized or
// Baumgarte): y = (q, v), y' = f(t, y, p) = (v, vdot(q, v, p)) with vdot
// from the KKT system (docs/sensitivities.md).
//
// With s = dy/dp (s' = f_y s + f_p, s(t0) = dy0/dp) and the adjoint
//   mu' = -f_y' mu - g_y',   mu(T) = phi_y(T)',
// d/dt (mu' s) = -g_y s + mu' f_p, so
//   dG/dp = mu(t0)' s(t0) + int_t0^T (g_p + mu' f_p) dt + phi_p(T).
// f_y and f_p are exact: each column is one tangent-workspace evaluation
// followed by a solve with the KKT matrix factored once per state.
#include <cvodes/cvodes.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <cstdlib>
#include <memory>
#include <sstream>

#include "daedalus/kkt.hpp"
#include "daedalus/simulate.hpp"
#include "integrate/integrator_common.hpp"
#include "integrate/sundials_util.hpp"
#include "sensitivity/sens_common.hpp"

namespace daedalus::internal {

namespace {

struct AdjointRun : CallbackGuard {
  AdjointRun(const Model& m, const SimulationOptions& o)
      : model(m), ws(m), tws(m), kkt(m, o.kkt), opt(o) {
    ws.use_compiled = o.compiled;
  }
  const Model& model;
  Workspace ws;
  TangentWorkspace tws;
  KktSolver kkt;
  SimulationOptions opt;
  KktResult r;
  KktTangent kt;
  std::vector<bool> holonomic;
  const ModelData::FunctionalDecl* fun = nullptr;
  std::vector<SensParameter> sens;
  int nq = 0, nv = 0, np = 0;

  int n() const { return nq + nv; }

  void Accelerations(double t, const double* y) {
    ws.SetState(t, Eigen::Map<const Eigen::VectorXd>(y, nq),
                Eigen::Map<const Eigen::VectorXd>(y + nq, nv));
    EvaluateAll(&ws);
    kkt.Solve(ws, StabilizedBias(ws, opt, holonomic), &r);
  }

  // Tangent of vdot along (dq, dv, dp) at the state of the last
  // Accelerations + kt.Factor.
  Eigen::VectorXd AccelerationTangent(const Eigen::VectorXd& dq,
                                      const Eigen::VectorXd& dv,
                                      const Eigen::VectorXd& dp) {
    SeedTangent(ws, dq, dv, dp, &tws);
    EvaluateAll(&tws);
    Eigen::VectorXd da;
    kt.Solve(tws, StabilizedBias(tws, opt, holonomic), &da, nullptr);
    return da;
  }

  // f_y (n x n), exact.
  Eigen::MatrixXd fy;
  // CVODES evaluates the backward right-hand side, its Jacobian and the
  // backward quadrature at the same states: the exact f_y is kept for the
  // last state (valid while the workspace still holds that state).
  double fy_t = 0.0;
  Eigen::VectorXd fy_y;
  bool SameState(double t, const double* y) const {
    if (fy_y.size() != n() || t != fy_t || ws.t != t) return false;
    const auto Y = Eigen::Map<const Eigen::VectorXd>(y, n());
    return Y == fy_y && ws.q == Y.head(nq) && ws.v == Y.tail(nv);
  }
  void StateJacobian(double t, const double* y) {
    if (SameState(t, y)) return;
    fy_y.resize(0);
    Accelerations(t, y);
    kt.Factor(ws, r.vdot, r.lambda);
    fy.setZero(n(), n());
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(nq), dv = dq, none;
    for (int j = 0; j < n(); ++j) {
      if (j < nq)
        dq[j] = 1.0;
      else
        dv[j - nq] = 1.0;
      if (j >= nq) fy(j - nq, j) = 1.0;  // q' = v
      fy.col(j).tail(nv) = AccelerationTangent(dq, dv, none);
      if (j < nq)
        dq[j] = 0.0;
      else
        dv[j - nq] = 0.0;
    }
    fy_t = t;
    fy_y = Eigen::Map<const Eigen::VectorXd>(y, n());
  }

  // Gradient of a scalar user function at the workspace state: (d/dy,
  // d/dp), by first-order duals.
  void Gradient(const ScalarFn& fn, Eigen::VectorXd* gy, Eigen::VectorXd* gp) {
    VecX<D1> q(nq), v(nv), p(np);
    const D1 t(ws.t, 0.0);
    auto seed = [&](int k) {
      for (int i = 0; i < nq; ++i) q[i] = D1(ws.q[i], k == i ? 1.0 : 0.0);
      for (int i = 0; i < nv; ++i) v[i] = D1(ws.v[i], k == nq + i ? 1.0 : 0.0);
      for (int i = 0; i < np; ++i) p[i] = D1(ws.p[i], k == n() + i ? 1.0 : 0.0);
    };
    gy->setZero(n());
    gp->setZero(np);
    if (!fn) return;
    for (int k = 0; k < n() + np; ++k) {
      seed(k);
      const double d = fn.f1(Point<D1>{q, v, t, p}).d;
      if (!std::isfinite(d))
        throw std::runtime_error("functional '" + fun->name +
                                 "' has a non-finite derivative at " +
                                 DescribeState(ws));
      if (k < n())
        (*gy)[k] = d;
      else
        (*gp)[k - n()] = d;
    }
  }
};

int Rhs(realtype t, N_Vector y, N_Vector yd, void* ud) {
  auto* run = static_cast<AdjointRun*>(ud);
  return run->Trap([&] {
    run->Accelerations(t, N_VGetArrayPointer(y));
    auto d = View(yd);
    d.head(run->nq) = run->ws.v;
    d.tail(run->nv) = run->r.vdot;
  });
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
    run->ws.SetState(t, Eigen::Map<const Eigen::VectorXd>(yv, run->nq),
                     Eigen::Map<const Eigen::VectorXd>(yv + run->nq, run->nv));
    const Workspace& w = run->ws;
    const double g = run->fun->running.f0(Point<double>{w.q, w.v, w.t, w.p});
    if (!std::isfinite(g))
      throw std::runtime_error("functional '" + run->fun->name +
                               "' returned a non-finite value at " +
                               DescribeState(w));
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
    const Eigen::VectorXd zq = Eigen::VectorXd::Zero(run->nq);
    const Eigen::VectorXd zv = Eigen::VectorXd::Zero(run->nv);
    for (size_t i = 0; i < run->sens.size(); ++i) {
      const SensParameter& sp = run->sens[i];
      if (sp.kind != SensParameter::Kind::kModel) {
        out[i] = 0.0;
        continue;
      }
      Eigen::VectorXd dp = Eigen::VectorXd::Zero(run->np);
      dp[sp.index] = 1.0;
      const Eigen::VectorXd da = run->AccelerationTangent(zq, zv, dp);
      out[i] = -(gp[sp.index] + mu.tail(run->nv).dot(da));
    }
  });
}

std::string FlagText(int flag,
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

SensitivityResult AdjointGradient(const Model& model,
                                  const InitialState& x0,
                                  const Eigen::VectorXd& params,
                                  const SimulationOptions& options,
                                  std::string* error) {
  SensitivityResult out;
  out.method = SensMethod::kAdjoint;
  const SensitivityOptions& so = options.sensitivity;
  auto fail = [&](const std::string& m) {
    *error = m;
    return out;
  };
  if (options.formulation != Formulation::kBaumgarte &&
      options.formulation != Formulation::kUnstabilized) {
    return fail(std::string("adjoint sensitivities integrate the ODE form ") +
                "with CVODES: use --formulation baumgarte or unstabilized "
                "(got " +
                ToString(options.formulation) +
                "; forward sensitivities support ggl)");
  }
  AdjointRun run(model, options);
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
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  run.nq = model.nq();
  run.nv = model.nv();
  run.np = model.num_parameters();
  run.ws.SetParameters(params);
  run.holonomic.assign(model.nc(), true);
  for (int ci = 0; ci < model.num_constraints(); ++ci)
    if (model.constraints()[ci].kind == ConstraintKind::kNonholonomic)
      for (int r = 0; r < model.constraints()[ci].rows; ++r)
        run.holonomic[model.constraint_row(ci) + r] = false;
  for (const auto& p : run.sens) out.parameters.push_back(p.name);
  const int ns = static_cast<int>(run.sens.size());
  const int n = run.n();

  // Consistent start and its linearization (s(t0) per parameter).
  SimulationSummary scratch;
  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!MakeConsistent(&run.ws, options, &q, &v, &scratch))
    return fail(scratch.error);
  Eigen::MatrixXd s0(n, ns);
  try {
    run.ws.SetState(options.t0, q, v);
    EvaluateAll(&run.ws);
    run.kkt.Solve(run.ws, run.ws.bias, &run.r);
    for (int i = 0; i < ns; ++i) {
      const InitialSensitivity is =
          LinearizeInitialState(run.ws, &run.tws, run.r.vdot, run.r.lambda,
                                run.sens[i], so.initial_tangent);
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
    if (flag < 0) return fail(FlagText(flag, "forward pass (CVodeF)", t, run));
    double G = 0.0;
    if (running) {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(CVodeGetQuad(mem, &tq, yq.get()));
      G = ConstView(yq.get())[0];
    }

    // Terminal condition mu(T) = phi_y(T)', and phi_p(T).
    const double* yT = N_VGetArrayPointer(y.get());
    run.ws.SetState(T, Eigen::Map<const Eigen::VectorXd>(yT, run.nq),
                    Eigen::Map<const Eigen::VectorXd>(yT + run.nq, run.nv));
    Eigen::VectorXd phi_y = Eigen::VectorXd::Zero(n);
    Eigen::VectorXd phi_p = Eigen::VectorXd::Zero(run.np);
    if (run.fun->terminal) {
      const Workspace& w = run.ws;
      G += run.fun->terminal.f0(Point<double>{w.q, w.v, w.t, w.p});
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
      return fail(FlagText(flag, "backward pass (CVodeB)", options.t0, run));
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
