"""Height fields (issue 33, item 1): MJCF ``<hfield>`` assets and ``<geom type="hfield">`` as the
engine's ``hfield`` shape (``csrc/engine/hfield.c``: the field as MuJoCo's triangular prisms, each
collided with the shape as a convex hull).  Contacts against MuJoCo's ``mj_collision`` on the same
files (spheres, capsules and boxes at random poses over a bumpy field), the three ways a file gives
the samples (inline, MuJoCo's binary file, PNG), and balls on the field under ``mb.simulate``
against the rolling ball's closed form and MuJoCo's run."""
from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.mjcf import from_mujoco_state
from multibody.model.geometry import HeightField

RNG_FIELD = np.random.default_rng(7).uniform(0.0, 1.0, (7, 9))
RNG_FIELD[0, 0], RNG_FIELD[-1, -1] = 0.0, 1.0          # MuJoCo normalises to [0, 1]: keep the samples as given
# (MuJoCo reads the elevation's first row as the field's far edge, y = +size[1]: its rows flipped)


def _xml(elevation, nrow, ncol, size, bodies, extra=""):
    elev = " ".join(f"{x:.6f}" for x in np.ravel(elevation))
    return (f'<mujoco><option timestep="0.002"/><asset><hfield name="terrain" nrow="{nrow}" ncol="{ncol}" '
            f'size="{size}" elevation="{elev}"/></asset><worldbody>'
            f'<geom name="field" type="hfield" hfield="terrain" pos="0.05 -0.03 0.02" {extra}/>{bodies}'
            '</worldbody></mujoco>')


BODIES = ('<body name="ball" pos="0 0 1"><freejoint/><geom name="ball" type="sphere" size="0.12"/></body>'
          '<body name="pill" pos="1 0 1"><freejoint/><geom name="pill" type="capsule" size="0.06 0.1"/></body>'
          '<body name="crate" pos="2 0 1"><freejoint/><geom name="crate" type="box" size="0.1 0.08 0.06"/></body>')


def _pair(model, mj, xml_q, geom, d):
    """MuJoCo's and our contacts of the field with `geom` at MuJoCo's qpos: (depth, normal, pos) lists."""
    d.qpos[:] = xml_q
    mujoco.mj_forward(mj, d)
    ours_q = from_mujoco_state(model, xml_q, np.zeros(mj.nv))[0]
    M = [(-c.dist, c.frame[:3].copy(), c.pos.copy()) for c in d.contact[:d.ncon]
         if {mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g) for g in (c.geom1, c.geom2)} == {"field", geom}]
    c = mb.contacts(model, ours_q)
    O = [(dep, n, p) for (a, b), dep, n, p in zip(c.geom_names, c.depth, c.normal, c.position) if (a, b) == ("field", geom)]
    return M, O


def _poses(mj, rng, n):
    """n qpos: every free body over the field at random heights around its surface, random attitude."""
    for _ in range(n):
        q = mj.qpos0.copy()
        for j in range(mj.njnt):
            a = mj.jnt_qposadr[j]
            quat = rng.normal(size=4)
            q[a:a + 7] = [rng.uniform(-0.8, 0.8), rng.uniform(-0.6, 0.6), rng.uniform(0.0, 0.45), *(quat / np.linalg.norm(quat))]
        yield q


@pytest.fixture(scope="module")
def bumpy():
    xml = _xml(RNG_FIELD, 7, 9, "1 0.8 0.3 0.1", BODIES)
    mj = mujoco.MjModel.from_xml_string(xml)
    return mb.load_mjcf(xml), mj, mujoco.MjData(mj)


def test_the_field_is_read_as_mujoco_compiled_it(bumpy):
    model, mj, _ = bumpy
    g = model.geoms
    k = g.index("field")
    assert g.kind[k] == "hfield" and g.body[k] == -1
    hf = g.hfields[k]
    assert np.array_equal(hf.samples, mj.hfield_data.reshape(7, 9)) and np.allclose(hf.samples, np.flipud(RNG_FIELD), atol=1e-6)
    assert np.array_equal(hf.size, mj.hfield_size[0])
    assert ("field", "ball") in g.pair_names() and ("field", "crate") in g.pair_names()


