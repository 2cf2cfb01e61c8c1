#!/usr/bin/python3
"""Framework overhead on the slider-crank: Daedalus (ggl, dense, IDAS)
against SUNDIALS's hand-written idasSlCrank_dns example built from the
installed sources, at the example's tolerances (rtol 1e-6, atol 1e-7).

Usage: bench/slider_crank_overhead.py [BUILD_DIR] [REPEATS] [--instructions]
Prints wall-time medians, their ratio, and steps / residual evaluations.
With --instructions (needs valgrind) it also counts instructions of a 200 s
run of each under callgrind: a noise-free ratio on a shared machine, and
where Daedalus's instructions go (residual, Jacobian, quadratures, the
solver itself, and everything outside IDASolve: output and diagnostics).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

args = [a for a in sys.argv[1:] if not a.startswith("--")]
count_instructions = "--instructions" in sys.argv[1:]
build = args[0] if len(args) > 0 else "build"
repeats = int(args[1]) if len(args) > 1 else 5
# A long horizon so that process start-up and file output do not dominate:
# the example's TEND/NOUT are compile-time constants, so a copy of the
# installed source is built with TEND = 1000 s (same 0.4 s output step).
t_end = 1000.0
src = "/usr/share/doc/libsundials-dev/examples/idas/serial/idasSlCrank_dns.c"
tmp = tempfile.mkdtemp(prefix="daedalus_bench_")
exe = os.path.join(tmp, "idasSlCrank_dns")


def build_example(horizon, path):
    code = open(src).read()
    code = code.replace("#define TEND    RCONST(10.0)",
                        f"#define TEND    RCONST({horizon})")
    code = code.replace("#define NOUT  25", f"#define NOUT  {int(horizon / 0.4)}")
    csrc = path + ".c"
    open(csrc, "w").write(code)
    subprocess.run(["gcc", "-O3", "-o", path, csrc, "-lsundials_idas",
                    "-lsundials_nvecserial", "-lsundials_sunmatrixdense",
                    "-lsundials_sunlinsoldense", "-lm"], check=True)


def daedalus_cmd(horizon):
    return [os.path.join(build, "problems", "slider_crank"), "--formulation",
            "ggl", "--rtol", "1e-6", "--atol", "1e-7", "--t-end", str(horizon),
            "--output-step", "0.4", "--output-dir", tmp, "--quiet"]


build_example(t_end, exe)
ours = daedalus_cmd(t_end)


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


def callgrind(cmd, out):
    r = subprocess.run(["valgrind", "--tool=callgrind",
                        f"--callgrind-out-file={out}"] + cmd,
                       capture_output=True, text=True, check=True)
    total = int(re.search(r"I\s+refs:\s+([\d,]+)", r.stderr).group(1)
                .replace(",", ""))
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes",
                          "--threshold=100", out],
                         capture_output=True, text=True).stdout
    return total, ann


def inclusive(ann, pattern):
    for line in ann.splitlines():
        if re.search(pattern, line):
            return int(line.split()[0].replace(",", ""))
    return 0


if count_instructions:
    short = 200.0
    ex_short = os.path.join(tmp, "idasSlCrank_200")
    build_example(short, ex_short)
    t_ex_ir, _ = callgrind([ex_short], os.path.join(tmp, "cg_example"))
    t_da_ir, ann = callgrind(daedalus_cmd(short), os.path.join(tmp, "cg_daedalus"))
    print(f"instructions, {short:g} s horizon: example {t_ex_ir / 1e6:.1f} M, "
          f"daedalus {t_da_ir / 1e6:.1f} M, ratio {t_da_ir / t_ex_ir:.2f}")
    ida = inclusive(ann, r"\?\?\?:IDASolve ")
    parts = {"residual": inclusive(ann, r"ResFn\("),
             "jacobian": inclusive(ann, r"JacFn\("),
             "quadratures": inclusive(ann, r"QuadFn\(")}
    parts["IDAS itself"] = ida - sum(parts.values())
    parts["outside IDASolve"] = t_da_ir - ida
    print("  daedalus: " + ", ".join(
        f"{k} {v / 1e6:.1f} M ({100.0 * v / t_da_ir:.0f}%)" for k, v in parts.items()))
