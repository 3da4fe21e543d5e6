"""Drawing instructions: what a model looks like (spatial_v2 ``model.appearance`` and ``model.camera``).

A model's look is a tuple of :class:`multibody.Geometry` records, each fixed in a body (body −1 is
the fixed base) at a pose (``rotation`` A_BG, ``translation`` B_r_BG).  The kinds are the drawing
instructions of spatial_v2's ``showmotion`` (illustrated by its ``gfxExample``):

==========  =====================================================================================
``box``      ``size = (sx, sy, sz)``, centred on the geometry frame
``cylinder`` ``size = (radius, length)`` along the geometry z axis, centred (URDF convention)
``capsule``  a cylinder with hemispherical caps, ``size = (radius, length)`` (length between caps)
``sphere``   ``size = (radius,)``
``mesh``     a triangle mesh file (STL, OBJ, DAE … read with trimesh), ``scale`` per axis
``line``     a polyline through ``vertices`` (n × 3), ``size = (width in pixels,)``
``solid``    a vertex/face solid: ``vertices`` (n × 3) and ``faces`` (polygons of vertex indices)
``tiles``    a chequered floor tile in the geometry x–y plane, ``size = (half x, half y, tile edge)``
==========  =====================================================================================

The helpers below (:func:`box`, :func:`cylinder`, :func:`line`, …) build these records from the
arguments spatial_v2's instructions take (two corners of a box, the two end points of a cylinder).
A :class:`Camera` is fixed or tracks a point of a body (gfxExample's tracking camera).

A model without drawing instructions still draws: :func:`default_appearance` puts a cylinder on
every joint axis, a link between consecutive joint origins and a small sphere at each centre of
mass.

Example
-------
>>> import multibody as mb
>>> from multibody.model import appearance
>>> shapes = appearance.default_appearance(mb.models.double_pendulum())
>>> sorted({g.kind for g in shapes})
['capsule', 'cylinder', 'sphere']
"""
from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass

import numpy as np

from .. import _checks
from .joints import JointType, spec
from .model import Geometry, Model

__all__ = ["Camera", "box", "cylinder", "capsule", "sphere", "line", "solid", "tiles", "mesh",
           "default_appearance", "appearance_of", "triangles", "load_mesh", "characteristic_length"]

KINDS = ("box", "cylinder", "capsule", "sphere", "mesh", "line", "solid", "tiles")
_GREY = (0.72, 0.72, 0.76, 1.0)


@dataclass(frozen=True)
class Camera:
    """How the viewer looks at a model (spatial_v2 ``model.camera``).

    ``direction`` points from the looked-at point towards the eye, ``up`` is the screen's up
    direction, ``zoom`` magnifies (1 = the whole motion fits the view), ``locus`` is the point
    looked at (base coordinates).  With ``body`` set the camera tracks ``track_point`` of that body
    (body coordinates), as gfxExample's tracking camera follows the tip of its triangle.
    """
    direction: tuple = (1.0, -1.6, 0.9)
    up: tuple = (0.0, 0.0, 1.0)
    zoom: float = 1.0
    locus: tuple | None = None
    body: int | str | None = None
    track_point: tuple = (0.0, 0.0, 0.0)

    def __post_init__(self):
        for k in ("direction", "up", "track_point") + (("locus",) if self.locus is not None else ()):
            _checks.vector(f"Camera.{k}", getattr(self, k), 3)
        if np.linalg.norm(self.direction) < 1e-12 or np.linalg.norm(self.up) < 1e-12:
            raise ValueError("Camera: direction and up must be non-zero vectors")
        _checks.number("Camera.zoom", self.zoom, positive=True)


# ---- drawing instructions (spatial_v2 argument conventions) ----------------------------------------

def _rgba(colour):
    if colour is None:
        return None
    if isinstance(colour, (str, bytes)):
        raise TypeError(f"colour: expected 3 or 4 numbers in [0, 1] (RGB or RGBA), got the string {colour!r}")
    try:
        c = tuple(float(x) for x in colour)
    except (TypeError, ValueError):
        raise TypeError(f"colour: expected 3 or 4 numbers in [0, 1] (RGB or RGBA), got {colour!r}") from None
    if len(c) == 3:
        c = c + (1.0,)
    if len(c) != 4 or not all(0.0 <= x <= 1.0 for x in c):
        raise ValueError(f"colour: expected 3 or 4 numbers in [0, 1] (RGB or RGBA), got {colour!r}")
    return c


def _vec(name, v):
    return _checks.vector(name, v, 3)


