#!/usr/bin/python3
"""scripts/view's page in a real browser (docs/viewer.md): headless
Chromium, driven through the DevTools protocol over a pipe
(--remote-debugging-pipe: no port, no network), loads the pages of a
golfer_3d run and of the humanoid (urdf on problems/data/humanoid.urdf)
from file:// and checks that

- the page finished (body data-status "ready") with no error: nothing in
  its error box, no exception, no console or log error (a blocked network
  request would be one);
- the scene drew: screenshots of the 3D view at two times differ, the
  differing pixels lie where the bodies are at those two times (the page's
  screenBox(): the projected box around the bodies, markers and
  overlays), and coloured body pixels are there;
- ?t=T opens the page paused at the last sample at or before T (the
  humanoid with geometry, below, opens at ?t=0.1505);
- the humanoid page with a "geometry" array (every shape type, a
  collision-only shape and a mesh) draws it, and a per-sample arrow overlay
  (--overlay) shows up in the screenshot and goes with setOverlays([]);
- scripts/view refuses a run without a poses file, a geometry entry on an
  unknown body or with a wrong size (exit 1), an unknown trail frame or
  column (exit 2), with the message and no page.

Skipped (exit 77) when chromium, three.js (libjs-three) or matplotlib
(the PNG reader) is missing: scripts/setup installs all three.

usage: view_browser_test.py VIEW_SCRIPT WORK_DIR GOLFER_3D URDF HUMANOID.urdf
"""
import base64
import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM = os.environ.get("DAEDALUS_CHROMIUM", "/usr/bin/chromium")
THREE = "/usr/share/javascript/three/three.min.js"
WIDTH, HEIGHT = 1100, 700
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         # WebGL without a GPU: ANGLE on SwiftShader (software).
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         "--allow-file-access-from-files", "--hide-scrollbars",
         f"--window-size={WIDTH},{HEIGHT}"]


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4
    (replies and events out), messages separated by NUL bytes."""

    def __init__(self, profile):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # Park the child's ends above 10 so that dup2 onto 3 and 4 in the
        # child cannot overwrite one with the other.
        child_in = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_r, from_w):
            os.close(fd)

        def in_child():
            os.dup2(child_in, 3)  # dup2 clears close-on-exec
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM] + FLAGS + [f"--user-data-dir={profile}",
                                  "--remote-debugging-pipe", "about:blank"],
            preexec_fn=in_child, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(child_in)
        os.close(child_out)
        self.write = os.fdopen(to_w, "wb", buffering=0)
        self.read_fd = from_r
        self.buffer = b""
        self.next_id = 0
        self.events = []   # every event received, in order
        self.session = None

    def _message(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe "
                                   f"(exit {self.proc.poll()})")
            self.buffer += chunk
        text, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(text)

    def send(self, method, timeout=30, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            msg["sessionId"] = self.session
        self.write.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        seen = len(self.events)
        while True:
            for m in self.events[seen:]:
                if m["method"] == method:
                    return m
            seen = len(self.events)
            self.events.append(self._message(deadline))

    def open_page(self):
        target = self.send("Target.createTarget", url="about:blank")
        self.session = self.send("Target.attachToTarget",
                                 targetId=target["targetId"],
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride", width=WIDTH,
                  height=HEIGHT, deviceScaleFactor=1, mobile=False)

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", expression=expression,
                      returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def load(self, url, timeout=60):
        del self.events[:]
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout)
        deadline = time.monotonic() + timeout
        while True:
            status = self.evaluate("document.body.dataset.status")
            if status != "loading" or time.monotonic() > deadline:
                return status
            time.sleep(0.05)

    def screenshot(self, clip):
        x0, y0, x1, y1 = clip
        data = self.send("Page.captureScreenshot", format="png", clip={
            "x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0,
            "scale": 1})["data"]
        return base64.b64decode(data)

    def errors(self):
        """Exceptions, console errors and log errors since the last load."""
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m["method"] == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append("exception: " + d.get("exception", {}).get(
                    "description", d.get("text", "")))
            elif (m["method"] == "Runtime.consoleAPICalled" and
                  p.get("type") in ("error", "assert")):
                out.append("console: " + " ".join(
                    str(a.get("value", a.get("description")))
                    for a in p.get("args", [])))
            elif (m["method"] == "Log.entryAdded" and
                  p["entry"].get("level") == "error"):
                out.append("log: " + p["entry"].get("text", ""))
        return out

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def pixels(png):
    import matplotlib.image
    return matplotlib.image.imread(io.BytesIO(png), format="png")[:, :, :3]


def check_page(browser, url, times, name, bad, work, expect_info=None,
               expect_time=None):
    """Loads url, checks it is error-free (and opened paused at expect_time
    when given), and compares screenshots of the 3D view at the two times.
    Returns the screenshot at the second time and the canvas's rectangle."""
    import numpy as np
    status = browser.load(url)
    errors = browser.errors()
    box_text = browser.evaluate("document.getElementById('errors')"
                                ".textContent")
    if status != "ready" or errors or box_text:
        bad.append(f"{name}: status {status!r}, errors {errors}, "
                   f"error box {box_text!r}")
        return None
    if expect_time is not None:
        t_shown = browser.evaluate("daedalusViewer.time()")
        button = browser.evaluate(
            "document.getElementById('play').textContent")
        if abs(t_shown - expect_time) > 1e-9 or "play" not in button:
            bad.append(f"{name}: opened at t = {t_shown}, expected "
                       f"{expect_time}, with the button {button!r}")
    if expect_info:
        info = browser.evaluate("document.getElementById('info').textContent")
        for text in expect_info:
            if text not in info:
                bad.append(f"{name}: info line {info!r} lacks {text!r}")
    # Trails off: a trail drawn between the two times lies outside both
    # instants' boxes.
    browser.evaluate("document.getElementById('show-trails').click()")
    canvas = [round(c) for c in browser.evaluate(
        "daedalusViewer.canvasRect()")]
    shots, boxes = [], []
    for t in times:
        browser.evaluate(f"daedalusViewer.setTime({t})")
        boxes.append(browser.evaluate("daedalusViewer.screenBox()"))
        png = browser.screenshot(canvas)
        # Kept in the work folder for a look when the test fails.
        with open(os.path.join(work, f"{name.replace(' ', '_')}_t{t:.4f}"
                               ".png"), "wb") as f:
            f.write(png)
        shots.append(pixels(png))
    a, b = shots
    differ = np.abs(a - b).max(axis=2) > 0.1
    n_differ = int(differ.sum())
    # Where the bodies are (canvas pixels), padded for antialiasing.
    pad = 4
    where = np.zeros_like(differ)
    for x0, y0, x1, y1 in boxes:
        c0 = max(0, int(x0 - canvas[0] - pad))
        r0 = max(0, int(y0 - canvas[1] - pad))
        c1 = int(x1 - canvas[0] + pad) + 1
        r1 = int(y1 - canvas[1] + pad) + 1
        where[r0:r1, c0:c1] = True
    outside = int((differ & ~where).sum())
    # Coloured pixels (bodies; background, grid and text are grey).
    spread = b.max(axis=2) - b.min(axis=2)
    coloured = int((spread > 0.25).sum())
    area = [round((x1 - x0) * (y1 - y0)) for x0, y0, x1, y1 in boxes]
    print(f"{name}: canvas {canvas}, bodies' boxes {area} px^2, "
          f"{n_differ} pixels differ between "
          f"t = {times[0]} and {times[1]}, {outside} of them outside the "
          f"bodies' boxes; {coloured} coloured pixels")
    if n_differ < 500:
        bad.append(f"{name}: the screenshots at {times} differ in only "
                   f"{n_differ} pixels: the scene did not draw or move")
    if outside > 0.02 * n_differ:
        bad.append(f"{name}: {outside} of {n_differ} differing pixels lie "
                   f"outside the bodies' boxes {boxes}")
    if coloured < 300:
        bad.append(f"{name}: only {coloured} coloured pixels: no bodies")
    return b, canvas


