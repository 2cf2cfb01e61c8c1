#!/usr/bin/env python3
"""golf_swing --optimize SPEC.json (docs/optimal_control.md): a spec that
converges (exit 0; the solution's CSV, JSON with its optimal_control entry
and the controls CSV written), and bad specs (exit 2, the bad name said,
nothing written).

Usage: optimize_cli_test.py BUILD/problems/golf_swing SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

EXE, SOURCE = sys.argv[1], sys.argv[2]
del sys.argv[1:3]


def run(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True,
                          timeout=280)


class OptimizeCommandLine(unittest.TestCase):
    def test_level_converges_and_writes_the_solution(self):
        spec = os.path.join(SOURCE, "examples", "optimal_control",
                            "golf_swing_level.json")
        with tempfile.TemporaryDirectory() as out:
            p = run("--param", "t_on=0", "--optimize", spec, "--output-dir",
                    out)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("infeasibility", p.stdout)  # the progress lines
            with open(os.path.join(out, "golf_swing.json")) as f:
                j = json.load(f)
            oc = j["optimal_control"]
            self.assertTrue(oc["ok"])
            self.assertLessEqual(oc["kkt_residual"], 1e-6)
            self.assertIn("u_wrist", oc["free_parameters"])
            # The solution's run stops at impact, as the problem's does.
            self.assertEqual(j["events"][0]["name"], "impact")
            self.assertTrue(os.path.exists(
                os.path.join(out, "golf_swing.controls.csv")))

    def test_an_unconverged_run_says_why_there_is_no_kkt_residual(self):
        # Two iterations are not enough: IPOPT stops at its iteration limit
        # without multipliers. The terminal says there is no KKT residual
        # instead of printing "nan", the progress lines keep their columns
        # apart, and the best iterate is written with ok false (exit 1).
        with open(os.path.join(SOURCE, "examples", "optimal_control",
                               "golf_swing_level.json")) as f:
            spec = json.load(f)
        spec["solver"]["max_iterations"] = 2
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "spec.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            p = run("--param", "t_on=0", "--optimize", path, "--output-dir",
                    out)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertNotIn("nan", p.stdout.lower())
            self.assertIn("no KKT residual", p.stdout)
            rows = [line.split() for line in p.stdout.splitlines()
                    if line[:5].strip().isdigit()]
            self.assertGreaterEqual(len(rows), 2)
            for row in rows:
                # iter, objective, infeasibility, dual infeasibility, step,
                # runs: six fields, each a number.
                self.assertEqual(len(row), 6, row)
                for field in row[:5]:
                    float(field)
            with open(os.path.join(out, "golf_swing.json")) as f:
                oc = json.load(f)["optimal_control"]
            self.assertFalse(oc["ok"])
            self.assertIsNone(oc["kkt_residual"])

    def test_bad_specs_exit_2_naming_the_problem(self):
        with tempfile.TemporaryDirectory() as out:
            cases = [
                ({"objective": "clubhead_spede@impact"},
                 "declares no functional 'clubhead_spede'"),
                ({"objective": "clubhead_speed@contact"},
                 "declares no event 'contact'"),
                ({"objective": "clubhead_speed@impact", "knobs": 1},
                 "unknown key 'knobs'"),
                ({"objective": "clubhead_speed@impact",
                  "controls": [{"input": "wrist",
                                "knots": [0.0, 0.0005, 0.3]}]},
                 "finer than the output step"),
                ({"objective": "clubhead_speed@impact",
                  "path_constraints": [{"functional": "head_x", "upper": 1,
                                        "from": 0.2, "to": 0.1}]},
                 "window from 0.2 to 0.1 s is empty"),
                ({"objective": "clubhead_speed@impact",
                  "path_constraints": [{"functional": "head_x", "upper": 1,
                                        "form": 0.2}]},
                 "unknown key 'form'"),
            ]
            for spec, said in cases:
                path = os.path.join(out, "spec.json")
                with open(path, "w") as f:
                    json.dump(spec, f)
                p = run("--optimize", path, "--output-dir", out)
                self.assertEqual(p.returncode, 2, (spec, p.stderr))
                self.assertIn(said, p.stderr)
                self.assertFalse(os.path.exists(
                    os.path.join(out, "golf_swing.json")))


if __name__ == "__main__":
    unittest.main()