def rotation_z_to(direction) -> np.ndarray:
    """A rotation whose third column is the unit vector along ``direction``."""
    z = _vec("direction", direction)
    n = np.linalg.norm(z)
    if n < 1e-12:
        raise ValueError("direction: must be a non-zero vector")
    z = z / n
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def box(body, corner0, corner1, colour=None, name=None) -> Geometry:
    """spatial_v2 ``'box'``: an axis-aligned box between two opposite corners (body coordinates)."""
    a, b = _vec("corner0", corner0), _vec("corner1", corner1)
    return Geometry(body=body, kind="box", size=tuple(np.abs(b - a)), rotation=np.eye(3),
                    translation=(a + b) / 2, rgba=_rgba(colour), name=name)


def cylinder(body, end0, end1, radius, colour=None, name=None, capsule=False) -> Geometry:
    """spatial_v2 ``'cyl'``: a cylinder of ``radius`` between two end points (body coordinates)."""
    a, b = _vec("end0", end0), _vec("end1", end1)
    radius = _checks.number("radius", radius, positive=True)
    return Geometry(body=body, kind="capsule" if capsule else "cylinder",
                    size=(float(radius), float(np.linalg.norm(b - a))), rotation=rotation_z_to(b - a),
                    translation=(a + b) / 2, rgba=_rgba(colour), name=name)


def capsule(body, end0, end1, radius, colour=None, name=None) -> Geometry:
    """A cylinder with hemispherical ends between two points (body coordinates)."""
    return cylinder(body, end0, end1, radius, colour, name, capsule=True)


def sphere(body, centre, radius, colour=None, name=None) -> Geometry:
    """spatial_v2 ``'sphere'``: a sphere of ``radius`` at ``centre`` (body coordinates)."""
    radius = _checks.number("radius", radius, positive=True)
    return Geometry(body=body, kind="sphere", size=(float(radius),), rotation=np.eye(3),
                    translation=_vec("centre", centre), rgba=_rgba(colour), name=name)


def line(body, points, colour=None, width=2.0, name=None) -> Geometry:
    """spatial_v2 ``'line'``: a polyline through ``points`` (n × 3, body coordinates)."""
    p = _checks.array("points", points, None)
    if p.ndim != 2 or p.shape[1] != 3 or len(p) < 2:
        raise ValueError(f"points: expected an (n, 3) array of finite numbers with n ≥ 2, got shape {p.shape}")
    return Geometry(body=body, kind="line", size=(float(width),), rotation=np.eye(3), translation=np.zeros(3),
                    rgba=_rgba(colour), name=name, vertices=p)


def solid(body, vertices, faces, colour=None, name=None) -> Geometry:
    """spatial_v2 ``'vertices'`` + ``'faces'``/``'triangles'``: a polyhedron from vertices and polygons.

    Polygons list vertex indices counter-clockwise seen from outside (0-based)."""
    v = _checks.array("vertices", vertices, (None, 3), what="an (n, 3) array of finite numbers")
    if v.ndim != 2:
        raise ValueError(f"vertices: expected an (n, 3) array of finite numbers, got shape {v.shape}")
    polys = tuple(tuple(int(i) for i in f) for f in faces)
    for f in polys:
        if len(f) < 3 or min(f) < 0 or max(f) >= len(v):
            raise ValueError(f"faces: polygon {f} needs ≥ 3 vertex indices in 0…{len(v) - 1}")
    return Geometry(body=body, kind="solid", rotation=np.eye(3), translation=np.zeros(3), rgba=_rgba(colour),
                    name=name, vertices=v, faces=polys)


def tiles(body=-1, centre=(0.0, 0.0, 0.0), half_size=(2.0, 2.0), tile=0.25, normal=(0.0, 0.0, 1.0),
          colour=(0.55, 0.55, 0.6, 1.0), name="floor") -> Geometry:
    """spatial_v2 ``'tiles'``: a chequered floor tile perpendicular to ``normal`` at ``centre``."""
    tile = _checks.number("tile", tile, positive=True)
    half_size = _checks.vector("half_size", half_size, 2)
    if not np.all(half_size > 0):
        raise ValueError(f"half_size: expected 2 numbers > 0, got {half_size.tolist()}")
    return Geometry(body=body, kind="tiles", size=(float(half_size[0]), float(half_size[1]), float(tile)),
                    rotation=rotation_z_to(normal), translation=_vec("centre", centre), rgba=_rgba(colour),
                    name=name)


def mesh(body, path, scale=(1.0, 1.0, 1.0), rotation=None, translation=(0.0, 0.0, 0.0), colour=None,
         name=None) -> Geometry:
    """A triangle mesh file fixed in ``body``."""
    return Geometry(body=body, kind="mesh", mesh=os.fspath(path), scale=tuple(float(s) for s in scale),
                    rotation=np.eye(3) if rotation is None else np.asarray(rotation, float),
                    translation=_vec("translation", translation), rgba=_rgba(colour), name=name)


