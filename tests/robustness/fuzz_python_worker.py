#!/usr/bin/python3
"""One worker of the Python-API surface of fuzz_edges.py (issue 40).

Runs cases [--first, --last) of --seed: each draws a call of the module
(daedalus.run on a catalogue problem or on a random Python model,
problem, problem_options, evaluate_batch, ModelBuilder declarations) with
valid, edge and wrong-typed arguments, makes it, and prints one JSON line
before ({"start": i}) and one after ({"i", "cls", "details", "call",
"elapsed"}), so that the parent knows which case a crash or a hang was.

Classes: ok (returned, results consistent), failed (RunFailed or a
failed batch member, with its error), refused (ValueError, TypeError,
NotTraceableError with a message, or the exception a user function
raised), silent_ok (returned ok with non-finite or incomplete results),
escape (a file written outside output_dir and the working folder), vague
(another exception type, or an empty or generic message).
"""
import argparse
import json
import math
import os
import random
import sys
import time
import traceback

import numpy as np

import daedalus

PROBLEMS = ["pendulum", "slider_crank", "chain", "four_bar", "rolling_disk"]
GARBAGE = [None, "1", "", [1.0], {}, (1, 2), math.nan, math.inf, -math.inf,
           -1, 0, True, 1e300, 1 + 2j, b"x", 10 ** 400, -1e-300, "nan",
           np.float64(0.1), np.int64(3), np.array([0.1]), "ggl", 5e-324]
NAMES = ["", " ", "x,1", 'a"b', "a\nb", "../x", "../../evil", "/tmp/x",
         "x" * 3000, "\u00e9", "\u540d", "a b", "t", "lambda_0", "x", "y",
         None, 3, b"x", "q0[0]", "energy"]
GENERIC = {"list index out of range", "tuple index out of range", ""}


class UserError(Exception):
    """Raised by a drawn user function: it must come back as itself."""


def pick(rng, valid, p_bad=0.15):
    return rng.choice(GARBAGE) if rng.random() < p_bad else valid


def options(rng, out):
    o = {}
    draws = {
        "t_end": lambda: rng.uniform(0.01, 0.3),
        "rtol": lambda: 10 ** rng.uniform(-9, -4),
        "atol": lambda: 10 ** rng.uniform(-10, -5),
        "output_step": lambda: rng.choice([0.01, 0.02, 0.05]),
        "formulation": lambda: rng.choice(["baumgarte", "ggl", "index3",
                                           "projection", "bogus"]),
        "integrator": lambda: rng.choice(["idas", "cvodes-bdf", "hht",
                                          "generalized-alpha", "rattle",
                                          "rk4"]),
        "kkt": lambda: rng.choice(["auto", "dense", "qr", "sparse-lu"]),
        "params": lambda: {rng.choice(["m", "l", "k", "g", "c", "bogus",
                                       ""]): pick(rng, rng.uniform(0.5, 2))},
        "q0": lambda: {rng.choice(["x", "y", "theta", "q", ""]):
                       pick(rng, rng.uniform(-1, 1))},
        "v0": lambda: {rng.choice(["x", "y", "theta", ""]):
                       pick(rng, rng.uniform(-1, 1))},
        "sens": lambda: rng.choice([["m"], ["k", "c"], "m", ["q0[0]"],
                                    ["bogus"], []]),
        "sens_method": lambda: rng.choice(["forward", "adjoint", "x"]),
        "counterfactual": lambda: rng.choice(["zvcf@all", "ztcf@0.05",
                                              ["zvcf@0.05"], "bogus@1"]),
        "output_dir": lambda: rng.choice([out, out, "rel",
                                          "/proc/nope", out + "/new/sub"]),
        "step": lambda: rng.choice([1e-3, 0.005, 0.05, 0.0]),
        "rho_inf": lambda: rng.uniform(0, 1),
        "max_steps": lambda: rng.choice([10, 1000, 100000, 2.5, 0]),
        "max_samples": lambda: rng.choice([1, 10, 10 ** 6]),
        "evaluator": lambda: rng.choice(["compiled", "interpreted", "ad"]),
        "error_estimate": lambda: rng.choice([True, False, 1]),
        "drift_tol": lambda: 10 ** rng.uniform(-9, -3),
        "bogus": lambda: 1, "help": lambda: True, "quiet": lambda: True,
        "ensemble": lambda: "x.csv", "inverse_dynamics": lambda: "m.csv",
    }
    keys = sorted(draws)
    for k in rng.sample(keys, rng.randint(0, 4)):
        o[k] = pick(rng, draws[k](), 0.1)
    if "t_end" not in o and rng.random() < 0.9:
        o["t_end"] = rng.uniform(0.01, 0.3)
    if "max_steps" not in o:
        o["max_steps"] = 20000
    return o


