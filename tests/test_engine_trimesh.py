"""Static triangle meshes (TriangleMesh, c/trimesh.c): a flat mesh of many triangles behaves
like the plane it lies in (boxes rest at the same height without drift, spheres and capsules
roll the same paths, no snagging on shared edges), a sphere on a sloped mesh rolls at 5/7 g sin θ,
and the hierarchy finds the same contacts as the triangles taken one by one."""
import numpy as np
import pytest

from multibody.engine import Box, Capsule, Plane, Sphere, TriangleMesh, World


def flat_mesh(n=41, spacing=0.25):
    return TriangleMesh.grid(np.zeros((n, n)), spacing, (-(n - 1) * spacing / 2, -(n - 1) * spacing / 2))


def trajectory(floor, shape, steps, **body):
    w = World()
    w.add_geom(floor)
    b = w.add_body(shape, mass=1.0, **body)
    out = np.empty((steps, 7))
    for i in range(steps):
        w.step()
        out[i, :3], out[i, 3:] = b.position, b.quaternion
    return out, w


def test_box_rests_on_a_flat_mesh_as_on_the_plane():
    kw = dict(position=(0.1, 0.05, 0.3), quaternion=(np.cos(0.2), 0, 0, np.sin(0.2)))
    on_plane, _ = trajectory(Plane((0, 0, 1), 0.0), Box(0.4, 0.3, 0.2), 2000, **kw)
    on_mesh, w = trajectory(flat_mesh(), Box(0.4, 0.3, 0.2), 2000, **kw)
    # the same fall, landing and rest (the mesh adds contacts where grid vertices lie under the box,
    # at the depth of the corners, which moves nothing)
    np.testing.assert_allclose(on_mesh, on_plane, atol=1e-8)
    assert on_mesh[-1, 2] == pytest.approx(0.1, abs=2e-4)                   # within the surface layer
    assert np.abs(on_mesh[1000:, :2] - on_mesh[-1, :2]).max() < 1e-9       # no drift at rest
    c = w.collide()                      # geom 1 is the mesh (index 0): normals point into it
    assert (c["contact_ids"][:, 0] == 0).all()
    np.testing.assert_allclose(c["contact_normal"], np.tile([0, 0, -1.0], (len(c["contact_normal"]), 1)))


@pytest.mark.parametrize("shape, q, z", [
    (Sphere(0.1), (1, 0, 0, 0), 0.1),
    (Capsule(0.1, 0.5), (np.sqrt(0.5), np.sqrt(0.5), 0, 0), 0.11),          # lying on its side
    (Capsule(0.1, 0.5), (np.cos(0.3), np.sin(0.3), 0, 0), 0.3),             # falls onto one end
], ids=["sphere", "capsule-lying", "capsule-tilted"])
def test_rolling_across_many_triangles_matches_the_plane(shape, q, z):
    kw = dict(position=(0.03, 0.02, z), quaternion=q, velocity=(1.0, 0.3, 0.0))
    on_plane, _ = trajectory(Plane((0, 0, 1), 0.0), shape, 2000, **kw)
    on_mesh, _ = trajectory(flat_mesh(), shape, 2000, **kw)
    assert np.linalg.norm(on_mesh[-1, :2] - on_mesh[0, :2]) > 0.5           # crossed several cells
    np.testing.assert_allclose(on_mesh, on_plane, atol=1e-9)


def test_a_sphere_on_a_shared_edge_or_vertex_has_one_contact_with_the_face_normal():
    w = World(gravity=(0, 0, 0))
    w.add_geom(flat_mesh())
    ball = w.add_body(Sphere(0.1), mass=1.0)
    for xy in [(0.125, 0.125), (0.0, 0.1), (0.0, 0.0), (0.25, 0.0), (0.1, 0.1 + 1e-13)]:  # diagonal, edges, vertices
        ball.position = (*xy, 0.0999)
        c = w.collide()
        assert len(c["contact_depth"]) == 1, xy
        np.testing.assert_allclose(c["contact_normal"][0], [0, 0, -1], atol=1e-12)   # into the mesh (geom 1)
        assert c["contact_depth"][0] == pytest.approx(1e-4, abs=1e-12)


