// Stormer-Verlet, implicit symplectic Euler and RATTLE
// (include/daedalus/symplectic.hpp, docs/analysis.md).
#include "daedalus/symplectic.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "integrate/integrator_common.hpp"

namespace daedalus {

namespace {

using internal::ModelData;

constexpr double kEps = std::numeric_limits<double>::epsilon();
// Newton iterations of one implicit solve: it converges quadratically from
// the previous step's value, so a handful reach round-off; 50 only guards
// against a slow approach near a fold of the implicit equation.
constexpr int kMaxNewton = 50;

D1 EvalL(const ModelData& d, const Point<D1>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f1(x);
  D1 l = d.kinetic.f1(x);
  if (d.potential) l -= d.potential.f1(x);
  return l;
}
D2 EvalL(const ModelData& d, const Point<D2>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f2(x);
  D2 l = d.kinetic.f2(x);
  if (d.potential) l -= d.potential.f2(x);
  return l;
}

double Val(double x) { return x; }
double Val(const D1& x) { return x.v; }
double Tan(double) { return 0.0; }
double Tan(const D1& x) { return x.d; }

template <class S>
Eigen::VectorXd Values(const VecX<S>& x) {
  Eigen::VectorXd y(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = Val(x[i]);
  return y;
}
template <class S>
Eigen::VectorXd Tangents(const VecX<S>& x) {
  Eigen::VectorXd y(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = Tan(x[i]);
  return y;
}
template <class S>
VecX<S> Combine(const Eigen::VectorXd& v, const Eigen::VectorXd& d) {
  VecX<S> y(v.size());
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<S, double>) {
      y[i] = v[i];
    } else {
      y[i] = S(v[i], d[i]);
    }
  }
  return y;
}

// Everything a step needs: the model's functions and lifted parameters.
struct Evaluator {
  const Model& model;
  const ModelData& d;
  Eigen::VectorXd p0;
  VecX<D1> p1;
  VecX<D2> p2;
  int n;
  long newton_iterations = 0;

  Evaluator(const Model& m, const Eigen::VectorXd& params)
      : model(m), d(m.data()), p0(params), n(m.nv()) {
    if (params.size() != m.num_parameters()) {
      throw std::invalid_argument("model '" + m.name() +
                                  "': " + std::to_string(params.size()) +
                                  " parameter values given, the model has " +
                                  std::to_string(m.num_parameters()));
    }
    p1.resize(params.size());
    p2.resize(params.size());
    for (Eigen::Index i = 0; i < params.size(); ++i) {
      p1[i] = D1(params[i], 0.0);
      p2[i] = D2(D1(params[i], 0.0), D1(0.0, 0.0));
    }
  }