def energy_fn(rng):
    r = rng.random()
    if r < 0.7:
        return lambda x: 0.5 * x.p[0] * sum(v * v for v in x.v)
    return rng.choice([
        lambda x: "heavy", lambda x: None, lambda x: [1.0, 2.0],
        lambda x: math.nan * x.v[0], lambda x: 1 / 0,
        lambda x: x.q[7] * 1.0, lambda x: x.p.nosuch,
        lambda x: (_ for _ in ()).throw(UserError("mine")),
        lambda x: x.v[0] if x.q[0] > 0 else x.v[0] ** 2,
        lambda x: math.sqrt(x.v[0]), lambda x: daedalus.sqrt(x.v[0] * 0 - 1),
        lambda x: x.v[0] ** 1e308, lambda x: np.array([x.v[0]]),
    ])


def python_model(rng, call):
    name = rng.choice(["fuzz"] * 5 + NAMES)
    n = rng.choice([1, 1, 2, 2, 3, 0])
    coords = [f"c{k}" for k in range(n)]
    if rng.random() < 0.2:
        coords[rng.randrange(n)] = rng.choice(NAMES) if n else None
    call.append(f"ModelBuilder({name!r}).coordinates({coords!r})")
    b = daedalus.ModelBuilder(name)
    b.coordinates(coords)
    pdef = pick(rng, 1.0, 0.2)
    call.append(f"parameter('m', {pdef!r})")
    b.parameter(rng.choice(["m"] * 6 + NAMES[:4]), pdef,
                positive=rng.random() < 0.5)
    b.kinetic_energy(energy_fn(rng))
    if rng.random() < 0.7:
        b.potential_energy(lambda x: 9.81 * x.p[0] * x.q[0])
    if rng.random() < 0.4 and n >= 2:
        b.holonomic(rng.choice(["rod"] * 5 + NAMES[:6]),
                    rng.choice([lambda x: x.q[0] ** 2 + x.q[1] ** 2 - 1.0,
                                lambda x: [x.q[0], x.q[0]],
                                lambda x: 0.0, lambda x: x.q[0] - 5.0]),
                    rows=pick(rng, None, 0.2))
        call.append("holonomic")
    if rng.random() < 0.3:
        b.input(rng.choice(["u"] * 4 + NAMES[:4]),
                lambda x: [1.0] * max(n, 1), lambda x: 0.1)
        call.append("input")
    q0 = pick(rng, [1.0] + [0.0] * (n - 1), 0.2)
    v0 = pick(rng, [0.0] * n, 0.1)
    call.append(f"build(q0={q0!r}, v0={v0!r})")
    return b.build(q0=q0, v0=v0)


def one_call(rng, tmp):
    """(callable, description, t_end or None, output folder allowed)."""
    out = os.path.join(tmp, "a", "b", "out")
    call = []
    r = rng.random()
    if r < 0.45:
        prob = rng.choice(PROBLEMS) if rng.random() < 0.9 else \
            rng.choice(["", "nosuch", None, 3, b"pendulum", "urdf"])
        o = options(rng, out)
        if rng.random() < 0.1:
            o["check"] = rng.choice([False, "yes", None])
        call.append(f"run({prob!r}, **{o!r})")
        return (lambda: daedalus.run(prob, **o)), call, o, out
    if r < 0.6:
        o = options(rng, out)

        def f():
            p = python_model(rng, call)
            return daedalus.run(p, **o)
        call.append(f"run(model, **{o!r})")
        return f, call, o, out
    if r < 0.7:
        name = rng.choice(PROBLEMS + ["chain_reduced", "nosuch", None])
        shape = rng.choice([{}, {"bodies": rng.choice(
            [1, 2, 4, "4", -1, 0, 2.5, None, 10 ** 9])},
            {"dynamics": rng.choice(["energy", "recursive", "x", 1])},
            {"bogus": 1}])
        call.append(f"problem({name!r}, **{shape!r})")
        return (lambda: daedalus.problem(name, **shape)), call, None, out
    if r < 0.75:
        name = rng.choice(PROBLEMS + ["nosuch", None, 1, ""])
        call.append(f"problem_options({name!r})")
        return (lambda: daedalus.problem_options(name)), call, None, out
    prob = rng.choice(["slider_crank", "slider_crank", "pendulum", "nosuch"])
    m = rng.choice([1, 2, 0])
    k = rng.choice([1, 1, 2])
    pts = [[rng.uniform(0.8, 1.2) for _ in range(k)] for _ in range(m)]
    if rng.random() < 0.3:
        pts = rng.choice([[], [[1.0], [1.0, 2.0]], [[math.nan]], "x",
                          [["a"]], None, [[1e308]], [[-1.0]]])
    kw = {"functional": rng.choice(["G", "G", "nosuch", 3]),
          "vary": rng.choice([["k"], ["k", "c"], None, "k", ["nosuch"],
                              [1]]),
          "t_end": pick(rng, rng.uniform(0.05, 0.3), 0.1),
          "max_steps": 20000}
    if rng.random() < 0.2:
        kw["sens"] = ["k"]
    call.append(f"evaluate_batch({prob!r}, {pts!r}, **{kw!r})")
    return (lambda: daedalus.evaluate_batch(prob, pts, **kw)), call, kw, out


