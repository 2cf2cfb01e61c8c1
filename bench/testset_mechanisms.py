#!/usr/bin/env python3
"""Final-state error of andrews_squeezer and car_axis against the Test Set
for IVP Solvers' published reference, for every formulation and integrator
the catalogue offers for constrained problems, at the problems' default
options (the tables of docs/problems.md, "andrews_squeezer" and
"car_axis").

    bench/testset_mechanisms.py [BUILD_DIR] [-- EXTRA ARGS]

Runs build/problems/<name> --formulation F --integrator I [EXTRA ARGS] into
a temporary folder and compares the JSON summary's final q, v and lambda
with the reference in problems/<name>.hpp (kAndrewsReference,
kCarAxisReference), in the Test Set's mixed measure
max |x - ref| / max(1, |ref|)."""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMS = [("ggl", "idas"), ("unstabilized", "cvodes-bdf"),
         ("unstabilized", "cvodes-adams"), ("unstabilized", "idas"),
         ("baumgarte", "cvodes-bdf"), ("baumgarte", "cvodes-adams"),
         ("baumgarte", "idas"), ("projection", "cvodes-bdf"),
         ("index3", "idas"), ("index3", "generalized-alpha"),
         ("index3", "hht"), ("index3", "rattle")]
NUMBER = r"[-+]?\d+\.\d+e[-+]\d+"


def reference(name, constant):
    """The q, v and lambda arrays of the header's reference constant."""
    text = open(os.path.join(ROOT, "problems", name + ".hpp")).read()
    body = re.search(constant + r"\{(.*?)\};", text, re.S).group(1)
    groups = re.findall(r"\{([^{}]*)\}", body)
    return [[float(x) for x in re.findall(NUMBER, g)] for g in groups]


def mixed(x, ref):
    return max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(x, ref))


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    build = args[0] if args else os.path.join(ROOT, "build")
    for name, constant in (("andrews_squeezer", "kAndrewsReference"),
                           ("car_axis", "kCarAxisReference")):
        q, v, lam = reference(name, constant)
        print(f"\n{name}\n| formulation | integrator | q | v | lambda "
              "| steps |\n|---|---|---|---|---|---|")
        for f, i in FORMS:
            with tempfile.TemporaryDirectory() as out:
                # RATTLE takes a fixed step (and is refused on both, with
                # the reason).
                step = ["--step", "1e-4"] if i == "rattle" else []
                p = subprocess.run(
                    [os.path.join(build, "problems", name), "--formulation",
                     f, "--integrator", i, "--output-dir", out] + step +
                    extra, capture_output=True, text=True)
                path = os.path.join(out, name + ".json")
                if p.returncode != 0 or not os.path.exists(path):
                    why = (p.stderr.strip().splitlines() or ["?"])[0]
                    print(f"| {f} | {i} | exit {p.returncode}: {why} | | | |")
                    continue
                s = json.load(open(path))
                if s["status"] != "ok":
                    print(f"| {f} | {i} | {s['status']} at t = "
                          f"{s['t_reached']} | | | |")
                    continue
                fin = s["final"]
                print(f"| {f} | {i} | {mixed(fin['q'], q):.1e} | "
                      f"{mixed(fin['v'], v):.1e} | "
                      f"{mixed(fin['lambda'], lam):.1e} | "
                      f"{s['stats']['steps']:,} |")


if __name__ == "__main__":
    main()
