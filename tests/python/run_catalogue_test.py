#!/usr/bin/env python3
"""daedalus.run on catalogue problems: the options of the command line as
keywords, the results as numpy arrays with the shapes and values the
summary and the physics say, forward sensitivities against central
differences of runs."""
import os
import re
import tempfile
import unittest

import numpy as np

import daedalus


class Catalogue(unittest.TestCase):
    def test_lists_the_problems(self):
        names = daedalus.problems()
        for n in ("pendulum", "slider_crank", "rod_pair", "chain"):
            self.assertIn(n, names)
        self.assertIn("--t-end", daedalus.usage(daedalus.problem("planet")))

    def test_the_catalogue_is_that_of_the_executables(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        # The catalogue's list (problems/models/CMakeLists.txt), from which
        # the build makes one executable per problem.
        with open(os.path.join(root, "problems", "models",
                               "CMakeLists.txt")) as f:
            listed = re.search(r"^set\(catalogue\s+([^)]*)\)", f.read(),
                               re.M)
        self.assertIsNotNone(listed)
        executables = listed.group(1).split()
        self.assertGreater(len(executables), 10)
        self.assertEqual(sorted(daedalus.problems()), sorted(executables))

    def test_every_problem_runs_briefly(self):
        for name in daedalus.problems():
            with self.subTest(name=name):
                r = daedalus.run(name, t_end=0.05, output_step=0.01,
                                 **({"bodies": 3} if "chain" in name
                                    else {}))
                p = daedalus.problem(name, **({"bodies": 3}
                                              if "chain" in name else {}))
                self.assertTrue(r.ok, r.error)
                self.assertEqual(r.summary["problem"], p.name)
                # Six samples on the output grid, and a sample before and
                # after each contact switch (one more where the switch falls
                # on the grid: the grid's sample is the one before it).
                grid = [0.01 * k for k in range(6)]
                switches = [e["t"] for e in
                            (r.summary.get("contact") or {}).get("events", [])
                            if e["kind"] != "start"]
                rows = 6 + sum(1 if any(abs(s - g) < 1e-12 for g in grid)
                               else 2 for s in switches)
                self.assertEqual(r.q.shape, (rows, p.nq))
                self.assertEqual(r.lambda_.shape, (rows, p.nc))
                for g in grid:
                    self.assertTrue(any(abs(t - g) < 1e-12 for t in r.t), g)
                self.assertAlmostEqual(r.t[-1], 0.05, places=12)
                # The arrays' last row is the summary's final sample.
                np.testing.assert_array_equal(r.q[-1],
                                              r.summary["final"]["q"])

    def test_variants_and_sizes(self):
        a = daedalus.problem("rod_pair", coordinates="relative")
        b = daedalus.problem("rod_pair", coordinates="maximal")
        self.assertNotEqual(a.nq, b.nq)
        # Planar links in maximal coordinates (x, y, theta), two pin rows
        # each; the reduced chain has one angle per link.
        for n in (2, 4):
            c = daedalus.problem("chain", bodies=n)
            self.assertEqual((c.nq, c.nc), (3 * n, 2 * n))
            self.assertEqual(daedalus.problem("chain_reduced", bodies=n).nq,
                             n)
        r = daedalus.run("rod_pair", coordinates="maximal", t_end=0.1)
        self.assertEqual(r.q.shape[1], b.nq)
        # The multibody descriptions' --dynamics: the two forms run the
        # same four-bar (their M and h agree to round-off,
        # tests/multibody/recursive_test.cpp), to the integration error.
        self.assertEqual(
            daedalus.problem_options("four_bar_mb"),
            {"dynamics": (["auto", "energy", "recursive"], "auto")})
        e = daedalus.run("four_bar_mb", dynamics="energy", t_end=0.5,
                         rtol=1e-10, atol=1e-12)
        f = daedalus.run("four_bar_mb", dynamics="recursive", t_end=0.5,
                         rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(f.q[-1], e.q[-1], rtol=0, atol=1e-8)
        self.assertIn("recursive", f.summary["evaluator"])
        self.assertEqual(daedalus.problem_options("pendulum"), {})
        # chain_reduced takes two options, as its executable does.
        self.assertEqual(daedalus.problem("chain_reduced", bodies=300).nq, 300)
        self.assertEqual(
            daedalus.problem("chain_reduced", bodies=3, dynamics="energy").nq,
            3)


    def test_fixed_step_schemes_and_counterfactuals(self):
        r = daedalus.run("planet", integrator="symplectic-euler", step=1e-3,
                         output_step=0.01, t_end=1.0)
        self.assertEqual(len(r.t), 101)
        self.assertIn("energy_behaviour", r.summary)
        with self.assertRaisesRegex(ValueError, "not separable"):
            daedalus.run("planet", integrator="stormer-verlet", step=1e-3,
                         output_step=0.01, t_end=1.0)
        with tempfile.TemporaryDirectory() as out:
            r = daedalus.run("rod_pair", t_end=1.0, output_dir=out,
                             counterfactual=["ztcf@0.5"])
            self.assertEqual(r.input_power.shape, (101, 2))
            self.assertGreater(np.max(np.abs(r.input_work)), 0.0)
            cf = r.summary["counterfactuals"]
            self.assertEqual(len(cf), 1)
            self.assertTrue(os.path.exists(cf[0]["file"]), cf[0]["file"])


class SliderCrank(unittest.TestCase):
    """problems/models/slider_crank.cpp: a spring-damper and a constant
    force; GGL on IDAS by default. At atol below ~1e-9 the index-2
    multipliers need their own tolerance (multiplier_atol, the run's hint;
    they are not in the error test)."""

    @classmethod
    def setUpClass(cls):
        cls.r = daedalus.run("slider_crank", t_end=2.0, output_step=0.05,
                             params={"k": 2.0, "c": 0.5}, sens=["k", "c"],
                             rtol=1e-9, atol=1e-11, multiplier_atol=1.0)

    def test_shapes_names_and_summary(self):
        r = self.r
        n = 41
        self.assertEqual(r.t.shape, (n,))
        self.assertEqual(r.q.shape, (n, 3))
        self.assertEqual(r.lambda_.shape, (n, 2))
        self.assertEqual(r.power.shape, (n, 2))
        # G, and the functional G's running integral (functional:G, the
        # same integrand).
        self.assertEqual(r.quadratures.shape, (n, 2))
        np.testing.assert_allclose(r.quadratures[:, 1], r.quadratures[:, 0],
                                   rtol=1e-9, atol=1e-12)
        self.assertEqual(r.sens.shape, (n, 3 + 3 + 2, 2))
        self.assertEqual(r.coordinates, ["q", "x", "p"])
        self.assertEqual(r.constraint_rows, ["loop_x", "loop_y"])
        self.assertEqual(r.sens_parameters, ["k", "c"])
        self.assertEqual(r.params["k"], 2.0)
        self.assertEqual(r.summary["parameters"]["c"], 0.5)
        self.assertEqual(r.summary["formulation"], "ggl")
        self.assertEqual(r.summary["sensitivities"]["method"], "forward")
        np.testing.assert_allclose(r.t, np.arange(n) * 0.05, atol=1e-12)

    def test_energy_balance_and_drift(self):
        r = self.r
        # The damper dissipates: the loss grows and E - E0 is the work of
        # the force F minus the loss, to the integration tolerance.
        self.assertGreater(r.damping_loss[-1], 1e-3)
        self.assertTrue(np.all(np.diff(r.damping_loss) >= -1e-12))
        self.assertLess(np.max(np.abs(r.energy_residual)), 1e-6)
        self.assertLess(np.max(r.drift_position), 1e-8)
        self.assertLessEqual(np.max(r.drift_position),
                             r.summary["drift"]["position_max"])
        # Quadrature G: the integral of the kinetic energy, so increasing.
        self.assertGreater(r.quadratures[-1, 0], 0.0)
        self.assertAlmostEqual(r.quadratures[-1, 0],
                               r.summary["quadratures"]["G"], places=12)

    def test_sensitivities_against_central_differences(self):
        r = self.r
        for j, name in enumerate(["k", "c"]):
            h = 1e-4
            base = {"k": 2.0, "c": 0.5}
            runs = []
            for s in (+1, -1):
                p = dict(base)
                p[name] += s * h
                # rtol 1e-12: the differences divide the runs' own error
                # by 2h (at 1e-11 that was 1e-5 of the scale for c).
                runs.append(daedalus.run("slider_crank", t_end=2.0,
                                         output_step=0.05, params=p,
                                         rtol=1e-12, atol=1e-14,
                                         multiplier_atol=1.0))
            fd = (runs[0].q - runs[1].q) / (2 * h)
            an = r.sens[:, :3, j]
            scale = np.max(np.abs(an))
            self.assertGreater(scale, 1e-3)
            # O(h^2) truncation plus tolerance/h: about 1e-6 of the scale.
            np.testing.assert_allclose(an, fd, rtol=0, atol=1e-5 * scale,
                                       err_msg=name)
            np.testing.assert_array_equal(r.sensitivity(name), r.sens[:, :, j])

    def test_interpreted_and_dual_number_evaluators_agree(self):
        a = daedalus.run("slider_crank", t_end=1.0, evaluator="interpreted")
        b = daedalus.run("slider_crank", t_end=1.0, evaluator="ad")
        self.assertEqual(a.summary["evaluator"], "compiled (interpreted)")
        self.assertTrue(b.summary["evaluator"].startswith("dual numbers"))
        np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-6)


class StartingState(unittest.TestCase):
    """q0= and v0= as dicts {coordinate: value}, the command line's --q0
    and --v0: the pendulum (l = 1) from (0.6, -0.8) instead of its default
    (1, 0), checked by energy conservation."""

    TIGHT = {"rtol": 1e-10, "atol": 1e-12, "output_step": 1e-3}

    def test_q0_sets_the_start_and_the_swing(self):
        r = daedalus.run("pendulum", q0={"x": 0.6, "y": -0.8}, t_end=3.0,
                         **self.TIGHT)
        np.testing.assert_allclose(r.q[0], [0.6, -0.8], rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.v[0], [0.0, 0.0], rtol=0, atol=1e-12)
        # Released at rest: it never rises above its start and swings out
        # to the mirror point x = -0.6 (sampled every 1 ms, the turning
        # point is missed by ~g (0.5 ms)^2 / 2 ~ 1e-6).
        self.assertLessEqual(r.q[:, 1].max(), -0.8 + 1e-8)
        self.assertAlmostEqual(r.q[:, 0].min(), -0.6, delta=1e-5)

    def test_v0_adds_kinetic_energy(self):
        speed = 1.0  # along the tangent (0.8, 0.6) at (0.6, -0.8)
        r = daedalus.run("pendulum", q0={"x": 0.6, "y": -0.8},
                         v0={"x": 0.8 * speed, "y": 0.6 * speed}, t_end=3.0,
                         **self.TIGHT)
        np.testing.assert_allclose(r.v[0], [0.8, 0.6], rtol=0, atol=1e-12)
        g = r.params["g"]
        self.assertGreater(g, 9.0)
        # The bob rises by v^2 / (2 g) above its start.
        top = -0.8 + speed ** 2 / (2 * g)
        self.assertAlmostEqual(r.q[:, 1].max(), top, delta=1e-5)

    def test_bad_overrides_say_what(self):
        with self.assertRaisesRegex(ValueError, "unknown coordinate 'z'"):
            daedalus.run("pendulum", q0={"z": 1.0})
        with self.assertRaisesRegex(TypeError, "q0 must be a dict"):
            daedalus.run("pendulum", q0=[0.6, -0.8])
        with self.assertRaisesRegex(TypeError, r"v0\['x'\] must be a number"):
            daedalus.run("pendulum", v0={"x": "fast"})


if __name__ == "__main__":
    unittest.main()
