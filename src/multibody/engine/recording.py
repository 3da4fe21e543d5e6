"""An engine world's motion for the browser viewer: the world as a model of free bodies, recorded.

The viewer (``mb.view.showmotion``, spatial_v2's showmotion) plays a :class:`~multibody.Model` along
q(t). A maximal-coordinate world is exactly that model's special case: every body hangs from the
ground by a free joint whose q is the body's centre of mass and quaternion (``[x, y, z, w, qx, qy,
qz]``, the free joint's layout), and its shapes are the bodies' geometry — planes as a tiled floor,
triangle meshes and convex hulls as solids, fixed to the ground when static. So the engine's scenes
need no viewer of their own: :func:`record` steps the world and keeps q, and the page is the same
page every model gets.

>>> from multibody import engine
>>> world = engine.World(dt=1e-3)
>>> ground = world.add_geom(engine.Plane())
>>> ball = world.add_body(engine.Sphere(0.1), mass=1.0, position=(0, 0, 1))
>>> rec = record(world, 0.5, every=10)
>>> rec.model.nq, rec.q.shape, sorted({g.kind for g in rec.model.geometries})
(7, (51, 7), ['sphere', 'tiles'])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _checks
from ..model.builder import ModelBuilder
from ..model.model import Geometry, Model
from . import _engine as C
from .shapes import Box, Capsule, Convex, Cylinder, Plane, Sphere, TriangleMesh
from .world import World, quat_to_matrix
from .._extras import require

__all__ = ["Recording", "scene_model", "record"]


@dataclass
class Recording:
    """A world's motion as the viewer reads it: ``model`` (free bodies and their shapes), times ``t``
    (n,) [s] and configurations ``q`` (n, 7·bodies). ``mb.view.showmotion(rec)`` and
    ``mb.view.show(rec)`` play it."""

    model: Model
    t: np.ndarray
    q: np.ndarray


def _pose(world, index):
    gd = world._gdat[index]
    return quat_to_matrix(gd[C.GD_QUAT:C.GD_QUAT + 4]), gd[C.GD_POS:C.GD_POS + 3].copy()


def _geometry(world, geom, body, extent):
    """The viewer's Geometry of one engine geom (``body`` −1: fixed to the ground)."""
    shape, (R, p) = geom.shape, _pose(world, geom.index)
    name = f"geom {geom.index}"
    if isinstance(shape, Box):
        return Geometry(body, "box", (shape.lx, shape.ly, shape.lz), R, p, name=name)
    if isinstance(shape, Sphere):
        return Geometry(body, "sphere", (shape.radius,), R, p, name=name)
    if isinstance(shape, (Capsule, Cylinder)):      # both along their z axis, as the viewer's
        kind = "capsule" if isinstance(shape, Capsule) else "cylinder"
        return Geometry(body, kind, (shape.radius, shape.length), R, p, name=name)
    if isinstance(shape, Plane):                    # a tiled floor in the plane, as wide as the scene
        n = np.asarray(shape.normal)
        z = np.array([0.0, 0.0, 1.0])
        axis, c = np.cross(z, n), float(z @ n)
        K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        Rp = np.eye(3) + K + K @ K / (1.0 + c) if c > -1.0 + 1e-12 else np.diag([1.0, -1.0, -1.0])
        half = max(1.0, extent)
        return Geometry(-1, "tiles", (half, half, max(half / 10, 0.05)), Rp, n * shape.offset, name=name)
    if isinstance(shape, TriangleMesh):
        return Geometry(body, "solid", (), R, p, name=name, vertices=np.asarray(shape.vertices, float),
                        faces=tuple(tuple(int(i) for i in f) for f in np.asarray(shape.triangles)))
    if isinstance(shape, Convex):
        require("scipy", "sim", "convex hulls of meshes")
        from scipy.spatial import ConvexHull
        hull = ConvexHull(np.asarray(shape.vertices, float))
        return Geometry(body, "solid", (), R, p, name=name, vertices=hull.points,
                        faces=tuple(tuple(int(i) for i in f) for f in hull.simplices))
    raise ValueError(f"{name}: the viewer has no drawing for shape {type(shape).__name__}")


def scene_model(world: World, extent: float = 2.0) -> Model:
    """The world as a model for the viewer: one free body per engine body (named as in the world,
    with its mass and inertia about its centre of mass) carrying its geoms; static geoms fixed to
    the ground. ``extent`` [m]: half the width of a plane's tiled floor."""
    if not isinstance(world, World):
        raise TypeError(f"world: expected a multibody.engine.World, got {type(world).__name__}")
    b = ModelBuilder(name="engine scene", gravity=tuple(world.gravity))
    for body in world.bodies:
        b.add_body(body.name, None, "free", mass=body.mass, inertia=body.inertia)
    for geom in world.geoms:
        owner = -1 if geom.body is None else geom.body.index
        b.add_geometry(_geometry(world, geom, owner, extent))
    return b.build()


def _q(world):
    """[x, y, z, w, qx, qy, qz] of every body (the free joint's q), straight from the state array."""
    S = world._state
    return np.hstack((S[:, C.BS_POS:C.BS_POS + 3], S[:, C.BS_QUAT:C.BS_QUAT + 4])).ravel()


def record(world: World, t_final: float, every: int = 1) -> Recording:
    """Step ``world`` for ``t_final`` seconds (its own ``dt``) and keep every ``every``-th state (and
    the first and the last) as a :class:`Recording` for the viewer; the world moves on, as after
    ``world.run``."""
    t_final = _checks.number("t_final", t_final, lo=0.0)
    every = _checks.integer("every", every, lo=1)
    if not world.bodies:
        raise ValueError("world: it has no bodies to record")
    steps = int(round(t_final / world.dt))
    t0 = world.time
    times, qs = [t0], [_q(world)]
    done = 0
    while done < steps:
        n = min(every, steps - done)
        world.run(n)
        done += n
        times.append(world.time)
        qs.append(_q(world))
    positions = np.array([q.reshape(-1, 7)[:, :3] for q in qs]).reshape(-1, 3)
    extent = float(np.abs(positions[:, :2]).max(initial=0.0)) + 1.0
    return Recording(scene_model(world, extent), np.array(times), np.array(qs))
