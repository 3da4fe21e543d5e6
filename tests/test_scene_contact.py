"""Contact from the model's own files (issue 33, item 1): Model.geoms read from MJCF and URDF,
mb.contacts against MuJoCo's collision on the same files (dm_control's humanoid and quadruped,
example-robot-data's solo12 with a floor added), MuJoCo's pair filters, margins, the engine's
ellipsoid, and the compliant law on a contact list (C against its NumPy statement to 1e-12)."""
from __future__ import annotations

import os
import warnings

import dm_control
import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.engine import Ellipsoid, Plane, World
from multibody.model.geometry import from_geometries, Geoms, model_geoms
from multibody.model.mjcf import MJCFWarning

from scene_contact_reference import contact_forces as reference_forces

SUITE = os.path.join(os.path.dirname(dm_control.__file__), "suite")


def _load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)
        model = mb.load_mjcf(os.path.join(SUITE, name))
    mj = mujoco.MjModel.from_xml_path(os.path.join(SUITE, name))
    return model, mj, mujoco.MjData(mj)


def _mujoco_contacts(mj, d, q, names):
    """MuJoCo's contacts at qpos q by (geom1, geom2) name: (depth, normal, pos) each."""
    d.qpos[:] = q
    mujoco.mj_forward(mj, d)
    out = {}
    for c in d.contact[:d.ncon]:
        a = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, c.geom1)
        b = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, c.geom2)
        if a in names and b in names:
            out.setdefault((a, b), []).append((-c.dist, c.frame[:3].copy(), c.pos.copy()))
    return out


def _ours(model, q, **kw):
    c = mb.contacts(model, q, **kw)
    out = {}
    for (a, b), dep, n, p in zip(c.geom_names, c.depth, c.normal, c.position):
        out.setdefault((a, b), []).append((dep, n, p))
    return out


def _configurations(mj, n, seed, free_bodies):
    """qpos0, the keyframes and n poses: joints uniform in their ranges, the free bodies named
    placed near the origin at heights 0-0.5 m (into the floor) with a random attitude."""
    rng = np.random.default_rng(seed)
    qs = [mj.qpos0.copy()] + [mj.key_qpos[k].copy() for k in range(mj.nkey)]
    for _ in range(n):
        q = mj.qpos0.copy()
        for j in range(mj.njnt):
            a = mj.jnt_qposadr[j]
            if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                if mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, mj.jnt_bodyid[j]) in free_bodies:
                    quat = rng.normal(size=4)
                    q[a:a + 7] = [*rng.uniform(-0.2, 0.2, 2), rng.uniform(0.0, 0.5), *(quat / np.linalg.norm(quat))]
            elif mj.jnt_limited[j]:
                q[a] = rng.uniform(*mj.jnt_range[j])
        qs.append(q)
    return qs


def _compare(model, mj, d, qs, exact_pairs):
    """Every configuration: the same pairs in contact (deeper than 1e-6) as MuJoCo; per pair the
    deepest point's depth, normal and position, and the number of points (but for cylinders, boxes
    and meshes, whose other points the two choose differently: the engine's cylinder on a plane
    gives its rim's lowest point and those a quarter turn away on both caps, MuJoCo's up to 4).  Returns the largest
    errors of the pairs whose shapes `exact_pairs(kind a, kind b)` says are closed forms, and of the
    others (relative depth, normal)."""
    names = set(model.geoms.names)
    kind = dict(zip(model.geoms.names, model.geoms.kind))
    exact, other, compared = np.zeros(3), np.zeros((2, 2)), 0   # other: [deep, shallow (< 5 mm)]
    for q in qs:
        M, O = _mujoco_contacts(mj, d, q, names), _ours(model, q)
        deep = lambda D: {k for k, v in D.items() if max(x[0] for x in v) > 1e-6}  # noqa: E731
        assert deep(M) == deep(O), (deep(M) - deep(O), deep(O) - deep(M))
        for k in deep(M):
            compared += 1
            m, o = max(M[k], key=lambda x: x[0]), max(O[k], key=lambda x: x[0])
            if exact_pairs(kind[k[0]], kind[k[1]]):
                if not {kind[k[0]], kind[k[1]]} & {"cylinder", "box", "convex"}:   # the same points
                    assert len(M[k]) == len(O[k]), k
                exact = np.maximum(exact, [abs(m[0] - o[0]), np.linalg.norm(m[1] - o[1]), np.linalg.norm(m[2] - o[2])])
            else:
                err = [abs(m[0] - o[0]) / m[0], np.linalg.norm(m[1] - o[1])]
                other[m[0] < 5e-3] = np.maximum(other[m[0] < 5e-3], err)
    return exact, other, compared


