// Pieces shared by the CVODES and IDAS adapters: the quadrature layout, the
// quadrature integrands, and the recorder that turns a solver state into an
// output Sample and keeps the summary's running maxima.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/projection.hpp"
#include "daedalus/simulate.hpp"
#include "eval/compiled_model.hpp"

namespace daedalus::internal {

/// Error state shared by a run's SUNDIALS callbacks. Callbacks are noexcept
/// trampolines: Trap runs the body, stashes the exception text and returns
/// 0, +1 (recoverable: the solver cuts the step) or -1 (fatal).
struct CallbackGuard {
  std::string last_error;
  std::string sundials_message;
  // Recoverable failures since the last output. A failure the solver cannot
  // step around (a model undefined beyond some time) would otherwise make it
  // creep forward with ever smaller steps.
  int recoverable_failures = 0;
  static constexpr int kMaxRecoverableFailures = 200;

  template <class Body>
  int Trap(const Body& body) noexcept {
    try {
      body();
      return 0;
    } catch (const std::invalid_argument& e) {
      last_error = e.what();
      return -1;
    } catch (const std::logic_error& e) {
      last_error = e.what();
      return -1;
    } catch (const std::exception& e) {  // KktError, non-finite values
      last_error = e.what();
      return ++recoverable_failures > kMaxRecoverableFailures ? -1 : 1;
    } catch (...) {
      last_error = "unknown exception in a model function";
      return -1;
    }
  }

  /// Called before each solver call that produces an output.
  void Reset() {
    last_error.clear();
    recoverable_failures = 0;
  }

  /// ": <model message>" or ": <SUNDIALS message>" for a failure report.
  std::string Detail() const {
    if (!last_error.empty()) return ": " + last_error;
    if (!sundials_message.empty()) return ": " + sundials_message;
    return "";
  }
};

/// SUNDIALS error handler (CVODES and IDAS share the signature); user data
/// is the run's CallbackGuard.
inline void SundialsErrHandler(int error_code,
                               const char* module,
                               const char* function,
                               char* msg,
                               void* guard) {
  std::ostringstream os;
  os << module << "/" << function << " (" << error_code << "): " << msg;
  static_cast<CallbackGuard*>(guard)->sundials_message = os.str();
}

/// The compiled evaluator a run uses (nullptr: the dual-number path), and
/// the summary's record of which one and why.
inline const CompiledModel* ActiveCompiled(const Model& model,
                                           const SimulationOptions& options,
                                           SimulationSummary* sum) {
  if (!options.compiled) {
    sum->evaluator = "dual numbers (--evaluator ad)";
    return nullptr;
  }
  std::string why;
  const CompiledModel* cm = GetCompiled(model, &why);
  if (cm == nullptr) {
    sum->evaluator = "dual numbers: " + why;
  } else if (NativeKernelsEnabled() && cm->Stage(0).program.native()) {
    sum->evaluator = "compiled (native kernels)";
  } else {
    sum->evaluator = "compiled (interpreted)";
  }
  return cm;
}

/// A summary with the run's identity filled in (problem, formulation,
/// integrator, tolerances, start time, energy kind, evaluator), not yet ok.
inline SimulationSummary StartSummary(const Model& model,
                                      const SimulationOptions& options) {
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
  ActiveCompiled(model, options, &sum);
  return sum;
}

/// Order of the quadrature vector:
///   [input work (nu) | damping loss | other work | constraint power (nc) |
///    ideal constraint power -lambda Phi_t (nc) | explicit time -L_t |
///    stabilization power | user quadratures (nuq)]
struct QuadLayout {
  int nu = 0, nc = 0, nuq = 0;
  explicit QuadLayout(const Model& m)
      : nu(m.num_inputs()), nc(m.nc()), nuq(m.num_quadratures()) {}
  int size() const { return nu + 3 + 2 * nc + 1 + nuq; }
  int damping() const { return nu; }
  int other() const { return nu + 1; }
  int constraint() const { return nu + 2; }
  int ideal() const { return nu + 2 + nc; }
  int time() const { return nu + 2 + 2 * nc; }
  int stabilization() const { return time() + 1; }
  int user() const { return stabilization() + 1; }
};

/// Integrands at the workspace state (stages through dynamics evaluated).
/// Templated on the workspace: with the tangent workspace (scalar D1) the
/// result is the exact tangent used for quadrature sensitivities, with the
/// symbolic model (compiled_model.hpp) its expression.
template <class W, class VL, class VO>
inline void QuadratureIntegrands(const QuadLayout& L,
                                 const W& ws,
                                 const VL& lambda,
                                 const typename W::Scalar& stabilization_power,
                                 VO&& out) {
  using S = typename W::Scalar;
  for (int i = 0; i < L.nu; ++i) out[i] = ws.v.dot(ws.B.col(i)) * ws.u[i];
  out[L.damping()] = ws.v.dot(ws.Dv);
  out[L.other()] = ws.v.dot(ws.Qr);
  for (int i = 0; i < L.nc; ++i) {
    out[L.constraint() + i] = lambda[i] * ws.J.row(i).dot(ws.v);
    out[L.ideal() + i] = -lambda[i] * ws.phi_t[i];
  }
  out[L.time()] = -ws.L_t;
  out[L.stabilization()] = stabilization_power;
  const auto& quads = ws.model().data().quadratures;
  const Point<S> x{ws.q, ws.v, ws.t, ws.p};
  for (int k = 0; k < L.nuq; ++k) {
    const S g = Invoke(quads[k].second, x);
    if constexpr (!std::is_same_v<S, Sym>) {
      if (!std::isfinite(Value(g))) {
        throw std::runtime_error(
            "model '" + ws.model().name() + "': quadrature '" + quads[k].first +
            "' returned a non-finite value at " + DescribeState(ws));
      }
    }
    out[L.user() + k] = g;
  }
}

/// The multipliers Daedalus reports: the ideal constraint reactions at the
/// workspace state (all stages evaluated), i.e. the KKT solution with the
/// unmodified acceleration bias b. Two reasons:
///  - Baumgarte's applied multiplier also contains the correction
///    -(J M^-1 J')^-1 (2 alpha (J v + Phi_t) + beta^2 Phi), an artificial
///    force whose power is stabilization work, not constraint work
///    (StabilizationPower);
///  - IDAS keeps lambda out of its error test (IDASetSuppressAlg), so its
///    interpolated lambda between steps can be far off when the
///    differential state allows long steps, while the KKT solution at the
///    interpolated (q, v) is as accurate as the state.
inline void IdealMultipliers(const Workspace& ws,
                             KktSolver* kkt,
                             KktResult* r) {
  kkt->Solve(ws, ws.bias, r);
}

/// Power of the stabilization share of applied multipliers `lambda`
/// (nc), given the ideal ones: (lambda - ideal)' J v.
inline double StabilizationPower(
    const Workspace& ws,
    const Eigen::Ref<const Eigen::VectorXd>& lambda,
    const Eigen::VectorXd& ideal) {
  if (ideal.size() == 0) return 0.0;
  return (lambda - ideal).dot(ws.J * ws.v);
}

/// The feasibility conditions a run watches, in this order: every
/// unilateral row (margin lambda_i, admissible when >= 0), then every
/// friction cone (margin mu lambda_n - |lambda_t|). The same margins are
/// root functions and are checked at every output sample.
struct FeasibilitySet {
  std::vector<int> unilateral_rows;
  const std::vector<FrictionConeDecl>* cones = nullptr;
  std::vector<std::string> names;  // row or cone name, per condition