def test_a_sphere_rolls_down_a_sloped_mesh_at_five_sevenths_g_sin_theta():
    theta, r, T, g = 0.2, 0.1, 1.0, 9.81
    n = np.array([np.sin(theta), 0, np.cos(theta)])
    xs = np.arange(-1.0, 4.01, 0.25)
    ys = np.arange(-1.0, 1.01, 0.25)
    heights = np.tile(-np.tan(theta) * xs[:, None], (1, len(ys)))
    mesh = TriangleMesh.grid(heights, 0.25, (-1.0, -1.0))
    start = np.array([0.0, 0.0, 0.0]) + r * n
    runs = {}
    for name, floor in [("mesh", mesh), ("plane", Plane(tuple(n), 0.0))]:
        w = World(gravity=(0, 0, -g))
        w.add_geom(floor)
        b = w.add_body(Sphere(r), mass=1.0, position=start)
        w.run(int(round(T / w.dt)))
        runs[name] = b.position - start
    down = np.array([np.cos(theta), 0, -np.sin(theta)])
    s = runs["mesh"] @ down
    # rolling without slip (friction 1 ≫ 2/7 tan θ = 0.058): s = ½ (5/7) g sin θ T².  Semi-implicit
    # Euler from rest moves a constant acceleration n(n+1)/2 dt² a, 1/n = 0.1 % more than the exact
    # value, and the contact holds the ball within the surface layer (1e-4 m): 0.2 % covers both.
    assert s == pytest.approx(0.5 * 5 / 7 * g * np.sin(theta) * T ** 2, rel=2e-3)
    assert abs(runs["mesh"] @ n) < 2e-4                                     # stays on the slope
    np.testing.assert_allclose(runs["mesh"], runs["plane"], atol=1e-7)      # and rolls as on the plane


def test_the_hierarchy_finds_the_contacts_of_the_triangles_taken_one_by_one():
    rng = np.random.default_rng(2)
    heights = 0.15 * rng.normal(size=(71, 71))                  # 9800 triangles, bumpy
    mesh = TriangleMesh.grid(heights, 0.2, (-7, -7))
    assert len(mesh.triangles) == 9800
    V, T = mesh.vertices, mesh.triangles
    centroids = V[T].mean(axis=1)
    for shape in (Sphere(0.25), Box(0.5, 0.3, 0.4), Capsule(0.15, 0.6)):
        for _ in range(12):
            xy = rng.uniform(-5, 5, 2)
            near = np.nonzero(np.linalg.norm(centroids[:, :2] - xy, axis=1) < 1.2)[0]
            z = V[T[near]][..., 2].max() + 0.1
            q = rng.normal(size=4)
            kw = dict(position=(*xy, z), quaternion=q / np.linalg.norm(q))
            one = World(gravity=(0, 0, 0))
            one.add_geom(mesh)
            one.add_body(shape, mass=1.0, **kw)
            each = World(gravity=(0, 0, 0))              # the nearby triangles as separate one-triangle meshes
            for t in near:
                each.add_geom(TriangleMesh(V[T[t]], [[0, 1, 2]]))
            each.add_body(shape, mass=1.0, **kw)
            a, b = one.collide(), each.collide()
            assert (len(a["contact_depth"]) == 0) == (len(b["contact_depth"]) == 0)
            if len(a["contact_depth"]):
                assert a["contact_depth"].max() == pytest.approx(b["contact_depth"].max(), abs=1e-12)
                assert np.all(np.einsum("ij,ij->i", a["contact_normal"], a["contact_normal"]) == pytest.approx(1.0))


