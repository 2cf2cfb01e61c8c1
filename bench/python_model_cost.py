#!/usr/bin/python3
"""Per-step cost of a model written in Python against the same model in
C++ (docs/python.md): the pendulum of tests/python/pendulum_model_test.py
against the catalogue's (problems/models/pendulum.cpp).

Usage: bench/python_model_cost.py [BUILD_DIR] [REPEATS]

Over a 1000 s horizon with one output sample (so that output costs
nothing), each configuration REPEATS times, interleaved; prints the median
wall time, the steps and the time per step:

  python model, in-process      daedalus.run(python_pendulum) (compiled
                                programs, interpreted: the module has no
                                native kernels)
  C++ model, in-process         daedalus.run("pendulum"), the same
  python model, dual numbers    evaluator="ad": the recorded tapes at the
                                dual types (the path of sensitivities)
  C++ model, dual numbers       evaluator="ad": the C++ lambdas
  executable, interpreted       build/problems/pendulum --evaluator
                                interpreted (includes process start)
  executable, native kernels    build/problems/pendulum (the same)
and the one-time cost of recording and building the Python model.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(build, "python"))
sys.path.insert(0, os.path.join(root, "tests", "python"))

import daedalus  # noqa: E402
from pendulum_model_test import pendulum  # noqa: E402

T_END = 1000.0
OPTS = dict(t_end=T_END, output_step=T_END)
exe = os.path.join(build, "problems", "pendulum")
out = tempfile.mkdtemp(prefix="daedalus_pycost_")

t0 = time.perf_counter()
py_problem = pendulum()
build_ms = (time.perf_counter() - t0) * 1e3


def in_process(problem, **extra):
    def f():
        t = time.perf_counter()
        r = daedalus.run(problem, **OPTS, **extra)
        return time.perf_counter() - t, r.summary["stats"]["steps"]
    return f


def executable(*extra):
    def f():
        t = time.perf_counter()
        subprocess.run([exe, "--t-end", str(T_END), "--output-step",
                        str(T_END), "--output-dir", out, "--quiet", *extra],
                       check=True)
        wall = time.perf_counter() - t
        import json
        with open(os.path.join(out, "pendulum.json")) as fh:
            return wall, json.load(fh)["stats"]["steps"]
    return f


configs = [
    ("python model, in-process", in_process(py_problem)),
    ("C++ model, in-process", in_process("pendulum")),
    ("python model, dual numbers", in_process(py_problem, evaluator="ad")),
    ("C++ model, dual numbers", in_process("pendulum", evaluator="ad")),
    ("executable, interpreted", executable("--evaluator", "interpreted")),
    ("executable, native kernels", executable()),
]
times = {name: [] for name, _ in configs}
steps = {}
for _ in range(repeats):
    for name, f in configs:
        wall, n = f()
        times[name].append(wall)
        steps[name] = n

print(f"recording and building the Python model: {build_ms:.1f} ms")
for name, _ in configs:
    med = statistics.median(times[name])
    print(f"{name:28s} {med * 1e3:8.2f} ms  steps {steps[name]:6d}  "
          f"{med / steps[name] * 1e6:6.2f} us/step")