  explicit FeasibilitySet(const Model& m) : cones(&m.data().friction_cones) {
    for (int ci = 0; ci < m.num_constraints(); ++ci) {
      const auto& c = m.constraints()[ci];
      if (!c.unilateral) continue;
      for (int r = 0; r < c.rows; ++r) {
        unilateral_rows.push_back(m.constraint_row(ci) + r);
        names.push_back(m.RowName(unilateral_rows.back()));
      }
    }
    for (const auto& cone : *cones) names.push_back(cone.name);
  }
  int num_unilateral() const {
    return static_cast<int>(unilateral_rows.size());
  }
  int size() const { return static_cast<int>(names.size()); }
  bool is_cone(int k) const { return k >= num_unilateral(); }
  const char* kind(int k) const {
    return is_cone(k) ? "friction_cone" : "unilateral";
  }
  /// Root-function name of condition k (as reported in the events).
  std::string event_name(int k) const {
    return (is_cone(k) ? "cone_" : "lambda_") + names[k];
  }
  void Margins(const Eigen::Ref<const Eigen::VectorXd>& lambda,
               double* g) const {
    for (int j = 0; j < num_unilateral(); ++j)
      g[j] = lambda[unilateral_rows[j]];
    for (size_t c = 0; c < cones->size(); ++c) {
      const FrictionConeDecl& cone = (*cones)[c];
      double t2 = 0.0;
      for (int r : cone.tangential_rows) t2 += lambda[r] * lambda[r];
      g[num_unilateral() + static_cast<int>(c)] =
          cone.mu * lambda[cone.normal_row] - std::sqrt(t2);
    }
  }

