#!/usr/bin/env python3
"""Ensembles on MPI (issue 20): the same ensemble run serially and by
`mpirun -np 2` gives the same gathered table member by member (inputs,
status and final states exactly), a deliberately failing member is
recorded on both (exit status 1), Monte Carlo draws do not depend on the
number of ranks, and a rerun under mpirun skips the members its journal
lists. A rank killed mid-member (SIGKILL) ends the job; the rerun names
the member that rank had started, runs it again, and completes the table.

Usage: ensemble_mpi_test.py PROBLEM_EXE MPIEXEC WORK_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time


def run(cmd, expect):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != expect:
        sys.exit(f"FAIL: {' '.join(cmd)}\nexit {p.returncode}, expected "
                 f"{expect}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def table(d):
    with open(os.path.join(d, "pendulum.ensemble.json")) as f:
        return json.load(f)


def same_rows(a, b, what):
    ra, rb = a["rows"], b["rows"]
    if len(ra) != len(rb):
        sys.exit(f"FAIL {what}: {len(ra)} rows against {len(rb)}")
    for x, y in zip(ra, rb):
        for key in ("member", "name", "inputs", "status", "t_reached",
                    "final", "drift_position_max", "energy_residual_max"):
            if x.get(key) != y.get(key):
                sys.exit(f"FAIL {what}: member {x['member']} differs in "
                         f"{key}: {x.get(key)} against {y.get(key)}")


def main():
    exe, mpiexec, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    mpi = [mpiexec, "--oversubscribe", "-np", "2"]
    # A sweep of costs, with member 2 out of its parameter range.
    sweep = os.path.join(work, "sweep.csv")
    with open(sweep, "w") as f:
        f.write("name,m,l,t_end\n")
        f.write("a,1,1,0.5\nb,2,0.5,0.2\nbad,-1,1,0.2\nc,0.5,2,0.4\n"
                "d,1.5,1.2,0.1\ne,1,0.8,0.3\n")
    serial, parallel = os.path.join(work, "serial"), os.path.join(work, "mpi")
    run([exe, "--ensemble", sweep, "--output-dir", serial, "--quiet"], 1)
    p = run(mpi + [exe, "--ensemble", sweep, "--output-dir", parallel,
                   "--quiet"], 1)
    if "member 2 (bad) failed" not in p.stderr:
        sys.exit("FAIL: the failing member is not reported:\n" + p.stderr)
    ts, tp = table(serial), table(parallel)
    same_rows(ts, tp, "sweep")
    if tp["ranks"] != 2 or tp["counts"] != {"ok": 5, "failed": 1}:
        sys.exit(f"FAIL: ranks {tp['ranks']}, counts {tp['counts']}")
    ranks = sorted({r["rank"] for r in tp["rows"]})
    # Monte Carlo: the same draws and results on 1 and 2 ranks.
    mc = ["--monte-carlo", "6", "--seed", "3", "--dist", "m=normal:1,0.1",
          "--dist", "l=lognormal:0,0.2", "--t-end", "0.2", "--quiet"]
    mc1, mc2 = os.path.join(work, "mc1"), os.path.join(work, "mc2")
    run([exe] + mc + ["--output-dir", mc1], 0)
    run(mpi + [exe] + mc + ["--output-dir", mc2], 0)
    same_rows(table(mc1), table(mc2), "monte carlo")
    # The same command again: every member comes from the journal.
    run(mpi + [exe] + mc + ["--output-dir", mc2], 0)
    again = table(mc2)
    if again["resumed_from_journal"] != 6:
        sys.exit(f"FAIL: resumed {again['resumed_from_journal']} of 6")
    same_rows(table(mc1), again, "monte carlo from the journal")
    lost = dead_rank(exe, mpi, work)
    print(f"ok: sweep and Monte Carlo agree on 1 and 2 ranks (members ran "
          f"on ranks {ranks}); journal rerun skipped all 6; member {lost} "
          f"of a killed rank re-issued")


def rank_pid(rank, marker):
    """The pid of the MPI process of `rank` whose command line has
    `marker` (its output folder)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if (f"OMPI_COMM_WORLD_RANK={rank}".encode() in env
                and marker in cmd):
            return int(pid)
    return None


def dead_rank(exe, mpi, work):
    """Kills rank 1 while it runs a member; the rerun re-issues it."""
    # Members long enough to be caught running: calibrate on this build
    # (the sanitizer build is ~20 times slower).
    cal = os.path.join(work, "calibrate")
    t0 = time.monotonic()
    run([exe, "--t-end", "20", "--output-step", "0.5", "--output-dir", cal,
         "--quiet"], 0)
    per_second = max(time.monotonic() - t0, 1e-3) / 20
    t_end = max(20.0, round(1.5 / per_second))
    members = os.path.join(work, "long.csv")
    with open(members, "w") as f:
        f.write("name,t_end,output_step\n")
        for i in range(3):
            f.write(f"long{i},{t_end},{t_end / 50}\n")
    out = os.path.join(work, "killed")
    cmd = [exe, "--ensemble", members, "--output-dir", out, "--quiet"]
    job = subprocess.Popen(mpi + cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    journal = os.path.join(out, "pendulum.ensemble.journal")
    started = None
    deadline = time.monotonic() + 120
    while started is None and time.monotonic() < deadline:
        time.sleep(0.02)
        try:
            with open(journal) as f:
                for line in f:
                    if '"started"' in line and '"rank":1' in line:
                        started = json.loads(line)["started"]
        except OSError:
            pass
    if started is None:
        job.kill()
        sys.exit("FAIL: rank 1 never started a member")
    pid = rank_pid(1, out)
    if pid is None:
        job.kill()
        sys.exit("FAIL: rank 1's process not found")
    os.kill(pid, signal.SIGKILL)
    try:
        job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        sys.exit("FAIL: mpirun did not end after its rank 1 was killed")
    if job.returncode == 0:
        sys.exit("FAIL: mpirun exited 0 after a rank was killed")
    with open(journal) as f:
        rows = [json.loads(l) for l in f.readlines()[1:] if l.strip()]
    if any(r.get("member") == started for r in rows):
        sys.exit(f"FAIL: member {started} finished although its rank was "
                 "killed")
    # The same command again, serially: the lost member is named and run.
    p = run(cmd, 0)
    # (rank 0's own member, killed with the job, is named too.)
    if (f"{started} (rank 1)" not in p.stderr
            or "had started" not in p.stderr):
        sys.exit(f"FAIL: the rerun does not name member {started} of rank 1:"
                 f"\n{p.stderr}")
    t = table(out)
    if t["counts"] != {"ok": 3}:
        sys.exit(f"FAIL: after the rerun the counts are {t['counts']}")
    if {"member": started, "rank": 1} not in t["reissued"]:
        sys.exit(f"FAIL: reissued {t['reissued']} lacks member {started}")
    return started


if __name__ == "__main__":
    main()