  // Gradient of L in v (wrt_v) or in q, at scalar type S: a first-order
  // sweep for doubles, a second-order one carrying the input tangents for
  // S = D1.
  template <class S>
  VecX<S> Grad(double t, const VecX<S>& q, const VecX<S>& v, bool wrt_v) {
    VecX<S> g(n);
    if constexpr (std::is_same_v<S, double>) {
      VecX<D1> q1(n), v1(n);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          q1[j] = D1(q[j], !wrt_v && j == i ? 1.0 : 0.0);
          v1[j] = D1(v[j], wrt_v && j == i ? 1.0 : 0.0);
        }
        g[i] = EvalL(d, Point<D1>{q1, v1, D1(t, 0.0), p1}).d;
      }
    } else {
      VecX<D2> q2(n), v2(n);
      const D2 t2(D1(t, 0.0), D1(0.0, 0.0));
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          q2[j] = D2(D1(q[j].v, !wrt_v && j == i ? 1.0 : 0.0), D1(q[j].d, 0.0));
          v2[j] = D2(D1(v[j].v, wrt_v && j == i ? 1.0 : 0.0), D1(v[j].d, 0.0));
        }
        const D2 r = EvalL(d, Point<D2>{q2, v2, t2, p2});
        g[i] = D1(r.v.d, r.d.d);
      }
    }
    return g;
  }

  // Second derivatives at doubles: H_ij = d2L / da_i dv_j with a = v
  // (the mass matrix) or a = q.
  Eigen::MatrixXd Hessian(double t,
                          const Eigen::VectorXd& q,
                          const Eigen::VectorXd& v,
                          bool first_in_v) {
    Eigen::MatrixXd H(n, n);
    VecX<D2> q2(n), v2(n);
    const D2 t2(D1(t, 0.0), D1(0.0, 0.0));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        for (int k = 0; k < n; ++k) {
          q2[k] = D2(D1(q[k], !first_in_v && k == i ? 1.0 : 0.0), D1(0.0, 0.0));
          v2[k] = D2(D1(v[k], first_in_v && k == i ? 1.0 : 0.0),
                     D1(k == j ? 1.0 : 0.0, 0.0));
        }
        H(i, j) = EvalL(d, Point<D2>{q2, v2, t2, p2}).d.d;
      }
    }
    return H;
  }

  // Applied force Q(t, q) = sum_k B_k(q) u_k + Q_r at scalar type S (v
  // enters only as a value: the schemes require forces independent of v).
  template <class S>
  VecX<S> Force(double t, const VecX<S>& q, const Eigen::VectorXd& v) {
    VecX<S> f = VecX<S>::Zero(n);
    if (model.num_inputs() == 0 && !d.other_loads) return f;
    const VecX<S> vs = Combine<S>(v, Eigen::VectorXd::Zero(n));
    const S ts(t);
    VecX<S> col;
    if constexpr (std::is_same_v<S, double>) {
      const Point<double> x{q, vs, ts, p0};
      for (const auto& in : d.inputs) {
        in.column.f0(x, col);
        f += col * in.value.f0(x);
      }
      if (d.other_loads) {
        d.other_loads.f0(x, col);
        f += col;
      }
    } else {
      const Point<D1> x{q, vs, ts, p1};
      for (const auto& in : d.inputs) {
        in.column.f1(x, col);
        f += col * in.value.f1(x);
      }
      if (d.other_loads) {
        d.other_loads.f1(x, col);
        f += col;
      }
    }
    return f;
  }

  // Newton on R(x) = 0 with a Jacobian at the values; for S = D1 the
  // tangent part is iterated with the same matrix until it has converged
  // too (the fixed point of that linear iteration is the exact tangent).
  template <class S, class Residual, class Jac>
  void Newton(VecX<S>* x,
              const Residual& residual,
              const Jac& jacobian,
              double t,
              const char* what) {
    double last = std::numeric_limits<double>::infinity();
    for (int it = 0; it < kMaxNewton; ++it) {
      const VecX<S> r = residual(*x);
      const Eigen::VectorXd rv = Values(r), rd = Tangents(r);
      if (!rv.allFinite() || !rd.allFinite()) break;
      const Eigen::PartialPivLU<Eigen::MatrixXd> lu(jacobian(Values(*x)));
      ++newton_iterations;
      const Eigen::VectorXd dv = lu.solve(rv), dd = lu.solve(rd);
      *x -= Combine<S>(dv, dd);
      const Eigen::VectorXd xv = Values(*x), xd = Tangents(*x);
      // Converged when the update is at round-off of the unknowns.
      const double size =
          dv.cwiseAbs().maxCoeff() / (1.0 + xv.cwiseAbs().maxCoeff()) +
          dd.cwiseAbs().maxCoeff() / (1.0 + xd.cwiseAbs().maxCoeff());
      if (!(size == size)) break;
      if (size <= 4 * kEps) return;
      // Stagnation at round-off level: the update stopped shrinking.
      if (size < 1e-12 && size >= 0.5 * last) return;
      last = size;
    }
    std::ostringstream os;
    os << "model '" << model.name() << "': the implicit " << what
       << " did not converge at t = " << t
       << " (no regular solution near the previous state); reduce --step";
    throw std::runtime_error(os.str());
  }

  // v with L_v(t, q, v) = p (Newton from `guess` on the mass matrix).
  template <class S>
  VecX<S> Velocity(double t,
                   const VecX<S>& q,
                   const VecX<S>& p,
                   const VecX<S>& guess) {
    VecX<S> v = guess;
    const Eigen::VectorXd qv = Values(q);
    Newton<S>(
        &v,
        [&](const VecX<S>& x) { return VecX<S>(Grad<S>(t, q, x, true) - p); },
        [&](const Eigen::VectorXd& x) { return Hessian(t, qv, x, true); }, t,
        "velocity solve (dL/dv = p)");
    return v;
  }

  template <class S>
  void EulerStep(double t,
                 double h,
                 VecX<S>* q,
                 VecX<S>* p,
                 EulerMomentum variant,
                 const Eigen::VectorXd& v_guess) {
    const VecX<S> q0 = *q, p0 = *p;
    const VecX<S> guess = Combine<S>(v_guess, Eigen::VectorXd::Zero(n));
    const VecX<S> f0 = Force<S>(t, q0, v_guess);
    VecX<S> v1;
    if (variant == EulerMomentum::kNew) {
      // R(v1) = L_v(q0, v1) - p0 - h (L_q(q0, v1) + Q(t, q0)).
      v1 = Velocity<S>(t, q0, p0, guess);
      const Eigen::VectorXd qv = Values(q0);
      Newton<S>(
          &v1,
          [&](const VecX<S>& x) {
            return VecX<S>(Grad<S>(t, q0, x, true) - p0 -
                           h * (Grad<S>(t, q0, x, false) + f0));
          },
          [&](const Eigen::VectorXd& x) {
            return Eigen::MatrixXd(Hessian(t, qv, x, true) -
                                   h * Hessian(t, qv, x, false));
          },
          t, "symplectic Euler step");
      *p = p0 + h * (Grad<S>(t, q0, v1, false) + f0);
    } else {
      const VecX<S> v0 = Velocity<S>(t, q0, p0, guess);
      *p = p0 + h * (Grad<S>(t, q0, v0, false) + f0);
      v1 = Velocity<S>(t, q0, *p, v0);
    }
    *q = q0 + h * v1;
  }
};