  /// The open violation interval of condition k, or nullptr.
  FeasibilityViolation* Open(SimulationSummary* sum, int k) const {
    for (auto& v : sum->violations)
      if (v.ongoing && v.kind == kind(k) && v.name == names[k]) return &v;
    return nullptr;
  }
  FeasibilityViolation* Start(SimulationSummary* sum,
                              int k,
                              double t,
                              double g) const {
    FeasibilityViolation v;
    v.kind = kind(k);
    v.name = names[k];
    v.t_start = v.t_end = v.t_worst = t;
    v.worst = std::min(g, 0.0);
    sum->violations.push_back(v);
    return &sum->violations.back();
  }
  /// Sample-level check: opens, extends or closes the interval of each
  /// condition from the sign of its margin at time t. (A root located
  /// between samples refines the start and end; see RootSet::Record.)
  void Check(SimulationSummary* sum,
             double t,
             const Eigen::Ref<const Eigen::VectorXd>& lambda) const {
    if (size() == 0) return;
    std::vector<double> g(static_cast<size_t>(size()));
    Margins(lambda, g.data());
    for (int k = 0; k < size(); ++k) {
      FeasibilityViolation* v = Open(sum, k);
      if (g[k] < 0.0) {
        if (v == nullptr) v = Start(sum, k, t, g[k]);
        v->t_end = t;
        if (g[k] < v->worst) {
          v->worst = g[k];
          v->t_worst = t;
        }
      } else if (v != nullptr) {
        v->t_end = t;
        v->ongoing = false;
      }
    }
  }
};

/// Builds samples and keeps the summary's maxima, feasibility intervals
/// and KKT health.
class Recorder {
 public:
  Recorder(const Model& model, SimulationSummary* sum, Observer* obs)
      : layout_(model),
        sum_(sum),
        obs_(obs),
        holonomic_(model.nc(), true),
        feasibility_(model),
        model_(model) {
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const auto& c = model.constraints()[ci];
      if (c.kind == ConstraintKind::kNonholonomic)
        for (int r = 0; r < c.rows; ++r)
          holonomic_[model.constraint_row(ci) + r] = false;
    }
    sum->unilateral_rows = feasibility_.num_unilateral();
    sum->friction_cones = feasibility_.size() - feasibility_.num_unilateral();
    sum->power_gap_max = Eigen::VectorXd::Zero(model.nc());
    sum->kkt_health.checked = model.nc() > 0;
    sum->kkt_health.rank_J_min = model.nc();
  }

  const QuadLayout& layout() const { return layout_; }
  bool holonomic_row(int i) const { return holonomic_[i]; }
  /// Sensitivities (components x parameters) copied into every sample;
  /// the matrix must outlive the recorder's use.
  void AttachSensitivities(const Eigen::MatrixXd* sens) { sens_ = sens; }

  /// Records one sample. `quad` is the integrated quadrature vector (empty
  /// at the first sample); `extra_stabilization` adds work not covered by
  /// the quadratures (projection jumps).
  void Record(const Workspace& ws,
              const Eigen::VectorXd& vdot,
              const Eigen::VectorXd& lambda,
              const Eigen::VectorXd& quad,
              double extra_stabilization,
              bool first) {
    const QuadLayout& L = layout_;
    Sample s;
    s.t = ws.t;
    s.q = ws.q;
    s.v = ws.v;
    s.vdot = vdot;
    s.lambda = lambda;
    s.power = lambda.cwiseProduct(ws.J * ws.v);
    s.ideal_power = -lambda.cwiseProduct(ws.phi_t);
    s.reaction_power = ws.v.cwiseProduct(ws.J.transpose() * lambda);
    s.phi = ws.phi;
    s.vel_residual = ws.vel_residual;
    for (int i = 0; i < L.nc; ++i) {
      if (holonomic_[i])
        s.drift_position = std::max(s.drift_position, std::abs(ws.phi[i]));
      s.drift_velocity =
          std::max(s.drift_velocity, std::abs(ws.vel_residual[i]));
    }
    s.energy = ws.energy;
    if (first) e0_ = ws.energy;
    // Instantaneous power terms: the quadrature integrands at this state.
    Eigen::VectorXd rate(L.size());
    QuadratureIntegrands(L, ws, lambda, 0.0, rate);
    s.input_power = rate.head(L.nu);
    s.damping_power = rate[L.damping()];
    s.other_power = rate[L.other()];
    s.explicit_time_power = rate[L.time()];
    s.energy_rate = s.input_power.sum() - s.damping_power + s.other_power +
                    s.power.sum() + s.explicit_time_power;
    const Eigen::VectorXd w =
        first ? Eigen::VectorXd::Zero(L.size()) : Eigen::VectorXd(quad);
    s.input_work = w.head(L.nu);
    s.damping_loss = w[L.damping()];
    s.other_work = w[L.other()];
    s.constraint_work = w.segment(L.constraint(), L.nc);
    s.ideal_constraint_work = w.segment(L.ideal(), L.nc);
    s.explicit_time_work = w[L.time()];
    s.stabilization_work = w[L.stabilization()] + extra_stabilization;
    s.quadratures = w.tail(L.nuq);
    if (sens_) s.sens = *sens_;
    const double work = s.input_work.sum() - s.damping_loss + s.other_work +
                        s.constraint_work.sum() + s.explicit_time_work +
                        s.stabilization_work;
    s.energy_residual = s.energy - e0_ - work;
    SimulationSummary& sum = *sum_;
    RecordKktHealth(ws, &s);
    feasibility_.Check(&sum, s.t, lambda);
    sum.power_gap_max =
        sum.power_gap_max.cwiseMax((s.power - s.ideal_power).cwiseAbs());
    sum.drift_position_max = std::max(sum.drift_position_max, s.drift_position);
    sum.drift_velocity_max = std::max(sum.drift_velocity_max, s.drift_velocity);
    sum.energy_residual_max =
        std::max(sum.energy_residual_max, std::abs(s.energy_residual));
    if (first) sum.energy_initial = s.energy;
    sum.energy_final = s.energy;
    sum.t_reached = s.t;
    ++sum.samples;
    sum.final = s;
    if (obs_) obs_->OnSample(s);
  }

