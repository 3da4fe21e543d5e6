"""Narrow phase for every primitive pair (closed forms and against coal), and the broad phase."""
import math

import coal
import numpy as np
import pytest

from multibody import engine as E
from multibody.engine import _engine as C
from multibody.engine.world import matrix_to_quat, quat_to_matrix

SHAPES = {
    "sphere": lambda: E.Sphere(0.15),
    "box": lambda: E.Box(0.4, 0.3, 0.2),
    "capsule": lambda: E.Capsule(0.1, 0.4),
    "cylinder": lambda: E.Cylinder(0.12, 0.35),
}


def pair(shape1, pose1, shape2, pose2):
    """Contacts of shape1 (geom 0) against shape2 (geom 1) at poses (position, quaternion)."""
    world = E.World(gravity=(0, 0, 0))
    world.add_body(shape1, mass=1.0, position=pose1[0], quaternion=pose1[1])
    if isinstance(shape2, E.Plane):
        world.add_geom(shape2)
    else:
        world.add_body(shape2, mass=1.0, position=pose2[0], quaternion=pose2[1])
    return world.collide()


I4 = (1.0, 0.0, 0.0, 0.0)


def about(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.r_[math.cos(angle / 2), math.sin(angle / 2) * a]


def test_sphere_pairs_in_closed_form():
    c = pair(E.Sphere(0.2), ((0, 0, 0.35), I4), E.Sphere(0.2), ((0, 0, 0), I4))
    assert c["contact_depth"] == pytest.approx([0.05]) and c["contact_normal"][0] == pytest.approx([0, 0, 1])
    c = pair(E.Sphere(0.1), ((0.25, 0, 0), I4), E.Box(0.4, 0.4, 0.4), ((0, 0, 0), I4))
    assert c["contact_depth"] == pytest.approx([0.05]) and c["contact_normal"][0] == pytest.approx([1, 0, 0])
    c = pair(E.Sphere(0.1), ((0.15, 0.02, 0.0), I4), E.Box(0.4, 0.4, 0.4), ((0, 0, 0), I4))   # centre inside
    assert c["contact_depth"] == pytest.approx([0.15]) and c["contact_normal"][0] == pytest.approx([1, 0, 0])
    c = pair(E.Sphere(0.1), ((0, 0.15, 0.1), I4), E.Capsule(0.1, 0.4), ((0, 0, 0), I4))     # capsule along z
    assert c["contact_depth"] == pytest.approx([0.05]) and c["contact_normal"][0] == pytest.approx([0, 1, 0])
    c = pair(E.Sphere(0.1), ((0.15, 0, 0), I4), E.Cylinder(0.1, 0.4), ((0, 0, 0), I4))
    assert c["contact_depth"] == pytest.approx([0.05]) and c["contact_normal"][0] == pytest.approx([1, 0, 0])
    c = pair(E.Sphere(0.1), ((0, 0, 0.28), I4), E.Cylinder(0.1, 0.4), ((0, 0, 0), I4))      # over the cap
    assert c["contact_depth"] == pytest.approx([0.02]) and c["contact_normal"][0] == pytest.approx([0, 0, 1])
    c = pair(E.Sphere(0.1), ((0, 0, 0.07), I4), E.Plane((0, 0, 1), 0.0), None)
    assert c["contact_depth"] == pytest.approx([0.03]) and c["contact_position"][0] == pytest.approx([0, 0, -0.015])


def test_plane_pairs_give_enough_points_to_rest():
    c = pair(E.Box(0.4, 0.3, 0.2), ((0, 0, 0.09), I4), E.Plane((0, 0, 1), 0.0), None)
    assert len(c["contact_depth"]) == 4 and c["contact_depth"] == pytest.approx([0.01] * 4)
    c = pair(E.Capsule(0.1, 0.4), ((0, 0, 0.09), about((1, 0, 0), math.pi / 2)), E.Plane((0, 0, 1), 0.0), None)
    assert len(c["contact_depth"]) == 2 and c["contact_depth"] == pytest.approx([0.01] * 2)
    c = pair(E.Cylinder(0.1, 0.4), ((0, 0, 0.19), I4), E.Plane((0, 0, 1), 0.0), None)        # standing
    assert len(c["contact_depth"]) >= 3 and c["contact_depth"] == pytest.approx([0.01] * len(c["contact_depth"]))
    c = pair(E.Cylinder(0.1, 0.4), ((0, 0, 0.09), about((1, 0, 0), math.pi / 2)), E.Plane((0, 0, 1), 0.0), None)
    assert len(c["contact_depth"]) == 2 and c["contact_depth"] == pytest.approx([0.01] * 2)   # lying: a line
    for n in c["contact_normal"]:
        assert n == pytest.approx([0, 0, 1])


def test_box_box_face_contact_is_a_clipped_polygon():
    c = pair(E.Box(0.2, 0.2, 0.2), ((0, 0, 0.19), I4), E.Box(1.0, 1.0, 0.2), ((0, 0, 0), I4))
    assert len(c["contact_depth"]) == 4 and c["contact_depth"] == pytest.approx([0.01] * 4)
    assert np.all(c["contact_normal"] == pytest.approx(np.tile([0, 0, 1.0], (4, 1))))
    # equal boxes, the top one turned 45°: the contact is the octagon where the squares overlap
    c = pair(E.Box(0.4, 0.4, 0.2), ((0, 0, 0.19), about((0, 0, 1), math.pi / 4)), E.Box(0.4, 0.4, 0.2), ((0, 0, 0), I4))
    assert len(c["contact_depth"]) == 8 and c["contact_depth"] == pytest.approx([0.01] * 8)
    r = np.linalg.norm(c["contact_position"][:, :2], axis=1)
    assert r.min() >= 0.2 - 1e-9 and r.max() <= 0.2 * math.sqrt(2) + 1e-9


def test_capsule_pairs():
    # crossed capsules: one point
    c = pair(E.Capsule(0.1, 0.4), ((0, 0, 0.18), about((0, 1, 0), math.pi / 2)), E.Capsule(0.1, 0.4),
             ((0, 0, 0), about((1, 0, 0), math.pi / 2)))
    assert c["contact_depth"] == pytest.approx([0.02]) and c["contact_normal"][0] == pytest.approx([0, 0, 1])
    # parallel capsules side by side: a line (two points)
    c = pair(E.Capsule(0.1, 0.4), ((0.18, 0, 0), I4), E.Capsule(0.1, 0.4), ((0, 0, 0), I4))
    assert len(c["contact_depth"]) >= 2 and c["contact_depth"] == pytest.approx([0.02] * len(c["contact_depth"]))
    # capsule lying on a box: its two ends
    c = pair(E.Capsule(0.1, 0.4), ((0, 0, 0.19), about((0, 1, 0), math.pi / 2)), E.Box(1.0, 1.0, 0.2), ((0, 0, 0), I4))
    assert len(c["contact_depth"]) == 2 and c["contact_depth"] == pytest.approx([0.01, 0.01])
    assert c["contact_normal"] == pytest.approx(np.tile([0, 0, 1.0], (2, 1)))


def coal_shape(shape):
    if isinstance(shape, E.Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, E.Box):
        return coal.Box(shape.lx, shape.ly, shape.lz)
    if isinstance(shape, E.Capsule):
        return coal.Capsule(shape.radius, shape.length)
    return coal.Cylinder(shape.radius, shape.length)


def coal_tf(p, q):
    T = coal.Transform3s()
    T.setTranslation(np.asarray(p, float))
    T.setRotation(quat_to_matrix(q))
    return T


def coal_depth(s1, pose1, s2, pose2):
    req = coal.CollisionRequest()
    req.enable_contact = True
    res = coal.CollisionResult()
    if not coal.collide(coal_shape(s1), coal_tf(*pose1), coal_shape(s2), coal_tf(*pose2), req, res):
        return None
    return -res.getContact(0).penetration_depth          # coal 3: negative inside


NAMES = sorted(SHAPES)


def shallow_pose(s1, q1, s2, q2, direction, depth):
    """Place shape 1 along `direction` from shape 2 so that coal finds it just touching, then
    push it in by `depth` (a contact as a step meets it)."""
    lo, hi = 0.0, 2.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if coal_depth(s1, (direction * mid, q1), s2, (np.zeros(3), q2)) is None:
            hi = mid
        else:
            lo = mid
    return direction * (hi - depth)


@pytest.mark.parametrize("name1, name2", [(a, b) for i, a in enumerate(NAMES) for b in NAMES[i:]])
def test_every_pair_agrees_with_coal_on_shallow_contacts(name1, name2):
    rng = np.random.default_rng(sum(map(ord, name1 + name2)))
    s1, s2 = SHAPES[name1](), SHAPES[name2]()
    worst = 0.0
    for _ in range(40):
        q1, q2, d = rng.normal(size=4), rng.normal(size=4), rng.normal(size=3)
        q1, q2, d = q1 / np.linalg.norm(q1), q2 / np.linalg.norm(q2), d / np.linalg.norm(d)
        p1 = shallow_pose(s1, q1, s2, q2, d, 0.005)
        ref = coal_depth(s1, (p1, q1), s2, (np.zeros(3), q2))
        c = pair(s1, (p1, q1), s2, (np.zeros(3), q2))
        assert ref is not None and len(c["contact_depth"]), (name1, name2, p1, q1, q2)
        mine = c["contact_depth"].max()
        worst = max(worst, abs(mine - ref))
        # pushing geom 1 out along the deepest contact's normal by that depth separates the pair
        k = int(np.argmax(c["contact_depth"]))
        moved = coal_depth(s1, (p1 + c["contact_normal"][k] * (c["contact_depth"][k] + 1e-4), q1), s2, (np.zeros(3), q2))
        assert moved is None or moved < 2e-4, (name1, name2, p1, q1, q2, moved)
        # and a separated pair has no contact
        far = pair(s1, (p1 + d * 0.01, q1), s2, (np.zeros(3), q2))
        assert len(far["contact_depth"]) == 0 or far["contact_depth"].max() < 1e-9
    # closed forms agree to rounding; SAT box-box and the portal (MPR) pairs to a fraction of a millimetre
    exact = {name1, name2} <= {"sphere", "box"} and {name1, name2} != {"box"}
    assert worst < (1e-9 if exact else 5e-4), worst


def test_sweep_and_prune_finds_what_all_pairs_find():
    rng = np.random.default_rng(7)
    world = E.World()
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    makers = list(SHAPES.values())
    for i in range(60):
        q = rng.normal(size=4)
        world.add_body(makers[i % 4](), mass=1.0, position=rng.uniform([-1, -1, 0], [1, 1, 1.2]), quaternion=q / np.linalg.norm(q))
    sap = world.collide()
    world._wpar[C.WP_BROADPHASE] = 1
    brute = world.collide()
    key = lambda c: sorted(map(tuple, np.round(np.c_[c["contact_ids"], c["contact_position"]], 12)))  # noqa: E731
    assert len(sap["contact_depth"]) > 20
    assert key(sap) == key(brute)


def test_jointed_bodies_do_not_collide():
    world = E.World()
    a = world.add_body(E.Box(0.4, 0.2, 0.2), mass=1.0, position=(0, 0, 1))
    b = world.add_body(E.Box(0.4, 0.2, 0.2), mass=1.0, position=(0.35, 0, 1))
    assert len(world.collide()["contact_depth"]) > 0
    world.add_hinge(b, a, anchor=(0.2, 0, 1), axis=(0, 1, 0))
    assert len(world.collide()["contact_depth"]) == 0


def test_each_colliders_point_bound_holds_on_random_poses():
    """A candidate pair of the model's geoms gets a contact slot per point its collider can report
    (``mb_collide_max_points``, read through ``_core.scene_pair_slots``: a sphere's or an ellipsoid's pairs 1, a
    capsule on a plane 2, on a box 3, on a capsule 4), so a collider that reported more would lose points.  The
    engine's world asks every pair for up to 8: over random overlaps, deep and shallow, and the poses that make
    the most points (capsules side by side, a capsule lying on a box and on a plane), no bounded pair exceeds its
    bound, and each bound is met somewhere."""
    from multibody.core import _core
    shapes = {"sphere": E.Sphere(0.15), "box": E.Box(0.4, 0.3, 0.2), "capsule": E.Capsule(0.1, 0.4),
              "cylinder": E.Cylinder(0.12, 0.35), "ellipsoid": E.Ellipsoid(0.2, 0.12, 0.08)}
    rng = np.random.default_rng(7)
    lying = about((0, 1, 0), math.pi / 2)                     # a capsule's axis along x
    special = [((0.0, 0.19, 0.0), I4), ((0.0, 0.0, 0.19), lying), ((0.0, 0.0, 0.24), lying)]
    names = list(shapes) + ["plane"]
    for i, a in enumerate(names[:-1]):
        for b in names[i:]:
            codes = [shapes[a].code, E.Plane().code if b == "plane" else shapes[b].code]
            gint = np.array([[codes[0], 0, -1], [codes[1], 1, -1]], np.int64)
            bound = int(_core.scene_pair_slots(gint, np.array([[0, 1]], np.int64))[0])
            if bound == 8:      # (no bound: the collider reports as many as asked, 8 in a scene)
                continue
            first = (a, (lying if a == "capsule" else I4))
            most = 0
            poses = [(tuple(rng.uniform(-0.3, 0.3, 3)), tuple(about(rng.standard_normal(3), rng.uniform(0, 6.3))))
                     for _ in range(150)] + special
            for pose in poses:
                if b == "plane":
                    c = pair(shapes[a], ((0.0, 0.0, pose[0][2] * 0.5), pose[1]), E.Plane((0, 0, 1), 0.0), None)
                else:
                    c = pair(shapes[a], ((0.0, 0.0, 0.0), first[1]), shapes[b], pose)
                most = max(most, len(c["contact_depth"]))
            assert most == bound, (a, b, most, bound)      # never more, and the bound is no looser than it needs


def test_scene_pair_slots_names_a_bad_pair():
    from multibody.core import _core
    gint = np.array([[0, 0, -1], [4, -1, -1]], np.int64)              # a sphere on a body, a static plane
    assert _core.scene_pair_slots(gint, np.array([[0, 1]], np.int64)).tolist() == [1]
    with pytest.raises(ValueError, match=r"pair 0 names geom 5; expected 0\.\.1"):
        _core.scene_pair_slots(gint, np.array([[0, 5]], np.int64))
    with pytest.raises(ValueError, match=r"pair 0's shapes \(codes 4, 4\) have no collider"):
        _core.scene_pair_slots(np.array([[4, -1, -1], [4, -1, -1]], np.int64), np.array([[0, 1]], np.int64))


def test_a_scene_is_kept_between_calls_only_while_its_arrays_cannot_change():
    """py_scene.c keeps the last scene it parsed (hulls and slots) for the next call whose five arrays
    are the same read-only objects (Geoms.packed's): a run's compiled steps around its events parsed
    tiago_dual's meshes once a step.  A writable array is parsed on every call, so a change to it is
    seen; a kept scene is still checked against each call's model (a body it names must exist)."""
    import multibody as mb
    from multibody.core import _core
    xml = ('<mujoco><worldbody><geom type="plane" size="2 2 .1"/><body pos="0 0 0.1"><freejoint/>'
           '<geom type="box" size="0.1 0.1 0.1"/></body></worldbody></mujoco>')
    model = mb.load_mjcf(xml)
    q = model.q_default.copy()
    packed = model.geoms.packed
    assert not any(a.flags.writeable for a in packed)
    first = _core.scene_contacts(model._c, q, *packed)[3]
    assert len(first) == 4 and np.allclose(first, 0.0, atol=1e-12)      # the box's corners on the floor
    assert np.array_equal(_core.scene_contacts(model._c, q, *packed)[3], first)   # the kept scene: the same
    gdat = packed[1].copy()                                             # writable: read every call
    arrays = (packed[0], gdat, *packed[2:])
    gdat[1, 11] += 0.05                                                 # the box 5 cm lower in its body
    assert np.allclose(_core.scene_contacts(model._c, q, *arrays)[3], 0.05)
    gdat[1, 11] -= 0.02
    assert np.allclose(_core.scene_contacts(model._c, q, *arrays)[3], 0.03)
    _core.scene_contacts(model._c, q, *packed)                          # kept again; then a model with
    world = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="2 2 .1"/></worldbody></mujoco>')   # no body
    with pytest.raises(ValueError, match=r"geom 1: body 0; expected -1 \(static\) or 0\.\.-1"):
        _core.scene_contacts(world._c, world.q_default, *packed)
