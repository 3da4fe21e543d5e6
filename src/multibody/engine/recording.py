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

import math
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
    """The engine world as a model for the browser viewer.

    One free body per engine body (named as in the world, with its mass and inertia about its
    centre of mass) carrying its geoms; static geoms are fixed to the ground, planes drawn as a
    tiled floor, triangle meshes and convex hulls as solids.

    Parameters
    ----------
    world : multibody.engine.World
        The world, at its current poses (they place the static geoms).
    extent : float, default 2.0
        Half the width (m) of a plane's tiled floor (at least 1 m is drawn).

    Returns
    -------
    Model
        Free bodies only: its q per body is the body's centre of mass and quaternion
        ``[x, y, z, w, qx, qy, qz]``, as :func:`record` keeps them.

    Raises
    ------
    TypeError
        ``world`` is not a World, ``extent`` not a real number.
    ValueError
        ``extent`` ≤ 0, NaN or inf; a world with no bodies (a model needs one).
    multibody._extras.MissingExtraError
        A convex shape is drawn and SciPy (its hull) is not installed.

    Examples
    --------
    >>> from multibody import engine
    >>> world = engine.World()
    >>> ground = world.add_geom(engine.Plane())
    >>> box = world.add_body(engine.Box(0.2, 0.2, 0.2), mass=2.0, position=(0, 0, 0.5), name="box")
    >>> m = scene_model(world)
    >>> m.body_names, m.nq, [g.kind for g in m.geometries]
    (('box',), 7, ['tiles', 'box'])
    """
    if not isinstance(world, World):
        raise TypeError(f"world: expected a multibody.engine.World, got {type(world).__name__}")
    extent = _checks.number("extent", extent, positive=True)
    if not world.bodies:
        raise ValueError("world: it has no bodies (the viewer's model needs one)")
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


def _check_record_size(world, t_final, every):
    """Refuse, before stepping, a recording no run can finish or no memory can hold (``t_final=1e300``
    stepped forever, its list of states growing until the machine ran out of memory)."""
    from ..simulation.core import MAX_STEPS, _available_memory   # the limits simulate keeps
    if not t_final / world.dt < MAX_STEPS:
        raise ValueError(f"t_final: {t_final:g} s in steps of the world's dt = {world.dt:g} s is more than 2**53 "
                         "steps; record a shorter span or use a larger dt")
    samples = int(round(t_final / world.dt)) // every + 2
    need = samples * (8 * 7 * len(world.bodies) + 120) * 2       # a list of arrays, then the array
    if need > 2**26:
        avail = _available_memory()
        if avail is not None and need > avail:
            raise MemoryError(f"t_final: the recording would keep {samples:,} states (about {need / 2**30:.1f} GiB) "
                              f"but only {avail / 2**30:.1f} GiB of memory is available; pass every = "
                              f"{math.ceil(every * need / (0.5 * avail))} or more, or record a shorter span")


def record(world: World, t_final: float, every: int = 1) -> Recording:
    """Step ``world`` for ``t_final`` seconds and keep its motion for the browser viewer.

    The world steps with its own ``dt`` (``round(t_final / dt)`` steps) and moves on, as after
    ``world.run``; every ``every``-th state is kept, and the first and the last.
    ``mb.view.showmotion(rec)`` plays it (``world.record`` is the same as a method).

    Parameters
    ----------
    world : multibody.engine.World
        A world with at least one body.
    t_final : float
        The span to step (s), ≥ 0.
    every : int, default 1
        Keep one state in ``every`` steps.

    Returns
    -------
    Recording
        ``model`` (:func:`scene_model`), times ``t`` (n,) in s and configurations ``q``
        (n, 7·bodies): each body's centre of mass (m) and quaternion, world coordinates.

    Raises
    ------
    TypeError
        ``world`` is not a World, ``t_final`` not a real number, ``every`` not an integer.
    ValueError
        ``t_final`` < 0, NaN or inf, or more than 2**53 steps; ``every`` < 1; a world without bodies.
    MemoryError
        The states kept would not fit in the available memory (before any step is taken).
    multibody.engine.SimulationError
        The simulation blew up (a body named, with the step).

    Examples
    --------
    >>> from multibody import engine
    >>> world = engine.World(dt=1e-3)
    >>> ground = world.add_geom(engine.Plane())
    >>> ball = world.add_body(engine.Sphere(0.1), mass=1.0, position=(0, 0, 1))
    >>> rec = record(world, 0.5, every=10)
    >>> rec.q.shape, rec.t[-1].round(9), bool(rec.q[-1, 2] < 1)             # it falls
    ((51, 7), np.float64(0.5), True)
    """
    if not isinstance(world, World):
        raise TypeError(f"world: expected a multibody.engine.World, got {type(world).__name__}")
    t_final = _checks.number("t_final", t_final, lo=0.0)
    every = _checks.integer("every", every, lo=1)
    if not world.bodies:
        raise ValueError("world: it has no bodies to record")
    _check_record_size(world, t_final, every)
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