 private:
  // Conditioning of J M^-1 J' and rank of J at the sample's state, and the
  // run's worst configuration. The Schur complement is Jacobi-scaled
  // (D S D, D = diag(S)^-1/2) so that its condition number does not depend
  // on the units in which each constraint is written; J's rows are
  // normalized for the same reason before its rank is taken.
  void RecordKktHealth(const Workspace& ws, Sample* s) {
    const Eigen::Index nc = ws.J.rows();
    if (nc == 0) return;
    KktHealthSummary& kh = sum_->kkt_health;
    const Eigen::LLT<Eigen::MatrixXd> llt(ws.M);
    const Eigen::MatrixXd S = ws.J * llt.solve(ws.J.transpose());
    const Eigen::VectorXd diag = S.diagonal();
    Eigen::VectorXd d(nc);
    bool zero_row = llt.info() != Eigen::Success;
    for (Eigen::Index i = 0; i < nc; ++i) {
      zero_row |= !(diag[i] > 0.0);
      d[i] = diag[i] > 0.0 ? 1.0 / std::sqrt(diag[i]) : 0.0;
    }
    const Eigen::MatrixXd Ss = d.asDiagonal() * S * d.asDiagonal();
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Ss);
    const Eigen::VectorXd& ev = es.eigenvalues();
    s->kkt_rcond = zero_row || !(ev[nc - 1] > 0.0)
                       ? 0.0
                       : std::max(ev[0], 0.0) / ev[nc - 1];
    if (s->kkt_rcond >= kNearSingularRcond) {
      // J M^-1 J' is positive definite (M is, its Cholesky succeeded), so
      // J has full row rank: for the SVD below to find a smaller rank, M
      // would have to be numerically singular itself.
      s->rank_J = static_cast<int>(nc);
    } else {
      Eigen::MatrixXd Jn = ws.J;
      for (Eigen::Index i = 0; i < nc; ++i) {
        const double n = Jn.row(i).norm();
        if (n > 0.0) Jn.row(i) /= n;
      }
      Eigen::JacobiSVD<Eigen::MatrixXd> svd(Jn);
      // Relative to the largest singular value (about 1 after the row
      // normalization): far above round-off, far below any well-posed
      // mechanism's smallest singular value.
      svd.setThreshold(1e-10);
      s->rank_J = static_cast<int>(svd.rank());
    }
    kh.rank_J_min = std::min(kh.rank_J_min, s->rank_J);
    if (sum_->samples == 0 || s->kkt_rcond < kh.rcond_min) {
      kh.rcond_min = s->kkt_rcond;
      kh.t_worst = s->t;
      kh.q_worst = s->q;
      kh.v_worst = s->v;
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eu(
          S, Eigen::EigenvaluesOnly);
      kh.sigma_min_at_worst = std::max(eu.eigenvalues()[0], 0.0);
      kh.weak_rows.clear();
      // The smallest eigenvector of the scaled complement combines the
      // rows that are close to dependent; components above 0.3 of a unit
      // vector name them (two equally involved rows have 0.71 each).
      for (Eigen::Index i = 0; i < nc; ++i)
        if (std::abs(es.eigenvectors()(i, 0)) > 0.3)
          kh.weak_rows.push_back(model_.RowName(static_cast<int>(i)));
    }
    if (!kh.near_singular && s->kkt_rcond < kNearSingularRcond) {
      kh.near_singular = true;
      kh.t_first_near_singular = s->t;
      std::ostringstream os;
      os.precision(3);
      os << "near-singular configuration at t = " << s->t
         << ": reciprocal condition of J M^-1 J' is " << s->kkt_rcond << " (< "
         << kNearSingularRcond << "), rank(J) = " << s->rank_J << " of " << nc
         << "; nearly dependent rows:";
      for (const auto& r : kh.weak_rows) os << " '" << r << "'";
      os << ". The multipliers lose accuracy and the run fails if the "
            "mechanism reaches the singularity (a dead centre or a locked "
            "or redundant set of constraints)";
      sum_->warnings.push_back(os.str());
    }
  }

  QuadLayout layout_;
  SimulationSummary* sum_;
  Observer* obs_;
  std::vector<bool> holonomic_;
  FeasibilitySet feasibility_;
  Model model_;
  double e0_ = 0.0;
  const Eigen::MatrixXd* sens_ = nullptr;
};

