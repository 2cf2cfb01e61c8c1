#!/usr/bin/env python3
"""Example and test: the catalogue's pendulum written in Python
(docs/python.md) against the same model in C++
(problems/models/pendulum.cpp).

The Python functions perform the C++ lambdas' operations in the same order,
so recording gives the same expression graph: the compiled programs are
the same and the runs agree to the last bit. On the dual-number path
(evaluator="ad") the Python model is evaluated by its recorded tape at
every dual type, which must give the C++ lambdas' numbers too.
"""
import math
import unittest

import numpy as np

import daedalus

# problems/pendulum.hpp: g for a period of 2 s released from the horizontal.
G = 13.750371636040745654980191559621114395801712


def pendulum():
    b = daedalus.ModelBuilder("pendulum")
    b.coordinates(["x", "y"])
    b.parameter("m", 1.0, positive=True)
    b.parameter("l", 1.0, positive=True)
    b.parameter("g", G)
    b.kinetic_energy(
        lambda x: 0.5 * x.p.m * (x.v[0] * x.v[0] + x.v[1] * x.v[1]))
    b.potential_energy(lambda x: x.p.m * x.p.g * x.q[1])
    b.holonomic("rod", lambda x: x.q[0] * x.q[0] + x.q[1] * x.q[1] -
                x.p.l * x.p.l)
    return b.build(
        description="Planar pendulum in Cartesian coordinates (Python).",
        initial=lambda p: ([p[1], 0.0], [0.0, 0.0]),
        t_end=10.0, output_step=0.01)


