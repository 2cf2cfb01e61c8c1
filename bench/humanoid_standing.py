#!/usr/bin/python3
"""The standing humanoid, Daedalus beside MuJoCo (issue 37;
docs/problems.md, "humanoid_standing").

    bench/humanoid_standing.py [--bin build/problems]
        [--mujoco build-bench/bench/humanoid_stand_mujoco]
        [--t-end 5] [--repeats N] [--json OUT.json] [--reuse DIR]

Runs build/problems/humanoid_standing --t-end T --quiet --output-dir TMP
(N times, default 1) and reads TMP/humanoid_standing.standing.csv (the
sole corners' drift, the vertical reaction against the weight, the centre
of pressure and its margin in the support polygon, one row per output
sample) and TMP/humanoid_standing.json (the run's summary: its contact
events, its steps; the side file's summary holds the pose, the
equilibrium torques and the joint inertias). Then, when the MuJoCo program
exists, writes the same control (pose, torques, PD gains omega^2 M_r and
2 zeta omega M_r) to a file and runs it on problems/data/humanoid.xml with
the same feet boxes (bench/humanoid_stand_mujoco.cpp). Process times are
getrusage(RUSAGE_CHILDREN) deltas (user + system) around each child
(medians); MuJoCo's in-loop CPU time is its own report.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    """Runs cmd; returns (stdout, process seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def daedalus(exe, t_end, repeats, reuse=None):
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        if reuse:
            tmp = reuse
        for _ in range(0 if reuse else repeats):
            _, cpu = timed([exe, "--t-end", str(t_end), "--quiet",
                            "--output-dir", tmp])
            times.append(cpu)
        with open(os.path.join(tmp, "humanoid_standing.json")) as f:
            summary = json.load(f)
        with open(os.path.join(tmp, "humanoid_standing.standing.csv")) as f:
            rows = [{k: float(v) for k, v in r.items()}
                    for r in csv.DictReader(f)]
    side = next(s for s in summary.get("side_files", [])
                if s.get("file", "").endswith("standing.csv"))
    events = summary.get("contact", {}).get("events", [])
    return {
        "process_s": statistics.median(times) if times else float("nan"),
        "samples": len(rows),
        "max_drift_m": max(r["drift"] for r in rows),
        "max_reaction_error": max(abs(r["reaction_error"]) for r in rows),
        "min_cop_margin_m": min(r["cop_margin"] for r in rows),
        "max_cop_minus_com_m": max(
            ((r["cop_x"] - r["com_x"]) ** 2 + (r["cop_y"] - r["com_y"]) ** 2)
            ** 0.5 for r in rows),
        "cop_end_m": [rows[-1]["cop_x"], rows[-1]["cop_y"]],
        "closed_corners_min": min(r["closed_corners"] for r in rows),
        "contact_events": [e.get("kind") for e in events],
        "side": side,
    }


def mujoco(exe, xml, side, t_end):
    w, zeta = side["stand_omega"], side["stand_zeta"]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("pelvis_z %.17g\nomega %.17g\nzeta %.17g\njoints %d\n" % (
            side["pelvis_z"], w, zeta, len(side["joints"])))
        for j in side["joints"]:
            f.write("%s %.17g %.17g\n" % (j["name"], j["q"], j["tau"]))
        for row in side["reduced_inertia"]:
            f.write(" ".join("%.17g" % x for x in row) + "\n")
        control = f.name
    try:
        out, cpu = timed([exe, xml, control, "--t-end", str(t_end)])
    finally:
        os.unlink(control)
    r = json.loads(out)
    r["process_s"] = cpu
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "problems"))
    ap.add_argument("--mujoco", default=os.path.join(
        ROOT, "build-bench", "bench", "humanoid_stand_mujoco"))
    ap.add_argument("--t-end", type=float, default=5.0)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--reuse", help="read a finished run's output directory "
                    "instead of running Daedalus (no process time)")
    a = ap.parse_args()
    d = daedalus(os.path.join(a.bin, "humanoid_standing"), a.t_end, a.repeats,
                 a.reuse)
    out = {"t_end": a.t_end, "daedalus": {k: v for k, v in d.items()
                                          if k != "side"}}
    print("humanoid standing %g s" % a.t_end)
    print("  Daedalus: process %.2f s, foot drift %.3g m, |sum lambda_n - m g|"
          "/(m g) %.3g, CoP margin >= %.4f m (|CoP - CoM| <= %.3g m), "
          "closed corners >= %d, contact events %s" % (
              d["process_s"], d["max_drift_m"], d["max_reaction_error"],
              d["min_cop_margin_m"], d["max_cop_minus_com_m"],
              d["closed_corners_min"], d["contact_events"]))
    if os.path.exists(a.mujoco):
        xml = os.path.join(ROOT, "problems", "data", "humanoid.xml")
        m = mujoco(a.mujoco, xml, d["side"], a.t_end)
        out["mujoco"] = m
        print("  MuJoCo 2.2.2 (defaults, dt %g s): loop CPU %.3f s, process "
              "%.3f s, corner displacement <= %.3g m, creep 1 s..end %.3g m "
              "(%.3g m/s), penetration %.3g m (max %.3g m), F_z/(m g) %.9f" % (
                  m["timestep"], m["cpu_s"], m["process_s"],
                  m["max_corner_displacement_m"], m["creep_1s_to_end_m"],
                  m["creep_rate_m_per_s"], m["penetration_end_m"],
                  m["penetration_max_m"], m["vertical_force_over_weight"]))
    else:
        print("  MuJoCo: %s not built (bench preset, libmujoco-dev)" % a.mujoco,
              file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
