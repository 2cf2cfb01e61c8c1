#!/usr/bin/python3
"""Prints the cost of forward and adjoint sensitivities relative to the
plain run, from one run of bench/sensitivity_bench (issue 5).

usage: bench/sensitivity_cost.py [BUILD_DIR]   (default build-bench)
"""
import json
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build-bench"
out = subprocess.run(
    [f"{build}/bench/sensitivity_bench", "--benchmark_format=json",
     "--benchmark_min_time=0.5"],
    check=True, capture_output=True, text=True).stdout
rows = {b["name"]: b["real_time"] for b in json.loads(out)["benchmarks"]}
idas = rows["BM_PlainIdas"]
cvodes = rows["BM_PlainCvodes"]
print(f"plain run: IDAS {idas:.2f} ms, CVODES {cvodes:.2f} ms")
print("forward (IDAS, exact sensitivity residuals: compiled tangent programs), cost / plain IDAS:")
for n in (1, 2, 5, 10, 20):
    t = rows[f"BM_ForwardIdas/{n}"]
    print(f"  n_p = {n:2d}: {t:8.2f} ms  ratio {t / idas:6.2f}"
          f"  (1 + {(t / idas - 1) / n:.2f} n_p)")
print("adjoint (CVODES: plain run + checkpointed forward + backward), "
      "cost / plain CVODES:")
for n in (2, 20):
    t = rows[f"BM_AdjointCvodes/{n}"]
    print(f"  n_p = {n:2d}: {t:8.2f} ms  ratio {t / cvodes:6.2f}")
print("adjoint (IDAS, Baumgarte DAE: plain run + checkpointed forward + "
      "backward), cost / plain IDAS:")
for n in (2, 20):
    t = rows[f"BM_AdjointIdas/{n}"]
    print(f"  n_p = {n:2d}: {t:8.2f} ms  ratio {t / idas:6.2f}")
