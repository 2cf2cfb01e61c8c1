// The evaluation behind the structure-preserving schemes
// (include/daedalus/symplectic.hpp): derivatives of the Lagrangian by dual
// numbers, the applied forces as kicks, Newton solves whose tangents are
// iterated with their values, and the implicit symplectic Euler step.
// Shared by the public step functions (symplectic.cpp) and the fixed-step
// adapter (fixed_step.cpp).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "daedalus/dynamics.hpp"
#include "daedalus/symplectic.hpp"

namespace daedalus::internal {

constexpr double kEps = std::numeric_limits<double>::epsilon();
// Newton iterations of one implicit solve: it converges quadratically from
// the previous step's value, so a handful reach round-off; 50 only guards
// against a slow approach near a fold of the implicit equation.
constexpr int kMaxNewton = 50;

inline D1 EvalL(const ModelData& d, const Point<D1>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f1(x);
  D1 l = d.kinetic.f1(x);
  if (d.potential) l -= d.potential.f1(x);
  return l;
}
inline D2 EvalL(const ModelData& d, const Point<D2>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f2(x);
  D2 l = d.kinetic.f2(x);
  if (d.potential) l -= d.potential.f2(x);
  return l;
}

inline double Val(double x) { return x; }
inline double Val(const D1& x) { return x.v; }
inline double Tan(double) { return 0.0; }
inline double Tan(const D1& x) { return x.d; }

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

/// True when `integrator` fits `model` at (t, q, v); otherwise `why`.
bool Fits(const Model& model,
          Integrator integrator,
          Evaluator* ev,
          double t,
          const Eigen::VectorXd& q,
          const Eigen::VectorXd& v,
          std::string* why);

}  // namespace daedalus::internal