def refusals(view, geo_dir, summary, bad):
    """Bad input gives a message, exit 1 (2 for usage) and no page."""
    bad_dir = os.path.join(os.path.dirname(geo_dir), "refused")
    os.makedirs(bad_dir)
    for suffix in (".csv", ".poses.csv"):
        shutil.copy(os.path.join(geo_dir, "urdf" + suffix), bad_dir)
    mech = summary["side_files"][0]
    cases = [  # (what, summary's poses entry, extra arguments, exit, message)
        ("no poses file", None, [], 1, "lists no poses file"),
        ("unknown body", dict(mech, geometry=[
            {"body": "tail", "type": "box", "size": [1, 1, 1]}]), [], 1,
         "geometry[0]: body 'tail'"),
        ("bad size", dict(mech, geometry=[
            {"body": "head", "type": "capsule", "size": [0.1]}]), [], 1,
         "geometry[0]: a capsule takes size with 2"),
        ("unknown trail", mech, ["--trails", "nosuch"], 2, "no frame nosuch"),
        ("unknown column", mech, ["--columns", "energy,nosuch"], 2,
         "no column nosuch"),
    ]
    page = os.path.join(bad_dir, "urdf_view.html")
    for what, entry, extra, status, message in cases:
        s = dict(summary, side_files=[entry] if entry else [])
        with open(os.path.join(bad_dir, "urdf.json"), "w",
                  encoding="utf-8") as f:
            json.dump(s, f)
        r = subprocess.run([view, os.path.join(bad_dir, "urdf.csv")] + extra,
                           capture_output=True, text=True)
        if r.returncode != status or message not in r.stderr or \
                os.path.exists(page):
            bad.append(f"{what}: exit {r.returncode} (expected {status}), "
                       f"stderr {r.stderr!r}, page written "
                       f"{os.path.exists(page)}")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n"
                           f"{r.stdout}{r.stderr}")
    return r.stdout


