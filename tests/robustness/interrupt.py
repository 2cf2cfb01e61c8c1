#!/usr/bin/python3
"""An interrupted run (issue 18, "results that agree with each other").

Starts a long pendulum run into a folder that holds the previous run's
pendulum.csv and pendulum.json (sentinels), and checks:

- while the run is going, the previous CSV is still in place and the
  previous JSON is marked superseded (issue 40: a run killed outright
  must not leave old files that look current); the new ones are written
  under temporary names;
- SIGINT (and, separately, SIGTERM) ends the run cleanly: not killed by
  the signal, a non-zero exit status, within a few seconds;
- the folder then holds exactly pendulum.csv and pendulum.json, both from
  this run (no temporary file left): the JSON says "interrupted", its
  `samples` is the CSV's row count (more than one, fewer than the grid),
  its t_reached the CSV's last time, and every number is finite.


Usage: interrupt.py --bin BUILD/problems [--timeout-scale K]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_checks  # noqa: E402

T_END, STEP = 20000.0, 0.2  # 100000 samples, about 100 s: longer than
# the wait


def check(bindir, sig, scale):
    bad = []
    tmp = tempfile.mkdtemp(prefix="daedalus_interrupt_")
    try:
        out = os.path.join(tmp, "out")
        cli_checks.plant_sentinels(out, "pendulum")
        cmd = [os.path.join(bindir, "pendulum"), "--t-end", repr(T_END),
               "--output-step", repr(STEP), "--output-dir", out, "--quiet"]
        proc = subprocess.Popen(cmd, cwd=tmp, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                preexec_fn=cli_checks.default_signals)
        # Wait until the run writes something (a new file appears, or the
        # old ones change), at most a second, then let it write rows.
        deadline = time.monotonic() + 1.0 * scale
        while time.monotonic() < deadline and proc.poll() is None:
            if len(os.listdir(out)) > 2 or not all(
                    cli_checks.is_sentinel(os.path.join(out, f))
                    for f in ("pendulum.csv", "pendulum.json")):
                break
            time.sleep(0.02)
        time.sleep(0.5 * scale)
        if proc.poll() is not None:
            return [f"the run ended before the signal (exit {proc.returncode})"]
        if not cli_checks.is_sentinel(os.path.join(out, "pendulum.csv")):
            bad.append("pendulum.csv was replaced while the run was going "
                       "(expected a temporary name)")
        try:
            with open(os.path.join(out, "pendulum.json"),
                      encoding="utf-8") as fh:
                old = json.load(fh)
        except (OSError, ValueError) as e:
            old = {"status": f"unreadable ({e})"}
        if old.get("status") != "superseded":
            bad.append("while the run was going pendulum.json says "
                       f"{old.get('status')!r}, expected 'superseded'")
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=10 * scale)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return bad + [f"still running 10 s after {sig.name}"]
        rc = proc.returncode
        if rc < 0:
            return bad + [f"killed by {signal.Signals(-rc).name} instead of "
                          "ending cleanly"]
        if rc == 0:
            bad.append("exit 0 for an interrupted run")
        files = sorted(os.listdir(out))
        if files != ["pendulum.csv", "pendulum.json"]:
            bad.append(f"the folder holds {files}")
        json_path = os.path.join(out, "pendulum.json")
        csv_path = os.path.join(out, "pendulum.csv")
        if not os.path.isfile(json_path) or cli_checks.is_sentinel(json_path):
            return bad + ["no new pendulum.json"]
        js = cli_checks.read_json(json_path)
        if js.get("status") != "interrupted":
            bad.append(f"status {js.get('status')!r}, expected 'interrupted'")
        if cli_checks.is_sentinel(csv_path):
            return bad + ["pendulum.csv is the previous run's"]
        csv_bad, rows = cli_checks.csv_violations(csv_path, True)
        bad += csv_bad
        if not 1 < len(rows) < T_END / STEP:
            bad.append(f"{len(rows)} CSV rows")
        if js.get("samples") != len(rows):
            bad.append(f"JSON samples {js.get('samples')} != {len(rows)} CSV "
                       "rows")
        elif rows and not cli_checks.same_time(rows[-1][0],
                                               js.get("t_reached", -1)):
            bad.append(f"t_reached {js.get('t_reached')} != last CSV time "
                       f"{rows[-1][0]}")
        if not err.strip():
            bad.append("nothing on stderr")
        return bad
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    failed = 0
    for sig in (signal.SIGINT, signal.SIGTERM):
        bad = check(a.bin, sig, a.timeout_scale)
        print(f"{sig.name}: " + ("ok" if not bad else "; ".join(bad)))
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
