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
  Moreau-Jean at steps 2e-3 and 1e-4 s; the rocking block, Moreau-Jean
  with Coulomb friction at 2e-3 s).
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
    "bouncing_ball_contact_mj": ("bouncing_ball_contact",
                                 ["--integrator", "moreau-jean", "--step",
                                  "0.002", "--output-step", "0.002"]),
    "bouncing_ball": ("bouncing_ball", []),
    "rocking_block": ("rocking_block", ["--t-end", "3"]),
    "rocking_block_1e-6": ("rocking_block", ["--t-end", "3"] + LOOSE),
    "rocking_block_mj": ("rocking_block",
                         ["--t-end", "3", "--integrator", "moreau-jean",
                          "--step", "0.002", "--output-step", "0.002"]),
    "block_on_incline": ("block_on_incline", []),
    "block_on_incline_mj": ("block_on_incline",
                            ["--integrator", "moreau-jean", "--step",
                             "0.002"]),
}
# label: contact_siconos arguments
SICONOS = {
    "event-driven tol 1e-12": ["ed", "--tol", "1e-12"],
    "event-driven tol 1e-10": ["ed", "--tol", "1e-10"],
    "Moreau-Jean h 2e-3": ["mj", "--step", "0.002"],
    "Moreau-Jean h 1e-4": ["mj", "--step", "1e-4"],
}
# Housner's block in Siconos: Moreau-Jean with NewtonImpactFrictionNSL (its
# event-driven scheme is frictionless; Housner's impact needs the struck
# corner to stick).
SICONOS_ROCKING = {
    "Moreau-Jean h 2e-3": ["rocking", "--t-end", "3", "--step", "0.002"],
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
            for label, extra in SICONOS_ROCKING.items():
                out, t = timed([args.siconos] + extra, check=False)
                cpu.setdefault("siconos:rocking:" + label, []).append(t)
                lines = [x for x in out.splitlines() if x.startswith("{")]
                siconos.setdefault("rocking:" + label, []).append(
                    json.loads(lines[-1]))
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
                         ("bouncing_ball_contact_mj",
                          "Daedalus Moreau-Jean h 2e-3"),
                         ("bouncing_ball", "Daedalus reset (6 s)")]:
        r = d[label]
        e1 = "0.9"
        if "time_stepping" in r.get("contact", {}):
            # No events: an impact is a sample (every step) whose velocity
            # turned from falling to rising.
            imp, ratio, rows = [], [], r["rows"]
            for a, b in zip(rows, rows[1:]):
                if a["v_y"] < 0 < b["v_y"]:
                    imp.append(b["t"])
                    ratio.append(-b["v_y"] / a["v_y"])
            rest = None
            pen = r["contact"]["time_stepping"]["penetration_max"]
            pen = pen["value"] if isinstance(pen, dict) else pen
            e1 = "%.4f" % ratio[0]
        elif "contact" in r:
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
            "rest": "%.10f (%s)" % (rest, err(rest, T_INF)) if rest else
            ("last impact %.3f (%s)" % (imp[-1], err(imp[-1], T_INF))
             if "contact" in r else "-"),
            "e": "%.4f" % statistics.mean(ratio[:10])
            if "time_stepping" in r.get("contact", {}) else
            "0.9 (Newton's law)" if "contact" in r else "0.9 (reset)",
            "e1": e1, "pen": "%.1e" % pen,
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


def crossings(rows, key):
    """Zero crossings of rows[key] (linear interpolation) and the largest
    |key| before each and after the last: a fixed-step run's impacts and
    amplitudes, measured as contact_mujoco measures MuJoCo's."""
    times, amps, amp = [], [], abs(rows[0][key])
    for a, b in zip(rows, rows[1:]):
        if (a[key] > 0 >= b[key]) or (a[key] < 0 <= b[key]):
            times.append(a["t"] + (b["t"] - a["t"]) * a[key] /
                         (a[key] - b[key]))
            amps.append(amp)
            amp = 0.0
        amp = max(amp, abs(b[key]))
    return times, amps + [amp]