def test_humanoid_contacts_match_mujoco():
    """Capsules, spheres and the floor: every pair a closed form, MuJoCo's numbers to rounding."""
    model, mj, d = _load("humanoid.xml")
    qs = _configurations(mj, 40, 0, {"torso"})
    exact, _, compared = _compare(model, mj, d, qs, lambda a, b: True)
    assert compared > 200
    assert np.all(exact < 1e-12), exact


def test_quadruped_contacts_match_mujoco():
    """The ellipsoid torso, capsule legs, sphere toes and the floor and walls.  The torso against a
    leg is Minkowski portal refinement here, GJK/EPA in MuJoCo: shallow contacts (< 5 mm) agree to
    0.1 % in depth and 0.01 in the normal, deep ones within 5 % (MPR's depth is along the portal
    it found, not the least)."""
    model, mj, d = _load("quadruped.xml")
    qs = _configurations(mj, 60, 1, {"torso"})
    curved = {"sphere", "capsule", "cylinder"}
    exact, other, compared = _compare(model, mj, d, qs, lambda a, b: a == "plane" or b == "plane" or
                                      (a in curved and b in curved))
    assert compared > 300
    assert np.all(exact < 1e-12), exact
    (deep_depth, deep_normal), (shallow_depth, shallow_normal) = other
    assert deep_depth < 0.05 and deep_normal < 0.25, other          # MPR is not EPA on deep overlaps
    assert shallow_depth < 1e-3 and shallow_normal < 1e-2, other


def test_quadruped_geoms_from_the_file():
    model, mj, _ = _load("quadruped.xml")
    g = model.geoms
    torso = g.index("torso")
    assert g.kind[torso] == "ellipsoid" and np.allclose(g.size[torso], [0.3, 0.27, 0.2])
    toe = g.index("toe_front_left")
    assert g.kind[toe] == "sphere" and g.friction[toe, 0] == 1.5 and g.condim[toe] == 1
    assert g.kind[g.index("terrain")] == "hfield" and g.body[g.index("terrain")] == -1   # the height field collides
    pairs = set(g.pair_names())
    assert ("floor", "toe_front_left") in pairs and ("floor", "torso") in pairs
    assert ("torso", "thigh_front_left") not in pairs and ("thigh_front_left", "torso") not in pairs   # parent–child
    assert ("wall_px", "floor") not in pairs and ("floor", "wall_px") not in pairs                     # both static
    ball = [p for p, (a, b) in enumerate(g.pair_names()) if "ball" in (a, b) and "torso" in (a, b)][0]
    assert g.pair_condim[ball] == 6 and np.allclose(g.pair_friction[ball], [0.7, 0.005, 0.005])   # priority 1


def test_height_field_is_kept_not_warned_about():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mb.load_mjcf(os.path.join(SUITE, "quadruped.xml"))
    assert not [x for x in w if "terrain" in str(x.message)]


