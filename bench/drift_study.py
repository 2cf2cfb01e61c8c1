#!/usr/bin/python3
"""Drift study (issue 3): for the slider-crank and the pendulum, max
position drift, max velocity drift, max energy-balance residual, steps and
RHS/residual evaluations per formulation, at two tolerances.

Usage: bench/drift_study.py [BUILD_DIR]  -- prints a Markdown table.
"""
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1] if len(sys.argv) > 1 else "build"
out = tempfile.mkdtemp(prefix="daedalus_drift_")
cases = {
    "pendulum": ["--t-end", "30"],
    "slider_crank": ["--t-end", "10"],
}
forms = [
    ("unstabilized", "cvodes-bdf"),
    ("baumgarte", "cvodes-bdf"),
    ("projection", "cvodes-bdf"),
    ("unstabilized", "idas"),
    ("baumgarte", "idas"),
    ("ggl", "idas"),
    ("index3", "idas"),
]
print("| problem | formulation | integrator | rtol=atol | max drift pos | max drift vel | max energy residual [J] | steps | f/res evals | status |")
print("|---|---|---|---|---|---|---|---|---|---|")
for prob, extra in cases.items():
    for tol in ("1e-6", "1e-8"):
        for form, integ in forms:
            cmd = [os.path.join(build, "problems", prob), "--formulation", form,
                   "--integrator", integ, "--rtol", tol, "--atol", tol,
                   "--output-dir", out, "--quiet"] + extra
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            j = json.load(open(os.path.join(out, prob + ".json")))
            st = j["stats"]
            ev = st.get("rhs_evals", st.get("residual_evals"))
            status = j["status"] if j["status"] == "ok" else "failed: " + j["error"].split(":")[0]
            print(f"| {prob} | {form} | {integ} | {tol} | {j['drift']['position_max']:.2e} | "
                  f"{j['drift']['velocity_max']:.2e} | {j['energy']['balance_residual_max']:.2e} | "
                  f"{st['steps']} | {ev} | {status} |")
