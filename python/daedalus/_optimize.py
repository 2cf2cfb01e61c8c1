"""Optimal control from Python (docs/optimal_control.md)."""
import json

from . import _daedalus
from ._options import to_args
from ._run import _as_problem


class OptimizeResult:
    """The answer of daedalus.optimize:

    ok, status, message (IPOPT's status and what it means), warnings,
    iterations, objective (in the spec's sense), kkt_residual (unscaled,
    recomputed from IPOPT's multipliers), controls (a list of dicts: input,
    basis, knots, coefficients as numpy arrays), free_parameters and
    free_initial_state (dicts), history (iterations x 5: iteration,
    objective, infeasibility, dual infeasibility, step), the solution's run
    t (N), q (N x nq), v (N x nv), u (N x channels: the controls at t),
    summary (the run's JSON summary as a dict, with "optimal_control" when
    output_dir was given) and optimal_control (that entry as a dict)."""

    def __init__(self, raw):
        for key in ("ok", "status", "message", "warnings", "iterations",
                    "objective", "kkt_residual", "controls",
                    "free_parameters", "free_initial_state", "history", "t",
                    "q", "v", "u"):
            setattr(self, key, raw[key])
        self.summary = json.loads(raw["summary_json"])
        self.optimal_control = json.loads(raw["optimal_control_json"])

    def __repr__(self):
        # Without IPOPT's multipliers (it did not converge) the KKT
        # residual is not known (NaN): say so instead of printing nan.
        kkt = (f"KKT residual {self.kkt_residual:.3g}"
               if self.kkt_residual == self.kkt_residual
               else "no KKT residual (no multipliers)")
        return (f"<daedalus.OptimizeResult {self.status}: objective "
                f"{self.objective:.10g}, {kkt}, {self.iterations} iterations>")


class MultiStartResult:
    """The answer of daedalus.optimize with starts=: one optimization per
    start, in order.

    results (an OptimizeResult per start; None where the start could not
    be run), errors (per start: why, or ""), starts (per start: the
    guesses it overrode, a dict; {} for the spec's own), optimum (per
    start: 1 for the best optimum reached, 2 for the next distinct one,
    ..., 0 when it did not converge; docs/optimal_control.md, "Several
    starts"), distinct_optima, best (the start with the best converged
    objective, -1 if none) and best_result (its OptimizeResult, or None)."""

    def __init__(self, raw):
        self.results = [None if r is None else OptimizeResult(r)
                        for r in raw["results"]]
        for key in ("errors", "starts", "optimum", "distinct_optima",
                    "best"):
            setattr(self, key, raw[key])
        self.best_result = (self.results[self.best] if self.best >= 0
                            else None)

    def __repr__(self):
        ok = sum(1 for r in self.results if r is not None and r.ok)
        best = ("none converged" if self.best < 0 else
                f"best start {self.best}: objective "
                f"{self.best_result.objective:.10g}")
        return (f"<daedalus.MultiStartResult {len(self.results)} starts, "
                f"{ok} converged, {self.distinct_optima} distinct optima, "
                f"{best}>")


def optimize(problem, spec, *, starts=None, seed=1, callback=None,
             output_dir=None, **options):
    """Solves the optimal control problem `spec` on a catalogue problem (by
    name) or a Problem and returns an OptimizeResult.

    spec: a dict with the keys of the --optimize file (controls,
    parameters, initial_state, objective, maximize, constraints,
    path_constraints, path_samples, solver, and run options such as t_end),
    or its JSON text. Other keywords are run options as for daedalus.run
    (rtol=, params={...}, ...). callback(info) is called after every IPOPT
    iteration with a dict (iteration, objective, infeasibility,
    dual_infeasibility, step, start); returning False stops the solve.
    With output_dir the solution's files are written there as by
    --optimize.

    starts: optimize from several starts, one after the other, and return
    a MultiStartResult. An int N draws N starts as the command line's
    --multi-start N --seed SEED does (start 0 the spec's own guess, start
    i each free variable uniform within its bounds; the same starts as the
    command line's members); a list of dicts gives them ({name: guess},
    names as the free variables: "u.c0", a parameter, "q0[x]"; {} is the
    spec's own start). With output_dir, start i's files go to
    output_dir/members/NNNNNN as the command line's members'.

    Raises ValueError for a bad spec or option (naming it), RuntimeError
    when IPOPT's module is missing or the initial guess cannot be run
    (with starts, a start that cannot be run is kept as an error instead)."""
    p = _as_problem(problem, options)
    text = spec if isinstance(spec, str) else json.dumps(spec)
    if callback is not None and not callable(callback):
        raise TypeError("callback: a function of one dict")

    def cb(info):
        answer = callback(info)
        return True if answer is None else bool(answer)

    call = cb if callback is not None else None
    if starts is None:
        raw = _daedalus._optimize(p, text, to_args(options), call,
                                  output_dir or "")
        return OptimizeResult(raw)
    if isinstance(starts, bool) or not isinstance(starts, (int, list, tuple)):
        raise TypeError("starts: a number of starts to draw, or a list of "
                        "dicts of initial guesses by variable name")
    if isinstance(starts, int):
        if starts < 1:
            raise ValueError(f"starts: {starts} starts; give at least 1")
        guesses, draw = [], starts
    else:
        guesses, draw = [], 0
        for i, s in enumerate(starts):
            if not isinstance(s, dict):
                raise TypeError(f"starts[{i}]: a dict of initial guesses "
                                "by variable name")
            guesses.append([(str(k), float(v)) for k, v in s.items()])
    raw = _daedalus._optimize_starts(p, text, to_args(options), guesses,
                                     draw, int(seed), call, output_dir or "")
    return MultiStartResult(raw)