def snapshot(root):
    return {os.path.relpath(os.path.join(d, f), root): os.stat(
        os.path.join(d, f)).st_mtime_ns
        for d, _, fs in os.walk(root) for f in fs}


def check_result(res, opts):
    bad = []
    if isinstance(res, daedalus.Results):
        if not res.ok:
            if not res.error:
                bad.append("not ok without an error")
            return "failed" if not bad else "silent_ok", bad
        for k in ("t", "q", "v"):
            arr = np.asarray(getattr(res, k))
            if arr.size and not np.all(np.isfinite(arr)):
                bad.append(f"non-finite {k}")
        t_end = (opts or {}).get("t_end")
        if isinstance(t_end, float) and len(res.t) and not bad:
            stopped = [e for e in res.summary.get("events", [])
                       if e.get("stopped")]
            if not stopped and abs(res.t[-1] - t_end) > 1e-9 * max(1, t_end):
                bad.append(f"ok but t[-1] = {res.t[-1]}, t_end {t_end}")
        if res.summary.get("status") != "ok":
            bad.append(f"ok but summary status {res.summary.get('status')}")
        return ("silent_ok" if bad else "ok"), bad
    if isinstance(res, daedalus.BatchResult):
        for i, ok in enumerate(res.ok):
            if ok and not (np.isfinite(res.values[i]) and
                           np.all(np.isfinite(res.gradients[i]))):
                bad.append(f"member {i} ok with a non-finite value")
            if not ok and not res.errors[i]:
                bad.append(f"member {i} failed without an error")
        if bad:
            return "silent_ok", bad
        return ("ok" if all(res.ok) else "failed"), []
    return "ok", []


def classify(e):
    msg = str(e)
    if isinstance(e, UserError):
        return "refused", []
    if isinstance(e, daedalus.RunFailed):
        return ("failed", []) if msg.strip() else \
            ("vague", ["RunFailed without a message"])
    accepted = (ValueError, TypeError, daedalus.NotTraceableError,
                IndexError, AttributeError, KeyError, ZeroDivisionError)
    if isinstance(e, accepted) and msg.strip(" '\"") not in GENERIC:
        return "refused", []
    return "vague", [f"{type(e).__name__}: {msg[:400]}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--first", type=int, required=True)
    ap.add_argument("--last", type=int, required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    cwd = os.path.join(a.tmp, "a", "b", "cwd")
    os.makedirs(cwd, exist_ok=True)
    os.chdir(cwd)
    for i in range(a.first, a.last):
        rng = random.Random(f"{a.seed}/python/{i}")
        print(json.dumps({"start": i}), flush=True)
        fn, call, opts, out = one_call(rng, a.tmp)
        before = snapshot(a.tmp)
        t0 = time.monotonic()
        try:
            cls, details = check_result(fn(), opts)
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 (classified)
            cls, details = classify(e)
            if os.environ.get("DAEDALUS_FUZZ_TRACE"):
                traceback.print_exc()
        after = snapshot(a.tmp)
        changed = [p for p in after if before.get(p) != after[p]]
        esc = [p for p in changed if not (p.startswith("a/b/out/") or
                                          p.startswith("a/b/cwd/"))]
        if esc:
            cls, details = "escape", [f"wrote {esc[:4]}"]
        print(json.dumps({"i": i, "cls": cls, "details": details,
                          "call": "; ".join(call)[:1500],
                          "elapsed": time.monotonic() - t0}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