// The scheme's fit to the model, checked at one state.
bool Fits(const Model& model,
          Integrator integrator,
          Evaluator* ev,
          double t,
          const Eigen::VectorXd& q,
          const Eigen::VectorXd& v,
          std::string* why) {
  const std::string scheme = ToString(integrator);
  const std::string where =
      "--integrator " + scheme + " does not fit model '" + model.name() + "': ";
  auto fail = [&](const std::string& m) {
    if (why) *why = where + m;
    return false;
  };
  if (model.has_damping())
    return fail(
        "it declares damping (dissipation contracts phase-space area, so no "
        "symplectic map reproduces it); use a SUNDIALS integrator "
        "(cvodes-bdf, cvodes-adams, idas)");
  for (const auto& c : model.constraints()) {
    if (c.kind == ConstraintKind::kNonholonomic)
      return fail("constraint '" + c.name +
                  "' is nonholonomic (the flow is not Hamiltonian); use a "
                  "SUNDIALS integrator");
    if (integrator != Integrator::kRattle)
      return fail("constraint '" + c.name + "' needs a constrained scheme; " +
                  (c.kind == ConstraintKind::kMoving
                       ? std::string("it moves, so use a SUNDIALS integrator")
                       : std::string("use --integrator rattle")));
    if (c.kind == ConstraintKind::kMoving)
      return fail("constraint '" + c.name +
                  "' moves (Phi_t != 0); RATTLE needs stationary holonomic "
                  "constraints; use a SUNDIALS integrator");
  }
  // Forces must not depend on v: directional derivatives along each e_j.
  const auto& d = model.data();
  const int n = model.nv();
  {
    VecX<D1> q1(n), v1(n), col;
    for (int i = 0; i < n; ++i) q1[i] = D1(q[i], 0.0);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) v1[i] = D1(v[i], i == j ? 1.0 : 0.0);
      const Point<D1> x{q1, v1, D1(t, 0.0), ev->p1};
      for (const auto& in : d.inputs) {
        in.column.f1(x, col);
        bool dep = in.value.f1(x).d != 0.0;
        for (Eigen::Index r = 0; r < col.size(); ++r) dep |= col[r].d != 0.0;
        if (dep)
          return fail("input '" + in.name + "' depends on the velocity of '" +
                      model.coordinate_names()[j] +
                      "' (a velocity-dependent force is not a Hamiltonian "
                      "kick); use a SUNDIALS integrator");
      }
      if (d.other_loads) {
        d.other_loads.f1(x, col);
        for (Eigen::Index r = 0; r < col.size(); ++r) {
          if (col[r].d != 0.0)
            return fail(
                "the other loads depend on the velocity of '" +
                model.coordinate_names()[j] +
                "' (not a Hamiltonian kick); use a SUNDIALS integrator");
        }
      }
    }
  }
  if (integrator == Integrator::kStormerVerlet ||
      integrator == Integrator::kRattle) {
    // Separable: L_qv == 0, i.e. M independent of q and no q-dependent
    // terms linear in v. Checked at v and at v + 1 (v = 0 hides M(q)).
    const Eigen::VectorXd v2 = v + Eigen::VectorXd::Ones(n);
    for (const Eigen::VectorXd* vv : {&v, &v2}) {
      const Eigen::MatrixXd Lqv = ev->Hessian(t, q, *vv, false);
      if (Lqv.cwiseAbs().maxCoeff() != 0.0)
        return fail(
            "its Hamiltonian is not separable (the mass matrix or a term "
            "linear in v depends on q: d2L/dq dv != 0 at t = " +
            std::to_string(t) + "); use --integrator symplectic-euler" +
            (model.nc() > 0 ? std::string(" after reducing the constraints, "
                                          "or a SUNDIALS integrator")
                            : std::string()));
    }
  }
  return true;
}