def _shallow(model, mj, d, geom, rng, n, deepest=0.05):
    """(MuJoCo's, our) contact lists at up to n random poses where MuJoCo's deepest contact of the
    field with `geom` is between 1e-6 and `deepest` (a body resting or landing, not buried)."""
    for q in _poses(mj, rng, n):
        M, O = _pair(model, mj, q, geom, d)
        if M and 1e-6 < max(m[0] for m in M) < deepest:
            yield q, M, O


def test_sphere_contacts_match_mujoco(bumpy):
    """One contact per prism the ball reaches, in both; each MuJoCo contact has ours at its position
    with its depth and normal, to rounding (1e-8; measured 1e-13): both the exact sphere-prism
    distance on shallow contacts."""
    model, mj, d = bumpy
    compared, worst = 0, np.zeros(3)
    for q, M, O in _shallow(model, mj, d, "ball", np.random.default_rng(1), 300):
        M = [m for m in M if m[0] > 1e-6]
        O = [o for o in O if o[0] > 1e-6]
        if len(M) > 8:        # the scene keeps the 8 deepest points of a pair (MB_SCENE_PAIR_MAX)
            M = sorted(M, key=lambda m: -m[0])[:8]
        assert len(M) == len(O), (len(M), len(O), q)
        for depth, n, p in M:
            o = min(O, key=lambda o: np.linalg.norm(o[2] - p))
            worst = np.maximum(worst, [abs(o[0] - depth), np.linalg.norm(o[1] - n),
                                       np.linalg.norm(o[2] - p) / (1e-2 + depth)])
            compared += 1
    assert compared > 100
    assert np.all(worst < 1e-8), worst


def _prisms(hf, offset):
    """MuJoCo's prisms of a compiled field (6 corners each: the top triangle, then below it at −base)."""
    sx, sy, ez, base = hf.size
    H = hf.samples
    nr, nc = H.shape
    dx, dy = 2 * sx / (nc - 1), 2 * sy / (nr - 1)
    for r in range(nr - 1):
        for c in range(nc - 1):
            k = [np.array([-sx + i * dx, -sy + j * dy, H[j, i] * ez]) for i, j in ((c, r), (c + 1, r), (c + 1, r + 1), (c, r + 1))]
            for t in range(2):
                top = np.array([k[0], k[t + 1], k[t + 2]]) + offset
                bottom = top.copy()
                bottom[:, 2] = offset[2] - base
                yield np.vstack([top, bottom])


def _least_translation(P, B, RB):
    """The least distance that separates two convex polytopes (corners P, B), by brute force over
    every candidate axis of the separating-axis theorem: both shapes' face normals and the cross
    products of their edge directions (a prism: its top normal, z, three sides; edges its three
    top edges, their level copies below and z; the box: its axes)."""
    tn = np.cross(P[1] - P[0], P[2] - P[0])
    edges = [P[(i + 1) % 3] - P[i] for i in range(3)] + [np.array([0.0, 0.0, 1.0])]
    axes = [tn, edges[3]] + [np.cross(e, edges[3]) for e in edges[:3]] + list(RB.T)
    edges += [e * [1.0, 1.0, 0.0] for e in edges[:3]]            # the bottom edges: the top's, level
    axes += [np.cross(e, a) for e in edges for a in RB.T]
    best = np.inf
    for a in axes:
        if np.linalg.norm(a) < 1e-9:
            continue
        a = a / np.linalg.norm(a)
        pa, pb = P @ a, B @ a
        best = min(best, pa.max() - pb.min(), pb.max() - pa.min())
        if best < 0:
            return best
    return best


