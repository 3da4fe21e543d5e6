"""showmotion pages in a real browser: headless Chromium (Debian's ``chromium``), driven over the
DevTools protocol with a tiny client on ``websockets``.

Proves that the exported page draws (the canvas is not blank), that the picture changes while
playing, when the coarse and fine sliders move, when the camera follows a body, that speed is
signed, that the browser's forward kinematics equals ``mb.forward_kinematics`` for every joint
type, and that the metadata and plots are shown.  Screenshots of the default animation, the
gfxExample model and a URDF robot with meshes are kept under tests/artifacts/ (or
$MULTIBODY_ARTIFACTS); their paths are printed.
"""
from __future__ import annotations

import base64
import io
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from types import SimpleNamespace

import numpy as np
import pytest

import multibody as mb
from multibody.view import showmotion
from multibody import engine

from system_deps import require_program

# Debian's chromium (tools/system-deps installs it for `make test`): skipped visibly without it, failed under CI
CHROMIUM = require_program(["chromium", "chromium-browser", "google-chrome"], "chromium", "showmotion browser tests")

# each test drives a real browser (SwiftShader WebGL): tens of seconds on a loaded machine
pytestmark = pytest.mark.slow

ARTIFACTS = os.environ.get("MULTIBODY_ARTIFACTS") or os.path.join(os.path.dirname(__file__), "artifacts")


class Browser:
    """Just enough of the Chrome DevTools protocol: navigate, evaluate, screenshot."""

    def __init__(self):
        from websockets.sync.client import connect
        self.profile = tempfile.mkdtemp(prefix="mb-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-dev-shm-usage", "--enable-unsafe-swiftshader",
             "--use-angle=swiftshader", "--no-first-run", "--disable-extensions", "--mute-audio",
             "--remote-debugging-port=0", f"--user-data-dir={self.profile}", "--window-size=1200,800",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.time() + 60
        active = os.path.join(self.profile, "DevToolsActivePort")
        while time.time() < deadline and port is None:
            if os.path.exists(active):
                with open(active) as f:
                    first = f.readline().strip()
                if first.isdigit():
                    port = int(first)
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited: {self.proc.stderr.read()[-2000:]}")
            time.sleep(0.1)
        assert port, "chromium did not open its DevTools port within 60 s"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        self.ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
        self.ids = itertools.count(1)

    def call(self, method, timeout=60, **params):
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        deadline = time.time() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(deadline - time.time(), 0.1)))
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"JS error in {expression[:80]!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, path):
        self.call("Page.enable")
        self.call("Page.navigate", url="file://" + os.path.abspath(path))
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if self.js("!!(window.showmotion && window.showmotion.ready)"):
                    return
                err = self.js("(document.getElementById('sm-error')||{}).textContent || ''")
                assert not err, err
            except RuntimeError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"showmotion page {path} did not become ready in 60 s")

    def canvas(self):
        """The WebGL canvas as an (h, w, 3) float array (preserveDrawingBuffer keeps the last frame)."""
        from matplotlib.image import imread
        url = self.js("window.showmotion.render(); document.getElementById('sm-canvas').toDataURL('image/png')")
        return imread(io.BytesIO(base64.b64decode(url.split(",", 1)[1])), format="png")[..., :3]

    def screenshot(self, name):
        os.makedirs(ARTIFACTS, exist_ok=True)
        png = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path = os.path.join(ARTIFACTS, name)
        with open(path, "wb") as f:
            f.write(png)
        print(f"screenshot: {path}")
        return path

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def not_blank(img):
    """A drawn scene: many distinct colours and real contrast, not a cleared background."""
    colours = np.unique((img.reshape(-1, 3) * 255).astype(np.uint8), axis=0)
    return len(colours) > 50 and float(img.std()) > 0.02


def differ(a, b):
    """The pictures differ in more than 200 pixels (by more than 2 % in some channel)."""
    return int((np.abs(a - b).max(axis=-1) > 0.02).sum()) > 200


