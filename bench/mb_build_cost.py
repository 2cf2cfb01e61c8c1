#!/usr/bin/python3
"""What a multibody model costs before its first step (issue 15,
docs/performance.md "Multibody models: build and compile time").

usage: bench/mb_build_cost.py [BUILD_DIR] [--repeats N]   (default build-bench)

1. Runs BUILD_DIR/bench/mb_build_bench: CPU seconds to build the Model of
   a 30-body tree and of the humanoid URDF on a fixed base, their first
   evaluation (recording and compiling the programs), the steady
   evaluation and a first 0.01 s run, in the energy and recursive forms.
2. Compiles the catalogue's model files written with the multibody
   description (four_bar_mb, slider_crank_mb) and the same mechanisms
   written with energies (four_bar, slider_crank) with the exact command
   of BUILD_DIR/compile_commands.json, output to /dev/null, without the
   build's precompiled header (a user's project has none), alternating the
   two files N times (default 3); prints the compiler's CPU seconds (best
   of N) and the ratio multibody / energies. Target: <= 1.
"""
import json
import os
import resource
import shlex
import subprocess
import sys

args = sys.argv[1:]
repeats = 3
if "--repeats" in args:
    i = args.index("--repeats")
    repeats = int(args[i + 1])
    del args[i:i + 2]
build = args[0] if args else "build-bench"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

print("load average before the run: %.2f %.2f %.2f" % os.getloadavg())
subprocess.run([f"{build}/bench/mb_build_bench", "--repeats", str(repeats)],
               check=True)

with open(f"{build}/compile_commands.json") as f:
    commands = {os.path.realpath(e["file"]): e for e in json.load(f)}


def command_for(rel):
    path = os.path.realpath(os.path.join(root, rel))
    if path not in commands:
        sys.exit(f"mb_build_cost: {rel} is not in {build}/compile_commands.json;"
                 " configure the build first (cmake --preset bench)")
    e = commands[path]
    argv = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "-MF", "-MT", "-MQ", "-include"):
            # Their argument goes too; the object goes to /dev/null, the
            # build's precompiled header (-include <pch>) is left out.
            if a == "-o":
                out += ["-o", "/dev/null"]
            i += 2
            continue
        if a not in ("-MD", "-MMD", "-Winvalid-pch") and \
                not a.endswith("ccache"):
            out.append(a)
        i += 1
    return out, e["directory"]


def cpu_of(argv, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


pairs = [("four_bar", "problems/models/four_bar_mb.cpp",
          "problems/models/four_bar.cpp"),
         ("slider_crank", "problems/models/slider_crank_mb.cpp",
          "problems/models/slider_crank.cpp")]
print(f"\ncompile time of a model file, compiler CPU seconds, best of {repeats}"
      " (no precompiled header; the flags of the build):")
print(f"  {'mechanism':14s} {'multibody':>10s} {'energies':>10s} {'ratio':>7s}")
for name, mbfile, efile in pairs:
    cm, dm = command_for(mbfile)
    ce, de = command_for(efile)
    tm, te = [], []
    for _ in range(repeats):
        tm.append(cpu_of(cm, dm))
        te.append(cpu_of(ce, de))
    print(f"  {name:14s} {min(tm):10.2f} {min(te):10.2f} "
          f"{min(tm) / min(te):7.2f}")
