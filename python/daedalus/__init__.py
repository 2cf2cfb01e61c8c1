"""Daedalus from Python (docs/python.md).

    import daedalus
    r = daedalus.run("slider_crank", t_end=2.0, sens=["k", "c"])
    r.q, r.lambda_, r.energy, r.sens, r.summary["drift_position_max"]

Run catalogue problems or models written in Python with the options of the
command line; results are numpy arrays and the JSON summary as a dict.
Models written in Python (ModelBuilder) are recorded once as expressions
and run as compiled programs: Python is not called during integration.
"""
import math as _math

from ._daedalus import NotTraceableError, Problem, Sym, problems, usage
from ._model import ModelBuilder
from ._optimize import MultiStartResult, OptimizeResult, optimize
from ._run import (BatchResult, Results, RunFailed, evaluate_batch, problem,
                   problem_options, run)

__all__ = ["BatchResult", "ModelBuilder", "MultiStartResult",
           "NotTraceableError", "OptimizeResult", "Problem", "Results",
           "RunFailed", "Sym", "evaluate_batch", "optimize", "problem",
           "problem_options", "problems", "run", "usage", "sin", "cos",
           "tan", "exp", "log", "sqrt", "sinh", "cosh", "tanh", "asin",
           "acos", "atan", "atan2", "pow", "if_positive", "clamp"]


def _unary(name, method, fallback):
    def f(x):
        if isinstance(x, Sym):
            return getattr(x, method)()
        return fallback(x)
    f.__name__ = name
    f.__doc__ = (f"{name}(x): recorded for a daedalus.Sym, math.{name} for "
                 "a number.")
    return f


sin = _unary("sin", "sin", _math.sin)
cos = _unary("cos", "cos", _math.cos)
tan = _unary("tan", "tan", _math.tan)
exp = _unary("exp", "exp", _math.exp)
log = _unary("log", "log", _math.log)
sqrt = _unary("sqrt", "sqrt", _math.sqrt)
sinh = _unary("sinh", "sinh", _math.sinh)
cosh = _unary("cosh", "cosh", _math.cosh)
tanh = _unary("tanh", "tanh", _math.tanh)
asin = _unary("asin", "arcsin", _math.asin)
acos = _unary("acos", "arccos", _math.acos)
atan = _unary("atan", "arctan", _math.atan)


def atan2(y, x):
    """atan2(y, x), recorded when either is a daedalus.Sym."""
    if isinstance(y, Sym):
        return y.arctan2(x)
    if isinstance(x, Sym):
        return x._rarctan2(y)
    return _math.atan2(y, x)


def pow(x, y):  # noqa: A001 (as math.pow)
    """x ** y, recorded when either is a daedalus.Sym."""
    if isinstance(x, Sym) or isinstance(y, Sym):
        return x ** y
    return _math.pow(x, y)


def if_positive(c, a, b):
    """a where c > 0, else b. Recorded as a selection when any of the three
    is a daedalus.Sym (the comparison `c > 0` of a Sym raises
    NotTraceableError): the value and every derivative are those of the
    chosen branch, so a model with a kink keeps its compiled programs."""
    syms = [x for x in (c, a, b) if isinstance(x, Sym)]
    if not syms:
        return a if c > 0 else b
    s = syms[0]
    c, a, b = (x if isinstance(x, Sym) else s._lift(float(x))
               for x in (c, a, b))
    return Sym._if_positive(c, a, b)


def clamp(x, lo, hi):
    """x limited to [lo, hi] (lo <= hi) with if_positive: the derivative is
    that of x inside the range and 0 outside."""
    upper = if_positive(x - hi, hi, x)
    return if_positive(lo - upper, lo, upper)