def simulate_rk4(model, q0, qd0, t_final, dt):
    """A small fixed-step RK4 on mb.aba, so these tests need nothing but the kernels."""
    n = int(round(t_final / dt))
    q, qd = np.array(q0, float), np.array(qd0, float)
    Q, QD = [q], [qd]
    f = lambda q, qd: mb.aba(model, q, qd, np.zeros(model.nv))  # noqa: E731
    for _ in range(n):
        k1q, k1v = qd, f(q, qd)
        k2q, k2v = qd + dt / 2 * k1v, f(q + dt / 2 * k1q, qd + dt / 2 * k1v)
        k3q, k3v = qd + dt / 2 * k2v, f(q + dt / 2 * k2q, qd + dt / 2 * k2v)
        k4q, k4v = qd + dt * k3v, f(q + dt * k3q, qd + dt * k3v)
        q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        qd = qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        Q.append(q)
        QD.append(qd)
    Q, QD = np.array(Q), np.array(QD)
    e = mb.energy(model, Q, QD)
    return SimpleNamespace(t=np.arange(n + 1) * dt, q=Q, qd=QD, kinetic_energy=np.asarray(e.KE),
                           potential_energy=np.asarray(e.PE), total_energy=np.asarray(e.KE) + np.asarray(e.PE))


def test_default_animation_draws_plays_and_scrubs(browser, tmp_path):
    model = mb.models.double_pendulum()
    page = showmotion(model, out=tmp_path / "dp.html", title="DP default", author="tester",
                      description="each joint ramped in turn")
    browser.open(page)
    assert browser.js("document.getElementById('sm-title').textContent") == "DP default"
    assert browser.js("document.getElementById('sm-author').textContent") == "by tester"
    assert "ramped" in browser.js("document.getElementById('sm-desc').textContent")
    assert browser.js("showmotion.range") == [0.0, 2.0]
    # start at t = 0.5 (joint 1 raised) and paused
    browser.js("showmotion.pause(); showmotion.setTime(0.5)")
    still = browser.canvas()
    assert not_blank(still)
    browser.screenshot("showmotion_default_double_pendulum.png")
    # playing moves time and the picture
    browser.js("document.getElementById('sm-play').click()")
    time.sleep(0.6)
    assert browser.js("showmotion.isPlaying()")
    t_play = browser.js("showmotion.time()")
    browser.js("showmotion.pause()")
    assert t_play != 0.5
    assert differ(still, browser.canvas())
    # the coarse slider: its input event sets time to the slider's fraction of the run
    browser.js("const s = document.getElementById('sm-coarse'); s.value = '7500'; "
               "s.dispatchEvent(new Event('input'))")
    assert browser.js("showmotion.time()") == pytest.approx(1.5, abs=1e-3)
    scrubbed = browser.canvas()
    assert differ(still, scrubbed)
    # the fine slider moves time by at most 2 % of the run around the current time
    browser.js("const f = document.getElementById('sm-fine'); f.value = '1000'; f.dispatchEvent(new Event('input'))")
    assert browser.js("showmotion.time()") == pytest.approx(1.5 + 2.0 / 50, abs=1e-6)
    assert differ(scrubbed, browser.canvas())
    # speed is signed: at −2× time runs backwards
    browser.js("const v = document.getElementById('sm-speed'); v.value = '-2'; v.dispatchEvent(new Event('input'));"
               "showmotion.setTime(1.0); showmotion.play()")
    time.sleep(0.4)
    t_back = browser.js("showmotion.time()")
    browser.js("showmotion.pause()")
    assert t_back < 1.0
    assert browser.js("document.getElementById('sm-speed-out').textContent") == "-2.00×"


