#!/usr/bin/python3
"""Work-precision study (issue 19 item 6): for stiff_linkage, the
slider-crank, the pendulum and the four-bar, the largest position error
against a reference, wall time and residual (or right-hand-side)
evaluations, for every formulation and integrator that runs them: the
SUNDIALS integrators and generalized-alpha/HHT at rtol = atol from 1e-4 to
1e-12 with default options otherwise, RATTLE at fixed steps.

The pendulum's reference is its closed form (Jacobi elliptic functions,
scipy.special.ellipj: released from the horizontal, sin(th/2) =
k cd(w0 t | k^2) with k = sin(pi/4) and w0 = 4 K(k) / 2 s, the problem's
period being 2 s by its choice of g). The others' reference is projection
on CVODES BDF at rtol = atol = REF_TOL (an index-1 form, nothing in
common with IDAS); GGL on IDAS at the same tolerance is run too and its
distance from the reference printed as the reference's own uncertainty
(for the pendulum, the tight projection run's distance from the closed
form is printed instead). The error is max over the output samples and
coordinates of |q - q_ref| (the CSV's position columns). Wall time: the
best of REPEATS runs of the executable (process start included, about
5 ms; run with --quiet).

Usage: bench/work_precision.py [BUILD_DIR] [REPEATS] [PROBLEMS] [INTEGRATORS]
-- prints Markdown; PROBLEMS is a comma-separated subset of the four,
INTEGRATORS a comma-separated subset of the integrators (e.g.
generalized-alpha,hht to refresh the alpha rows alone).
"""
import csv
import json
import os
import shutil
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
    "pendulum": ["--t-end", "10", "--output-step", "0.05"],
    "four_bar": ["--t-end", "5", "--output-step", "0.025"],
}
only = sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[3] else \
    list(cases)
only_integ = sys.argv[4].split(",") if len(sys.argv) > 4 else None
forms = [
    ("unstabilized", "cvodes-bdf"),
    ("baumgarte", "cvodes-bdf"),
    ("projection", "cvodes-bdf"),
    ("baumgarte", "cvodes-adams"),
    ("unstabilized", "idas"),
    ("baumgarte", "idas"),
    ("ggl", "idas"),
    ("index3", "idas"),
    ("index3", "generalized-alpha"),
    ("index3", "hht"),
]
tols = ["1e-4", "1e-6", "1e-8", "1e-10", "1e-12"]
# Generalized-alpha and HHT: second-order methods whose local error is
# controlled per step, so their steps shrink as rtol^(1/3)
# (docs/formulations.md); 1e-12 would take millions of steps.
alpha_tols = ["1e-4", "1e-6", "1e-8", "1e-10"]
# RATTLE is fixed-step: its work parameter is the step.
rattle_steps = ["5e-3", "2.5e-3", "1e-3", "5e-4", "1e-4"]  # divide the output steps


def run(prob, form, integ, tol, extra, tag, step=None):
    d = os.path.join(out, tag)
    cmd = [os.path.join(build, "problems", prob), "--formulation", form,
           "--integrator", integ, "--output-dir", d, "--quiet"] + extra
    cmd += ["--step", step] if step else ["--rtol", tol, "--atol", tol]
    best = None
    err = ""
    for _ in range(repeats):
        # A run that is refused writes nothing: never read a previous one.
        shutil.rmtree(d, ignore_errors=True)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
        err = r.stderr.strip().splitlines()[0] if r.stderr.strip() else ""
    path = os.path.join(d, prob + ".json")
    if not os.path.exists(path):
        return {"status": "refused", "error": err}, None, best
    j = json.load(open(path))
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


def pendulum_exact(extra):
    """The closed-form pendulum (l = 1) at the output samples of a run."""
    import numpy as np
    from scipy.special import ellipj, ellipk
    t_end = float(extra[extra.index("--t-end") + 1])
    dt = float(extra[extra.index("--output-step") + 1])
    t = np.linspace(0.0, t_end, int(round(t_end / dt)) + 1)
    m = 0.5  # k^2, k = sin(th0 / 2), th0 = pi / 2
    w0 = 4.0 * ellipk(m) / 2.0  # the period is 2 s
    sn, cn, dn, _ = ellipj(w0 * t, m)
    s = np.sqrt(m) * cn / dn  # sin(th / 2) = k cd(w0 t)
    c = np.sqrt(1.0 - s * s)
    return [[2.0 * si * ci, -(1.0 - 2.0 * si * si)] for si, ci in zip(s, c)]


def row(prob, form, integ, label, extra, ref, tol=None, step=None):
    j, q, wall = run(prob, form, integ, tol, extra, "x", step)
    st = j.get("stats", {})
    ev = st.get("rhs_evals", st.get("residual_evals", 0))
    if q is None:
        why = j.get("error", "").split(": ", 1)[-1]
        status = ("refused: " if j["status"] == "refused" else "failed: ") + \
            why[:100]
        err = "-"
    else:
        status = "ok"
        err = f"{error(q, ref):.1e}"
    print(f"| {form} | {integ} | {label} | {err} | {wall:.3f} | "
          f"{st.get('steps', 0)} | {ev} | {status} |")
    sys.stdout.flush()


for prob in only:
    extra = cases[prob]
    _, tight, _ = run(prob, "projection", "cvodes-bdf", REF_TOL, extra, "ref")
    print(f"\n### {prob}\n")
    if prob == "pendulum":
        ref = pendulum_exact(extra)
        print(f"Reference: the closed form (Jacobi elliptic functions); "
              f"projection on cvodes-bdf at rtol = atol = {REF_TOL} is "
              f"{error(tight, ref):.1e} from it.\n")
    else:
        ref = tight
        _, ggl, _ = run(prob, "ggl", "idas", REF_TOL, extra, "refggl")
        print(f"Reference: projection on cvodes-bdf at rtol = atol = "
              f"{REF_TOL}; GGL on IDAS at {REF_TOL} is {error(ggl, ref):.1e} "
              f"from it.\n")
    print("| formulation | integrator | rtol=atol (step) | position error | wall [s] | steps | f/res evals | status |")
    print("|---|---|---|---|---|---|---|---|")
    for form, integ in forms:
        if only_integ is not None and integ not in only_integ:
            continue
        for tol in (alpha_tols if integ in ("generalized-alpha", "hht")
                    else tols):
            row(prob, form, integ, tol, extra, ref, tol=tol)
    for step in (rattle_steps if only_integ is None or "rattle" in only_integ
                 else []):
        row(prob, "index3", "rattle", f"(h = {step})", extra, ref, step=step)
