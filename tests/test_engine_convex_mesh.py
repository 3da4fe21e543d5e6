"""Convex hulls against static triangle meshes (issue 20, item 3; convex.c's triangle hook): a
convex box on a flat mesh of many triangles rests, lands and slides across the triangles' edges as
on the plane they lie in, a hull on a sloped mesh sticks or slides as on the inclined plane with
the same friction, and the contacts over many triangles form one manifold of at most 4 points."""
import numpy as np
import pytest

from multibody.engine import Convex, Plane, TriangleMesh, World

CUBE = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * 0.1     # a 0.2 m box
ANGLES = np.array([0.0, 1.1, 2.3, 3.4, 4.9])                                       # an irregular pentagon
FRUSTUM = np.vstack([np.c_[0.15 * np.cos(ANGLES), 0.12 * np.sin(ANGLES), np.full(5, -0.05)],
                     np.c_[0.12 * np.cos(ANGLES), 0.096 * np.sin(ANGLES), np.full(5, 0.05)]])
SPACING = 0.07                               # grid cells smaller than the box: ~18 triangles under it


def flat_mesh(n=41, spacing=SPACING):
    return TriangleMesh.grid(np.zeros((n, n)), spacing, (-(n - 1) * spacing / 2, -(n - 1) * spacing / 2))


def trajectory(floor, shape, steps, mu=1.0, **body):
    w = World()
    w.add_geom(floor, mu=mu)
    b = w.add_body(shape, mass=1.0, mu=mu, **body)
    out, counts = np.empty((steps, 7)), np.empty(steps, int)
    for i in range(steps):
        w.step()
        out[i, :3], out[i, 3:] = b.position, b.quaternion
        counts[i] = len(w.last_step.contact_depth)
    return out, counts, w


YAW = (np.cos(0.2), 0, 0, np.sin(0.2))


def test_the_example_of_the_issue_no_longer_falls_through():
    w = World()
    w.add_geom(TriangleMesh.grid(np.zeros((5, 5)), 1.0, (-2, -2)))
    b = w.add_body(Convex(CUBE), mass=1.0, position=(0, 0, 0.3))
    w.run(300)
    assert b.position[2] == pytest.approx(0.1, abs=2e-4)


@pytest.mark.parametrize("scale", [1, 5], ids=["0.2m", "1m"])
def test_a_convex_box_rests_on_a_flat_mesh_as_on_the_plane(scale):
    # 0.2 m: about 18 triangles under the box; 1 m: about 400, whose points overflow the mesh's
    # contact buffer (64) and are thinned to their outline on the way
    mesh, box = flat_mesh(61), Convex(CUBE * scale)
    kw = dict(position=(0.013, 0.021, 0.1 * scale + 0.05), quaternion=YAW)
    on_plane, _, _ = trajectory(Plane((0, 0, 1), 0.0), box, 2000, **kw)
    on_mesh, counts, w = trajectory(mesh, box, 2000, **kw)
    centroids = mesh.vertices[mesh.triangles].mean(axis=1)
    under = np.abs(centroids[:, :2] - on_mesh[-1, :2]).max(axis=1) < 0.1 * scale
    assert under.sum() >= 12 * scale ** 2                                  # the box spans many triangles
    # the same fall, landing and 2 s of rest: the mesh gives the plane's 4 corners
    np.testing.assert_allclose(on_mesh, on_plane, atol=1e-8)
    assert on_mesh[-1, 2] == pytest.approx(0.1 * scale, abs=2e-4)          # within the surface layer
    assert np.abs(on_mesh[500:, :2] - on_mesh[-1, :2]).max() < 1e-9       # no drift at rest
    assert counts.max() == 4 and counts[-1] == 4                           # one manifold across triangles
    c = w.collide()                          # geom 1 is the mesh (index 0): normals point into it
    assert (c["contact_ids"][:, 0] == 0).all()
    np.testing.assert_allclose(c["contact_normal"], np.tile([0, 0, -1.0], (4, 1)))
    corners = (on_mesh[-1, :3] + scale * CUBE @ _matrix(on_mesh[-1, 3:]).T)[:, :2]
    bottom = corners[CUBE[:, 2] < 0]
    # the 4 contacts sit under the 4 bottom corners, as on the plane
    assert np.abs(np.sort(c["contact_position"][:, 0]) - np.sort(bottom[:, 0])).max() < 1e-6


@pytest.mark.parametrize("velocity, mu, scale", [((1.0, 0.3, 0.0), 0.3, 1), ((2.0, -0.7, 0.0), 0.3, 1),
                                                 ((1.0, 0.3, 0.0), 1.0, 1), ((1.0, 0.3, 0.0), 0.3, 5)],
                         ids=["slow", "fast", "tipping", "1m"])