def test_browser_kinematics_equal_the_kernels_for_every_joint_type(browser, tmp_path):
    b = mb.ModelBuilder("all joints")
    b.add_body("free", None, "free", mass=1.0, com=[0.1, 0, 0], inertia=np.eye(3) * 0.01)
    b.add_body("rev", "free", "revolute", axis=[1, 2, 3], mass=1.0, inertia=np.eye(3) * 0.01,
               joint_translation=[0.3, 0.1, -0.2],
               joint_rotation=[[1, 0, 0], [0, np.cos(0.4), -np.sin(0.4)], [0, np.sin(0.4), np.cos(0.4)]])
    b.add_body("pri", "rev", "prismatic", axis=[0, 1, 1], mass=1.0, inertia=np.eye(3) * 0.01,
               joint_translation=[0, 0.5, 0])
    b.add_body("hel", "pri", "H", pitch=0.3, mass=1.0, inertia=np.eye(3) * 0.01, joint_translation=[0.2, 0, 0])
    b.add_body("sph", "hel", "spherical", mass=1.0, inertia=np.eye(3) * 0.01, joint_translation=[0, 0, 0.4])
    b.add_body("pla", "sph", "planar", mass=1.0, inertia=np.eye(3) * 0.01, joint_translation=[0.1, 0.1, 0.1])
    b.add_body("fix", "pla", "fixed", mass=1.0, inertia=np.eye(3) * 0.01, joint_translation=[0.0, 0.2, 0.0])
    model = b.build()
    rng = np.random.default_rng(0)
    page = showmotion(model, out=tmp_path / "all.html")
    browser.open(page)
    for _ in range(5):
        q = mb.integrate(model, model.neutral(), rng.normal(size=model.nv))
        R, p = mb.forward_kinematics(model, q)
        poses = browser.js(f"JSON.stringify(showmotion.bodyPoses({json.dumps(q.tolist())}))")
        poses = json.loads(poses)
        Rj = np.array([np.reshape(P["R"], (3, 3)) for P in poses])
        pj = np.array([P["p"] for P in poses])
        assert np.abs(Rj - R).max() < 1e-12 and np.abs(pj - p).max() < 1e-12
    # between stored samples q is interpolated linearly (as spatial_v2's showmotion does)
    anim = mb.view.load_animation(page)
    mid = browser.js(f"Array.from(showmotion.qAt({(anim.t[3] + anim.t[4]) / 2}))")
    assert np.allclose(mid, (anim.q[3] + anim.q[4]) / 2, atol=1e-12)


def test_simulated_run_with_plots_and_following_camera(browser, tmp_path):
    model = mb.models.double_pendulum()
    run = simulate_rk4(model, [np.pi / 4, -np.pi / 4], [0, 0], 2.0, 2e-3)
    page = showmotion(model, run, out=tmp_path / "run.html", title="simulated")
    browser.open(page)
    plots = browser.js("Array.from(document.querySelectorAll('#sm-plots canvas')).map(c => c.id)")
    assert plots == ["sm-plot-energy", "sm-plot-states", "sm-plot-velocities"]
    # the energy plot is drawn: its canvas has the three series' colours
    img = browser.js("document.getElementById('sm-plot-energy').toDataURL('image/png')")
    from matplotlib.image import imread
    E = imread(io.BytesIO(base64.b64decode(img.split(",", 1)[1])), format="png")[..., :3]
    red = np.sum((E[..., 0] > 0.7) & (E[..., 1] < 0.3) & (E[..., 2] < 0.3))
    blue = np.sum((E[..., 2] > 0.6) & (E[..., 0] < 0.3))
    assert red > 50 and blue > 50
    browser.js("showmotion.pause(); showmotion.setTime(1.2)")
    fixed = browser.canvas()
    assert not_blank(fixed)
    browser.js("const s = document.getElementById('sm-follow'); s.value = '1'; s.dispatchEvent(new Event('change'))")
    following = browser.canvas()
    assert differ(fixed, following)
    browser.screenshot("showmotion_simulated_double_pendulum.png")


def test_gfx_example_tracking_camera(browser, tmp_path):
    page = showmotion(mb.models.gfx_example(tracking=True), out=tmp_path / "gfx.html")
    browser.open(page)
    assert browser.js("document.getElementById('sm-follow').value") == "1"   # tracks link 2
    browser.js("showmotion.pause(); showmotion.setTime(0.5)")
    a = browser.canvas()
    assert not_blank(a)
    browser.screenshot("showmotion_gfx_example_tracking.png")
    page = showmotion(mb.models.gfx_example(), out=tmp_path / "gfx0.html")
    browser.open(page)
    browser.js("showmotion.pause(); showmotion.setTime(0.5)")
    assert not_blank(browser.canvas())
    browser.screenshot("showmotion_gfx_example.png")


