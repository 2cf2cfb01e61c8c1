#!/usr/bin/python3
"""Contact side by side: Daedalus's event-driven contact against MuJoCo
2.2.2's soft contact (issues 36 and 37; docs/contact.md, "Side by side
with MuJoCo").

    bench/contact_side_by_side.py [--bin build/problems]
        [--mujoco build-bench/bench/contact_mujoco]
        [--siconos build-bench/bench/contact_siconos] [--repeats N]
        [--json OUT.json]

Runs, in one process and interleaved N times (default 5):
  bouncing_ball_contact (10 s: every impact, rest at the accumulation
  point), bouncing_ball (its default 6 s, event and reset map),
  rocking_block --t-end 3, block_on_incline (10 s), from --bin, each with
  --quiet --output-dir TMP, reading TMP/<name>.json and .csv; and
  contact_mujoco (bench/contact_mujoco.cpp) once per case and variant;
  and, when it was built, contact_siconos (bench/contact_siconos.cpp: the
  bouncing ball, event-driven at LSODAR tolerances 1e-12 and 1e-10,
  Moreau-Jean at steps 2e-3 and 1e-4 s).
Process times are getrusage(RUSAGE_CHILDREN) deltas (user + system) around
each child: medians of the N runs. MuJoCo's in-loop CPU time (stepping
only, no model compile) is its own report.

Prints one table per case: impact times against the closed forms
(bouncing ball: t_k = t1 (1 + 2 (e + ... + e^(k-1))), t_inf = t1 (1 + e) /
(1 - e); rocking block: Housner's ratio and the exact rocking motion about
a corner, integrated here by Gauss-Legendre quadrature), penetration,
energy at given times, displacement after 10 s, process time and the
ratios.
"""
import argparse
import csv
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile

G = 9.81

# ---- closed forms


def ball_impact_time(k, h0=1.0, e=0.9, g=G):
    """t_k of a ball dropped from rest at h0 with restitution e."""
    t1 = math.sqrt(2.0 * h0 / g)
    return t1 * (1.0 + 2.0 * sum(e**j for j in range(1, k)))


def ball_energy(t, h0=1.0, e=0.9, g=G):
    """m g h0 e^(2k) after the k impacts before t (m = 1); 0 at rest."""
    t1 = math.sqrt(2.0 * h0 / g)
    if t >= t1 * (1.0 + e) / (1.0 - e):
        return 0.0
    k = 0
    while ball_impact_time(k + 1, h0, e, g) <= t:
        k += 1
    return g * h0 * e ** (2 * k)