FILTERS = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
<body name="a" pos="0 0 .05"><freejoint/><geom name="ga" type="sphere" size=".1"/>
  <geom name="ga2" type="box" size=".05 .05 .05" priority="2" friction=".3 .01 .002" condim="4"/>
  <body name="b" pos="0 0 .05"><joint type="hinge"/><geom name="gb" type="sphere" size=".1"/>
    <body name="c" pos="0 0 .05"><joint type="hinge"/><geom name="gc" type="capsule" size=".1 .1"/>
      <body name="e"><geom name="ge" type="sphere" size=".1" contype="2" conaffinity="2"/></body></body></body></body>
<body name="f" pos="0 0 .05"><freejoint/><geom name="gf" type="sphere" size=".1" margin=".02"/>
  <geom name="gf2" type="cylinder" size=".05 .05" contype="4" conaffinity="0"/></body>
</worldbody><contact><exclude body1="a" body2="c"/><pair geom1="gf" geom2="ga" margin=".5" friction="2 2 .1 .2 .2"/></contact>
</mujoco>"""


def test_mujoco_pair_filters_and_parameters():
    """contype/conaffinity, one body, parent–child (not the world), <exclude>, <pair> with its own
    margin and friction, welded bodies (e on c), priority and margin mixing: where everything
    overlaps, our pairs are exactly those MuJoCo reports, with its parameters."""
    model = mb.load_mjcf(FILTERS)
    mj = mujoco.MjModel.from_xml_string(FILTERS)
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    theirs = {}
    for c in d.contact[:d.ncon]:
        key = (mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, c.geom1), mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, c.geom2))
        theirs[key] = (c.dim, c.friction[[0, 2, 3]].copy(), c.includemargin, -c.dist)
    g = model.geoms
    assert set(g.pair_names()) == set(theirs)
    for p, key in enumerate(g.pair_names()):
        dim, fr, _, _ = theirs[key]
        assert g.pair_condim[p] == dim and np.allclose(g.pair_friction[p], fr), key
    ours = _ours(model, mj.qpos0)
    assert set(ours) == set(theirs)
    for key, pts in ours.items():
        assert abs(max(x[0] for x in pts) - theirs[key][3]) < 1e-12, key


def test_margin_reports_contacts_before_touching():
    """A sphere 5 mm above the floor with a 1 cm margin: MuJoCo's contact (dist 5 mm) and ours."""
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
    <body pos="0 0 .105"><freejoint/><geom name="s" type="sphere" size=".1" margin=".01"/>
    <geom name="c" type="capsule" size=".05 .1" pos=".3 0 -.053" euler="0 90 0" margin=".01"/></body></worldbody></mujoco>"""
    model, mj = mb.load_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    M, O = _mujoco_contacts(mj, d, mj.qpos0, set(model.geoms.names)), _ours(model, mj.qpos0)
    assert set(M) == set(O) == {("floor", "s"), ("floor", "c")}
    for k in M:
        for m, o in zip(sorted(M[k], key=lambda x: tuple(x[2])), sorted(O[k], key=lambda x: tuple(x[2]))):
            assert abs(m[0] - o[0]) < 1e-12 and np.allclose(m[1], o[1]) and np.allclose(m[2], o[2], atol=1e-12)
    assert min(x[0] for v in O.values() for x in v) < 0          # inside the margin, not touching


def _robots():
    from test_urdf_robots import ROBOTS    # example-robot-data's robots folder, found once there
    return ROBOTS


def test_solo12_meshes_on_a_ground_match_mujoco():
    """solo12's collision meshes (convex hulls) on a ground added by ground=True, against MuJoCo
    compiling the same URDF with a plane added: per link, the deepest point agrees (the hulls keep
    256 of their vertices, farthest-point sampled, with a warning: within 2 mm)."""
    robots = _robots()
    path = os.path.join(robots, "solo_description/robots/solo12.urdf")
    model = mb.load_urdf(path, floating=True, package_dirs=[os.path.dirname(os.path.dirname(robots))])
    text = open(path).read().replace("package://example-robot-data/robots/", robots + "/")
    spec = mujoco.MjSpec.from_string(text)
    spec.compiler.discardvisual = True
    spec.worldbody.first_body().add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 0.1], name="ground")
    mj = spec.compile()
    d = mujoco.MjData(mj)
    ground = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, "ground")
    jnames = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)]
    rng = np.random.default_rng(1)
    with pytest.warns(UserWarning, match=r"collision mesh 'base_link': its hull has \d+ vertices; kept 256"):
        geoms = mb.kinematics.contacts.scene_geoms(model, ground=True)
    worst, pairs = 0.0, 0
    for _ in range(12):
        q = model.neutral().copy()
        q[2] = rng.uniform(0.15, 0.3)
        quat = rng.normal(size=4) * [1, 0.1, 0.1, 0.1]
        q[3:7] = quat / np.linalg.norm(quat)
        qpos = np.zeros(mj.nq)
        qpos[:7] = q[:7]
        for j, name in enumerate(model.joint_names[1:], 1):
            v = rng.uniform(-1, 1)
            q[model.q_start[j]] = qpos[mj.jnt_qposadr[jnames.index(name)]] = v
        d.qpos[:] = qpos
        mujoco.mj_forward(mj, d)
        theirs = {}
        for c in d.contact[:d.ncon]:
            if ground in (c.geom1, c.geom2):
                g = c.geom2 if c.geom1 == ground else c.geom1
                theirs.setdefault(mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, mj.geom_bodyid[g]), []).append(-c.dist)
        c = mb.contacts(model, q, geoms=geoms)
        ours = {}
        for (a, _), b, dep in zip(c.geom_names, c.body_b, c.depth):
            if a == "ground":
                ours.setdefault(model.body_names[b], []).append(dep)
        assert set(ours) == set(theirs)
        for body in ours:
            pairs += 1
            assert len(ours[body]) <= 4 * len(theirs[body])
            worst = max(worst, abs(max(ours[body]) - max(theirs[body])))
    assert pairs >= 10 and worst < 2e-3, (pairs, worst)


def test_anymal_feet_on_the_ground_are_spheres():
    """ANYmal (URDF primitives): each foot sphere's depth is its radius less its centre's height."""
    robots = _robots()
    model = mb.load_urdf(os.path.join(robots, "anymal_b_simple_description/robots/anymal.urdf"), floating=True,
                         check_meshes=False)
    q = model.neutral().copy()
    q[2] = 0.55
    geoms = model_geoms(model)
    feet = [g for g in range(len(geoms)) if geoms.kind[g] == "sphere"]
    assert len(feet) == 4
    st = mb.body_states(model, q)
    centres = np.array([st.R[geoms.body[g]] @ geoms.translation[g] + st.p[geoms.body[g]] for g in feet])
    q[2] -= centres[:, 2].min() - geoms.size[feet[0], 0] + 0.004        # the lowest foot 4 mm in
    c = mb.contacts(model, q, ground=True)
    ground = [i for i, (a, b) in enumerate(c.geom_names) if a == "ground"]
    st = mb.body_states(model, q)
    for i in ground:
        g = c.geom_b[i]
        assert geoms.kind[g] == "sphere"
        centre = st.R[geoms.body[g]] @ geoms.translation[g] + st.p[geoms.body[g]]
        assert abs(c.depth[i] - (geoms.size[g, 0] - centre[2])) < 1e-14
        assert np.allclose(c.normal[i], [0, 0, 1])
    assert max(c.depth[ground]) == pytest.approx(0.004, abs=1e-12)
    assert len(geoms.pairs) == 0                  # no self-collision by default (links overlap where they meet)
    selfish = from_geometries(model.geometries, model.parent, model.name, self_collision=True)
    self_pairs = {tuple(sorted((model.body_names[a] if a >= 0 else "world", model.body_names[b]))) for a, b in
                  zip(selfish.body[selfish.pairs[:, 0]], selfish.body[selfish.pairs[:, 1]])}
    assert ("LF_HIP", "base") not in self_pairs and ("LF_THIGH", "LF_HIP") not in self_pairs   # adjacent links
    assert ("LF_THIGH", "base") in self_pairs


def test_ellipsoid_on_a_plane_is_exact():
    """The engine's new shape: the deepest point of a tilted ellipsoid below a plane, analytic."""
    b = mb.ModelBuilder()
    body = b.add_body("e", parent=None, joint="free", inertia=np.eye(3))
    b.add_geometry(mb.Geometry(body, "box", (0.1, 0.1, 0.1), role="collision", name="box"))
    model = b.build()
    radii = np.array([0.3, 0.2, 0.1])
    g = model_geoms(model)
    import dataclasses
    g = dataclasses.replace(g, kind=("ellipsoid",), size=radii[None]).with_ground()
    for angle in (0.0, 0.4, 1.1):
        quat = [np.cos(angle / 2), np.sin(angle / 2), 0, 0]
        q = np.array([0.1, 0.2, 0.09, *quat])
        c = mb.contacts(model, q, geoms=g)
        Rm = np.array([[1, 0, 0], [0, np.cos(angle), -np.sin(angle)], [0, np.sin(angle), np.cos(angle)]])
        reach = np.linalg.norm(radii * Rm[2])        # the ellipsoid's half extent along world z
        assert len(c) == 1 and c.depth[0] == pytest.approx(reach - 0.09, abs=1e-14)
        assert np.allclose(c.normal[0], [0, 0, 1])


