#!/usr/bin/python3
"""Fuzzer of the surfaces that fuzz_cli.py does not reach (issue 40, item
4; docs/robustness.md, "The edge fuzzer").

Surfaces (--surface, repeatable; default all):

- urdf, mjcf: mutated models (problems/data, Debian's MuJoCo samples in
  /usr/share/mujoco/model when installed; edge_mutations.py) run by
  build/problems/urdf|mjcf --model F;
- ensemble: mutated ensemble files for pendulum and slider_crank
  (--ensemble F);
- motion: mutated motion CSVs for --inverse-dynamics (pendulum,
  slider_crank, golf_swing, the files of a run of each);
- python: the Python API called with random and wrong-typed arguments
  (fuzz_python_worker.py; needs the module, PYTHONPATH=build/python);
- signals: SIGINT, SIGTERM or SIGHUP at a random moment of a run, an
  ensemble, an inverse dynamics or a model's import.

Each run is one of: ok (exit 0, files consistent), failed (exit 1 with
the JSON failed and an error), refused (exit 2 or a Python ValueError /
TypeError naming the problem, nothing written), interrupted (signals:
128 + N within the limit, files marked interrupted), and the violations:
crash (a signal, an abort, an exit status outside 0/1/2), hang (the time
limit), silent_ok (exit 0 or "ok" with files inconsistent or
incomplete), escape (a file written outside the output folder), vague (a
refusal that does not name the file, or an unexpected Python exception
type), contract (any other broken promise: a usage error that touched
files, a failed run without its error, a message that points nowhere,
slow to answer a signal).

Run i of surface X and seed S has its own generator:
`fuzz_edges.py --bin B --surface X --seed S --run i` reproduces it.

Usage: fuzz_edges.py --bin BUILD/problems [--runs N] [--seed S]
                     [--jobs J] [--surface X]... [--timeout T]
                     [--summary FILE] [--log FILE]
"""
import argparse
import concurrent.futures
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cli_checks  # noqa: E402
import edge_mutations as mut  # noqa: E402

SURFACES = ["urdf", "mjcf", "ensemble", "motion", "python", "signals"]
CLASSES = ["ok", "failed", "refused", "interrupted", "crash", "hang",
           "silent_ok", "escape", "vague", "contract"]
VIOLATIONS = ["crash", "hang", "silent_ok", "escape", "vague", "contract"]
DATA = os.path.join(ROOT, "problems", "data")
SAMPLES = "/usr/share/mujoco/model"
# MuJoCo samples that are refused (tendons, composites, ...) stay seeds:
# their mutations must be refused as clearly. The two largest (22
# humanoids, humanoid100) take tens of seconds to run and are left to the
# signal surface, whose runs are interrupted anyway.
SLOW_SAMPLES = {"22_humanoids.xml", "humanoid100.xml"}


def seeds(kind):
    if kind == "urdf":
        return [os.path.join(DATA, f) for f in sorted(os.listdir(DATA))
                if f.endswith(".urdf")]
    out = [os.path.join(DATA, f) for f in sorted(os.listdir(DATA))
           if f.endswith(".xml")]
    if os.path.isdir(SAMPLES):
        for d, _, files in sorted(os.walk(SAMPLES)):
            out += [os.path.join(d, f) for f in sorted(files)
                    if f.endswith(".xml") and f not in SLOW_SAMPLES]
    return out


class Result:
    def __init__(self, i, surface, cls, details, cmd, what, elapsed):
        self.i, self.surface, self.cls = i, surface, cls
        self.details, self.cmd, self.what = details, cmd, what
        self.elapsed = elapsed


def outside(before, after, allowed):
    """Paths created or changed under a case's folder outside the allowed
    folders (relative paths; a folder prefix allows everything below)."""
    bad = []
    for rel in cli_checks.changes(before, after):
        if not any(rel == a or rel.startswith(a + os.sep) for a in allowed):
            bad.append(rel)
    return sorted(bad)