def test_box_contacts_are_the_least_translation_out_of_mujocos_prisms(bumpy):
    """A box against the field: our deepest contact is the least translation that separates the box
    from the deepest of MuJoCo's prisms (brute-force separating axes on the prisms built from MuJoCo's
    compiled samples): to rounding at most poses (> 80 %; measured 89 %), else within 6 % — the
    separating-axis test prefers a face to an edge up to 5 % deeper (convex.c's EDGE_BIAS), and a
    face's clipped points may leave out a corner beyond the prism.  MuJoCo reports contact at the
    same poses, but its own box-prism depths are not this least translation (measured: a median
    38 % below it, mujoco 4.0.0), so they are not the reference here."""
    import itertools
    model, mj, d = bumpy
    hf = model.geoms.hfields[model.geoms.index("field")]
    g = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, "crate")
    half = mj.geom_size[g]
    rel = []
    for q, M, O in _shallow(model, mj, d, "crate", np.random.default_rng(2), 200):
        R, p = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g]
        B = np.array([p + R @ (np.array(s) * half) for s in itertools.product((-1, 1), repeat=3)])
        exact = max(_least_translation(P, B, R) for P in _prisms(hf, np.array([0.05, -0.03, 0.02])))
        assert O and exact > 0
        rel.append(max(o[0] for o in O) / exact - 1)
    rel = np.abs(rel)
    assert len(rel) > 20
    assert np.mean(rel < 1e-9) > 0.8 and rel.max() < 0.06, np.sort(rel)


def test_capsule_contacts_reach_mujocos_prisms(bumpy):
    """A capsule facing a prism's face gets the segment clipped by it (two points, so it lies
    still), MuJoCo one point per prism: the deepest contact agrees with its normal, to rounding
    (1e-8; measured 1e-13)."""
    model, mj, d = bumpy
    compared, worst = 0, np.zeros(2)
    for q, M, O in _shallow(model, mj, d, "pill", np.random.default_rng(3), 800):
        m, o = max(M, key=lambda x: x[0]), max(O, key=lambda x: x[0])
        worst = np.maximum(worst, [abs(m[0] - o[0]), np.linalg.norm(m[1] - o[1])])
        compared += 1
    assert compared > 50
    assert np.all(worst < 1e-8), worst


def _slope_xml(tan, friction="1"):
    """An inclined field: 3 × 2 samples, z = (x + 2) tan θ over x ∈ [−2, 2]."""
    size = f"2 1 {4 * tan} 0.1"
    elev = [[0.0, 0.5, 1.0], [0.0, 0.5, 1.0]]
    ball = ('<body name="ball" pos="1 0 {z}"><freejoint/><geom name="ball" type="sphere" size="0.1" '
            f'friction="{friction}"/></body>')
    z = 3 * tan + 0.1 / np.cos(np.arctan(tan))
    return _xml(elev, 2, 3, size, ball.format(z=z)).replace('pos="0.05 -0.03 0.02"', 'pos="0 0 0"')


def test_a_ball_rolls_down_the_field_as_a_rolling_ball_does():
    """A solid ball rolling without slipping down a slope θ: s = (5/7) g sin θ t²/2 (its closed
    form), under hard contact to 1 %; MuJoCo's run of the same file (soft contact: 3 % slower) to 5 %."""
    tan = 0.1
    xml = _slope_xml(tan)
    model = mb.load_mjcf(xml)
    T = 1.0
    tr = mb.simulate(model, None, None, T, dt=1e-3, contact="hard")
    q_end = tr.q[-1]
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    x0 = d.qpos[0]
    while d.time < T - 1e-9:
        mujoco.mj_step(mj, d)
    theta = np.arctan(tan)
    s = 5 / 7 * 9.81 * np.sin(theta) * T ** 2 / 2
    ours = np.hypot(q_end[0] - 1.0, q_end[2] - tr.q[0][2])
    theirs = np.hypot(d.qpos[0] - x0, d.qpos[2] - mj.qpos0[2])
    assert abs(ours - s) < 0.01 * s, (ours, s)
    assert abs(theirs - s) < 0.05 * s, (theirs, s)      # MuJoCo's soft contact rolls a little slower
    assert q_end[0] < 1.0 and abs(q_end[1]) < 1e-3     # straight down the slope (the friction pyramid: 1 mm)


