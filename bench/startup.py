#!/usr/bin/python3
"""Process start and a short run (issue 17's targets, docs/performance.md).

Usage: bench/startup.py [BUILD_DIR] [--runs N] [--problem NAME]
                        [--compare OTHER_BUILD_DIR]

1. Start: `BUILD_DIR/problems/NAME --help` (default pendulum) against an
   empty C++ program linked against SUNDIALS alone (CVODES and IDAS, with
   --no-as-needed so that both are really mapped; it maps libstdc++ like
   any C++ program), compiled here with c++ at -O2. The two are run in
   turn N times (default 200), so that they share the machine's load; the
   medians and their ratio come from this one run. Target: ratio <= 2.
   Also printed: the shared libraries each maps at start (ldd) and ld.so's
   own start-up time (LD_DEBUG=statistics, median of 21).
2. four_bar for 10 s: process wall time (median of N/10, at least 11, runs)
   and the loop drift max |Phi| and the energy balance residual from its
   JSON summary, with the defaults and with the two option sets
   docs/problems.md gives for a drift <= 1e-10 m.
   Target: drift <= 1e-10 m in <= 40 ms.
   With --compare, the same four_bar runs of OTHER_BUILD_DIR (say, a
   build of the commit before a change) interleaved with BUILD_DIR's,
   and the ratios of the medians.
3. The libraries a sparse run maps on top (the module loaded on first use:
   pendulum with --integrator idas --linear-solver klu, LD_DEBUG=files).

Wall time on a shared machine moves with the load; the ratios of
interleaved runs move much less.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# Loop drift <= 1e-10 m (docs/problems.md, four_bar): the default
# Baumgarte/Adams at tighter tolerances (accurate: energy balance ~1e-8 J),
# and projection at loose ones (drift at round-off, but the trajectory
# only as good as rtol 1e-5: energy balance ~2e-2 J).
FOUR_BAR_LOW_DRIFT = [["--rtol", "1e-11", "--atol", "1e-13"],
                      ["--formulation", "projection", "--rtol", "1e-5",
                       "--atol", "1e-7"]]
EMPTY_SOURCE = r"""
#include <cvodes/cvodes.h>
#include <idas/idas.h>
// Never taken: the references keep the calls (and the libraries) in.
int main(int argc, char**) {
  if (argc > 1000) {
    CVodeCreate(CV_BDF, nullptr);
    IDACreate(nullptr);
  }
  return 0;
}
"""


def build_empty(workdir):
    src = os.path.join(workdir, "empty.cpp")
    exe = os.path.join(workdir, "empty_sundials")
    with open(src, "w") as fh:
        fh.write(EMPTY_SOURCE)
    subprocess.run(["c++", "-O2", src, "-o", exe, "-Wl,--no-as-needed",
                    "-lsundials_cvodes", "-lsundials_idas"], check=True)
    return exe


def timed(cmd):
    """(wall, CPU) seconds of one process: CPU is its user + system time,
    which moves less than wall time with the load of a shared machine."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    w = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (status {status})")
    return w, usage.ru_utime + usage.ru_stime


def wall(cmd):
    return timed(cmd)[0]


def interleaved(cmds, runs):
    """Medians of (wall, CPU) of each command, run in turn `runs` times."""
    times = [[] for _ in cmds]
    for _ in range(runs):
        for k, c in enumerate(cmds):
            times[k].append(timed(c))
    return [(statistics.median(w for w, _ in t),
             statistics.median(c for _, c in t)) for t in times]


def mapped(exe):
    out = subprocess.run(["ldd", exe], capture_output=True, text=True,
                         check=True).stdout
    libs = [ln.split()[0] for ln in out.splitlines()
            if ".so" in ln and "linux-vdso" not in ln]
    return libs


def loader_ms(cmd, runs=21):
    """ld.so's 'total startup time in dynamic loader' (LD_DEBUG=statistics),
    converted from cycles to ms by the 'total' line's ratio when given;
    else the raw cycle count."""
    vals = []
    for _ in range(runs):
        r = subprocess.run(cmd, capture_output=True, text=True,
                           env=dict(os.environ, LD_DEBUG="statistics"))
        m = re.search(r"total startup time in dynamic loader:\s*([\d.]+)\s*"
                      r"(\w+)", r.stderr)
        if m:
            v = float(m.group(1))
            unit = m.group(2)
            vals.append(v / 1e6 if unit == "ns" else
                        v / 1e3 if unit == "us" else v)
    return statistics.median(vals) if vals else float("nan"), \
        (m.group(2) if vals and m else "")


