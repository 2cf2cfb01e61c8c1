#!/usr/bin/env python3
"""Ensembles of optimizations on the command line (docs/optimal_control.md,
"Several starts: ensembles of optimizations") on the tilted double well
(double_well.hpp), phi(x) = (x^2 - 1)^2 + s x at t_end, x0 and a control
on u free, objective phi + 0.1 int u^2 dt: its two minima are the roots of
4 x^3 - 4 x + s with u = 0.

- --multi-start 8 --seed 1: member 0 starts from the spec's guess, the
  others from draws within the bounds that depend only on (seed, member);
  both minima are found, the best member is at the global one, and the
  members are grouped into exactly two optima;
- every member's files are the same to the last bit as a single --optimize
  run with --guess set to that member's start from the table;
- under mpirun -np 2 (when an mpiexec is given) the table is the same
  member by member;
- --ensemble FILE whose columns name free variables: the starts as given,
  a member with a parameter out of range fails and is kept, the others run
  (exit 1);
- bad input exits 2 with what, where and how, writing no table.

Usage: multi_start_cli_test.py DOUBLE_WELL_EXE WORK_DIR [MPIEXEC]"""
import json
import os
import shutil
import subprocess
import sys
import unittest

EXE, WORK = sys.argv[1], sys.argv[2]
MPIEXEC = sys.argv[3] if len(sys.argv) > 3 else ""
del sys.argv[1:4]

S = 0.3  # the model's default tilt
SPEC = {
    "controls": [{"input": "u", "knots": [0.0, 1.0], "initial": 0.0,
                  "lower": -4.0, "upper": 4.0}],
    "parameters": [{"name": "x0", "lower": -2.0, "upper": 2.0,
                    "initial": 0.5}],
    "objective": [{"functional": "well"},
                  {"functional": "effort:u", "weight": 0.1}],
    "solver": {"shooting_intervals": 1, "tolerance": 1e-10},
}
BOUNDS = {"u.c0": (-4.0, 4.0), "u.c1": (-4.0, 4.0), "x0": (-2.0, 2.0)}


def minimizer(start):
    x = start
    for _ in range(60):
        x -= (4 * x ** 3 - 4 * x + S) / (12 * x * x - 4)
    return x


def phi(x):
    return (x * x - 1) ** 2 + S * x


GLOBAL, LOCAL = minimizer(-1.0), minimizer(1.0)


def run(*args, mpi=False):
    cmd = ([MPIEXEC, "--oversubscribe", "-np", "2"] if mpi else []) + \
        [EXE, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=250)


def load(path):
    with open(path) as f:
        return json.load(f)