def test_a_ball_and_a_box_rest_on_the_bumpy_field_where_mujoco_rests_them():
    """Dropped over the field, hard contact stands them on it: after 1.5 s both are at rest at
    MuJoCo's heights (1 mm); the default contact (compliant, the file's own scene) within 2 mm."""
    flat = np.zeros((5, 5))
    flat[0], flat[-1] = 1.0, 0.6                 # a bump at either end, a flat valley between
    xml = _xml(flat, 5, 5, "1 1 0.3 0.1",
               '<body name="ball" pos="-0.3 0 0.4"><freejoint/><geom name="ball" type="sphere" size="0.1"/></body>'
               '<body name="crate" pos="0.3 0.1 0.4"><freejoint/><geom name="crate" type="box" size="0.1 0.08 0.06"/></body>')
    model = mb.load_mjcf(xml)
    tr = mb.simulate(model, None, None, 1.5, dt=1e-3, contact="hard")
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    while d.time < 1.5 - 1e-9:
        mujoco.mj_step(mj, d)
    q = from_mujoco_state(model, d.qpos, d.qvel)[0]
    ball, crate = tr.q[-1][2], tr.q[-1][9]
    assert abs(ball - (0.02 + 0.1)) < 1e-3 and abs(crate - (0.02 + 0.06)) < 1e-3, (ball, crate)
    assert abs(ball - q[2]) < 1e-3 and abs(crate - q[9]) < 1e-3
    assert np.abs(tr.qd[-1]).max() < 1e-2
    soft = mb.simulate(model, None, None, 1.5)          # the file's own scene by default: the compliant law
    assert soft.contact == "compliant"
    assert abs(soft.q[-1][2] - q[2]) < 2e-3 and abs(soft.q[-1][9] - q[9]) < 2e-3   # its K sinks the weight ~1 mm


def test_binary_and_png_files_give_the_inline_samples(tmp_path):
    """MuJoCo's binary .bin (int32 nrow, ncol, float32 data, first row at −y) and a grey PNG (first
    row at +y, as the inline elevation), both read by MuJoCo's compiler, give the field the inline
    elevation gives."""
    rows = np.linspace(0.0, 1.0, 4 * 5).reshape(4, 5)
    with open(tmp_path / "f.bin", "wb") as f:      # its rows from y = -size[1] up: the inline order flipped
        f.write(np.array([4, 5], np.int32).tobytes() + np.flipud(rows).astype(np.float32).tobytes())
    inline = _xml(rows, 4, 5, "1 1 0.2 0.1", BODIES)
    elev = " ".join(f"{x:.6f}" for x in rows.ravel())
    binary = inline.replace(f'nrow="4" ncol="5" size="1 1 0.2 0.1" elevation="{elev}"',
                            f'size="1 1 0.2 0.1" file="{tmp_path / "f.bin"}"')
    a, b = mb.load_mjcf(inline).geoms, mb.load_mjcf(binary).geoms
    assert np.allclose(a.hfields[a.index("field")].samples, b.hfields[b.index("field")].samples, atol=1e-6)
    import PIL.Image as png   # Pillow comes with matplotlib (the sim extra): a test dependency, never skipped
    img = (rows * 255).round().astype(np.uint8)
    png.fromarray(img, mode="L").save(tmp_path / "f.png")
    viapng = inline.replace(f'nrow="4" ncol="5" size="1 1 0.2 0.1" elevation="{elev}"',
                            f'size="1 1 0.2 0.1" file="{tmp_path / "f.png"}"')
    mj = mujoco.MjModel.from_xml_string(viapng)
    c = mb.load_mjcf(viapng).geoms
    got = c.hfields[c.index("field")].samples
    assert np.array_equal(got, mj.hfield_data.reshape(4, 5))
    assert np.allclose(got, a.hfields[a.index("field")].samples, atol=1 / 255)


