"""Collision primitives of the engine (OpenDE report §3.2, §6.2: box, sphere, capped cylinder,
cylinder, plane) and their mass properties (ODE's ``dMassSetBoxTotal`` and friends).

Capsules and cylinders have their axis along the shape's local z; a plane is ``normal · x = offset``
and is always static.

>>> from multibody.engine import Box
>>> m, inertia = Box(1.0, 0.1, 0.1).mass_properties(mass=1.0)
>>> round(float(inertia[0, 0]), 6), round(float(inertia[1, 1]), 6)
(0.001667, 0.084167)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import _checks
from ..model import geometry

__all__ = ["Box", "Sphere", "Capsule", "Cylinder", "Ellipsoid", "Plane", "Shape", "TriangleMesh", "Convex", "HField"]


def _positive(name, value):
    return _checks.number(name, value, positive=True)


class Shape:
    """Base of the primitives: ``volume`` and ``unit_inertia`` (inertia per kg about the centre).

    ``code`` is the shape's code in the C engine (``csrc/engine/geometry.h``): its row of shapes there and
    its row and column of the collision table (``csrc/engine/collide.c``).  A new shape is a class here,
    its code, its row in ``csrc/engine/geometry.c`` and its rows in that table."""
    code: int = -1

    def mass_properties(self, mass=None, density=None):
        """(mass, 3×3 inertia about the centre) from exactly one of ``mass`` [kg] or ``density`` [kg/m³]."""
        if (mass is None) == (density is None):
            raise ValueError("mass, density: give exactly one of them for a shape")
        if density is not None:
            d = float(density)
            if not (math.isfinite(d) and d > 0):
                raise ValueError(f"density: expected a finite value > 0, got {density!r}")
            mass = d * self.volume
        m = float(mass)
        if not (math.isfinite(m) and m > 0):
            raise ValueError(f"mass: expected a finite value > 0, got {mass!r}")
        return m, m * self.unit_inertia()


@dataclass(frozen=True)
class Box(Shape):
    """Box with side lengths ``lx, ly, lz`` [m] (``dCreateBox``)."""
    lx: float
    ly: float
    lz: float
    code = 1

    def __post_init__(self):
        for k in ("lx", "ly", "lz"):
            object.__setattr__(self, k, _positive(f"Box.{k}", getattr(self, k)))

    @property
    def volume(self):
        return self.lx * self.ly * self.lz

    @property
    def size(self):
        return (self.lx, self.ly, self.lz)

    def unit_inertia(self):
        x, y, z = self.lx ** 2, self.ly ** 2, self.lz ** 2
        return np.diag([y + z, x + z, x + y]) / 12.0


@dataclass(frozen=True)
class Sphere(Shape):
    """Sphere of ``radius`` [m]."""
    radius: float
    code = 0

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Sphere.radius", self.radius))

    @property
    def volume(self):
        return 4.0 / 3.0 * math.pi * self.radius ** 3

    @property
    def size(self):
        return (self.radius, 0.0, 0.0)

    def unit_inertia(self):
        return np.eye(3) * 0.4 * self.radius ** 2


@dataclass(frozen=True)
class Capsule(Shape):
    """Capped cylinder: a cylinder of ``radius`` and ``length`` (along z) with hemispherical ends."""
    radius: float
    length: float
    code = 2

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Capsule.radius", self.radius))
        object.__setattr__(self, "length", _positive("Capsule.length", self.length))

    @property
    def volume(self):
        r, L = self.radius, self.length
        return math.pi * r * r * L + 4.0 / 3.0 * math.pi * r ** 3

    @property
    def size(self):
        return (self.radius, self.length, 0.0)

    def unit_inertia(self):
        # cylinder plus two hemispheres (dMassSetCapsule), divided by the total mass
        r, L = self.radius, self.length
        mc, ms = math.pi * r * r * L, 4.0 / 3.0 * math.pi * r ** 3
        m = mc + ms
        izz = mc * r * r / 2 + ms * 0.4 * r * r
        ixx = mc * (r * r / 4 + L * L / 12) + ms * (0.4 * r * r + 3.0 / 8.0 * r * L + L * L / 4)
        return np.diag([ixx, ixx, izz]) / m


@dataclass(frozen=True)
class Cylinder(Shape):
    """Flat-ended cylinder of ``radius`` and ``length`` along z."""
    radius: float
    length: float
    code = 3

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Cylinder.radius", self.radius))
        object.__setattr__(self, "length", _positive("Cylinder.length", self.length))

    @property
    def volume(self):
        return math.pi * self.radius ** 2 * self.length

    @property
    def size(self):
        return (self.radius, self.length, 0.0)

    def unit_inertia(self):
        r, L = self.radius, self.length
        ixx = r * r / 4 + L * L / 12
        return np.diag([ixx, ixx, r * r / 2])


@dataclass(frozen=True)
class Ellipsoid(Shape):
    """Solid ellipsoid with semi-axes ``rx, ry, rz`` [m] along the shape's x, y, z (MJCF's
    ``type="ellipsoid"``).  A plane meets it in closed form (its support point along the plane's
    normal); every other shape through Minkowski portal refinement on its support function.

    >>> from multibody.engine import Ellipsoid
    >>> m, inertia = Ellipsoid(0.3, 0.2, 0.1).mass_properties(mass=1.0)
    >>> round(float(inertia[0, 0]), 6)                       # m (ry² + rz²) / 5
    0.01
    """
    rx: float
    ry: float
    rz: float
    code = 7    # csrc/engine/geometry.h G_ELLIPSOID

    def __post_init__(self):
        for k in ("rx", "ry", "rz"):
            object.__setattr__(self, k, _positive(f"Ellipsoid.{k}", getattr(self, k)))

    @property
    def volume(self):
        return 4.0 / 3.0 * math.pi * self.rx * self.ry * self.rz

    @property
    def size(self):
        return (self.rx, self.ry, self.rz)

    def unit_inertia(self):
        a, b, c = self.rx ** 2, self.ry ** 2, self.rz ** 2
        return np.diag([b + c, a + c, a + b]) / 5.0


@dataclass(frozen=True)
class Plane(Shape):
    """Static half-space boundary ``normal · x = offset`` (``dCreatePlane``); the normal is normalised."""
    normal: tuple = (0.0, 0.0, 1.0)
    offset: float = 0.0
    code = 4

    def __post_init__(self):
        n = np.asarray(self.normal, dtype=float)
        if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) < 1e-12:
            raise ValueError(f"Plane.normal: expected a finite non-zero 3-vector, got {self.normal!r}")
        object.__setattr__(self, "normal", tuple(float(x) for x in n / np.linalg.norm(n)))
        d = float(self.offset)
        if not math.isfinite(d):
            raise ValueError(f"Plane.offset: expected a finite number, got {self.offset!r}")
        object.__setattr__(self, "offset", d)

    @property
    def size(self):
        return self.normal

    def mass_properties(self, mass=None, density=None):
        raise ValueError("Plane: a plane is static and has no mass; add it with World.add_geom(Plane(...))")


class HField(Shape):
    """Static height field (MuJoCo's ``hfield``): ``samples`` (nrow, ncol) in [0, 1] over
    |x| ≤ ``size[0]``, |y| ≤ ``size[1]`` of the geom's frame (row r at y = −size[1] + 2 r size[1]/(nrow − 1),
    column c at x likewise), surface z = samples · ``size[2]``, solid down to z = −``size[3]``.
    Collided as MuJoCo does, as triangular prisms, each against the shape as a convex hull
    (``csrc/engine/hfield.c``).  Add it with ``World.add_geom(field)`` (static only).

    >>> from multibody.engine import HField
    >>> field = HField([[0, 0.5], [0.5, 1]], size=(1, 1, 0.2, 0.1))
    >>> field.samples.shape, field.size
    ((2, 2), (1.0, 1.0, 0.2))
    """
    code = 8

    def __init__(self, samples, size):
        from ..model.geometry import HeightField
        self.field = HeightField(np.asarray(size, float), np.asarray(samples, float))
        self.samples = self.field.samples

    @property
    def size(self):
        return tuple(float(x) for x in self.field.size[:3])

    def packed(self):
        """The block ``csrc/engine/hfield.c`` reads in the world's hull list."""
        return self.field.packed()

    def mass_properties(self, mass=None, density=None):
        raise ValueError("HField: a height field is static and has no mass; add it with World.add_geom(HField(...))")


