#!/usr/bin/env python3
"""Bad input from Python gives a clear Python exception, never a crash
(docs/python.md): options, parameters, problems, and Python models whose
functions raise, return the wrong rows, or branch on the state."""
import math
import signal
import subprocess
import sys
import time
import unittest

import numpy as np

import daedalus


def builder():
    b = daedalus.ModelBuilder("bead")
    b.coordinates(["x", "y"])
    b.parameter("m", 1.0, positive=True)
    b.kinetic_energy(lambda x: 0.5 * x.p.m * (x.v[0] ** 2 + x.v[1] ** 2))
    b.potential_energy(lambda x: 9.81 * x.p.m * x.q[1])
    return b


class Options(unittest.TestCase):
    def test_unknown_option(self):
        with self.assertRaisesRegex(ValueError, "unknown option '--t-ned'"):
            daedalus.run("pendulum", t_ned=1.0)

    def test_wrong_types(self):
        with self.assertRaisesRegex(ValueError, "--t-end"):
            daedalus.run("pendulum", t_end="soon")
        with self.assertRaisesRegex(TypeError, "t_end"):
            daedalus.run("pendulum", t_end=[1.0])
        with self.assertRaisesRegex(TypeError, "takes a value"):
            daedalus.run("pendulum", rtol=True)
        with self.assertRaisesRegex(TypeError, "params must be a dict"):
            daedalus.run("pendulum", params=[("l", 2.0)])
        with self.assertRaisesRegex(TypeError, r"params\['l'\]"):
            daedalus.run("pendulum", params={"l": "long"})
        with self.assertRaisesRegex(TypeError, "Problem or a catalogue"):
            daedalus.run(42)

    def test_non_finite_values(self):
        for bad in (math.nan, math.inf, -math.inf):
            with self.assertRaisesRegex(ValueError, "not a finite number"):
                daedalus.run("pendulum", t_end=bad)
            with self.assertRaisesRegex(ValueError, "not a finite number"):
                daedalus.run("pendulum", params={"g": bad})

    def test_bad_values(self):
        with self.assertRaisesRegex(ValueError, "unknown parameter"):
            daedalus.run("pendulum", params={"length": 2.0})
        with self.assertRaisesRegex(ValueError, "'l'"):
            daedalus.run("pendulum", params={"l": -1.0})
        with self.assertRaisesRegex(ValueError, "formulation"):
            daedalus.run("pendulum", formulation="magic")
        with self.assertRaisesRegex(TypeError, "'help'"):
            daedalus.run("pendulum", help=True)
        with self.assertRaisesRegex(ValueError, "unknown sensitivity"):
            daedalus.run("pendulum", sens=["mass"])

    def test_problems(self):
        with self.assertRaisesRegex(ValueError, "unknown problem 'pendulm'"):
            daedalus.run("pendulm")
        with self.assertRaisesRegex(ValueError, "relative"):
            daedalus.problem("rod_pair", coordinates="polar")
        with self.assertRaisesRegex(ValueError, r"\[1, 10000\]"):
            daedalus.problem("chain", bodies=0)
        with self.assertRaisesRegex(TypeError, "no option 'bodies'"):
            daedalus.problem("pendulum", bodies=3)
        with self.assertRaisesRegex(TypeError, "its options: dynamics"):
            daedalus.problem("golfer_3d", bodies=3)
        with self.assertRaisesRegex(ValueError, "valid: auto energy recursive"):
            daedalus.problem("four_bar_mb", dynamics="lagrange")
        with self.assertRaisesRegex(ValueError, "--dynamics recursive"):
            daedalus.problem("chain_reduced", bodies=300, dynamics="energy")

    def test_a_failed_run_raises_with_its_result(self):
        with self.assertRaises(daedalus.RunFailed) as cm:
            daedalus.run("pendulum", t_end=5.0, max_steps=3)
        r = cm.exception.result
        self.assertFalse(r.ok)
        self.assertEqual(r.summary["status"], "failed")
        self.assertIn("failed", str(cm.exception))
        self.assertLess(len(r.t), 501)
        r2 = daedalus.run("pendulum", t_end=5.0, max_steps=3, check=False)
        self.assertFalse(r2.ok)
        self.assertEqual(r2.error, r.error)


    def test_ctrl_c_ends_a_run_with_keyboard_interrupt(self):
        # A run of about a minute, interrupted after half a second.
        code = ("import daedalus\n"
                "print('started', flush=True)\n"
                "daedalus.run('pendulum', t_end=5e6, output_step=5e6)\n")
        start = time.monotonic()
        p = subprocess.Popen([sys.executable, "-c", code],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        self.assertEqual(p.stdout.readline().strip(), "started")
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertLess(time.monotonic() - start, 30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("KeyboardInterrupt: run of 'pendulum' interrupted", err)


class PythonModels(unittest.TestCase):
    def test_a_function_that_raises(self):
        b = builder()
        b.holonomic("wire", lambda x: x.q[0] / undefined_name)  # noqa: F821
        with self.assertRaises(NameError) as cm:
            b.build()
        self.assertIn("holonomic 'wire' of model 'bead'",
                      " ".join(cm.exception.__notes__))

    def test_wrong_number_of_rows(self):
        b = builder()
        b.holonomic("wire", lambda x: [x.q[0], x.q[1]], rows=1)
        with self.assertRaisesRegex(ValueError, "returned 2 value.*expected 1"):
            b.build()
        b = builder()
        b.other_loads(lambda x: [0.0])
        with self.assertRaisesRegex(ValueError, "other_loads.*expected 2"):
            b.build()
        b = builder()
        b.damping(lambda x: [[1.0, 0.0]])
        with self.assertRaisesRegex(ValueError, r"shape \(1, 2\)"):
            b.build()

    def test_wrong_return_types(self):
        b = builder()
        b.holonomic("wire", lambda x: None)
        with self.assertRaisesRegex(TypeError, "not NoneType"):
            b.build()
        b = builder()
        b.holonomic("wire", lambda x: "x - y")
        with self.assertRaisesRegex(TypeError, "not str"):
            b.build()
        b = builder()
        b.holonomic("wire", lambda x: x.q[0] - math.inf)
        with self.assertRaisesRegex(ValueError, "holonomic 'wire'.*non-finite "
                                    "constant inf"):
            b.build()
        b = builder()
        b.potential_energy(lambda x: x.q[1] * math.nan)
        with self.assertRaisesRegex(ValueError, "potential_energy.*nan"):
            b.build()

    def test_branching_on_the_state_is_not_traceable(self):
        b = builder()
        b.holonomic("wire", lambda x: x.q[0] if x.q[1] > 0 else x.q[1])
        with self.assertRaisesRegex(daedalus.NotTraceableError,
                                    "holonomic 'wire'.*recorded once"):
            b.build()
        b = builder()
        b.holonomic("wire", lambda x: math.sin(x.q[0]) - x.q[1])
        with self.assertRaisesRegex(daedalus.NotTraceableError,
                                    "daedalus.sin"):
            b.build()
        self.assertTrue(issubclass(daedalus.NotTraceableError, TypeError))

    def test_symbols_of_two_models_do_not_mix(self):
        keep = {}

        def grab(x):
            keep["q"] = x.q[0]
            return x.q[0] * x.q[0]

        b = builder()
        b.holonomic("wire", grab)
        b.build()
        c = builder()
        c.holonomic("wire", lambda x: x.q[0] - keep["q"])
        with self.assertRaisesRegex(ValueError, "different model recordings"):
            c.build()

    def test_bad_declarations(self):
        with self.assertRaisesRegex(ValueError, "no coordinates"):
            daedalus.ModelBuilder("empty").build()
        with self.assertRaisesRegex(ValueError, "not finite"):
            builder().parameter("k", math.nan)
        with self.assertRaisesRegex(TypeError, "function of x"):
            builder().holonomic("wire", 3.0)
        b = builder()
        b.holonomic("wire", lambda x: x.q[0], rows=0)
        with self.assertRaisesRegex(ValueError, "rows must be"):
            b.build()
        b = builder()
        b.parameter("m", 2.0)  # a second 'm'
        with self.assertRaisesRegex(ValueError, "'m'"):
            b.build()
        with self.assertRaisesRegex(KeyError, "x.p has no 'mass'"):
            b = builder()
            b.holonomic("wire", lambda x: x.q[0] - x.p["mass"])
            b.build()

    def test_bad_initial_states(self):
        b = builder()
        b.holonomic("wire", lambda x: x.q[1] - x.q[0])
        with self.assertRaisesRegex(ValueError, "q0 has 3 entries"):
            b.build(q0=[1.0, 1.0, 1.0])
        with self.assertRaisesRegex(ValueError, "not finite"):
            b.build(q0=[1.0, np.nan])
        p = b.build(initial=lambda p: ([1.0], [0.0, 0.0]))
        with self.assertRaisesRegex(ValueError, "initial q0 has 1 entries"):
            daedalus.run(p, t_end=0.1)
        p = b.build(initial=lambda p: 1 / 0)
        with self.assertRaises(ZeroDivisionError):
            daedalus.run(p, t_end=0.1)
        p = b.build(initial=lambda p: [1.0, 1.0])
        with self.assertRaisesRegex(ValueError, "initial q0 must be a "
                                    "sequence of 2 numbers"):
            daedalus.run(p, t_end=0.1)
        p = b.build(initial=lambda p: {"q0": [1.0, 1.0]})
        with self.assertRaisesRegex(ValueError, r"tuple \(q0, v0\), not dict"):
            daedalus.run(p, t_end=0.1)
        with self.assertRaisesRegex(TypeError, "function of the parameters"):
            b.build(initial=3)

    def test_a_non_finite_evaluation_fails_the_run_with_its_name(self):
        b = builder()
        b.holonomic("wire", lambda x: daedalus.log(x.q[0]) - x.q[1])
        p = b.build(q0=[-1.0, 0.0])
        with self.assertRaises((daedalus.RunFailed, ValueError)) as cm:
            daedalus.run(p, t_end=0.1)
        self.assertIn("wire", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
