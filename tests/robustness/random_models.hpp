// Randomly generated small models for the model fuzzer
// (random_models_test.cpp, issue 18): 1 to 4 coordinates, a positive
// definite kinetic energy (constant or configuration-dependent, written as
// T, as a mass matrix or inside a Lagrangian), a potential with springs,
// gravity-like terms, a quartic and a coupling cosine, damping, an input
// and other loads, and holonomic, moving and nonholonomic constraints of
// one or two rows. Every coefficient comes from one std::mt19937_64 seed,
// so a case is reproduced from its seed alone.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::fuzz {

/// One row of a constraint. Holonomic and moving rows:
///   form 0: a'q - b,  form 1: sum w_i (q_i - c_i)^2 - b,
///   form 2: sin(q_k) + a'q - b,
/// plus amp sin(omega t) + rate t for a moving row. Nonholonomic rows:
///   sum_i (a_i + w_i cos(q_k)) v_i + b q_k + amp sin(omega t)
///   + nonaffine v_k^2   (nonaffine = 0: affine in v, as required).
struct RowSpec {
  int form = 0;
  Eigen::VectorXd a, w, c;
  double b = 0.0;
  int k = 0;
  double amp = 0.0, omega = 0.0, rate = 0.0;
  double nonaffine = 0.0;
};

struct ConstraintSpec {
  std::string name;
  ConstraintKind kind = ConstraintKind::kHolonomic;
  std::vector<RowSpec> rows;
};

struct ModelSpec {
  int n = 1;
  // Kinetic energy m (v' M0 v + sum_i mq_i sin(q_{mq_coord_i})^2 v_i^2) / 2,
  // m the parameter "m"; `kinetic_form` 0: KineticEnergy, 1: MassMatrix,
  // 2: Lagrangian (T - V).
  Eigen::MatrixXd M0;
  Eigen::VectorXd mq;
  std::vector<int> mq_coord;
  int kinetic_form = 0;
  // Potential sum_i (k_i q_i^2 / 2 + g_i q_i + quartic_i q_i^4)
  // + cos_c cos(q_ci - q_cj).
  Eigen::VectorXd k, g, quartic;
  double cos_c = 0.0;
  int ci = 0, cj = 0;
  Eigen::VectorXd damping;  // diagonal, empty: none
  double load_amp = 0.0, load_omega = 0.0;
  int load_coord = 0;         // other loads: amp sin(omega t) - 0.1 v on it
  Eigen::VectorXd input_col;  // empty: no input
  double input_u = 0.0;
  std::vector<ConstraintSpec> constraints;
  bool quadrature = false;  // "speed2": the integral of v'v
  std::string unilateral;   // a one-row holonomic or moving constraint
  int event_coord = -1;     // event "stop": q_k - event_level
  double event_level = 0.0;
  Eigen::VectorXd q0, v0;
  double m = 1.0;  // value of the parameter "m" (declared > 0)
  bool non_affine() const {
    for (const auto& c : constraints)
      for (const auto& r : c.rows)
        if (r.nonaffine != 0.0) return true;
    return false;
  }
};

/// Evaluates one constraint at any scalar type.
template <class P>
VecX<typename std::decay_t<P>::Scalar> EvalConstraint(const ConstraintSpec& c,
                                                      const P& x) {
  using S = typename std::decay_t<P>::Scalar;
  VecX<S> out(static_cast<Eigen::Index>(c.rows.size()));
  for (size_t r = 0; r < c.rows.size(); ++r) {
    const RowSpec& s = c.rows[r];
    const auto n = s.a.size();
    S phi = S(0.0);
    if (c.kind == ConstraintKind::kNonholonomic) {
      for (Eigen::Index i = 0; i < n; ++i)
        phi += (s.a[i] + s.w[i] * cos(x.q[s.k])) * x.v[i];
      phi += s.b * x.q[s.k];
      if (s.amp != 0.0) phi += s.amp * sin(s.omega * x.t);
      if (s.nonaffine != 0.0) phi += s.nonaffine * x.v[s.k] * x.v[s.k];
    } else {
      if (s.form == 1) {
        for (Eigen::Index i = 0; i < n; ++i)
          if (s.w[i] != 0.0) {
            const S d = x.q[i] - s.c[i];
            phi += s.w[i] * d * d;
          }
      } else {
        for (Eigen::Index i = 0; i < n; ++i)
          if (s.a[i] != 0.0) phi += s.a[i] * x.q[i];
        if (s.form == 2) phi += sin(x.q[s.k]);
      }
      phi = phi - s.b;
      if (c.kind == ConstraintKind::kMoving)
        phi += s.amp * sin(s.omega * x.t) + s.rate * x.t;
    }
    out[static_cast<Eigen::Index>(r)] = phi;
  }
  return out;
}