# ---- a sensible look for any model ------------------------------------------------------------------

def characteristic_length(model: Model) -> float:
    """A length that sizes default drawings: the longest joint offset or twice the longest CoM offset."""
    lengths = [np.linalg.norm(model.tree_translation, axis=1).max(initial=0.0),
               2 * np.linalg.norm(model.com, axis=1).max(initial=0.0)]
    for g in model.geometries:
        if g.kind in ("box", "cylinder", "capsule", "sphere") and g.size:
            lengths.append(float(max(g.size)))
    L = max(lengths)
    return L if L > 1e-9 else 1.0


def default_appearance(model: Model, colour=None) -> tuple[Geometry, ...]:
    """Drawing instructions for a model that carries none.

    * a cylinder on each revolute/helical joint axis, a bar along each prismatic axis, a ball on
      each spherical joint, at the joint origin;
    * a link (capsule) from each body's origin to the origin of each child joint, so a chain reads
      as links between joint origins; a body without children gets one to twice its centre of
      mass (where a uniform link ends);
    * a small sphere at each centre of mass.

    Boxes of the body's inertia are not drawn: seed models give inertias of point-like or
    illustrative bodies (proNEu's RA3Link has Θ = 1 kg m² on 1 kg, a 2.4 m box on a 1 m link),
    which would hide the arm and its frames.

    Parameters
    ----------
    model : Model
        The model to draw.
    colour : sequence of 3 or 4 float, optional
        RGB or RGBA in [0, 1] of the bodies' shapes (default a grey blue); joints and links keep
        their colours.

    Returns
    -------
    tuple of Geometry
        The shapes, in body coordinates (m), each with its ``body`` index.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``colour`` is a string or not numbers.
    ValueError
        ``colour`` not 3 or 4 numbers in [0, 1].

    Examples
    --------
    >>> import multibody as mb
    >>> g = default_appearance(mb.models.planar(2))
    >>> [x.kind for x in g if x.body == 0], [x.kind for x in g if x.body == 1]
    (['cylinder', 'capsule', 'sphere'], ['cylinder', 'capsule', 'sphere'])
    """
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a multibody.Model, got {type(model).__name__}")
    L = characteristic_length(model)
    r = 0.05 * L
    joint_colour = (0.85, 0.55, 0.15, 1.0)
    link_colour = (0.35, 0.45, 0.6, 1.0)
    body_colour = _rgba(colour) or (0.55, 0.62, 0.78, 1.0)
    out = []
    for i in range(model.nb):
        jt = JointType(int(model.jtype[i]))
        # the joint sits at the body origin; its axis is constant in body coordinates
        ax = np.asarray(model.jaxis[i], float)
        steps = {op for op, _ in spec(jt).pose}  # the joint table: how the joint moves on its axis
        if "rot" in steps:
            out.append(cylinder(i, -0.9 * r * ax, 0.9 * r * ax, 0.75 * r, joint_colour, name=f"joint {i}"))
        if "slide" in steps:
            out.append(cylinder(i, -1.5 * r * ax, 1.5 * r * ax, 0.35 * r, joint_colour,
                                name=f"joint {i}" if "rot" not in steps else f"joint {i} slide"))
        elif jt == JointType.SPHERICAL:
            out.append(sphere(i, np.zeros(3), 0.8 * r, joint_colour, name=f"joint {i}"))
        children = [c for c in range(model.nb) if model.parent[c] == i]
        ends = [np.asarray(model.tree_translation[c], float) for c in children]
        if not children:       # a last link: as far beyond the joint as twice its centre of mass
            ends = [2 * np.asarray(model.com[i], float)]
        for k, end in enumerate(ends):
            if np.linalg.norm(end) > 0.2 * r:
                name = f"link {i}-{children[k]}" if children else f"link {i}"
                out.append(capsule(i, np.zeros(3), end, 0.3 * r, link_colour, name=name))
        if model.mass[i] > 0:
            out.append(sphere(i, np.asarray(model.com[i], float), 0.6 * r, body_colour,
                              name=f"centre of mass {model.body_names[i]}"))
    # links from the base to each root joint that is away from the origin
    for c in range(model.nb):
        if model.parent[c] < 0 and np.linalg.norm(model.tree_translation[c]) > 0.2 * r:
            out.append(capsule(-1, np.zeros(3), model.tree_translation[c], 0.3 * r, link_colour,
                               name=f"base link {c}"))
    return tuple(out)


