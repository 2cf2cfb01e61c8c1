#!/usr/bin/python3
"""The Python API at the edges of issue 40: options it ignored, names that
broke the files, a write outside output_dir, Ctrl-C in evaluate_batch.

Run with the module on the path (PYTHONPATH=build/python); CTest does.
"""
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import daedalus


def pendulum(name="pendulum", coords=("x", "y"), rod="rod"):
    b = daedalus.ModelBuilder(name)
    b.coordinates(list(coords))
    b.parameter("m", 1.0, positive=True)
    b.kinetic_energy(lambda x: 0.5 * x.p.m * (x.v[0] ** 2 + x.v[1] ** 2))
    b.potential_energy(lambda x: 9.81 * x.p.m * x.q[1])
    b.holonomic(rod, lambda x: x.q[0] ** 2 + x.q[1] ** 2 - 1.0)
    b.input("push", lambda x: [1.0, 0.0], lambda x: 0.1)
    return b


class IgnoredOptions(unittest.TestCase):
    def test_inverse_dynamics_is_refused_not_run_forward(self):
        # It ran a forward simulation and returned its results.
        with self.assertRaisesRegex(
                ValueError, r"inverse_dynamics='/nonexistent.csv': "
                r"daedalus.run integrates the model forward.*"
                r"--inverse-dynamics FILE.csv"):
            daedalus.run("pendulum", inverse_dynamics="/nonexistent.csv")

    def test_rho_inf_without_an_alpha_integrator_is_refused(self):
        with self.assertRaisesRegex(
                ValueError, "--rho-inf is the numerical damping of "
                "generalized-alpha and hht; --integrator idas has none"):
            daedalus.run("pendulum", formulation="ggl", rho_inf=0.5)

    def test_an_alpha_step_longer_than_the_output_step_is_refused(self):
        # It was silently replaced by the output step.
        with self.assertRaisesRegex(
                ValueError, "--step 0.05 is longer than the output step "
                "0.01"):
            daedalus.run("pendulum", integrator="hht", step=0.05,
                         output_step=0.01, t_end=0.1)

    def test_a_step_for_an_adaptive_integrator_is_refused(self):
        with self.assertRaisesRegex(ValueError,
                                    "chooses its own steps from --rtol"):
            daedalus.run("pendulum", step=0.001, t_end=0.1)