template <class P>
auto KineticOf(const ModelSpec& s, const P& x) {
  using S = typename std::decay_t<P>::Scalar;
  S t = S(0.0);
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.n; ++j)
      if (s.M0(i, j) != 0.0) t += 0.5 * s.M0(i, j) * x.v[i] * x.v[j];
  for (int i = 0; i < s.n; ++i)
    if (s.mq[i] != 0.0) {
      const S sn = sin(x.q[s.mq_coord[static_cast<size_t>(i)]]);
      t += 0.5 * s.mq[i] * sn * sn * x.v[i] * x.v[i];
    }
  return S(x.p[0] * t);
}

template <class P>
auto PotentialOf(const ModelSpec& s, const P& x) {
  using S = typename std::decay_t<P>::Scalar;
  S v = S(0.0);
  for (int i = 0; i < s.n; ++i) {
    const S& q = x.q[i];
    if (s.k[i] != 0.0) v += 0.5 * s.k[i] * q * q;
    if (s.g[i] != 0.0) v += s.g[i] * q;
    if (s.quartic[i] != 0.0) v += s.quartic[i] * q * q * q * q;
  }
  if (s.cos_c != 0.0) v += s.cos_c * cos(x.q[s.ci] - x.q[s.cj]);
  return v;
}

/// The model of a spec. A non-affine nonholonomic row makes Build() throw
/// once the library checks affinity (issue 18, item 4).
inline Model BuildModel(std::shared_ptr<const ModelSpec> sp) {
  const ModelSpec& s = *sp;
  ModelBuilder b("random");
  std::vector<std::string> names;
  // (std::string("q") += ...: GCC 12 warns about "q" + std::string,
  // -Wrestrict, GCC bug 105329.)
  for (int i = 0; i < s.n; ++i)
    names.push_back(std::string("q") += std::to_string(i));
  b.Coordinates(names);
  b.Parameter("m", 1.0, ParamRange::Positive());
  if (s.kinetic_form == 2) {
    b.Lagrangian([sp](const auto& x) {
      return KineticOf(*sp, x) - PotentialOf(*sp, x);
    });
  } else {
    if (s.kinetic_form == 0) {
      b.KineticEnergy([sp](const auto& x) { return KineticOf(*sp, x); });
    } else {
      b.MassMatrix([sp](const auto& x) {
        using S = Scalar<decltype(x)>;
        MatX<S> m(sp->n, sp->n);
        for (int i = 0; i < sp->n; ++i)
          for (int j = 0; j < sp->n; ++j) m(i, j) = x.p[0] * sp->M0(i, j);
        for (int i = 0; i < sp->n; ++i)
          if (sp->mq[i] != 0.0) {
            const S sn = sin(x.q[sp->mq_coord[static_cast<size_t>(i)]]);
            m(i, i) += x.p[0] * sp->mq[i] * sn * sn;
          }
        return m;
      });
    }
    b.PotentialEnergy([sp](const auto& x) { return PotentialOf(*sp, x); });
  }
  if (s.damping.size() > 0) {
    b.Damping([sp](const auto& x) {
      using S = Scalar<decltype(x)>;
      MatX<S> d = MatX<S>::Zero(sp->n, sp->n);
      for (int i = 0; i < sp->n; ++i) d(i, i) = sp->damping[i];
      return d;
    });
  }
  if (s.load_amp != 0.0) {
    b.OtherLoads([sp](const auto& x) {
      using S = Scalar<decltype(x)>;
      VecX<S> f = VecX<S>::Zero(sp->n);
      f[sp->load_coord] =
          sp->load_amp * sin(sp->load_omega * x.t) - 0.1 * x.v[sp->load_coord];
      return f;
    });
  }
  if (s.input_col.size() > 0) {
    b.Input(
        "push",
        [sp](const auto& x) {
          using S = Scalar<decltype(x)>;
          VecX<S> c(sp->n);
          for (int i = 0; i < sp->n; ++i) c[i] = sp->input_col[i];
          return c;
        },
        [sp](const auto& x) {
          using S = Scalar<decltype(x)>;
          return S(sp->input_u * cos(x.t));
        });
  }
  for (size_t ci = 0; ci < s.constraints.size(); ++ci) {
    const ConstraintSpec& c = s.constraints[ci];
    auto f = [sp, ci](const auto& x) {
      return EvalConstraint(sp->constraints[ci], x);
    };
    const int rows = static_cast<int>(c.rows.size());
    if (c.kind == ConstraintKind::kHolonomic)
      b.Holonomic(c.name, f, rows);
    else if (c.kind == ConstraintKind::kMoving)
      b.Moving(c.name, f, rows);
    else
      b.Nonholonomic(c.name, f, rows);
  }
  if (!s.unilateral.empty()) b.Unilateral(s.unilateral);
  if (s.quadrature) {
    b.Quadrature("speed2", [sp](const auto& x) {
      using S = Scalar<decltype(x)>;
      S r = S(0.0);
      for (int i = 0; i < sp->n; ++i) r += x.v[i] * x.v[i];
      return r;
    });
  }
  if (s.event_coord >= 0) {
    b.Event("stop", [sp](const auto& x) {
      return x.q[sp->event_coord] - sp->event_level;
    });
  }
  return std::move(b).Build();
}