def appearance_of(model: Model) -> tuple[Geometry, ...]:
    """What a viewer draws: the model's visual geometry, else its collision geometry, else
    :func:`default_appearance`."""
    visual = tuple(g for g in model.geometries if g.role == "visual")
    if visual:
        return visual
    if model.geometries:
        return tuple(model.geometries)
    return default_appearance(model)


# ---- triangles (for matplotlib and video frames; the browser builds its own) --------------------------

@functools.lru_cache(maxsize=256)
def _load_mesh_cached(path, mtime):
    try:
        import trimesh
    except ImportError:
        raise ImportError("reading mesh files needs trimesh (pip install trimesh; pycollada for .dae)") from None
    try:
        m = trimesh.load(path, force="mesh", process=True)
    except Exception as e:  # trimesh raises many types for unreadable files
        raise ValueError(f"mesh {path!r}: cannot read it ({type(e).__name__}: {str(e)[:120]})") from None
    V = np.asarray(m.vertices, dtype=float)
    F = np.asarray(m.faces, dtype=np.int64)
    if V.ndim != 2 or len(F) == 0:
        raise ValueError(f"mesh {path!r}: no triangles found")
    V.setflags(write=False)
    F.setflags(write=False)
    return V, F


def load_mesh(path, scale=(1.0, 1.0, 1.0)):
    """(vertices (n, 3), triangles (m, 3)) of a mesh file, scaled; read with trimesh and cached."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"mesh {path!r}: no such file (unresolved package:// path?)")
    V, F = _load_mesh_cached(path, os.path.getmtime(path))
    return V * np.asarray(scale, float), F


def _unit_sphere(n_lat, n_lon):
    th = np.linspace(0, np.pi, n_lat + 1)
    ph = np.linspace(0, 2 * np.pi, n_lon, endpoint=False)
    V = np.array([[math.sin(t) * math.cos(p), math.sin(t) * math.sin(p), math.cos(t)] for t in th for p in ph])
    F = []
    for a in range(n_lat):
        for b in range(n_lon):
            i0, i1 = a * n_lon + b, a * n_lon + (b + 1) % n_lon
            j0, j1 = i0 + n_lon, i1 + n_lon
            F += [(i0, j0, j1), (i0, j1, i1)]
    return V, np.array(F)


def triangles(geom: Geometry, segments: int = 16):
    """(vertices (n, 3), triangles (m, 3)) of a geometry in its body's coordinates (None for lines)."""
    kind = geom.kind
    if kind == "box":
        s = np.asarray(geom.size, float) / 2
        V = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * s
        F = np.array([(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6),
                      (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)])
    elif kind in ("cylinder", "capsule"):
        rad, length = geom.size
        ang = np.linspace(0, 2 * np.pi, segments, endpoint=False)
        ring = np.column_stack([rad * np.cos(ang), rad * np.sin(ang), np.zeros(segments)])
        V = np.vstack([ring + [0, 0, -length / 2], ring + [0, 0, length / 2], [[0, 0, -length / 2],
                                                                                 [0, 0, length / 2]]])
        n = segments
        F = []
        for k in range(n):
            k1 = (k + 1) % n
            F += [(k, k1, n + k1), (k, n + k1, n + k), (2 * n, k1, k), (2 * n + 1, n + k, n + k1)]
        F = np.array(F)
        if kind == "capsule":
            Vs, Fs = _unit_sphere(max(4, segments // 2), segments)
            V2 = Vs * rad
            F = np.vstack([F, Fs + len(V), Fs + len(V) + len(V2)])
            V = np.vstack([V, V2 + [0, 0, -length / 2], V2 + [0, 0, length / 2]])
    elif kind == "sphere":
        V, F = _unit_sphere(max(4, segments // 2), segments)
        V = V * geom.size[0]
    elif kind == "mesh":
        V, F = load_mesh(geom.mesh, geom.scale)
    elif kind == "solid":
        V = np.asarray(geom.vertices, float)
        F = np.array([(f[0], f[k], f[k + 1]) for f in geom.faces for k in range(1, len(f) - 1)])
    elif kind == "tiles":
        hx, hy, _ = geom.size
        V = np.array([[-hx, -hy, 0], [hx, -hy, 0], [hx, hy, 0], [-hx, hy, 0]], float)
        F = np.array([(0, 1, 2), (0, 2, 3)])
    else:
        return None
    R = np.eye(3) if geom.rotation is None else np.asarray(geom.rotation, float)
    t = np.zeros(3) if geom.translation is None else np.asarray(geom.translation, float)
    return V @ R.T + t, np.asarray(F, dtype=np.int64)