def test_a_point_on_a_plane_keeps_its_slot_as_the_others_touch_down():
    """Contacts.slot: a box's corner, a capsule's end and a cylinder's rim point on a plane keep their own
    slot (geoms.slot_start[pair] + the point's feature) whichever of the pair's points touch, so a run's state of a contact
    (its tangential deformation) stays with it; before, a point's slot was its place among the points in
    contact, and the end that touched first took the other end's slot when both did."""
    for shape in ('type="capsule" fromto="-0.1 0 -0.03 0.1 0 0.03" size="0.02"',
                  'type="box" size="0.1 0.05 0.02" euler="0 10 0"',
                  'type="cylinder" fromto="-0.1 0 -0.03 0.1 0 0.03" size="0.02"'):
        m = mb.load_mjcf(f'<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 1"><freejoint/>'
                         f'<geom {shape}/></body></worldbody></mujoco>')
        q = m.q_default.copy()
        seen = {}                 # the slot of each contact point, by its x in the body (the low end is −x)
        for z in np.linspace(0.04, -0.02, 13):      # lowered: the −x end first, then the +x end too
            q[2] = z
            c = mb.contacts(m, q)
            assert len(set(c.slot.tolist())) == len(c)              # one slot per point
            assert np.all(c.geoms.slot_pair[c.slot] == c.pair)
            for x, y, slot in zip(c.position[:, 0].round(3), c.position[:, 1].round(3), c.slot):
                assert seen.setdefault((x, y), int(slot)) == slot, (shape, z)
        ends = {x for x, _ in seen}
        assert min(ends) < 0 < max(ends), shape      # both ends were met, and each kept its slot