/// A random spec from `seed`. `p_nonaffine`: probability that a
/// nonholonomic row gets a v^2 term (the model is then invalid).
inline ModelSpec RandomSpec(std::uint64_t seed, double p_nonaffine) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), u01(0.0, 1.0);
  auto chance = [&](double p) { return u01(rng) < p; };
  auto pick = [&](int n) {
    return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng));
  };
  auto vec = [&](int n, double scale, double p_zero) {
    Eigen::VectorXd v(n);
    for (int i = 0; i < n; ++i) v[i] = chance(p_zero) ? 0.0 : scale * u(rng);
    return v;
  };
  ModelSpec s;
  const int n = s.n = 1 + pick(4);
  // M0 = A A' + c I (c > 0 keeps it positive definite); rarely a
  // coordinate without inertia, which the run must report.
  Eigen::MatrixXd A(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = u(rng);
  s.M0 = A * A.transpose() * (chance(0.5) ? 0.5 : 0.0) +
         (0.2 + u01(rng)) * Eigen::MatrixXd::Identity(n, n);
  if (chance(0.03)) {
    const int z = pick(n);
    s.M0.row(z).setZero();
    s.M0.col(z).setZero();
  }
  s.mq = Eigen::VectorXd::Zero(n);
  if (chance(0.4)) s.mq = vec(n, 1.0, 0.5).cwiseAbs();
  for (int i = 0; i < n; ++i) s.mq_coord.push_back(pick(n));
  s.kinetic_form = pick(3);
  s.k = vec(n, 20.0, 0.4).cwiseAbs();
  s.g = vec(n, 10.0, 0.5);
  s.quartic = vec(n, 2.0, 0.8).cwiseAbs();
  if (n > 1 && chance(0.3)) {
    s.cos_c = 5.0 * u(rng);
    s.ci = pick(n);
    s.cj = pick(n);
  }
  if (chance(0.3)) s.damping = vec(n, 2.0, 0.3).cwiseAbs();
  if (chance(0.2)) {
    s.load_amp = 3.0 * u(rng);
    s.load_omega = 10.0 * u01(rng);
    s.load_coord = pick(n);
  }
  if (chance(0.2)) {
    s.input_col = vec(n, 1.0, 0.3);
    s.input_u = 5.0 * u(rng);
  }
  s.q0 = vec(n, 1.0, 0.1);
  s.v0 = chance(0.5) ? vec(n, 1.0, 0.3) : Eigen::VectorXd::Zero(n);
  s.m = chance(0.02) ? (chance(0.5) ? 0.0 : -1.0) : 0.5 + 1.5 * u01(rng);
  // Constraint rows: usually fewer than n; sometimes as many, rarely more.
  int budget = pick(n + 1);
  if (chance(0.03)) budget = n + 1;
  for (int ci = 0; budget > 0; ++ci) {
    ConstraintSpec c;
    c.name = std::string("c") += std::to_string(ci);
    const int kind = pick(3);
    c.kind = kind == 0   ? ConstraintKind::kHolonomic
             : kind == 1 ? ConstraintKind::kMoving
                         : ConstraintKind::kNonholonomic;
    const int rows = budget >= 2 && chance(0.25) ? 2 : 1;
    for (int r = 0; r < rows; ++r) {
      RowSpec row;
      row.form = pick(3);
      row.a = vec(n, 1.0, 0.3);
      row.w = vec(n, 1.0, 0.4).cwiseAbs();
      row.c = vec(n, 1.0, 0.2);
      row.k = pick(n);
      if (row.a.cwiseAbs().maxCoeff() == 0.0) row.a[pick(n)] = 1.0;
      if (row.form == 1 && row.w.maxCoeff() == 0.0) row.w[pick(n)] = 1.0;
      // Satisfied at (q0, t = 0) unless shifted (the initial projection
      // then corrects q0 or fails with a message).
      ConstraintSpec one{c.name, c.kind, {row}};
      const double t0 = 0.0;
      const Eigen::VectorXd p = Eigen::VectorXd::Constant(1, 1.0);
      const Point<double> x{s.q0, s.v0, t0, p};
      row.b =
          c.kind == ConstraintKind::kNonholonomic
              ? 0.5 * u(rng)
              : EvalConstraint(one, x)[0] + (chance(0.1) ? 0.1 * u(rng) : 0);
      if (c.kind == ConstraintKind::kMoving) {
        row.amp = 0.5 * u(rng);
        row.omega = 6.0 * u01(rng);
        row.rate = chance(0.3) ? 0.5 * u(rng) : 0.0;
      }
      if (c.kind == ConstraintKind::kNonholonomic) {
        row.amp = chance(0.3) ? 0.5 * u(rng) : 0.0;
        row.omega = 5.0 * u01(rng);
        if (chance(p_nonaffine)) row.nonaffine = 0.5 + u01(rng);
      }
      c.rows.push_back(row);
    }
    budget -= rows;
    // Rarely the same constraint twice: redundant rows.
    s.constraints.push_back(c);
    if (chance(0.03)) {
      ConstraintSpec twin = c;
      twin.name += "_again";
      s.constraints.push_back(twin);
    }
  }
  // Drawn last, so that the draws above stay those of earlier versions.
  s.quadrature = chance(0.15);
  if (chance(0.1)) {
    for (const auto& c : s.constraints)
      if (c.kind != ConstraintKind::kNonholonomic && c.rows.size() == 1)
        s.unilateral = c.name;
  }
  if (chance(0.1)) {
    s.event_coord = pick(n);
    s.event_level = s.q0[s.event_coord] + 0.3 * u(rng);
  }
  return s;
}

