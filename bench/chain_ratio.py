#!/usr/bin/python3
"""Issue 16's target: the 1000-link chain in joint angles against maximal
coordinates (docs/performance.md, "The 1000-link reduced chain").

Usage: bench/chain_ratio.py [BUILD_DIR] [--pairs N] [--bodies N]
                            [--t-end T] [--rtol R] [-- EXTRA_REDUCED_ARGS]

Runs, back to back, N times (default 2):

  BUILD_DIR/problems/chain --bodies 1000 --t-end 1 --rtol 1e-6 --quiet
  BUILD_DIR/problems/chain_reduced --bodies 1000 --t-end 1 --rtol 1e-6 --quiet

each under /usr/bin/time -f '%U %S %e', with the load average before and
after, and prints per pair the CPU times (user + system), the wall times,
the steps and right-hand sides from each run's JSON summary, the reduced
chain's tip at t_end, and the ratio of the CPU times. Target: ratio >= 10.
Arguments after `--` go to chain_reduced only (e.g. --nonlin-conv-coef 1,
docs/output.md). Not part of ctest: a 1000-link pair
takes about half a minute of CPU on the 2-core development machine.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def timed(cmd):
    """(user + sys CPU, wall) of one run, from /usr/bin/time."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as t:
        r = subprocess.run(["/usr/bin/time", "-o", t.name, "-f", "%U %S %e"]
                           + cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd),
                                             r.stderr))
        u, s, e = (float(x) for x in t.read().split()[-3:])
    return u + s, e


def summary(out_dir, name):
    with open(os.path.join(out_dir, name + ".json")) as f:
        return json.load(f)


def find(d, *keys):
    """The first of keys found at any depth of the JSON summary."""
    if isinstance(d, dict):
        for k in keys:
            if k in d:
                return d[k]
        for v in d.values():
            r = find(v, *keys)
            if r is not None:
                return r
    return None


def tip(q):
    """chain_reduced's tip: the sum of the links' vectors l (sin, -cos) of
    the absolute angles (the relative ones summed), total length 1 m."""
    n = len(q)
    x = y = a = 0.0
    for qi in q:
        a += qi
        x += math.sin(a) / n
        y -= math.cos(a) / n
    return x, y


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--bodies", type=int, default=1000)
    ap.add_argument("--t-end", default="1")
    ap.add_argument("--rtol", default="1e-6")
    a = ap.parse_args(argv)
    common = ["--bodies", str(a.bodies), "--t-end", a.t_end, "--rtol",
              a.rtol, "--quiet"]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        c_dir, r_dir = os.path.join(tmp, "c"), os.path.join(tmp, "r")
        for k in range(a.pairs):
            l0 = load()
            c_cpu, c_wall = timed([os.path.join(a.build, "problems", "chain")]
                                  + common + ["--output-dir", c_dir])
            l1 = load()
            r_cpu, r_wall = timed(
                [os.path.join(a.build, "problems", "chain_reduced")] + common
                + ["--output-dir", r_dir] + extra)
            l2 = load()
            cs, rs = summary(c_dir, "chain"), summary(r_dir, "chain_reduced")
            ratio = c_cpu / r_cpu
            ratios.append(ratio)
            q = find(rs, "final")
            q = q.get("q") if isinstance(q, dict) else None
            print("pair %d  load %s %s %s" % (k + 1, l0, l1, l2))
            print("  chain          CPU %6.2f s  wall %6.2f s  steps %s  "
                  "rhs %s" % (c_cpu, c_wall, find(cs, "steps"),
                              find(cs, "rhs_evals")))
            print("  chain_reduced  CPU %6.2f s  wall %6.2f s  steps %s  "
                  "rhs %s" % (r_cpu, r_wall, find(rs, "steps"),
                              find(rs, "rhs_evals")))
            if q:
                print("  reduced tip at t_end: (%.12f, %.12f) m" % tip(q))
            print("  ratio (CPU) %.2f" % ratio)
    print("ratios: %s  (target >= 10)" % ", ".join("%.2f" % r
                                                  for r in ratios))


if __name__ == "__main__":
    main()