def judge(res, out_rel, tmp, before, name_in_message, check_files):
    """The class of a finished process and the details of what is wrong:
    check_files(res) -> (violations, class) for exit 0 and 1."""
    kind = cli_checks.classify(res)
    if kind == "hang":
        return "hang", [cli_checks.describe(res)]
    if kind:
        return "crash", [cli_checks.describe(res)]
    after = cli_checks.snapshot(tmp)
    esc = outside(before, after, [out_rel])
    if esc:
        return "escape", ["wrote outside the output folder: " +
                          ", ".join(esc[:5])]
    msgs = cli_checks.message_violations(res.stderr)
    if res.rc == 2:
        touched = [p for p in cli_checks.changes(before, after)
                   if not (p not in before and after[p] == ("dir",))]
        if touched:
            return "contract", ["exit 2 touched " + ", ".join(touched[:5])]
        if not res.stderr.strip():
            return "vague", ["exit 2 without a message"]
        names = name_in_message if isinstance(name_in_message, list) \
            else [name_in_message]
        if names[0] and not any(n in res.stderr for n in names):
            return "vague", [f"exit 2 without naming {names[0]}: " +
                             res.stderr.strip()[-300:]]
        if msgs:
            return "contract", msgs
        return "refused", []
    bad, cls = check_files(res)
    if bad:
        return ("silent_ok" if res.rc == 0 else "contract"), bad
    if msgs:
        return "contract", msgs
    return cls, []


def table_rows(path):
    """(header, rows) of a CSV written by the library (RFC 4180 fields)."""
    import csv
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return (rows[0], rows[1:]) if rows else ([], [])


def poses_violations(out, name, samples, finite):
    path = os.path.join(out, f"{name}.poses.csv")
    if not os.path.isfile(path):
        return [f"no {name}.poses.csv"]
    bad, rows = cli_checks.csv_violations(path, finite)
    if not bad and len(rows) != samples:
        bad.append(f"{name}.poses.csv has {len(rows)} rows, the JSON "
                   f"{samples} samples")
    return bad


