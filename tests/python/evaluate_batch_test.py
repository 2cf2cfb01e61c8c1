#!/usr/bin/env python3
"""daedalus.evaluate_batch (include/daedalus/ensemble.hpp): values and
adjoint gradients of the slider-crank's functional G = int T dt for a batch
of (k, c), against central differences of the values, against the
quadrature G of single runs, and with a member that cannot run."""
import unittest

import numpy as np

import daedalus

OPTIONS = dict(t_end=1.0, rtol=1e-10, atol=1e-12, formulation="baumgarte",
               integrator="cvodes-bdf")


class EvaluateBatch(unittest.TestCase):
    def test_values_and_gradients(self):
        h = 1e-4
        base = np.array([1.5, 0.7])
        pts = [base, base + [h, 0], base - [h, 0], base + [0, h],
               base - [0, h], [-1.0, 0.7]]
        b = daedalus.evaluate_batch("slider_crank", pts, functional="G",
                                    vary=["k", "c"], **OPTIONS)
        self.assertEqual(b.vary, ["k", "c"])
        self.assertEqual(b.values.shape, (6,))
        self.assertEqual(b.gradients.shape, (6, 2))
        self.assertTrue(np.all(b.ok[:5]), b.errors)
        # The member outside its range fails alone, saying why.
        self.assertFalse(b.ok[5])
        self.assertIn("'k'", b.errors[5])
        self.assertTrue(np.isnan(b.values[5]))
        self.assertTrue(np.all(np.isnan(b.gradients[5])))
        # Gradient against central differences of the batch's own values.
        fd = [(b.values[1] - b.values[2]) / (2 * h),
              (b.values[3] - b.values[4]) / (2 * h)]
        self.assertGreater(np.max(np.abs(b.gradients[0])), 1e-3)
        for g, d in zip(b.gradients[0], fd):
            self.assertAlmostEqual(g, d, delta=1e-5 * (1 + abs(d)))
        # The value is the time integral of T, the model's quadrature G.
        r = daedalus.run("slider_crank", params={"k": 1.5, "c": 0.7},
                         **OPTIONS)
        self.assertGreater(b.values[0], 0.0)
        self.assertAlmostEqual(b.values[0], r.quadratures[-1, 0],
                               delta=1e-7 * b.values[0])
        self.assertEqual(b.summaries[0]["sensitivities"]["method"],
                         "adjoint")

    def test_vary_a_subset_with_other_parameters_set(self):
        b = daedalus.evaluate_batch("slider_crank", [[0.3], [0.6]],
                                    functional="G", vary=["c"],
                                    params={"k": 1.5}, **OPTIONS)
        self.assertTrue(np.all(b.ok), b.errors)
        self.assertEqual(b.gradients.shape, (2, 1))
        self.assertEqual(b.summaries[1]["parameters"]["k"], 1.5)
        self.assertEqual(b.summaries[1]["parameters"]["c"], 0.6)
        full = daedalus.evaluate_batch("slider_crank", [[1.5, 0.6]],
                                       functional="G", vary=["k", "c"],
                                       **OPTIONS)
        self.assertEqual(b.values[1], full.values[0])
        self.assertEqual(b.gradients[1, 0], full.gradients[0, 1])

    def test_python_model_functional(self):
        # A Python model's functional: G = int (x^2 + y^2) dt of a free
        # particle under a spring of stiffness k, which gives closed forms.
        bld = daedalus.ModelBuilder("spring")
        bld.coordinates(["x"])
        bld.parameter("k", 4.0, positive=True)
        bld.kinetic_energy(lambda x: 0.5 * x.v[0] * x.v[0])
        bld.potential_energy(lambda x: 0.5 * x.p.k * x.q[0] * x.q[0])
        bld.functional("X2", running=lambda x: x.q[0] * x.q[0])
        problem = bld.build(q0=[1.0], v0=[0.0])
        # x = cos(w t), w = sqrt(k): int_0^T cos^2 = T/2 + sin(2 w T)/(4 w)
        T = 1.0
        b = daedalus.evaluate_batch(problem, [[4.0], [9.0]],
                                    functional="X2", t_end=T, rtol=1e-10,
                                    atol=1e-12)
        self.assertTrue(np.all(b.ok), b.errors)
        for i, k in enumerate([4.0, 9.0]):
            w = np.sqrt(k)
            value = T / 2 + np.sin(2 * w * T) / (4 * w)
            # d/dk = d/dw * dw/dk, dw/dk = 1 / (2 w)
            dvdw = np.cos(2 * w * T) * T / (2 * w) - np.sin(2 * w * T) / (
                4 * w * w)
            self.assertAlmostEqual(b.values[i], value, delta=1e-8)
            self.assertAlmostEqual(b.gradients[i, 0], dvdw / (2 * w),
                                   delta=1e-6)

    def test_bad_requests(self):
        with self.assertRaisesRegex(ValueError, "'zz' is not a parameter"):
            daedalus.evaluate_batch("slider_crank", [[1.0]],
                                    functional="G", vary=["zz"])
        with self.assertRaisesRegex(ValueError, "M x 2"):
            daedalus.evaluate_batch("slider_crank", [[1.0, 2.0, 3.0]],
                                    functional="G", vary=["k", "c"])
        with self.assertRaisesRegex(ValueError, "finite"):
            daedalus.evaluate_batch("slider_crank", [[np.nan]],
                                    functional="G", vary=["k"])
        with self.assertRaisesRegex(ValueError, "nope"):
            daedalus.evaluate_batch("slider_crank", [[1.0]],
                                    functional="nope", vary=["k"],
                                    **OPTIONS)
        with self.assertRaises(TypeError):
            daedalus.evaluate_batch("slider_crank", [[1.0]],
                                    functional="G", vary=["k"], sens=["c"])


if __name__ == "__main__":
    unittest.main()