def test_bad_height_fields_are_refused_by_name():
    with pytest.raises(ValueError, match="height field samples: expected finite values in"):
        HeightField([1, 1, 1, 1], [[0, 2], [0, 1]])
    with pytest.raises(ValueError, match="height field size"):
        HeightField([1, 1, 0, 1], [[0, 1], [0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xml = _xml(RNG_FIELD, 7, 9, "1 0.8 0.3 0.1", BODIES)
        mb.load_mjcf(xml)    # no warning: the field is kept


def test_the_field_is_drawn_as_its_surface(bumpy):
    model, mj, _ = bumpy
    solid = [g for g in model.geometries if g.name == "field"]
    assert len(solid) == 1 and solid[0].kind == "solid" and solid[0].role == "visual"
    V = np.asarray(solid[0].vertices)
    assert V.shape == (7 * 9, 3)
    assert np.allclose(V[:, 2].max(), 0.3 * RNG_FIELD.max()) and len(solid[0].faces) == 2 * 6 * 8


def test_the_engine_stands_bodies_on_a_flat_field_as_on_the_plane():
    """mb.engine: a flat height field at z = 0 holds a ball where the plane z = 0 does, and a box at
    the plane's height.  (The box, lying across cell edges, meets the side faces of the prisms it
    barely overlaps — per prism, as MuJoCo's — whose sideways normals move it up to ~1 mm over the
    run: its x, y are not held to the plane's.)"""
    from multibody.engine import Box, HField, Plane, Sphere, World
    for shape, z in ((Sphere(0.1), 0.1), (Box(0.4, 0.3, 0.2), 0.1)):
        ends = []
        for floor in (Plane((0, 0, 1), 0.0), HField(np.zeros((9, 9)), size=(2, 2, 0.5, 0.1))):
            w = World(gravity=(0, 0, -9.81))
            w.add_geom(floor)
            b = w.add_body(shape, mass=1.0, position=(0.1, 0.05, z + 0.2))
            w.run(1500)
            ends.append(np.array(b.position))
        np.testing.assert_allclose(ends[1][2 if isinstance(shape, Box) else slice(None)],
                                   ends[0][2 if isinstance(shape, Box) else slice(None)], atol=2e-4)
        assert ends[1][2] == pytest.approx(z, abs=2e-4)


def test_the_engine_rolls_a_ball_down_a_sloped_field_at_five_sevenths_g_sin_theta():
    from multibody.engine import HField, Sphere, World
    tan, g, r, T = 0.1, 9.81, 0.1, 1.0
    theta = np.arctan(tan)
    field = HField([[0.0, 0.5, 1.0]] * 3, size=(2, 2, 4 * tan, 0.1))      # z = (x + 2) tan θ
    w = World(gravity=(0, 0, -g))
    w.add_geom(field)
    n = np.array([-np.sin(theta), 0, np.cos(theta)])
    start = np.array([1.0, 0.0, 3 * tan]) + r * n
    b = w.add_body(Sphere(r), mass=1.0, position=start)
    w.run(int(round(T / w.dt)))
    s = (np.array(b.position) - start) @ np.array([-np.cos(theta), 0, -np.sin(theta)])
    assert s == pytest.approx(0.5 * 5 / 7 * g * np.sin(theta) * T ** 2, rel=5e-3)


def test_a_height_field_on_a_moving_body_is_left_out_by_name():
    xml = ('<mujoco><asset><hfield name="h" nrow="3" ncol="3" size="1 1 .3 .1" elevation="0 0 0 0 1 0 0 0 0"/></asset>'
           '<worldbody><geom name="floor" type="plane" size="2 2 .1"/><body name="b" pos="0 0 1"><freejoint/>'
           '<geom name="carried" type="hfield" hfield="h"/><geom name="ball" type="sphere" size=".1"/></body>'
           '</worldbody></mujoco>')
    with pytest.warns(mb.MJCFWarning, match=r"no contact with <geom> 'carried' \(a height field on a moving body"):
        model = mb.load_mjcf(xml)
    assert model.geoms.names == ("floor", "ball")
