#!/usr/bin/env python3
"""Ensembles on MPI (issue 20): the same ensemble run serially and by
`mpirun -np 2` gives the same gathered table member by member (inputs,
status and final states exactly), a deliberately failing member is
recorded on both (exit status 1), Monte Carlo draws do not depend on the
number of ranks, and a rerun under mpirun skips the members its journal
lists.

Usage: ensemble_mpi_test.py PROBLEM_EXE MPIEXEC WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys


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
    print(f"ok: sweep and Monte Carlo agree on 1 and 2 ranks (members ran "
          f"on ranks {ranks}); journal rerun skipped all 6")


if __name__ == "__main__":
    main()