/// Root functions of a run: the model's events, then the feasibility
/// margins (unilateral multipliers, friction cones), whose sign changes
/// are reported and refine the violation intervals.
struct RootSet {
  FeasibilitySet feasibility;
  int num_events = 0;
  explicit RootSet(const Model& m)
      : feasibility(m), num_events(static_cast<int>(m.data().events.size())) {}
  int size() const { return num_events + feasibility.size(); }
  void Evaluate(const Workspace& ws,
                const Eigen::Ref<const Eigen::VectorXd>& lambda,
                double* g) const {
    const Point<double> x{ws.q, ws.v, ws.t, ws.p};
    const auto& ev = ws.model().data().events;
    for (int k = 0; k < num_events; ++k) g[k] = ev[k].second.f0(x);
    feasibility.Margins(lambda, g + num_events);
  }
  /// Records the roots flagged in `found` (after the sample at t has been
  /// recorded); returns true if a user event (which stops the run) was
  /// among them. A falling feasibility margin opens a violation interval
  /// at t, a rising one closes it at t.
  bool Record(const Model& m,
              double t,
              const int* found,
              SimulationSummary* sum) const {
    bool stop = false;
    for (int k = 0; k < size(); ++k) {
      if (found[k] == 0) continue;
      EventRecord e;
      e.t = t;
      e.direction = found[k] > 0 ? 1.0 : -1.0;
      if (k < num_events) {
        e.name = m.data().events[k].first;
        e.stopped = true;
        stop = true;
      } else {
        const int j = k - num_events;
        e.name = feasibility.event_name(j);
        FeasibilityViolation* v = feasibility.Open(sum, j);
        if (found[k] < 0 && v == nullptr) {
          feasibility.Start(sum, j, t, 0.0);
        } else if (found[k] > 0 && v != nullptr) {
          v->t_end = t;
          v->ongoing = false;
        }
      }
      sum->events.push_back(e);
    }
    return stop;
  }
};

/// Projects (q, v) onto the position and velocity constraints at t0 and
/// records the correction norms; on failure fills sum->error and returns
/// false (the run must not start).
inline bool MakeConsistent(Workspace* ws,
                           const SimulationOptions& options,
                           Eigen::VectorXd* q,
                           Eigen::VectorXd* v,
                           SimulationSummary* sum) {
  try {
    const ProjectionResult pp =
        ProjectPositions(ws, options.t0, q, *v, options.initial_projection_tol,
                         options.initial_projection_max_iter);
    if (!pp.converged) {
      std::ostringstream os;
      os << "initial state cannot be made consistent: after " << pp.iterations
         << " Gauss-Newton iterations the position residual max|Phi| is "
         << pp.residual << " (tolerance " << options.initial_projection_tol
         << "); start closer to the constraint manifold";
      sum->error = os.str();
      return false;
    }
    sum->initial_correction_position = pp.correction;
    const ProjectionResult pv = ProjectVelocities(ws, options.t0, *q, v);
    sum->initial_correction_velocity = pv.correction;
  } catch (const std::exception& e) {
    sum->error =
        std::string("initial state cannot be made consistent: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace daedalus::internal
