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
