// The generalized-alpha and HHT-alpha adapter on the index-3 formulation
// (docs/formulations.md, "Generalized-alpha and HHT").
//
// The scheme is the one of Arnold and Bruls (2007, "Convergence of the
// generalized-alpha scheme for constrained mechanical systems", Multibody
// Syst Dyn 18), with the parameters of Chung and Hulbert (1993) for
// generalized-alpha and of Hilber, Hughes and Taylor (1977) for HHT: the
// equations of motion and the position constraints hold exactly at t_n+1,
//   M(q1) vdot1 + h(q1, v1, t1) - B u - J(q1)' lambda1 = 0,  Phi(q1, t1) = 0
// (nonholonomic rows at velocity level), and the acceleration-like
// variable a carries the numerical damping:
//   (1 - alpha_m) a1 + alpha_m a0 = (1 - alpha_f) vdot1 + alpha_f vdot0
//   q1 = q0 + h v0 + h^2 (1/2 - beta) a0 + h^2 beta a1
//   v1 = v0 + h (1 - gamma) a0 + h gamma a1.
// Newton runs on the positions q1 and the multipliers, with
// dq1 = beta' h^2 dvdot1 and dv1 = gamma' h dvdot1 (beta' and gamma' the
// Newmark parameters times (1 - alpha_f) / (1 - alpha_m)). Its matrix is
// the KKT-structured
//   [ M + gamma' h C + beta' h^2 K   -J' ] [dq ]     [beta' h^2 r_eq ]
//   [ J                               0  ] [dmu] = - [Phi            ]
// with C = d r_eq / dv and K = d r_eq / dq the exact derivatives of the
// index-3 residual (DaeForm's Jacobian: compiled programs or tangents,
// evaluated at a step's first iteration and again where the iteration
// contracts slowly),
// the equation rows scaled by beta' h^2 and the multipliers by the same
// factor (mu = beta' h^2 lambda), after Bottasso, Bauchau and Cardona
// (2007): every block stays O(1) as h -> 0, where the unscaled matrix has
// condition O(h^-4). Nonholonomic rows are scaled by beta' h / gamma'.
//
// Start: a_0 = vdot_0 + Delta_alpha h q'''(0), Delta_alpha = alpha_m -
// alpha_f, Arnold and Bruls's perturbed starting value: on smooth
// solutions a_n tracks q''(t_n + Delta_alpha h) (from the a-recursion
// above, (1 - alpha_m) d1 + alpha_m d0 = Delta_alpha h for the offsets d
// of a from q'' in units of q'''), so the consistent a_0 = vdot_0 is O(h)
// off. (Measured, it changes nothing visible: q, v and the reported
// multipliers are second order with either start, the scheme's own
// lambda first order with either, an O(h) offset of the normal part of a
// that the constraints impose; docs/formulations.md.) q'''(0) is
// the central difference of the consistent accelerations at t_0 +- h
// along the Taylor polynomial of the motion (O(h^2) accurate: the O(h^2)
// velocity offsets of the two points are equal and cancel). Shifting a
// likewise by Delta_alpha (h' - h) q''' when the step changes from h to h'
// (q''' from the last step's (vdot1 - vdot0) / h) was tried and left out:
// through a rough patch of the four-bar near t = 0.05 s, where index 3's
// vdot is noisy, it raised HHT's error at t = 0.2 s twentyfold (rtol =
// atol = 1e-8: 4.2e-7 against 5.2e-9 without it).
//
// Step size: the local error of q. Along smooth solutions (a as above)
//   q1 - q0 - h v0 - h^2/2 vdot0 = h^3 (beta + Delta_alpha / 2) q''' + O(h^4)
// against h^3/6 q''' for the exact motion (Geradin and Cardona 2001, ch. 7:
// the estimate from the scheme's position against a Taylor predictor), so
// the local error is h^3 (beta - gamma/2 + 1/12) q''' (gamma = 1/2 -
// Delta_alpha; h^3/12 q''' for the trapezoidal rule, rho_inf = 1),
// estimated with h q''' = vdot1 - vdot0. Zienkiewicz and Xie's (1991)
// h^2 (beta - 1/6) (vdot1 - vdot0) is the same for gamma = 1/2 only (and
// 1.6 times larger at the default rho_inf = 0.8). The estimate is
// projected onto the manifold's tangent space and weighed by rtol |q| +
// atol in the RMS norm. It is held per unit step by default: the error
// over the step held to tol h / span, an O(h^2) quantity, so h ~ rtol^(1/2)
// and the global error, O(h^2), is proportional to rtol. Held per step
// instead (as IDAS and CVODES do; AlphaStudy::per_step_error), h ~
// rtol^(1/3) with far fewer steps at a given rtol, but the global error
// goes as rtol^(2/3), 1e3 to 4e5 times rtol on the pendulum and the
// four-bar, and at equal error the work is about the same
// (docs/formulations.md has the measurements). Either way Gustafsson's
// (1991) PI controller sets the next step. --step H takes fixed steps
// instead. Samples, roots (located by re-stepping from the step's start),
// energy-balance integrands (trapezoidal rule) and the drift contract go
// through the run's Mechanics and monitor as for the other adapters; the
// reported multipliers are the KKT reactions at the sampled (q, v), as on
// IDAS (second order, where the scheme's own are first).
//
// On models with unit quaternions (nq != nv) the position update is the
// Lie-group one of Bruls, Cardona and Arnold (2012), q1 = q0 (x)
// exp(h Dq) with Dq = v0 + h (1/2 - beta) a0 + h beta a1, Newton and the
// error test in the tangent space (nv): the step and those details are in
// alpha_step.cpp. Without quaternions the arithmetic is the vector one.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "formulation/dae_form.hpp"
#include "formulation/roots.hpp"
#include "integrate/adapters.hpp"
#include "integrate/alpha_step.hpp"
#include "integrate/common.hpp"
#include "integrate/step_budget.hpp"
#include "monitor/recorder.hpp"

