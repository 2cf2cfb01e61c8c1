"""Running a problem executable and checking what it leaves behind.

Shared by bad_inputs.py (the table of bad inputs) and fuzz_cli.py (the
command-line fuzzer); the contract is docs/output.md and issue 18:

- the process is not killed by a signal and does not hang;
- its exit status is 0 (finished), 1 (the run failed) or 2 (bad usage);
- exit 0: the JSON says "ok", every number in the CSV and the JSON is
  finite, the JSON's t_reached is the requested end (or the time of the
  event that stopped the run), the CSV has `samples` rows ending at
  t_reached, and neither file is a left-over of an earlier run;
- exit 1: the JSON says "failed" with a non-empty error, and stderr has
  the message;
- exit 2: a message on stderr, and every file that existed before the
  run is untouched (content and mtime) and no file is created.
"""
import hashlib
import json
import math
import os
import re
import signal
import subprocess
import time

# Written into <name>.csv and <name>.json before a run: a usage error must
# leave them as they are, a run must replace them.
SENTINEL = "sentinel of the robustness suite: not written by a run\n"

# Phrases that a message should never contain: the SUNDIALS ", ," of an
# empty argument, and empty lists where names were promised.
BAD_MESSAGE_FRAGMENTS = [", ,", "rows: ''", "rows: (", "rows:;", " ()",
                         "with NONE"]
# A message that shows the state as NaN names a function that merely met
# the damage done earlier (issue 18: "blames constraint 'rod' returned a
# non-finite value ... q=(x=-nan...)").
NAN_STATE = re.compile(r"q=\([^)]*\bnan", re.IGNORECASE)
SAME_RANK = re.compile(
    r"rank (?:of J(?:'s closed rows)? is )?(\d+) < \1 (?:closed )?rows")


class Outcome:
    """What one process did."""

    def __init__(self, cmd, rc, stdout, stderr, elapsed, timed_out):
        self.cmd = cmd
        self.rc = rc  # negative: killed by signal -rc
        self.stdout = stdout
        self.stderr = stderr
        self.elapsed = elapsed
        self.timed_out = timed_out

    @property
    def signal(self):
        return -self.rc if self.rc is not None and self.rc < 0 else 0


def default_signals():
    """preexec_fn for a child whose answer to signals is tested: SIGINT,
    SIGTERM and SIGHUP at their default disposition, whatever this script
    inherited (a fuzzer started under nohup ignores SIGHUP, a background
    job SIGINT; the programs keep a signal they start with ignored)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def run(cmd, cwd, timeout, env=None):
    """Runs cmd (a list) in cwd with a wall-clock limit; the process and
    its children are killed when it is exceeded."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env=env,
                            preexec_fn=default_signals)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    return Outcome(cmd, proc.returncode, out.decode("utf-8", "replace"),
                   err.decode("utf-8", "replace"), time.monotonic() - start,
                   timed_out)


def snapshot(root):
    """{relative path: description} of everything under root: regular
    files by size, mtime and content hash; directories and links by kind."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if os.path.islink(path):
                state[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                state[rel] = ("dir",)
            else:
                with open(path, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
                state[rel] = ("file", st.st_size, st.st_mtime_ns, digest)
    return state


def changes(before, after):
    """Paths created, deleted or modified between two snapshots (a
    directory counts as changed only when it appears or disappears)."""
    out = set()
    for rel in set(before) | set(after):
        a, b = before.get(rel), after.get(rel)
        if a != b:
            out.add(rel)
    return out


def _finite_json(node, where, bad, allowed_null):
    if node is None:
        if where not in allowed_null:
            bad.append(where or "(top)")
    elif isinstance(node, bool) or isinstance(node, str):
        return
    elif isinstance(node, (int, float)):
        if not math.isfinite(node):
            bad.append(where)
    elif isinstance(node, list):
        for i, x in enumerate(node):
            _finite_json(x, f"{where}[{i}]", bad, allowed_null)
    elif isinstance(node, dict):
        for k, x in node.items():
            _finite_json(x, f"{where}.{k}" if where else k, bad, allowed_null)


def _reject_constant(name):
    raise ValueError(f"'{name}' is not JSON")


def read_json(path):
    """The parsed JSON, or raises ValueError (NaN/Infinity are not JSON)."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh, parse_constant=_reject_constant)


