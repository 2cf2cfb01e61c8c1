// The IDAS adapter: integrates a DAE form (formulation/dae_form.hpp), its
// energy-balance quadratures, forward sensitivities and root functions,
// and applies the drift contract (an index-1 form escalates to GGL, IDAS's
// constraint-enforcing form). No mechanics here: everything about the
// equations comes from the form and its Mechanics.
#include <idas/idas.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>
#include <sunnonlinsol/sunnonlinsol_newton.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "contact/contact_stage.hpp"
#include "eval/chart.hpp"
#include "events/event_handler.hpp"
#include "formulation/dae_form.hpp"
#include "integrate/adapters.hpp"
#include "integrate/common.hpp"
#include "integrate/idas_newton.hpp"
#include "integrate/idas_segment.hpp"
#include "integrate/step_budget.hpp"
#include "integrate/sundials_util.hpp"
#include "kkt/sparse_backend.hpp"
#include "monitor/recorder.hpp"
#include "sensitivity/forward.hpp"

namespace daedalus::internal {

namespace {

std::string HintFor(int flag, Formulation f, long max_steps) {
  switch (flag) {
    case IDA_TOO_MUCH_WORK:
      return StepBudgetHint(max_steps) +
             (f == Formulation::kIndex3
                  ? std::string("; the index-3 form needs many small steps "
                                "where it is ill-conditioned: --formulation "
                                "ggl does not")
                  : std::string());
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
                   "can stall the corrector: pass --multiplier-atol 1 (the "
                   "multipliers are not in the error test), raise --atol, "
                   "try another "
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

void IntegrateIdas(Mechanics* mech,
                   const InitialState& x0,
                   const SimulationOptions& options,
                   Observer* observer,
                   SimulationSummary* out) {
  SimulationSummary& sum = *out;
  const Model& model = mech->model();
  Recorder recorder(model, &sum, observer);
  auto form = std::make_unique<DaeForm>(mech, options, &sum.evaluator);
  IdasRun run;
  run.stop = options.stop;
  run.form = form.get();

  // ---- consistent initialization: project, then vdot0 and lambda0 from
  // the KKT system, so that IDAS starts from a consistent (y0, yp0).
  // The contacts' mode first (a mode switcher: src/contact/).
  Eigen::VectorXd q = x0.q, v = x0.v;
  std::unique_ptr<ModeSwitcher> modes;
  try {
    modes = MakeContactStage(mech, options, &sum);
    if (modes) {
      modes->Start(options.t0, &q, &v);
      recorder.SetContacts();
    }
  } catch (const std::exception& e) {
    sum.error = e.what();
    return;
  }
  if (!MakeConsistent(mech, options, &q, &v, &sum)) return;
  const int n = form->size();
  Eigen::VectorXd y0(n), yp0(n);
  KktResult r0;
  try {
    form->ConsistentStart(options.t0, q, v, y0, yp0, &r0);
  } catch (const std::exception& e) {
    sum.error = std::string("initial accelerations: ") + e.what();
    return;
  }

  RootSet roots(model, modes.get());
  run.roots = &roots;
  std::vector<int> found(static_cast<size_t>(roots.size()), 0);
  auto ctx = MakeContext();
  std::unique_ptr<Segment> seg = StartSegment(
      form.get(), &run, options, ctx.get(), options.t0, y0, yp0,
      Eigen::VectorXd::Zero(form->quad_layout().size()), roots.Directions(),
      SkipsConvergedResidual(options, Staggered(options.sensitivity)));

  // ---- forward sensitivities (IDASensInit), consistent at t0.
  const SensitivityOptions& so = options.sensitivity;
  const bool fsa = so.method == SensMethod::kForward;
  int ns = 0;
  VectorArrayPtr yS, ypS, qS;
  Eigen::VectorXd pvals = mech->parameters(), pbar;
  std::vector<int> plist;
  Eigen::MatrixXd sens_now;
  const int ny = mech->nq() + mech->nv() + mech->nc();
  // Only the model's own quadratures' sensitivities are reported, and only
  // theirs are computed (UserQuadSens): the energy-balance entries cost a
  // KKT linearization per step on Baumgarte (31 % of the bench's n_p = 1
  // run) and restrain no step. Measured on the slider-crank (k, c, a;
  // rtol 1e-8 to 1e-12), dropping them leaves the unstabilized, Baumgarte
  // and GGL step counts within 4 % or lower (267 to 214 at 1e-12), the error
  // within a factor 1.8 either way; the plain index-3 run's steps do not
  // change when the energy quadratures leave the state's error test.
  // Index 3 keeps them: only positions are in its error test and its
  // sensitivities' accuracy is erratic (positions 2e-7 to 2e-6 of the
  // reference at rtol 1e-8, 2.5e-8 to 1.6e-7 at 1e-10, with or without the
  // entries, whatever the Newton coefficient); without them the
  // slider-crank at rtol 1e-10 ends 1.31e-7 from the reference, past the
  // 1e-7 of
  // Sensitivity.IdasGglAndIndexThreeRunAGeometricParameterAtTightTolerance
  // (with them 2.5e-8, in 96 steps against 116: they change the order and
  // step sequence, they do not restrain it). docs/sensitivities.md,
  // "Which quadratures' sensitivities are computed".
  run.user_quad_sens_only = !options.sensitivity.error_control ||
                            form->layout().form != Formulation::kIndex3;
  const bool has_quad_sens =
      fsa && (form->quad_layout().nuq > 0 || !run.user_quad_sens_only);
  if (fsa) {
    std::vector<SensParameter> sens;
    try {
      sens = ResolveSensParameters(model, so.parameters);
    } catch (const std::exception& e) {
      sum.error = e.what();
      return;
    }
    ns = static_cast<int>(sens.size());
    yS = MakeVectorArray(ns, seg->y.get());
    ypS = MakeVectorArray(ns, seg->y.get());
    qS = MakeVectorArray(ns, seg->yq.get());
    for (int i = 0; i < ns; ++i) {
      run.directions.push_back(ParameterDirection(model, sens[i]));
      form->InitialSensitivity(r0, sens[i], so.initial_tangent,
                               View(yS.get()[i]), View(ypS.get()[i]));
      View(qS.get()[i]).setZero();
    }
    if (so.difference_quotient) {
      sum.error = DqParameters(sens, pvals, &plist, &pbar);
      if (!sum.error.empty()) return;
    }
    StartSensitivities(seg.get(), &run, form.get(), options, ctx.get(), ns,
                       yS.get(), ypS.get(), qS.get(), has_quad_sens, &pvals,
                       &plist, &pbar);
    sens_now.resize(ny, ns);
    recorder.AttachSensitivities(&sens_now);
    StartForwardResult(model, sens, &sum.sensitivities);
  }

  double jumps = 0.0;  // energy added by escalation projections
  Eigen::VectorXd w(form->quad_layout().size());
  // `restart`: a new segment has just started (after a reset), whose
  // sensitivities and quadratures are the ones it started from (yS, w);
  // `total`: the reported sensitivities to write instead (at a stop).
  auto sample = [&](double t, bool first,
                    const Eigen::MatrixXd* total = nullptr,
                    bool restart = false) {
    if (fsa) {
      if (!first && !restart) {
        double ts = t;
        DAEDALUS_SUNDIALS_CHECK(IDAGetSens(seg->mem, &ts, yS.get()));
      }
      for (int i = 0; i < ns; ++i)
        sens_now.col(i) = ConstView(yS.get()[i]).head(ny);
      if (total != nullptr) sens_now = *total;
    }
    const KktResult& r = form->SampleState(t, ConstView(seg->y.get()).data());
    if (!first && !restart) {
      double tq = t;
      DAEDALUS_SUNDIALS_CHECK(IDAGetQuad(seg->mem, &tq, seg->yq.get()));
      w = ConstView(seg->yq.get());
    }
    recorder.Record(*mech, r.vdot, r.lambda, w, jumps, first);
    if (modes) modes->AtSample(*mech, r.lambda);
  };
  // Statistics of the finished segments, and the current one's.
  SolverStats done;
  auto collect_stats = [&] {
    SolverStats s;
    IDAGetNumSteps(seg->mem, &s.steps);
    IDAGetNumResEvals(seg->mem, &s.rhs_evals);
    IDAGetNumJacEvals(seg->mem, &s.jacobian_evals);
    IDAGetNumErrTestFails(seg->mem, &s.error_test_failures);
    IDAGetNumNonlinSolvConvFails(seg->mem, &s.nonlinear_conv_failures);
    sum.stats.steps = done.steps + s.steps;
    sum.stats.rhs_evals = done.rhs_evals + s.rhs_evals;
    sum.stats.jacobian_evals = done.jacobian_evals + s.jacobian_evals;
    sum.stats.error_test_failures =
        done.error_test_failures + s.error_test_failures;
    sum.stats.nonlinear_conv_failures =
        done.nonlinear_conv_failures + s.nonlinear_conv_failures;
    sum.residual_evals = sum.stats.rhs_evals;
  };

  // The options of the current segment (an escalation changes the
  // formulation).
  SimulationOptions seg_options = options;

  // ---- events (events/event_handler.hpp)
  std::unique_ptr<EventHandler> events;
  try {
    events = std::make_unique<EventHandler>(mech, options, &roots, &sum,
                                            run.directions);
  } catch (const std::exception& e) {
    sum.error = e.what();
    return;
  }
  const int nq = model.nq(), nv = model.nv(), nd = nq + nv;
  // (q, v) at t and their rates: q' = N(q) v, v' from the KKT system at
  // the state (the flow on the manifold).
  auto flow_at = [&](double t, const double* yy) {
    FlowPoint f;
    f.t = t;
    f.y = Eigen::Map<const Eigen::VectorXd>(yy, nd);
    const KktResult& r = form->SampleState(t, yy);
    f.ydot.resize(nd);
    CoordinateRates<double>(model.data(), f.y.head(nq), f.y.tail(nv),
                            f.ydot.head(nq));
    f.ydot.tail(nv) = r.vdot;
    return f;
  };
  const QuadLayout QL =
      form->quad_layout();  // a copy: escalation replaces form
  // Fixed-time sensitivities at t: the state's (nd x ns) and the
  // quadratures' (layout x ns).
  auto state_sens = [&](double t) {
    Eigen::MatrixXd s(nd, ns);
    if (!fsa) return s;
    double ts = t;
    DAEDALUS_SUNDIALS_CHECK(IDAGetSens(seg->mem, &ts, yS.get()));
    for (int i = 0; i < ns; ++i) s.col(i) = ConstView(yS.get()[i]).head(nd);
    return s;
  };
  auto quad_sens = [&](double t) {
    Eigen::MatrixXd qs = Eigen::MatrixXd::Zero(QL.size(), ns);
    if (!has_quad_sens) return qs;
    double tq = t;
    DAEDALUS_SUNDIALS_CHECK(IDAGetQuadSens(seg->mem, &tq, qS.get()));
    for (int i = 0; i < ns; ++i) qs.col(i) = ConstView(qS.get()[i]);
    return qs;
  };
  Eigen::VectorXd integrands(QL.size());
  auto user_quads = [&](double t, const double* yy, const Eigen::MatrixXd& qs) {
    QuadratureSnapshot q;
    form->Quadratures(t, yy, integrands.data());
    q.value = w.segment(QL.user(), QL.nuq);
    q.integrand = integrands.segment(QL.user(), QL.nuq);
    if (fsa) q.sens = qs.middleRows(QL.user(), QL.nuq);
    return q;
  };
  Eigen::MatrixXd stop_quad_sens;  // at a stop, with the event-time term

  // At a root return that fired a model event (as in cvodes.cpp): the
  // sample before it, the records, and a new segment after a reset.
  // Returns true when the run stops.
  auto at_events = [&](double t) {
    const size_t first = sum.events.size();
    const double* yy = ConstView(seg->y.get()).data();
    const FlowPoint minus = flow_at(t, yy);
    const Eigen::MatrixXd s = state_sens(t);
    events->Linearize(minus, s);
    if (events->stops() && fsa) {
      const Eigen::MatrixXd total = events->TotalSensitivity(s);
      sample(t, false, &total);
    } else {
      sample(t, false);
    }
    const Eigen::MatrixXd qsens = quad_sens(t);
    const QuadratureSnapshot quads = user_quads(t, yy, qsens);
    const Eigen::VectorXd before = integrands;
    roots.Record(model, t, found.data(), &sum);
    events->Annotate(first, quads);
    if (events->stops()) {
      if (fsa) {
        stop_quad_sens = qsens;
        if (events->tau().size() > 0)
          stop_quad_sens += before * events->tau().transpose();
      }
      return true;
    }
    if (events->reset() == nullptr) return false;
    // ---- the reset: the consistent state after it, a new segment there.
    const double energy_minus = sum.final.energy;
    Eigen::VectorXd qn, vn;
    events->ResetState(&qn, &vn);
    Eigen::VectorXd y1(form->size()), yp1(form->size());
    KktResult r1;
    form->ConsistentStart(t, qn, vn, y1, yp1, &r1);
    const double energy_plus = mech->energy();
    FlowPoint plus;
    plus.t = t;
    plus.y.resize(nd);
    plus.y << qn, vn;
    plus.ydot.resize(nd);
    plus.ydot << yp1.head(nq), r1.vdot;
    collect_stats();
    done = sum.stats;
    seg = StartSegment(form.get(), &run, seg_options, ctx.get(), t, y1, yp1, w,
                       roots.Directions(),
                       SkipsConvergedResidual(seg_options, Staggered(so)));
    if (fsa) {
      form->Quadratures(t, y1.data(), integrands.data());
      const Eigen::MatrixXd jump =
          (before - integrands) * events->tau().transpose();
      // The saltation and each direction's linearized KKT solution at the
      // restart (the multipliers' sensitivities and the rates), with the
      // mechanics fully evaluated there.
      mech->Evaluate(t, qn, vn);
      const Eigen::MatrixXd s_plus = events->SensitivitiesAfter(plus, r1, s);
      mech->Evaluate(t, qn, vn);
      for (int i = 0; i < ns; ++i) {
        const InitialSensitivity d = mech->LinearizeRestart(
            r1.vdot, r1.lambda, s_plus.col(i).head(nq), s_plus.col(i).tail(nv),
            run.directions[static_cast<size_t>(i)]);
        form->FillSensitivity(d, View(yS.get()[i]), View(ypS.get()[i]));
        View(qS.get()[i]) = qsens.col(i) + jump.col(i);
      }
      StartSensitivities(seg.get(), &run, form.get(), options, ctx.get(), ns,
                         yS.get(), ypS.get(), qS.get(), has_quad_sens, &pvals,
                         &plist, &pbar);
    }
    events->Restarted(energy_minus, energy_plus);
    recorder.NoteReset(energy_plus - energy_minus);
    sample(t, false, nullptr, true);
    return false;
  };

  // At a root of the mode switcher: the new mode, and a new segment from
  // its consistent state (as after a reset map).
  // With forward sensitivities, they cross the switch by its saltation
  // matrices (docs/contact.md, "Sensitivities"), as across a reset.
  auto mode_switch = [&](double t) {
    const auto Y = ConstView(seg->y.get());
    FlowPoint minus;
    Eigen::MatrixXd s_minus, qsens;
    Eigen::VectorXd before;
    if (fsa) {
      minus = flow_at(t, Y.data());
      s_minus = state_sens(t);
      qsens = quad_sens(t);
      form->Quadratures(t, Y.data(), integrands.data());
      before = integrands;
    }
    const ModeRestart r =
        modes->Switch(t, Y.head(model.nq()), Y.segment(model.nq(), model.nv()),
                      found.data() + roots.mode_offset());
    if (!r.restart) return;
    Eigen::VectorXd y1(form->size()), yp1(form->size());
    KktResult r1;
    form->ConsistentStart(t, r.q, r.v, y1, yp1, &r1);
    collect_stats();
    done = sum.stats;
    seg = StartSegment(form.get(), &run, seg_options, ctx.get(), t, y1, yp1, w,
                       roots.Directions(),
                       SkipsConvergedResidual(seg_options, Staggered(so)));
    if (fsa) {
      FlowPoint plus;
      plus.t = t;
      plus.y.resize(nd);
      plus.y << r.q, r.v;
      plus.ydot.resize(nd);
      plus.ydot << yp1.head(nq), r1.vdot;
      Eigen::VectorXd tau;
      const Eigen::MatrixXd s_plus =
          modes->SensitivitiesAfter(minus, plus, s_minus, run.directions, &tau);
      form->Quadratures(t, y1.data(), integrands.data());
      const Eigen::MatrixXd jump = (before - integrands) * tau.transpose();
      // Each direction's linearized KKT solution at the restart (the
      // multipliers' sensitivities and the rates), as after a reset.
      mech->Evaluate(t, r.q, r.v);
      for (int i = 0; i < ns; ++i) {
        const InitialSensitivity d = mech->LinearizeRestart(
            r1.vdot, r1.lambda, s_plus.col(i).head(nq), s_plus.col(i).tail(nv),
            run.directions[static_cast<size_t>(i)]);
        form->FillSensitivity(d, View(yS.get()[i]), View(ypS.get()[i]));
        if (has_quad_sens) View(qS.get()[i]) = qsens.col(i) + jump.col(i);
      }
      StartSensitivities(seg.get(), &run, form.get(), options, ctx.get(), ns,
                         yS.get(), ypS.get(), qS.get(), has_quad_sens, &pvals,
                         &plist, &pbar);
    }
    recorder.NoteImpact(r.energy_change, r.impulse);
    sample(t, false, nullptr, true);
  };

  try {
    sample(options.t0, true);
    const long nout = NumOutputs(options);
    for (long k = 1; k <= nout; ++k) {
      const double tout = OutputTime(options, k);
      double tret = 0.0;
      run.Reset();
      collect_stats();  // --max-steps: what is left of the run's budget
      if (run.StopRequested()) {
        sum.error = "stop requested";  // Simulate reports it interrupted
        return;
      }
      if (StepsLeft(options.max_steps, sum.stats.steps) == 0) {
        sum.error =
            StepBudgetSpent(options.max_steps, OutputTime(options, k - 1));
        return;
      }
      DAEDALUS_SUNDIALS_CHECK(IDASetMaxNumSteps(
          seg->mem, StepsLeft(options.max_steps, sum.stats.steps)));
      const int flag = IDASolve(seg->mem, tout, &tret, seg->y.get(),
                                seg->yp.get(), IDA_NORMAL);
      if (flag < 0) {
        std::unique_ptr<char, decltype(&std::free)> name(
            IDAGetReturnFlagName(flag), &std::free);
        std::ostringstream os;
        os << "IDASolve failed with " << name.get() << " (flag " << flag
           << ") at t = " << tret;
        os << run.Detail();
        {
          const auto Y = ConstView(seg->y.get());
          os << SingularityNote(mech, form->layout().form, tret,
                                Y.head(model.nq()),
                                Y.segment(model.nq(), model.nv()));
        }
        std::string known = run.HintFromDetail();
        if (known.empty()) known = ToleranceHint(options);
        os << "; hint: "
           << (known.empty()
                   ? HintFor(flag, form->layout().form, options.max_steps)
                   : known);
        sum.error = os.str();
        collect_stats();
        return;
      }
      if (flag == IDA_ROOT_RETURN) {
        DAEDALUS_SUNDIALS_CHECK(IDAGetRootInfo(seg->mem, found.data()));
        if (events->Fire(found.data())) {
          if (at_events(tret)) break;
        } else {
          sample(tret, false);
          roots.Record(model, tret, found.data(), &sum);
        }
        if (modes && modes->Fired(found.data() + roots.mode_offset()))
          mode_switch(tret);
        if (tret < tout) --k;
        continue;
      }
      sample(tret, false);
      roots.Settle(*mech);
      // ---- drift contract
      int row = 0;
      double drift = 0.0;
      const std::string violation =
          DriftViolation(model, options, sum, &row, &drift);
      if (violation.empty()) continue;
      SimulationOptions now = options;
      now.formulation = form->layout().form;
      std::string cannot;
      const Formulation to = EscalationTarget(now, &cannot);
      if (options.drift_action != DriftAction::kEscalate ||
          to != Formulation::kGgl) {
        sum.error = violation +
                    "; hint: tighten --rtol/--atol or use --formulation ggl";
        if (options.drift_action == DriftAction::kEscalate)
          sum.error += " (no escalation: " + cannot + ")";
        collect_stats();
        return;
      }
      Escalation e;
      e.t = tret;
      e.constraint = model.RowName(row);
      e.drift = drift;
      e.from = now.formulation;
      e.to = to;
      sum.escalations.push_back(e);
      // Project onto the manifold and restart as GGL from there, with the
      // energy change of the projection as stabilization work.
      const Sample& f = sum.final;
      Eigen::VectorXd qn = f.q, vn = f.v;
      const ProjectionResult pp = mech->ProjectPositions(
          tret, &qn, vn, 1e-13, options.initial_projection_max_iter);
      if (!pp.converged) {
        sum.error = violation +
                    "; escalation to ggl failed: the position projection did "
                    "not converge";
        collect_stats();
        return;
      }
      mech->ProjectVelocities(tret, qn, &vn);
      collect_stats();
      done = sum.stats;
      now.formulation = to;
      form = std::make_unique<DaeForm>(mech, now, nullptr);
      run.form = form.get();
      Eigen::VectorXd y1(form->size()), yp1(form->size());
      KktResult r1;
      form->ConsistentStart(tret, qn, vn, y1, yp1, &r1);
      jumps += mech->energy() - f.energy;
      seg = StartSegment(form.get(), &run, now, ctx.get(), tret, y1, yp1, w,
                         roots.Directions(), false);
      seg_options = now;
    }
  } catch (const std::exception& e) {
    sum.error = std::string("evaluation failed at an output time: ") + e.what();
    collect_stats();
    return;
  }
  collect_stats();
  try {
    const bool stopped = stop_quad_sens.size() > 0;
    const Eigen::MatrixXd qsens =
        stopped ? stop_quad_sens : quad_sens(sum.t_reached);
    if (fsa) {
      SensitivityResult& sr = sum.sensitivities;
      sr.final = sens_now;
      for (int k = 0; k < QL.nuq; ++k)
        sr.quadratures.emplace_back(model.quadrature_name(k),
                                    qsens.row(QL.user() + k).transpose());
    }
    const double* yy = ConstView(seg->y.get()).data();
    const FlowPoint end = flow_at(sum.t_reached, yy);
    events->AtEnd(end, state_sens(sum.t_reached),
                  user_quads(sum.t_reached, yy, qsens));
  } catch (const std::exception& e) {
    sum.error = std::string("functionals at the end of the run: ") + e.what();
    return;
  }
  sum.ok = true;
}

}  // namespace daedalus::internal