def test_urdf_robot_with_meshes(browser, tmp_path):
    from test_urdf_robots import ROBOTS
    urdf = os.path.join(ROBOTS, "panda_description", "urdf", "panda.urdf")
    model = mb.load_urdf(urdf)
    assert any(g.kind == "mesh" for g in model.geometries)
    page = showmotion(model, out=tmp_path / "panda.html", title="Panda")
    size = os.path.getsize(page)
    browser.open(page)
    assert browser.js("showmotion.data.meshes.length") > 5
    browser.js("showmotion.pause(); showmotion.setTime(2.5)")
    a = browser.canvas()
    assert not_blank(a)
    browser.screenshot("showmotion_urdf_panda.png")
    browser.js("showmotion.setTime(4.5)")
    assert differ(a, browser.canvas())
    print(f"panda page: {size / 1e6:.2f} MB")


HOSTILE_TITLE = "arm <!--<script> </script> {{JS}} {{DATA}} & é"


def test_a_page_whose_names_hold_markup_still_draws(browser, tmp_path):
    """A name with ``<!--<script>`` made the HTML parser swallow the page's closing tag (blank page)."""
    b = mb.ModelBuilder(name=HOSTILE_TITLE)
    b.add_body("<!--<script>", None, "Rz", mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.1)
    page = showmotion(b.build(), out=tmp_path / "hostile.html", author="</script><!--", description="<!--<script>")
    browser.open(page)
    assert browser.js("document.getElementById('sm-title').textContent") == HOSTILE_TITLE
    assert browser.js("document.getElementById('sm-author').textContent") == "by </script><!--"
    assert not_blank(browser.canvas())


def _bouncing_ball_world():
    world = engine.World(dt=1e-3)
    world.add_geom(engine.Plane(), bounce=0.8)
    world.add_body(engine.Sphere(0.1), mass=1.0, position=(0, 0, 1))
    return world


@pytest.mark.parametrize("scene", ["bouncing ball", "box pile"])
def test_engine_scenes_open_in_the_viewer(browser, tmp_path, scene):
    """An engine world records its motion (World.record) and plays in the same page as any model."""
    from multibody.engine import report
    world = _bouncing_ball_world() if scene == "bouncing ball" else report.pile_world(n=20)
    rec = world.record(1.0, every=10)
    page = showmotion(rec, out=tmp_path / "scene.html", title=scene)
    browser.open(page)
    assert browser.js("showmotion.range") == [0.0, pytest.approx(1.0)]
    browser.js("showmotion.pause(); showmotion.setTime(0.0)")
    first = browser.canvas()
    assert not_blank(first)
    browser.js("showmotion.setTime(0.9)")
    assert differ(first, browser.canvas())             # the bodies moved
    browser.screenshot(f"engine_scene_{scene.replace(' ', '_')}.png")


# ---------- layout with long names: UR5's and Talos' joint and link names ------------------------

_LAYOUT_JS = """(() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const side = document.getElementById('sm-side'), follow = document.getElementById('sm-follow');
  const plots = Array.from(document.querySelectorAll('#sm-plots .sm-plot')).map((p) => {
    const legend = p.querySelector('.sm-legend');
    return { id: p.querySelector('canvas').id, legend: legend ? box(legend) : null,
             keys: legend ? Array.from(legend.querySelectorAll('.sm-key')).map((k) => {
               const name = k.querySelector('span');
               return { box: box(k), title: k.title, text: name.textContent, cut: name.scrollWidth > name.clientWidth,
                        ellipsis: getComputedStyle(name).textOverflow }; }) : [] };
  });
  const controls = Array.from(document.querySelectorAll('#sm-controls button, #sm-controls label, #sm-controls span'))
    .filter((e) => e.offsetParent !== null).map((e) => ({ text: e.textContent.trim().slice(0, 20), box: box(e) }));
  return JSON.stringify({ side: box(side), plots, controls, follow: { box: box(follow), title: follow.title,
    text: follow.options[follow.selectedIndex].textContent }, layouts: showmotion.plotLayouts ? showmotion.plotLayouts() : null,
    series: showmotion.data.plots.groups.map((g) => g.series.map((s) => s.name)) });
})()"""