# --- model files --------------------------------------------------------
def model_case(a, i, kind):
    rng = random.Random(f"{a.seed}/{kind}/{i}")
    seed = rng.choice(seeds(kind))
    tmp = tempfile.mkdtemp(prefix="daedalus_edges_")
    try:
        src = os.path.join(tmp, "in")
        # The seed's folder, so that <include> and meshes resolve.
        shutil.copytree(os.path.dirname(seed), src,
                        ignore=shutil.ignore_patterns("*.stl", "*.png",
                                                      "*.obj", "*.msh"))
        with open(seed, encoding="utf-8") as fh:
            text = fh.read()
        if rng.random() < 0.1:
            data, what = text.encode(), ["unchanged"]
        else:
            data, what = mut.mutate_xml(rng, text)
        fname = os.path.join(src, os.path.basename(seed))
        with open(fname, "wb") as fh:
            fh.write(data)
        out = os.path.join(tmp, "out")
        cli_checks.plant_sentinels(out, kind)
        t_end = rng.choice([0.01, 0.05, 0.1, 0.2])
        argv = [os.path.join(a.bin, kind), "--model", fname, "--t-end",
                repr(t_end), "--output-dir", out, "--quiet", "--max-steps",
                "20000"]
        r = rng.random()
        if r < 0.15:
            argv += ["--dynamics", rng.choice(["energy", "recursive"])]
        if kind == "urdf" and rng.random() < 0.15:
            argv += ["--base", "floating"]
        if rng.random() < 0.15:
            argv += ["--no-joint-limits"]
        if rng.random() < 0.1:
            argv += ["--formulation", rng.choice(["ggl", "index3",
                                                  "projection"])]
        before = cli_checks.snapshot(tmp)
        res = cli_checks.run(argv, tmp, a.timeout)

        def files(res):
            bad = cli_checks.output_violations(res, out, kind, t_end)
            if res.rc == 0 and not bad:
                js = cli_checks.read_json(os.path.join(out, f"{kind}.json"))
                bad += poses_violations(out, kind, js.get("samples"), True)
            return bad, "ok" if res.rc == 0 else "failed"
        # A refusal names the file, or the flag it refuses with this
        # model (--formulation index3 with contacts).
        extra = argv[argv.index("--max-steps") + 2:]
        if extra:
            extra.append("unsupported combination")
        cls, details = judge(res, "out", tmp, before,
                             [os.path.basename(fname)] + extra, files)
        return Result(i, kind, cls, details, shlex.join(argv),
                      f"{os.path.relpath(seed, '/')}: " + "; ".join(what),
                      res.elapsed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- ensemble files -----------------------------------------------------
ENSEMBLE_OPTIONS = {
    "t_end": lambda r: repr(r.uniform(0.01, 0.2)),
    "rtol": lambda r: repr(10 ** r.uniform(-9, -4)),
    "atol": lambda r: repr(10 ** r.uniform(-10, -5)),
    "output_step": lambda r: repr(r.choice([0.01, 0.02, 0.05])),
    "formulation": lambda r: r.choice(["baumgarte", "ggl", "projection",
                                       "index3", "unstabilized"]),
    "max_steps": lambda r: str(r.randint(100, 20000)),
    "name": lambda r: r.choice(["a", "", '"x, y"', "m1"]),
}


def ensemble_case(a, i):
    rng = random.Random(f"{a.seed}/ensemble/{i}")
    exe = rng.choice(["pendulum", "slider_crank"])
    params = a.infos[exe]["params"]
    tmp = tempfile.mkdtemp(prefix="daedalus_edges_")
    try:
        pcols = rng.sample(sorted(params), rng.randint(0, min(3,
                                                               len(params))))
        ocols = rng.sample(sorted(ENSEMBLE_OPTIONS), rng.randint(1, 3))
        if "t_end" not in ocols:
            ocols.append("t_end")
        cols = pcols + ocols
        lines = [",".join(cols)]
        for _ in range(rng.randint(1, 4)):
            row = [repr(params[c][0] * rng.uniform(0.8, 1.25))
                   if params[c][0] else "0.1" for c in pcols]
            row += [ENSEMBLE_OPTIONS[c](rng) for c in ocols]
            lines.append(",".join(row))
        text = "\n".join(lines) + "\n"
        if rng.random() < 0.15:
            data, what = text.encode(), ["unchanged"]
        else:
            data, what = mut.mutate_csv(rng, text, numeric_from=0, grow=5)
        fname = os.path.join(tmp, "members.csv")
        with open(fname, "wb") as fh:
            fh.write(data)
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        # Short members: a member without its t_end column runs the
        # command line's.
        argv = [os.path.join(a.bin, exe), "--ensemble", fname,
                "--output-dir", out, "--quiet", "--max-steps", "20000",
                "--t-end", "0.05"]
        before = cli_checks.snapshot(tmp)
        res = cli_checks.run(argv, tmp, a.timeout)

        def files(res):
            return ensemble_violations(res, out, exe)
        cls, details = judge(res, "out", tmp, before, "members.csv", files)
        return Result(i, "ensemble", cls, details, shlex.join(argv),
                      f"{exe}: " + "; ".join(what) + " | " +
                      data[:300].decode("utf-8", "replace"), res.elapsed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ensemble_violations(res, out, exe):
    bad = []
    try:
        js = cli_checks.read_json(os.path.join(out, f"{exe}.ensemble.json"))
        header, rows = table_rows(os.path.join(out, f"{exe}.ensemble.csv"))
    except (OSError, ValueError) as e:
        return [f"ensemble table: {e}"], "failed"
    jrows = js.get("rows", [])
    if len(rows) != len(jrows) or len(rows) != js.get("members"):
        bad.append(f"{len(rows)} CSV rows, {len(jrows)} JSON rows, members "
                   f"{js.get('members')}")
    if any(len(r) != len(header) for r in rows):
        bad.append("ragged ensemble CSV")
    statuses = [r.get("status") for r in jrows]
    if res.rc == 0 and any(s != "ok" for s in statuses):
        bad.append(f"exit 0 with member statuses {sorted(set(statuses))}")
    if res.rc == 1 and all(s == "ok" for s in statuses):
        bad.append("exit 1 but every member ok")
    counts = js.get("counts", {})
    for s in set(statuses):
        if counts.get(s) != statuses.count(s):
            bad.append(f"counts[{s}] = {counts.get(s)}, rows "
                       f"{statuses.count(s)}")
    for r in jrows:
        m = r.get("member")
        d = os.path.join(out, "members", f"{m:06d}" if isinstance(m, int)
                         else str(m))
        if r.get("status") == "failed" and not r.get("error"):
            bad.append(f"member {m} failed without an error")
        if r.get("status") == "ok":
            fake = cli_checks.Outcome([], 0, "", "", 0.0, False)
            t = r.get("t_reached")
            bad += [f"member {m}: {b}" for b in
                    cli_checks.output_violations(fake, d, exe, t)]
    return bad, "ok" if res.rc == 0 else "failed"


# --- motions ------------------------------------------------------------
MOTION_EXES = {"pendulum": ["--t-end", "0.5"],
               "slider_crank": ["--t-end", "0.3"],
               "golf_swing": ["--t-end", "0.2"]}
_motions = {}
_motions_lock = threading.Lock()


def base_motion(a, exe):
    """The CSV of a short run of exe (made once per process)."""
    with _motions_lock:
        if exe not in _motions:
            d = tempfile.mkdtemp(prefix="daedalus_edges_motion_")
            a.cleanup.append(d)
            cli_checks.run([os.path.join(a.bin, exe), "--output-dir", d,
                            "--quiet"] + MOTION_EXES[exe], d, 120)
            with open(os.path.join(d, f"{exe}.csv"), encoding="utf-8") as fh:
                _motions[exe] = fh.read()
        return _motions[exe]


def motion_case(a, i):
    rng = random.Random(f"{a.seed}/motion/{i}")
    exe = rng.choice(sorted(MOTION_EXES))
    text = base_motion(a, exe)
    tmp = tempfile.mkdtemp(prefix="daedalus_edges_")
    try:
        if rng.random() < 0.1:
            data, what = text.encode(), ["unchanged"]
        else:
            data, what = mut.mutate_csv(rng, text)
        fname = os.path.join(tmp, "motion.csv")
        with open(fname, "wb") as fh:
            fh.write(data)
        out = os.path.join(tmp, "out")
        name = f"{exe}.inverse_dynamics"
        cli_checks.plant_sentinels(out, name)
        argv = [os.path.join(a.bin, exe), "--inverse-dynamics", fname,
                "--output-dir", out, "--quiet"]
        before = cli_checks.snapshot(tmp)
        res = cli_checks.run(argv, tmp, a.timeout)

        def files(res):
            return motion_violations(res, out, name)
        cls, details = judge(res, "out", tmp, before, "motion.csv", files)
        return Result(i, "motion", cls, details, shlex.join(argv),
                      f"{exe}: " + "; ".join(what), res.elapsed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def motion_violations(res, out, name):
    jp = os.path.join(out, f"{name}.json")
    cp = os.path.join(out, f"{name}.csv")
    if cli_checks.is_sentinel(jp) or cli_checks.is_sentinel(cp):
        return [f"exit {res.rc} left the previous {name} files"], "failed"
    try:
        js = cli_checks.read_json(jp)
    except (OSError, ValueError) as e:
        return [f"{name}.json: {e}"], "failed"
    bad, rows = cli_checks.csv_violations(cp, res.rc == 0)
    status = js.get("status")
    if res.rc == 0 and status != "ok":
        bad.append(f"exit 0 with status {status!r}")
    if res.rc == 1 and (status != "failed" or not js.get("error")):
        bad.append(f"exit 1 with status {status!r}, error "
                   f"{js.get('error')!r}")
    if not bad and js.get("samples") != len(rows):
        bad.append(f"JSON samples {js.get('samples')}, CSV rows {len(rows)}")
    if res.rc == 0 and not bad:
        motion = js.get("motion", {})
        if motion.get("samples") != len(rows):
            bad.append(f"motion has {motion.get('samples')} samples, the "
                       f"result {len(rows)} rows")
    return bad, "ok" if res.rc == 0 else "failed"


# --- the Python API -----------------------------------------------------
def python_batch(a, first, n):
    """Runs cases [first, first + n) in one worker process; a crash or a
    hang is recorded with its case and the worker restarted after it."""
    results = []
    i = first
    while i < first + n:
        tmp = tempfile.mkdtemp(prefix="daedalus_edges_py_")
        cmd = ["/usr/bin/python3", os.path.join(HERE, "fuzz_python_worker.py"),
               "--seed", str(a.seed), "--first", str(i), "--last",
               str(first + n), "--tmp", tmp]
        pydir = os.path.join(os.path.dirname(a.bin), "python")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=os.pathsep.join(
                       [x for x in [os.environ.get("PYTHONPATH")] if x] +
                       [pydir]))
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env,
                             start_new_session=True)
        current, started = None, time.monotonic()
        answered = False
        deadline = [time.monotonic() + a.timeout + 20]

        def watchdog():
            while p.poll() is None:
                if time.monotonic() > deadline[0]:
                    os.killpg(p.pid, signal.SIGKILL)
                    return
                time.sleep(0.2)
        w = threading.Thread(target=watchdog)
        w.start()
        for line in p.stdout:
            rec = json.loads(line)
            answered = True
            if "start" in rec:
                current, started = rec["start"], time.monotonic()
                deadline[0] = started + a.timeout
            else:
                results.append(Result(rec["i"], "python", rec["cls"],
                                      rec["details"], rec["call"], "",
                                      rec["elapsed"]))
                current = None
                i = rec["i"] + 1
        p.wait()
        w.join()
        err = p.stderr.read()
        shutil.rmtree(tmp, ignore_errors=True)
        if current is not None:
            hang = time.monotonic() - started >= a.timeout
            results.append(Result(
                current, "python", "hang" if hang else "crash",
                [f"worker exit {p.returncode}: {err.strip()[-400:]}"],
                f"fuzz_python_worker.py --seed {a.seed} --first {current} "
                f"--last {current + 1}", "", time.monotonic() - started))
            i = current + 1
        elif not answered:
            raise RuntimeError("the Python worker does not start (is the "
                               f"module built in {pydir}?): {err[-600:]}")
        elif p.returncode != 0:
            results.append(Result(i, "python", "crash",
                                  [f"worker exit {p.returncode} between "
                                   f"cases: {err.strip()[-400:]}"], "", "",
                                  0.0))
            i += 1
    return results


# --- signals at random moments -----------------------------------------
def long_motion(a):
    """A motion of 200 000 samples (pendulum, 100 s), made once."""
    with _motions_lock:
        if "long" not in _motions:
            d = tempfile.mkdtemp(prefix="daedalus_edges_motion_")
            a.cleanup.append(d)
            cli_checks.run([os.path.join(a.bin, "pendulum"), "--output-dir",
                            d, "--quiet", "--t-end", "100", "--output-step",
                            "0.0005", "--max-samples", "300000"], d, 300)
            _motions["long"] = os.path.join(d, "pendulum.csv")
        return _motions["long"]


def signal_scenario(a, rng, tmp, out):
    """(argv, name of the files, kind) of a long process."""
    b = a.bin
    k = rng.choice(["run", "run", "alpha", "urdf", "mjcf", "import",
                    "ensemble", "monte-carlo", "inverse", "energy"])
    common = ["--output-dir", out, "--quiet"]
    if k == "run":
        exe = rng.choice(["pendulum", "chain", "slider_crank", "four_bar",
                          "rolling_disk"])
        return [os.path.join(b, exe), "--t-end", "1e4", "--output-step",
                "0.05"] + common, exe, "run"
    if k == "alpha":
        return [os.path.join(b, "chain"), "--integrator",
                rng.choice(["hht", "generalized-alpha"]), "--t-end", "1e4",
                "--output-step", "0.05"] + common, "chain", "run"
    if k == "urdf":
        return [os.path.join(b, "urdf"), "--model",
                os.path.join(DATA, rng.choice(["arm7.urdf",
                                               "humanoid.urdf"])),
                "--t-end", "1e4", "--output-step", "0.05"] + common, \
            "urdf", "run"
    if k == "mjcf":
        return [os.path.join(b, "mjcf"), "--model",
                os.path.join(DATA, rng.choice(["arm7.xml", "humanoid.xml",
                                               "slider_crank_loop.xml"])),
                "--t-end", "1e4", "--output-step", "0.05"] + common, \
            "mjcf", "run"
    if k == "import":
        big = os.path.join(SAMPLES, "humanoid", "22_humanoids.xml")
        if not os.path.exists(big):
            big = os.path.join(DATA, "humanoid.xml")
        return [os.path.join(b, "mjcf"), "--model", big, "--t-end", "1e3"] \
            + common, "mjcf", "run"
    if k == "energy":
        return [os.path.join(b, "chain_reduced"), "--bodies", "200",
                "--dynamics", "energy", "--formulation", "ggl"] + common, \
            "chain_reduced", "run"
    if k == "ensemble":
        f = os.path.join(tmp, "members.csv")
        with open(f, "w", encoding="utf-8") as fh:
            fh.write("m,t_end\n" + "".join(f"{1 + 0.01 * j},200\n"
                                           for j in range(20)))
        return [os.path.join(b, "pendulum"), "--ensemble", f] + common, \
            "pendulum", "ensemble"
    if k == "monte-carlo":
        return [os.path.join(b, "pendulum"), "--monte-carlo",
                rng.choice(["50", "1000000"]), "--dist",
                "m=uniform:0.5,1.5", "--t-end", "20"] + common, \
            "pendulum", "ensemble"
    return [os.path.join(b, "pendulum"), "--inverse-dynamics",
            long_motion(a)] + common, "pendulum.inverse_dynamics", "run"


def interrupted_violations(out, name, kind):
    """What is wrong with the files of a process ended by a signal: a
    run's JSON says interrupted with the CSV's rows (or both files are the
    untouched sentinels: the signal came before the run began)."""
    if kind == "ensemble":
        jp = os.path.join(out, f"{name}.ensemble.json")
        if not os.path.exists(jp):
            return [] if not os.path.exists(
                os.path.join(out, f"{name}.ensemble.csv")) else \
                ["ensemble CSV without its JSON"]
        try:
            js = cli_checks.read_json(jp)
        except ValueError as e:
            return [f"ensemble JSON: {e}"]
        st = {r.get("status") for r in js.get("rows", [])}
        if not st <= {"ok", "interrupted", "pending", "failed"}:
            return [f"member statuses {sorted(st)}"]
        if not st & {"interrupted", "pending"}:
            return ["interrupted ensemble with no member interrupted or "
                    "pending"]
        return []
    jp = os.path.join(out, f"{name}.json")
    cp = os.path.join(out, f"{name}.csv")
    if cli_checks.is_sentinel(jp) and cli_checks.is_sentinel(cp):
        return []
    try:
        js = cli_checks.read_json(jp)
    except (OSError, ValueError) as e:
        return [f"{name}.json: {e}"]
    bad = []
    if js.get("status") != "interrupted":
        bad.append(f"{name}.json status {js.get('status')!r}")
    if not os.path.exists(cp) or cli_checks.is_sentinel(cp):
        bad.append(f"{name}.csv missing or the previous run's")
        return bad
    csv_bad, rows = cli_checks.csv_violations(cp, False)
    bad += csv_bad
    if not csv_bad and js.get("samples") != len(rows):
        bad.append(f"JSON samples {js.get('samples')}, CSV {len(rows)} rows")
    return bad


# A file's change time comes from the kernel's coarse clock, which may lag
# the real time by a scheduler tick (4 ms at HZ = 250): a JSON counts as
# committed before the signal only when its change time is earlier by more
# than that.
COARSE_CLOCK_S = 0.005


def committed_before(out, name, t_wall):
    """True when the run's JSON says "ok" over a complete CSV and was put in
    place (renamed: its change time) before the signal was sent at wall
    time t_wall."""
    jp = os.path.join(out, f"{name}.json")
    cp = os.path.join(out, f"{name}.csv")
    try:
        committed = os.stat(jp).st_ctime_ns * 1e-9
        js = cli_checks.read_json(jp)
    except (OSError, ValueError):
        return False
    if js.get("status") != "ok" or committed > t_wall - COARSE_CLOCK_S:
        return False
    if not os.path.exists(cp) or cli_checks.is_sentinel(cp):
        return False
    csv_bad, rows = cli_checks.csv_violations(cp, False)
    return not csv_bad and js.get("samples") == len(rows)


def signal_case(a, i):
    rng = random.Random(f"{a.seed}/signals/{i}")
    tmp = tempfile.mkdtemp(prefix="daedalus_edges_")
    try:
        out = os.path.join(tmp, "out")
        argv, name, kind = signal_scenario(a, rng, tmp, out)
        if kind == "run":
            cli_checks.plant_sentinels(out, name)
        else:
            os.makedirs(out)
        sig = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
        delay = rng.uniform(0, 0.05) if rng.random() < 0.15 else \
            rng.uniform(0.05, 2.0)
        before = cli_checks.snapshot(tmp)
        cmd = shlex.join(argv) + f"  # {sig.name} after {delay:.3f} s"
        p = subprocess.Popen(argv, cwd=tmp, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True,
                             preexec_fn=cli_checks.default_signals)
        t0 = time.monotonic()
        time.sleep(delay)
        if p.poll() is not None:
            # Finished before the signal (a short ensemble): fine when it
            # says so.
            err = p.stderr.read().decode("utf-8", "replace")
            return Result(i, "signals", "ok" if p.returncode == 0 else
                          "contract",
                          [f"ended (exit {p.returncode}) before the signal: "
                           f"{err[-300:]}"], cmd, "before the signal",
                          time.monotonic() - t0)
        ts = time.monotonic()
        t_wall = time.time()
        p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=30 * a.scale)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return Result(i, "signals", "hang",
                          [f"running {30 * a.scale:.0f} s after {sig.name}"],
                          cmd, "", time.monotonic() - t0)
        answer = time.monotonic() - ts
        err = err.decode("utf-8", "replace")
        rc = p.returncode
        esc = outside(before, cli_checks.snapshot(tmp), ["out"])
        if esc:
            return Result(i, "signals", "escape", esc[:5], cmd, "", answer)
        if rc == -sig:
            touched = cli_checks.changes(before, cli_checks.snapshot(tmp))
            if not touched:
                # Killed by the default action before the run installed
                # its handlers (start-up, the model's import): nothing had
                # been written, the previous files are as they were, and a
                # shell sees 128 + N as for a handled signal.
                return Result(i, "signals", "interrupted", [], cmd,
                              "before the handlers", answer)
            return Result(i, "signals", "crash",
                          [f"killed by {sig.name} (not handled) after "
                           f"{delay:.3f} s; touched {sorted(touched)[:4]}"],
                          cmd, "", answer)
        if rc < 0 or rc not in (128 + sig, 0, 1):
            return Result(i, "signals", "crash" if rc < 0 else "contract",
                          [f"exit {rc} after {sig.name}: {err[-300:]}"],
                          cmd, "", answer)
        if rc == 0 and kind == "run" and committed_before(out, name, t_wall):
            # The results were complete, "ok" and in place before the
            # signal: it came while the process was tearing down (freeing
            # a long motion takes a tenth of a second), too late to
            # interrupt anything (seed 46, run 476).
            return Result(i, "signals", "ok", [], cmd,
                          "committed before the signal", answer)
        if rc != 128 + sig:
            return Result(i, "signals", "contract",
                          [f"exit {rc} after {sig.name} (expected "
                           f"{128 + sig}): {err[-300:]}"], cmd, "", answer)
        bad = interrupted_violations(out, name, kind)
        if bad:
            return Result(i, "signals", "silent_ok", bad, cmd, "", answer)
        if answer > a.signal_limit * a.scale:
            return Result(i, "signals", "contract",
                          [f"answered {sig.name} after {answer:.2f} s "
                           f"(limit {a.signal_limit * a.scale:.1f} s)"],
                          cmd, "", answer)
        return Result(i, "signals", "interrupted", [], cmd, "", answer)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- driver -------------------------------------------------------------