def test_a_hull_vertex_on_a_plane_keeps_its_slot_as_the_foot_rocks():
    """A convex mesh's points on a plane are its vertices (mb_contact_point.feature = the vertex): each keeps
    one slot (feature mod 8) while the hull rocks, whichever of the touching vertices is deepest and which
    four the collider keeps; before, a point's slot was its place in the collider's list, deepest first, so
    the rocking foot's points swapped their state (URDF mesh feet: solo12's)."""
    ring = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    bottom = np.c_[0.1 * np.cos(ring), 0.1 * np.sin(ring), np.full(8, -0.02)]
    verts = np.r_[bottom, bottom + [0, 0, 0.04]]            # an octagonal prism
    m = mb.load_mjcf(f'<mujoco><asset><mesh name="m" vertex="{" ".join(map(str, verts.ravel()))}"/></asset>'
                     '<worldbody><geom type="plane" size="1 1 .1"/><body><freejoint/><geom type="mesh" mesh="m"/>'
                     '</body></worldbody></mujoco>')
    seen, deepest, counts = {}, set(), set()
    for a in np.linspace(-0.02, 0.02, 41):                  # rocked about y (and a little about x)
        q = m.q_default.copy()
        w = np.cos(a / 2)
        q[3:7] = [w, 0.002 * w, np.sin(a / 2), 0.0]          # about y by a, tilted 0.004 rad about x
        q[3:7] /= np.linalg.norm(q[3:7])
        q[2] = 0.02 - 0.002                                  # the centre of the bottom 2 mm below the floor
        c = mb.contacts(m, q)
        E = mb.spatial.quat_to_matrix(q[3:7])                # world → body
        at = bottom @ E + q[:3]                               # the bottom vertices in the world
        assert len(set(c.slot.tolist())) == len(c) and np.all(c.geoms.slot_pair[c.slot] == c.pair)
        ids = [int(np.argmin(np.linalg.norm(at[:, :2] - x[:2], axis=1))) for x in c.position]
        for v, slot in zip(ids, c.slot):
            assert seen.setdefault(v, int(slot)) == slot, (a, v)
        deepest.add(ids[int(np.argmax(c.depth))])
        counts.add(int((at[:, 2] < 0).sum()))
    assert len(deepest) >= 2 and max(counts) > 4 and len(seen) >= 6   # rocked: other vertices deepest, 4 of > 4 kept