def test_meshes_from_files_and_posed_meshes(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    path = tmp_path / "floor.obj"
    trimesh.Trimesh(flat_mesh(5, 1.0).vertices, flat_mesh(5, 1.0).triangles).export(path)
    mesh = TriangleMesh.from_file(path)
    assert len(mesh.triangles) == 32
    w = World()
    w.add_geom(mesh, position=(0, 0, 0.5), quaternion=(np.cos(0.25), np.sin(0.25), 0, 0))   # tilted, raised
    hit = w.ray_cast((0, 0, 3), (0, 0, -1))
    assert hit.distance == pytest.approx(2.5)
    np.testing.assert_allclose(hit.normal, [0, -np.sin(0.5), np.cos(0.5)], atol=1e-12)


def test_bad_meshes():
    with pytest.raises(ValueError, match="triangles"):
        TriangleMesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 3)])
    with pytest.raises(ValueError, match="triangles"):
        TriangleMesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1)])
    with pytest.raises(TypeError, match="triangles"):
        TriangleMesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 2.5)])
    with pytest.raises(ValueError, match="vertices"):
        TriangleMesh([(0, 0, np.nan), (1, 0, 0), (0, 1, 0)], [(0, 1, 2)])
    with pytest.raises(ValueError, match="heights"):
        TriangleMesh.grid(np.zeros((1, 5)))
    m = flat_mesh(3)
    w = World()
    b = w.add_body(Sphere(0.1), mass=1.0)
    with pytest.raises(TypeError, match="shape"):
        w.add_body(m, mass=1.0)
    with pytest.raises(ValueError, match="static"):
        w.add_geom(m, b)
    with pytest.raises(ValueError, match="static"):
        m.mass_properties(mass=1.0)


@pytest.mark.parametrize("q, z", [((1, 0, 0, 0), 0.16), ((np.sqrt(0.5), np.sqrt(0.5), 0, 0), 0.11)], ids=["upright", "lying"])
def test_a_cylinder_rests_on_a_flat_mesh_as_on_the_plane(q, z):
    from multibody.engine import Cylinder
    kw = dict(position=(0.03, 0.02, z), quaternion=q)
    on_plane, _ = trajectory(Plane((0, 0, 1), 0.0), Cylinder(0.1, 0.3), 1500, **kw)
    on_mesh, w = trajectory(flat_mesh(), Cylinder(0.1, 0.3), 1500, **kw)
    np.testing.assert_allclose(on_mesh, on_plane, atol=1e-8)
    assert np.abs(on_mesh[800:, :2] - on_mesh[-1, :2]).max() < 1e-9
    # moving, the mesh also pushes at grid vertices under a flat end (the plane only at 4 rim
    # points), which shares the friction differently: the paths agree to millimetres, not bits
    kw["velocity"] = (0.5, 0.2, 0.0)
    on_plane, _ = trajectory(Plane((0, 0, 1), 0.0), Cylinder(0.1, 0.3), 1500, **kw)
    on_mesh, _ = trajectory(flat_mesh(), Cylinder(0.1, 0.3), 1500, **kw)
    assert np.abs(on_mesh[:, :3] - on_plane[:, :3]).max() < 1e-2
    assert on_mesh[-1, 2] == pytest.approx(on_plane[-1, 2], abs=1e-4)      # within the surface layer


def test_degenerate_triangles_are_ignored():
    v = [(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0), (0, 0, 0), (0.5, 0.5, 0)]
    mesh = TriangleMesh(v, [(0, 1, 2), (0, 2, 3), (0, 4, 2), (4, 4, 5)])   # a sliver and a point
    for shape in (Sphere(0.1), Box(0.2, 0.2, 0.2), Capsule(0.1, 0.3)):
        w = World()
        w.add_geom(mesh)
        b = w.add_body(shape, mass=1.0, position=(0.01, 0.01, 0.3))
        w.run(1000)
        assert np.isfinite(b.position).all() and b.position[2] > 0.09
        assert np.isfinite(w.collide()["contact_normal"]).all()
