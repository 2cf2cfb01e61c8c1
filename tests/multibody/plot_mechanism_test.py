#!/usr/bin/python3
"""scripts/plot draws a multibody run's mechanism from its poses file
(docs/output.md, "Files beside the CSV"): four_bar_mb (planar) and
heavy_top (spatial) runs give RUN_mechanism.png beside the other figures,
a PNG with the mechanism drawn (not blank); --traces takes "all" and
refuses an unknown frame (exit 2); a malformed poses file is
refused with exit status 1 and leaves the figures as they were; without a
poses file no mechanism figure is written. Skipped (exit 77) when
/usr/bin/python3 has no matplotlib.

usage: plot_mechanism_test.py PLOT_SCRIPT WORK_DIR EXE...
"""
import os
import shutil
import subprocess
import sys


def main(argv):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIP: matplotlib is not installed for /usr/bin/python3 "
              "(python3-matplotlib; scripts/setup installs it)")
        return 77
    import matplotlib.image
    plot, work, exes = argv[0], argv[1], argv[2:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bad = []
    for exe in exes:
        name = os.path.basename(exe)
        out = os.path.join(work, name)
        subprocess.run([exe, "--t-end", "0.5", "--output-dir", out,
                        "--quiet"], check=True)
        csv = os.path.join(out, name + ".csv")
        r = subprocess.run([sys.executable, plot, csv, "--instants", "4"],
                           capture_output=True, text=True)
        png = os.path.join(out, name + "_mechanism.png")
        if r.returncode != 0:
            bad.append(f"{name}: plot exit {r.returncode}: {r.stderr}")
            continue
        if png not in r.stdout.split():
            bad.append(f"{name}: {png} not listed in {r.stdout!r}")
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                bad.append(f"{name}: {png} is not a PNG")
        img = matplotlib.image.imread(png)
        # Coloured pixels (the bodies; axes and text are grey or black).
        rgb = img[:, :, :3]
        spread = rgb.max(axis=2) - rgb.min(axis=2)
        coloured = int((spread > 0.2).sum())
        if coloured < 200:
            bad.append(f"{name}: only {coloured} coloured pixels in {png}")
        print(f"{name}: {png}, {img.shape[1]}x{img.shape[0]}, {coloured} "
              "coloured pixels")
        # --traces: every frame, or an unknown frame (bad usage, exit 2).
        r = subprocess.run([sys.executable, plot, csv, "--traces", "all",
                            "--dpi", "30"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(f"{name}: --traces all: exit {r.returncode}")
        r = subprocess.run([sys.executable, plot, csv, "--traces", "nosuch"],
                           capture_output=True, text=True)
        if r.returncode != 2 or "no frame nosuch" not in r.stderr:
            bad.append(f"{name}: --traces nosuch: exit {r.returncode}, "
                       f"{r.stderr!r}")
        # A malformed poses file: exit 1, the old figure untouched.
        poses = os.path.join(out, name + ".poses.csv")
        before = os.path.getmtime(png)
        with open(poses, "a", encoding="utf-8") as f:
            f.write("1,2\n")
        r = subprocess.run([sys.executable, plot, csv], capture_output=True,
                           text=True)
        if r.returncode != 1 or "poses.csv" not in r.stderr:
            bad.append(f"{name}: malformed poses file gave exit "
                       f"{r.returncode}, stderr {r.stderr!r}")
        if os.path.getmtime(png) != before:
            bad.append(f"{name}: {png} replaced after a refused poses file")
        # Without a poses file: the other figures only.
        os.remove(poses)
        os.remove(png)
        r = subprocess.run([sys.executable, plot, csv, "--dpi", "30"],
                           capture_output=True, text=True)
        if r.returncode != 0 or os.path.exists(png):
            bad.append(f"{name}: without poses file: exit {r.returncode}, "
                       f"mechanism figure {os.path.exists(png)}")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