bool IsSymplectic(Integrator i) {
  return i == Integrator::kStormerVerlet || i == Integrator::kSymplecticEuler ||
         i == Integrator::kRattle;
}

}  // namespace

CanonicalState SymplecticEulerStep(const Model& model,
                                   const Eigen::VectorXd& params,
                                   double t,
                                   double h,
                                   const CanonicalState& x,
                                   EulerMomentum variant) {
  Evaluator ev(model, params);
  VecX<double> q = x.q, p = x.p;
  const Eigen::VectorXd guess =
      ev.Velocity<double>(t, q, p, Eigen::VectorXd::Zero(model.nv()));
  ev.EulerStep<double>(t, h, &q, &p, variant, guess);
  return {q, p};
}

Eigen::MatrixXd SymplecticEulerStepJacobian(const Model& model,
                                            const Eigen::VectorXd& params,
                                            double t,
                                            double h,
                                            const CanonicalState& x,
                                            EulerMomentum variant) {
  Evaluator ev(model, params);
  const int n = model.nv();
  const Eigen::VectorXd guess =
      ev.Velocity<double>(t, x.q, x.p, Eigen::VectorXd::Zero(n));
  Eigen::MatrixXd jac(2 * n, 2 * n);
  for (int k = 0; k < 2 * n; ++k) {
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(n), dp = dq;
    if (k < n) {
      dq[k] = 1.0;
    } else {
      dp[k - n] = 1.0;
    }
    VecX<D1> q = Combine<D1>(x.q, dq), p = Combine<D1>(x.p, dp);
    ev.EulerStep<D1>(t, h, &q, &p, variant, guess);
    jac.col(k).head(n) = Tangents(q);
    jac.col(k).tail(n) = Tangents(p);
  }
  return jac;
}

Eigen::VectorXd MomentumAt(const Model& model,
                           const Eigen::VectorXd& params,
                           double t,
                           const Eigen::VectorXd& q,
                           const Eigen::VectorXd& v) {
  Evaluator ev(model, params);
  return ev.Grad<double>(t, q, v, true);
}

Eigen::VectorXd VelocityAt(const Model& model,
                           const Eigen::VectorXd& params,
                           double t,
                           const Eigen::VectorXd& q,
                           const Eigen::VectorXd& p) {
  Evaluator ev(model, params);
  return ev.Velocity<double>(t, q, p, Eigen::VectorXd::Zero(model.nv()));
}

bool SchemeFits(const Model& model,
                Integrator integrator,
                const Eigen::VectorXd& params,
                double t,
                const Eigen::VectorXd& q,
                const Eigen::VectorXd& v,
                std::string* why) {
  if (!IsSymplectic(integrator)) {
    if (why)
      *why = std::string(ToString(integrator)) +
             " is not a structure-preserving scheme";
    return false;
  }
  Evaluator ev(model, params);
  return Fits(model, integrator, &ev, t, q, v, why);
}

