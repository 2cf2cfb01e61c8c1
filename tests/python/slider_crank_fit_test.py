#!/usr/bin/env python3
"""Example and test: fitting the slider-crank's spring stiffness k and
damping c to a noisy trajectory with scipy.optimize.least_squares, the
Jacobian of the residuals from forward sensitivities (docs/python.md).

The data: the three coordinates of the catalogue's slider-crank
(problems/models/slider_crank.cpp) with k = 2.5, c = 0.4, sampled every
0.1 s over 4 s, plus Gaussian noise of standard deviation 1e-3 (fixed
seed). The fit starts from the catalogue's k = c = 1.
"""
import unittest

import numpy as np
from scipy.optimize import least_squares

import daedalus

TRUE = np.array([2.5, 0.4])
SIGMA = 1e-3
# GGL on IDAS (the problem's default); at these tolerances the index-2
# multipliers need their own (they are not in the error test).
OPTIONS = dict(t_end=4.0, output_step=0.1, rtol=1e-10, atol=1e-12,
               multiplier_atol=1.0)


def simulate(theta, sens=False):
    return daedalus.run("slider_crank", params={"k": theta[0],
                                                "c": theta[1]},
                        **(dict(sens=["k", "c"]) if sens else {}), **OPTIONS)


class Fit:
    """Residuals q(t_i; k, c) - data and their Jacobian, one run for both
    (least_squares asks for the Jacobian at the point it just evaluated)."""

    def __init__(self, data):
        self.data = data
        self.cache = {}
        self.runs = 0

    def _run(self, theta):
        key = tuple(theta)
        if key not in self.cache:
            self.cache = {key: simulate(theta, sens=True)}
            self.runs += 1
        return self.cache[key]

    def residuals(self, theta):
        return (self._run(theta).q - self.data).ravel()

    def jacobian(self, theta):
        r = self._run(theta)
        # d q / d (k, c): the coordinate rows of the sensitivities.
        return r.sens[:, :3, :].reshape(-1, 2)


class SliderCrankFit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(7)
        clean = simulate(TRUE).q
        cls.data = clean + SIGMA * rng.standard_normal(clean.shape)

    def test_jacobian_against_central_differences(self):
        fit = Fit(self.data)
        theta = np.array([1.0, 1.0])
        jac = fit.jacobian(theta)
        self.assertEqual(jac.shape, (41 * 3, 2))
        # The differences need tighter tolerances than the fit: their noise
        # is about rtol / h of the solution (1e-9 here), their truncation
        # error O(h^2).
        tight = dict(OPTIONS, rtol=1e-12, atol=1e-14)
        h = 1e-3
        for j in range(2):
            e = np.zeros(2)
            e[j] = h
            runs = [daedalus.run("slider_crank",
                                 params={"k": th[0], "c": th[1]}, **tight)
                    for th in (theta + e, theta - e)]
            fd = (runs[0].q - runs[1].q).ravel() / (2 * h)
            scale = np.max(np.abs(jac[:, j]))
            self.assertGreater(scale, 1e-2)
            np.testing.assert_allclose(jac[:, j], fd, rtol=0,
                                       atol=1e-6 * scale)

    def test_least_squares_recovers_k_and_c(self):
        fit = Fit(self.data)
        sol = least_squares(fit.residuals, x0=[1.0, 1.0], jac=fit.jacobian,
                            bounds=([0.0, 0.0], [np.inf, np.inf]),
                            xtol=1e-12, ftol=1e-12, gtol=1e-12)
        self.assertTrue(sol.success, sol.message)
        # The residual at the optimum is the noise: its RMS is SIGMA.
        rms = np.sqrt(np.mean(sol.fun ** 2))
        self.assertAlmostEqual(rms, SIGMA, delta=0.2 * SIGMA)
        # Standard errors of (k, c) from the Jacobian at the optimum:
        # cov = sigma^2 (J'J)^-1. The estimate lies within 4 of them of
        # the truth; and they are a few percent of the values at most, so
        # that this says something (about 0.1 % for k and 1.6 % for c with
        # this data).
        jac = fit.jacobian(sol.x)
        stderr = SIGMA * np.sqrt(np.diag(np.linalg.inv(jac.T @ jac)))
        self.assertTrue(np.all(stderr < 0.05 * TRUE), stderr)
        np.testing.assert_array_less(np.abs(sol.x - TRUE), 4 * stderr)
        # Far from the start: the fit moved.
        self.assertGreater(abs(sol.x[0] - 1.0), 1.0)


if __name__ == "__main__":
    unittest.main()