def work(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def spec_file(d, spec=None):
    path = os.path.join(d, "spec.json")
    with open(path, "w") as f:
        json.dump(SPEC if spec is None else spec, f)
    return path


def without_wall_time(oc):
    return {k: v for k, v in oc.items() if k != "wall_time"}


def member_files(d):
    with open(os.path.join(d, "double_well.csv"), "rb") as f:
        csv = f.read()
    with open(os.path.join(d, "double_well.controls.csv"), "rb") as f:
        controls = f.read()
    j = load(os.path.join(d, "double_well.json"))
    return csv, controls, without_wall_time(j["optimal_control"])


class MultiStart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(WORK, ignore_errors=True)
        cls.dir = work("serial")
        cls.spec = spec_file(cls.dir)
        cls.p = run("--optimize", cls.spec, "--multi-start", "8", "--seed",
                    "1", "--output-dir", cls.dir)
        cls.table = load(os.path.join(cls.dir, "double_well.ensemble.json"))

    def test_finds_both_minima_and_names_the_global_best(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        t = self.table
        self.assertEqual(t["mode"], "multi-start")
        self.assertEqual(t["counts"], {"ok": 8})
        o = t["optimization"]["optima"]
        self.assertEqual(o["distinct_optima"], 2)
        first, second = o["optima"]
        self.assertAlmostEqual(first["objective"], phi(GLOBAL), delta=1e-8)
        self.assertAlmostEqual(second["objective"], phi(LOCAL), delta=1e-8)
        self.assertAlmostEqual(dict(first["values"])["x0"], GLOBAL,
                               delta=1e-6)
        self.assertAlmostEqual(dict(second["values"])["x0"], LOCAL,
                               delta=1e-6)
        self.assertEqual(o["best_member"], first["best_member"])
        self.assertEqual(sorted(first["members"] + second["members"]),
                         list(range(8)))
        # Each member's optimum is the minimum its x0 ended at.
        for r in t["rows"]:
            oc = r["optimal_control"]
            x0 = dict(oc["values"])["x0"]
            want = 1 if x0 < 0 else 2
            self.assertEqual(oc["optimum"], want, r)
            self.assertAlmostEqual(x0, GLOBAL if want == 1 else LOCAL,
                                   delta=1e-6)
            self.assertLessEqual(oc["kkt_residual"], 1e-6)
        best = o["best_member"]
        self.assertIn(f"best                   member {best}: objective",
                      self.p.stdout)
        self.assertIn("distinct optima        2", self.p.stdout)
        with open(os.path.join(self.dir, "double_well.ensemble.csv")) as f:
            header = f.readline().strip().split(",")
        for col in ("u.c0", "x0", "status", "ipopt_status", "objective",
                    "kkt_residual", "iterations", "optimum", "opt:u.c0",
                    "opt:u.c1", "opt:x0"):
            self.assertIn(col, header)

    def test_starts_are_the_spec_guess_then_draws_within_bounds(self):
        rows = self.table["rows"]
        self.assertEqual(rows[0]["inputs"],
                         [["u.c0", "0"], ["u.c1", "0"], ["x0", "0.5"]])
        for r in rows[1:]:
            for name, text in r["inputs"]:
                lo, hi = BOUNDS[name]
                self.assertTrue(lo < float(text) < hi, (name, text))
        # Member i's draws depend on (seed, i) only: not on N.
        d = work("three")
        p = run("--optimize", self.spec, "--multi-start", "3", "--seed", "1",
                "--output-dir", d, "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        three = load(os.path.join(d, "double_well.ensemble.json"))["rows"]
        self.assertEqual([r["inputs"] for r in three],
                         [r["inputs"] for r in rows[:3]])
        other = work("seed2")
        p = run("--optimize", self.spec, "--multi-start", "2", "--seed", "2",
                "--output-dir", other, "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        seed2 = load(os.path.join(other, "double_well.ensemble.json"))
        self.assertNotEqual(seed2["rows"][1]["inputs"], rows[1]["inputs"])

    def test_members_are_single_runs_to_the_last_bit(self):
        for r in self.table["rows"]:
            m = r["member"]
            args = []
            if m > 0:
                args = ["--guess",
                        ",".join(f"{n}={v}" for n, v in r["inputs"])]
            d = work(f"single{m}")
            p = run("--optimize", self.spec, *args, "--output-dir", d)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(member_files(d), member_files(
                os.path.join(self.dir, r["dir"])), f"member {m}")
            oc = load(os.path.join(d, "double_well.json"))["optimal_control"]
            self.assertEqual(oc["objective"], r["optimal_control"]["objective"])

    @unittest.skipUnless(MPIEXEC, "no mpiexec (built without MPI)")
    def test_two_ranks_give_the_same_table(self):
        d = work("mpi")
        p = run("--optimize", self.spec, "--multi-start", "8", "--seed", "1",
                "--output-dir", d, mpi=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        t = load(os.path.join(d, "double_well.ensemble.json"))
        self.assertEqual(t["ranks"], 2)
        self.assertEqual(t["optimization"]["optima"],
                         self.table["optimization"]["optima"])
        for a, b in zip(self.table["rows"], t["rows"]):
            for key in ("member", "inputs", "status", "final"):
                self.assertEqual(a[key], b[key], key)
            self.assertEqual(without_wall_time(a["optimal_control"]),
                             without_wall_time(b["optimal_control"]))
            self.assertEqual(member_files(os.path.join(self.dir, a["dir"])),
                             member_files(os.path.join(d, b["dir"])))

    def test_ensemble_file_names_the_starts_and_keeps_failures(self):
        d = work("file")
        spec = spec_file(d)
        starts = os.path.join(d, "starts.csv")
        with open(starts, "w") as f:
            f.write("name,x0,u.c1,s\nleft,-1.5,0.5,0.3\n"
                    "right,1.5,0,0.3\nbad,0,0,5\n")
        p = run("--optimize", spec, "--ensemble", starts, "--output-dir", d)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("member 2 (bad) failed", p.stderr)
        t = load(os.path.join(d, "double_well.ensemble.json"))
        self.assertEqual(t["counts"], {"ok": 2, "failed": 1})
        rows = t["rows"]
        self.assertIn("'s' = 5 is outside", rows[2]["error"])
        o = t["optimization"]["optima"]
        # IPOPT's first steps from x0 = -1.5 and 1.5 cross the hump: which
        # start ends where is its, but the two ends are the two minima.
        self.assertEqual(o["distinct_optima"], 2)
        self.assertEqual(o["not_converged"], [2])
        best = o["best_member"]
        self.assertIn(best, (0, 1))
        self.assertAlmostEqual(o["best_objective"], phi(GLOBAL), delta=1e-8)
        self.assertAlmostEqual(rows[1 - best]["optimal_control"]["objective"],
                               phi(LOCAL), delta=1e-8)
        # The file's start is the guess: the same as --guess on one run.
        one = work("file_single")
        p = run("--optimize", spec, "--guess", "x0=-1.5,u.c1=0.5",
                "--param", "s=0.3", "--output-dir", one)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(member_files(one),
                         member_files(os.path.join(d, rows[0]["dir"])))

    def test_bad_input_exits_2_saying_what_and_how(self):
        d = work("bad")
        spec = spec_file(d)
        unbounded = dict(SPEC)
        unbounded["controls"] = [dict(SPEC["controls"][0])]
        del unbounded["controls"][0]["upper"]
        loose = os.path.join(d, "loose.json")
        with open(loose, "w") as f:
            json.dump(unbounded, f)
        starts = os.path.join(d, "starts.csv")
        with open(starts, "w") as f:
            f.write("u.c7\n1\n")
        cases = [
            (["--multi-start", "3"],
             "--multi-start N draws the starting guesses of an optimization:"
             " give --optimize SPEC.json too"),
            (["--optimize", spec, "--multi-start", "0"], "--multi-start"),
            (["--optimize", spec, "--multi-start", "2", "--ensemble", starts],
             "--ensemble and --multi-start do not combine"),
            (["--optimize", spec, "--multi-start", "2", "--dist",
              "s=uniform:0,1"], "--multi-start draws the spec's free"),
            (["--optimize", spec, "--ensemble", starts],
             "starts.csv:1:1: unknown column 'u.c7'; a column is a free "
             "variable of the --optimize spec, whose column is its initial "
             "guess (u.c0, u.c1, x0)"),
            (["--optimize", loose, "--multi-start", "2"],
             "'u.c0' has only one finite bound; give it lower and upper in "
             "the spec, or list the starts in an --ensemble file"),
            (["--optimize", spec, "--multi-start", "2", "--guess", "y=1"],
             "initial guess for 'y': no free variable of that name; the free "
             "variables are u.c0 .. u.c1, x0"),
            (["--guess", "x0=1"],
             "--guess sets initial guesses of an optimization: give "
             "--optimize SPEC.json too"),
        ]
        for args, said in cases:
            out = work("bad_out")
            p = run(*args, "--output-dir", out)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(said, p.stderr, args)
            self.assertFalse(os.path.exists(
                os.path.join(out, "double_well.ensemble.json")), args)
        # A single run with a bad --guess: exit 2, nothing written.
        out = work("bad_single")
        p = run("--optimize", spec, "--guess", "u.c9=1", "--output-dir", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("initial guess for 'u.c9'", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "double_well.json")))


if __name__ == "__main__":
    unittest.main()
