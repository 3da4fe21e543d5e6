"""Rays (World.ray_cast, c/ray.c): closed forms per shape against a brute-force numpy reference
(march along the ray with an inside test, then bisect), rays starting inside (the exit, normal
negated, as ODE), parallel and grazing rays, convex polytopes by slab clipping, and a world of
thousands of geoms."""
import numpy as np
import pytest

from multibody import engine
from multibody.engine import Box, Capsule, Cylinder, Plane, Sphere, TriangleMesh, World
from multibody.engine import _engine as C


def rot(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def quat_of(R):
    from multibody.engine.world import matrix_to_quat
    return matrix_to_quat(R)


# ---- inside tests in the shape's own frame (the reference) ------------------------------------
def inside(shape, x):
    if isinstance(shape, Sphere):
        return np.linalg.norm(x, axis=-1) <= shape.radius
    if isinstance(shape, Box):
        return np.all(np.abs(x) <= 0.5 * np.array(shape.size), axis=-1)
    if isinstance(shape, Capsule):
        z = np.clip(x[..., 2], -shape.length / 2, shape.length / 2)
        return np.linalg.norm(x - np.stack([0 * z, 0 * z, z], -1), axis=-1) <= shape.radius
    if isinstance(shape, Cylinder):
        return (np.hypot(x[..., 0], x[..., 1]) <= shape.radius) & (np.abs(x[..., 2]) <= shape.length / 2)
    raise TypeError(shape)


def reference(shape, R, p, o, d, tmax=10.0, step=1e-3):
    """First change of the inside test along the ray (entry from outside, exit from inside)."""
    ts = np.arange(0.0, tmax + step, step)
    x = (o + ts[:, None] * d - p) @ R
    ins = inside(shape, x)
    start = ins[0]
    change = np.nonzero(ins != start)[0]
    if len(change) == 0:
        return None
    lo, hi = ts[change[0] - 1], ts[change[0]]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if inside(shape, (o + mid * d - p) @ R) == start:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi), bool(start)


SHAPES = [Sphere(0.7), Box(1.2, 0.5, 0.8), Capsule(0.3, 1.0), Cylinder(0.4, 0.9)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: type(s).__name__)
def test_random_rays_match_brute_force(shape):
    rng = np.random.default_rng(1)
    w = World()
    R = rot(rng.normal(size=3), 0.9)
    p = np.array([0.3, -0.2, 0.5])
    g = w.add_geom(shape, position=p, quaternion=quat_of(R))
    both = 0
    for k in range(150):
        if k % 3 == 0:      # from inside
            o = p + R @ (rng.uniform(-0.3, 0.3, 3) * 0.5)
        else:
            o = p + rng.normal(size=3) * 2.5
        aim = p + rng.normal(size=3) * (0.3 if k % 2 else 1.0)
        d = (aim - o) / np.linalg.norm(aim - o)
        hit = w.ray_cast(o, d, 10.0)
        ref = reference(shape, R, p, o, d)
        if ref is None or hit is None:
            # a chord shorter than the march's step can be missed by the reference only
            if hit is not None:
                xs = [(o + (hit.distance + s) * d - p) @ R for s in (-2e-3, 2e-3)]
                assert not any(inside(shape, x) for x in xs), "a hit the reference must have seen"
            assert ref is None or hit is not None, f"ray {k}: missed a chord the reference found"
            continue
        both += 1
        t_ref, started_inside = ref
        assert hit.distance == pytest.approx(t_ref, abs=1e-9)
        assert hit.geom is g and hit.body is None
        np.testing.assert_allclose(hit.point, o + t_ref * d, atol=1e-9)
        assert np.linalg.norm(hit.normal) == pytest.approx(1.0)
        assert hit.normal @ d <= 1e-12                       # faces back along the ray
        # the surface's normal: outward at an entry, negated (pointing back inside) at an exit
        probe = (hit.point + 1e-6 * hit.normal - p) @ R
        assert inside(shape, probe) == started_inside
    assert both > 60


def test_sphere_closed_form_and_inside_start_gives_the_exit():
    w = World()
    w.add_geom(Sphere(1.0), position=(0, 0, 0))
    h = w.ray_cast((-3, 0.6, 0), (1, 0, 0))
    assert h.distance == pytest.approx(3 - 0.8)
    np.testing.assert_allclose(h.normal, [-0.8, 0.6, 0], atol=1e-15)
    h = w.ray_cast((0, 0, 0), (0, 0, 1))                   # inside: the exit at 1, normal inward
    assert h.distance == pytest.approx(1.0)
    np.testing.assert_allclose(h.normal, [0, 0, -1])
    assert w.ray_cast((0, 0, 2), (0, 0, 1)) is None         # pointing away
    assert w.ray_cast((-3, 0, 0), (1, 0, 0), max_distance=1.9) is None
    assert w.ray_cast((-3, 0, 0), (1, 0, 0), max_distance=2.0).distance == pytest.approx(2.0)


