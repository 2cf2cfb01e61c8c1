#!/usr/bin/python3
"""Sizes and magnitudes refused at the start (issue 40).

Each case runs a problem executable under an address-space limit of
4 GB (so that the outcome does not depend on the machine's memory) and
must exit 2 within 10 s (times --timeout-scale) with the cause and the
fix in its message, creating no output folder:

- sparse-1000: chain_reduced --bodies 1000 --kkt qr put the 1000-link
  chain on the sparse evaluator, whose mass-matrix pattern (n^3 / 3
  entries, about 12 GB) ended in std::bad_alloc; refused with the
  estimate and --dynamics recursive;
- urdf-energy-1000: urdf --dynamics energy on a 1000-link chain: the same
  (it printed std::bad_alloc and the usage text). The chain's joints have
  limits, which are contacts since issue 36 and put a run on the dense
  evaluator (--kkt auto), so the case runs with --no-joint-limits to reach
  the sparse evaluator's refusal;
- urdf-energy-1000-limits: the same chain with its 2000 limits, on the
  dense evaluator: it ran for minutes without a word (O(nv) second-order
  sweeps of an O(nv^2) energy per evaluation); refused with the cost
  estimate and --dynamics recursive;
- urdf-recursive-1500-limits: urdf (the recursive form) on a 1500-link
  chain with its 3000 limits: the limits put it on the dense KKT solve
  (3e10 operations, about 5 s, per evaluation), and 100 MJCF humanoids
  the same way ran for hours without a word (fuzz_edges.py --surface
  mjcf, seed 46, run 446); refused with the estimate and
  --no-joint-limits;
- urdf-torque: urdf --param tau_joint1=1e20 on arm7 collapsed the step
  at t = 0 and hung; the URDF's effort limit (176 N m) bounds it.

Control cases run under the same limit and must finish: chain_reduced
--bodies 1000 (recursive, dense), and spheres_in_box --spheres 100 under
moreau-jean (5450 contact rows, refused by the dense KKT estimate above
although the scheme never factors that system: it solves the active
contacts' cone problem), two steps.

Usage: sizes.py --bin BUILD/problems [--timeout-scale K] [--only NAME]
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

LIMIT = 4 << 30
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "problems", "data")


def chain_urdf(path, n):
    parts = ['<?xml version="1.0"?>', f'<robot name="chain{n}">',
             '<link name="base"/>']
    for i in range(n):
        parts.append(
            f'<link name="l{i}"><inertial><origin xyz="0 0 -0.05"/>'
            '<mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0" '
            'iyy="1e-4" iyz="0" izz="1e-5"/></inertial></link>')
        parent = "base" if i == 0 else f"l{i - 1}"
        off = "0 0 0" if i == 0 else "0 0 -0.1"
        parts.append(
            f'<joint name="j{i}" type="revolute"><parent link="{parent}"/>'
            f'<child link="l{i}"/><origin xyz="{off}"/><axis xyz="1 0 0"/>'
            '<limit effort="10" lower="-3" upper="3" velocity="10"/></joint>')
    parts.append("</robot>")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(parts) + "\n")


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


CASES = {
    "sparse-1000": (
        "chain_reduced", ["--bodies", "1000", "--kkt", "qr"], 2,
        ["the sparse evaluator", "would need about", "GB",
         "--dynamics recursive"]),
    "urdf-energy-1000": (
        "urdf", ["--model", "{tmp}/chain1000.urdf", "--dynamics", "energy",
                 "--no-joint-limits"],
        2, ["would need about", "GB", "--dynamics recursive"]),
    # With its 2000 joint limits (contacts: the dense evaluator) it ran
    # for minutes without a word (docs/robustness.md, "Joint limits on
    # very large models").
    "urdf-energy-1000-limits": (
        "urdf", ["--model", "{tmp}/chain1000.urdf", "--dynamics", "energy"],
        2, ["the dense evaluator", "term evaluations per evaluation",
            "--dynamics recursive"]),
    "urdf-recursive-1500-limits": (
        "urdf", ["--model", "{tmp}/chain1500.urdf"], 2,
        ["the dense KKT solve", "floating-point operations",
         "--no-joint-limits"]),
    "urdf-torque": (
        "urdf", ["--model", os.path.join(DATA, "arm7.urdf"), "--param",
                 "tau_joint1=1e20"], 2,
        ["tau_joint1", "[-176, 176]"]),
    "recursive-1000": (
        "chain_reduced", ["--bodies", "1000", "--t-end", "0.01"], 0, []),
    "moreau-jean-100-spheres": (
        "spheres_in_box", ["--spheres", "100", "--integrator", "moreau-jean",
                           "--step", "1e-3", "--t-end", "2e-3"], 0, []),
}


def run_case(bindir, name, scale):
    exe, args, rc_want, fragments = CASES[name]
    tmp = tempfile.mkdtemp(prefix="daedalus_sizes_")
    bad = []
    try:
        for n in (1000, 1500):
            if f"{{tmp}}/chain{n}.urdf" in args:
                chain_urdf(os.path.join(tmp, f"chain{n}.urdf"), n)
        out = os.path.join(tmp, "out")
        cmd = [os.path.join(bindir, exe)] + [a.format(tmp=tmp) for a in args]
        cmd += ["--output-dir", out, "--quiet"]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=tmp, capture_output=True,
                               timeout=60 * scale, preexec_fn=limited)
        except subprocess.TimeoutExpired:
            return [f"no answer in {60 * scale:.0f} s"]
        elapsed = time.monotonic() - t0
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != rc_want:
            bad.append(f"exit {p.returncode}, expected {rc_want}: "
                       f"{err[-400:]}")
        if rc_want == 2:
            if elapsed > 10 * scale:
                bad.append(f"took {elapsed:.1f} s (limit {10 * scale:.0f})")
            for f in fragments:
                if f not in err:
                    bad.append(f"message lacks {f!r}: {err[-400:]}")
            if "bad_alloc" in err or "usage:" in err.lower():
                bad.append(f"message: {err[-400:]}")
            if os.path.exists(out):
                bad.append("created the output folder")
        return bad
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--only", action="append", default=[])
    a = ap.parse_args()
    failed = 0
    for name in CASES:
        if a.only and name not in a.only:
            continue
        t0 = time.monotonic()
        bad = run_case(os.path.abspath(a.bin), name, a.timeout_scale)
        print(f"{name}: " + ("ok" if not bad else "; ".join(bad)) +
              f" ({time.monotonic() - t0:.1f} s)")
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
