// IDAS adapter: GGL index-2, direct index-3, and index-1 (unstabilized or
// Baumgarte) DAE forms of a constrained model (docs/formulations.md).
#include <idas/idas.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>

#include "daedalus/kkt.hpp"
#include "daedalus/simulate.hpp"
#include "integrator_common.hpp"
#include "sundials_util.hpp"

namespace daedalus::internal {

namespace {

// State the IDAS callbacks share. Callbacks are noexcept trampolines.
struct IdasRun : CallbackGuard {
  IdasRun(const Model& m, const SimulationOptions& o)
      : model(m), ws(m), kkt(m, o.kkt), opt(o), layout(m) {}
  const Model& model;
  Workspace ws;
  KktSolver kkt;
  SimulationOptions opt;
  QuadLayout layout;
  std::vector<int> hrows;  // holonomic rows (the G of GGL)
  std::vector<bool> holonomic;
  int nq = 0, nv = 0, nc = 0, nh = 0;
  const RootSet* roots = nullptr;
  KktResult reported;  // multipliers reported at outputs and roots

  // Offsets into y.
  int iq() const { return 0; }
  int iv() const { return nq; }
  int il() const { return nq + nv; }
  int im() const { return nq + nv + nc; }
  int size() const {
    return nq + nv + nc + (opt.formulation == Formulation::kGgl ? nh : 0);
  }

  void Evaluate(double t, const double* y) {
    ws.SetState(t, Eigen::Map<const Eigen::VectorXd>(y + iq(), nq),
                Eigen::Map<const Eigen::VectorXd>(y + iv(), nv));
    EvaluateAll(&ws);
  }

  // Multipliers inside a solver vector (a view, no copy).
  Eigen::Map<const Eigen::VectorXd> Lambda(const double* y) const {
    return Eigen::Map<const Eigen::VectorXd>(y + il(), nc);
  }

  // G' mu for the GGL correction (zero for other forms).
  Eigen::VectorXd GtMu(const double* y) const {
    Eigen::VectorXd r = Eigen::VectorXd::Zero(nv);
    if (opt.formulation != Formulation::kGgl) return r;
    for (int k = 0; k < nh; ++k)
      r += ws.J.row(hrows[k]).transpose() * y[im() + k];
    return r;
  }

  void Residual(double t, const double* y, const double* yp, double* res) {
    Evaluate(t, y);
    Eigen::Map<Eigen::VectorXd> F(res, size());
    const auto lambda = Lambda(y);
    Eigen::Map<const Eigen::VectorXd> qp(yp + iq(), nq), vp(yp + iv(), nv);
    F.segment(iq(), nq) = qp - ws.v + GtMu(y);
    F.segment(iv(), nv) = ws.M * vp + ws.h - ws.Bu - ws.J.transpose() * lambda;
    auto Fl = F.segment(il(), nc);
    switch (opt.formulation) {
      case Formulation::kGgl:
        Fl = ws.vel_residual;
        for (int k = 0; k < nh; ++k) F[im() + k] = ws.phi[hrows[k]];
        break;
      case Formulation::kIndex3:
        for (int i = 0; i < nc; ++i)
          Fl[i] = holonomic[i] ? ws.phi[i] : ws.vel_residual[i];
        break;
      default: {
        // Index 1: J vdot + b (+ Baumgarte terms) = 0.
        Fl = ws.J * vp + ws.bias;
        if (opt.formulation == Formulation::kBaumgarte) {
          const double a = opt.baumgarte_alpha, b = opt.baumgarte_beta;
          for (int i = 0; i < nc; ++i)
            Fl[i] += holonomic[i]
                         ? 2.0 * a * ws.vel_residual[i] + b * b * ws.phi[i]
                         : a * ws.vel_residual[i];
        }
      }
    }
  }
};

int ResFn(realtype t, N_Vector y, N_Vector yp, N_Vector rr, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    run->Residual(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp),
                  N_VGetArrayPointer(rr));
  });
}

int QuadFn(realtype t, N_Vector y, N_Vector /*yp*/, N_Vector rq, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    run->Evaluate(t, yv);
    double stab = 0.0;
    if (run->opt.formulation == Formulation::kGgl && run->nh > 0) {
      // Power of the position correction qdot = v - G' mu.
      const Eigen::VectorXd dq = -run->GtMu(yv);
      stab = EnergyDerivativeAlongQ(&run->ws, dq);
    }
    if (run->opt.formulation == Formulation::kBaumgarte && run->nc > 0) {
      // Baumgarte's share of lambda is stabilization, not constraint work.
      IdealMultipliers(run->ws, &run->kkt, &run->reported);
      stab = StabilizationPower(run->ws, run->Lambda(yv), run->reported.lambda);
      QuadratureIntegrands(run->layout, run->ws, run->reported.lambda, stab,
                           View(rq));
      return;
    }
    QuadratureIntegrands(run->layout, run->ws, run->Lambda(yv), stab, View(rq));
  });
}