def test_box_parallel_and_grazing_rays():
    w = World()
    w.add_geom(Box(2, 2, 2))
    # parallel to the z faces, inside the slab: enters the x face
    h = w.ray_cast((-5, 0.3, 0.9), (1, 0, 0))
    assert h.distance == pytest.approx(4.0) and h.normal.tolist() == [-1, 0, 0]
    # grazing: along the top face exactly (touching counts: closed intervals)
    h = w.ray_cast((-5, 0.3, 1.0), (1, 0, 0))
    assert h is not None and h.distance == pytest.approx(4.0)
    assert w.ray_cast((-5, 0.3, 1.0 + 1e-9), (1, 0, 0)) is None
    # through an edge diagonal, and a ray touching only a corner
    h = w.ray_cast((-2, -2, 0), np.array([1, 1, 0]) / np.sqrt(2))
    assert h.distance == pytest.approx(np.sqrt(2))
    h = w.ray_cast((-2, -2, -2), (1, 1, 1))
    assert h.distance == pytest.approx(np.sqrt(3))
    # from inside: exit face, normal negated
    h = w.ray_cast((0.5, 0, 0), (0, 1, 0))
    assert h.distance == pytest.approx(1.0) and h.normal.tolist() == [0, -1, 0]


def test_capsule_and_cylinder_along_their_axis():
    w = World()
    cap = w.add_geom(Capsule(0.5, 2.0), position=(0, 0, 0))
    h = w.ray_cast((0, 0, 5), (0, 0, -1))
    assert h.geom is cap and h.distance == pytest.approx(5 - 1.5) and h.normal.tolist() == [0, 0, 1]
    w2 = World()
    w2.add_geom(Cylinder(0.5, 2.0))
    assert w2.ray_cast((0, 0, 5), (0, 0, -1)).distance == pytest.approx(4.0)
    assert w2.ray_cast((0.5, 0, 5), (0, 0, -1)).distance == pytest.approx(4.0)      # rim: touching
    assert w2.ray_cast((0.5 + 1e-9, 0, 5), (0, 0, -1)) is None                       # parallel outside
    h = w2.ray_cast((0, 0, 0), (0, 0, 1))                                              # inside: cap exit
    assert h.distance == pytest.approx(1.0) and h.normal.tolist() == [0, 0, -1]


def test_plane_is_a_surface_from_both_sides():
    w = World()
    w.add_geom(Plane((0, 0, 1), 1.0))
    h = w.ray_cast((0, 0, 3), (0, 0.6, -0.8))
    assert h.distance == pytest.approx(2 / 0.8) and h.normal.tolist() == [0, 0, 1]
    h = w.ray_cast((0, 0, -1), (0, 0, 1))                  # from below: normal faces the ray
    assert h.distance == pytest.approx(2.0) and h.normal.tolist() == [0, 0, -1]
    assert w.ray_cast((0, 0, 3), (1, 0, 0)) is None          # parallel


def box_planes(size, R=np.eye(3), p=np.zeros(3)):
    h = 0.5 * np.asarray(size, float)
    rows = []
    for k in range(3):
        for s in (1, -1):
            n = s * R[:, k]
            rows.append([*n, n @ p + h[k]])
    return np.array(rows)


def test_convex_slab_clipping_matches_the_box():
    rng = np.random.default_rng(3)
    size = np.array([1.0, 0.6, 1.4])
    R = rot([1, 2, 3], 0.7)
    p = np.array([0.2, 0.1, -0.3])
    w = World()
    w.add_geom(Box(*size), position=p, quaternion=quat_of(R))
    planes = box_planes(size, R, p)
    hits = 0
    for k in range(300):
        o = p + rng.normal(size=3) * (0.2 if k % 4 == 0 else 2.0)
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        a = w.ray_cast(o, d, 50.0)
        b = C.ray_convex(planes, o, d, 50.0)
        assert (a is None) == (b is None)
        if a is not None:
            hits += 1
            assert b[0] == pytest.approx(a.distance, abs=1e-12)
            np.testing.assert_allclose(b[1], a.normal, atol=1e-12)
    assert hits > 50
    # parallel to two faces and outside one of them: a miss; an unbounded set: no hit
    assert C.ray_convex(planes[:0], np.zeros(3), np.array([1.0, 0, 0]), 10.0) is None
    assert C.ray_convex(box_planes([1, 1, 1]), np.array([0, 0.6, 0]), np.array([1.0, 0, 0]), 10.0) is None


