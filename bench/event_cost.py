#!/usr/bin/python3
"""What the event terms of forward sensitivities cost (issue 35: under 5 %
of a forward run). Runs problem executables under callgrind, which counts
instructions (repeatable whatever the machine's load), and reports the
instructions spent in the events layer (src/events/: the event functions'
linearization, dt_e/dp, the total sensitivities at a stop, the saltation
matrices and functionals at events) as a share of the whole run.

Usage: bench/event_cost.py [BUILD_DIR]
"""
import os
import re
import subprocess
import sys
import tempfile

CASES = [
    ("golf_swing", ["--rtol", "1e-10", "--atol", "1e-12", "--sens",
                    "lc,u_wrist,T_down,k_shaft,mh,wrist_cock",
                    "--functional", "clubhead_speed"]),
    ("golfer_3d", ["--rtol", "1e-10", "--atol", "1e-12", "--sens",
                   "U_wrist,cock0,f_shaft", "--functional", "head_speed"]),
    ("bouncing_ball", ["--rtol", "1e-12", "--atol", "1e-14", "--sens",
                       "e,h0", "--functional", "t_impact@impact#10"]),
]
# The events layer's entry points (inclusive counts; they do not call
# each other, except through the ones listed first).
ENTRY = re.compile(r"daedalus::internal::(EventHandler::(Linearize|TotalSensitivity|"
                   r"Annotate|ResetState|SensitivitiesAfter|Restarted|AtEnd)|"
                   r"EventHandler::EventHandler)\(")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    for name, args in CASES:
        exe = os.path.join(build, "problems", name)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "cg.out")
            subprocess.run(["valgrind", "--tool=callgrind",
                            f"--callgrind-out-file={out}", exe, "--quiet",
                            "--output-dir", tmp] + args,
                           check=True, stderr=subprocess.DEVNULL)
            text = subprocess.run(
                ["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                 out], check=True, capture_output=True, text=True).stdout
        total = events = 0
        for line in text.splitlines():
            m = re.match(r"\s*([\d,]+) \(", line)
            if not m:
                continue
            n = int(m.group(1).replace(",", ""))
            if "PROGRAM TOTALS" in line:
                total = n
            elif ENTRY.search(line):
                events += n
        print(f"{name:14s} run {total / 1e6:9.1f} M instructions, events layer "
              f"{events / 1e6:7.3f} M ({100 * events / total:.3f} %)")


if __name__ == "__main__":
    main()
