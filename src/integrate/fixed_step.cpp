// The fixed-step adapter: Stormer-Verlet, implicit symplectic Euler and
// RATTLE (include/daedalus/symplectic.hpp, docs/analysis.md). The step maps
// are the schemes themselves (symplectic_step.hpp); everything else (the
// consistent start, the KKT solves for the reported multipliers, the
// energy-balance integrands, integrated by the trapezoidal rule on the
// steps, the roots, located linearly between steps, the samples and the
// drift contract) goes through the run's Mechanics and monitor, as for the
// SUNDIALS adapters.
//
// On a model with unit quaternions (nq != nv, q' = N(q) v; eval/chart.hpp)
// the position update is the Lie-group one, q <- q (x) exp(h w / 2) on each
// quaternion block (exact unit norm; Retract), and the kicks solve the
// velocity-dependent inertial forces of the rotating bodies (w x I w, the
// Hamel terms in h) implicitly where the scheme evaluates them at the new
// velocity: Stormer-Verlet and RATTLE become the generalized Stormer-Verlet
// of a partitioned system (Hairer, Lubich and Wanner, Geometric Numerical
// Integration, 2nd ed., sec. II.2, eq. (2.6) and VI.3; its Lie-group form
// as in sec. IV.8 and VII.5), symmetric and of order 2,
//
//   v+ = v + h/2 M^-1 F(q, v+)         (fixed point; F = B u - h(q, v))
//   q' = q (x) exp(h v+ / 2)            (+ h^2/2 M^-1 J' lambda for RATTLE)
//   v' = v+ + h/2 M^-1 F(q', v+)       (then projected on J v = 0)
//
// with M constant in the velocities (checked by Fits), and symplectic Euler
// becomes v' = v + h M(q)^-1 F(q, v'), q' = q (x) exp(h v' / 2), of order 1
// (not symplectic on the group: the free body's energy drifts).
// For the torque-free body the kicks conserve the kinetic energy and |I w|
// exactly (the half-kick increments are orthogonal to w+ and to I w+).
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "eval/chart.hpp"
#include "integrate/adapters.hpp"
#include "integrate/common.hpp"
#include "integrate/symplectic_step.hpp"
#include "monitor/recorder.hpp"