def tasks(a):
    """(surface, callable returning a list of Results) in run order."""
    out = []
    for s in a.surface:
        idx = a.run or list(range(a.first, a.first + a.runs))
        if s == "python":
            step = 25
            for k in range(0, len(idx), step):
                chunk = idx[k:k + step]
                if a.run:
                    out += [(s, (lambda j: lambda: python_batch(a, j, 1))(j))
                            for j in chunk]
                else:
                    out.append((s, (lambda f, n: lambda: python_batch(
                        a, f, n))(chunk[0], len(chunk))))
            continue
        fn = {"urdf": lambda j: model_case(a, j, "urdf"),
              "mjcf": lambda j: model_case(a, j, "mjcf"),
              "ensemble": lambda j: ensemble_case(a, j),
              "motion": lambda j: motion_case(a, j),
              "signals": lambda j: signal_case(a, j)}[s]
        out += [(s, (lambda f, j: lambda: [f(j)])(fn, j)) for j in idx]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="build/problems")
    ap.add_argument("--surface", action="append", choices=SURFACES)
    ap.add_argument("--runs", type=int, default=50, help="per surface")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--run", type=int, action="append", default=[],
                    help="only this run index (repeatable): reproduce")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="per run [s]; longer is a hang")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="time limits of the signal surface times this")
    ap.add_argument("--signal-limit", type=float, default=1.0,
                    help="seconds within which a signal must be answered")
    ap.add_argument("--summary", help="write the counts as JSON here")
    ap.add_argument("--log", help="append every violation here")
    ap.add_argument("--show", type=int, default=5,
                    help="print at most this many violations per class")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    a.surface = a.surface or SURFACES
    a.cleanup = []
    a.infos = {}
    if "ensemble" in a.surface:
        a.infos = {e: cli_checks.help_info(os.path.join(a.bin, e), 60)
                   for e in ("pendulum", "slider_crank")}
    counts = {s: {c: 0 for c in CLASSES} for s in a.surface}
    seconds = {s: 0.0 for s in a.surface}
    shown = {c: 0 for c in CLASSES}
    log = open(a.log, "a", encoding="utf-8") if a.log else None
    lock = threading.Lock()
    start = time.monotonic()

    def report(results):
        with lock:
            for r in results:
                counts[r.surface][r.cls] += 1
                seconds[r.surface] += r.elapsed
                if r.cls in VIOLATIONS:
                    line = (f"FAIL [{r.cls}] {r.surface} run {r.i} (seed "
                            f"{a.seed}): {' | '.join(r.details)[:1500]}\n"
                            f"     input: {r.what[:600]}\n     command: "
                            f"{r.cmd}\n     reproduce: {sys.argv[0]} --bin "
                            f"{a.bin} --surface {r.surface} --seed {a.seed} "
                            f"--run {r.i}")
                    if log:
                        log.write(line + "\n")
                        log.flush()
                    if shown[r.cls] < a.show:
                        shown[r.cls] += 1
                        print(line, flush=True)
                elif a.verbose:
                    print(f"{r.cls:11s} {r.surface} {r.i}: {r.what[:200]}",
                          flush=True)

    try:
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            for f in concurrent.futures.as_completed(
                    [pool.submit(fn) for _, fn in tasks(a)]):
                report(f.result())
    finally:
        for d in a.cleanup:
            shutil.rmtree(d, ignore_errors=True)
        if log:
            log.close()
    total = time.monotonic() - start
    print(f"fuzz_edges, seed {a.seed}, {total:.0f} s wall, {a.jobs} jobs")
    print(f"  {'surface':9s} {'runs':>5s} " +
          " ".join(f"{c:>11s}" for c in CLASSES) + "   run-s")
    for s in a.surface:
        n = sum(counts[s].values())
        print(f"  {s:9s} {n:5d} " + " ".join(f"{counts[s][c]:11d}"
                                            for c in CLASSES) +
              f"   {seconds[s] / max(n, 1):.3f}")
    if a.summary:
        with open(a.summary, "w", encoding="utf-8") as fh:
            json.dump({"counts": counts, "seconds": seconds,
                       "wall": round(total, 1)}, fh, indent=1)
    return 1 if any(counts[s][c] for s in a.surface for c in VIOLATIONS) \
        else 0


if __name__ == "__main__":
    sys.exit(main())
