#!/usr/bin/python3
"""Newton's cradle side by side: Daedalus, Siconos and MuJoCo (issue 36;
docs/contact.md, "Newton's cradle beside Siconos and MuJoCo").

    bench/cradle_side_by_side.py [--bin build/problems]
        [--mujoco build-bench/bench/contact_mujoco]
        [--siconos build-bench/bench/contact_siconos] [--repeats N]
        [--t-end T] [--json OUT.json]

Cases: 3 and 5 balls (m = 0.1, d = 0.05, ball 1 at v0 = 1 m/s, 0.01 m
from the others), the resting row touching with e = 1 and e = 0.9, and set
1e-4 m apart with e = 1. Each case, interleaved N times (default 5), by:
  Daedalus  newtons_cradle (from --bin) event-driven (its defaults), and
            --integrator moreau-jean --step 1e-4; --quiet --output-dir TMP,
            reading TMP/newtons_cradle.json and .csv;
  Siconos   contact_siconos cradle-ed (EventDriven, LsodarOSI at 1e-12),
            cradle-mj (MoreauJeanOSI, theta 0.5, h 1e-4) with Siconos's
            default activation threshold (0) and with 1e-9 (skipped when
            the program was not built);
  MuJoCo    contact_mujoco cradle, variants default (solref 0.02 1, 2 ms),
            direct_w500 (2 ms) and direct_w5000_h1e-4 (the damping ratio
            of one pair with restitution e; bench/contact_mujoco.cpp).
All run to --t-end (default 0.2 s: every soft contact has let go).

Printed per case and scheme: the velocities at the end, their largest
difference from the two closed forms of Newton's law,
  simultaneous (one impulse LCP over the row, its contacts closed):
      v1 = (1 - (N - 1) e) v0 / N, v2 = ... = vN = v1 + e v0
      (3 balls, e = 1: (-1/3, 2/3, 2/3) v0),
  sequential (binary impacts, e = 1): (0, ..., 0, v0),
the kinetic energy at the end over the initial 0.05 J, the deepest overlap
of two balls, impacts (event-driven: impact events; Moreau-Jean: steps
whose percussion turns on; MuJoCo: most pairs overlapping at once), the
process time (getrusage(RUSAGE_CHILDREN) user + system around each child,
median of N), the stepping loop's own CPU time (Siconos, MuJoCo) and the
process time over Daedalus's event-driven run's.
"""
import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

M, D, V0 = 0.1, 0.05, 1.0
E0 = 0.5 * M * V0 * V0
CASES = [(3, 1.0, 0.0), (3, 0.9, 0.0), (3, 1.0, 1e-4),
         (5, 1.0, 0.0), (5, 0.9, 0.0), (5, 1.0, 1e-4)]
MJ_STEP = "1e-4"
MUJOCO = ["default", "direct_w500", "direct_w5000_h1e-4"]


def simultaneous(n, e):
    v1 = (1.0 - (n - 1) * e) * V0 / n
    return [v1] + [v1 + e * V0] * (n - 1)


def sequential(n, e):
    return [0.0] * (n - 1) + [V0] if e == 1.0 else None