def four_bar(exe, extra, runs, out):
    cmd = [exe, "--t-end", "10", "--quiet", "--output-dir", out] + extra
    ts = [timed(cmd) for _ in range(runs)]
    with open(os.path.join(out, "four_bar.json")) as fh:
        s = json.load(fh)
    return statistics.median(w for w, _ in ts), \
        statistics.median(c for _, c in ts), s["drift"]["position_max"], \
        s["energy"]["balance_residual_max"], s["stats"]["steps"], s["status"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--problem", default="pendulum")
    ap.add_argument("--compare", metavar="OTHER_BUILD")
    a = ap.parse_args()
    problems = os.path.join(a.build, "problems")
    exe = os.path.join(problems, a.problem)
    with tempfile.TemporaryDirectory() as tmp:
        empty = build_empty(tmp)
        for c in ([empty], [exe, "--help"]):  # warm the page cache
            for _ in range(5):
                wall(c)
        (t_empty, c_empty), (t_help, c_help) = interleaved(
            [[empty], [exe, "--help"]], a.runs)
        ratio = t_help / t_empty
        print(f"start ({a.runs} interleaved runs, medians of wall / CPU):")
        print(f"  empty C++ + SUNDIALS   {t_empty * 1e3:6.2f} / "
              f"{c_empty * 1e3:5.2f} ms  {len(mapped(empty))} shared "
              "libraries")
        libs = mapped(exe)
        label = f"{a.problem} --help"
        print(f"  {label:22s} {t_help * 1e3:6.2f} / {c_help * 1e3:5.2f} ms  "
              f"{len(libs)} shared libraries: "
              + " ".join(os.path.basename(x) for x in libs))
        print(f"  ratio {ratio:.2f} wall, {c_help / c_empty:.2f} CPU "
              f"(target <= 2: {'met' if ratio <= 2 else 'NOT met'})")
        le, unit = loader_ms([empty])
        lp, _ = loader_ms([exe, "--help"])
        if unit:
            print(f"  ld.so start-up (LD_DEBUG=statistics, median of 21): "
                  f"empty {le:.3g}, {a.problem} {lp:.3g} "
                  f"{'ms' if unit in ('ns', 'us') else unit}")

        # What a sparse run loads on first use.
        out = os.path.join(tmp, "klu")
        r = subprocess.run([exe, "--quiet", "--output-dir", out, "--t-end",
                            "0.1", "--integrator", "idas", "--linear-solver",
                            "klu"], capture_output=True, text=True,
                           env=dict(os.environ, LD_DEBUG="files"))
        dl = sorted({m.group(1) for m in re.finditer(
            r"file=(\S+) \[0\];\s+(?:dynamically loaded|needed) by",
            r.stderr)})
        print(f"  a sparse run (--integrator idas --linear-solver klu, exit "
              f"{r.returncode}) maps {len(dl)} shared libraries in all")

        n4 = max(11, a.runs // 10)
        fb = os.path.join(problems, "four_bar")
        print(f"four_bar --t-end 10 ({n4} runs, medians of process wall / "
              "CPU):")
        for extra in [[]] + FOUR_BAR_LOW_DRIFT:
            t, c, drift, energy, steps, status = four_bar(
                fb, extra, n4, os.path.join(tmp, "fb"))
            ok = drift <= 1e-10 and t <= 0.040
            name = " ".join(extra) or "(defaults)"
            print(f"  {name:50s} {t * 1e3:5.1f} / {c * 1e3:4.1f} ms  "
                  f"drift {drift:.1e} m  "
                  f"energy residual {energy:.1e} J  {steps} steps  {status}"
                  f"  (drift <= 1e-10 m in <= 40 ms: "
                  f"{'met' if ok else 'not met'})")
        if a.compare:
            other = os.path.join(a.compare, "problems", "four_bar")
            print(f"four_bar --t-end 10, {a.compare} against {a.build} "
                  f"({n4} interleaved runs, medians of process wall / CPU):")
            for extra in [[]] + FOUR_BAR_LOW_DRIFT:
                cmds = [[x, "--t-end", "10", "--quiet", "--output-dir",
                         os.path.join(tmp, d)] + extra
                        for x, d in ((other, "fb_other"), (fb, "fb"))]
                (wo, co), (wb, cb) = interleaved(cmds, n4)
                name = " ".join(extra) or "(defaults)"
                print(f"  {name:50s} {wo * 1e3:5.1f} / {co * 1e3:4.1f} ms -> "
                      f"{wb * 1e3:5.1f} / {cb * 1e3:4.1f} ms  ratio "
                      f"{wb / wo:.2f} wall, {cb / co:.2f} CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
