#!/usr/bin/python3
"""Prints the cost of forward and adjoint sensitivities relative to the
plain run, from one run of bench/sensitivity_bench (issues 5 and 19).

usage: bench/sensitivity_cost.py [BUILD_DIR]   (default build-bench)

Each row gives the wall time and its ratio to the plain run, and the same
for the process CPU time (the steadier figure on a shared machine), with
the targets of issue 19: forward <= 1 + 0.5 n_p, adjoint <= 10 and within
1.3x between n_p = 2 and 20. The forward rows also give the largest
difference of the final positions' sensitivities from central differences
of plain runs (relative to each column's largest entry; the bench fails
above 1e-5).
"""
import json
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build-bench"
out = subprocess.run(
    [f"{build}/bench/sensitivity_bench", "--benchmark_format=json",
     "--benchmark_min_time=0.5"],
    check=True, capture_output=True, text=True).stdout
bench = json.loads(out)["benchmarks"]
for b in bench:
    if b.get("error_occurred"):
        sys.exit(f"{b['name']}: {b.get('error_message')}")
wall = {b["name"]: b["real_time"] for b in bench}
cpu = {b["name"]: b["cpu_time"] for b in bench}
print("load average before the run: %.2f %.2f %.2f" % os.getloadavg())


def row(label, name, plain, target=""):
    w, c = wall[name], cpu[name]
    print(f"  {label}: wall {w:8.2f} ms ratio {w / wall[plain]:6.2f} | "
          f"cpu {c:8.2f} ms ratio {c / cpu[plain]:6.2f}{target}")
    return c / cpu[plain]


for plain in ("BM_PlainIdas", "BM_PlainCvodes"):
    print(f"{plain[8:]} plain run: wall {wall[plain]:.2f} ms, "
          f"cpu {cpu[plain]:.2f} ms")
print("forward (IDAS, exact sensitivity residuals: compiled tangent "
      "programs), cost / plain IDAS:")
err = {b["name"]: b.get("fd_rel_err") for b in bench}
for n in (1, 2, 5, 10, 20):
    row(f"n_p = {n:2d}", f"BM_ForwardIdas/{n}", "BM_PlainIdas",
        f"  (target {1 + 0.5 * n:.1f}; vs central differences "
        f"{err[f'BM_ForwardIdas/{n}']:.1e})")
for kind, plain in (("Cvodes", "BM_PlainCvodes"), ("Idas", "BM_PlainIdas")):
    print(f"adjoint ({kind.upper()}: plain run + checkpointed forward + "
          f"backward), cost / plain {kind.upper()}:")
    r2 = row("n_p =  2", f"BM_Adjoint{kind}/2", plain, "  (target 10)")
    r20 = row("n_p = 20", f"BM_Adjoint{kind}/20", plain, "  (target 10)")
    print(f"  cpu ratio n_p = 20 / n_p = 2: {r20 / r2:.2f} (target 1.3)")