EnergyBehaviour AnalyzeEnergy(const std::vector<Sample>& samples,
                              double window) {
  EnergyBehaviour e;
  const size_t n = samples.size();
  if (n == 0) return e;
  const size_t w = std::max<size_t>(1, static_cast<size_t>(window * n));
  double st = 0, se = 0, stt = 0, ste = 0;
  for (size_t i = 0; i < n; ++i) {
    const double t = samples[i].t, r = samples[i].energy_residual;
    e.max_error = std::max(e.max_error, std::abs(r));
    if (i < w) e.early_max = std::max(e.early_max, std::abs(r));
    if (i + w >= n) e.late_max = std::max(e.late_max, std::abs(r));
    st += t;
    se += r;
    stt += t * t;
    ste += t * r;
  }
  const double dn = static_cast<double>(n);
  const double den = dn * stt - st * st;
  e.drift_rate = den > 0.0 ? (dn * ste - st * se) / den : 0.0;
  e.final_error = samples.back().energy_residual;
  return e;
}

namespace internal {

SimulationSummary SimulateStructurePreserving(const Model& model,
                                              const InitialState& x0,
                                              const Eigen::VectorXd& params,
                                              const SimulationOptions& options,
                                              Observer* observer) {
  SimulationSummary sum = StartSummary(model, options);
  const Integrator scheme = options.integrator;
  const int n = model.nv(), nc = model.nc();
  Workspace ws(model);
  ws.use_compiled = options.compiled;
  ws.SetParameters(params);
  KktSolver kkt(model, options.kkt);
  KktResult r;
  Evaluator ev(model, params);
  Recorder recorder(model, &sum, observer);
  const QuadLayout& layout = recorder.layout();
  const RootSet roots(model);

  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!MakeConsistent(&ws, options, &q, &v, &sum)) return sum;
  // The fit is a property of the model's functions; a run checks it where
  // it starts (forces' v-dependence and separability are structural).
  std::string why;
  if (!Fits(model, scheme, &ev, options.t0, q, v, &why))
    throw std::invalid_argument(why);

  const double h = options.step;
  const long steps_per_output =
      std::max(1L, std::lround(options.output_step / h));
  const long nsteps =
      static_cast<long>(std::ceil((options.t_end - options.t0) / h - 1e-9));

  Eigen::VectorXd quad = Eigen::VectorXd::Zero(layout.size());
  Eigen::VectorXd g_prev(layout.size()), g(layout.size());
  std::vector<double> root_prev(static_cast<size_t>(roots.size())),
      root_now(static_cast<size_t>(roots.size()));
  long force_evals = 0;

  // Evaluates the state for output and work integrands.
  auto evaluate = [&](double t) {
    ws.SetState(t, q, v);
    EvaluateAll(&ws);
    kkt.Solve(ws, ws.bias, &r);
    QuadratureIntegrands(layout, ws, r.lambda, 0.0, g);
    if (roots.size() > 0) roots.Evaluate(ws, r.lambda, root_now.data());
  };
  // Force (B u + Q_r + L_q for separable L) and J at (t, qq).
  Eigen::VectorXd F(n);
  Eigen::MatrixXd Jc(nc, n);
  auto force_at = [&](double t, const Eigen::VectorXd& qq,
                      const Eigen::VectorXd& vv) {
    ws.SetState(t, qq, vv);
    EvaluateAll(&ws);
    ++force_evals;
    F = ws.Bu - ws.h;  // separable: h = -L_q - Q_r
    Jc = ws.J;
  };

