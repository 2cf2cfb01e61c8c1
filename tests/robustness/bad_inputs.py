#!/usr/bin/python3
"""The table of bad inputs (issue 18, item 5).

Each row runs one problem executable with one command line, in a fresh
directory whose output folder `out/` already holds sentinel files named
like the run's outputs (<name>.csv and <name>.json with known text and an
old mtime), and states:

- the exit status expected (0 finished, 1 failed run, 2 bad usage);
- fragments the message on stderr must contain (and may not contain);
- the files the run may create or modify (relative to the directory):
  none for a usage error, which must leave the sentinels untouched;
- for exit 0 and 1, the checks of cli_checks.output_violations (finite
  numbers and t_reached for "ok", "failed" with an error otherwise).

Rows marked `fixed_by` describe the behaviour after a fix of issue 18
that the current build may not have yet; they fail until it lands.

Usage: bad_inputs.py --bin BUILD/problems [--timeout-scale K] [--only ID]
                     [--list]
Prints one line per failing row and exits 1 if there is one.
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_checks  # noqa: E402

BOTH = {"out/{name}.csv", "out/{name}.json"}


def row(rid, exe, args, rc, msg=(), not_msg=(), touch=None, setup=None,
        prefix=True, t_end=None, fixed_by=None, not_stdout=()):
    """One row. args may use {out} (the output folder) and {tmp} (the
    run's directory); prefix adds `--output-dir {out} --quiet` first
    (prefix="dir": the folder only). not_stdout: fragments the printed
    summary may not contain.
    touch: files (relative to {tmp}, with {name}) the run may create or
    modify; default none for exit 2, the CSV and JSON otherwise."""
    if touch is None:
        touch = set() if rc == 2 else BOTH
    return dict(id=rid, exe=exe, args=list(args), rc=rc,
                msg=[msg] if isinstance(msg, str) else list(msg),
                not_msg=[not_msg] if isinstance(not_msg, str) else
                list(not_msg), touch=set(touch), setup=setup, prefix=prefix,
                t_end=t_end, fixed_by=fixed_by, not_stdout=list(not_stdout))


def make_file(rel, text="not a directory\n"):
    def setup(tmp, name):
        path = os.path.join(tmp, rel.format(name=name))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return setup


def make_bytes(rel, data):
    def setup(tmp, name):
        with open(os.path.join(tmp, rel.format(name=name)), "wb") as fh:
            fh.write(data)
    return setup


def json_is_dir(tmp, name):
    # out/<name>.json is a folder (with a file in it): the JSON cannot be
    # written, and the CSV sentinel beside it must survive.
    path = os.path.join(tmp, "out", f"{name}.json")
    os.remove(path)
    os.makedirs(path)
    with open(os.path.join(path, "keep"), "w", encoding="utf-8") as fh:
        fh.write(cli_checks.SENTINEL)


NUMBER = "is not a finite decimal number"
P = "pendulum"
ROWS = [
    # --- controls: the table's machinery accepts a good run and --help.
    row("ok-plain", P, ["--t-end", "0.2"], 0, t_end=0.2),
    row("ok-attached", P, ["--t-end=0.2", "--rtol=1e-6"], 0, t_end=0.2),
    row("ok-help", P, ["--help"], 0, touch=set()),
    row("ok-long-step", P, ["--t-end", "0.5", "--output-step", "1e9"], 0,
        t_end=0.5),
    # --- options and their values.
    row("unknown-option", P, ["--bogus", "1"], 2, "unknown option '--bogus'"),
    row("unknown-short", P, ["-t", "1"], 2, "unknown option '-t'"),
    row("bare-word", P, ["pendulum.csv"], 2, "unknown option"),
    row("missing-value", P, ["--t-end"], 2, "--t-end needs a value"),
    row("missing-param", P, ["--param"], 2, "--param needs a value"),
    row("bool-with-value", P, ["--quiet=1"], 2, "--quiet takes no value"),
    row("rtol-leading-blank", P, ["--rtol", " 1e-6"], 2, NUMBER),
    row("rtol-trailing-blank", P, ["--rtol", "1e-6 "], 2, NUMBER),
    row("param-hex", P, ["--param", "m=0x10"], 2, NUMBER),
    row("param-empty-value", P, ["--param", "m="], 2, NUMBER),
    row("t-end-empty", P, ["--t-end", ""], 2, NUMBER),
    row("t-end-inf", P, ["--t-end", "inf"], 2, NUMBER),
    row("t-end-nan", P, ["--t-end", "nan"], 2, NUMBER),
    row("t-end-comma", P, ["--t-end", "1,5"], 2, NUMBER),
    row("t-end-signs", P, ["--t-end", "+-1"], 2, NUMBER),
    row("t-end-overflow", P, ["--t-end", "1e400"], 2, NUMBER),
    row("t-end-unit", P, ["--t-end", "1s"], 2, NUMBER),
    row("t-end-1e-300", P, ["--t-end", "1e-300"], 2, "--t-end",
        fixed_by="found by the fuzzer: a run shorter than the time "
        "resolution failed blaming the constraint at a NaN state"),
    row("t-end-subnormal", "chain", ["--t-end", "5e-324"], 2, "--t-end",
        fixed_by="found by the fuzzer: it failed calling the stationary "
        "pivot time-dependent (Phi_t = -nan)"),
    row("t-end-negative", P, ["--t-end", "-1"], 2, "t_end"),
    row("t-end-zero", P, ["--t-end", "0"], 2, "t_end"),
    row("t-end-huge", P, ["--t-end", "1e17"], 2, "--max-samples"),
    row("t-end-1e300", P, ["--t-end", "1e300"], 2, "--max-samples"),
    row("t-end-1e20", P, ["--t-end", "1e20"], 2, "--max-samples"),
    row("t-end-1e15", P, ["--t-end", "1e15"], 2, "--max-samples"),
    row("output-step-zero", P, ["--output-step", "0"], 2, "output step"),
    row("output-step-negative", P, ["--output-step", "-0.01"], 2,
        "output step"),
    row("output-step-tiny", P, ["--output-step", "1e-300"], 2,
        "--max-samples"),
    row("output-step-1e-9", P, ["--output-step", "1e-9"], 2, "--max-samples"),
    row("max-samples-low", P, ["--t-end", "1", "--max-samples", "99"], 2,
        "100 samples"),
    row("rtol-zero", P, ["--rtol", "0"], 2, "rtol"),
    row("rtol-one", P, ["--rtol", "1"], 2, "rtol"),
    row("rtol-negative", P, ["--rtol", "-1e-6"], 2, "rtol"),
    row("atol-zero", P, ["--atol", "0"], 2, "atol"),
    row("atol-negative", P, ["--atol", "-1"], 2, "atol"),
    row("atol-1e-300", P, ["--atol", "1e-300"], 2, "--atol",
        fixed_by="issue 18: an atol far below double resolution is refused "
        "(it failed inside the run blaming the constraint)"),
    row("alpha-negative", P, ["--baumgarte-alpha", "-1"], 2, "aumgarte"),
    row("beta-negative", P, ["--baumgarte-beta", "-1"], 2, "aumgarte"),
    row("alpha-1e100", P, ["--baumgarte-alpha", "1e100", "--t-end", "1"], 2,
        "--baumgarte-alpha",
        fixed_by="issue 18: a gain that freezes the motion is refused (it "
        "ran 'ok' with the bob at its release point)"),
    row("alpha-1e300", P, ["--baumgarte-alpha", "1e300", "--t-end", "1"], 2,
        "--baumgarte-alpha", fixed_by="issue 18 (as alpha-1e100)"),
    row("drift-tol-negative", P, ["--drift-tol", "-1"], 2, "drift"),
    row("max-steps-zero", P, ["--max-steps", "0"], 2,
        "not a positive whole number"),
    row("max-steps-fraction", P, ["--max-steps", "1.5"], 2,
        "not a positive whole number"),
    row("max-steps-negative", P, ["--max-steps", "-3"], 2,
        "not a positive whole number"),
    row("max-samples-zero", P, ["--max-samples", "0"], 2,
        "not a positive whole number"),
    row("formulation-unknown", P, ["--formulation", "bogus"], 2, "bogus"),
    row("integrator-unknown", P, ["--integrator", "bogus"], 2, "bogus"),
    row("kkt-unknown", P, ["--kkt", "bogus"], 2, "bogus"),
    row("drift-action-unknown", P, ["--drift-action", "bogus"], 2, "bogus"),
    row("evaluator-unknown", P, ["--evaluator", "bogus"], 2,
        "unknown evaluator 'bogus'"),
    row("ggl-on-cvodes", P, ["--formulation", "ggl", "--integrator",
                             "cvodes-bdf"], 2, "unsupported combination"),
    row("rattle-without-step", P, ["--integrator", "rattle"], 2, "--step"),
    row("step-not-divisor", P, ["--integrator", "rattle", "--step", "0.003"],
        2, "multiple of --step"),
    row("step-too-fine", P, ["--integrator", "rattle", "--step", "1e-9",
                             "--max-steps", "1000"], 2, "--max-steps"),
    row("sens-unknown", P, ["--sens", "nosuch"], 2, "nosuch"),
    row("sens-empty-name", P, ["--sens", "m,,g"], 2, "empty name"),
    row("functional-unknown", "slider_crank",
        ["--sens", "k", "--sens-method", "adjoint", "--functional", "nosuch"],
        2, "declares no functional 'nosuch'",
        fixed_by="an unknown functional failed only after the plain run, "
        "which wrote its files"),
    row("adjoint-without-functional", "chain",
        ["--sens", "length", "--sens-method", "adjoint"], 2,
        ["needs --functional NAME", "declares: (none)"],
        fixed_by="an adjoint without a functional failed only after the "
        "plain run, which wrote its files"),
    row("counterfactual-garbage", P, ["--counterfactual", "bogus"], 2,
        "bogus"),
    # --- parameters.
    row("param-unknown", P, ["--param", "mass=2"], 2,
        ["unknown parameter 'mass'", "m"]),
    row("param-no-equals", P, ["--param", "m"], 2, "NAME=VALUE"),
    row("param-empty-name", P, ["--param", "=1"], 2, "unknown parameter"),
    row("param-l-negative", P, ["--param", "l=-1"], 2, "> 0"),
    row("param-l-zero", P, ["--param", "l=0"], 2, "> 0"),
    row("param-m-negative", P, ["--param", "m=-1"], 2, "> 0"),
    row("chain-length-negative", "chain", ["--param", "length=-1"], 2,
        "> 0"),
    row("golf-damping-negative", "golf_swing", ["--param", "d_shaft=-1"], 2,
        ">= 0"),
    row("param-g-1e308", P, ["--param", "g=1e308", "--t-end", "1"], 1,
        "overflow",
        fixed_by="issue 18: an overflow names itself (it blamed a "
        "non-finite constraint value and suggested tighter tolerances)"),
    # --- problem options.
    row("chain-bodies-zero", "chain", ["--bodies", "0"], 2,
        "must be an integer from 1"),
    row("chain-bodies-fraction", "chain", ["--bodies", "2.5"], 2,
        "must be an integer"),
    row("chain-bodies-word", "chain", ["--bodies", "many"], 2, NUMBER),
    row("chain-bodies-missing", "chain", ["--bodies"], 2, "needs a value"),
    row("chain-bodies-huge", "chain", ["--bodies", "1e9"], 2,
        "must be an integer"),
    row("rod-pair-variant", "rod_pair", ["--coordinates", "polar"], 2,
        "polar"),
    # --- --inverse-dynamics motion files (issue 16, docs/inverse_dynamics.md):
    # usage errors naming the columns or lines, nothing written.
    row("motion-missing-column", P,
        ["--inverse-dynamics", "{tmp}/motion.csv"], 2,
        ["missing column y", "line 1"],
        setup=make_file("motion.csv", "t,x\n0,1\n")),
    row("motion-time-backwards", P,
        ["--inverse-dynamics", "{tmp}/motion.csv"], 2,
        ["not strictly increasing", "line 4 has t = 0.1 after t = 0.2"],
        setup=make_file("motion.csv", "t,x,y\n0,0,-1\n0.2,0,-1\n"
                        "0.1,0,-1\n0.3,0,-1\n0.4,0,-1\n0.5,0,-1\n")),
    row("motion-too-few-samples", P,
        ["--inverse-dynamics", "{tmp}/motion.csv"], 2,
        ["3 samples (line 2 to line 4)", "at least 5"],
        setup=make_file("motion.csv", "t,x,y\n0,0,-1\n0.1,0,-1\n"
                        "0.2,0,-1\n")),
    row("motion-nan-cell", P,
        ["--inverse-dynamics", "{tmp}/motion.csv"], 2,
        ["line 3, column 'y'", "not a finite number"],
        setup=make_file("motion.csv", "t,x,y\n0,0,-1\n0.1,0,nan\n")),
    row("motion-absent", P, ["--inverse-dynamics", "{tmp}/nosuch.csv"], 2,
        "cannot read the motion file"),
    row("motion-empty", P, ["--inverse-dynamics", "{tmp}/motion.csv"], 2,
        "is empty", setup=make_file("motion.csv", "")),
    row("motion-with-counterfactual", P,
        ["--inverse-dynamics", "{tmp}/motion.csv", "--counterfactual",
         "zvcf@0"], 2, "cannot be combined",
        setup=make_file("motion.csv", "t,x,y\n0,0,-1\n")),
    row("id-degree-without-motion", P, ["--id-degree", "3"], 2,
        "only with --inverse-dynamics"),
    row("id-weights-no-channel", P,
        ["--inverse-dynamics", "{tmp}/motion.csv", "--id-weights", "a=1"], 2,
        "unknown input channel 'a'", setup=make_file("motion.csv", "t,x,y\n0,0,-1\n")),
    # --- issue 40: options that were silently ignored, now refused.
    row("rho-inf-on-idas", P, ["--formulation", "ggl", "--rho-inf", "0.5"],
        2, ["--rho-inf is the numerical damping of generalized-alpha and "
            "hht", "--integrator idas has none"],
        fixed_by="issue 40: --rho-inf was ignored"),
    row("hht-step-above-output", P, ["--integrator", "hht", "--step", "0.05",
                                     "--output-step", "0.01"], 2,
        "--step 0.05 is longer than the output step 0.01",
        fixed_by="issue 40: the step became the output step silently"),
    row("step-on-cvodes", P, ["--step", "0.001"], 2,
        "chooses its own steps from --rtol and --atol",
        fixed_by="issue 40: --step was ignored"),
    row("optimize-with-error-estimate", P,
        ["--optimize", "{tmp}/spec.json", "--error-estimate"], 2,
        "--optimize replaces the run", setup=make_file("spec.json", "{}\n"),
        fixed_by="the merge of issue 40 with --optimize: it was ignored"),
    # --- issue 40: messages naming the real cause.
    row("chain-length-1e308", "chain", ["--param", "length=1e308",
                                        "--kkt", "sparse-lu"], 1,
        ["is not finite at the parameters", "length=1e+308",
         "rescale the problem"], not_msg="expected 3 x 3",
        fixed_by="issue 40: 'block is 3 x 3 ..., expected 3 x 3'"),
    row("slider-crank-mb-a-1-sparse", "slider_crank_mb",
        ["--param", "a=1", "--kkt", "sparse-lu"], 1,
        "initial state cannot be made consistent", not_msg="Touches",
        touch=BOTH | {"out/{name}.poses.csv"},
        fixed_by="issue 40: a NaN blamed the Touches declaration"),
    row("motion-byte-order-mark", P,
        ["--inverse-dynamics", "{tmp}/motion.csv"], 2,
        ["has 1 sample (", "need at least 5"], not_msg="missing column",
        setup=make_bytes("motion.csv", b"\xef\xbb\xbft,x,y\r\n0,0,-1\r\n"),
        fixed_by="issue 40: a byte-order mark gave 'missing column t'"),
    row("motion-utf16", P, ["--inverse-dynamics", "{tmp}/motion.csv"], 2,
        ["is UTF-16 text", "save it as UTF-8"],
        setup=make_bytes("motion.csv",
                         "t,x,y\n0,0,-1\n".encode("utf-16")),
        fixed_by="issue 40"),
    row("ensemble-cr-only", P, ["--ensemble", "{tmp}/e.csv"], 2,
        "e.csv:2:1: column 'm'",
        setup=make_bytes("e.csv", b"m\rheavy\r"),
        fixed_by="issue 40: CR line ends made one line of the file"),
    row("ensemble-nul", P, ["--ensemble", "{tmp}/e.csv"], 2,
        ["a NUL byte", "not a text file"],
        setup=make_bytes("e.csv", b"m\n1\x00\n"), fixed_by="issue 40"),
    # --- the output directory.
    row("outdir-is-file", P, ["--output-dir", "{tmp}/afile"], 2,
        "output directory", prefix=False, setup=make_file("afile")),
    row("outdir-under-file", P, ["--output-dir", "{tmp}/afile/sub"], 2,
        "output directory", prefix=False, setup=make_file("afile")),
    row("outdir-uncreatable", P, ["--output-dir", "/proc/daedalus_robustness",
                                  "--quiet"], 2, "output directory",
        prefix=False),
    row("outdir-unwritable", P, ["--output-dir", "/proc/self", "--quiet",
                                 "--t-end", "0.1"], 2, "cannot",
        prefix=False),
    row("json-is-directory", P, ["--t-end", "0.1"], 2, "pendulum.json",
        setup=json_is_dir,
        fixed_by="issue 18: outputs are written under temporary names and "
        "renamed together (the CSV was overwritten, then exit 2)"),
    # --- failed runs: exit 1, the JSON says failed, the CSV keeps its rows.
    row("max-steps-cvodes", P, ["--t-end", "1", "--max-steps", "5"], 1,
        ["--max-steps 5", "raise --max-steps"], ", ,"),
    row("max-steps-index3", P, ["--formulation", "index3", "--integrator",
                                "idas", "--max-steps", "5"], 1,
        "--max-steps", ", ,",
        fixed_by="issue 18: the IDAS message without SUNDIALS's ', ,'"),
    row("report-of-early-failure", "four_bar", ["--param", "l1=5"], 1,
        "cannot reach", prefix="dir", not_stdout=["energy ()", "q ()"],
        fixed_by="issue 18: outputs renamed together (as four-bar-cannot-"
        "close; the summary also says it wrote the CSV it did not write)"),
    row("drift-fail", P, ["--t-end", "1", "--rtol", "1e-4", "--atol", "1e-4",
                          "--formulation", "unstabilized", "--drift-tol",
                          "1e-12", "--drift-action", "fail"], 1, "drift"),
    row("four-bar-cannot-close", "four_bar", ["--param", "l1=5", "--t-end",
                                              "0.1"], 1, "cannot reach",
        fixed_by="issue 18: outputs are renamed together (an error in "
        "initial() left the previous run's CSV beside the new JSON)"),
    row("start-near-origin", P, ["--param", "l=1e-200", "--t-end", "0.1"], 1,
        "singular", ["rows: (", "redundant"],
        fixed_by="issue 18: a singular configuration is named as such (it "
        "said 'dependent constraint rows:' with an empty list)"),
    row("tiny-mass", "slider_crank", ["--param", "m2=5e-324", "--t-end",
                                      "0.1"], 1, "mass matrix", "rows: (",
        fixed_by="issue 18: a coordinate without inertia is named (found by "
        "the fuzzer: it blamed redundant constraints with an empty list)"),
    # --- accepted since issue 18.
    row("projection-drift-tol", P, ["--formulation", "projection",
                                    "--drift-tol", "1e-9", "--t-end", "1"], 0,
        t_end=1.0,
        fixed_by="issue 18: the drift contract under projection checks the "
        "projected state (it failed at the first sample)"),
]


def check_row(r, bindir, timeout):
    """The list of what is wrong with one row's run."""
    tmp = tempfile.mkdtemp(prefix=f"daedalus_bad_{r['id']}_")
    try:
        name = r["exe"]
        out = os.path.join(tmp, "out")
        cli_checks.plant_sentinels(out, name)
        if r["setup"]:
            r["setup"](tmp, name)
        subst = {"out": out, "tmp": tmp, "name": name}
        args = [a.format(**subst) for a in r["args"]]
        if r["prefix"]:
            args = ["--output-dir", out] + (["--quiet"] if r["prefix"] is True
                                            else []) + args
        before = cli_checks.snapshot(tmp)
        res = cli_checks.run([os.path.join(bindir, name)] + args, tmp,
                             timeout)
        after = cli_checks.snapshot(tmp)
        bad = []
        kind = cli_checks.classify(res)
        if kind:
            return [f"{kind}: {cli_checks.describe(res)}"], res
        if res.rc != r["rc"]:
            bad.append(f"exit {res.rc}, expected {r['rc']}: "
                       f"{cli_checks.describe(res)}")
        for frag in r["msg"]:
            if frag not in res.stderr:
                bad.append(f"stderr lacks {frag!r}")
        for frag in r["not_msg"]:
            if frag in res.stderr:
                bad.append(f"stderr contains {frag!r}")
        for frag in r["not_stdout"]:
            if frag in res.stdout:
                bad.append(f"stdout contains {frag!r}")
        if res.rc in (1, 2):
            if not res.stderr.strip():
                bad.append("no message on stderr")
            bad += cli_checks.message_violations(res.stderr)
        allowed = {t.format(name=name) for t in r["touch"]}
        # Creating the output folder itself is allowed with its files.
        for t in list(allowed):
            parent = os.path.dirname(t)
            while parent:
                allowed.add(parent)
                parent = os.path.dirname(parent)
        changed = cli_checks.changes(before, after) - allowed
        if changed:
            bad.append("touched " + ", ".join(sorted(changed)))
        if res.rc in (0, 1) and res.rc == r["rc"] and "--help" not in args \
                and allowed:
            bad += cli_checks.output_violations(res, out, name, r["t_end"])
        return bad, res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="build/problems")
    ap.add_argument("--timeout-scale", type=float, default=1.0,
                    help="multiplies the 60 s per-run limit (sanitizers)")
    ap.add_argument("--only", action="append", default=[],
                    help="run only this row id (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the rows")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    if a.list:
        for r in ROWS:
            print(f"{r['id']:26} exit {r['rc']}  {r['exe']} "
                  f"{' '.join(r['args'])}")
        return 0
    rows = [r for r in ROWS if not a.only or r["id"] in a.only]
    if not rows:
        print("no row selected", file=sys.stderr)
        return 2
    failed = []
    for r in rows:
        bad, res = check_row(r, a.bin, 60.0 * a.timeout_scale)
        if bad:
            failed.append(r["id"])
            cmd = " ".join(_quote(x) for x in res.cmd)
            print(f"FAIL {r['id']}: " + "; ".join(bad))
            print(f"     command: {cmd}")
            if r["fixed_by"]:
                print(f"     (expects the fix of {r['fixed_by']})")
        elif a.verbose:
            print(f"ok   {r['id']} ({res.elapsed:.2f} s)")
    print(f"bad inputs: {len(rows)} rows, {len(rows) - len(failed)} as "
          f"expected, {len(failed)} failed" +
          (": " + " ".join(failed) if failed else ""))
    return 1 if failed else 0


def _quote(s):
    import shlex
    return shlex.quote(s)


if __name__ == "__main__":
    sys.exit(main())