def test_a_convex_box_slides_across_triangle_edges_as_on_the_plane(velocity, mu, scale):
    kw = dict(position=(0.013, 0.021, 0.1 * scale + 0.05), quaternion=YAW, velocity=velocity)
    on_plane, _, _ = trajectory(Plane((0, 0, 1), 0.0), Convex(CUBE * scale), 1500, mu=mu, **kw)
    on_mesh, counts, _ = trajectory(flat_mesh(61), Convex(CUBE * scale), 1500, mu=mu, **kw)
    assert np.linalg.norm(on_mesh[-1, :2] - on_mesh[0, :2]) > SPACING      # over triangle edges
    assert counts.max() <= 4
    # Tolerance: where the mesh gives the plane's contacts the paths differ by rounding only (the
    # triangles' planes come from grid points: measured 5e-16 m over 1500 steps).  A contact the
    # plane has not got — a triangle edge's point, or a corner lost in the reduction — moves the
    # box by 5e-8 to 4e-3 m in one landing (measured while each triangle was reduced on its own),
    # and a snag at an edge stops it; 1e-9 m catches all of those.
    np.testing.assert_allclose(on_mesh, on_plane, atol=1e-9)


def _matrix(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


@pytest.mark.parametrize("mu", [0.5, 0.1], ids=["sticks", "slides"])
def test_a_hull_on_a_sloped_mesh_sticks_or_slides_as_on_the_inclined_plane(mu):
    theta, g, T = 0.2, 9.81, 1.0                                           # tan θ = 0.203
    n = np.array([np.sin(theta), 0, np.cos(theta)])
    down = np.array([np.cos(theta), 0, -np.sin(theta)])
    xs, ys = np.arange(-1.0, 4.01, 0.09), np.arange(-1.0, 1.01, 0.09)
    mesh = TriangleMesh.grid(np.tile(-np.tan(theta) * xs[:, None], (1, len(ys))), 0.09, (-1.0, -1.0))
    hull = Convex(FRUSTUM)
    # the hull on its pentagon base, turned onto the slope, the base 10 µm into it (within the
    # surface layer; exactly touching, rounding would decide how many corners touch first)
    on_slope = np.array([0.013, 0.021, -np.tan(theta) * 0.013])
    start = on_slope + (0.05 + hull.centroid[2] - 1e-5) * n
    kw = dict(position=start, quaternion=(np.cos(theta / 2), 0, np.sin(theta / 2), 0))
    steps = int(round(T / World().dt))
    on_plane, _, _ = trajectory(Plane(tuple(n), 0.0), hull, steps, mu=mu, **kw)
    on_mesh, counts, _ = trajectory(mesh, hull, steps, mu=mu, **kw)
    s = (on_mesh[-1, :3] - start) @ down
    if mu > np.tan(theta):
        assert abs(s) < 1e-9                                               # static friction holds it
    else:
        # sliding: s = ½ g (sin θ − μ cos θ) T²; semi-implicit Euler from rest moves n(n+1)/2 dt² a,
        # 1/n = 0.1 % more, and the base sits within the surface layer: 0.2 % covers both
        assert s == pytest.approx(0.5 * g * (np.sin(theta) - mu * np.cos(theta)) * T ** 2, rel=2e-3)
    assert abs((on_mesh[-1, :3] - start) @ n) < 2e-4                      # on the slope, not through it
    assert counts[-1] == 4
    # as on the plane: the triangles' normals come from grid points, 1e-16 off the plane's (measured
    # 1.5e-10 m after 1 s)
    np.testing.assert_allclose(on_mesh, on_plane, atol=1e-8)


def test_the_manifold_keeps_the_deepest_point_of_the_triangles_taken_one_by_one():
    rng = np.random.default_rng(5)
    heights = 0.1 * rng.normal(size=(41, 41))                  # 3200 triangles, bumpy
    mesh = TriangleMesh.grid(heights, 0.2, (-4, -4))
    V, T = mesh.vertices, mesh.triangles
    centroids = V[T].mean(axis=1)
    hull = Convex(rng.normal(size=(30, 3)) * [0.3, 0.2, 0.15])
    found = 0
    for _ in range(20):
        xy = rng.uniform(-2.5, 2.5, 2)
        near = np.nonzero(np.linalg.norm(centroids[:, :2] - xy, axis=1) < 1.5)[0]
        q = rng.normal(size=4)
        kw = dict(position=(*xy, V[T[near]][..., 2].mean() + 0.1), quaternion=q / np.linalg.norm(q))
        one = World(gravity=(0, 0, 0))
        one.add_geom(mesh)
        one.add_body(hull, mass=1.0, **kw)
        each = World(gravity=(0, 0, 0))                        # the nearby triangles as one-triangle meshes
        for t in near:
            each.add_geom(TriangleMesh(V[T[t]], [[0, 1, 2]]))
        each.add_body(hull, mass=1.0, **kw)
        a, b = one.collide(), each.collide()
        assert (len(a["contact_depth"]) == 0) == (len(b["contact_depth"]) == 0)
        assert len(a["contact_depth"]) <= 4
        if len(a["contact_depth"]):
            found += 1
            assert a["contact_depth"].max() == pytest.approx(b["contact_depth"].max(), abs=1e-9)
            assert np.isfinite(a["contact_position"]).all()
            np.testing.assert_allclose(np.linalg.norm(a["contact_normal"], axis=1), 1.0)
    assert found >= 5


def test_a_hull_near_a_triangle_but_apart_or_behind_it_is_not_touched():
    w = World(gravity=(0, 0, 0))
    w.add_geom(TriangleMesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [[0, 1, 2]]))
    b = w.add_body(Convex(CUBE), mass=1.0)
    # beside the slanted edge x + y = 1 with a vertical edge pointing at it, 1 mm short of it (the
    # bounding boxes overlap), then 1 mm over it
    gap = 1e-3
    b.position = np.array([0.5, 0.5, 0.05]) + (0.1 * np.sqrt(2) + gap) * np.array([1, 1, 0]) / np.sqrt(2)
    assert len(w.collide()["contact_depth"]) == 0
    b.position = np.array([0.5, 0.5, 0.05]) + (0.1 * np.sqrt(2) - gap) * np.array([1, 1, 0]) / np.sqrt(2)
    c = w.collide()
    assert len(c["contact_depth"]) >= 1                         # the corner over the triangle
    np.testing.assert_allclose(c["contact_normal"], np.tile([0, 0, -1.0], (len(c["contact_depth"]), 1)))
    b.position = (0.3, 0.3, -0.02)                              # centre behind the triangle: not pushed through
    assert len(w.collide()["contact_depth"]) == 0
    # a thin rod poking under the edge y = 0 from beside the triangle: its lower end is below the
    # plane over the triangle, but it crosses the plane 1 cm outside; the separating-axis test
    # keeps the terrain rule (push what is under a triangle up) from lifting it
    lower, upper = np.array([0.5, 0.02, -0.03]), np.array([0.5, -0.28, 0.27])
    u, v = np.array([1.0, 0, 0]), np.array([0, 1.0, 1.0]) / np.sqrt(2)     # across the rod's axis
    square = [0.005 * (a * u + b * v) for a in (-1, 1) for b in (-1, 1)]
    rod = Convex(np.vstack([lower + square, upper + square]))
    w = World(gravity=(0, 0, 0))
    w.add_geom(TriangleMesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [[0, 1, 2]]))
    w.add_body(rod, mass=1.0, position=rod.centroid)
    assert len(w.collide()["contact_depth"]) == 0
    w.bodies[0].position = rod.centroid + [0, 0.02, 0]          # 1 cm inside: it touches
    assert len(w.collide()["contact_depth"]) >= 1