def gauss_legendre(n):
    """Nodes and weights on [-1, 1] (Newton on P_n)."""
    nodes, weights = [], []
    for i in range(1, n + 1):
        x = math.cos(math.pi * (i - 0.25) / (n + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1.0)
            dx = p1 / dp
            x -= dx
            if abs(dx) < 1e-16:
                break
        nodes.append(x)
        weights.append(2.0 / ((1.0 - x * x) * dp * dp))
    return nodes, weights


GL = gauss_legendre(48)


def housner(b=0.1, h=0.3, theta0=0.1, g=G, count=80):
    """Impact times, angular-velocity ratio and amplitudes of Housner's
    block (m = 1, I = (b^2 + h^2) / 3) released from rest at theta0 on a
    corner: rigid rocking about a corner between impacts, w+ = r w- at
    each. The quarter period from amplitude a to theta = 0 is the integral
    of dphi / w(phi), w^2 = 2 p^2 (cos(alpha - a) - cos(alpha - phi)),
    p^2 = g R / (4 R^2 / 3); with a - phi = s^2 the integrand is smooth
    (48-point Gauss-Legendre)."""
    R = math.hypot(b, h)
    alpha = math.atan2(b, h)
    p2 = g * R / (4.0 * R * R / 3.0)
    r = 1.0 - 1.5 * math.sin(alpha) ** 2

    def quarter(a):
        top = math.sqrt(a)
        total = 0.0
        for x, w in zip(*GL):
            s = 0.5 * top * (x + 1.0)
            phi = a - s * s
            # cos(alpha - a) - cos(alpha - phi), without cancellation
            dc = 2.0 * math.sin(alpha - 0.5 * (a + phi)) * math.sin(0.5 * s * s)
            total += w * 2.0 * s / math.sqrt(2.0 * p2 * dc)
        return 0.5 * top * total

    def lift(a):
        # cos(alpha - a) - cos(alpha), the energy above standing / (g R)
        return 2.0 * math.sin(alpha - 0.5 * a) * math.sin(0.5 * a)

    times, amps, a, t = [], [theta0], theta0, quarter(theta0)
    for _ in range(count):
        times.append(t)
        target = r * r * lift(a)  # the energy after the impact
        a = target / math.sin(alpha)
        for _ in range(50):  # Newton: lift'(a) = sin(alpha - a)
            da = (lift(a) - target) / math.sin(alpha - a)
            a -= da
            if abs(da) <= 1e-16 * a:
                break
        amps.append(a)
        t += 2.0 * quarter(a)
    energy = [g * R * math.cos(alpha - x) for x in amps]  # between impacts
    # The rest of the series: for small amplitudes a' = r^2 a and the
    # quarter period goes as sqrt(a), so the remaining flights are
    # geometric with ratio r (the tail's relative error is O(a)).
    t_inf = times[-1] + 2.0 * quarter(amps[-1]) / (1.0 - r)
    return {"times": times, "ratio": r, "amplitudes": amps, "energy": energy,
            "alpha": alpha, "R": R, "t_inf": t_inf}


# ---- running


def timed(cmd, check=True):
    """Runs cmd; returns (stdout, process seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=check, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [{k: float(v) for k, v in row.items()} for row in rows]


def at(rows, t, key):
    row = min(rows, key=lambda r: abs(r["t"] - t))
    return row[key] if abs(row["t"] - t) < 1e-9 else float("nan")


LOOSE = ["--rtol", "1e-6", "--atol", "1e-8"]
# label: (executable, arguments)
DAEDALUS = {
    "bouncing_ball_contact": ("bouncing_ball_contact", []),
    "bouncing_ball_contact_1e-6": ("bouncing_ball_contact", LOOSE),
    "bouncing_ball": ("bouncing_ball", []),
    "rocking_block": ("rocking_block", ["--t-end", "3"]),
    "rocking_block_1e-6": ("rocking_block", ["--t-end", "3"] + LOOSE),
    "block_on_incline": ("block_on_incline", []),
}
# label: contact_siconos arguments
SICONOS = {
    "event-driven tol 1e-12": ["ed", "--tol", "1e-12"],
    "event-driven tol 1e-10": ["ed", "--tol", "1e-10"],
    "Moreau-Jean h 2e-3": ["mj", "--step", "0.002"],
    "Moreau-Jean h 1e-4": ["mj", "--step", "1e-4"],
}
MUJOCO = {
    "ball": ["direct_w50", "direct_w150", "direct_w500", "default"],
    "rocking": ["default", "elliptic"],
    "incline": ["default", "elliptic", "elliptic_impratio10", "noslip10",
                "elliptic_noslip10"],
}


def run_all(args):
    tmp = tempfile.mkdtemp(prefix="contact_sbs_")
    cpu = {}
    daedalus, mujoco, siconos = {}, {}, {}
    for rep in range(args.repeats):
        for label, (name, extra) in DAEDALUS.items():
            out = os.path.join(tmp, label)
            os.makedirs(out, exist_ok=True)
            exe = os.path.join(args.bin, name)
            _, t = timed([exe, "--quiet", "--output-dir", out] + extra)
            cpu.setdefault(label, []).append(t)
            if rep == 0:
                with open(os.path.join(out, name + ".json")) as f:
                    daedalus[label] = json.load(f)
                daedalus[label]["rows"] = read_csv(
                    os.path.join(out, name + ".csv"))
        for case, variants in MUJOCO.items():
            for v in variants:
                out, t = timed([args.mujoco, case, "--variant", v])
                cpu.setdefault("mujoco:%s:%s" % (case, v), []).append(t)
                line = json.loads(out.strip().splitlines()[-1])
                mujoco.setdefault((case, v), []).append(line)
        if args.siconos:
            for label, extra in SICONOS.items():
                out, t = timed([args.siconos] + extra, check=False)
                cpu.setdefault("siconos:" + label, []).append(t)
                lines = [x for x in out.splitlines() if x.startswith("{")]
                siconos.setdefault(label, []).append(json.loads(lines[-1]))
    med = {k: statistics.median(v) for k, v in cpu.items()}
    loop = {k: statistics.median(x["cpu_s"] for x in v)
            for k, v in mujoco.items()}
    mujoco = {k: v[0] for k, v in mujoco.items()}
    for k, v in siconos.items():
        loop[("siconos", k)] = statistics.median(x["cpu_s"] for x in v)
    siconos = {k: v[0] for k, v in siconos.items()}
    return daedalus, mujoco, siconos, med, loop


def ms(x):
    return "%.2f" % (1e3 * x)


def fmt(x, spec="%.6f"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) \
        else spec % x


def table(title, header, rows):
    print("\n## " + title + "\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def err(x, exact):
    dx = x - exact
    return "%+.1e" % dx if abs(dx) < 1e-3 else "%+.4f" % dx


ENERGY_TIMES = [1, 2, 4, 6, 8, 10]


def ball_columns(d, mj, sic, cpu, loop):
    """One dict per engine and setting: impacts, rest, restitution,
    penetration, energy at ENERGY_TIMES, steps, process and loop times."""
    cols = []
    for label, title in [("bouncing_ball_contact", "Daedalus contact"),
                         ("bouncing_ball_contact_1e-6",
                          "Daedalus contact rtol 1e-6"),
                         ("bouncing_ball", "Daedalus reset (6 s)")]:
        r = d[label]
        if "contact" in r:
            imp = [e["t"] for e in r["contact"]["events"]
                   if e["kind"] == "impact"]
            rest = r["contact"]["t_rest"]
            pen = max(0.0, -r["contact"]["certificate"]["min_open_gap"]
                      ["value"])
        else:
            imp = [e["t"] for e in r["events"] if e["name"] == "impact"]
            rest, pen = None, 0.0
        pen = max(pen, -min(x["y"] for x in r["rows"]))
        cols.append({
            "title": title, "impacts": imp,
            "rest": "%.10f (%s)" % (rest, err(rest, T_INF)) if rest else "-",
            "e": "0.9 (Newton's law)" if "contact" in r else "0.9 (reset)",
            "e1": "0.9", "pen": "%.1e" % pen,
            "energy": [at(r["rows"], t, "energy") for t in ENERGY_TIMES],
            "residual": "%.1e" % r["energy"]["balance_residual_max"],
            "steps": str(r["stats"]["steps"]), "cpu": cpu[label],
            "loop": None})
    for v in MUJOCO["ball"]:
        m = mj[("ball", v)]
        ea = m["restitution_apex"][:10]
        cols.append({
            "title": "MuJoCo " + v, "impacts": m["touch_times"],
            "rest": "still bouncing at %g s (last leaves %.3f)" %
            (m["t_end"], m["leave_times"][-1]) if m["leave_times"] else
            "never leaves (stuck at the first contact)",
            "e": "%.4f (%.4f-%.4f)" % (statistics.mean(ea), min(ea), max(ea))
            if ea else "0 (no rebound)",
            "e1": "%.4f" % m["restitution_velocity"][0]
            if m["restitution_velocity"] else "-",
            "pen": "%.2e" % m["max_penetration"], "energy": m["energy"],
            "residual": "-", "steps": str(m["steps"]),
            "cpu": cpu["mujoco:ball:" + v], "loop": loop[("ball", v)]})
    for key, m in sic.items():
        ev = m["impact_times"]
        ok = m["ok"]
        rv = m["restitution_velocity"]
        cols.append({
            "title": "Siconos " + key, "impacts": ev,
            "rest": ("last impact %.10f (%s)" % (ev[-1], err(ev[-1], T_INF))
                     if ok else "fails: " + m["error"]),
            "e": "%.4f" % statistics.mean(rv[:10]) if rv else "-",
            "e1": "%.4f" % rv[0] if rv else "-",
            "pen": "%.1e" % m["max_penetration"], "energy": m["energy"],
            "residual": "-", "steps": str(m["steps"]),
            "cpu": cpu["siconos:" + key], "loop": loop[("siconos", key)]})
    return cols


T_INF = math.sqrt(2.0 / G) * 1.9 / 0.1


def report_ball(d, mj, sic, cpu, loop):
    cols = ball_columns(d, mj, sic, cpu, loop)
    ks = [1, 2, 5, 10, 20, 44, 60, 100]
    header = ["run"] + ["t_%d" % k for k in ks] + ["rest"]
    rows = [["closed form [s]"] + ["%.10f" % ball_impact_time(k) for k in ks] +
            ["%.10f" % T_INF]]
    for c in cols:
        rows.append([c["title"]] +
                    [err(c["impacts"][k - 1], ball_impact_time(k))
                     if len(c["impacts"]) >= k else "-" for k in ks] +
                    [c["rest"]])
    table("Bouncing ball: impact times, error against the closed form "
          "(h0 = 1 m, e = 0.9, g = 9.81, 10 s)", header, rows)

    pbc = cols[0]["cpu"]
    header = ["run", "impacts", "restitution", "first rebound",
              "max penetration [m]"] + \
        ["E(%g s) [J]" % t for t in ENERGY_TIMES] + \
        ["steps", "process [ms]", "loop [ms]", "process / Daedalus"]
    rows = [["closed form", "inf (44 before 8.4914 s)", "0.9", "0.9", "0"] +
            ["%.6f" % ball_energy(t) for t in ENERGY_TIMES] +
            ["-"] * 4]
    for c in cols:
        rows.append([c["title"], str(len(c["impacts"])), c["e"], c["e1"],
                     c["pen"]] +
                    [("%.6f" % c["energy"][i]) if i < len(c["energy"]) and
                     not math.isnan(c["energy"][i]) else "-"
                     for i in range(len(ENERGY_TIMES))] +
                    [c["steps"], ms(c["cpu"]),
                     ms(c["loop"]) if c["loop"] is not None else "-",
                     "%.2f" % (c["cpu"] / pbc)])
    table("Bouncing ball: restitution, penetration, energy, cost "
          "(restitution: MuJoCo sqrt of successive apex heights, mean and "
          "range of the first 10; the others post / pre velocity. MuJoCo's "
          "energy in contact includes d k r^2 / 2. Steps: Siconos "
          "event-driven counts events. Loop: MuJoCo's and Siconos's "
          "stepping loop alone)", header, rows)


def report_rocking(d, mj, cpu, loop):
    rb, rl = d["rocking_block"], d["rocking_block_1e-6"]
    cf = housner()

    def impacts(run):
        return [e for e in run["contact"]["events"] if e["kind"] == "impact"]
    imp, imp_l = impacts(rb), impacts(rl)
    vs = MUJOCO["rocking"]
    header = ["impact k", "closed form [s]", "Daedalus (error)",
              "Daedalus 1e-6 (error)"] + \
        ["MuJoCo %s (error)" % v for v in vs]
    rows = []
    for k in [1, 2, 3, 4, 5, 6, 8, 10, 15, 20]:
        exact = cf["times"][k - 1]
        row = ["%d" % k, "%.10f" % exact] + [
            "%.10f (%.1e)" % (i[k - 1]["t"], i[k - 1]["t"] - exact)
            if len(i) >= k else "-" for i in (imp, imp_l)]
        for v in vs:
            ts = mj[("rocking", v)]["theta_zero_crossings"]
            row.append("%.4f (%+.4f)" % (ts[k - 1], ts[k - 1] - exact)
                       if len(ts) >= k else "-")
        rows.append(row)
    table("Rocking block: impact times (b = 0.1, h = 0.3, theta0 = 0.1; "
          "MuJoCo: theta's zero crossings)", header, rows)

    def daedalus_ratio(e):
        um, up = e["u_minus"], e["u_plus"]
        return (up[1] - up[0]) / (um[1] - um[0])

    alpha = cf["alpha"]

    def mj_ratios(m):
        # w at theta = 0 from the amplitudes on either side: w^2 is
        # proportional to cos(alpha - a) - cos(alpha).
        a = m["amplitudes"]
        out = []
        for k in range(len(a) - 1):
            e0 = math.cos(alpha - a[k]) - math.cos(alpha)
            e1 = math.cos(alpha - a[k + 1]) - math.cos(alpha)
            if e0 > 0 and e1 > 0:
                out.append(math.sqrt(e1 / e0))
        return out

    header = ["quantity", "closed form", "Daedalus", "Daedalus 1e-6"] + \
        ["MuJoCo " + v for v in vs]
    rows = [["w+/w- (first 5 impacts)", "%.6f" % cf["ratio"]] +
            [", ".join("%.10f" % daedalus_ratio(e) for e in i[:5])
             for i in (imp, imp_l)] +
            [", ".join("%.3f" % x for x in mj_ratios(mj[("rocking", v)])[:5])
             for v in vs]]
    rows.append(["impacts before rest", "inf (accumulate)", str(len(imp)),
                 str(len(imp_l))] +
                [str(len(mj[("rocking", v)]["theta_zero_crossings"]))
                 for v in vs])
    rows.append(["at rest from [s]", "%.7f" % cf["t_inf"]] +
                ["%.7f" % r["contact"]["t_rest"] for r in (rb, rl)] +
                ["last crossing %.3f" %
                 mj[("rocking", v)]["theta_zero_crossings"][-1] for v in vs])
    def pen(r):
        return "%.1e" % max(
            0.0, -r["contact"]["certificate"]["min_open_gap"]["value"],
            r["drift"]["position_max"])
    rows.append(["max penetration [m]", "0", pen(rb), pen(rl)] +
                ["%.2e" % mj[("rocking", v)]["max_penetration"] for v in vs])
    m0 = mj[("rocking", vs[0])]
    for i, t in enumerate(m0["energy_times"]):
        k = sum(1 for x in cf["times"] if x <= t)
        exact = cf["energy"][k] if t < cf["t_inf"] else G * 0.3
        rows.append(["energy at %g s [J]" % t, "%.6f" % exact,
                     "%.6f" % at(rb["rows"], t, "energy"),
                     "%.6f" % at(rl["rows"], t, "energy")] +
                    ["%.6f" % mj[("rocking", v)]["energy"][i] for v in vs])
    rows.append(["energy residual (Daedalus) [J]", "0"] +
                ["%.1e" % r["energy"]["balance_residual_max"]
                 for r in (rb, rl)] + ["-"] * len(vs))
    rows.append(["steps", "-"] + [str(r["stats"]["steps"]) for r in (rb, rl)] +
                [str(mj[("rocking", v)]["steps"]) for v in vs])
    p = cpu["rocking_block"]
    rows.append(["process time [ms] (median)", "-", ms(p),
                 ms(cpu["rocking_block_1e-6"])] +
                [ms(cpu["mujoco:rocking:" + v]) for v in vs])
    rows.append(["MuJoCo stepping only [ms]", "-", "-", "-"] +
                [ms(loop[("rocking", v)]) for v in vs])
    rows.append(["process time / Daedalus's", "-", "1",
                 "%.2f" % (cpu["rocking_block_1e-6"] / p)] +
                ["%.2f" % (cpu["mujoco:rocking:" + v] / p) for v in vs])
    table("Rocking block: ratio, rest, penetration, energy, cost (3 s)",
          header, rows)


def report_incline(d, mj, cpu, loop):
    bi = d["block_on_incline"]
    vs = MUJOCO["incline"]
    header = ["quantity", "Daedalus"] + ["MuJoCo " + v for v in vs]
    rows = []
    m0 = mj[("incline", vs[0])]
    for i, t in enumerate(m0["times"]):
        if t < 1:
            continue
        rows.append(["displacement down the slope at %g s [m]" % t,
                     "%.1e" % at(bi["rows"], t, "s")] +
                    ["%.3e" % mj[("incline", v)]["displacement_down_slope"][i]
                     for v in vs])
    i9, i10 = m0["times"].index(9), m0["times"].index(10)
    rows.append(["creep 9-10 s [m/s]",
                 "%.1e" % (at(bi["rows"], 10, "s") - at(bi["rows"], 9, "s"))] +
                ["%.3e" % (mj[("incline", v)]["displacement_down_slope"][i10] -
                           mj[("incline", v)]["displacement_down_slope"][i9])
                 for v in vs])
    rows.append(["max penetration [m]", "%.1e" % bi["drift"]["position_max"]] +
                ["%.2e" % mj[("incline", v)]["max_penetration"] for v in vs])
    rows.append(["steps", str(bi["stats"]["steps"])] +
                [str(mj[("incline", v)]["steps"]) for v in vs])
    p = cpu["block_on_incline"]
    rows.append(["process time [ms] (median)", ms(p)] +
                [ms(cpu["mujoco:incline:" + v]) for v in vs])
    rows.append(["MuJoCo stepping only [ms]", "-"] +
                [ms(loop[("incline", v)]) for v in vs])
    rows.append(["process time / Daedalus's", "1"] +
                ["%.2f" % (cpu["mujoco:incline:" + v] / p) for v in vs])
    table("Block on an incline below the friction angle (alpha = 0.3, "
          "mu = 0.4; 10 s)", header, rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/problems")
    ap.add_argument("--mujoco", default="build-bench/bench/contact_mujoco")
    ap.add_argument("--siconos", default="build-bench/bench/contact_siconos",
                    help="the Siconos program; skipped when absent")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="also write every result here")
    args = ap.parse_args()
    exes = {os.path.join(args.bin, n) for n, _ in DAEDALUS.values()}
    for exe in sorted(exes) + [args.mujoco]:
        if not os.access(exe, os.X_OK):
            sys.exit("contact_side_by_side: no executable %s (build it, or "
                     "give --bin / --mujoco)" % exe)
    with open("/proc/loadavg") as f:
        load0 = " ".join(f.read().split()[:3])
    if not os.access(args.siconos, os.X_OK):
        print("(no %s: Siconos left out)" % args.siconos)
        args.siconos = None
    d, mj, sic, cpu, loop = run_all(args)
    with open("/proc/loadavg") as f:
        load1 = " ".join(f.read().split()[:3])
    print("contact side by side: %d interleaved runs; load average %s "
          "before, %s after" % (args.repeats, load0, load1))
    report_ball(d, mj, sic, cpu, loop)
    report_rocking(d, mj, cpu, loop)
    report_incline(d, mj, cpu, loop)
    if args.json:
        for v in d.values():
            v.pop("rows", None)
        with open(args.json, "w") as f:
            json.dump({"daedalus": d,
                       "mujoco": {"%s:%s" % k: v for k, v in mj.items()},
                       "siconos": sic,
                       "process_cpu_s": cpu,
                       "mujoco_loop_cpu_s": {"%s:%s" % k: v
                                             for k, v in loop.items()}},
                      f, indent=1)


if __name__ == "__main__":
    main()