int RootFn(realtype t, N_Vector y, N_Vector /*yp*/, realtype* gout, void* ud) {
  auto* run = static_cast<IdasRun*>(ud);
  return run->Trap([&] {
    const double* yv = N_VGetArrayPointer(y);
    run->Evaluate(t, yv);
    IdealMultipliers(run->ws, &run->kkt, &run->reported);
    run->roots->Evaluate(run->ws, run->reported.lambda, gout);
  });
}

std::string HintFor(int flag, Formulation f) {
  switch (flag) {
    case IDA_TOO_MUCH_WORK:
      return "raise the step limit, loosen --rtol/--atol, or shorten --t-end";
    case IDA_TOO_MUCH_ACC:
      return "the tolerances are below what double precision allows; loosen "
             "--rtol/--atol";
    case IDA_ERR_FAIL:
    case IDA_CONV_FAIL:
    case IDA_LSETUP_FAIL:
    case IDA_LSOLVE_FAIL:
      return f == Formulation::kIndex3
                 ? "the index-3 form is ill-conditioned at small steps; use "
                   "--formulation ggl"
                 : "the Newton matrix of an index-2 DAE grows ill-conditioned "
                   "as the step shrinks, so very small --atol (below ~1e-9) "
                   "can stall the corrector: raise --atol, try another "
                   "--formulation, or check for a singular configuration";
    case IDA_RES_FAIL:
    case IDA_REP_RES_ERR:
    case IDA_FIRST_RES_FAIL:
      return "a model function failed; see the message above";
    default:
      return "check the model and the options";
  }
}

}  // namespace

