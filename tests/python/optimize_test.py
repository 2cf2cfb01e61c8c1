#!/usr/bin/env python3
"""daedalus.optimize (docs/optimal_control.md): the minimum-effort
rest-to-rest transfer of a double integrator written in Python, against its
closed-form optimum u*(t) = 6 - 12 t, J* = 12 (Bryson and Ho, Applied
Optimal Control, 1975, sec. 2.8), with the progress callback, the
solution's arrays and files, and a bad spec named; several starts on the
tilted double well (its two optima)."""
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


# The tilted double well (tests/optimal_control/double_well.hpp, written
# here in Python): x'' = u from rest at x0, phi(x) = (x^2 - 1)^2 + S x at
# t = 1, objective phi + 0.1 int u^2 dt over x0 in [-2, 2] and a
# piecewise-linear u. Its optima have u = 0 and x0 a minimizer of phi: the
# roots of 4 x^3 - 4 x + S with phi'' > 0.
S = 0.3


def double_well():
    b = daedalus.ModelBuilder("double_well")
    b.coordinates(["x"])
    b.kinetic_energy(lambda x: 0.5 * x.v[0] * x.v[0])
    b.input("u", lambda x: [1.0], lambda x: 0.0 * x.t)
    b.functional("well", terminal=lambda x: (x.q[0] * x.q[0] - 1.0) ** 2 +
                 S * x.q[0])
    return b.build(description="The tilted double well (Python).",
                   t_end=1.0, output_step=0.05, rtol=1e-11, atol=1e-13,
                   formulation="unstabilized")


WELL_SPEC = {
    "controls": [{"input": "u", "knots": [0.0, 1.0], "initial": 0.0,
                  "lower": -4.0, "upper": 4.0}],
    "initial_state": [{"name": "q0[x]", "lower": -2.0, "upper": 2.0,
                       "initial": 0.5}],
    "objective": [{"functional": "well"},
                  {"functional": "effort:u", "weight": 0.1}],
    "solver": {"shooting_intervals": 1, "tolerance": 1e-10},
}
WELL_BOUNDS = {"u.c0": (-4.0, 4.0), "u.c1": (-4.0, 4.0),
               "q0[x]": (-2.0, 2.0)}


def minimizers():
    """The two minimizers of phi, global first, and phi at them."""
    roots = np.roots([4.0, 0.0, -4.0, S]).real
    xs = sorted((x for x in roots if 12 * x * x - 4 > 0),
                key=lambda x: (x * x - 1) ** 2 + S * x)
    return [(x, (x * x - 1) ** 2 + S * x) for x in xs]


class MultiStart(unittest.TestCase):
    def test_drawn_starts_find_both_optima(self):
        seen = set()
        with tempfile.TemporaryDirectory() as out:
            ms = daedalus.optimize(double_well(), WELL_SPEC, starts=8, seed=1,
                                   callback=lambda it: seen.add(it["start"]),
                                   output_dir=out)
            for i in range(8):
                self.assertTrue(os.path.exists(os.path.join(
                    out, "members", f"{i:06d}", "double_well.json")))
        self.assertEqual(seen, set(range(8)))
        self.assertEqual(len(ms.results), 8)
        self.assertEqual(ms.errors, [""] * 8)
        # Start 0 is the spec's own; the others are drawn in the bounds.
        self.assertEqual(ms.starts[0], {})
        for s in ms.starts[1:]:
            self.assertEqual(set(s), set(WELL_BOUNDS))
            for name, (lo, hi) in WELL_BOUNDS.items():
                self.assertTrue(lo <= s[name] <= hi, (name, s[name]))
        self.assertTrue(all(r.ok for r in ms.results))
        # Both minimizers are reached, the global one named best.
        (xg, fg), (xl, fl) = minimizers()
        self.assertEqual(ms.distinct_optima, 2)
        self.assertEqual(ms.optimum[ms.best], 1)
        self.assertIs(ms.best_result, ms.results[ms.best])
        for r, k in zip(ms.results, ms.optimum):
            x, f = (xg, fg) if k == 1 else (xl, fl)
            self.assertAlmostEqual(r.objective, f, delta=1e-8)
            self.assertAlmostEqual(r.free_initial_state["q0[x]"], x,
                                   delta=1e-6)
        self.assertIn("2 distinct optima", repr(ms))
        # A start's result is a lone optimize's from its guesses: the same
        # NLP from the same point, to the last bit.
        i = next(k for k in range(1, 8) if ms.optimum[k] == 1)
        spec = json.loads(json.dumps(WELL_SPEC))
        g = ms.starts[i]
        spec["controls"][0]["initial"] = [g["u.c0"], g["u.c1"]]
        spec["initial_state"][0]["initial"] = g["q0[x]"]
        lone = daedalus.optimize(double_well(), spec)
        self.assertEqual(lone.objective, ms.results[i].objective)
        self.assertEqual(lone.iterations, ms.results[i].iterations)

    def test_listed_starts_and_bad_input(self):
        (xg, fg), (xl, fl) = minimizers()
        ms = daedalus.optimize(double_well(), WELL_SPEC,
                               starts=[{"q0[x]": -1.5}, {"q0[x]": 1.2}])
        self.assertEqual(ms.starts, [{"q0[x]": -1.5}, {"q0[x]": 1.2}])
        self.assertTrue(all(r.ok for r in ms.results))
        xs = sorted(r.free_initial_state["q0[x]"] for r in ms.results)
        self.assertAlmostEqual(xs[0], xg, delta=1e-6)
        self.assertAlmostEqual(xs[1], xl, delta=1e-6)
        with self.assertRaisesRegex(ValueError, "q0\\[x\\]"):
            daedalus.optimize(double_well(), WELL_SPEC, starts=[{"x9": 1.0}])
        with self.assertRaisesRegex(ValueError, "at least 1"):
            daedalus.optimize(double_well(), WELL_SPEC, starts=0)
        with self.assertRaises(TypeError):
            daedalus.optimize(double_well(), WELL_SPEC, starts=[1.0])
        # Drawing needs two finite bounds on every variable.
        unbounded = json.loads(json.dumps(WELL_SPEC))
        del unbounded["initial_state"][0]["lower"]
        with self.assertRaisesRegex(ValueError, "q0\\[x\\]"):
            daedalus.optimize(double_well(), unbounded, starts=4)


if __name__ == "__main__":
    unittest.main()
