#!/usr/bin/python3
"""Work-precision study (issue 19 item 6, in part): for stiff_linkage and
the slider-crank, the largest position error against a tight reference,
wall time and residual (or right-hand-side) evaluations, for every
formulation and integrator that runs them, at rtol = atol from 1e-4 to
1e-12, with default options otherwise.

The reference is projection on CVODES BDF at rtol = atol = REF_TOL (an
index-1 form, nothing in common with IDAS); GGL on IDAS at the same
tolerance is run too and its distance from the reference printed as the
reference's own uncertainty. The error is max over the output samples and
coordinates of |q - q_ref| (the CSV's position columns). Wall time: the
best of REPEATS runs of the executable (process start included, about
5 ms; run with --quiet).

Usage: bench/work_precision.py [BUILD_DIR] [REPEATS]  -- prints Markdown.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
out = tempfile.mkdtemp(prefix="daedalus_wp_")
REF_TOL = "1e-12"
cases = {
    "stiff_linkage": [],  # its defaults: 0.2 s, output every 5e-4 s
    "slider_crank": ["--t-end", "10", "--output-step", "0.1"],
}
forms = [
    ("unstabilized", "cvodes-bdf"),
    ("baumgarte", "cvodes-bdf"),
    ("projection", "cvodes-bdf"),
    ("baumgarte", "cvodes-adams"),
    ("unstabilized", "idas"),
    ("baumgarte", "idas"),
    ("ggl", "idas"),
    ("index3", "idas"),
]
tols = ["1e-4", "1e-6", "1e-8", "1e-10", "1e-12"]


def run(prob, form, integ, tol, extra, tag):
    d = os.path.join(out, tag)
    cmd = [os.path.join(build, "problems", prob), "--formulation", form,
           "--integrator", integ, "--rtol", tol, "--atol", tol,
           "--output-dir", d, "--quiet"] + extra
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    j = json.load(open(os.path.join(d, prob + ".json")))
    q = None
    if j["status"] == "ok":
        with open(os.path.join(d, prob + ".csv")) as f:
            r = csv.reader(f)
            head = next(r)
            nq = next(i for i, h in enumerate(head) if h.startswith("v_")) - 1
            q = [[float(x) for x in row[1:1 + nq]] for row in r]
    return j, q, best


def error(q, ref):
    return max(abs(a - b) for ra, rb in zip(q, ref) for a, b in zip(ra, rb))


for prob, extra in cases.items():
    _, ref, _ = run(prob, "projection", "cvodes-bdf", REF_TOL, extra, "ref")
    _, ggl, _ = run(prob, "ggl", "idas", REF_TOL, extra, "refggl")
    print(f"\n### {prob}\n")
    print(f"Reference: projection on cvodes-bdf at rtol = atol = {REF_TOL}; "
          f"GGL on IDAS at {REF_TOL} is {error(ggl, ref):.1e} from it.\n")
    print("| formulation | integrator | rtol=atol | position error | wall [s] | steps | f/res evals | status |")
    print("|---|---|---|---|---|---|---|---|")
    for form, integ in forms:
        for tol in tols:
            j, q, wall = run(prob, form, integ, tol, extra, "x")
            st = j.get("stats", {})
            ev = st.get("rhs_evals", st.get("residual_evals", 0))
            if q is None:
                status = "failed: " + j.get("error", "")[:60]
                err = "-"
            else:
                status = "ok"
                err = f"{error(q, ref):.1e}"
            print(f"| {form} | {integ} | {tol} | {err} | {wall:.3f} | "
                  f"{st.get('steps', 0)} | {ev} | {status} |")
            sys.stdout.flush()
