#!/usr/bin/env python3
"""The slider-crank written in Python (problems/models/slider_crank.cpp,
operation for operation) against the C++ model: damping matrix, other
loads, a quadrature and a functional, with numpy object arrays and
daedalus.sin/cos/sqrt; the same compiled programs, so the same runs."""
import math
import unittest

import numpy as np

import daedalus
from daedalus import cos, sin, sqrt


def slider_crank():
    b = daedalus.ModelBuilder("slider_crank")
    b.coordinates(["q", "x", "p"])
    b.parameter("a", 0.5, positive=True)
    b.parameter("J1", 1.0, positive=True)
    b.parameter("m2", 1.0, positive=True)
    b.parameter("J2", 2.0, positive=True)
    b.parameter("k", 1.0, nonnegative=True)
    b.parameter("c", 1.0, nonnegative=True)
    b.parameter("l0", 1.0)
    b.parameter("F", 1.0)

    def length(x):
        qq, aa = x.q, x.p.a
        l2 = (qq[1] * qq[1] - qq[1] * (cos(qq[2]) + aa * cos(qq[0])) +
              (1.0 + aa * aa) / 4.0 + aa * cos(qq[2] - qq[0]) / 2.0)
        return sqrt(l2)

    def kinetic(x):
        return 0.5 * (x.p.J1 * x.v[0] * x.v[0] + x.p.m2 * x.v[1] * x.v[1] +
                      x.p.J2 * x.v[2] * x.v[2])

    def potential(x):
        stretch = length(x) - x.p.l0
        return 0.5 * x.p.k * stretch * stretch

    def damping(x):
        qq, aa = x.q, x.p.a
        ll = length(x)
        g = np.array([
            (qq[1] * aa * sin(qq[0]) + aa * sin(qq[2] - qq[0]) / 2.0) /
            (2.0 * ll),
            (2.0 * qq[1] - (cos(qq[2]) + aa * cos(qq[0]))) / (2.0 * ll),
            (qq[1] * sin(qq[2]) - aa * sin(qq[2] - qq[0]) / 2.0) / (2.0 * ll),
        ], dtype=object)
        cg = x.p.c * g  # as Eigen evaluates c * g * g': (c g) g'
        return np.outer(cg, g)

    b.kinetic_energy(kinetic)
    b.potential_energy(potential)
    b.damping(damping)
    b.other_loads(lambda x: [0.0, x.p.F, -x.p.F * sin(x.q[2])])
    b.holonomic("loop_x",
                lambda x: x.q[1] - cos(x.q[2]) - x.p.a * cos(x.q[0]))
    b.holonomic("loop_y", lambda x: -sin(x.q[2]) - x.p.a * sin(x.q[0]))
    b.quadrature("G", kinetic)
    b.functional("G", running=kinetic)

    def initial(p):
        pp = math.asin(-p[0])  # libm's, as the C++ (numpy's may differ)
        return [math.pi / 2.0, math.cos(pp), pp], [0.0, 0.0, 0.0]

    return b.build(initial=initial, t_end=10.0, output_step=0.4, rtol=1e-6,
                   atol=1e-7, formulation="ggl", integrator="idas")


class SliderCrankInPython(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.py = slider_crank()

    def test_same_runs_as_the_cpp_model(self):
        for opts in (dict(), dict(formulation="baumgarte",
                                  integrator="cvodes-bdf")):
            a = daedalus.run(self.py, **opts)
            b = daedalus.run("slider_crank", **opts)
            self.assertEqual(a.summary["evaluator"], "compiled (interpreted)")
            self.assertEqual(len(a.t), 26)
            self.assertGreater(a.damping_loss[-1], 0.1)
            self.assertGreater(np.max(np.abs(a.other_work)), 0.1)
            # The same programs: the same bits.
            self.assertEqual(a.summary["stats"], b.summary["stats"])
            for k in ("q", "v", "lambda", "energy", "damping_loss",
                      "other_work", "quadratures"):
                np.testing.assert_array_equal(a[k], b[k],
                                              err_msg=f"{opts} {k}")

    def test_dual_number_path_agrees(self):
        # The tapes at the dual types against the C++ lambdas: the same
        # operations (bit-identical with g++ here; a compiler may contract
        # the inlined lambdas' arithmetic differently).
        a = daedalus.run(self.py, evaluator="ad")
        b = daedalus.run("slider_crank", evaluator="ad")
        self.assertTrue(a.summary["evaluator"].startswith("dual numbers"))
        np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(a.lambda_, b.lambda_, rtol=0, atol=1e-10)

    def test_forward_sensitivities_match(self):
        # "a" moves the initial state: its tangent comes from central
        # differences of the Python initial(p). GGL's sensitivities with
        # "a" need the multipliers' own tolerance (as the executable does:
        # `slider_crank --sens k,c,a` stalls at t = 1.4e-8 without it).
        opts = dict(t_end=2.0, sens=["k", "c", "a"], multiplier_atol=1.0)
        a = daedalus.run(self.py, **opts)
        b = daedalus.run("slider_crank", **opts)
        self.assertGreater(np.max(np.abs(b.sens)), 0.01)
        np.testing.assert_allclose(a.sens, b.sens, rtol=0, atol=1e-10)

    def test_adjoint_gradient_matches(self):
        pts = [[1.5, 0.7], [0.5, 2.0]]
        opts = dict(functional="G", vary=["k", "c"], t_end=1.0,
                    formulation="baumgarte", integrator="cvodes-bdf")
        a = daedalus.evaluate_batch(self.py, pts, **opts)
        b = daedalus.evaluate_batch("slider_crank", pts, **opts)
        self.assertTrue(np.all(a.ok), a.errors)
        self.assertGreater(np.max(np.abs(b.gradients)), 1e-3)
        np.testing.assert_allclose(a.values, b.values, rtol=1e-12)
        np.testing.assert_allclose(a.gradients, b.gradients, rtol=0,
                                   atol=1e-10)


if __name__ == "__main__":
    unittest.main()