class PendulumInPython(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.py = pendulum()

    def test_describes_the_same_model(self):
        cpp = daedalus.problem("pendulum")
        self.assertEqual(self.py.coordinates, cpp.coordinates)
        self.assertEqual(self.py.parameters, cpp.parameters)
        self.assertEqual(self.py.constraint_rows, ["rod"])

    def test_compiled_run_is_identical_to_the_cpp_model(self):
        for formulation, integrator in (("baumgarte", "cvodes-bdf"),
                                        ("ggl", "idas")):
            opts = dict(t_end=2.0, formulation=formulation,
                        integrator=integrator)
            a = daedalus.run(self.py, **opts)
            b = daedalus.run("pendulum", **opts)
            self.assertTrue(a.summary["evaluator"].startswith("compiled"),
                            a.summary["evaluator"])
            self.assertEqual(a.summary["evaluator"], b.summary["evaluator"])
            self.assertEqual(len(a.t), 201)
            # Same programs, same steps: the same bits.
            self.assertEqual(a.summary["stats"], b.summary["stats"])
            for k in ("t", "q", "v", "vdot", "lambda", "energy"):
                np.testing.assert_array_equal(a[k], b[k], err_msg=k)

    def test_dual_number_path_agrees_with_the_cpp_lambdas(self):
        a = daedalus.run(self.py, t_end=2.0, evaluator="ad")
        b = daedalus.run("pendulum", t_end=2.0, evaluator="ad")
        self.assertTrue(a.summary["evaluator"].startswith("dual numbers"))
        # Mathematically the same operations; the recording folds
        # constants and negations, which may move the last bit.
        scale = np.max(np.abs(b.q))
        self.assertGreater(scale, 0.5)
        np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(a.lambda_, b.lambda_, rtol=1e-10,
                                   atol=1e-10)

    def test_physics_of_the_python_model(self):
        r = daedalus.run(self.py, t_end=2.0, rtol=1e-10, atol=1e-12)
        self.assertEqual(r.q.shape, (201, 2))
        self.assertEqual(r.lambda_.shape, (201, 1))
        self.assertEqual(r.sens.shape, (201, 5, 0))
        # Released from (l, 0) at rest: after one period (2 s) it is back.
        np.testing.assert_allclose(r.q[-1], [1.0, 0.0], atol=1e-6)
        # Rod length held, energy conserved (no work terms).
        length = np.hypot(r.q[:, 0], r.q[:, 1])
        np.testing.assert_allclose(length, 1.0, atol=1e-8)
        self.assertLess(np.max(np.abs(r.energy - r.energy[0])), 1e-7)
        self.assertLess(r.summary["drift"]["position_max"], 1e-8)
        # At the bottom (x = 0, half a period) the rod pulls up with
        # m g + m v^2 / l = 3 m g: lambda = -3 g / (2 l) in
        # docs/conventions.md's signs (Phi = |q|^2 - l^2, J = 2 q').
        i = int(np.argmin(r.q[:100, 1]))
        self.assertAlmostEqual(r.t[i], 0.5, places=9)
        self.assertAlmostEqual(r.lambda_[i, 0], -1.5 * G, delta=1e-5 * G)

    def test_forward_sensitivities_match_the_cpp_model(self):
        opts = dict(t_end=1.0, sens=["l", "g"], rtol=1e-9, atol=1e-11)
        a = daedalus.run(self.py, **opts)
        b = daedalus.run("pendulum", **opts)
        self.assertEqual(a.sens_parameters, ["l", "g"])
        self.assertEqual(a.sens.shape, (101, 5, 2))
        self.assertGreater(np.max(np.abs(b.sens)), 0.1)
        np.testing.assert_allclose(a.sens, b.sens, rtol=0,
                                   atol=1e-9 * np.max(np.abs(b.sens)))

    def test_initial_state_from_the_parameters(self):
        q0, v0 = self.py.initial_state([1.0, 2.0, 9.81])
        np.testing.assert_array_equal(q0, [2.0, 0.0])
        np.testing.assert_array_equal(v0, [0.0, 0.0])
        r = daedalus.run(self.py, t_end=0.5, params={"l": 2.0})
        self.assertEqual(r.params["l"], 2.0)
        np.testing.assert_allclose(np.hypot(r.q[:, 0], r.q[:, 1]), 2.0,
                                   atol=1e-7)


class RecordedFunctions(unittest.TestCase):
    """Every operation a Python model may record, evaluated through the
    compiled programs and through the tapes at the dual types: the energy
    at the start is V(q0) with v0 = 0, against math's closed form."""

    TERMS = [
        (lambda a, b: daedalus.sin(a) * daedalus.cos(b),
         lambda a, b: math.sin(a) * math.cos(b)),
        (lambda a, b: daedalus.tan(a) + daedalus.exp(b) - daedalus.log(a),
         lambda a, b: math.tan(a) + math.exp(b) - math.log(a)),
        (lambda a, b: daedalus.sqrt(a) / (1.0 + b) - 2.0 / a,
         lambda a, b: math.sqrt(a) / (1.0 + b) - 2.0 / a),
        (lambda a, b: daedalus.sinh(a) + daedalus.cosh(b) * daedalus.tanh(a),
         lambda a, b: math.sinh(a) + math.cosh(b) * math.tanh(a)),
        (lambda a, b: daedalus.asin(b) + daedalus.acos(b) * daedalus.atan(a),
         lambda a, b: math.asin(b) + math.acos(b) * math.atan(a)),
        (lambda a, b: daedalus.atan2(a, b) + daedalus.atan2(1.5, b) +
         daedalus.atan2(a, -2.0),
         lambda a, b: math.atan2(a, b) + math.atan2(1.5, b) +
         math.atan2(a, -2.0)),
        (lambda a, b: a ** 2.5 + a ** b + 3.0 ** b + a ** 2 - abs(-b),
         lambda a, b: a ** 2.5 + a ** b + 3.0 ** b + a ** 2 - abs(-b)),
        (lambda a, b: -(a - b) + 4.0 - a * 0.5 + 1 / b,
         lambda a, b: -(a - b) + 4.0 - a * 0.5 + 1 / b),
        (lambda a, b: np.sin(np.array([a, b], dtype=object)).sum() +
         np.arctan2(a, 2.0) + np.sqrt(b),
         lambda a, b: math.sin(a) + math.sin(b) + math.atan2(a, 2.0) +
         math.sqrt(b)),
        (lambda a, b: daedalus.pow(a, b) + daedalus.pow(a, 3),
         lambda a, b: math.pow(a, b) + math.pow(a, 3)),
        # Selections (if_positive, clamp), both branches taken (a = 0.7,
        # b = 0.3).
        (lambda a, b: daedalus.if_positive(a - b, a * a, b) +
         daedalus.if_positive(b - a, 5.0, 2.0 * b) +
         daedalus.clamp(a, 0.0, 0.5) + daedalus.clamp(b, 0.0, 0.5) +
         daedalus.clamp(-b, 0.0, 1.0) + daedalus.if_positive(1.0, b, 9.0),
         lambda a, b: a * a + 2.0 * b + 0.5 + b + 0.0 + b),
    ]

    def test_each_function(self):
        q0 = [0.7, 0.3]
        for i, (f, ref) in enumerate(self.TERMS):
            b = daedalus.ModelBuilder("functions")
            b.coordinates(["a", "b"])
            b.kinetic_energy(lambda x: 0.5 * (x.v[0] * x.v[0] +
                                              x.v[1] * x.v[1]))
            b.potential_energy(lambda x, f=f: f(x.q[0], x.q[1]))
            p = b.build(q0=q0)
            want = ref(*q0)
            for evaluator in ("interpreted", "ad"):
                r = daedalus.run(p, t_end=0.01, evaluator=evaluator)
                self.assertAlmostEqual(r.energy[0], want,
                                       delta=1e-14 * max(1.0, abs(want)),
                                       msg=f"term {i}, {evaluator}")

    def test_selection_derivative_is_the_chosen_branch(self):
        # V = 3 q while q < 10 (the other branch, q^3, is never chosen):
        # a constant force -3 on a unit mass, q(t) = q0 - 1.5 t^2.
        b = daedalus.ModelBuilder("selection")
        b.coordinates(["q"])
        b.kinetic_energy(lambda x: 0.5 * x.v[0] * x.v[0])
        b.potential_energy(
            lambda x: daedalus.if_positive(x.q[0] - 10.0, x.q[0] ** 3,
                                           3.0 * x.q[0]))
        p = b.build(q0=[2.0])
        for evaluator in ("interpreted", "ad"):
            # Tight tolerances: the integration error stays below 1e-10.
            r = daedalus.run(p, t_end=0.5, evaluator=evaluator, rtol=1e-12,
                             atol=1e-14)
            self.assertAlmostEqual(r.q[-1, 0], 2.0 - 1.5 * 0.25, delta=1e-10,
                                   msg=evaluator)


if __name__ == "__main__":
    unittest.main()
