#!/usr/bin/python3
"""Framework overhead on the slider-crank: Daedalus (ggl, dense, IDAS)
against SUNDIALS's hand-written idasSlCrank_dns example built from the
installed sources, at the example's tolerances (rtol 1e-6, atol 1e-7).

Usage: bench/slider_crank_overhead.py [BUILD_DIR] [REPEATS] [--instructions]

Three programs, each run REPEATS times in turn (interleaved, so that they
share the machine's load), over a 1000 s horizon:
  example        idasSlCrank_dns as shipped (Debian's SUNDIALS vector
                 operations and dense LU, which are built without
                 optimization);
  example+ops    the same source with Daedalus's optimized vector
                 operations and dense LU (src/integrate/serial_ops.hpp) swapped in:
                 what the hand-written program costs with the same
                 integrator internals as Daedalus, so that the ratio to it
                 is the framework's own overhead;
  daedalus       build/problems/slider_crank --formulation ggl.
Prints wall-time medians, steps and residual evaluations, and the ratios.
With --instructions (needs valgrind) it also counts instructions of a 200 s
run of each under callgrind (a noise-free ratio on a shared machine) and
splits Daedalus's: residual, Jacobian, quadratures, IDAS itself, and
everything outside IDASolve (start-up, samples, diagnostics, output).
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
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
t_end = 1000.0
src = "/usr/share/doc/libsundials-dev/examples/idas/serial/idasSlCrank_dns.c"
tmp = tempfile.mkdtemp(prefix="daedalus_bench_")
SUNDIALS_LIBS = ["-lsundials_idas", "-lsundials_nvecserial",
                 "-lsundials_sunmatrixdense", "-lsundials_sunlinsoldense",
                 "-lm"]

# Daedalus's kernels as objects the C example can link.
kernel_objs = []
for name, path in [("serial_ops", os.path.join(root, "src", "integrate", "serial_ops.cpp")),
                   ("shim", os.path.join(root, "bench",
                                         "example_kernels_shim.cpp"))]:
    obj = os.path.join(tmp, name + ".o")
    subprocess.run(["g++", "-O3", "-std=c++20", "-I" + os.path.join(root, "src"),
                    "-c", path, "-o", obj], check=True)
    kernel_objs.append(obj)


def build_example(horizon, path, fast_ops=False, outputs=None):
    code = open(src).read()
    code = code.replace("#define TEND    RCONST(10.0)",
                        f"#define TEND    RCONST({horizon})")
    nout = outputs if outputs else int(horizon / 0.4)
    code = code.replace("#define NOUT  25", f"#define NOUT  {nout}")
    if outputs:
        # One output lands exactly on TEND, which the shipped exit test
        # (tret > TEND) lets pass: it would integrate a second interval.
        assert "if (tret > TEND) break;" in code
        code = code.replace("if (tret > TEND) break;",
                            "if (tret >= TEND) break;")
    extra = []
    if fast_ops:
        code = code.replace("#include <stdio.h>", "#include <stdio.h>\n"
                            "#include <sundials/sundials_linearsolver.h>\n"
                            "#include <sundials/sundials_nvector.h>\n"
                            "void daedalus_use_fast_vector_ops(N_Vector v);\n"
                            "SUNLinearSolver daedalus_dense_lu(N_Vector, "
                            "SUNMatrix, SUNContext);", 1)
        # Clones copy the operations table: yy, yp (and IDAS's own vectors)
        # come from id; q is the quadrature vector.
        code = code.replace("  id = N_VNew_Serial(NEQ, ctx);",
                            "  id = N_VNew_Serial(NEQ, ctx);\n"
                            "  daedalus_use_fast_vector_ops(id);", 1)
        code = code.replace("  q = N_VNew_Serial(1, ctx);",
                            "  q = N_VNew_Serial(1, ctx);\n"
                            "  daedalus_use_fast_vector_ops(q);", 1)
        code = code.replace("LS = SUNLinSol_Dense(yy, A, ctx);",
                            "LS = daedalus_dense_lu(yy, A, ctx);", 1)
        assert code.count("daedalus_") == 5, "example source changed"
        extra = kernel_objs + ["-lstdc++"]
    csrc = path + ".c"
    open(csrc, "w").write(code)
    subprocess.run(["gcc", "-O3", "-o", path, csrc] + extra + SUNDIALS_LIBS,
                   check=True)


def daedalus_cmd(horizon, step=0.4):
    return [os.path.join(build, "problems", "slider_crank"), "--formulation",
            "ggl", "--rtol", "1e-6", "--atol", "1e-7", "--t-end", str(horizon),
            "--output-step", str(step), "--output-dir", tmp, "--quiet"]


# The same three with one output at the end: the cost per step alone
# (integrator, residual, Jacobian, quadratures, start-up), without the
# per-sample work (Daedalus: multipliers, KKT health, energy balance and a
# 35-column CSV row; the example: one printf).
programs = {
    "example": [os.path.join(tmp, "example")],
    "example+ops": [os.path.join(tmp, "example_ops")],
    "daedalus": daedalus_cmd(t_end),
    "example+ops/1": [os.path.join(tmp, "example_ops_1")],
    "daedalus/1": daedalus_cmd(t_end, t_end),
}
build_example(t_end, programs["example"][0])
build_example(t_end, programs["example+ops"][0], fast_ops=True)
build_example(t_end, programs["example+ops/1"][0], fast_ops=True, outputs=1)

times = {k: [] for k in programs}
for _ in range(repeats):
    for k, cmd in programs.items():
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times[k].append(time.perf_counter() - t0)
med = {k: statistics.median(v) for k, v in times.items()}


def example_stats(exe):
    out = subprocess.run([exe], check=True, capture_output=True,
                         text=True).stdout
    steps = int(re.search(r"Number of steps\s*=\s*(\d+)", out).group(1))
    res = int(re.search(r"Number of residual evaluations\s*=\s*(\d+)",
                        out).group(1))
    g = float(re.search(r"G =\s*([-\d.eE+]+)", out).group(1))
    return steps, res, g


subprocess.run(daedalus_cmd(t_end), check=True, stdout=subprocess.DEVNULL)
summary = json.load(open(os.path.join(tmp, "slider_crank.json")))
for k in ("example", "example+ops"):
    steps, res, g = example_stats(programs[k][0])
    print(f"{k:12s} {med[k] * 1e3:8.2f} ms  steps {steps:5d}  "
          f"residual evals {res}  G {g:.10f}")
st = summary["stats"]
print(f"{'daedalus':12s} {med['daedalus'] * 1e3:8.2f} ms  steps "
      f"{st['steps']:5d}  residual evals {st['residual_evals']}  "
      f"({summary['evaluator']})")
print(f"wall-time ratio daedalus/example: {med['daedalus'] / med['example']:.2f}"
      f"; daedalus/(example+ops): {med['daedalus'] / med['example+ops']:.2f}"
      f"  (medians of {repeats} interleaved process runs, including process "
      "start and output files)")
print(f"one output at t = {t_end:g}: example+ops {med['example+ops/1'] * 1e3:.2f}"
      f" ms, daedalus {med['daedalus/1'] * 1e3:.2f} ms, ratio "
      f"{med['daedalus/1'] / med['example+ops/1']:.2f}")


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
    ex = os.path.join(tmp, "example_200")
    ex_ops = os.path.join(tmp, "example_ops_200")
    build_example(short, ex)
    build_example(short, ex_ops, fast_ops=True)
    n_ex, _ = callgrind([ex], os.path.join(tmp, "cg_example"))
    n_ops, _ = callgrind([ex_ops], os.path.join(tmp, "cg_example_ops"))
    n_da, ann = callgrind(daedalus_cmd(short), os.path.join(tmp, "cg_daedalus"))
    print(f"instructions, {short:g} s horizon: example {n_ex / 1e6:.1f} M, "
          f"example+ops {n_ops / 1e6:.1f} M, daedalus {n_da / 1e6:.1f} M; "
          f"ratios daedalus/example {n_da / n_ex:.2f}, "
          f"daedalus/(example+ops) {n_da / n_ops:.2f}")
    ida = inclusive(ann, r"\?\?\?:IDASolve ")
    parts = {"residual": inclusive(ann, r"ResFn\("),
             "jacobian": inclusive(ann, r"JacFn\("),
             "quadratures": inclusive(ann, r"QuadFn\(")}
    parts["IDAS itself"] = ida - sum(parts.values())
    parts["outside IDASolve"] = n_da - ida
    print("  daedalus: " + ", ".join(
        f"{k} {v / 1e6:.1f} M ({100.0 * v / n_da:.0f}%)"
        for k, v in parts.items()))