namespace daedalus::internal {

AlphaParameters AlphaParametersFor(Integrator scheme, double rho_inf) {
  AlphaParameters p;
  const double r = rho_inf;
  if (scheme == Integrator::kHht) {
    // HHT: alpha_m = 0, alpha_f = -alpha_HHT = (1 - rho) / (1 + rho).
    p.alpha_m = 0.0;
    p.alpha_f = (1.0 - r) / (1.0 + r);
  } else {
    p.alpha_m = (2.0 * r - 1.0) / (r + 1.0);
    p.alpha_f = r / (r + 1.0);
  }
  p.gamma = 0.5 + p.alpha_f - p.alpha_m;
  p.beta = 0.25 * (p.gamma + 0.5) * (p.gamma + 0.5);
  return p;
}

namespace {

// The study knobs of the calling thread (adapters.hpp).
thread_local AlphaStudy g_study;

// The Newton iteration stops when its correction is below this fraction
// of the error weights (SUNDIALS's default, 0.1 of the error test,
// tightened by ten). The local error estimate reads vdot1, whose Newton
// error is the positions' divided by beta' h^2, times h^2 (beta - gamma/2
// + 1/12): the estimate carries the positions' Newton error times an O(1)
// factor, a hundredth of the error test. (Under the former error-per-unit-
// step control the estimate was held to tol h / span and the Newton
// tolerance had to shrink with h / span too.)
constexpr double kNewtonTolerance = 0.01;
// Step-size factors: growth capped at 2 per step, cut at most to 1/5.
constexpr double kMaxGrowth = 2.0, kMinShrink = 0.2, kSafety = 0.9;
// Gustafsson's PI controller for an error quantity of order k in h (3 per
// step, 2 per unit step):
//   h' = h kSafety err_n^-(kI + kP) err_n-1^kP,
// kI = 0.3 / k and kP = 0.4 / k (Gustafsson 1991; Hairer and Wanner,
// Solving ODEs II, IV.2); after a rejection the plain I controller
// err^(-1/k). The previous error is floored at 1e-4 (as DOPRI5's facold)
// so that one tiny error does not let the next step grow unchecked.
constexpr double kPiI = 0.3, kPiP = 0.4;
constexpr double kPrevErrorFloor = 1e-4;

}  // namespace

void SetAlphaStudy(const AlphaStudy& study) { g_study = study; }

// The tightest rtol the step-size-controlled alpha schemes can follow
// (issue 40; docs/formulations.md, "Generalized-alpha"): below it a warning.
constexpr double kAlphaRtolFloor = 1e-10;

void IntegrateAlpha(Mechanics* mech,
                    const InitialState& x0,
                    const SimulationOptions& options,
                    Observer* observer,
                    SimulationSummary* out) {
  SimulationSummary& sum = *out;
  const Model& model = mech->model();
  const Integrator scheme = options.integrator;
  const AlphaParameters par = AlphaParametersFor(scheme, options.rho_inf);
  // The scheme discretizes the index-3 residual whatever the formulation
  // named (without constraints every formulation is the same ODE).
  SimulationOptions form_options = options;
  form_options.formulation = Formulation::kIndex3;
  DaeForm form(mech, form_options, &sum.evaluator);
  if (options.step == 0.0 && options.rtol < kAlphaRtolFloor) {
    // Second order: at such a tolerance the steps are so small that the
    // round-off of the index-3 accelerations (~eps / h^2) outweighs the
    // truncation error; the four-bar's crank ended 6.3e-6 rad off at rtol
    // 1e-12 against 6.5e-8 at 1e-10, after 26 to 44 million steps.
    std::ostringstream os;
    os << "--rtol " << options.rtol << " is below what " << ToString(scheme)
       << " can reach (about " << kAlphaRtolFloor
       << ": a second-order scheme on the index-3 equations, whose "
          "round-off grows as the steps shrink); the run will take very "
          "many steps and end no more accurate than at rtol "
       << kAlphaRtolFloor << ". Use --rtol >= " << kAlphaRtolFloor
       << ", or --integrator idas --formulation ggl for a tighter result";
    sum.warnings.push_back(os.str());
  }
  Recorder recorder(model, &sum, observer);
  const QuadLayout& layout = recorder.layout();
  const RootSet roots(model);
  // The model's description when it has quaternions (the Lie-group
  // update, alpha_step.cpp), null otherwise.
  const ModelData* chart = form.layout().chart;
  const int nr = roots.size();

  Eigen::VectorXd q = x0.q, v = x0.v;
  if (!MakeConsistent(mech, options, &q, &v, &sum)) return;
  AlphaState s;
  {
    const int n = form.size();
    Eigen::VectorXd y0(n), yp0(n);
    KktResult r0;
    try {
      form.ConsistentStart(options.t0, q, v, y0, yp0, &r0);
    } catch (const std::exception& e) {
      sum.error = std::string("initial accelerations: ") + e.what();
      return;
    }
    const DaeLayout& L = form.layout();
    s.t = options.t0;
    s.q = q;
    s.v = v;
    s.vdot = yp0.segment(L.iv(), L.nv);
    s.lambda = y0.segment(L.il(), L.nc);
    // a0 = vdot0 here; the perturbed start shifts it by Delta_alpha h0
    // q'''(0) for the first step h0 (start_for below).
    s.a = s.vdot;
  }
  SolverStats& st = sum.stats;
  AlphaStepper stepper(&form, par, options, &st);
  stepper.set_mass_scale(
      std::max(mech->DenseMass().diagonal().cwiseAbs().maxCoeff(), 1e-300));

  KktResult r;
  Eigen::VectorXd quad = Eigen::VectorXd::Zero(layout.size());
  Eigen::VectorXd g_prev(layout.size()), g(layout.size());
  std::vector<double> root_prev(static_cast<size_t>(nr)),
      root_now(static_cast<size_t>(nr));
  // Evaluates the reported state at (t, q, v): the KKT reactions, the
  // energy-balance integrands and the root functions.
  auto evaluate = [&](const AlphaState& x, std::vector<double>* rv) {
    mech->Evaluate(x.t, x.q, x.v);
    mech->SolveKkt(mech->bias(), &r);
    mech->Integrands(layout, r.lambda, 0.0, g);
    if (nr > 0) roots.Evaluate(*mech, r.lambda, rv->data());
  };

  const bool fixed = options.step > 0.0;
  const double span = options.t_end - options.t0;
  double h = options.step;
  if (!fixed) {
    // Initial step: the second-order term h^2/2 vdot at a tenth of the
    // error weights, within the first output interval.
    double m = 0.0;
    const Eigen::VectorXd mag = TangentMagnitudes(chart, s.q);
    for (Eigen::Index i = 0; i < mag.size(); ++i)
      m = std::max(
          m, std::abs(s.vdot[i]) / (options.rtol * mag[i] + options.atol));
    h = m > 0.0 ? std::sqrt(0.2 / m) : options.output_step;
    h = std::min({h, options.output_step, 0.01 * span});
  }
  // The perturbed start (see the file's head): until the first step is
  // accepted, a step of hk starts from a0 = vdot0 + Delta_alpha hk q3,
  // q3 the estimate of q'''(t0).
  const AlphaStudy study = g_study;
  const double dalpha = par.alpha_m - par.alpha_f;
  bool shift_a = study.perturbed_start && dalpha != 0.0;
  Eigen::VectorXd q3 = Eigen::VectorXd::Zero(s.v.size());
  if (shift_a) {
    // Consistent accelerations at t0 +- d along the Taylor polynomial, d
    // the first step (the central difference's O(d^2) error enters a0 as
    // O(h^3)).
    const double d = h;
    Eigen::VectorXd acc[2];
    for (int k = 0; k < 2; ++k) {
      const double sd = k == 0 ? d : -d;
      // (On the group: q (x) exp(sd v + sd^2/2 vdot), AdvancePositions.)
      const Eigen::VectorXd qd =
          chart == nullptr
              ? Eigen::VectorXd(s.q + sd * s.v + (0.5 * sd * sd) * s.vdot)
              : AdvancePositions(chart, s.q,
                                 sd * s.v + (0.5 * sd * sd) * s.vdot);
      const Eigen::VectorXd vd = s.v + sd * s.vdot;
      mech->Evaluate(s.t + sd, qd, vd);
      mech->SolveKkt(mech->bias(), &r);
      acc[k] = r.vdot;
    }
    q3 = (acc[0] - acc[1]) / (2.0 * d);
    if (!q3.allFinite()) {
      sum.error = std::string(ToString(scheme)) +
                  ": the starting third derivative q''' (central difference "
                  "of the consistent accelerations at t0 +- " +
                  std::to_string(d) +
                  " s) is not finite; the motion may be singular near t0";
      return;
    }
  }
  // The state a step of size hk starts from.
  auto start_for = [&](const AlphaState& x, double hk) {
    AlphaState x0s = x;
    if (shift_a) x0s.a += (dalpha * hk) * q3;
    return x0s;
  };
  // An accepted step: the start is over; the study trace.
  auto accept = [&](const AlphaState&, const AlphaState& x1) {
    shift_a = false;
    if (study.trace != nullptr) {
      study.trace->t.push_back(x1.t);
      study.trace->lambda.push_back(x1.lambda);
      study.trace->a.push_back(x1.a);
    }
  };
  // The error held per step (order 3 in h) or per unit step (order 2).
  const bool per_step = study.per_step_error;
  const double order = per_step ? 3.0 : 2.0;
  double err_prev = -1.0;  // the PI controller's previous error (none yet)
  bool after_reject = false;
  const long n_out = NumOutputs(options);
  try {
    evaluate(s, &root_prev);
    recorder.Record(*mech, r.vdot, r.lambda, Eigen::VectorXd(), 0.0, true);
    g_prev = g;
    for (long k = 1; k <= n_out; ++k) {
      const double t_out = OutputTime(options, k);
      bool stop = false;
      while (s.t < t_out) {
        if (options.stop != nullptr &&
            options.stop->load(std::memory_order_relaxed) != 0)
          throw std::runtime_error("stop requested");
        if (StepsLeft(options.max_steps, st.steps) == 0)  // the run's budget
          throw std::runtime_error(StepBudgetSpent(options.max_steps, s.t));
        // Land on the output time; stretch a step that would leave a
        // sliver of under a hundredth of itself.
        double hk = std::min(h, t_out - s.t);
        if (t_out - s.t - hk < 0.01 * hk) hk = t_out - s.t;
        const bool clipped = hk < h;
        if (!(hk > 16 * std::numeric_limits<double>::epsilon() *
                       std::max(1.0, std::abs(s.t)))) {
          std::ostringstream os;
          os << "the step fell to " << hk << " s at t = " << s.t
             << ", below the resolution of the time; the motion may be "
                "singular there, or --atol too small for the positions";
          throw std::runtime_error(
              os.str() +
              SingularityNote(mech, options.formulation, s.t, s.q, s.v));
        }
        AlphaState s1;
        std::string why;
        const double tol_factor =
            kNewtonTolerance *
            (fixed || per_step ? 1.0 : std::min(1.0, hk / span));
        const AlphaState s0 = start_for(s, hk);
        if (!stepper.Step(s0, hk, tol_factor, &s1, &why)) {
          ++st.nonlinear_conv_failures;
          if (fixed) {
            std::ostringstream os;
            os << "at t = " << s.t << " with --step " << hk << ": " << why
               << "; reduce --step";
            throw std::runtime_error(os.str());
          }
          h = 0.25 * hk;
          after_reject = true;
          continue;
        }
        if (!fixed) {
          // The local error held to the tolerance per step (see the file's
          // head). The estimate is projected onto the tangent space of the
          // manifold at q1 in the mass metric (as CVODES's projected error
          // test): index 3 turns a velocity drift eps = J v0 into an
          // acceleration of order eps / h along M^-1 J', so the normal part
          // of the estimate grows as the step shrinks; unprojected, the
          // pendulum's step fell to 3e-15 s at rtol 1e-4.
          evaluate(s1, &root_now);
          Eigen::VectorXd e = stepper.ErrorEstimate(s, s1, hk);
          ProjectTangentError(mech, chart, s1.q, &e);
          const double err =
              stepper.ErrorNorm(e, s, s1) * (per_step ? 1.0 : span / hk);
          const double f_i =
              err > 0.0 ? kSafety * std::pow(err, -1.0 / order) : kMaxGrowth;
          if (err > 1.0) {
            ++st.error_test_failures;
            h = hk * std::max(kMinShrink, std::min(f_i, 1.0));
            after_reject = true;
            continue;
          }
          double f = f_i;
          if (err > 0.0 && err_prev > 0.0 && !after_reject)
            f = kSafety * std::pow(err, -(kPiI + kPiP) / order) *
                std::pow(err_prev, kPiP / order);
          if (after_reject) f = std::min(f, 1.0);  // no growth right after
          err_prev = std::max(err, kPrevErrorFloor);
          after_reject = false;
          // The next step: from this one, unless this one was cut to land
          // on the output time (then h stands unless the error asks less).
          const double next = hk * std::clamp(f, kMinShrink, kMaxGrowth);
          h = clipped ? (f >= 1.0 ? h : std::min(h, next)) : next;
        } else {
          evaluate(s1, &root_now);
        }
        // Roots: a sign change over the step, located by re-stepping from
        // its start (the secant method with the Illinois modification).
        std::vector<int> found(static_cast<size_t>(nr), 0);
        bool any = false;
        for (int e = 0; e < nr; ++e) {
          const double a = root_prev[e], b = root_now[e];
          if ((a < 0.0 && b >= 0.0) || (a > 0.0 && b <= 0.0)) {
            found[e] = b > a ? 1 : -1;
            any = true;
          }
        }
        if (any) {
          // The first root among those found (each located alone).
          double t_root = s1.t;
          int first = -1;
          AlphaState at_root;
          std::vector<double> gv(static_cast<size_t>(nr));
          for (int e = 0; e < nr; ++e) {
            if (found[e] == 0) continue;
            double ta = s.t, tb = s1.t, ga = root_prev[e], gb = root_now[e];
            AlphaState trial = s1;
            int side = 0;
            for (int it = 0; it < 60 && tb - ta > 1e-13 * std::max(1.0, tb);
                 ++it) {
              const double tm = tb - gb * (tb - ta) / (gb - ga);
              std::string ignored;
              if (!stepper.Step(start_for(s, tm - s.t), tm - s.t, tol_factor,
                                &trial, &ignored))
                break;
              evaluate(trial, &gv);
              const double gm = gv[e];
              if ((gm < 0.0) == (ga < 0.0) && gm != 0.0) {
                ta = tm;
                ga = gm;
                if (side == -1) gb *= 0.5;
                side = -1;
              } else {
                tb = tm;
                gb = gm;
                if (side == 1) ga *= 0.5;
                side = 1;
                if (gm == 0.0) break;
              }
            }
            if (tb < t_root || first < 0) {
              t_root = tb;
              first = e;
              if (!stepper.Step(start_for(s, tb - s.t), tb - s.t, tol_factor,
                                &at_root, &why))
                at_root = s1;
            }
          }
          // The model's events come first among the root functions.
          const bool user_event =
              first >= 0 &&
              first < static_cast<int>(model.data().events.size());
          std::vector<int> only(static_cast<size_t>(nr), 0);
          if (user_event) {
            // Stop at the event: the step ends at the root.
            only[first] = found[first];
            s1 = at_root;
            evaluate(s1, &root_now);
            quad += 0.5 * (s1.t - s.t) * (g_prev + g);
            g_prev = g;
            accept(s, s1);
            s = s1;
            ++st.steps;
            recorder.Record(*mech, r.vdot, r.lambda, quad, 0.0, false);
            if (roots.Record(model, s.t, only.data(), &sum)) stop = true;
            root_prev = root_now;
            if (stop) break;
            continue;
          }
          // Feasibility margins: the step is kept whole; the interval
          // opens or closes at the located time.
          evaluate(s1, &root_now);
          if (roots.Record(model, t_root, found.data(), &sum)) stop = true;
        }
        quad += 0.5 * (s1.t - s.t) * (g_prev + g);
        g_prev = g;
        root_prev = root_now;
        accept(s, s1);
        s = s1;
        ++st.steps;
        if (!s.q.allFinite() || !s.v.allFinite())
          throw std::runtime_error("the state became non-finite");
        if (stop) break;
      }
      if (!stop) {
        // The mechanics holds the state at t_out (the last evaluate).
        recorder.Record(*mech, r.vdot, r.lambda, quad, 0.0, false);
      }
      // The drift contract: index 3 enforces the positions only, so the
      // velocity drift is the scheme's own (reported, and held to
      // --drift-tol when one is given).
      int row = 0;
      double drift = 0.0;
      const std::string violation =
          DriftViolation(model, options, sum, &row, &drift);
      if (!violation.empty()) {
        std::string cannot;
        EscalationTarget(options, &cannot);
        throw std::runtime_error(violation + "; hint: tighten --rtol" +
                                 (options.drift_action == DriftAction::kEscalate
                                      ? " (no escalation: " + cannot + ")"
                                      : std::string()));
      }
      if (stop) break;
    }
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    sum.error = std::string(ToString(scheme)) + ": " + e.what();
    sum.residual_evals = st.rhs_evals;
    return;
  }
  sum.residual_evals = st.rhs_evals;
  sum.ok = true;
}

}  // namespace daedalus::internal