def _overlap(a, b, slack=0.5):
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def _rows(boxes):
    """Toolbar rows: the distinct vertical centres of its items (to a few pixels)."""
    centres = sorted((b[1] + b[3]) / 2 for b in boxes)
    rows = [centres[0]]
    for c in centres[1:]:
        if c - rows[-1] > 6:
            rows.append(c)
    return len(rows)


def _long_name_page(name, tmp_path):
    from test_urdf_robots import ROBOTS
    rel = {"ur5": "ur_description/urdf/ur5_robot.urdf", "talos": "talos_data/robots/talos_reduced.urdf"}[name]
    model = mb.load_urdf(os.path.join(ROBOTS, rel))
    run = simulate_rk4(model, model.neutral(), np.zeros(model.nv), 0.2, 4e-3)
    return model, showmotion(model, run, out=tmp_path / f"{name}.html", title=name)


@pytest.mark.parametrize("name", ["ur5", "talos"])
def test_long_names_fit_the_side_plots_and_the_toolbar(browser, tmp_path, name):
    """Joint names sit in a legend under each plot, none overlapping another or leaving the panel, a
    cut one ending in an ellipsis with the whole name as its tooltip; the plots' value and time labels
    stay clear of the frame; the toolbar stays one row with the follow menu on the longest link name
    (and two tidy rows, each group whole, in a narrow window)."""
    model, page = _long_name_page(name, tmp_path)
    browser.open(page)
    longest = max(range(model.nb), key=lambda b: len(model.body_names[b]))
    browser.js(f"const s = document.getElementById('sm-follow'); s.value = '{longest}'; "
               "s.dispatchEvent(new Event('change')); showmotion.pause(); showmotion.setTime(0.1)")
    L = json.loads(browser.js(_LAYOUT_JS))
    browser.screenshot(f"showmotion_long_names_{name}.png")
    for plot, names in zip(L["plots"], L["series"]):
        keys = plot["keys"]
        assert [k["text"] for k in keys] == names and [k["title"] for k in keys] == names, plot["id"]
        for a, b in itertools.combinations(keys, 2):
            assert not _overlap(a["box"], b["box"]), (plot["id"], a["text"], b["text"])
        for k in keys:
            assert L["side"][0] <= k["box"][0] and k["box"][2] <= L["side"][2], (plot["id"], k["text"])
            assert not k["cut"] or k["ellipsis"] == "ellipsis", (plot["id"], k["text"])
    assert sum(len(p["keys"]) for p in L["plots"]) == 3 + 2 * model.nv          # energy + q + q̇ series
    assert L["layouts"], "the page reports no plot layout (showmotion.plotLayouts)"
    for lay in L["layouts"]:
        f = lay["frame"]
        frame = [f["x0"] - 1, f["y0"] - 1, f["x1"] + 1, f["y1"] + 1]
        labels = list(lay["labels"].values())
        for lab in labels:
            b = [lab["x"], lab["y"], lab["x"] + lab["w"], lab["y"] + lab["h"]]
            assert 0 <= b[0] and b[2] <= lay["width"] and 0 <= b[1] and b[3] <= lay["height"], (lay["id"], lab)
            assert not _overlap(b, frame, slack=0), (lay["id"], lab["text"], "overlaps the frame")
    assert L["follow"]["text"] == model.body_names[longest] == L["follow"]["title"]
    assert L["follow"]["box"][2] - L["follow"]["box"][0] < 200
    assert _rows([c["box"] for c in L["controls"]]) == 1, L["controls"]
    try:  # a narrow window: the second group moves down whole, nothing else wraps
        browser.call("Emulation.setDeviceMetricsOverride", width=900, height=700, deviceScaleFactor=1, mobile=False)
        groups = json.loads(browser.js(
            "JSON.stringify(Array.from(document.querySelectorAll('#sm-controls .sm-group')).map((g) => "
            "Array.from(g.children).filter((e) => !e.hidden).map((e) => { const r = e.getBoundingClientRect(); "
            "return [r.left, r.top, r.right, "
            "r.bottom]; })))"))
        assert len(groups) == 2 and all(_rows(g) == 1 for g in groups)
        assert _rows(groups[0] + groups[1]) == 2
        browser.screenshot(f"showmotion_long_names_{name}_900px.png")
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride")