namespace daedalus::internal {

void IntegrateFixedStep(Mechanics* mech,
                        const InitialState& x0,
                        const SimulationOptions& options,
                        Observer* observer,
                        SimulationSummary* out) {
  SimulationSummary& sum = *out;
  const Model& model = mech->model();
  const Integrator scheme = options.integrator;
  const int n = model.nv(), nc = model.nc();
  KktResult r;
  Evaluator ev(model, mech->parameters());
  Recorder recorder(model, &sum, observer);
  const QuadLayout& layout = recorder.layout();
  const RootSet roots(model);

  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!MakeConsistent(mech, options, &q, &v, &sum)) return;
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
    mech->Evaluate(t, q, v);
    mech->SolveKkt(mech->bias(), &r);
    mech->Integrands(layout, r.lambda, 0.0, g);
    if (roots.size() > 0) roots.Evaluate(*mech, r.lambda, root_now.data());
  };
  // Force (B u + Q_r + L_q for separable L) and J at (t, qq).
  Eigen::VectorXd F(n);
  Eigen::MatrixXd Jc(nc, n);
  auto force_at = [&](double t, const Eigen::VectorXd& qq,
                      const Eigen::VectorXd& vv) {
    mech->Evaluate(t, qq, vv);
    ++force_evals;
    F = mech->AppliedForce();  // separable: h = -L_q - Q_r
    Jc = mech->DenseJacobian();
  };

  // The implicit kick of a model with quaternions: x = base + c M^-1 F(t,
  // qq, x) by fixed-point iteration (the v-dependence of F is the
  // gyroscopic w x I w, a contraction for c |w| well below 1), to round-off
  // of x. F and Jc are left at (qq, the last iterate).
  const bool lie = !model.quaternions().empty();
  auto implicit_kick = [&](double t, const Eigen::VectorXd& qq,
                           const Eigen::VectorXd& base, double c,
                           const Eigen::LLT<Eigen::MatrixXd>& llt,
                           const Eigen::VectorXd& guess) {
    Eigen::VectorXd x = guess;
    double last = std::numeric_limits<double>::infinity();
    for (int it = 0; it < kMaxNewton; ++it) {
      force_at(t, qq, x);
      const Eigen::VectorXd xn = base + c * llt.solve(F);
      const double size =
          (xn - x).cwiseAbs().maxCoeff() / (1.0 + xn.cwiseAbs().maxCoeff());
      x = xn;
      ev.newton_iterations++;
      if (!(size == size)) break;
      if (size <= 4 * kEps) return x;
      // Stagnation at round-off: the update stopped shrinking.
      if (size < 1e-12 && size >= 0.5 * last) return x;
      last = size;
    }
    std::ostringstream os;
    os << "the implicit kick (the velocity-dependent inertial forces of the "
          "rotating bodies) did not converge at t = "
       << t << "; reduce --step";
    throw std::runtime_error(os.str());
  };

  // RATTLE's position multipliers: Newton on Phi(t1, place(lam)) = 0 from
  // *lam, with the iteration matrix h^2/2 J(q1) Y0 (Y0 = M^-1 J0'); place
  // writes the position that lam gives into *q1. Round-off of Phi for
  // unknowns of size |q|: a converged iteration sits far below 1e-10 (the
  // tests see ~1e-16).
  auto solve_positions = [&](double t1, double hk, const Eigen::MatrixXd& Y0,
                             const Eigen::VectorXd& vh, auto&& place,
                             Eigen::VectorXd* lam, Eigen::VectorXd* q1) {
    double res = std::numeric_limits<double>::infinity(), last = res;
    for (int it = 0; it < kMaxNewton; ++it) {
      place(*lam, q1);
      mech->EvaluatePosition(t1, *q1, vh);
      res = mech->phi().cwiseAbs().maxCoeff();
      if (res == 0.0 || (it > 0 && res >= 0.5 * last)) break;
      last = res;
      const Eigen::MatrixXd A = 0.5 * hk * hk * (mech->DenseJacobian() * Y0);
      *lam -= A.partialPivLu().solve(mech->phi());
      ev.newton_iterations++;
    }
    if (!(res <= 1e-10)) {
      std::ostringstream os;
      os << "RATTLE position solve did not converge at t = " << t1
         << " (max |Phi| = " << res << "); reduce --step";
      throw std::runtime_error(os.str());
    }
  };

  // Constant mass matrix of the separable schemes, factored once.
  Eigen::LLT<Eigen::MatrixXd> llt_m;
  Eigen::VectorXd p;  // momenta (symplectic Euler)
  // The second half-kick of Stormer-Verlet and RATTLE from the half-step
  // velocity vh at (t1, q) into v; RATTLE then takes the velocity
  // multipliers: the M-orthogonal projection onto J v = 0.
  auto second_half_kick = [&](double t1, double hk, const Eigen::VectorXd& vh) {
    force_at(t1, q, vh);
    Eigen::VectorXd w = vh + 0.5 * hk * llt_m.solve(F);
    if (scheme == Integrator::kRattle && nc > 0) {
      const Eigen::MatrixXd Y1 = llt_m.solve(Jc.transpose());
      const Eigen::MatrixXd S1 = Jc * Y1;
      w -= Y1 * S1.llt().solve(Jc * w);
    }
    v = w;
  };
  try {
    evaluate(options.t0);
    recorder.Record(*mech, r.vdot, r.lambda, Eigen::VectorXd(), 0.0, true);
    g_prev = g;
    root_prev = root_now;
    if (scheme != Integrator::kSymplecticEuler) {
      llt_m.compute(mech->DenseMass());
      if (llt_m.info() != Eigen::Success)
        throw KktError("model '" + model.name() +
                       "': mass matrix not positive definite");
      force_at(options.t0, q, v);
    } else if (!lie) {
      p = ev.Grad<double>(options.t0, q, v, true);
    }
    double t = options.t0;
    for (long k = 1; k <= nsteps; ++k) {
      if (options.stop != nullptr &&
          options.stop->load(std::memory_order_relaxed) != 0)
        throw std::runtime_error("stop requested");
      const double hk = std::min(h, options.t_end - t);
      const double t1 = (k == nsteps) ? options.t_end : t + hk;
      if (lie && scheme == Integrator::kSymplecticEuler) {
        // v' = v + h M(q)^-1 F(q, v'), q' = q (x) exp(h v' / 2).
        mech->Evaluate(t, q, v);
        const Eigen::LLT<Eigen::MatrixXd> llt(mech->DenseMass());
        if (llt.info() != Eigen::Success)
          throw KktError("model '" + model.name() +
                         "': mass matrix not positive definite");
        v = implicit_kick(t, q, v, hk, llt, v);
        Retract(model.data(), hk * v, q);
      } else if (lie) {
        Eigen::VectorXd vh = implicit_kick(t, q, v, 0.5 * hk, llt_m, v);
        if (scheme == Integrator::kRattle && nc > 0) {
          // The half-kick depends on vh, which the position multipliers
          // move: iterate both to a common fixed point. J0 at (t, q).
          force_at(t, q, v);
          const Eigen::MatrixXd Y0 = llt_m.solve(Jc.transpose());
          Eigen::VectorXd lam = Eigen::VectorXd::Zero(nc), q1 = q;
          double last_outer = std::numeric_limits<double>::infinity();
          bool converged = false;
          for (int outer = 0; outer < kMaxNewton && !converged; ++outer) {
            force_at(t, q, vh);
            const Eigen::VectorXd vfree = v + 0.5 * hk * llt_m.solve(F);
            // Position multipliers: Phi(q (x) exp((h vfree + h^2/2 Y0 lam)
            // / 2)) = 0, Newton with the chart Jacobian J = Phi_q N.
            solve_positions(
                t1, hk, Y0, vh,
                [&](const Eigen::VectorXd& l, Eigen::VectorXd* x) {
                  *x = q;
                  Retract(model.data(), hk * vfree + 0.5 * hk * hk * (Y0 * l),
                          *x);
                },
                &lam, &q1);
            const Eigen::VectorXd vn = vfree + 0.5 * hk * (Y0 * lam);
            const double size = (vn - vh).cwiseAbs().maxCoeff() /
                                (1.0 + vn.cwiseAbs().maxCoeff());
            vh = vn;
            converged =
                size <= 4 * kEps || (size < 1e-12 && size >= 0.5 * last_outer);
            last_outer = size;
          }
          if (!converged)
            throw std::runtime_error(
                "RATTLE's half-kick and position multipliers did not reach "
                "a common fixed point at t = " +
                std::to_string(t1) + "; reduce --step");
          q = q1;
        } else {
          Retract(model.data(), hk * vh, q);
        }
        second_half_kick(t1, hk, vh);
      } else if (scheme == Integrator::kSymplecticEuler) {
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
          solve_positions(
              t1, hk, Y0, vh,
              [&](const Eigen::VectorXd& l, Eigen::VectorXd* x) {
                *x = qf + 0.5 * hk * hk * (Y0 * l);
              },
              &lam, &q1);
          q = q1;
          vh += 0.5 * hk * (Y0 * lam);
        } else {
          q = q + hk * vh;
        }
        second_half_kick(t1, hk, vh);
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
      sum.stats.steps = k;
      if (k % steps_per_output == 0 || k == nsteps || stop) {
        recorder.Record(*mech, r.vdot, r.lambda, quad, 0.0, false);
        // The drift contract: these schemes enforce what they can already
        // (RATTLE the position and velocity constraints), so a violation
        // fails the run.
        int row = 0;
        double drift = 0.0;
        const std::string violation =
            DriftViolation(model, options, sum, &row, &drift);
        if (!violation.empty()) {
          std::string cannot;
          EscalationTarget(options, &cannot);
          throw std::runtime_error(
              violation + "; hint: reduce --step" +
              (options.drift_action == DriftAction::kEscalate
                   ? " (no escalation: " + cannot + ")"
                   : std::string()));
        }
      }
      if (stop) break;
    }
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    sum.error = std::string(ToString(scheme)) + ": " + e.what();
    sum.stats.rhs_evals = force_evals;
    sum.stats.jacobian_evals = ev.newton_iterations;
    return;
  }
  sum.stats.rhs_evals = force_evals;
  sum.stats.jacobian_evals = ev.newton_iterations;
  sum.ok = true;
}

}  // namespace daedalus::internal