def test_hulls_dropped_on_a_bumpy_mesh_settle_on_it():
    rng = np.random.default_rng(7)
    heights = 0.05 * rng.normal(size=(21, 21))
    mesh = TriangleMesh.grid(heights, 0.2, (-2, -2))
    w = World()
    w.add_geom(mesh)
    bodies = []
    for k in range(6):
        pts = rng.normal(size=(20, 3)) * rng.uniform(0.05, 0.15, 3)
        q = rng.normal(size=4)
        bodies.append(w.add_body(Convex(pts), mass=1.0, position=(*rng.uniform(-1.2, 1.2, 2), 0.5 + 0.3 * k),
                                 quaternion=q / np.linalg.norm(q)))
    w.run(5000)                                                     # the last stops rocking at 4.5 s
    v = np.array([b.velocity for b in bodies])
    z = np.array([b.position[2] for b in bodies])
    assert np.isfinite(v).all() and np.abs(v).max() < 1e-3         # at rest
    assert (z > heights.min()).all()                                 # on the mesh, none fell through
    c = w.collide()
    assert np.isfinite(c["contact_normal"]).all() and c["contact_depth"].max() < 1e-3
    on_mesh = c["contact_ids"][:, 0] == 0
    assert set(c["contact_ids"][on_mesh, 3]) == set(range(len(bodies)))   # each rests on the mesh
    assert max(np.sum(c["contact_ids"][on_mesh, 3] == b) for b in range(len(bodies))) <= 4
