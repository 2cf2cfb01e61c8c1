// The fixed-step adapter: Stormer-Verlet, implicit symplectic Euler and
// RATTLE (include/daedalus/symplectic.hpp, docs/analysis.md). The step maps
// are the schemes themselves (symplectic_step.hpp); everything else (the
// consistent start, the KKT solves for the reported multipliers, the
// energy-balance integrands, integrated by the trapezoidal rule on the
// steps, the roots, located linearly between steps, the samples and the
// drift contract) goes through the run's Mechanics and monitor, as for the
// SUNDIALS adapters.
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

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

  // Constant mass matrix of the separable schemes, factored once.
  Eigen::LLT<Eigen::MatrixXd> llt_m;
  Eigen::VectorXd p;  // momenta (symplectic Euler)
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
    } else {
      p = ev.Grad<double>(options.t0, q, v, true);
    }
    double t = options.t0;
    for (long k = 1; k <= nsteps; ++k) {
      if (options.stop != nullptr &&
          options.stop->load(std::memory_order_relaxed) != 0)
        throw std::runtime_error("stop requested");
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
            mech->EvaluatePosition(t1, q1, vh);
            res = mech->phi().cwiseAbs().maxCoeff();
            if (res == 0.0 || (it > 0 && res >= 0.5 * last)) break;
            last = res;
            const Eigen::MatrixXd A =
                0.5 * hk * hk * (mech->DenseJacobian() * Y0);
            lam -= A.partialPivLu().solve(mech->phi());
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
