#!/usr/bin/python3
"""Daedalus as an installed CMake package (issue 17, docs/using_as_a_package.md).

Installs the build tree to a fresh prefix (cmake --install), configures
examples/external against it with find_package(daedalus CONFIG REQUIRED)
and CMAKE_PREFIX_PATH only, builds it (daedalus_add_problem: the
kernel-generator, its run with --emit-kernels, the executable with the
kernels), runs the executable with the common command line and checks the
physics of its output against closed forms:

- the period of the cart-pendulum at a finite amplitude against the
  quadrature in examples/external/cart_pendulum.cpp (and that it is not the
  small-angle or the fixed-pivot period, so that a wrong model cannot pass);
- the centre of mass and the horizontal momentum, which no external force
  changes;
- the run used the native kernels the external build generated, the
  external build used nothing from the source or build tree, and the
  package refuses another minor version;
- the executable maps no SuiteSparse or MPI library at start, and a run on
  the sparse path (IDAS with KLU) loads the installed module
  lib/daedalus/libdaedalus_sparse.so (docs/performance.md);
- find_package(daedalus) with SUNDIALS or Eigen missing names the Debian
  package to install;
- with the importers built (DAEDALUS_URDF and DAEDALUS_MJCF in the build's
  CMakeCache.txt), the installed daedalus::urdf and daedalus::mjcf link
  into examples/external/import_models, which imports the 7-joint arm from
  problems/data/arm7.urdf and from its MJCF twin arm7.xml and runs both:
  the two runs end at the same coordinates (the same robot written twice)
  and the arm moved; find_package(daedalus COMPONENTS urdf) without urdfdom
  names liburdfdom-dev.

Usage: external_project_test.py --build BUILD --source SOURCE --work DIR
         --cmake CMAKE --generator G --cxx CXX --build-type T
         --version V [--cxx-flags F] [--cxx-flags-config F]
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

# Period from the zero crossings of theta(t), interpolated linearly between
# samples 1 ms apart (theta'' vanishes with theta, so the interpolation
# error is O(h^3 theta''' / theta'), at most 5e-9 s), integrated with rtol
# 1e-10 and atol 1e-12. Measured: 5.7e-11 and 1.5e-11 relative for the two
# runs below (g++ 12, release).
PERIOD_TOL = 1e-9
# The centre of mass and the momentum are linear invariants of the
# equations of motion (the rod's force is internal: the cart's and the
# bob's rows of J' lambda cancel horizontally, the Baumgarte term's too),
# and a BDF step with its Newton iteration preserves linear invariants, so
# they are kept to round-off: measured 1.6e-15; some 5000 steps could
# accumulate at most ~5000 ulp of 0.3.
COM_TOL = 1e-12


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode != 0:
        print(r.stdout)
        raise SystemExit(f"FAILED (exit {r.returncode}): {' '.join(cmd)}")
    return r.stdout


def closed_form_period(M, m, l, g, theta0, n=2000):
    """P = 4 sqrt(l/g) int_0^{pi/2} sqrt(1 - mu cos^2 theta) / cos(theta/2)
    dphi with sin(theta/2) = sin(theta0/2) sin(phi) (cart_pendulum.cpp);
    composite Simpson on a smooth integrand (error ~ 1e-13)."""
    mu = m / (M + m)
    k = math.sin(theta0 / 2)

    def f(phi):
        th = 2 * math.asin(k * math.sin(phi))
        return math.sqrt(1 - mu * math.cos(th) ** 2) / math.cos(th / 2)

    h = (math.pi / 2) / n
    s = f(0) + f(math.pi / 2)
    s += sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
    return 4 * math.sqrt(l / g) * s * h / 3


def read_csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    cols = {name: [float(r[i]) for r in rows[1:]] for i, name in enumerate(head)}
    return cols


def check_run(exe, out, params, failures):
    args = [exe, "--quiet", "--output-dir", out]
    for k, v in params.items():
        args += ["--param", f"{k}={v!r}"]
    sh(args)
    with open(os.path.join(out, "cart_pendulum.json")) as fh:
        summary = json.load(fh)
    c = read_csv(os.path.join(out, "cart_pendulum.csv"))
    M, m, l, g, theta0 = (params[k] for k in ("M", "m", "l", "g", "theta0"))
    tag = f"[{', '.join(f'{k}={v}' for k, v in params.items())}]"
    if summary.get("status") != "ok":
        failures.append(f"{tag} status {summary.get('status')!r}, not ok")
    # The external build's kernel step worked: the run used native code.
    if summary.get("evaluator") != "compiled (native kernels)":
        failures.append(f"{tag} evaluator {summary.get('evaluator')!r}, not "
                        "'compiled (native kernels)': the kernels generated "
                        "by daedalus_add_problem were not used")
    t = c["t"]
    theta = [math.atan2(xb - xc, -yb)
             for xc, xb, yb in zip(c["xc"], c["xb"], c["yb"])]
    if abs(theta[0] - theta0) > 1e-12:
        failures.append(f"{tag} theta(0) = {theta[0]}, expected {theta0}")
    # Downward crossings of theta = 0 (it starts at +theta0 at rest).
    down = []
    for i in range(1, len(t)):
        if theta[i - 1] > 0 >= theta[i]:
            s = theta[i - 1] / (theta[i - 1] - theta[i])
            down.append(t[i - 1] + s * (t[i] - t[i - 1]))
    if len(down) < 3:
        failures.append(f"{tag} only {len(down)} downward crossings of "
                        "theta = 0: the bob does not swing")
        return
    period = (down[-1] - down[0]) / (len(down) - 1)
    exact = closed_form_period(M, m, l, g, theta0)
    small = 2 * math.pi * math.sqrt(M * l / ((M + m) * g))
    pivot = 2 * math.pi * math.sqrt(l / g)
    rel = abs(period - exact) / exact
    print(f"{tag} period {period:.12f} s, closed form {exact:.12f} s "
          f"(relative error {rel:.2e}); small-angle {small:.6f} s, fixed "
          f"pivot {pivot:.6f} s")
    if rel > PERIOD_TOL:
        failures.append(f"{tag} period {period!r} s, closed form {exact!r} s: "
                        f"relative error {rel:.3e} > {PERIOD_TOL}")
    # The closed form is distinguishable from the approximations at this
    # amplitude and mass ratio (otherwise the check above proves little).
    for name, other in (("small-angle", small), ("fixed-pivot", pivot)):
        if abs(exact - other) / exact < 100 * PERIOD_TOL:
            failures.append(f"{tag} the {name} period {other} is too close "
                            f"to the closed form {exact} to tell them apart")
    # The first crossing comes after a quarter period.
    if abs(down[0] - exact / 4) > PERIOD_TOL * exact + 1e-6:
        failures.append(f"{tag} first crossing at {down[0]} s, expected a "
                        f"quarter period {exact / 4} s")
    # Centre of mass and horizontal momentum.
    x0 = m * l * math.sin(theta0)
    com = max(abs(M * xc + m * xb - x0) for xc, xb in zip(c["xc"], c["xb"]))
    mom = max(abs(M * vc + m * vb)
              for vc, vb in zip(c["v_xc"], c["v_xb"]))
    # The cart swings between 0 and -2 m l sin(theta0) / (M + m) (the bob
    # between +-theta0 about the fixed centre of mass); sampled every 1 ms,
    # the extreme is missed by at most xc'' (0.5 ms)^2 / 2 ~ 4e-6 of it.
    swing = max(abs(xc) for xc in c["xc"])
    swing_exact = 2 * m * l * math.sin(theta0) / (M + m)
    print(f"{tag} max |M xc + m xb - X0| = {com:.3e} m, max |M xc' + m xb'| "
          f"= {mom:.3e} kg m/s; the cart swings {swing:.9f} m "
          f"(closed form {swing_exact:.9f} m)")
    if abs(swing - swing_exact) > 1e-5 * swing_exact:
        failures.append(f"{tag} the cart swings {swing} m, closed form "
                        f"{swing_exact} m")
    if com > COM_TOL or mom > COM_TOL:
        failures.append(f"{tag} centre of mass moved by {com:.3e} m or "
                        f"momentum {mom:.3e} kg m/s > {COM_TOL}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cmake", required=True)
    ap.add_argument("--generator", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--build-type", required=True)
    ap.add_argument("--version", required=True,
                    help="the project's version (PROJECT_VERSION)")
    ap.add_argument("--cxx-flags", default="",
                    help="CMAKE_CXX_FLAGS of the Daedalus build")
    ap.add_argument("--cxx-flags-config", default="",
                    help="CMAKE_CXX_FLAGS_<BUILD_TYPE> of the Daedalus build")
    a = ap.parse_args()
    build, source, work = (os.path.abspath(p)
                           for p in (a.build, a.source, a.work))
    shutil.rmtree(work, ignore_errors=True)
    prefix = os.path.join(work, "prefix")
    ext = os.path.join(work, "build")
    failures = []

    sh([a.cmake, "--install", build, "--prefix", prefix])
    with open(os.path.join(build, "CMakeCache.txt")) as fh:
        cache = fh.read()
    # The sanitizer build's library is shared (src/CMakeLists.txt), the
    # others' static.
    library = ("libdaedalus.so" if "DAEDALUS_SANITIZE:BOOL=ON" in cache
               else "libdaedalus.a")
    installed = ["include/daedalus/run.hpp", "include/daedalus/kernels.hpp",
                 f"lib/{library}", "lib/cmake/daedalus/daedalusConfig.cmake",
                 "lib/cmake/daedalus/daedalusConfigVersion.cmake",
                 "lib/cmake/daedalus/DaedalusProblem.cmake",
                 "lib/daedalus/libdaedalus_sparse.so"]
    # The importers, when this build has them.
    importers = ("DAEDALUS_URDF:BOOL=ON" in cache and
                 "DAEDALUS_MJCF:BOOL=ON" in cache)
    if importers:
        installed += ["include/daedalus/urdf.hpp", "include/daedalus/mjcf.hpp",
                      "lib/libdaedalus_urdf.a", "lib/libdaedalus_mjcf.a",
                      "lib/cmake/daedalus/daedalusUrdfTargets.cmake",
                      "lib/cmake/daedalus/daedalusMjcfTargets.cmake"]
    for f in installed:
        if not os.path.exists(os.path.join(prefix, f)):
            failures.append(f"cmake --install did not install {f}")

    bt = a.build_type
    sh([a.cmake, "-S", os.path.join(source, "examples", "external"),
        "-B", ext, "-G", a.generator, f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DCMAKE_CXX_COMPILER={a.cxx}", f"-DCMAKE_BUILD_TYPE={bt}",
        f"-DCMAKE_CXX_FLAGS={a.cxx_flags}",
        f"-DCMAKE_CXX_FLAGS_{bt.upper()}={a.cxx_flags_config}"])
    # One job: the steps depend on each other (objects, kernel generator,
    # kernels, executable), and ctest runs other tests beside this one.
    sh([a.cmake, "--build", ext, "-j", "1"])

    # Nothing of the Daedalus source or build tree on the command lines of
    # the external build: headers, library and module come from the prefix.
    ninja_file = os.path.join(ext, "build.ninja")
    if not os.path.exists(ninja_file):
        raise SystemExit(f"no {ninja_file}: the test needs the Ninja "
                         f"generator, got {a.generator}")
    with open(ninja_file) as fh:
        ninja = fh.read()
    for tree in (os.path.join(source, "include"), os.path.join(source, "src"),
                 os.path.join(source, "cmake")):
        if tree in ninja:
            failures.append(f"the external build refers to {tree}")
    # The work directory may lie inside the build tree (it does under
    # ctest); any other path into the build tree is a leak.
    for hit in re.finditer(re.escape(build + os.sep) + r"[^\s$:]*", ninja):
        if not hit.group(0).startswith(work + os.sep):
            failures.append("the external build refers to the build tree: "
                            + hit.group(0))
            break
    if os.path.join(prefix, "lib", library) not in ninja:
        failures.append("the external build does not link the installed "
                        + library)

    # The version file: while 0.x, another minor version is not compatible
    # (examples/external asks for this one's major.minor and is accepted).
    major, minor = a.version.split(".")[:2]
    wanted = f"{major}.{int(minor) + 1}"
    d = os.path.join(work, "version_check")
    os.makedirs(d)
    with open(os.path.join(d, "CMakeLists.txt"), "w") as fh:
        fh.write("cmake_minimum_required(VERSION 3.22)\n"
                 "project(version_check LANGUAGES NONE)\n"
                 f"find_package(daedalus {wanted} CONFIG)\n"
                 "message(STATUS \"daedalus_FOUND=${daedalus_FOUND}\")\n")
    out = sh([a.cmake, "-S", d, "-B", os.path.join(d, "build"),
              f"-DCMAKE_PREFIX_PATH={prefix}"])
    # Found, read and refused for its version (not missing altogether).
    if "daedalus_FOUND=0" not in out or f"version: {a.version}" not in out:
        print(out)
        failures.append(f"find_package(daedalus {wanted}) did not refuse "
                        f"the installed version {a.version}")

    # A missing dependency is named with its Debian package.
    for dep, debian in (("SUNDIALS", "libsundials-dev"),
                        ("Eigen3", "libeigen3-dev")):
        d = os.path.join(work, f"missing_{dep}")
        os.makedirs(d)
        with open(os.path.join(d, "CMakeLists.txt"), "w") as fh:
            fh.write("cmake_minimum_required(VERSION 3.22)\n"
                     "project(missing LANGUAGES NONE)\n"
                     "find_package(daedalus CONFIG REQUIRED)\n")
        r = subprocess.run([a.cmake, "-S", d, "-B", os.path.join(d, "build"),
                            f"-DCMAKE_PREFIX_PATH={prefix}",
                            f"-DCMAKE_DISABLE_FIND_PACKAGE_{dep}=ON"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        # CMake wraps long messages: compare without line breaks.
        text = " ".join(r.stdout.split())
        want = f"daedalus needs {dep}"
        if r.returncode == 0 or want not in text or \
                f"apt-get install {debian}" not in text:
            print(r.stdout)
            failures.append(f"find_package(daedalus) without {dep} did not "
                            f"fail with '{want} ... apt-get install "
                            f"{debian}'")

    # A requested importer whose library is missing names its package.
    if importers:
        d = os.path.join(work, "missing_urdfdom")
        os.makedirs(d)
        with open(os.path.join(d, "CMakeLists.txt"), "w") as fh:
            fh.write("cmake_minimum_required(VERSION 3.22)\n"
                     "project(missing LANGUAGES C CXX)\n"
                     "find_package(daedalus CONFIG REQUIRED COMPONENTS urdf)\n")
        r = subprocess.run([a.cmake, "-S", d, "-B", os.path.join(d, "build"),
                            f"-DCMAKE_PREFIX_PATH={prefix}",
                            "-DCMAKE_DISABLE_FIND_PACKAGE_urdfdom=ON"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        text = " ".join(r.stdout.split())
        if r.returncode == 0 or "apt-get install liburdfdom-dev" not in text:
            print(r.stdout)
            failures.append("find_package(daedalus COMPONENTS urdf) without "
                            "urdfdom did not fail naming liburdfdom-dev")

    # The importers through the package: the same arm from URDF and MJCF.
    if importers:
        models = os.path.join(ext, "import_models")
        if not os.path.exists(models):
            failures.append(f"{models} was not built: daedalus::urdf and "
                            "daedalus::mjcf were not found by the external "
                            "project")
        else:
            data = os.path.join(source, "problems", "data")
            out = sh([models, os.path.join(data, "arm7.urdf"),
                      os.path.join(data, "arm7.xml"), "0.5"])
            print(out)
            diff = re.search(r"max \|q_urdf - q_mjcf\| = (\S+)", out)
            q = re.search(r"urdf q\(0\.5\) = (.*)", out)
            if not diff or not q:
                failures.append("import_models printed no comparison")
            else:
                moved = max(abs(float(x)) for x in q.group(1).split())
                # Both routes integrate the same M and h (within 1e-15) at
                # rtol = atol = 1e-10: their difference is integration
                # error, far below the 0.1 rad the arm swings.
                if float(diff.group(1)) > 1e-7 or moved < 0.1:
                    failures.append(f"import_models: the URDF and MJCF arms "
                                    f"differ by {diff.group(1)} or did not "
                                    f"move (largest |q| {moved})")

    exe = os.path.join(ext, "cart_pendulum")
    # No SuiteSparse or MPI library is mapped at start (they are modules
    # loaded on first use), and the sparse path loads the installed module
    # through the RUNPATH the package gave the executable.
    mapped = sh(["ldd", exe])
    for lib in ("libklu", "libcholmod", "libspqr", "libmetis", "liblapack",
                "libgfortran", "libgomp", "libmpi"):
        if lib in mapped:
            failures.append(f"{exe} maps {lib} at start:\n{mapped}")
    module = os.path.join(prefix, "lib", "daedalus", "libdaedalus_sparse.so")
    klu_out = os.path.join(work, "out_klu")
    r = subprocess.run([exe, "--quiet", "--output-dir", klu_out,
                        "--t-end", "0.5", "--integrator", "idas",
                        "--linear-solver", "klu"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=dict(os.environ, LD_DEBUG="files"))
    # ld.so's trace of the dlopen: the installed module is tried (found by
    # the RUNPATH) and the build tree's is never reached.
    loaded = [ln.strip() for ln in r.stderr.splitlines()
              if "libdaedalus_sparse.so" in ln]
    in_build = os.path.join(build, "lib", "daedalus")
    if r.returncode != 0 or not any(module in ln for ln in loaded) or \
            any(in_build in ln for ln in loaded):
        failures.append(f"the run with --linear-solver klu (exit "
                        f"{r.returncode}) did not load {module}; loaded: "
                        f"{loaded}")
    else:
        with open(os.path.join(klu_out, "cart_pendulum.json")) as fh:
            if json.load(fh).get("status") != "ok":
                failures.append("the run with --linear-solver klu failed")
    # The problem's defaults, and a lighter cart at a small amplitude.
    check_run(exe, os.path.join(work, "out1"),
              {"M": 2.0, "m": 1.0, "l": 0.5, "g": 9.81, "theta0": 0.5},
              failures)
    check_run(exe, os.path.join(work, "out2"),
              {"M": 0.5, "m": 1.5, "l": 0.8, "g": 9.81, "theta0": 0.05},
              failures)

    for f in failures:
        print("FAIL: " + f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
