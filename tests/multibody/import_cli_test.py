#!/usr/bin/python3
"""The importer executables' own flags (problems/import_cli.hpp):

- `urdf --help` and `mjcf --help`, with and without --model, list their own
  flags (--model, --dynamics, --base, --gravity; --skip-actuators), and
  with --model also the common options and the model's joints;
- --gravity reaches the model: the project's arm (problems/data/arm7.urdf)
  at rest at q = 0 without gravity stays exactly there (every force is
  zero), and with it swings; the MJCF twin (arm7.xml) likewise with
  --gravity 0 and with a vector --gravity 0,0,-9.81; an unparsable
  --gravity is a usage error;
- the humanoid of Debian's libmujoco-samples runs, and its start is
  MuJoCo's qpos0 (the torso at z = 1.5).

Usage: import_cli_test.py --bin BUILD/problems --source SOURCE --work DIR
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def last_row(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return dict(zip(rows[0], (float(x) for x in rows[-1]))), \
        dict(zip(rows[0], (float(x) for x in rows[1])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    urdf = os.path.join(a.bin, "urdf")
    mjcf = os.path.join(a.bin, "mjcf")
    arm_urdf = os.path.join(a.source, "problems", "data", "arm7.urdf")
    arm_mjcf = os.path.join(a.source, "problems", "data", "arm7.xml")
    failures = []

    # --help lists the own flags, with and without --model.
    for exe, model, flags in (
            (urdf, arm_urdf, ["--model FILE.urdf", "--dynamics F", "--base B",
                              "--gravity G"]),
            (mjcf, arm_mjcf, ["--model FILE.xml", "--dynamics F",
                              "--gravity G|gx,gy,gz", "--skip-actuators"])):
        for args in (["--help"], ["--model", model, "--help"]):
            code, out, err = run([exe] + args)
            missing = [f for f in flags if f not in out]
            if "--model" in args:
                missing += [f for f in ("--t-end T", "joint1") if f not in out]
            print(f"{os.path.basename(exe)} {' '.join(args)}: exit {code}, "
                  f"missing {missing}")
            if code != 0 or missing:
                failures.append(f"{exe} {' '.join(args)}: exit {code}, "
                                f"missing {missing}\n{out}{err}")

    # --gravity: none, the default, a vector.
    def final(exe, model, extra, tag):
        out = os.path.join(a.work, tag)
        code, _, err = run([exe, "--model", model, "--t-end", "0.3",
                            "--quiet", "--output-dir", out] + extra)
        if code != 0:
            failures.append(f"{tag}: exit {code}\n{err}")
            return None
        name = os.path.basename(exe)
        return last_row(os.path.join(out, f"{name}.csv"))

    joints = [f"joint{i}" for i in range(1, 8)]
    for exe, model, weight in ((urdf, arm_urdf, ["--gravity", "9.81"]),
                               (mjcf, arm_mjcf, ["--gravity", "0,0,-9.81"])):
        tag = os.path.basename(exe)
        still = final(exe, model, ["--gravity", "0"], tag + "_g0")
        swing = final(exe, model, weight, tag + "_g")
        if still is None or swing is None:
            continue
        rest = max(abs(still[0][j]) for j in joints)
        moved = max(abs(swing[0][j]) for j in joints)
        print(f"{tag}: largest |q| after 0.3 s without gravity {rest:.1e}, "
              f"with {moved:.3f} rad")
        if rest != 0.0 or moved < 0.01:
            failures.append(f"{tag} --gravity: |q| {rest} without gravity, "
                            f"{moved} with")
    code, _, err = run([mjcf, "--model", arm_mjcf, "--gravity", "down"])
    if code != 2 or "--gravity 'down'" not in err:
        failures.append(f"mjcf --gravity down: exit {code}\n{err}")
    code, _, err = run([urdf, "--model", arm_urdf, "--gravity", "1,0,0"])
    if code != 2 or "gravity along -z" not in err:
        failures.append(f"urdf --gravity 1,0,0: exit {code}\n{err}")

    # The humanoid of libmujoco-samples: runs from qpos0.
    humanoid = "/usr/share/mujoco/model/humanoid/humanoid.xml"
    rows = final(mjcf, humanoid, ["--t-end", "0.1"], "humanoid")
    if rows is not None:
        end, start = rows
        print(f"humanoid: root_z {start['root_z']} -> {end['root_z']:.6f}")
        # Free fall from 1.5 m for 0.1 s: z = 1.5 - g t^2 / 2.
        if start["root_z"] != 1.5 or abs(end["root_z"] - (1.5 - 0.5 * 9.81 *
                                                           0.01)) > 1e-8:
            failures.append(f"humanoid: root_z {start['root_z']} -> "
                            f"{end['root_z']}, expected 1.5 -> "
                            f"{1.5 - 0.04905}")

    for f in failures:
        print("FAIL: " + f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