SimulationSummary SimulateIdas(const Model& model,
                               const InitialState& x0,
                               const Eigen::VectorXd& params,
                               const SimulationOptions& options,
                               Observer* observer) {
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
  if (options.formulation == Formulation::kProjection) {
    sum.error =
        "the projection formulation uses CVODES's projection interface; use "
        "--integrator cvodes-bdf, or --formulation ggl with IDAS";
    return sum;
  }

  IdasRun run(model, options);
  run.ws.SetParameters(params);
  run.nq = model.nq();
  run.nv = model.nv();
  run.nc = model.nc();
  run.holonomic.assign(run.nc, true);
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = model.constraints()[ci];
    for (int r = 0; r < c.rows; ++r) {
      const int row = model.constraint_row(ci) + r;
      if (c.kind == ConstraintKind::kNonholonomic)
        run.holonomic[row] = false;
      else
        run.hrows.push_back(row);
    }
  }
  run.nh = static_cast<int>(run.hrows.size());
  Recorder recorder(model, &sum, observer);

  // ---- consistent initialization: project, then vdot0 and lambda0 from
  // the KKT system, so that IDAS starts from a consistent (y0, yp0).
  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!MakeConsistent(&run.ws, options, &q, &v, &sum)) return sum;
  KktResult r0;
  try {
    run.ws.SetState(options.t0, q, v);
    EvaluateAll(&run.ws);
    run.kkt.Solve(run.ws, run.ws.bias, &r0);
  } catch (const std::exception& e) {
    sum.error = std::string("initial accelerations: ") + e.what();
    return sum;
  }

  auto ctx = MakeContext();
  const int n = run.size();
  auto y = MakeVector(n, ctx.get());
  auto yp = MakeVector(n, ctx.get());
  auto id = MakeVector(n, ctx.get());
  auto yq = MakeVector(run.layout.size(), ctx.get());
  {
    auto Y = View(y.get()), YP = View(yp.get()), ID = View(id.get());
    Y.segment(run.iq(), run.nq) = q;
    Y.segment(run.iv(), run.nv) = v;
    Y.segment(run.il(), run.nc) = r0.lambda;
    YP.segment(run.iq(), run.nq) = v;
    YP.segment(run.iv(), run.nv) = r0.vdot;
    ID.head(run.nq + run.nv).setOnes();  // differential; the rest algebraic
  }

  void* mem = IDACreate(ctx.get());
  if (mem == nullptr) throw std::runtime_error("IDACreate failed");
  struct MemGuard {
    void* m;
    ~MemGuard() { IDAFree(&m); }
  } guard{mem};
  MatrixPtr A(SUNDenseMatrix(n, n, ctx.get()));
  LinSolPtr LS(SUNLinSol_Dense(y.get(), A.get(), ctx.get()));
  DAEDALUS_SUNDIALS_CHECK(IDAInit(mem, ResFn, options.t0, y.get(), yp.get()));
  DAEDALUS_SUNDIALS_CHECK(IDASetUserData(mem, &run));
  DAEDALUS_SUNDIALS_CHECK(IDASetErrHandlerFn(
      mem, SundialsErrHandler, static_cast<CallbackGuard*>(&run)));
  DAEDALUS_SUNDIALS_CHECK(IDASStolerances(mem, options.rtol, options.atol));

  DAEDALUS_SUNDIALS_CHECK(IDASetId(mem, id.get()));
  // Multipliers (and GGL multipliers) are algebraic: excluded from the
  // local error test, as in idasSlCrank_dns.
  DAEDALUS_SUNDIALS_CHECK(IDASetSuppressAlg(mem, SUNTRUE));
  DAEDALUS_SUNDIALS_CHECK(IDASetMaxNumSteps(mem, options.max_steps));
  DAEDALUS_SUNDIALS_CHECK(IDASetLinearSolver(mem, LS.get(), A.get()));
  DAEDALUS_SUNDIALS_CHECK(IDAQuadInit(mem, QuadFn, yq.get()));
  DAEDALUS_SUNDIALS_CHECK(IDAQuadSStolerances(mem, options.rtol, options.atol));
  DAEDALUS_SUNDIALS_CHECK(IDASetQuadErrCon(mem, SUNTRUE));

  const RootSet roots(model);
  run.roots = &roots;
  std::vector<int> found(static_cast<size_t>(roots.size()), 0);
  if (roots.size() > 0)
    DAEDALUS_SUNDIALS_CHECK(IDARootInit(mem, roots.size(), RootFn));

  auto sample = [&](double t, bool first) {
    const auto Y = ConstView(y.get());
    run.Evaluate(t, Y.data());
    IdealMultipliers(run.ws, &run.kkt, &run.reported);
    Eigen::VectorXd w;
    if (!first) {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(IDAGetQuad(mem, &tq, yq.get()));
      w = ConstView(yq.get());
    }
    recorder.Record(run.ws, run.reported.vdot, run.reported.lambda, w, 0.0,
                    first);
  };
  auto collect_stats = [&] {
    IDAGetNumSteps(mem, &sum.stats.steps);
    IDAGetNumResEvals(mem, &sum.stats.rhs_evals);
    sum.residual_evals = sum.stats.rhs_evals;
    IDAGetNumJacEvals(mem, &sum.stats.jacobian_evals);
    IDAGetNumErrTestFails(mem, &sum.stats.error_test_failures);
    IDAGetNumNonlinSolvConvFails(mem, &sum.stats.nonlinear_conv_failures);
  };

  try {
    sample(options.t0, true);
    const long nout = static_cast<long>(
        std::ceil((options.t_end - options.t0) / options.output_step - 1e-9));
    for (long k = 1; k <= nout; ++k) {
      const double tout =
          std::min(options.t0 + k * options.output_step, options.t_end);
      double tret = 0.0;
      run.Reset();
      const int flag =
          IDASolve(mem, tout, &tret, y.get(), yp.get(), IDA_NORMAL);
      if (flag < 0) {
        std::unique_ptr<char, decltype(&std::free)> name(
            IDAGetReturnFlagName(flag), &std::free);
        std::ostringstream os;
        os << "IDASolve failed with " << name.get() << " (flag " << flag
           << ") at t = " << tret;
        os << run.Detail();
        os << "; hint: " << HintFor(flag, options.formulation);
        sum.error = os.str();
        collect_stats();
        return sum;
      }
      sample(tret, false);
      if (flag == IDA_ROOT_RETURN) {
        DAEDALUS_SUNDIALS_CHECK(IDAGetRootInfo(mem, found.data()));
        if (roots.Record(model, tret, found.data(), &sum)) break;
        if (tret < tout) --k;
        continue;
      }
      const Sample& f = sum.final;
      if (options.drift_tol > 0.0 &&
          std::max(f.drift_position, f.drift_velocity) > options.drift_tol) {
        std::ostringstream os;
        os << "drift " << std::max(f.drift_position, f.drift_velocity)
           << " exceeds --drift-tol " << options.drift_tol << " at t = " << tret
           << " (IDAS runs do not escalate); hint: tighten --rtol/--atol or "
              "use --formulation ggl";
        sum.error = os.str();
        collect_stats();
        return sum;
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

}  // namespace daedalus::internal
