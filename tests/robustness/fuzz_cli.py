#!/usr/bin/python3
"""Bounded fuzzer over the command line of the problem executables
(issue 18, item 5).

Each run draws one executable and a random command line: flags with valid
values, edge values and garbage, attached (`--rtol=1e-6`) or separate,
repeated, unknown or missing their value, problem options and parameters
(names and ranges read from `--help`). The run goes into a fresh folder
whose output directory already holds sentinel <name>.csv/<name>.json, and
must satisfy cli_checks (no signal, no hang, exit 0/1/2; ok => finite
outputs reaching the requested end; failed => "failed" with an error;
usage error => nothing touched).

Run i of seed S is drawn from its own generator, so a failure is
reproduced by `fuzz_cli.py --bin B --seed S --run i` (printed with it).

Usage: fuzz_cli.py --bin BUILD/problems [--runs N] [--seed S] [--jobs J]
                   [--exe NAME]... [--timeout SECONDS] [--max-seconds T]
                   [--summary FILE] [--log FILE]
Prints the counts (runs, exit 0/1/2, crashes, hangs, silent-ok and other
violations) and exits 1 when any run violated the contract.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shlex
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_checks  # noqa: E402

DEFAULT_EXES = ["pendulum", "chain", "slider_crank", "rolling_disk",
                "golf_swing", "four_bar"]

GARBAGE = ["", " 1", "1 ", "0x10", "1e", "e5", "-", "+", ".", "inf", "-inf",
           "nan", "NaN", "1,5", "1.2.3", "+-1", "1e400", "-1e400", "1e-400",
           "1_000", "0b1", "1/2", "\t1", "one", "\u0663", "1e+", "--1",
           "0x1p3", "1d0", "٫5"]
FORMULATIONS = ["unstabilized", "baumgarte", "projection", "ggl", "index3"]
INTEGRATORS = ["cvodes-bdf", "cvodes", "cvodes-adams", "idas",
               "stormer-verlet", "symplectic-euler", "rattle",
               "generalized-alpha", "hht"]
FIXED_STEP = {"stormer-verlet", "symplectic-euler", "rattle"}
DEFAULT_MAX_STEPS = 10000
KKT = ["auto", "dense", "full-lu", "schur", "sparse-lu", "sparse-cholesky",
       "qr"]


def fmt(rng, x):
    """A number as a user might type it."""
    r = rng.random()
    if r < 0.5:
        return repr(float(x))
    if r < 0.8:
        return f"{x:.3g}"
    if r < 0.9:
        return f"{x:.6e}".replace("e", "E")
    return ("+" if x >= 0 else "") + f"{x:g}"


def draw(rng, lo, hi, edges, log=True, p_valid=0.85, p_edge=0.1):
    """Valid (log-)uniform value in [lo, hi], an edge value, or garbage."""
    r = rng.random()
    if r < p_valid:
        if log:
            import math
            x = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        else:
            x = rng.uniform(lo, hi)
        return fmt(rng, x)
    if r < p_valid + p_edge:
        return rng.choice(edges)
    return rng.choice(GARBAGE)


def pick(rng, valid, garbage):
    """A valid name, or rarely a wrong one."""
    return rng.choice(garbage) if rng.random() < 0.05 else rng.choice(valid)


def count(rng, lo, hi, edges):
    r = rng.random()
    if r < 0.85:
        return str(rng.randint(lo, hi))
    if r < 0.95:
        return rng.choice(edges)
    return rng.choice(GARBAGE)


class Draw:
    """One random command line for one executable."""

    def __init__(self, rng, exe, info):
        self.rng, self.exe, self.info = rng, exe, info
        self.items = []  # (flag, value or None)

    def add(self, flag, value=None):
        self.items.append((flag, value))

    def t_end(self):
        # Short runs: the long ones are refused by --max-samples or are
        # the problem's default.
        cap = min(2.0, self.info["t_end"] or 2.0)
        return draw(self.rng, 1e-3, cap,
                    ["0", "-1", "1e-300", "1e-12", "1e17", "1e300", "1e6",
                     "-0", "0.0", "5e-324"])

    def param(self):
        rng = self.rng
        params = self.info["params"]
        if not params or rng.random() < 0.05:
            return f"nosuch={fmt(rng, 1.0)}"
        name = rng.choice(sorted(params))
        default, _ = params[name]
        r = rng.random()
        if r < 0.75:
            base = default if default != 0 else 1.0
            value = fmt(rng, base * rng.uniform(0.5, 2.0))
        elif r < 0.93:
            value = rng.choice(["0", "-1", "-0", "1e308", "-1e308", "1e-308",
                                "1e10", "-1e10", "1e-10", "5e-324",
                                fmt(rng, -default)])
        else:
            value = rng.choice(GARBAGE)
        if rng.random() < 0.03:
            return name  # no "="
        return f"{name}={value}"

    def one_flag(self):
        rng = self.rng
        out_step = self.info["output_step"] or 0.01
        choices = [
            ("--output-step", lambda: draw(
                rng, 1e-3, 0.5, ["0", "-0.01", "1e-300", "1e-9", "1e9",
                                 "1e300", "5e-324"])),
            ("--rtol", lambda: draw(rng, 1e-10, 1e-3,
                                    ["0", "1", "0.999", "1e-16", "1e-300",
                                     "-1e-6", "2"])),
            ("--atol", lambda: draw(rng, 1e-12, 1e-4,
                                    ["0", "1e-300", "1e300", "-1", "1e-20",
                                     "1"])),
            ("--formulation", lambda: pick(rng, FORMULATIONS, ["bogus", ""])),
            ("--integrator", lambda: pick(rng, INTEGRATORS, ["rk4", ""])),
            ("--baumgarte-alpha", lambda: draw(
                rng, 0.1, 100, ["0", "-1", "1e100", "1e300", "1e6", "1e-300"])),
            ("--baumgarte-beta", lambda: draw(
                rng, 0.1, 100, ["0", "-1", "1e100", "1e300", "1e6", "1e-300"])),
            ("--kkt", lambda: pick(rng, KKT, ["lu", ""])),
            ("--drift-tol", lambda: draw(rng, 1e-9, 1e-2,
                                         ["0", "-1", "1e300", "1e-300"])),
            ("--drift-action", lambda: pick(rng, ["fail", "escalate"],
                                             ["ignore"])),
            ("--max-steps", lambda: count(rng, 1, 20000,
                                          ["0", "-1", "1.5", "1e3",
                                           "99999999999999999999"])),
            ("--max-samples", lambda: count(rng, 1, 1000000,
                                            ["0", "-5", "2.0",
                                             "9223372036854775807"])),
            ("--multiplier-atol", lambda: draw(rng, 1e-10, 1e-4,
                                               ["0", "-1", "1e-300"])),
            ("--evaluator", lambda: pick(rng, ["compiled", "interpreted",
                                                  "ad"], ["jit"])),
            ("--linear-solver", lambda: pick(rng, ["dense", "klu"], ["lu"])),
            ("--jacobian", lambda: pick(rng, ["ad", "dq"], ["fd"])),
            ("--param", self.param),
            ("--sens", lambda: ",".join(rng.sample(
                sorted(self.info["params"]) + ["q0[0]", "v0[0]", "bogus"],
                rng.randint(1, 2)))),
            ("--sens-method", lambda: pick(rng, ["forward", "adjoint"],
                                            ["backward"])),
            ("--counterfactual", lambda: rng.choice(
                ["zvcf@all", "pointwise-ztcf@all", "zvcf@0.05",
                 "ztcf@0.05", "ztcf@-1", "ztcf@1e9", "zvcf", "bogus@1",
                 "ztcf:nosuch@0.05"])),
            ("--step", lambda: draw(rng, out_step / 20, out_step,
                                    ["0", "-1e-3", "1e-9", "1e300"])),
            # Issue 40: refused without an alpha scheme; a second run.
            ("--rho-inf", lambda: draw(rng, 0.0, 1.0,
                                       ["-0.1", "1.5", "nan", "0.4"],
                                       log=False)),
            ("--error-estimate", lambda: None),
        ]
        weights = [4, 3, 3, 4, 4, 2, 2, 3, 2, 1, 2, 1, 1, 2, 1, 1, 5, 1, 1,
                   1, 1, 1, 1]
        flag, gen = rng.choices(choices, weights)[0]
        self.add(flag, gen())

    def fixed_step_pair(self):
        # A consistent --output-step / --step pair for the fixed-step
        # schemes (the step must divide the output step).
        rng = self.rng
        h = rng.choice([0.002, 0.005, 0.01, 0.02, 0.05])
        self.add("--output-step", fmt(rng, h))
        self.add("--step", repr(h / rng.choice([1, 2, 4, 5, 10])))

    def build(self, outdir, tmp):
        rng = self.rng
        if rng.random() < 0.85:
            self.add("--t-end", self.t_end())
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4, 6])):
            self.one_flag()
        if any(f == "--integrator" and v in FIXED_STEP
               for f, v in self.items) and rng.random() < 0.8:
            self.fixed_step_pair()
        for name, (lo, hi) in self.info["int_options"].items():
            if rng.random() < 0.3:
                self.add("--" + name,
                         count(rng, lo, min(hi, 12),
                               ["0", str(hi + 1), "-1", "2.5", "1e9"]))
        r = rng.random()
        if r < 0.96:
            self.add("--output-dir", outdir)
        elif r < 0.98:
            afile = os.path.join(tmp, "afile")
            with open(afile, "w", encoding="utf-8") as fh:
                fh.write("a file\n")
            self.add("--output-dir", rng.choice([afile, afile + "/sub"]))
        else:
            self.add("--output-dir", "/proc/daedalus_fuzz")
        if rng.random() < 0.85:
            self.add("--quiet")
        if rng.random() < 0.01:
            self.add("--help")
        if rng.random() < 0.03:
            self.add(rng.choice(["--bogus", "-q", "--t_end", "--Quiet",
                                 "--quiet=yes", "t-end", "--"]))
        rng.shuffle(self.items)
        # A stalled integrator fails after the run's budget of --max-steps
        # steps; the default (5000000) takes minutes on some stalls
        # (golf_swing --formulation index3), so the fuzzer starts from a
        # lower budget that a drawn --max-steps overrides (the last wins).
        argv = ["--max-steps", str(DEFAULT_MAX_STEPS)]
        for flag, value in self.items:
            if value is None:
                argv.append(flag)
            elif rng.random() < 0.2:
                argv.append(f"{flag}={value}")
            else:
                argv += [flag, value]
        if rng.random() < 0.03:
            argv.append(rng.choice(["--t-end", "--param", "--rtol",
                                    "--output-dir"]))
        return argv


def last_value(argv, flag, default=None):
    """The value of the last `flag` on the command line (the last wins)."""
    value = default
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == flag and i + 1 < len(argv):
            value, i = argv[i + 1], i + 2
            continue
        if a.startswith(flag + "="):
            value = a.split("=", 1)[1]
        i += 1
    return value


def as_float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


CATEGORIES = ["crash", "hang", "silent_ok", "failed_contract",
              "usage_touched", "bad_message"]


def check(res, argv, tmp, outdir, name, info, before):
    """(category, details) pairs for everything wrong with one run."""
    kind = cli_checks.classify(res)
    if kind == "hang":
        return [("hang", cli_checks.describe(res))]
    if kind:
        return [("crash", cli_checks.describe(res))]
    found = []
    if res.rc in (1, 2):
        if not res.stderr.strip():
            found.append(("bad_message", f"exit {res.rc} with no message"))
        for m in cli_checks.message_violations(res.stderr):
            found.append(("bad_message", m))
    after = cli_checks.snapshot(tmp)
    changed = {p for p in cli_checks.changes(before, after)
               if not (p not in before and after[p] == ("dir",))}
    if res.rc == 2 or (res.rc == 0 and "--help" in argv):
        if changed:
            found.append(("usage_touched", f"exit {res.rc} touched " +
                          ", ".join(sorted(changed))))
        return found
    t_end = as_float(last_value(argv, "--t-end", info["t_end"]))
    step = None
    if last_value(argv, "--integrator") in FIXED_STEP:
        step = as_float(last_value(argv, "--step"))
    where = last_value(argv, "--output-dir", outdir)
    if not os.path.isdir(where):
        where = os.path.join(tmp, where)
    bad = cli_checks.output_violations(res, where, name, t_end, step)
    cat = "silent_ok" if res.rc == 0 else "failed_contract"
    found += [(cat, b) for b in bad]
    return found


def one_run(args, infos, i):
    rng = random.Random(f"{args.seed}/{i}")
    name = rng.choice(args.exe)
    tmp = tempfile.mkdtemp(prefix="daedalus_fuzz_")
    try:
        outdir = os.path.join(tmp, "out")
        cli_checks.plant_sentinels(outdir, name)
        argv = Draw(rng, name, infos[name]).build(outdir, tmp)
        before = cli_checks.snapshot(tmp)
        res = cli_checks.run([os.path.join(args.bin, name)] + argv, tmp,
                             args.timeout)
        found = check(res, argv, tmp, outdir, name, infos[name], before)
        cmd = " ".join(shlex.quote(x) for x in
                       [os.path.join(args.bin, name)] + argv)
        return (i, res.rc if not res.timed_out else None, found, cmd,
                res.elapsed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="build/problems")
    ap.add_argument("--runs", type=int,
                    default=int(os.environ.get("DAEDALUS_FUZZ_RUNS", 100)))
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("DAEDALUS_FUZZ_SEED", 1)))
    ap.add_argument("--first", type=int, default=0,
                    help="index of the first run")
    ap.add_argument("--run", type=int, action="append", default=[],
                    help="only this run index (repeatable): reproduce")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--exe", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="per run [s]; exceeding it is a hang")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="start no run after this many seconds (0: none)")
    ap.add_argument("--summary", help="write the counts as JSON here")
    ap.add_argument("--log", help="append every violation here")
    ap.add_argument("--show", type=int, default=10,
                    help="print at most this many failures per category")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.exe = args.exe or DEFAULT_EXES
    infos = {e: cli_checks.help_info(os.path.join(args.bin, e), args.timeout)
             for e in args.exe}
    indices = args.run or list(range(args.first, args.first + args.runs))
    counts = {k: 0 for k in ["runs", "exit0", "exit1", "exit2"] + CATEGORIES}
    shown = {k: 0 for k in CATEGORIES}
    lock = threading.Lock()
    slowest = [0.0, None, ""]
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    start = time.monotonic()

    def report(result):
        i, rc, found, cmd, elapsed = result
        with lock:
            counts["runs"] += 1
            if elapsed > slowest[0]:
                slowest[:] = [elapsed, i, cmd]
            if rc in (0, 1, 2):
                counts[f"exit{rc}"] += 1
            for cat in sorted({c for c, _ in found}):
                counts[cat] += 1
            for cat, detail in found:
                line = (f"FAIL [{cat}] run {i} (seed {args.seed}): {detail}\n"
                        f"     command: {cmd}\n     reproduce: "
                        f"{sys.argv[0]} --bin {args.bin} --seed {args.seed} "
                        f"--run {i}")
                if log:
                    log.write(line + "\n")
                if shown[cat] < args.show:
                    shown[cat] += 1
                    print(line, flush=True)
            if args.verbose and not found:
                print(f"ok   run {i}: exit {rc}: {cmd}", flush=True)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = set()
        for i in indices:
            if args.max_seconds and time.monotonic() - start > \
                    args.max_seconds:
                break
            pending.add(pool.submit(one_run, args, infos, i))
            if len(pending) >= 2 * args.jobs:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for f in done:
                    report(f.result())
        for f in concurrent.futures.as_completed(pending):
            report(f.result())
    if log:
        log.close()
    counts["seconds"] = round(time.monotonic() - start, 1)
    counts["slowest_seconds"] = round(slowest[0], 2)
    print("fuzz_cli: " + " ".join(f"{k}={v}" for k, v in counts.items()))
    if slowest[1] is not None:
        print(f"slowest: run {slowest[1]}, {slowest[0]:.2f} s: {slowest[2]}")
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as fh:
            json.dump(counts, fh)
    return 1 if any(counts[c] for c in CATEGORIES) else 0


if __name__ == "__main__":
    sys.exit(main())
