#!/usr/bin/python3
"""The bouncing ball to rest (issue 36: under 20 ms of process time), two
builds side by side in one run (docs/contact.md, "Measured").

    bench/ball_rest_cost.py BIN [BIN ...] [--repeats N] [-- ARGS...]

Runs each BIN (a bouncing_ball_contact executable, e.g.
build/problems/bouncing_ball_contact and that of the tree before a change)
interleaved N times (default 21) with --quiet --output-dir TMP and ARGS,
reading TMP/bouncing_ball_contact.json. Process time: the
getrusage(RUSAGE_CHILDREN) delta (user + system) around each child, as
bench/contact_side_by_side.py measures it; prints per BIN the median,
best and quartiles, and what it computed: impacts, the 44th impact's
error against the closed form, the rest time against t_inf, integrator
steps, so that a faster build is seen to compute the same.
"""
import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile

G, H0, E = 9.81, 1.0, 0.9


def impact_time(k):
    t1 = math.sqrt(2.0 * H0 / G)
    return t1 * (1.0 + 2.0 * sum(E**j for j in range(1, k)))


def run(exe, args, tmp):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([exe, "--quiet", "--output-dir", tmp] + args, check=True,
                   capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(os.path.join(tmp, "bouncing_ball_contact.json")) as f:
        return cpu, json.load(f)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:  # the executables' arguments follow "--"
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser()
    ap.add_argument("bins", nargs="+")
    ap.add_argument("--repeats", type=int, default=21)
    a = ap.parse_args(argv)
    times = {b: [] for b in a.bins}
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.repeats):
            for b in a.bins:
                cpu, rep = run(b, extra, tmp)
                times[b].append(1e3 * cpu)
                report[b] = rep
    t1 = math.sqrt(2.0 * H0 / G)
    t_inf = t1 * (1.0 + E) / (1.0 - E)
    print(f"load average {os.getloadavg()[0]:.2f}, {a.repeats} interleaved "
          f"runs, args {' '.join(extra) or '(defaults)'}")
    for b in a.bins:
        ts = sorted(times[b])
        q = statistics.quantiles(ts, n=4)
        c = report[b]["contact"]
        impacts = [e["t"] for e in c["events"] if e["kind"] == "impact"]
        e44 = impacts[43] - impact_time(44) if len(impacts) >= 44 else math.nan
        stats = report[b].get("stats", {})
        print(f"{b}\n  process median {statistics.median(ts):.2f} ms, best "
              f"{ts[0]:.2f}, quartiles {q[0]:.2f}-{q[2]:.2f}; "
              f"{len(impacts)} impacts, t_44 error {e44:+.1e} s, rest "
              f"{c['t_rest']:.10f} ({c['t_rest'] - t_inf:+.1e} s from t_inf), "
              f"steps {stats.get('steps', '?')}")


if __name__ == "__main__":
    main()