def test_triangle_mesh_rays_match_brute_force():
    rng = np.random.default_rng(5)
    n = 40
    z = 0.3 * rng.normal(size=(n, n))
    mesh = TriangleMesh.grid(z, spacing=0.25, origin=(-5, -5))
    w = World()
    g = w.add_geom(mesh)
    V, T = mesh.vertices, mesh.triangles
    A, B, Cc = V[T[:, 0]], V[T[:, 1]], V[T[:, 2]]

    def brute(o, d):          # every triangle, Moller-Trumbore in numpy
        e1, e2 = B - A, Cc - A
        pv = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, pv)
        ok = np.abs(det) > 1e-300
        s = o - A
        u = np.einsum("ij,ij->i", s, pv) / np.where(ok, det, 1)
        q = np.cross(s, e1)
        v = q @ d / np.where(ok, det, 1)
        t = np.einsum("ij,ij->i", e2, q) / np.where(ok, det, 1)
        good = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
        return t[good].min() if good.any() else None

    checked = 0
    for _ in range(200):
        o = np.array([rng.uniform(-4, 4), rng.uniform(-4, 4), rng.uniform(1.5, 3)])
        d = np.array([rng.normal(), rng.normal(), -abs(rng.normal()) - 0.2])
        d /= np.linalg.norm(d)
        h = w.ray_cast(o, d)
        ref = brute(o, d)
        assert (h is None) == (ref is None)
        if h is not None:
            checked += 1
            assert h.geom is g and h.distance == pytest.approx(ref, abs=1e-12)
            assert h.normal @ d < 0
    assert checked > 100
    # from below the terrain the normal still faces the ray
    h = w.ray_cast((0, 0, -5), (0, 0, 1))
    assert h is not None and h.normal[2] < 0


def test_nearest_and_all_hits_through_a_row_of_shapes():
    w = World(gravity=(0, 0, 0))
    bodies = [w.add_body(Sphere(0.25), mass=1.0, position=(x, 0, 0)) for x in (1.0, 2.0, 3.0)]
    w.add_geom(Box(0.5, 0.5, 0.5), bodies[1], position=(0, 0, 1))   # a second geom, offset on body 1
    hits = w.ray_cast((0, 0, 0), (1, 0, 0), all_hits=True)
    assert [h.body for h in hits] == bodies
    assert [h.distance for h in hits] == pytest.approx([0.75, 1.75, 2.75])
    assert w.ray_cast((0, 0, 0), (1, 0, 0)).body is bodies[0]
    h = w.ray_cast((2, 0, 5), (0, 0, -1))                              # the offset box on body 1
    assert h.body is bodies[1] and h.distance == pytest.approx(5 - 1.25)
    bodies[1].position = (2.0, 3.0, 0.0)                              # rays see the current poses
    assert [h.body for h in w.ray_cast((0, 0, 0), (1, 0, 0), all_hits=True)] == [bodies[0], bodies[2]]


def test_thousands_of_geoms_in_one_call():
    rng = np.random.default_rng(7)
    w = World(gravity=(0, 0, 0))
    centres = rng.uniform(-20, 20, size=(3000, 3))
    radii = rng.uniform(0.1, 0.4, size=3000)
    for c, r in zip(centres, radii):
        w.add_geom(Sphere(float(r)), position=c)
    origins = rng.uniform(-25, 25, size=(200, 3))
    dirs = rng.normal(size=(200, 3))
    out = w.ray_cast_many(origins, dirs, 60.0)
    dirs = dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    for i in range(200):                      # brute force over every sphere
        q = origins[i] - centres
        b = q @ dirs[i]
        c = np.einsum("ij,ij->i", q, q) - radii ** 2
        disc = b * b - c
        t = np.where(disc >= 0, -b - np.sqrt(np.maximum(disc, 0)), np.inf)
        t = np.where((disc >= 0) & (t < 0), -b + np.sqrt(np.maximum(disc, 0)), t)
        t = np.where((t >= 0) & (t <= 60.0), t, np.inf)
        if np.isinf(t.min()):
            assert out["geom"][i] == -1 and np.isinf(out["distance"][i])
        else:
            assert out["geom"][i] == np.argmin(t) and out["distance"][i] == pytest.approx(t.min(), abs=1e-9)
    assert (out["geom"] >= 0).sum() > 10
    # one ray at a time (each geom's box tested) agrees with the batch (a hierarchy over the boxes)
    for i in range(60):
        h = w.ray_cast(origins[i], dirs[i], 60.0)
        assert (h is None) == (out["geom"][i] < 0)
        if h is not None:
            # the two normalise the direction differently (last bits), which a grazing chord magnifies
            assert h.geom.index == out["geom"][i] and h.distance == pytest.approx(out["distance"][i], abs=1e-9)
            np.testing.assert_allclose(h.normal, out["normal"][i], atol=1e-6)


def test_bad_rays():
    w = World()
    w.add_geom(Sphere(1.0))
    with pytest.raises(ValueError, match="direction"):
        w.ray_cast((0, 0, 0), (0, 0, 0))
    with pytest.raises(ValueError, match="origin"):
        w.ray_cast((0, np.nan, 0), (0, 0, 1))
    with pytest.raises(ValueError, match="max_distance"):
        w.ray_cast((0, 0, 0), (0, 0, 1), max_distance=-1)
    with pytest.raises(ValueError, match="directions"):
        w.ray_cast_many(np.zeros((2, 3)), np.zeros((3, 3)))
    assert World().ray_cast((0, 0, 0), (1, 0, 0)) is None
    assert engine.RayHit is not None
