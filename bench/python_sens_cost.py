#!/usr/bin/python3
"""Forward sensitivities of a model written in Python against the same
model in C++ (issue 38 item 4; docs/python.md "Cost of sensitivities").

Usage: bench/python_sens_cost.py [BUILD_DIR] [REPEATS]

The pendulum and the slider-crank of tests/python (the catalogue's models
written in Python, operation for operation) against the catalogue's C++
models, both in-process through daedalus.run, over a long horizon with one
output sample, plain and with forward sensitivities of 1 and 3
parameters. Each configuration runs REPEATS times, interleaved; prints the
median process time, each sensitivity run as a multiple of its own plain
run, and the Python model's time as a multiple of the C++ model's (the
issue's target: within 1.5x).
"""
import os
import statistics
import sys
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(build, "python"))
sys.path.insert(0, os.path.join(root, "tests", "python"))

import daedalus  # noqa: E402
from pendulum_model_test import pendulum  # noqa: E402
from slider_crank_model_test import slider_crank  # noqa: E402

CASES = [
    ("pendulum", pendulum(), "pendulum", 200.0, [[], ["m"], ["m", "l", "g"]]),
    ("slider_crank", slider_crank(), "slider_crank", 400.0,
     [[], ["k"], ["k", "c", "m2"]]),
]


def timed(model, t_end, sens):
    kw = {"sens": sens} if sens else {}
    t0 = time.process_time()
    r = daedalus.run(model, t_end=t_end, output_step=t_end, **kw)
    dt = time.process_time() - t0
    if r.summary["status"] != "ok":
        raise SystemExit("run failed: %s" % r.summary["status"])
    return dt, r


def main():
    print("%-13s %-16s %10s %10s %9s %9s %8s" %
          ("model", "sensitivities", "python s", "c++ s", "py/plain",
           "c++/plain", "py/c++"))
    for label, py, cpp, t_end, sens_sets in CASES:
        times = {}
        for _ in range(repeats):
            for k, sens in enumerate(sens_sets):
                for which, m in (("py", py), ("cpp", cpp)):
                    dt, r = timed(m, t_end, sens)
                    times.setdefault((k, which), []).append(dt)
        med = {key: statistics.median(v) for key, v in times.items()}
        for k, sens in enumerate(sens_sets):
            py_t, cpp_t = med[(k, "py")], med[(k, "cpp")]
            print("%-13s %-16s %10.4f %10.4f %9.2f %9.2f %8.2f" %
                  (label, ",".join(sens) or "(plain)", py_t, cpp_t,
                   py_t / med[(0, "py")], cpp_t / med[(0, "cpp")],
                   py_t / cpp_t))


if __name__ == "__main__":
    main()
