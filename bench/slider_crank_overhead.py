#!/usr/bin/python3
"""Framework overhead on the slider-crank: Daedalus (ggl, dense, IDAS)
against SUNDIALS's hand-written idasSlCrank_dns example built from the
installed sources, at the example's tolerances (rtol 1e-6, atol 1e-7).

Usage: bench/slider_crank_overhead.py [BUILD_DIR] [REPEATS]
Prints wall-time medians, their ratio, and steps / residual evaluations.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
# A long horizon so that process start-up and file output do not dominate:
# the example's TEND/NOUT are compile-time constants, so a copy of the
# installed source is built with TEND = 1000 s (same 0.4 s output step).
t_end = 1000.0
src = "/usr/share/doc/libsundials-dev/examples/idas/serial/idasSlCrank_dns.c"
tmp = tempfile.mkdtemp(prefix="daedalus_bench_")
exe = os.path.join(tmp, "idasSlCrank_dns")
code = open(src).read()
code = code.replace("#define TEND    RCONST(10.0)", f"#define TEND    RCONST({t_end})")
code = code.replace("#define NOUT  25", f"#define NOUT  {int(t_end / 0.4)}")
csrc = os.path.join(tmp, "idasSlCrank_long.c")
open(csrc, "w").write(code)
subprocess.run(["gcc", "-O3", "-o", exe, csrc, "-lsundials_idas",
                "-lsundials_nvecserial", "-lsundials_sunmatrixdense",
                "-lsundials_sunlinsoldense", "-lm"], check=True)
ours = [os.path.join(build, "problems", "slider_crank"), "--formulation",
        "ggl", "--rtol", "1e-6", "--atol", "1e-7", "--t-end", str(t_end),
        "--output-step", "0.4", "--output-dir", tmp,
        "--quiet"]


def wall(cmd):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# Interleave to share the machine's noise.
t_ex = wall([exe])
t_da = wall(ours)
out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
ex_steps = int(re.search(r"Number of steps\s*=\s*(\d+)", out).group(1))
ex_res = int(re.search(r"Number of residual evaluations\s*=\s*(\d+)", out).group(1))
summary = json.load(open(os.path.join(tmp, "slider_crank.json")))
print(f"hand-written idasSlCrank_dns: {t_ex * 1e3:8.2f} ms  steps {ex_steps:5d}  residual evals {ex_res}")
print(f"daedalus slider_crank (ggl):  {t_da * 1e3:8.2f} ms  steps {summary['stats']['steps']:5d}  residual evals {summary['stats']['residual_evals']}")
print(f"wall-time ratio daedalus/example: {t_da / t_ex:.2f} (median of {repeats} process runs, including process start and output files)")
