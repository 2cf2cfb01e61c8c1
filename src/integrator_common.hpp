// Pieces shared by the CVODES and IDAS adapters: the quadrature layout, the
// quadrature integrands, and the recorder that turns a solver state into an
// output Sample and keeps the summary's running maxima.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/projection.hpp"
#include "daedalus/simulate.hpp"

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
/// Templated on the base scalar: with the tangent workspace (S = D1) the
/// result is the exact tangent used for quadrature sensitivities.
template <class S, class VL, class VO>
inline void QuadratureIntegrands(const QuadLayout& L,
                                 const BasicWorkspace<S>& ws,
                                 const VL& lambda,
                                 const S& stabilization_power,
                                 VO&& out) {
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
    S g;
    if constexpr (std::is_same_v<S, double>) {
      g = quads[k].second.f0(x);
    } else {
      g = quads[k].second.f1(x);
    }
    if (!std::isfinite(Value(g))) {
      throw std::runtime_error(
          "model '" + ws.model().name() + "': quadrature '" + quads[k].first +
          "' returned a non-finite value at " + DescribeState(ws));
    }
    out[L.user() + k] = g;
  }
}

/// Builds samples and keeps the summary's maxima.
class Recorder {
 public:
  Recorder(const Model& model, SimulationSummary* sum, Observer* obs)
      : layout_(model), sum_(sum), obs_(obs), holonomic_(model.nc(), true) {
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const auto& c = model.constraints()[ci];
      if (c.kind == ConstraintKind::kNonholonomic)
        for (int r = 0; r < c.rows; ++r)
          holonomic_[model.constraint_row(ci) + r] = false;
    }
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
  QuadLayout layout_;
  SimulationSummary* sum_;
  Observer* obs_;
  std::vector<bool> holonomic_;
  double e0_ = 0.0;
  const Eigen::MatrixXd* sens_ = nullptr;
};

/// Root functions of a run: the model's events, then one per unilateral
/// constraint row (its multiplier, whose sign change is reported).
struct RootSet {
  std::vector<int> unilateral_rows;
  int num_events = 0;
  explicit RootSet(const Model& m)
      : num_events(static_cast<int>(m.data().events.size())) {
    for (int ci = 0; ci < m.num_constraints(); ++ci) {
      const auto& c = m.constraints()[ci];
      if (!c.unilateral) continue;
      for (int r = 0; r < c.rows; ++r)
        unilateral_rows.push_back(m.constraint_row(ci) + r);
    }
  }
  int size() const {
    return num_events + static_cast<int>(unilateral_rows.size());
  }
  void Evaluate(const Workspace& ws,
                const Eigen::Ref<const Eigen::VectorXd>& lambda,
                double* g) const {
    const Point<double> x{ws.q, ws.v, ws.t, ws.p};
    const auto& ev = ws.model().data().events;
    for (int k = 0; k < num_events; ++k) g[k] = ev[k].second.f0(x);
    for (size_t j = 0; j < unilateral_rows.size(); ++j)
      g[num_events + j] = lambda[unilateral_rows[j]];
  }
  /// Records the roots flagged in `found`; returns true if a user event
  /// (which stops the run) was among them.
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
        e.name = "lambda_" + m.RowName(unilateral_rows[k - num_events]);
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