def read_csv(path):
    """(header, rows) with the rows as lists of strings."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    if not lines:
        return [], []
    return lines[0].split(","), [ln.split(",") for ln in lines[1:]]


def csv_violations(path, expect_finite):
    """What is wrong with a CSV: unreadable numbers, ragged rows, and (when
    expect_finite) non-finite values; also returns the rows."""
    bad = []
    header, rows = read_csv(path)
    if not header or header[0] != "t":
        return [f"{os.path.basename(path)}: no header starting with 't'"], []
    values = []
    for i, row in enumerate(rows, 1):
        if len(row) != len(header):
            bad.append(f"{os.path.basename(path)} row {i}: {len(row)} fields, "
                       f"header has {len(header)}")
            continue
        if "defined" in header and row[header.index("defined")] == "0":
            # A counterfactual sample where it is undefined has empty
            # cells (docs/analysis.md).
            row = [x if x != "" else "0" for x in row]
        try:
            nums = [float(x) for x in row]
        except ValueError:
            bad.append(f"{os.path.basename(path)} row {i}: not a number")
            continue
        if expect_finite:
            for col, x in zip(header, nums):
                if not math.isfinite(x):
                    bad.append(f"{os.path.basename(path)} row {i}: {col} = "
                               f"{x}")
                    break
        values.append(nums)
        if len(bad) > 5:
            break
    return bad, values


def is_sentinel(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read() == SENTINEL
    except OSError:
        return False


def plant_sentinels(outdir, name):
    os.makedirs(outdir, exist_ok=True)
    for ext in ("csv", "json"):
        with open(os.path.join(outdir, f"{name}.{ext}"), "w",
                  encoding="utf-8") as fh:
            fh.write(SENTINEL)
    # An mtime in the past, so that a rewrite with the same text shows.
    past = time.time() - 3600
    for ext in ("csv", "json"):
        os.utime(os.path.join(outdir, f"{name}.{ext}"), (past, past))


def same_time(a, b):
    return abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))


def output_violations(outcome, outdir, name, t_end, step=None):
    """Checks the files of a run that ended with exit 0 or 1 (see the
    module docstring); t_end is the requested end (None: unknown), step
    the --step of a fixed-step scheme (whose run stops at the end of the
    step in which an event falls, docs/analysis.md)."""
    rc = outcome.rc
    bad = []
    csv_path = os.path.join(outdir, f"{name}.csv")
    json_path = os.path.join(outdir, f"{name}.json")
    if not os.path.isfile(json_path):
        return [f"exit {rc} but no {name}.json"]
    if is_sentinel(json_path):
        return [f"exit {rc} but {name}.json is the previous run's"]
    try:
        js = read_json(json_path)
    except ValueError as e:
        return [f"{name}.json is not valid JSON: {e}"]
    status = js.get("status")
    has_csv = os.path.isfile(csv_path)
    # The printed summary (without --quiet) ends with the paths written.
    for ln in outcome.stdout.splitlines():
        if ln.strip().startswith("wrote") and f"{name}.csv" in ln \
                and not has_csv:
            bad.append(f"the summary says it wrote {name}.csv, which does "
                       "not exist")
    if has_csv and is_sentinel(csv_path):
        bad.append(f"{name}.csv is the previous run's beside a new "
                   f"{name}.json (status {status})")
        has_csv = False
    if rc == 0:
        if status != "ok":
            bad.append(f"exit 0 with status {status!r}")
        nulls = []
        # null where there is no value: kkt_health without constraints,
        # a contact run that never rests or accumulates impacts.
        _finite_json(js, "", nulls, {"kkt_health", "contact.t_rest",
                                     "contact.t_accumulation"})
        if nulls:
            bad.append("non-finite (null) in the JSON at " +
                       ", ".join(nulls[:5]))
        if not has_csv:
            bad.append(f"exit 0 but no {name}.csv")
            return bad
        csv_bad, rows = csv_violations(csv_path, expect_finite=True)
        bad += csv_bad
        # The counterfactual branches (--counterfactual) are CSVs too.
        for f in sorted(os.listdir(outdir)):
            if f.startswith(f"{name}.counterfactual") and f.endswith(".csv"):
                bad += csv_violations(os.path.join(outdir, f), True)[0]
        t_reached = js.get("t_reached")
        if not isinstance(t_reached, (int, float)):
            bad.append(f"t_reached is {t_reached!r}")
            return bad
        stopped = [e for e in js.get("events", []) if e.get("stopped")]
        if stopped:
            t_event = stopped[-1].get("t", math.nan)
            late = t_reached - t_event if step else 0.0
            if not (same_time(t_reached, t_event) or
                    0 <= late <= step * (1 + 1e-9)):
                bad.append(f"stopped by event at t={t_event} but t_reached "
                           f"= {t_reached}")
        elif t_end is not None and not same_time(t_reached, t_end):
            bad.append(f"status ok but t_reached = {t_reached!r}, requested "
                       f"t_end = {t_end!r}")
        if js.get("samples") != len(rows):
            bad.append(f"JSON samples = {js.get('samples')} but the CSV has "
                       f"{len(rows)} rows")
        elif rows and not same_time(rows[-1][0], t_reached):
            bad.append(f"last CSV time {rows[-1][0]!r} != t_reached "
                       f"{t_reached!r}")
    elif rc == 1:
        error = js.get("error")
        if status == "failed":
            if not isinstance(error, str) or not error.strip():
                bad.append("status failed without an error")
        elif status == "ok":
            # Exit 1 with a finished run: only a failed extra analysis
            # (--counterfactual) may do that.
            cfs = js.get("counterfactuals", [])
            if not any(c.get("status") == "failed" for c in cfs
                       if isinstance(c, dict)):
                bad.append("exit 1 but the JSON says ok and no "
                           "counterfactual failed")
        else:
            bad.append(f"exit 1 with status {status!r}")
        if not outcome.stderr.strip():
            bad.append("exit 1 with nothing on stderr")
        if has_csv:
            csv_bad, rows = csv_violations(csv_path, expect_finite=False)
            bad += csv_bad
            samples = js.get("samples")
            if not csv_bad and samples is not None and samples != len(rows):
                bad.append(f"failed run: JSON samples = {samples} but the "
                           f"CSV has {len(rows)} rows")
    return bad


def message_violations(text):
    """Message fragments that point nowhere (BAD_MESSAGE_FRAGMENTS)."""
    bad = [f"message contains {frag!r}" for frag in BAD_MESSAGE_FRAGMENTS
           if frag in text]
    if SAME_RANK.search(text):
        bad.append("message says 'rank of J is r < r rows'")
    if NAN_STATE.search(text):
        bad.append("message shows a NaN state (the failure it names is not "
                   "the first one)")
    return bad


def classify(outcome):
    """'hang', 'signal', 'exit <n>' for a status outside {0, 1, 2}, or
    None when the process ended in an allowed way."""
    if outcome.timed_out:
        return "hang"
    if outcome.signal:
        return "signal"
    if outcome.rc not in (0, 1, 2):
        return f"exit {outcome.rc}"
    return None


def describe(outcome):
    sig = ""
    if outcome.signal:
        try:
            sig = f" ({signal.Signals(outcome.signal).name})"
        except ValueError:
            pass
    tail = outcome.stderr.strip().splitlines()[-3:]
    return (f"rc={outcome.rc}{sig} after {outcome.elapsed:.2f} s"
            + ("; stderr: " + " | ".join(tail) if tail else ""))


def help_info(exe, timeout):
    """From `exe --help`: default t_end and output step, parameter names
    with their ranges, and integer problem options (name, min, max)."""
    out = run([exe, "--help"], cwd="/", timeout=timeout)
    if out.rc != 0:
        raise RuntimeError(f"{exe} --help: {describe(out)}")
    info = {"t_end": None, "output_step": None, "params": {},
            "int_options": {}}
    m = re.search(r"--t-end T\s+final time \[s\] \(default ([^)]+)\)",
                  out.stdout)
    if m:
        info["t_end"] = float(m.group(1))
    m = re.search(r"--output-step DT\s+output spacing \[s\] \(default "
                  r"([^)]+)\)", out.stdout)
    if m:
        info["output_step"] = float(m.group(1))
    section = out.stdout.split("\nparameters:", 1)[-1].split(
        "\ninput channels", 1)[0]
    for ln in section.splitlines():
        pm = re.match(r"\s+(\S+) = (\S+)(?:\s+\((.*)\))?$", ln)
        if pm:
            info["params"][pm.group(1)] = (float(pm.group(2)),
                                           pm.group(3) or "any value")
    for om in re.finditer(r"--(\w[\w-]*) N\s.*\((-?\d+)\.\.(\d+)",
                          out.stdout):
        info["int_options"][om.group(1)] = (int(om.group(2)),
                                            int(om.group(3)))
    return info