/// Random options: any formulation; usually the integrator that fits it,
/// sometimes any (a refusal is then expected); random KKT method,
/// tolerances, Baumgarte gains, drift contract, evaluator and Newton
/// linear solver; a short run.
inline SimulationOptions RandomOptions(std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  auto chance = [&](double p) { return u01(rng) < p; };
  auto pick = [&](int n) {
    return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng));
  };
  SimulationOptions o;
  const Formulation forms[] = {
      Formulation::kUnstabilized, Formulation::kBaumgarte,
      Formulation::kProjection, Formulation::kGgl, Formulation::kIndex3};
  o.formulation = forms[pick(5)];
  const Integrator all[] = {Integrator::kCvodesBdf,
                            Integrator::kCvodesAdams,
                            Integrator::kIdas,
                            Integrator::kStormerVerlet,
                            Integrator::kSymplecticEuler,
                            Integrator::kRattle};
  if (chance(0.3)) {
    o.integrator = all[pick(6)];
  } else if (o.formulation == Formulation::kGgl ||
             o.formulation == Formulation::kIndex3) {
    o.integrator = Integrator::kIdas;
  } else if (o.formulation == Formulation::kProjection) {
    o.integrator = Integrator::kCvodesBdf;
  } else {
    o.integrator = all[pick(3)];
  }
  const KktMethod kkt[] = {KktMethod::kAuto,     KktMethod::kSchur,
                           KktMethod::kFullLu,   KktMethod::kSparseSchur,
                           KktMethod::kSparseLu, KktMethod::kSparseCholesky,
                           KktMethod::kQr};
  o.kkt.method = chance(0.5) ? KktMethod::kAuto : kkt[pick(7)];
  o.kkt.allow_redundant = chance(0.2);
  o.rtol = std::pow(10.0, -4.0 - 5.0 * u01(rng));
  o.atol = o.rtol * std::pow(10.0, -3.0 * u01(rng));
  o.t_end = 0.05 + 0.95 * u01(rng);
  o.output_step = o.t_end / (1 + pick(40));
  if (o.integrator == Integrator::kStormerVerlet ||
      o.integrator == Integrator::kSymplecticEuler ||
      o.integrator == Integrator::kRattle) {
    // Usually a step of 1 to 2.5 ms (accurate enough to compare with the
    // reference run), sometimes a coarse one.
    const double k = chance(0.8) ? std::ceil(o.output_step / 2.5e-3) : 1.0;
    o.step = o.output_step / (k * (1 + pick(chance(0.8) ? 2 : 20)));
  }
  o.baumgarte_alpha = chance(0.1) ? 0.0 : 30.0 * u01(rng);
  o.baumgarte_beta = chance(0.1) ? 0.0 : 30.0 * u01(rng);
  // Rarely a gain so large that it freezes the motion: refused, or caught
  // by the comparison with the reference run (issue 18).
  if (chance(0.02))
    (chance(0.5) ? o.baumgarte_alpha : o.baumgarte_beta) = 1e100;
  if (chance(0.15)) {
    o.drift_tol = std::pow(10.0, -3.0 - 5.0 * u01(rng));
    o.drift_action = chance(0.5) ? DriftAction::kFail : DriftAction::kEscalate;
  }
  o.compiled = chance(0.7);
  o.linear_solver = chance(0.2) ? LinearSolver::kKlu : LinearSolver::kDense;
  o.jacobian = chance(0.15) ? JacobianMethod::kDq : JacobianMethod::kAd;
  // A stall fails after the run's budget of max_steps steps: the default
  // can take minutes, so the fuzzer runs at 10000 (rarely very few, to
  // reach the failure path early).
  o.max_steps = chance(0.05) ? 1 + pick(50) : 10000;
  return o;
}