class TriangleMesh(Shape):
    """Static triangle mesh (terrain, ``dCreateTriMesh``): ``vertices`` (n, 3) [m] in the geom's
    frame and ``triangles`` (m, 3) vertex indices, front side counter-clockwise.

    Add it with ``World.add_geom(mesh)`` (static only, posed by ``position``/``quaternion``).
    Spheres, boxes, capsules, cylinders and convex hulls collide with it (hulls through
    ``csrc/engine/convex.c``'s triangle hook: pushed along the face normal of the triangles under them, as
    boxes are, with one manifold of at most 4 points over all triangles, so a convex box rests and
    slides on a flat mesh as on the plane); ``World.ray_cast`` finds it.  Contacts push along a triangle's face normal
    where the shape is over its interior, so shapes slide over the shared edges of coplanar
    triangles as over a plane (spheres and capsules meeting an edge or corner of a ridge take the
    direction from it; boxes and cylinders are pushed along the face normal of the triangles
    under them, as on terrain).  A shape whose centre is behind a triangle is not pushed through it.

    >>> from multibody.engine import TriangleMesh
    >>> floor = TriangleMesh([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)], [(0, 1, 2), (0, 2, 3)])
    >>> len(floor.triangles), floor.normals()[0].tolist()
    (2, [0.0, 0.0, 1.0])
    """
    code = 6

    def __init__(self, vertices, triangles):
        v = _checks.array("TriangleMesh.vertices", vertices, (None, 3), what="(n, 3) points")
        t = np.asarray(triangles)
        if t.dtype.kind not in "iu" and not (t.dtype.kind == "f" and t.size and np.all(t == np.round(t))):
            if t.size:
                raise TypeError(f"TriangleMesh.triangles: expected integer vertex indices, got dtype {t.dtype}")
        t = t.astype(np.int64).reshape(t.shape)
        if t.ndim != 2 or t.shape[1] != 3 or t.shape[0] == 0:
            raise ValueError(f"TriangleMesh.triangles: expected shape (m, 3) with m >= 1, got {t.shape}")
        if t.min() < 0 or t.max() >= len(v):
            raise ValueError(f"TriangleMesh.triangles: expected vertex indices in [0, {len(v)}), "
                             f"got {int(t.min())}..{int(t.max())}")
        self.vertices = np.ascontiguousarray(v, dtype=float)
        self.triangles = np.ascontiguousarray(t, dtype=np.int64)
        self.vertices.flags.writeable = False
        self.triangles.flags.writeable = False

    @classmethod
    def from_file(cls, path):
        """A mesh from an OBJ, STL, PLY … file read by ``trimesh`` (scenes are concatenated)."""
        import trimesh
        m = trimesh.load(path, force="mesh")
        return cls(np.asarray(m.vertices, dtype=float), np.asarray(m.faces, dtype=np.int64))

    @classmethod
    def grid(cls, heights, spacing=1.0, origin=(0.0, 0.0)):
        """Terrain from a (nx, ny) array of heights [m] on a grid of ``spacing`` [m] from ``origin``:
        two triangles a cell, front up."""
        z = _checks.array("heights", heights, (None, None))
        nx, ny = z.shape
        if nx < 2 or ny < 2:
            raise ValueError(f"heights: expected at least 2 x 2 samples, got {z.shape}")
        h = _checks.number("spacing", spacing, positive=True)
        o = _checks.vector("origin", origin, 2)
        x, y = np.meshgrid(o[0] + h * np.arange(nx), o[1] + h * np.arange(ny), indexing="ij")
        v = np.column_stack([x.ravel(), y.ravel(), z.ravel()])
        i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1), indexing="ij")
        a = (i * ny + j).ravel()
        b, c, d = a + ny, a + ny + 1, a + 1          # a=(i,j) b=(i+1,j) c=(i+1,j+1) d=(i,j+1)
        t = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
        return cls(v, t)

    def normals(self):
        """Unit face normals (m, 3) (zero for a degenerate triangle)."""
        p = self.vertices[self.triangles]
        n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
        length = np.linalg.norm(n, axis=1, keepdims=True)
        return np.divide(n, length, out=np.zeros_like(n), where=length > 0)

    @property
    def size(self):
        return (0.0, 0.0, 0.0)

    def mass_properties(self, mass=None, density=None):
        raise ValueError("TriangleMesh: a triangle mesh is static and has no mass; add it with World.add_geom(mesh)")

    def __repr__(self):
        return f"TriangleMesh({len(self.vertices)} vertices, {len(self.triangles)} triangles)"