def test_ellipsoid_in_the_engine_rests_on_a_plane():
    world = World(dt=1e-3)
    world.add_geom(Plane((0, 0, 1), 0.0))
    body = world.add_body(Ellipsoid(0.3, 0.2, 0.1), density=500.0, position=(0, 0, 0.12))
    world.run(1500)
    assert body.position[2] == pytest.approx(0.1, abs=2e-3)


def test_bad_geometry_is_refused_naming_it():
    model, _, _ = _load("humanoid.xml")
    g = model.geoms
    import dataclasses
    with pytest.raises(ValueError, match="geom 'floor': unknown shape 'sdf'"):
        dataclasses.replace(g, kind=("sdf",) + g.kind[1:])
    moving = dataclasses.replace(g, body=np.where(np.arange(len(g)) == 0, 0, g.body))
    with pytest.raises(ValueError, match="a plane must be static"):
        mb.contacts(model, model.neutral(), geoms=moving)
    with pytest.raises(ValueError, match="size 0 is -0.1; expected > 0"):
        mb.contacts(model, model.neutral(), geoms=dataclasses.replace(g, size=np.where(
            np.arange(len(g))[:, None] == 1, -0.1, g.size)))
    with pytest.raises(TypeError, match="geoms: expected"):
        mb.contacts(model, model.neutral(), geoms="floor")
    with pytest.raises(ValueError, match="q"):
        mb.contacts(model, np.full(model.nq, np.nan))


# ---------------------------------------------------------------------------------------- law
def _random_state(model, mj, rng):
    q = _configurations(mj, 1, int(rng.integers(1 << 30)), {"torso"})[-1]
    qd = rng.normal(size=model.nv)
    return q, qd