/// One line describing a spec and options, for failure messages.
inline std::string Describe(const ModelSpec& s, const SimulationOptions& o) {
  std::ostringstream os;
  os << "n=" << s.n << " kinetic_form=" << s.kinetic_form << " m=" << s.m
     << " constraints:";
  for (const auto& c : s.constraints) {
    os << " " << c.name << "(" << ToString(c.kind) << " x" << c.rows.size();
    for (const auto& r : c.rows) {
      os << " form" << r.form;
      if (r.nonaffine != 0.0) os << " NON-AFFINE";
    }
    os << ")";
  }
  if (s.constraints.empty()) os << " none";
  if (!s.unilateral.empty()) os << ", " << s.unilateral << " unilateral";
  if (s.quadrature) os << ", a quadrature";
  if (s.event_coord >= 0)
    os << ", event q" << s.event_coord << " = " << s.event_level;
  os << "; " << ToString(o.formulation) << " on " << ToString(o.integrator)
     << ", kkt " << ToString(o.kkt.method) << ", rtol " << o.rtol << ", t_end "
     << o.t_end << ", output_step " << o.output_step;
  if (o.formulation == Formulation::kBaumgarte)
    os << ", alpha " << o.baumgarte_alpha << ", beta " << o.baumgarte_beta;
  if (o.step > 0) os << ", step " << o.step;
  if (o.drift_tol > 0)
    os << ", drift_tol " << o.drift_tol << " " << ToString(o.drift_action);
  os << (o.compiled ? ", compiled" : ", dual numbers");
  return os.str();
}

}  // namespace daedalus::fuzz