def timed(cmd):
    """Runs cmd; returns (stdout, process seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        sys.stderr.write("%s: status %d\n%s" % (" ".join(cmd), out.returncode,
                                                out.stderr[-2000:]))
    return out.stdout, cpu


def last_json(out):
    lines = [x for x in out.splitlines() if x.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def case_name(n, e, s):
    return "%d balls, e = %g, %s" % (
        n, e, "touching" if s == 0 else "%g m apart" % s)


def daedalus(args, tmp, label, n, e, s, extra):
    out = os.path.join(tmp, label)
    os.makedirs(out, exist_ok=True)
    cmd = [os.path.join(args.bin, "newtons_cradle"), "--quiet",
           "--output-dir", out, "--balls", str(n), "--param", "e=%g" % e,
           "--param", "spacing=%g" % s, "--t-end", str(args.t_end)] + extra
    _, t = timed(cmd)
    with open(os.path.join(out, "newtons_cradle.json")) as f:
        r = json.load(f)
    with open(os.path.join(out, "newtons_cradle.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    # The deepest overlap at the samples, and the summary's own figure.
    pen = 0.0
    for row in rows:
        x = [float(row["x%d" % (i + 1)]) for i in range(n)]
        pen = max([pen] + [x[i] - x[i + 1] + D for i in range(n - 1)])
    c = r["contact"]
    if "time_stepping" in c:
        ts = c["time_stepping"]
        p = ts["penetration_max"]
        pen = max(pen, p["value"] if isinstance(p, dict) else p)
        impacts = "%d solves" % ts["solves"]
    else:
        pen = max(pen, -c["certificate"]["min_open_gap"]["value"],
                  r["drift"]["position_max"])
        impacts = str(c["impacts"])
    return {"v": r["final"]["v"], "energy": r["energy"]["final"], "pen": pen,
            "impacts": impacts, "steps": r["stats"]["steps"],
            "status": r.get("status", "ok")}, t


def run_all(args):
    tmp = tempfile.mkdtemp(prefix="cradle_sbs_")
    res, cpu, loop = {}, {}, {}
    for rep in range(args.repeats):
        for (n, e, s) in CASES:
            key = (n, e, s)
            runs = [("Daedalus event-driven", "dd", []),
                    ("Daedalus Moreau-Jean h %s" % MJ_STEP, "dm",
                     ["--integrator", "moreau-jean", "--step", MJ_STEP])]
            for title, tag, extra in runs:
                r, t = daedalus(args, tmp, "%s_%d_%g_%g" % (tag, n, e, s), n,
                                e, s, extra)
                cpu.setdefault((key, title), []).append(t)
                res.setdefault((key, title), r)
            common = ["--balls", str(n), "--restitution", "%g" % e,
                      "--spacing", "%g" % s, "--t-end", str(args.t_end)]
            sic = []
            if args.siconos:
                sic = [("Siconos event-driven", ["cradle-ed"]),
                       ("Siconos Moreau-Jean h %s" % MJ_STEP,
                        ["cradle-mj", "--step", MJ_STEP]),
                       ("Siconos Moreau-Jean h %s threshold 1e-9" % MJ_STEP,
                        ["cradle-mj", "--step", MJ_STEP,
                         "--activation-threshold", "1e-9"])]
            for title, extra in sic:
                out, t = timed([args.siconos] + extra + common)
                line = last_json(out)
                cpu.setdefault((key, title), []).append(t)
                loop.setdefault((key, title), []).append(
                    line["cpu_s"] if line else float("nan"))
                res.setdefault((key, title), line)
            for v in MUJOCO:
                title = "MuJoCo " + v
                out, t = timed([args.mujoco, "cradle", "--variant", v] +
                               common)
                line = last_json(out)
                cpu.setdefault((key, title), []).append(t)
                loop.setdefault((key, title), []).append(line["cpu_s"])
                res.setdefault((key, title), line)
    med = {k: statistics.median(v) for k, v in cpu.items()}
    lmed = {k: statistics.median(v) for k, v in loop.items()}
    return res, med, lmed, cpu


def row_of(title, r):
    """The engine-independent fields of one result."""
    if r is None:
        return None
    if title.startswith("Daedalus"):
        return r
    if r.get("engine") == "siconos":
        ok = r["ok"]
        return {"v": r["final_v"], "energy": r["energy_final"],
                "pen": r["max_penetration"],
                "impacts": str(len(r["impact_times"])),
                "steps": r["steps"],
                "status": "ok" if ok else "fails: " + r["error"]}
    return {"v": r["final_v"], "energy": r["energy_final"],
            "pen": r["max_penetration"],
            "impacts": "%d pairs" % r["most_overlapping"],
            "steps": r["steps"],
            "status": "ok" if r["overlapping_at_end"] == 0 else
            "%d pairs overlap at the end" % r["overlapping_at_end"]}


def dev(v, ref):
    if ref is None:
        return "-"
    return "%.1e" % max(abs(a - b) for a, b in zip(v, ref))


def report(res, med, lmed, args):
    for (n, e, s) in CASES:
        key = (n, e, s)
        lcp, seq = simultaneous(n, e), sequential(n, e)
        print("\n## %s (closed forms: simultaneous %s, sequential %s)\n" % (
            case_name(n, e, s), "(" + ", ".join("%.4g" % x for x in lcp) +
            ")", "(" + ", ".join("%g" % x for x in seq) + ")" if seq else
            "-"))
        print("| scheme | v at %g s [m/s] | vs simultaneous | vs sequential "
              "| E / E0 | max overlap [m] | impacts | steps | process [ms] "
              "| loop [ms] | process / Daedalus |" % args.t_end)
        print("|" + "---|" * 11)
        base = med[(key, "Daedalus event-driven")]
        for (k, title), t in med.items():
            if k != key:
                continue
            r = row_of(title, res[(k, title)])
            if r is None:
                print("| %s | no output | | | | | | | %.2f | - | %.2f |" % (
                    title, 1e3 * t, t / base))
                continue
            v = ", ".join("%.4f" % x for x in r["v"])
            status = "" if r["status"] == "ok" else " (%s)" % r["status"]
            lt = lmed.get((k, title))
            print("| %s%s | %s | %s | %s | %.4f | %.1e | %s | %d | %.2f | %s "
                  "| %.2f |" % (
                      title, status, v, dev(r["v"], lcp), dev(r["v"], seq),
                      r["energy"] / E0, r["pen"], r["impacts"], r["steps"],
                      1e3 * t, "%.2f" % (1e3 * lt) if lt is not None else "-",
                      t / base))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/problems")
    ap.add_argument("--mujoco", default="build-bench/bench/contact_mujoco")
    ap.add_argument("--siconos", default="build-bench/bench/contact_siconos",
                    help="the Siconos program; skipped when absent")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--t-end", type=float, default=0.2)
    ap.add_argument("--json", help="also write every result here")
    args = ap.parse_args()
    for exe in [os.path.join(args.bin, "newtons_cradle"), args.mujoco]:
        if not os.access(exe, os.X_OK):
            sys.exit("cradle_side_by_side: no executable %s (build it, or "
                     "give --bin / --mujoco)" % exe)
    if not os.access(args.siconos, os.X_OK):
        print("(no %s: Siconos left out)" % args.siconos)
        args.siconos = None
    with open("/proc/loadavg") as f:
        load0 = " ".join(f.read().split()[:3])
    res, med, lmed, cpu = run_all(args)
    with open("/proc/loadavg") as f:
        load1 = " ".join(f.read().split()[:3])
    print("Newton's cradle side by side: %d interleaved runs, %g s each; "
          "load average %s before, %s after" % (args.repeats, args.t_end,
                                                load0, load1))
    report(res, med, lmed, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"case": case_name(*k), "scheme": title,
                        "result": res[(k, title)],
                        "process_cpu_s": cpu[(k, title)]}
                       for (k, title) in res], f, indent=1)


if __name__ == "__main__":
    main()