def amplitude_ratios(amps, alpha):
    """w at theta = 0 from the amplitudes on either side of an impact:
    w^2 is proportional to cos(alpha - a) - cos(alpha)."""
    out = []
    for a0, a1 in zip(amps, amps[1:]):
        e0 = math.cos(alpha - a0) - math.cos(alpha)
        e1 = math.cos(alpha - a1) - math.cos(alpha)
        if e0 > 0 and e1 > 0:
            out.append(math.sqrt(e1 / e0))
    return out


ROCK_TIMES = [0.5, 1, 2, 3]


def report_rocking(d, mj, sic, cpu, loop):
    cf = housner()
    alpha = cf["alpha"]
    cols = []
    for label, title in [("rocking_block", "Daedalus"),
                         ("rocking_block_1e-6", "Daedalus rtol 1e-6"),
                         ("rocking_block_mj", "Daedalus Moreau-Jean h 2e-3")]:
        r = d[label]
        if "time_stepping" in r["contact"]:
            imp, amps = crossings(r["rows"], "theta")
            ratio = ", ".join("%.3f" % x
                              for x in amplitude_ratios(amps, alpha)[:5])
            rest = "last crossing %.3f" % imp[-1]
            pen = r["contact"]["time_stepping"].get("penetration_max")
            pen = "%.1e" % pen["value"] if isinstance(pen, dict) else \
                ("%.1e" % pen if pen is not None else "-")
        else:
            ev = [e for e in r["contact"]["events"] if e["kind"] == "impact"]
            imp = [e["t"] for e in ev]
            # (u_R+ - u_L+) / (u_R- - u_L-): w at theta = 0
            ratio = ", ".join("%.10f" % ((e["u_plus"][1] - e["u_plus"][0]) /
                                         (e["u_minus"][1] - e["u_minus"][0]))
                              for e in ev[:5])
            rest = "%.7f (%s)" % (r["contact"]["t_rest"],
                                  err(r["contact"]["t_rest"], cf["t_inf"]))
            pen = "%.1e" % max(
                0.0, -r["contact"]["certificate"]["min_open_gap"]["value"],
                r["drift"]["position_max"])
        cols.append({
            "title": title, "impacts": imp, "ratio": ratio, "rest": rest,
            "pen": pen,
            "energy": [at(r["rows"], t, "energy") for t in ROCK_TIMES],
            "steps": str(r["stats"]["steps"]), "cpu": cpu[label],
            "loop": None})
    for v in MUJOCO["rocking"]:
        m = mj[("rocking", v)]
        cols.append({
            "title": "MuJoCo " + v, "impacts": m["theta_zero_crossings"],
            "ratio": ", ".join("%.3f" % x for x in amplitude_ratios(
                m["amplitudes"], alpha)[:5]),
            "rest": "last crossing %.3f" % m["theta_zero_crossings"][-1],
            "pen": "%.2e" % m["max_penetration"], "energy": m["energy"],
            "steps": str(m["steps"]), "cpu": cpu["mujoco:rocking:" + v],
            "loop": loop[("rocking", v)]})
    for key, m in sic.items():
        if not key.startswith("rocking:"):
            continue
        label = key[len("rocking:"):]
        cr = m["theta_zero_crossings"]
        cols.append({
            "title": "Siconos " + label, "impacts": cr,
            "ratio": ", ".join("%.3f" % x for x in amplitude_ratios(
                m["amplitudes"], alpha)[:5]),
            "rest": ("last crossing %.3f" % cr[-1]) if m["ok"] else
            "fails: " + m["error"],
            "pen": "%.2e" % m["max_penetration"], "energy": m["energy"],
            "steps": str(m["steps"]), "cpu": cpu["siconos:" + key],
            "loop": loop[("siconos", key)]})
    ks = [1, 2, 3, 5, 8, 10, 20, 40]
    header = ["run"] + ["t_%d" % k for k in ks] + ["rest"]
    rows = [["closed form [s]"] + ["%.10f" % cf["times"][k - 1] for k in ks] +
            ["%.7f" % cf["t_inf"]]]
    for c in cols:
        rows.append([c["title"]] +
                    [err(c["impacts"][k - 1], cf["times"][k - 1])
                     if len(c["impacts"]) >= k else "-" for k in ks] +
                    [c["rest"]])
    table("Rocking block: impact times, error against the closed form "
          "(b = 0.1, h = 0.3, theta0 = 0.1, 3 s; fixed-step runs: theta's "
          "zero crossings)", header, rows)

    exact_e = []
    for t in ROCK_TIMES:
        k = sum(1 for x in cf["times"] if x <= t)
        exact_e.append(cf["energy"][k] if t < cf["t_inf"] else G * 0.3)
    p = cols[0]["cpu"]
    header = ["run", "impacts", "w+/w- (first 5)", "max penetration [m]"] + \
        ["E(%g s) [J]" % t for t in ROCK_TIMES] + \
        ["steps", "process [ms]", "loop [ms]", "process / Daedalus"]
    rows = [["closed form", "inf (accumulate)", "%.6f" % cf["ratio"], "0"] +
            ["%.6f" % x for x in exact_e] + ["-"] * 4]
    for c in cols:
        rows.append([c["title"], str(len(c["impacts"])), c["ratio"],
                     c["pen"]] + ["%.6f" % x for x in c["energy"]] +
                    [c["steps"], ms(c["cpu"]),
                     ms(c["loop"]) if c["loop"] is not None else "-",
                     "%.2f" % (c["cpu"] / p)])
    table("Rocking block: ratio, penetration, energy, cost (fixed-step "
          "runs: the ratio from the amplitudes on either side of a "
          "crossing; loop: MuJoCo's and Siconos's stepping alone)", header,
          rows)


