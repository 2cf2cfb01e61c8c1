#!/usr/bin/python3
"""Runs every problem of the catalogue under a set of command lines with two
builds and compares what they write, column by column.

    bench/catalogue_diff.py OLD_BUILD NEW_BUILD [--t-end T] [--jobs N]

OLD_BUILD and NEW_BUILD are build directories (their problems/ folders hold
the executables), for example a worktree of an earlier commit built with
the release preset, and build/. For each problem and each command line
(the problem's defaults, each formulation, Adams, IDAS, the sparse KKT
path, forward sensitivities, RATTLE) both executables run with --t-end T
(default 1) into separate directories; the CSVs are then compared:

  identical    every byte of every CSV the same
  round-off    same columns, every value within 64 ulps of the other
               (relative 1.4e-14) or within 1e-15 absolute
  filled       as identical or round-off, except values that were nan in
               the old build and are finite in the new one (named)
  differs      the largest relative difference, its column and the
               largest absolute difference in that column
  columns      the set of columns changed (added or removed ones named)
  exit         the exit statuses differ (both named)

The JSON summaries are not compared (they carry wall times). Prints one
line per run and the counts; the exit status is 0 whatever the result:
the point is to read the differences, and docs say which are expected.
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

VARIANTS = [
    ("default", []),
    ("unstabilized", ["--formulation", "unstabilized"]),
    ("projection", ["--formulation", "projection"]),
    ("ggl", ["--formulation", "ggl"]),
    ("adams", ["--integrator", "cvodes-adams"]),
    ("idas", ["--integrator", "idas", "--formulation", "baumgarte"]),
    ("schur", ["--kkt", "schur"]),
    ("sparse-lu", ["--kkt", "sparse-lu"]),
    ("rattle", ["--integrator", "rattle", "--step", "0.001"]),
]

ROUNDOFF = 64 * 2.220446049250313e-16


def problems(build):
    d = os.path.join(build, "problems")
    out = []
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        if (os.path.isfile(p) and os.access(p, os.X_OK) and "." not in f
                and not f.endswith("_kernelgen")):
            out.append(f)
    return out


def run(exe, args, outdir):
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([exe] + args + ["--quiet", "--output-dir", outdir],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=600)
    return r.returncode, r.stderr.decode(errors="replace").strip()


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def compare(a_path, b_path):
    with open(a_path, "rb") as f:
        a_bytes = f.read()
    with open(b_path, "rb") as f:
        b_bytes = f.read()
    if a_bytes == b_bytes:
        return "identical", ""
    ha, ra = read_csv(a_path)
    hb, rb = read_csv(b_path)
    note = ""
    if ha != hb:
        added = [c for c in hb if c not in ha]
        removed = [c for c in ha if c not in hb]
        if added:
            note += "added " + ",".join(added[:4]) + ("..." if len(added) > 4 else "")
        if removed:
            note += " removed " + ",".join(removed[:4]) + ("..." if len(removed) > 4 else "")
    shared = [c for c in ha if c in hb]
    if len(ra) != len(rb):
        return "differs", (note + " rows %d vs %d" % (len(ra), len(rb))).strip()
    ia = {c: i for i, c in enumerate(ha)}
    ib = {c: i for i, c in enumerate(hb)}
    worst, where, absd = 0.0, "", 0.0
    col_abs = {}
    filled = set()
    for x, y in zip(ra, rb):
        for c in shared:
            u, v = x[ia[c]], y[ib[c]]
            if u == v:
                continue
            try:
                fu, fv = float(u), float(v)
            except ValueError:
                worst, where = math.inf, c + " (text)"
                continue
            if math.isnan(fu) and not math.isnan(fv):
                filled.add(c)
                continue
            if math.isnan(fu) or math.isnan(fv):
                worst, where = math.inf, c + " (new nan)"
                continue
            d = abs(fu - fv)
            col_abs[c] = max(col_abs.get(c, 0.0), d)
            if d <= 1e-15:
                continue
            rel = d / max(abs(fu), abs(fv))
            if rel > worst:
                worst, where = rel, c
    if ha != hb:
        kind = "columns"
    elif worst > ROUNDOFF:
        kind = "differs"
    elif filled:
        kind = "filled"
    else:
        kind = "round-off"
    if filled:
        cols = sorted(filled)
        note += " nan->finite in %d columns (%s%s)" % (
            len(cols), ",".join(cols[:3]), "..." if len(cols) > 3 else "")
    if worst > 0:
        note += " max rel %.2e in %s (max abs %.2e)" % (worst, where,
                                                       col_abs.get(where, math.inf))
    return kind, note.strip()


def compare_dirs(da, db):
    """Compares every CSV the two runs wrote (a problem may name its files
    after its variant, as atwood_reduced.csv)."""
    fa = sorted(f for f in os.listdir(da) if f.endswith(".csv"))
    fb = sorted(f for f in os.listdir(db) if f.endswith(".csv"))
    if fa != fb:
        return "columns", "files %s vs %s" % (fa, fb)
    if not fa:
        return "no-csv", ""
    order = ["identical", "round-off", "filled", "differs", "columns"]
    kind, notes = "identical", []
    for f in fa:
        k, n = compare(os.path.join(da, f), os.path.join(db, f))
        if order.index(k) > order.index(kind):
            kind = k
        if n:
            notes.append((f + ": " if len(fa) > 1 else "") + n)
    return kind, "; ".join(notes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--t-end", default="1")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated problems")
    a = ap.parse_args()
    names = [p for p in problems(a.new) if p in problems(a.old)]
    if a.only:
        names = [p for p in names if p in a.only.split(",")]
    tmp = tempfile.mkdtemp(prefix="catalogue_diff.")
    jobs = [(p, v, args) for p in names for v, args in VARIANTS]

    def one(job):
        p, v, args = job
        full = args + ["--t-end", a.t_end]
        res = []
        for tag, build in (("old", a.old), ("new", a.new)):
            d = os.path.join(tmp, tag, p, v)
            res.append(run(os.path.join(build, "problems", p), full, d) + (d,))
        (ca, ea, da), (cb, eb, db) = res
        if ca != cb:
            msg = eb if cb else ea
            return p, v, "exit", "%d -> %d %s" % (ca, cb, msg.splitlines()[-1][:110] if msg else "")
        if ca != 0:
            return p, v, "both-fail", "exit %d" % ca
        return (p, v) + compare_dirs(da, db)

    counts = {}
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for p, v, kind, note in ex.map(one, jobs):
            counts[kind] = counts.get(kind, 0) + 1
            print("%-18s %-13s %-10s %s" % (p, v, kind, note), flush=True)
    print("\n" + ", ".join("%s %d" % kv for kv in sorted(counts.items())),
          "of", len(jobs), "runs; outputs in", tmp)


if __name__ == "__main__":
    sys.exit(main())