@pytest.mark.parametrize("name", ["quadruped.xml", "humanoid.xml"])
def test_contact_law_c_matches_its_numpy_statement(name):
    model, mj, _ = _load(name)
    rng = np.random.default_rng(3)
    checked = 0
    for k in range(20):
        q, qd = _random_state(model, mj, rng)
        c = mb.contacts(model, q)
        if not len(c):
            continue
        if k % 2:   # the files' legs are frictionless (condim 1): give every pair sliding friction
            c = mb.kinematics.contacts.Contacts(dataclass_friction(c.geoms, 0.9), c.pair, c.position, c.normal, c.depth)
        u = rng.normal(scale=1e-3, size=(len(c), 2))
        K, D = 2e5 * rng.uniform(0.5, 2), 2e3 * rng.uniform(0.1, 2)
        f = mb.contact_forces(model, q, qd, c, K, D, u)
        ref = reference_forces(model, q, qd, c, K, D, u)
        scale = max(1.0, np.abs(ref[0]).max())
        assert np.abs(f.f_ext - ref[0]).max() < 1e-12 * scale
        assert np.abs(f.udot - ref[1]).max() < 1e-12 * max(1.0, np.abs(ref[1]).max())
        assert np.abs(f.force - ref[2]).max() < 1e-12 * scale
        assert np.array_equal(f.state, ref[3])
        checked += int(np.count_nonzero(f.state))
    assert checked > 20


def test_contact_law_on_the_floor_is_the_ground_contact_law():
    """A sphere on the floor, translating: its contact force is GroundContact's law at a point with
    the same depth and velocity (the normal is z, the tangents x and y)."""
    b = mb.ModelBuilder()
    ball = b.add_body("ball", parent=None, joint="free", mass=1.0, inertia=np.eye(3) * 1e-3)
    b.add_geometry(mb.Geometry(ball, "sphere", (0.1,), role="collision", name="ball"))
    model = b.build()
    q = np.array([0.0, 0.0, 0.097, 1, 0, 0, 0])
    qd = np.array([0, 0, 0, 3.0, -2.0, -0.05])          # [ω; v]: sliding and sinking
    K, D, mu = 1e6, 2e3, 0.8
    c = mb.contacts(model, q, ground=True)
    c = mb.kinematics.contacts.Contacts(dataclass_friction(c.geoms, mu), c.pair, c.position, c.normal, c.depth)
    u = np.array([[1e-4, -2e-4]])
    f = mb.contact_forces(model, q, qd, c, K, D, u)
    z = -c.depth[0]
    vel = qd[3:]
    zr = np.sqrt(-z)
    fn = zr * (-K * z - D * vel[2])
    ft = -zr * K * u[0] - zr * D * vel[:2]
    sliding = np.linalg.norm(ft) > mu * fn
    if sliding:
        ft = ft * mu * fn / np.linalg.norm(ft)
    assert np.allclose(f.force[0], [*ft, fn], rtol=1e-13, atol=1e-12)
    assert f.state[0] == 1 + sliding and np.allclose(f.f_ext[0, 3:], f.force[0], rtol=1e-15)


def dataclass_friction(geoms, mu):
    import dataclasses
    return dataclasses.replace(geoms, pair_friction=np.tile([mu, 0, 0], (len(geoms.pairs), 1)),
                               pair_condim=np.full(len(geoms.pairs), 3))


def test_contact_law_refuses_bad_input():
    model, mj, _ = _load("humanoid.xml")
    q = _configurations(mj, 3, 5, {"torso"})[-1]
    c = mb.contacts(model, q)
    assert len(c)
    qd = np.zeros(model.nv)
    with pytest.raises(ValueError, match="normal: contact 0's normal is not a unit vector"):
        bad = mb.kinematics.contacts.Contacts(c.geoms, c.pair, c.position, 2 * c.normal, c.depth)
        mb.contact_forces(model, q, qd, bad, 1e5, 1e3)
    with pytest.raises(ValueError, match="stiffness"):
        mb.contact_forces(model, q, qd, c, -1.0, 1e3)
    with pytest.raises(ValueError, match="u: dimension 0"):
        mb.contact_forces(model, q, qd, c, 1e5, 1e3, np.zeros((len(c) + 1, 2)))
    with pytest.raises(TypeError, match="contacts: expected"):
        mb.contact_forces(model, q, qd, [1, 2], 1e5, 1e3)