def report_incline(d, mj, cpu, loop):
    times = [1, 2, 5, 10]
    cols = []
    for label, title in [("block_on_incline", "Daedalus"),
                         ("block_on_incline_mj",
                          "Daedalus Moreau-Jean h 2e-3")]:
        r = d[label]
        disp = [at(r["rows"], t, "s") for t in times]
        ts = r["contact"].get("time_stepping", {})
        pen = ts.get("penetration_max", r["drift"]["position_max"])
        if isinstance(pen, dict):
            pen = pen["value"]
        cols.append({"title": title, "disp": ["%.1e" % x for x in disp],
                     "creep": "%.1e" % (at(r["rows"], 10, "s") -
                                        at(r["rows"], 9, "s")),
                     "pen": "%.1e" % pen, "steps": str(r["stats"]["steps"]),
                     "cpu": cpu[label], "loop": None})
    for v in MUJOCO["incline"]:
        m = mj[("incline", v)]
        x = dict(zip(m["times"], m["displacement_down_slope"]))
        cols.append({"title": "MuJoCo " + v,
                     "disp": ["%.3e" % x[t] for t in times],
                     "creep": "%.3e" % (x[10] - x[9]),
                     "pen": "%.2e" % m["max_penetration"],
                     "steps": str(m["steps"]),
                     "cpu": cpu["mujoco:incline:" + v],
                     "loop": loop[("incline", v)]})
    p = cols[0]["cpu"]
    header = ["run"] + ["s(%g s) [m]" % t for t in times] + \
        ["creep 9-10 s [m/s]", "max penetration [m]", "steps",
         "process [ms]", "loop [ms]", "process / Daedalus"]
    rows = [[c["title"]] + c["disp"] +
            [c["creep"], c["pen"], c["steps"], ms(c["cpu"]),
             ms(c["loop"]) if c["loop"] is not None else "-",
             "%.2f" % (c["cpu"] / p)] for c in cols]
    table("Block on an incline below the friction angle (alpha = 0.3, "
          "mu_s = 0.4, 10 s): displacement down the slope", header, rows)


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
    report_ball(d, mj, {k: v for k, v in sic.items()
                        if not k.startswith("rocking:")}, cpu, loop)
    report_rocking(d, mj, sic, cpu, loop)
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
