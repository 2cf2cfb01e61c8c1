"""Runs and batches (docs/python.md)."""
import json
import threading

import numpy as np

from . import _daedalus
from ._daedalus import Problem
from ._options import to_args


class RunFailed(RuntimeError):
    """A run that started but did not reach t_end (the integrator failed,
    a drift contract failed, ...). `result` holds what it produced: the
    samples up to the failure and the summary marked failed."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def problem(name, **shape):
    """The catalogue problem `name` (daedalus.problems() lists them). A
    problem with problem-specific options takes them as keywords, as its
    executable takes --NAME VALUE: problem("rod_pair",
    coordinates="relative"), problem("chain", bodies=4),
    problem("golfer_3d", dynamics="recursive"). problem_options(name)
    lists them."""
    if not isinstance(name, str):
        raise TypeError("problem: the name is a string")
    options = problem_options(name)
    given = {}
    for key, value in shape.items():
        if key not in options:
            raise TypeError(
                f"problem '{name}' has no option '{key}'" +
                (f"; its options: {', '.join(options)}" if options
                 else "; it takes no problem-specific option"))
        if isinstance(value, bool):
            raise TypeError(f"{key}: not {value!r}")
        given[key] = str(value)
    return _daedalus._catalogue_problem(name, given)


def problem_options(name):
    """The problem-specific options of catalogue problem `name`: a dict
    from each option's name to (its choices, or [min, max] for a whole
    number; its default)."""
    return {o: (choices, default)
            for o, choices, default in _daedalus._problem_options(name)}


def _as_problem(p, options):
    """A Problem from a Problem or a catalogue name (whose options, such as
    coordinates=, bodies= or dynamics=, are taken out of `options`)."""
    if isinstance(p, Problem):
        return p
    if isinstance(p, str):
        shape = {o: options.pop(o) for o in problem_options(p)
                 if o in options}
        return problem(p, **shape)
    raise TypeError("expected a daedalus.Problem or a catalogue name, not "
                    f"{type(p).__name__}")


_ARRAYS = ("t", "q", "v", "vdot", "lambda", "power", "ideal_power",
           "reaction_power", "phi", "vel_residual", "drift_position",
           "drift_velocity", "energy", "energy_residual", "input_power",
           "damping_power", "other_power", "explicit_time_power",
           "energy_rate", "input_work", "damping_loss", "other_work",
           "constraint_work", "ideal_constraint_work", "explicit_time_work",
           "stabilization_work", "quadratures", "kkt_rcond", "sens")


class Results:
    """The samples of a run as numpy arrays (N samples; rows are times):

    t (N), q, v, vdot (N x nq), lambda (N x nc; also `lambda_`), power,
    ideal_power, phi, vel_residual, constraint_work,
    ideal_constraint_work (N x nc), reaction_power (N x nv),
    drift_position, drift_velocity, energy, energy_residual, damping_power,
    other_power, explicit_time_power, energy_rate, damping_loss,
    other_work, explicit_time_work, stabilization_work, kkt_rcond (N),
    input_power, input_work (N x inputs), quadratures (N x quadratures),
    sens (N x (nq + nv + nc) x sensitivity parameters: d(q, v, lambda)/dp),

    and `summary`, the JSON summary as a dict (docs/output.md). Names:
    coordinates, constraint_rows, sens_parameters; `params` the parameter
    values of the run by name."""

    def __init__(self, raw, problem):
        self._arrays = {k: raw[k] for k in _ARRAYS}
        for k, a in self._arrays.items():
            a.setflags(write=False)
            setattr(self, "lambda_" if k == "lambda" else k, a)
        self.summary = json.loads(raw["summary_json"])
        self.ok = bool(raw["ok"])
        self.error = raw["error"]
        self.coordinates = list(problem.coordinates)
        self.constraint_rows = list(problem.constraint_rows)
        self.sens_parameters = list(raw["sens_parameters"])
        self.params = dict(zip(problem.parameters, raw["params"].tolist()))

    def __getitem__(self, key):
        return self._arrays[key]

    def keys(self):
        return self._arrays.keys()

    def sensitivity(self, parameter):
        """d(q, v, lambda)/d(parameter) over the run: N x (nq + nv + nc)."""
        if parameter not in self.sens_parameters:
            raise KeyError(f"no sensitivity to '{parameter}'; the run's: "
                           f"{self.sens_parameters}")
        return self.sens[:, :, self.sens_parameters.index(parameter)]

    def __repr__(self):
        return (f"<daedalus.Results {self.summary.get('problem')}: "
                f"{'ok' if self.ok else 'failed'}, {len(self.t)} samples>")


def run(problem, *, check=True, **options):
    """Runs a catalogue problem (by name) or a Problem with the options of
    the command line as keywords (t_end=, rtol=, atol=, output_step=,
    formulation=, integrator=, params={...}, sens=[...], sens_method=,
    evaluator=, ...; daedalus.usage(problem) lists them) and returns the
    Results.

    Raises ValueError or TypeError for bad options (before running), and
    RunFailed (with .result) when the run fails, unless check=False.
    Ctrl-C (SIGINT) ends a run at its next step with KeyboardInterrupt."""
    p = _as_problem(problem, options)
    main = threading.current_thread() is threading.main_thread()
    raw = _daedalus._run(p, to_args(options), main)
    result = Results(raw, p)
    if check and not result.ok:
        raise RunFailed(f"run of '{p.name}' failed: {result.error}", result)
    return result


class BatchResult:
    """evaluate_batch's answer for M parameter points: `values` (M),
    `gradients` (M x len(vary)), `ok` (M booleans), `errors` (M strings,
    empty when ok), `summaries` (M dicts), `vary` (the names)."""

    def __init__(self, raw, vary):
        m = len(raw)
        self.vary = list(vary)
        self.ok = np.array([r["ok"] for r in raw], dtype=bool)
        self.errors = [r["error"] for r in raw]
        self.values = np.array([r["value"] if r["ok"] else np.nan
                                for r in raw])
        self.gradients = np.full((m, len(vary)), np.nan)
        for i, r in enumerate(raw):
            if r["ok"] and len(r["gradient"]) == len(vary):
                self.gradients[i] = r["gradient"]
        self.summaries = [json.loads(r["summary_json"]) for r in raw]


def evaluate_batch(problem, points, *, functional, vary=None, params=None,
                   **options):
    """Value and gradient of the functional `functional` (a running and/or
    terminal cost declared by the model) at every row of `points`, by
    adjoint sensitivities (include/daedalus/ensemble.hpp).

    points: M x len(vary) values of the parameters `vary` (default: all of
    the model's, in order); the others take their defaults, or `params`.
    Other keywords are run options. Members that fail have ok False, value
    and gradient NaN and their error; the others still run. Ctrl-C
    (SIGINT) ends the running member at its next step and raises
    KeyboardInterrupt."""
    p = _as_problem(problem, options)
    for key in ("sens", "sens_method", "functional"):
        if key in options:
            raise TypeError(f"evaluate_batch sets {key} itself")
    names = list(p.parameters)
    if vary is None:
        vary = names
    if isinstance(vary, str) or not all(isinstance(v, str) for v in vary):
        raise TypeError("vary: a list of parameter names")
    for v in vary:
        if v not in names:
            raise ValueError(f"vary: '{v}' is not a parameter of "
                             f"'{p.name}'; parameters: {', '.join(names)}")
    if not isinstance(functional, str):
        raise TypeError("functional: the name of a functional of the model")
    base = np.array([p.parameters[n] for n in names], dtype=float)
    for n, x in (params or {}).items():
        if n not in names:
            raise ValueError(f"params: '{n}' is not a parameter of "
                             f"'{p.name}'; parameters: {', '.join(names)}")
        base[names.index(n)] = float(x)
    pts = np.asarray(points, dtype=float)
    if pts.ndim == 1:
        pts = pts.reshape(1, -1)
    if pts.ndim != 2 or pts.shape[1] != len(vary):
        raise ValueError(f"points must be M x {len(vary)} (one column per "
                         f"name of vary: {vary}), not {pts.shape}")
    if not np.all(np.isfinite(pts)):
        raise ValueError("points: every value must be finite")
    idx = [names.index(v) for v in vary]
    full = []
    for row in pts:
        x = base.copy()
        x[idx] = row
        full.append(x)
    args = to_args(options) + ["--sens-method=adjoint",
                               f"--functional={functional}",
                               "--sens=" + ",".join(vary)]
    main = threading.current_thread() is threading.main_thread()
    return BatchResult(_daedalus._evaluate_batch(p, full, args, main), vary)
