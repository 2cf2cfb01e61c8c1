"""Models written in Python (docs/python.md).

A model's functions are Python functions of a point `x` with members
`x.q`, `x.v` (indexable by position or coordinate name), `x.t` and `x.p`
(by position or parameter name), exactly as the C++ ModelBuilder's
lambdas. build() calls each function ONCE with symbolic values
(daedalus.Sym): what it computes is recorded as an expression, which
Daedalus differentiates and runs as compiled programs. Python is never
called while a model is integrated.
"""
import math
import numbers

import numpy as np

from . import _daedalus
from ._daedalus import NotTraceableError, Sym
from ._options import to_args


def _finite(x):
    """math.isfinite, False for an int beyond double range (10**400), for
    which math.isfinite raises OverflowError."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _state_vector(what, value):
    """q0 or v0 as an array; an int beyond double range (10**400) raised
    OverflowError (found by tests/robustness/fuzz_edges.py)."""
    try:
        return np.asarray(value, dtype=float)
    except OverflowError:
        raise ValueError(f"build: {what} holds a whole number beyond the "
                         "range of a double (about 1.8e308)") from None


class _Vector:
    """Symbols indexable by position, by name (x.q["y"]) or as attributes
    (x.q.y)."""

    def __init__(self, items, names, what):
        self._items = list(items)
        self._index = {n: i for i, n in enumerate(names)}
        self._what = what

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self._index:
                raise KeyError(f"{self._what} has no '{key}'; names: "
                               f"{', '.join(self._index)}")
            return self._items[self._index[key]]
        try:
            return self._items[key]
        except IndexError:
            # "list index out of range" named neither the vector nor its
            # size (found by tests/robustness/fuzz_edges.py).
            raise IndexError(
                f"{self._what}[{key}]: index out of range, it has "
                f"{len(self._items)} entr"
                f"{'y' if len(self._items) == 1 else 'ies'}"
                + (f" ({', '.join(self._index)})" if self._index else "")
            ) from None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(str(e)) from None


class _Point:
    def __init__(self, t, q, v, p):
        self.t, self.q, self.v, self.p = t, q, v, p


def _flatten(value, what):
    """A returned value as a flat list (numbers, Sym); nested sequences and
    numpy arrays in row-major order."""
    if isinstance(value, (Sym, numbers.Real)) and not isinstance(value, bool):
        return [value]
    if isinstance(value, np.ndarray):
        return list(value.ravel())
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out += _flatten(v, what)
        return out
    raise TypeError(f"{what} must return numbers or daedalus.Sym values, "
                    f"not {type(value).__name__}")


class ModelBuilder:
    """Builds a model from Python functions; the same declarations as the
    C++ ModelBuilder (include/daedalus/model.hpp).

    Example (the catalogue's pendulum, problems/models/pendulum.cpp):

        b = daedalus.ModelBuilder("pendulum")
        b.coordinates(["x", "y"])
        b.parameter("m", 1.0, positive=True)
        b.parameter("l", 1.0, positive=True)
        b.parameter("g", 9.81)
        b.kinetic_energy(lambda x: 0.5 * x.p.m * (x.v[0] * x.v[0] +
                                                  x.v[1] * x.v[1]))
        b.potential_energy(lambda x: x.p.m * x.p.g * x.q[1])
        b.holonomic("rod", lambda x: x.q[0] * x.q[0] + x.q[1] * x.q[1] -
                    x.p.l * x.p.l)
        problem = b.build(initial=lambda p: ([p[1], 0.0], [0.0, 0.0]))
    """

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise TypeError("the model's name is a non-empty string")
        self._name = name
        self._coords = None
        self._params = []  # (name, default, lower, upper, lo_open, up_open)
        self._decls = []  # (kind, args, functions)

    def coordinates(self, names):
        """Declares the generalized coordinates (nq = nv = len(names))."""
        if isinstance(names, str) or not all(
                isinstance(n, str) for n in names):
            raise TypeError("coordinates: a list of names")
        self._coords = list(names)
        return self

    def parameter(self, name, default, *, positive=False, nonnegative=False,
                  between=None):
        """Declares a named parameter and the values it may take (> 0,
        >= 0, in [lower, upper], or any finite value). Returns its index in
        x.p."""
        if not isinstance(name, str):
            raise TypeError("parameter: the name is a string")
        if isinstance(default, bool) or not isinstance(default,
                                                       numbers.Real):
            raise TypeError(f"parameter '{name}': the default is a number")
        if not _finite(default):
            raise ValueError(f"parameter '{name}': the default {default} is "
                             "not finite")
        inf = math.inf
        if sum([positive, nonnegative, between is not None]) > 1:
            raise ValueError(f"parameter '{name}': give one of positive, "
                             "nonnegative and between")
        if positive:
            r = (0.0, inf, True, False)
        elif nonnegative:
            r = (0.0, inf, False, False)
        elif between is not None:
            lo, hi = between
            r = (float(lo), float(hi), False, False)
        else:
            r = (-inf, inf, False, False)
        self._params.append((name, float(default)) + r)
        return len(self._params) - 1

    def _add(self, kind, args, *functions):
        for f in functions:
            if f is not None and not callable(f):
                raise TypeError(f"{kind}: a function of x, not "
                                f"{type(f).__name__}")
        self._decls.append((kind, args, functions))
        return self

    def kinetic_energy(self, f):
        """T(x) [J]; the mass matrix is d2T/dv2."""
        return self._add("kinetic_energy", (), f)

    def potential_energy(self, f):
        """V(x) [J]."""
        return self._add("potential_energy", (), f)

    def lagrangian(self, f):
        """A whole Lagrangian L(x) instead of T and V."""
        return self._add("lagrangian", (), f)

    def holonomic(self, name, f, rows=None, unilateral=False):
        """Phi(q) = 0: a number or a list of rows (`rows`, when given, is
        checked against what f returns)."""
        return self._add("holonomic", (name, rows, unilateral), f)

    def moving(self, name, f, rows=None, unilateral=False):
        """Phi(q, t) = 0 (rheonomic)."""
        return self._add("moving", (name, rows, unilateral), f)

    def nonholonomic(self, name, f, rows=None):
        """A(q, t) v + a(q, t) = 0, one function affine in x.v."""
        return self._add("nonholonomic", (name, rows, False), f)

    def damping(self, f):
        """Viscous damping matrix D(x), nv x nv (nested lists or a 2-D
        array); the force is -D v."""
        return self._add("damping", (), f)

    def other_loads(self, f):
        """Other generalized loads Q_r(x), nv values."""
        return self._add("other_loads", (), f)

    def input(self, name, column, value):
        """Input channel `name`: the force B(x) u(x), column B (nv values)
        and value u."""
        return self._add("input", (name,), column, value)

    def quadrature(self, name, f):
        """The time integral of f(x), reported in the summary."""
        return self._add("quadrature", (name,), f)

    def event(self, name, f):
        """The run stops where f(x) crosses zero."""
        return self._add("event", (name,), f)

    def functional(self, name, running=None, terminal=None):
        """G = int g(x) dt + phi(x(T)) for adjoint gradients
        (evaluate_batch)."""
        return self._add("functional", (name,), running, terminal)

    def friction_cone(self, name, normal, tangential, mu):
        """|lambda_t| <= mu lambda_n between two declared constraints."""
        self._decls.append(("friction_cone", (name, normal, tangential,
                                              float(mu)), ()))
        return self

    def build(self, *, description="", initial=None, q0=None, v0=None,
              **defaults):
        """Records every function once and returns a daedalus.Problem.

        The initial state is `initial(p) -> (q0, v0)` (p: the parameters as
        an array, in declaration order) or the fixed q0 and v0 (zeros when
        omitted). Other keywords are the problem's default run options
        (t_end=..., formulation=..., as daedalus.run takes them)."""
        if self._coords is None:
            raise ValueError(f"model '{self._name}': no coordinates "
                             "declared")
        nq, npar = len(self._coords), len(self._params)
        rec = _daedalus._Recording(nq, npar)
        pnames = [p[0] for p in self._params]
        x = _Point(rec.input(0),
                   _Vector([rec.input(1 + i) for i in range(nq)],
                           self._coords, "x.q"),
                   _Vector([rec.input(1 + nq + i) for i in range(nq)],
                           self._coords, "x.v"),
                   _Vector([rec.input(1 + 2 * nq + i) for i in range(npar)],
                           pnames, "x.p"))
        b = _daedalus._Builder(self._name)
        b.coordinates(self._coords)
        for p in self._params:
            b.parameter(*p)
        for kind, args, fns in self._decls:
            self._declare(b, rec, x, nq, kind, args, fns)
        model = b.build()
        problem = _daedalus._make_problem(
            model, description, initial,
            None if q0 is None else _state_vector("q0", q0),
            None if v0 is None else _state_vector("v0", v0))
        return _daedalus._with_defaults(problem, to_args(defaults))

    # Records one declaration and hands its tapes to the C++ builder.
    def _declare(self, b, rec, x, nq, kind, args, fns):
        what = kind if not args or kind in ("damping", "other_loads") else \
            f"{kind} '{args[0]}'"

        def record(f, rows, label=None):
            if f is None:
                return None
            label = label or what
            try:
                value = f(x)
            except NotTraceableError as e:
                raise NotTraceableError(
                    f"{label} of model '{self._name}': {e}. A Python model "
                    "is recorded once as one expression: it may not branch "
                    "on, or convert to float, a value that depends on the "
                    "state or the parameters (use daedalus.sin etc., not "
                    "math.sin)") from None
            except Exception as e:
                e.add_note(f"(while recording {label} of model "
                           f"'{self._name}')")
                raise
            if kind == "damping" and value is not None:
                arr = np.asarray(value, dtype=object)
                if arr.shape != (nq, nq):
                    raise ValueError(
                        f"{label} of model '{self._name}': returned shape "
                        f"{arr.shape}, expected ({nq}, {nq})")
                value = list(arr.ravel(order="F"))  # column-major
            items = _flatten(value, f"{label} of model '{self._name}'")
            if rows is not None and len(items) != rows:
                raise ValueError(
                    f"{label} of model '{self._name}': returned "
                    f"{len(items)} value(s), expected {rows}")
            syms = []
            for s in items:
                if isinstance(s, Sym):
                    syms.append(s)
                else:
                    if not isinstance(s, numbers.Real) or isinstance(s, bool):
                        raise TypeError(
                            f"{label} of model '{self._name}': returned "
                            f"{s!r} ({type(s).__name__}), not a number or an "
                            "expression of x")
                    if not _finite(s):
                        raise ValueError(f"{label} of model '{self._name}':"
                                         f" returned the constant {s}")
                    syms.append(rec.constant(float(s)))
            try:
                return rec.tape(syms)
            except ValueError as e:
                raise ValueError(f"{label} of model '{self._name}': {e}") \
                    from None

        if kind in ("kinetic_energy", "potential_energy", "lagrangian"):
            t = record(fns[0], 1)
            {"kinetic_energy": b.kinetic, "potential_energy": b.potential,
             "lagrangian": b.lagrangian}[kind](t)
        elif kind in ("holonomic", "moving", "nonholonomic"):
            name, rows, unilateral = args
            if rows is not None and (isinstance(rows, bool) or
                                     not isinstance(rows, int) or rows < 1):
                raise ValueError(f"{what}: rows must be a positive whole "
                                 "number")
            b.constraint(kind, name, record(fns[0], rows), bool(unilateral))
        elif kind == "damping":
            b.damping(record(fns[0], nq * nq))
        elif kind == "other_loads":
            b.other_loads(record(fns[0], nq))
        elif kind == "input":
            b.input(args[0], record(fns[0], nq, what + " column"),
                    record(fns[1], 1, what + " value"))
        elif kind == "quadrature":
            b.quadrature(args[0], record(fns[0], 1))
        elif kind == "event":
            b.event(args[0], record(fns[0], 1))
        elif kind == "functional":
            b.functional(args[0], record(fns[0], 1, what + " running"),
                         record(fns[1], 1, what + " terminal"))
        elif kind == "friction_cone":
            b.friction_cone(*args)