class Names(unittest.TestCase):
    def test_a_comma_in_a_coordinate_is_refused(self):
        with self.assertRaisesRegex(
                ValueError, r"the coordinate name \"x,1\" holds a comma"):
            pendulum(coords=("x,1", "y")).build(q0=[1.0, 0.0])

    def test_an_empty_constraint_name_is_refused(self):
        with self.assertRaisesRegex(ValueError,
                                    "a constraint has an empty name"):
            pendulum(rod="").build(q0=[1.0, 0.0])

    def test_a_model_named_outside_its_folder_writes_nothing(self):
        # "../../evil" with a counterfactual wrote evil.counterfactual1.csv
        # two folders above output_dir.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "a", "b", "out")
            os.makedirs(out)
            with self.assertRaisesRegex(
                    ValueError, r"the model name \"../../evil\" holds a "
                    "slash"):
                p = pendulum("../../evil").build(q0=[1.0, 0.0])
                daedalus.run(p, t_end=0.2, output_dir=out,
                             counterfactual=["ztcf:push@0.1"])
            written = [os.path.join(d, f) for d, _, fs in os.walk(tmp)
                       for f in fs]
            self.assertEqual(written, [])

    def test_a_good_model_writes_its_counterfactual_in_output_dir(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = pendulum("swing").build(q0=[1.0, 0.0])
            r = daedalus.run(p, t_end=0.2, output_dir=tmp,
                             counterfactual=["ztcf:push@0.1"])
            self.assertTrue(r.ok, r.error)
            self.assertEqual(os.listdir(tmp), ["swing.counterfactual1.csv"])


class NonFiniteModels(unittest.TestCase):
    def test_a_nan_mass_in_the_kinetic_energy_names_the_cause(self):
        b = daedalus.ModelBuilder("bad_mass")
        b.coordinates(["x"])
        b.kinetic_energy(lambda x: 0.5 * math.nan * x.v[0] ** 2)
        # Refused where it is declared, naming the energy and the value.
        with self.assertRaisesRegex(
                ValueError, "kinetic_energy of model 'bad_mass': the "
                "expression holds the non-finite constant nan"):
            b.build(q0=[0.0], v0=[1.0])

    def test_a_text_mass_is_a_type_error_naming_it(self):
        b = daedalus.ModelBuilder("text_mass")
        with self.assertRaisesRegex(TypeError,
                                    "parameter 'm': the default is a number"):
            b.parameter("m", "heavy")


class FoundByTheFuzzer(unittest.TestCase):
    """Cases of tests/robustness/fuzz_edges.py --surface python."""

    def test_an_int_beyond_double_range_is_a_value_error(self):
        # It was OverflowError: int too large to convert to float.
        with self.assertRaisesRegex(
                ValueError, "option t_end: the whole number of 401 digits "
                "is beyond the range of a double"):
            daedalus.run("pendulum", t_end=10 ** 400)
        with self.assertRaisesRegex(ValueError, "the default 1000.* is not "
                                    "finite"):
            daedalus.ModelBuilder("m").parameter("m", 10 ** 400)
        b = daedalus.ModelBuilder("m")
        b.coordinates(["x"])
        b.kinetic_energy(lambda x: 0.5 * x.v[0] ** 2)
        with self.assertRaisesRegex(ValueError, "build: v0 holds a whole "
                                    "number beyond the range of a double"):
            b.build(q0=[0.0], v0=[10 ** 400])

    def test_an_index_past_the_coordinates_names_the_vector(self):
        # It was IndexError: list index out of range.
        b = daedalus.ModelBuilder("one")
        b.coordinates(["x"])
        b.kinetic_energy(lambda x: 0.5 * x.v[0] ** 2)
        b.potential_energy(lambda x: x.q[1])
        with self.assertRaisesRegex(
                IndexError, r"x.q\[1\]: index out of range, it has 1 entry "
                r"\(x\)"):
            b.build(q0=[0.0])

    def test_a_function_returning_a_huge_int_is_a_value_error(self):
        b = daedalus.ModelBuilder("huge")
        b.coordinates(["x"])
        b.kinetic_energy(lambda x: 0.5 * x.v[0] ** 2)
        b.potential_energy(lambda x: 10 ** 400)
        with self.assertRaisesRegex(
                ValueError, "potential_energy of model 'huge': returned the "
                "constant"):
            b.build(q0=[0.0])


class CtrlC(unittest.TestCase):
    def test_evaluate_batch_answers_ctrl_c_within_a_member(self):
        # Members of about 20 s each: it waited for the member to end
        # (26.7 s) before it looked at the signal.
        code = (
            "import daedalus, sys\n"
            "print('started', flush=True)\n"
            "try:\n"
            "    daedalus.evaluate_batch('slider_crank', [[1.0], [1.1]],\n"
            "        functional='G', vary=['k'], t_end=2e4, rtol=1e-10,\n"
            "        atol=1e-12, formulation='baumgarte',\n"
            "        integrator='cvodes-bdf')\n"
            "except KeyboardInterrupt as e:\n"
            "    print('KeyboardInterrupt:', e, flush=True)\n"
            "    sys.exit(42)\n")
        # SIGINT at its default disposition in the child, whatever this
        # test inherited (Python keeps a SIGINT it starts with ignored).
        p = subprocess.Popen([sys.executable, "-c", code],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=lambda: signal.signal(
                                 signal.SIGINT, signal.SIG_DFL))
        self.assertEqual(p.stdout.readline().strip(), "started")
        time.sleep(1.5)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertLess(time.monotonic() - t0, 1.0, err)
        self.assertEqual(p.returncode, 42, err)
        self.assertIn("KeyboardInterrupt: evaluate_batch of 'slider_crank' "
                      "interrupted after 0 of 2 members", out)


if __name__ == "__main__":
    unittest.main()