def main(argv):
    view, work, golfer, urdf, humanoid = argv
    for path, what in ((CHROMIUM, "chromium"), (THREE, "libjs-three")):
        if not os.path.exists(path):
            print(f"SKIP: {path} is missing (Debian's {what}; scripts/setup "
                  "installs it)")
            return 77
    try:
        import matplotlib.image  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        print("SKIP: /usr/bin/python3 has no matplotlib or numpy")
        return 77
    import numpy as np
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    started = time.monotonic()

    # The runs and their pages.
    g_dir, h_dir = os.path.join(work, "golfer"), os.path.join(work, "humanoid")
    run([golfer, "--output-dir", g_dir, "--quiet"])
    run([urdf, "--model", humanoid, "--base", "floating", "--v0",
         "pelvis.wz=2", "--param", "tau_left_knee=5", "--param",
         "tau_right_shoulder_pitch=-4", "--t-end", "0.3", "--output-step",
         "0.01", "--output-dir", h_dir, "--quiet"])
    g_page = run([view, os.path.join(g_dir, "golfer_3d.csv")]).strip()
    h_page = run([view, os.path.join(h_dir, "urdf.json")]).strip()
    with open(os.path.join(g_dir, "golfer_3d.json"), encoding="utf-8") as f:
        t_impact = json.load(f)["t_reached"]

    # The humanoid with geometry (every type) and a force arrow overlay.
    with open(os.path.join(h_dir, "urdf.json"), encoding="utf-8") as f:
        summary = json.load(f)
    mech = summary["side_files"][0]
    geometry = [
        {"body": "pelvis", "type": "box", "size": [0.1, 0.14, 0.07]},
        {"body": "torso", "type": "ellipsoid", "size": [0.1, 0.16, 0.2],
         "pos": [0, 0, 0.2], "rgba": [0.3, 0.5, 0.8, 1]},
        {"body": "head", "type": "sphere", "size": [0.1], "pos": [0, 0, 0.1]},
        {"body": "left_thigh", "type": "capsule", "size": [0.05, 0.16],
         "pos": [0, 0, -0.2]},
        {"body": "right_thigh", "type": "cylinder", "size": [0.05, 0.16],
         "pos": [0, 0, -0.2], "quat": [1, 0, 0, 0]},
        {"body": "left_shin", "type": "capsule", "size": [0.04, 0.17],
         "pos": [0, 0, -0.2], "collision": True, "visual": False},
        {"body": "ground", "type": "plane", "size": [1, 1, 0.1],
         "pos": [0, 0, -0.9]},
        {"body": "left_foot", "type": "mesh", "size": []},
    ]
    mech["geometry"] = geometry
    geo_dir = os.path.join(work, "geometry")
    os.makedirs(geo_dir)
    for suffix in (".csv", ".poses.csv"):
        shutil.copy(os.path.join(h_dir, "urdf" + suffix), geo_dir)
    with open(os.path.join(geo_dir, "urdf.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f)
    # The arrow: at the head, 50 N up, growing with time.
    with open(os.path.join(h_dir, "urdf.poses.csv"), encoding="utf-8") as f:
        header = f.readline().strip().split(",")
        rows = [line.strip().split(",") for line in f if line.strip()]
    k = header.index("head.x")
    overlay = os.path.join(geo_dir, "arrows.csv")
    with open(overlay, "w", encoding="utf-8") as f:
        f.write("t,head.px,head.py,head.pz,head.fx,head.fy,head.fz\n")
        for r in rows:
            f.write(f"{r[0]},{r[k]},{r[k + 1]},{r[k + 2]},0,0,"
                    f"{10 + 100 * float(r[0])}\n")
    geo_page = run([view, os.path.join(geo_dir, "urdf.csv"),
                    "--overlay", "force=" + overlay]).strip()
    bad = []
    refusals(view, geo_dir, summary, bad)
    prepared = time.monotonic()
    profile = tempfile.mkdtemp(prefix="daedalus-chromium-")
    browser = Browser(profile)
    try:
        browser.open_page()
        check_page(browser, "file://" + g_page + "?play=0",
                   (0.05, t_impact), "golfer_3d", bad, work)
        check_page(browser, "file://" + h_page + "?play=0", (0.0, 0.3),
                   "humanoid", bad, work)
        # ?t=: paused at the last sample at or before it (0.15 s).
        result = check_page(
            browser, "file://" + geo_page + "?t=0.1505", (0.0, 0.3),
            "humanoid with geometry", bad, work,
            expect_info=["geometry from the model",
                         "1 mesh geom not drawn"], expect_time=0.15)
        if result is not None:  # the arrow is drawn, and goes
            with_arrow, canvas = result
            browser.evaluate("daedalusViewer.setOverlays([])")
            without = pixels(browser.screenshot(canvas))
            n = int((np.abs(with_arrow - without).max(axis=2) > 0.1).sum())
            print(f"overlay: {n} pixels differ without the arrow")
            if n < 50:
                bad.append(f"the force arrow changed only {n} pixels")
            if browser.errors():
                bad.append(f"overlay: errors {browser.errors()}")
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    done = time.monotonic()
    print(f"runs and pages {prepared - started:.1f} s, browser "
          f"{done - prepared:.1f} s")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
