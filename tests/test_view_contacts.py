"""Contact forces drawn as arrows in the viewer (issue 33, item 3) and height fields drawn as their
surface: the arrow data equals the recorded forces (``traj.contact_forces``, slot by slot) at the
contacts the narrow phase finds at the recorded q; in headless Chromium the arrows exist, follow the
contact as it moves, and the toggle hides them."""
from __future__ import annotations

import numpy as np
import pytest

import multibody as mb
from multibody.model.geometry import model_geoms
from multibody.view import contact_arrows, page_html, showmotion

ROLL = ('<mujoco><worldbody><geom name="floor" type="plane" size="3 3 .1"/>'
        '<body name="ball" pos="0 0 0.1"><freejoint/><geom name="ball" type="sphere" size="0.1"/></body>'
        '</worldbody></mujoco>')


@pytest.fixture(scope="module")
def rolling():
    """A ball rolling along x on the floor (hard contact): its contact point moves with it."""
    model = mb.load_mjcf(ROLL)
    # MuJoCo's state: 1 m/s along x, spinning at v/r about y (rolling from the start)
    mjq = np.array([0, 0, 0.1, 1, 0, 0, 0.0])
    q0, v0 = mb.mjcf.from_mujoco_state(model, mjq, np.array([1.0, 0, 0, 0, 10.0, 0]))[:2]
    tr = mb.simulate(model, q0, v0, 0.5, contact="hard")
    return model, tr


def test_arrow_data_equals_the_recorded_forces(rolling):
    model, tr = rolling
    samples, pos, force, normal = contact_arrows(tr)
    F = np.asarray(tr.contact_forces)
    geoms = model_geoms(model)
    assert F.shape[1] == geoms.n_slots
    # every recorded nonzero slot is one arrow, with the same force, and nothing else
    nonzero = np.flatnonzero(np.linalg.norm(F, axis=2).ravel() > 0)
    assert len(samples) == len(nonzero) > 0.9 * len(tr.t)
    for n in np.unique(samples)[::25]:
        got = force[samples == n]
        want = F[n][np.linalg.norm(F[n], axis=1) > 0]
        assert np.array_equal(np.sort(got, axis=0), np.sort(want, axis=0))
    # the weight is carried (rolling: no friction needed) and the point is under the ball, on the floor
    m = float(model.mass.sum())
    late = samples > len(tr.t) // 2
    assert np.allclose(force[late, 2], m * 9.81, rtol=1e-3)
    x_ball = np.asarray(tr.q)[samples, 0]
    assert np.allclose(pos[:, 0], x_ball, atol=1e-6) and np.allclose(pos[:, 2], 0.0, atol=1e-3)


def test_the_page_carries_the_arrows_and_only_for_runs_with_contact(rolling):
    import json
    import re
    model, tr = rolling
    text = page_html(tr)
    data = json.loads(re.search(r'<script type="application/json" id="sm-data">(.*?)</script>', text, re.S).group(1))
    assert data["contacts"]["count"] == len(contact_arrows(tr)[0])
    assert data["contacts"]["scale"] > 0
    assert json.loads(re.search(r'id="sm-data">(.*?)</script>', page_html(mb.models.double_pendulum()),
                                re.S).group(1))["contacts"] is None


def test_a_sliding_box_s_arrows_lean_by_its_friction_coefficient():
    """A box sliding along x on the floor (friction 0.5): while it slides the force leans back by
    atan μ, so the page's friction share |f_t| / |f| (the arrows' colour) is μ / √(1 + μ²)."""
    import base64
    import json
    import re
    mu = 0.5
    xml = ('<mujoco><worldbody><geom name="floor" type="plane" size="3 3 .1" friction="0.5"/>'
           '<body name="box" pos="0 0 0.1"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.1" friction="0.5"/>'
           '</body></worldbody></mujoco>')
    model = mb.load_mjcf(xml)
    q0, v0 = mb.mjcf.from_mujoco_state(model, np.array([0, 0, 0.1, 1, 0, 0, 0.0]), np.array([2.0, 0, 0, 0, 0, 0]))[:2]
    tr = mb.simulate(model, q0, v0, 0.2, contact="hard")
    samples, pos, force, normal = contact_arrows(tr)
    sliding = (samples > 5) & (samples < 150)          # it stops after v0 / (μ g) = 0.41 s: sliding throughout
    f = force[sliding]
    assert np.allclose(np.abs(f[:, 0]).sum() / f[:, 2].sum(), mu, rtol=1e-3)
    data = json.loads(re.search(r'id="sm-data">(.*?)</script>', page_html(tr), re.S).group(1))
    share = np.frombuffer(base64.b64decode(data["contacts"]["friction"]), "<f4")
    assert len(share) == len(samples)
    assert np.allclose(share[sliding], mu / np.hypot(1, mu), atol=1e-3)


@pytest.mark.slow
def test_arrows_in_the_browser_follow_the_contact_and_toggle(rolling, tmp_path):
    from test_view_browser import Browser
    model, tr = rolling
    path = showmotion(tr, out=tmp_path / "roll.html")
    b = Browser()
    try:
        b.open(path)
        samples, pos, force, normal = contact_arrows(tr)
        scale = b.js("window.showmotion.contactScale")
        seen = []
        for t in (0.1, 0.3, 0.45):
            b.js(f"window.showmotion.setTime({t}); window.showmotion.render()")
            arrows = b.js("window.showmotion.contactArrows()")
            n = int(np.searchsorted(tr.t, t + 1e-12) - 1)
            want = pos[samples == n], force[samples == n]
            assert len(arrows) == len(want[0]) == 1
            a, e = np.array(arrows[0][0]), np.array(arrows[0][1])
            assert np.allclose(a, want[0][0], atol=1e-5)
            assert np.allclose(e - a, scale * want[1][0], rtol=1e-4, atol=1e-6)
            seen.append(a[0])
        assert seen[0] < seen[1] < seen[2]            # the arrow moves with the rolling ball
        on = b.canvas()
        b.js("document.getElementById('sm-contacts').click()")
        assert b.js("window.showmotion.contactArrows().length") == 0
        off = b.canvas()
        changed = np.abs(on - off).max(axis=-1) > 0.05      # the arrow (1-pixel lines) was drawn, the toggle removes it
        assert changed.sum() > 20
        assert np.median(on[changed][:, 0] - on[changed][:, 2]) > 0.2    # and it was red
    finally:
        b.close()


@pytest.mark.slow
def test_a_height_field_draws_in_the_browser(tmp_path):
    from test_view_browser import Browser, not_blank
    field = " ".join(str(x) for x in np.random.default_rng(0).uniform(0, 1, 25))
    xml = (f'<mujoco><asset><hfield name="h" nrow="5" ncol="5" size="1 1 .3 .1" elevation="{field}"/></asset>'
           '<worldbody><geom name="field" type="hfield" hfield="h" rgba=".3 .6 .3 1"/>'
           '<body name="ball" pos="0 0 0.6"><freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>')
    model = mb.load_mjcf(xml)
    tr = mb.simulate(model, None, None, 0.6, contact="hard")
    path = showmotion(tr, out=tmp_path / "field.html")
    b = Browser()
    try:
        b.open(path)
        assert any(s["kind"] == "solid" and s["name"] == "field" for s in b.js("window.showmotion.data.shapes"))
        assert not_blank(b.canvas())
        b.js("window.showmotion.setTime(0.59)")
        assert len(b.js("window.showmotion.contactArrows()")) >= 1     # the ball has landed on the field
    finally:
        b.close()
