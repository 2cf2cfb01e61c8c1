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


def optimize(problem, spec, *, callback=None, output_dir=None, **options):
    """Solves the optimal control problem `spec` on a catalogue problem (by
    name) or a Problem and returns an OptimizeResult.

    spec: a dict with the keys of the --optimize file (controls,
    parameters, initial_state, objective, maximize, constraints,
    path_constraints, path_samples, solver, and run options such as t_end),
    or its JSON text. Other keywords are run options as for daedalus.run
    (rtol=, params={...}, ...). callback(info) is called after every IPOPT
    iteration with a dict (iteration, objective, infeasibility,
    dual_infeasibility, step); returning False stops the solve. With
    output_dir the solution's files are written there as by --optimize.

    Raises ValueError for a bad spec or option (naming it), RuntimeError
    when IPOPT's module is missing or the initial guess cannot be run."""
    p = _as_problem(problem, options)
    text = spec if isinstance(spec, str) else json.dumps(spec)
    if callback is not None and not callable(callback):
        raise TypeError("callback: a function of one dict")

    def cb(info):
        answer = callback(info)
        return True if answer is None else bool(answer)

    raw = _daedalus._optimize(p, text, to_args(options),
                              cb if callback is not None else None,
                              output_dir or "")
    return OptimizeResult(raw)
