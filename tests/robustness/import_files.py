#!/usr/bin/python3
"""Bad model files given to the importer executables (issue 40; docs/robustness.md,
"Model files"): build/problems/urdf and build/problems/mjcf on files that
crashed urdfdom, hung it, were misreported or ignored. Each case must

- exit with status 2 (a usage error, not a crash or a signal), within the
  time limit (the 50 000-deep URDF crashed urdfdom with exit 139; 30 000
  took 35 s);
- name the cause in its message (the substring below: the file, line and
  element where there is one);
- write nothing: the output folder is not created.

A good file of each kind runs and writes its three files, so that the
checks above cannot pass by the executables failing on everything.

Usage: import_files.py --bin BUILD/problems [--timeout-scale S]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

SAMPLES = "/usr/share/mujoco/model"

URDF_OK = """<?xml version="1.0"?>
<robot name="r">
  <link name="base"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <link name="l1"><inertial><origin xyz="0 0 -0.5"/><mass value="MASS"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
</robot>
"""

MJCF_OK = """<mujoco>
  <worldbody>
    <body name="b" pos="0 0 1">
      <joint name="j" axis="0 1 0" RANGE/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02"/>
    </body>
  </worldbody>
</mujoco>
"""


def cases(d):
    """(name, executable, file, expected substring) for each bad file."""
    def write(name, text, mode="w"):
        path = os.path.join(d, name)
        with open(path, mode) as fh:
            fh.write(text)
        return path

    ok_urdf = URDF_OK.replace("MASS", "1")
    deep = "<robot name='d'>" + "<a>" * 50000 + "</a>" * 50000 + "</robot>"
    out = [
        ("urdf nested 50 000 deep", "urdf", write("deep.urdf", deep),
         "elements nested more than 100 deep"),
        ("urdf mass nan", "urdf",
         write("nan.urdf", URDF_OK.replace("MASS", "nan")),
         "line 8: <mass> value=\"nan\": 'nan' is not finite"),
        ("urdf mass inf", "urdf",
         write("inf.urdf", URDF_OK.replace("MASS", "inf")),
         "'inf' is not finite"),
        ("urdf mass text", "urdf",
         write("text.urdf", URDF_OK.replace("MASS", "heavy")),
         "'heavy' is not a number"),
        ("urdf inertia without ixx", "urdf",
         write("noixx.urdf", ok_urdf.replace('ixx="0.1" ', "")),
         "<inertia> has no ixx"),
        ("urdf joint cycle", "urdf",
         write("cycle.urdf", ok_urdf.replace(
             "</robot>",
             '<joint name="back" type="fixed"><parent link="l1"/>'
             '<child link="base"/></joint></robot>')),
         "form a cycle"),
        ("urdf joint named j,1", "urdf",
         write("comma.urdf", ok_urdf.replace('name="j1"', 'name="j,1"')),
         "the joint name \"j,1\" holds a comma"),
        ("urdf empty link name", "urdf",
         write("empty.urdf", ok_urdf.replace('<link name="l1">',
                                             '<link name="">')),
         "a link has an empty name"),
        ("urdf entity expansion", "urdf",
         write("entity.urdf",
               '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaa">'
               '<!ENTITY b "&a;&a;&a;&a;">]>\n' + ok_urdf.split("\n", 1)[1]),
         "a <!DOCTYPE> declaration"),
        ("urdf binary file", "urdf",
         write("binary.urdf", b"\x7fELF\x02\x01\x01\x00\x00", "wb"),
         "is a binary file"),
        ("urdf folder", "urdf", os.path.join(d, "folder.urdf"),
         "is a folder, not a file"),
        ("mjcf tendons (arm26.xml)", "mjcf",
         os.path.join(SAMPLES, "tendon_arm", "arm26.xml"),
         "arm26.xml:71: <spatial name='SF'>: tendons are not supported"),
        ("mjcf include loop", "mjcf", os.path.join(d, "loop_a.xml"),
         "an include loop"),
        ("mjcf body without mass", "mjcf",
         write("massless.xml", MJCF_OK.replace("RANGE", "").replace(
             '<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02"/>',
             "")),
         "massless.xml:3: <body name='b'>: a moving body (joint 'j') "
         "without mass"),
        ("mjcf degrees in radian mode", "mjcf",
         write("radian.xml", MJCF_OK.replace(
             "<mujoco>", "<mujoco><compiler angle='radian'/>").replace(
             "RANGE", 'range="-90 90"')),
         "beyond +-2 pi while <compiler angle='radian'>"),
        ("mjcf inertia not positive definite", "mjcf",
         write("nonpd.xml", MJCF_OK.replace("RANGE", "").replace(
             '<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02"/>',
             '<inertial pos="0 0 0" mass="1" fullinertia="1 1 1 3 0 0"/>')),
         "is not positive definite"),
        ("mjcf mass nan", "mjcf",
         write("nan.xml", MJCF_OK.replace("RANGE", "").replace(
             'size="0.02"/>', 'size="0.02" mass="nan"/>')),
         "'nan' is not finite"),
        ("mjcf entity expansion", "mjcf",
         write("entity.xml", '<!DOCTYPE m [<!ENTITY a "aaaa">]>\n' +
               MJCF_OK.replace("RANGE", "")),
         "a <!DOCTYPE> declaration"),
        ("mjcf binary file", "mjcf",
         write("binary.xml", b"\x00\x01\x02", "wb"), "is a binary file"),
        ("mjcf folder", "mjcf", os.path.join(d, "folder.xml"),
         "is a folder, not a file"),
        ("mjcf unknown element", "mjcf",
         write("unknown.xml", MJCF_OK.replace("RANGE", "").replace(
             "<worldbody>", "<worldbody><frame/>")),
         "unknown.xml:2: <frame>: not an element of <worldbody>"),
        # Found by fuzz_edges.py: the message named only the missing file,
        # not the <include> (file and line) that asked for it.
        ("mjcf include of a missing file", "mjcf",
         write("inc_missing.xml", "<mujoco>\n<include file='nosuch.xml'/>"
               "\n</mujoco>"),
         "inc_missing.xml:2: <include file='nosuch.xml'>: the included MJCF "
         "file"),
        # Found by fuzz_edges.py: limited='true' (from a default class or
        # the joint) without a range crashed with SIGSEGV (exit 139).
        ("mjcf limited without a range", "mjcf",
         write("norange.xml", MJCF_OK.replace("RANGE", 'limited="true"')),
         "norange.xml:4: <joint name='j'>: limited='true' without a range"),
        # Found by fuzz_edges.py: a Latin-1 name aborted the process when
        # the JSON was written (nlohmann type_error 316, exit 134).
        ("urdf latin-1 link name", "urdf",
         write("latin1.urdf", URDF_OK.replace("MASS", "1").replace(
             '"l1"', '"l\xe91"').encode("latin-1"), "wb"),
         "latin1.urdf', line 5: bytes that are not UTF-8 text"),
        ("mjcf latin-1 body name", "mjcf",
         write("latin1.xml", MJCF_OK.replace("RANGE", "").replace(
             'name="b"', 'name="b\xe9"').encode("latin-1"), "wb"),
         "latin1.xml', line 3: bytes that are not UTF-8 text"),
        ("mjcf include of a binary file", "mjcf",
         write("inc_binary.xml", "<mujoco>\n\n<include file='binary.xml'/>"
               "</mujoco>"),
         "inc_binary.xml:3: <include file='binary.xml'>: the included MJCF "
         "file"),
    ]
    os.makedirs(os.path.join(d, "folder.urdf"))
    os.makedirs(os.path.join(d, "folder.xml"))
    write("loop_a.xml", "<mujoco><include file='loop_b.xml'/></mujoco>")
    write("loop_b.xml", "<mujoco><include file='loop_a.xml'/></mujoco>")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    a = ap.parse_args()
    limit = 10.0 * a.timeout_scale
    failures = []
    work = tempfile.mkdtemp(prefix="daedalus_import_files_")
    try:
        for name, exe, path, want in cases(work):
            out = os.path.join(work, "out_" + name.replace(" ", "_"))
            start = time.monotonic()
            try:
                r = subprocess.run([os.path.join(a.bin, exe), "--model", path,
                                    "--t-end", "0.01", "--quiet",
                                    "--output-dir", out],
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True,
                                   errors="replace", timeout=limit)
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: no answer within {limit} s")
                continue
            took = time.monotonic() - start
            line = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
            print(f"{name:38s} exit {r.returncode:4d} {took:6.2f} s  {line[:150]}")
            if r.returncode != 2:
                failures.append(f"{name}: exit {r.returncode}, not 2")
            if want not in r.stderr:
                failures.append(f"{name}: the message does not say {want!r}:"
                                f"\n{r.stderr}")
            if os.path.exists(out):
                failures.append(f"{name}: {out} was written for a model "
                                "that failed to import")
        # The good files run and write (so the above cannot pass by
        # accident).
        for exe, name, text in (
                ("urdf", "good.urdf", URDF_OK.replace("MASS", "1")),
                ("mjcf", "good.xml", MJCF_OK.replace("RANGE", ""))):
            path = os.path.join(work, name)
            with open(path, "w") as fh:
                fh.write(text)
            out = os.path.join(work, "out_" + name)
            r = subprocess.run([os.path.join(a.bin, exe), "--model", path,
                                "--t-end", "0.01", "--quiet", "--output-dir",
                                out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               timeout=limit)
            wrote = sorted(os.listdir(out)) if os.path.isdir(out) else []
            print(f"{name:38s} exit {r.returncode:4d} wrote {wrote}")
            if r.returncode != 0 or len(wrote) != 3:
                failures.append(f"{name}: exit {r.returncode}, wrote {wrote}:"
                                f"\n{r.stderr}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
