#!/usr/bin/env python3
"""daedalus.optimize (docs/optimal_control.md): the minimum-effort
rest-to-rest transfer of a double integrator written in Python, against its
closed-form optimum u*(t) = 6 - 12 t, J* = 12 (Bryson and Ho, Applied
Optimal Control, 1975, sec. 2.8), with the progress callback, the
solution's arrays and files, and a bad spec named."""
import json
import os
import tempfile
import unittest

import numpy as np

import daedalus


def double_integrator():
    b = daedalus.ModelBuilder("double_integrator")
    b.coordinates(["x"])
    b.parameter("m", 1.0, positive=True)
    b.kinetic_energy(lambda x: 0.5 * x.p.m * x.v[0] * x.v[0])
    b.input("u", lambda x: [1.0], lambda x: 0.0 * x.t)
    b.functional("position", terminal=lambda x: x.q[0])
    b.functional("speed", terminal=lambda x: x.v[0])
    return b.build(description="A unit mass pushed along a line (Python).",
                   t_end=1.0, output_step=0.05, rtol=1e-11, atol=1e-13,
                   formulation="unstabilized")


SPEC = {
    "controls": [{"input": "u", "knots": {"from": 0, "to": 1, "count": 11}}],
    "objective": "effort:u",
    "constraints": [{"functional": "position", "equals": 1.0},
                    {"functional": "speed", "equals": 0.0}],
    "solver": {"shooting_intervals": 2, "tolerance": 1e-10,
               "constraint_tolerance": 1e-10},
}


class Optimize(unittest.TestCase):
    def test_rest_to_rest_optimum(self):
        seen = []
        with tempfile.TemporaryDirectory() as out:
            r = daedalus.optimize(double_integrator(), SPEC,
                                  callback=lambda it: seen.append(it),
                                  output_dir=out)
            self.assertTrue(os.path.exists(
                os.path.join(out, "double_integrator.controls.csv")))
            with open(os.path.join(out, "double_integrator.json")) as f:
                self.assertIn("optimal_control", json.load(f))
        self.assertTrue(r.ok, r.message)
        self.assertAlmostEqual(r.objective, 12.0, delta=1e-6)
        self.assertLessEqual(r.kkt_residual, 1e-6)
        c = r.controls[0]
        self.assertEqual(c["input"], "u")
        np.testing.assert_allclose(c["coefficients"], 6 - 12 * c["knots"],
                                   atol=1e-6)
        # The solution's run: rest at 1, the control on its grid.
        self.assertAlmostEqual(r.q[-1, 0], 1.0, delta=1e-6)
        self.assertAlmostEqual(r.v[-1, 0], 0.0, delta=1e-6)
        np.testing.assert_allclose(r.u[:, 0], 6 - 12 * r.t, atol=1e-6)
        # One callback per iteration, objective and infeasibility given.
        self.assertEqual(len(seen), len(r.history))
        self.assertGreater(len(seen), 1)
        self.assertIn("infeasibility", seen[-1])

    def test_callback_stops_the_solve(self):
        r = daedalus.optimize(double_integrator(), SPEC,
                              callback=lambda it: it["iteration"] < 2)
        self.assertFalse(r.ok)
        self.assertIn("User_Requested_Stop", r.status)

    def test_bad_spec_is_named(self):
        bad = dict(SPEC, objective="effort:w")
        with self.assertRaisesRegex(ValueError, "effort:u"):
            daedalus.optimize(double_integrator(), bad)
        bad = dict(SPEC, knobs=3)
        with self.assertRaisesRegex(ValueError, "unknown key 'knobs'"):
            daedalus.optimize(double_integrator(), bad)


if __name__ == "__main__":
    unittest.main()
