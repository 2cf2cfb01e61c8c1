#!/usr/bin/python3
"""Ensemble speed-up on MPI (issue 20): 200 slider-crank members whose
durations (hence costs) span a factor 100, run by `mpirun -np 1` and
`mpirun -np 2`, in fresh output folders.

Usage: bench/ensemble_speedup.py [BUILD_DIR] [MEMBERS] [REPEATS]

Prints for each rank count the wall time of the whole command (process
start, MPI start-up, members, gathered table), the ensemble's own wall time
(from its JSON table), the members' summed wall time, and
  speed-up           wall(-np 1) / wall(-np 2), both measures;
  members at once    summed member wall / ensemble wall of each run: the
                     speed-up the scheduling achieves, insensitive to the
                     load changing between runs;
  overhead / member  (ensemble wall x computing threads - summed member
                     wall) / members at -np 1: what scheduling, messages,
                     result parsing, journal and table cost per member
                     (rank 0 computes on a second thread, so -np 1 has one
                     computing thread);
  gather / member    rank 0's own time per result (parse, journal write
                     and flush, progress).
Checks that the two tables agree member by member (exact final states).
Repeats alternate -np 1 and -np 2 so that both see the same load; the
medians are reported.
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run_ensemble(mpiexec, exe, members_csv, out, np):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpiexec, "--oversubscribe", "-np", str(np), exe, "--ensemble",
           members_csv, "--output-dir", out, "--quiet"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    with open(os.path.join(out, "slider_crank.ensemble.json")) as f:
        return wall, json.load(f)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    exe = os.path.join(build, "problems", "slider_crank")
    mpiexec = shutil.which("mpirun") or sys.exit("no mpirun on PATH")
    work = tempfile.mkdtemp(prefix="daedalus_ensemble_bench_")
    members_csv = os.path.join(work, "members.csv")
    rng = random.Random(20)
    with open(members_csv, "w") as f:
        # Durations 20 s ... 2000 s, log-uniform, in random order; the
        # damping and spring vary too.
        f.write("t_end,k,c\n")
        for _ in range(n):
            f.write(f"{20 * 100 ** rng.random():.6g},"
                    f"{rng.uniform(0.5, 1.5):.6g},"
                    f"{rng.uniform(0.5, 1.5):.6g}\n")
    results = {1: [], 2: []}
    tables = {}
    for _ in range(repeats):
        for np in (1, 2):
            wall, t = run_ensemble(mpiexec, exe, members_csv,
                                   os.path.join(work, f"np{np}"), np)
            results[np].append((wall, t["wall_time"],
                                t["member_wall_time_sum"],
                                t["gather_time_sum"]))
            tables[np] = t
    for a, b in zip(tables[1]["rows"], tables[2]["rows"]):
        assert a["status"] == "ok", a
        assert a["final"] == b["final"], (a["member"], a["final"], b["final"])
    med = {np: [statistics.median(x[i] for x in results[np]) for i in range(4)]
           for np in (1, 2)}
    print(f"{n} slider-crank members, t_end 20 ... 2000 s (costs x100), "
          f"{repeats} alternating repeats, medians:")
    for np in (1, 2):
        w, e, s, g = med[np]
        print(f"  -np {np}: command {w:.2f} s, ensemble {e:.2f} s, members "
              f"summed {s:.2f} s")
    print(f"speed-up -np 2 / -np 1: {med[1][0] / med[2][0]:.2f} (command), "
          f"{med[1][1] / med[2][1]:.2f} (ensemble wall)")
    # Members running at once on average (summed member wall over the
    # ensemble's wall), from each run alone: the load of the shared machine
    # changes between runs, which moves the plain ratios above (members
    # themselves ran 10-30 % slower in some runs than in others).
    conc = {np: statistics.median(x[2] / x[1] for x in results[np])
            for np in (1, 2)}
    print(f"members running at once (summed member wall / ensemble wall): "
          f"-np 1 {conc[1]:.3f}, -np 2 {conc[2]:.3f}; ratio "
          f"{conc[2] / conc[1]:.2f}")
    w1, e1, s1, g1 = med[1]
    print(f"overhead per member at -np 1: {1e3 * (e1 - s1) / n:.3f} ms "
          f"(ensemble wall - summed member wall); rank 0 gathering "
          f"{1e3 * g1 / n:.3f} ms per member; mean member "
          f"{1e3 * s1 / n:.2f} ms")
    print("tables agree member by member (final states exactly)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