  // Constant mass matrix of the separable schemes, factored once.
  Eigen::LLT<Eigen::MatrixXd> llt_m;
  Eigen::VectorXd p;  // momenta (symplectic Euler)
  try {
    evaluate(options.t0);
    recorder.Record(ws, r.vdot, r.lambda, Eigen::VectorXd(), 0.0, true);
    g_prev = g;
    root_prev = root_now;
    if (scheme != Integrator::kSymplecticEuler) {
      llt_m.compute(ws.M);
      if (llt_m.info() != Eigen::Success)
        throw KktError("model '" + model.name() +
                       "': mass matrix not positive definite");
      force_at(options.t0, q, v);
    } else {
      p = ev.Grad<double>(options.t0, q, v, true);
    }
    double t = options.t0;
    for (long k = 1; k <= nsteps; ++k) {
      const double hk = std::min(h, options.t_end - t);
      const double t1 = (k == nsteps) ? options.t_end : t + hk;
      if (scheme == Integrator::kSymplecticEuler) {
        ev.EulerStep<double>(t, hk, &q, &p, EulerMomentum::kNew, v);
        ++force_evals;
        v = ev.Velocity<double>(t1, q, p, v);
      } else {
        // F and Jc hold the force and Jacobian at (t, q) from the previous
        // step's end (forces do not depend on v).
        Eigen::VectorXd vh = v + 0.5 * hk * llt_m.solve(F);
        if (scheme == Integrator::kRattle && nc > 0) {
          // Position multipliers: Phi(q0 + h vh + h^2/2 M^-1 J0' lam) = 0.
          const Eigen::MatrixXd Y0 = llt_m.solve(Jc.transpose());
          const Eigen::VectorXd qf = q + hk * vh;
          Eigen::VectorXd lam = Eigen::VectorXd::Zero(nc), q1 = qf;
          double res = std::numeric_limits<double>::infinity(), last = res;
          for (int it = 0; it < kMaxNewton; ++it) {
            q1 = qf + 0.5 * hk * hk * (Y0 * lam);
            ws.SetState(t1, q1, vh);
            EvaluatePosition(&ws);
            res = ws.phi.cwiseAbs().maxCoeff();
            if (res == 0.0 || (it > 0 && res >= 0.5 * last)) break;
            last = res;
            const Eigen::MatrixXd A = 0.5 * hk * hk * (ws.J * Y0);
            lam -= A.partialPivLu().solve(ws.phi);
            ev.newton_iterations++;
          }
          // Round-off of Phi for unknowns of size |q|: a converged
          // iteration sits far below 1e-10 (the tests see ~1e-16).
          if (!(res <= 1e-10)) {
            std::ostringstream os;
            os << "RATTLE position solve did not converge at t = " << t1
               << " (max |Phi| = " << res << "); reduce --step";
            throw std::runtime_error(os.str());
          }
          q = q1;
          vh += 0.5 * hk * (Y0 * lam);
        } else {
          q = q + hk * vh;
        }
        force_at(t1, q, vh);
        Eigen::VectorXd w = vh + 0.5 * hk * llt_m.solve(F);
        if (scheme == Integrator::kRattle && nc > 0) {
          // Velocity multipliers: the M-orthogonal projection onto J v = 0.
          const Eigen::MatrixXd Y1 = llt_m.solve(Jc.transpose());
          const Eigen::MatrixXd S1 = Jc * Y1;
          w -= Y1 * S1.llt().solve(Jc * w);
        }
        v = w;
      }
      t = t1;
      if (!q.allFinite() || !v.allFinite()) {
        std::ostringstream os;
        os << "the state became non-finite at t = " << t << " after step " << k
           << " of h = " << h
           << "; the step is beyond the scheme's stability limit (for a "
              "harmonic mode of frequency w, symplectic Euler and "
              "Stormer-Verlet need h < 2/w); reduce --step";
        throw std::runtime_error(os.str());
      }
      evaluate(t);
      quad += 0.5 * hk * (g_prev + g);
      g_prev = g;
      // Events: a sign change between two steps, located linearly.
      bool stop = false;
      for (int e = 0; e < roots.size(); ++e) {
        const double a = root_prev[e], b = root_now[e];
        if ((a < 0.0 && b >= 0.0) || (a > 0.0 && b <= 0.0)) {
          // One root at a time through the shared bookkeeping (events,
          // feasibility intervals), at its linearly interpolated time.
          std::vector<int> found(static_cast<size_t>(roots.size()), 0);
          found[e] = b > a ? 1 : -1;
          if (roots.Record(model, t - hk + hk * (a / (a - b)), found.data(),
                           &sum))
            stop = true;
        }
      }
      root_prev = root_now;
      if (k % steps_per_output == 0 || k == nsteps || stop)
        recorder.Record(ws, r.vdot, r.lambda, quad, 0.0, false);
      sum.stats.steps = k;
      if (stop) break;
    }
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    sum.error = std::string(ToString(scheme)) + ": " + e.what();
    sum.stats.rhs_evals = force_evals;
    sum.stats.jacobian_evals = ev.newton_iterations;
    return sum;
  }
  sum.stats.rhs_evals = force_evals;
  sum.stats.jacobian_evals = ev.newton_iterations;
  sum.ok = true;
  return sum;
}

}  // namespace internal

}  // namespace daedalus