# ---- convex polyhedra: the hull tables and their C layout are model data (model/geometry.py), ----
# shared with the model's collision geoms; the mass properties are the engine's
HULL_MAX_VERTICES = geometry.HULL_MAX_VERTICES
_hull_tables = geometry.hull_tables


def _volume_moments(verts, faces):
    """Volume, centroid and second moment ∫ x xᵀ dV about the origin (tetrahedra on the faces)."""
    ref = verts.mean(axis=0)
    S = np.array([[2.0, 1, 1], [1, 2, 1], [1, 1, 2]])
    vol, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
    for loop in faces:
        for i in range(1, len(loop) - 1):
            A = np.column_stack([verts[loop[0]], verts[loop[i]], verts[loop[i + 1]]]) - ref[:, None]
            det = np.linalg.det(A)
            vol += det / 6.0
            first += det / 24.0 * A.sum(axis=1)
            second += det / 120.0 * (A @ S @ A.T)
    centroid = first / vol
    about_centroid = second - vol * np.outer(centroid, centroid)
    return vol, centroid + ref, about_centroid


class Convex(Shape):
    """Convex polyhedron: the convex hull of ``vertices`` (n × 3, at least 4 points not in one
    plane), computed once here (Qhull) and kept as vertices, planar faces and edges for the C
    narrow phase (``csrc/engine/convex.c``: separating axes, then face clipping, up to 4 contact points).

    The vertices are in the shape's own frame; as a body's shape (``World.add_body``) the hull is
    placed so that its centroid is the body's centre of mass.

    >>> import numpy as np
    >>> from multibody.engine import Convex
    >>> cube = Convex(np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * 0.1)
    >>> len(cube.vertices), len(cube.faces), len(cube.edges), round(cube.volume, 6)
    (8, 6, 12, 0.008)
    >>> from multibody.engine import World, Plane
    >>> world = World()
    >>> floor = world.add_geom(Plane((0, 0, 1), 0.0))
    >>> body = world.add_body(cube, mass=1.0, position=(0, 0, 0.1))
    >>> world.run(500); len(world.last_step.contact_depth)          # rests on 4 corners, like a Box
    4
    >>> Convex([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    Traceback (most recent call last):
    ...
    ValueError: vertices: the points lie in one plane or on one line; a convex shape needs 4 points not in one plane
    """

    code = 5    # csrc/engine/geometry.h G_CONVEX

    def __init__(self, vertices):
        pts = _checks.array("vertices", vertices, (None, 3), what="n points")
        if len(pts) < 4:
            raise ValueError(f"vertices: expected at least 4 points not in one plane, got {len(pts)}")
        verts, faces, planes, edges = _hull_tables(pts)
        self.vertices, self.planes, self.edges = verts, planes, edges
        self.faces = [[int(v) for v in loop] for loop in faces]
        volume, self.centroid, self._second = _volume_moments(verts, self.faces)
        self.volume = float(volume)
        for a in (self.vertices, self.planes, self.edges, self.centroid):
            a.setflags(write=False)

    @classmethod
    def from_file(cls, path, scale=1.0):
        """The convex hull of the vertices of a mesh file (STL, OBJ, PLY, DAE …, read by trimesh),
        each coordinate multiplied by ``scale`` (a number or 3 numbers)."""
        import trimesh
        s = np.broadcast_to(np.asarray(scale, dtype=float), (3,))
        if not np.all(np.isfinite(s)) or np.any(s == 0):
            raise ValueError(f"scale: expected finite non-zero factors, got {scale!r}")
        try:
            mesh = trimesh.load(str(path), force="mesh")
        except Exception as e:  # trimesh raises many kinds for unreadable files
            raise ValueError(f"path: trimesh could not read {str(path)!r} as a mesh ({e})") from None
        return cls(np.asarray(mesh.vertices, dtype=float) * s)

    def __repr__(self):
        return f"Convex({len(self.vertices)} vertices, {len(self.faces)} faces, volume={self.volume:.4g})"

    @property
    def size(self):
        return (0.0, 0.0, 0.0)      # the world writes the hull's index here

    def unit_inertia(self):
        C = self._second / self.volume
        return np.trace(C) * np.eye(3) - C

    def packed(self):
        """The hull as one float64 block for the C engine (layout read by ``csrc/engine/convex.c``):
        nv, nf, ne, n_face_indices, vertices (nv × 3), planes (nf × [n, d]), face starts (nf + 1),
        face vertex indices, edges (ne × [v0, v1, left face, right face])."""
        return geometry.hull_packed(self.vertices, self.faces, self.planes, self.edges)
