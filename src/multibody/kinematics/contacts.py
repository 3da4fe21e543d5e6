"""The contacts of a model's own collision geometry at a configuration: ``mb.contacts(model, q)``.

The geoms and their candidate pairs are model data (``Model.geoms``, ``multibody.model.geometry``:
MJCF geoms with MuJoCo's pair filters, URDF ``<collision>`` elements with the adjacent links'
pairs left out).  The bodies are posed by the core's forward kinematics at q and every pair goes
through the engine's narrow phase — the one collision table of the project
(``csrc/engine/collide.c``), called from ``csrc/sim/scene_contact.c`` without Python in between.

The result follows MuJoCo's conventions, so the two compare directly: a contact's ``normal``
points from geom a into geom b (moving b along it separates them), ``depth`` > 0 is penetration
(MuJoCo's ``contact.dist`` = −depth; a pair with a margin also reports contacts with depth in
(−margin, 0]), and ``position`` is the midpoint between the two surfaces.  Geom a is the one
MuJoCo lists first (the lower MuJoCo geom type), or the ground plane.

Example
-------
>>> import numpy as np, multibody as mb
>>> b = mb.ModelBuilder()
>>> ball = b.add_body("ball", parent=None, joint="free", mass=1.0, inertia=np.eye(3) * 1e-3)
>>> b.add_geometry(mb.Geometry(ball, "sphere", (0.1,), role="collision", name="ball"))
>>> model = b.build()
>>> q = np.array([0.3, 0.0, 0.09, 1, 0, 0, 0])        # free joint: position, quaternion; 1 cm into the floor
>>> c = mb.contacts(model, q, ground=True)
>>> len(c), c.geom_names, c.bodies
(1, [('ground', 'ball')], [(-1, 0)])
>>> np.round(c.depth, 12).tolist(), c.normal.tolist(), np.round(c.position, 12).tolist()
([0.01], [[0.0, 0.0, 1.0]], [[0.3, 0.0, -0.005]])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _checks
from ..core import _core
from ..model.geometry import Geoms, model_geoms

__all__ = ["Contacts", "contacts", "lift_onto_ground", "scene_geoms"]


@dataclass(frozen=True, eq=False)
class Contacts:
    """A contact list (n contacts) of a model's geoms at one configuration.

    ``geoms``: the :class:`~multibody.model.geometry.Geoms` they come from; per contact ``pair``
    (index into ``geoms.pairs``), ``geom_a``, ``geom_b``, ``body_a``, ``body_b`` (−1: static),
    ``position`` (n, 3) world midpoint, ``normal`` (n, 3) unit, from a into b, ``depth`` (n,)
    penetration [m], ``friction`` (n, 3) sliding, torsional, rolling, ``condim`` (n,) and
    ``margin`` (n,) of the pair; ``slot`` (n,), where a run keeps the contact's state and records its
    force (``traj.contact_forces[k, slot]``): ``geoms.slot_start[pair] +`` the point's feature mod the
    pair's slots where the collider names fixed points (a box's corner, a capsule's end, a cylinder's
    rim point, a convex mesh's vertex on a plane: a point keeps its slot as the others touch down or as
    the shape rocks; of two vertices sharing that number the lower takes it, the other the next free
    one), else its place among the pair's points.
    """
    geoms: Geoms
    pair: Any
    position: Any
    normal: Any
    depth: Any
    slot: Any = None

    def __len__(self):
        return len(self.pair)

    @property
    def geom_a(self):
        return self.geoms.pairs[self.pair, 0]

    @property
    def geom_b(self):
        return self.geoms.pairs[self.pair, 1]

    @property
    def body_a(self):
        return self.geoms.body[self.geom_a]

    @property
    def body_b(self):
        return self.geoms.body[self.geom_b]

    @property
    def friction(self):
        return self.geoms.pair_friction[self.pair]

    @property
    def condim(self):
        return self.geoms.pair_condim[self.pair]

    @property
    def margin(self):
        return self.geoms.pair_margin[self.pair]

    @property
    def geom_names(self):
        """(name of geom a, name of geom b) per contact."""
        n = self.geoms.names
        return [(n[a], n[b]) for a, b in zip(self.geom_a, self.geom_b)]

    @property
    def bodies(self):
        """(body a, body b) per contact (−1: static)."""
        return [(int(a), int(b)) for a, b in zip(self.body_a, self.body_b)]


def scene_geoms(model, ground=False):
    """The geoms a model's contacts come from: ``model.geoms`` (or its collision geometry's), with a
    static plane z = 0 added when ``ground`` is True (a number: the plane's height)."""
    _checks.model(model)
    geoms = model_geoms(model)
    if ground is False or ground is None:
        return geoms
    height = 0.0 if ground is True else _checks.number("ground", ground)
    # the floored table is kept with the model per height (Model and Geoms are immutable, the arrays
    # read-only): each run's SceneContact takes the same one, its hulls packed once (issue 33)
    floored = model.__dict__.get("_scene_geoms")
    if floored is None:
        floored = model.__dict__["_scene_geoms"] = {}
    key = (id(geoms), height)
    got = floored.get(key)
    if got is None or got[0] is not geoms:
        if len(floored) >= 8:
            floored.pop(next(iter(floored)))
        got = floored[key] = (geoms, geoms.with_ground() if ground is True else geoms.with_ground(height=height))
    return got[1]


def contacts(model, q, ground=False, geoms=None) -> Contacts:
    """The contacts of the model's collision geoms at configuration ``q`` (module notes).

    Parameters
    ----------
    model : Model
    q : (nq,) configuration
    ground : bool or float
        add a static plane z = 0 (or z = ``ground``) that meets every geom on a body, for a
        robot file without a floor (URDF).
    geoms : Geoms, optional
        the geoms to collide instead of the model's (e.g. one made once with :func:`scene_geoms`).

    Returns
    -------
    Contacts
        every contact point of every candidate pair, MuJoCo's conventions (module notes).

    Example
    -------
    >>> import multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.09">'
    ...                  '<freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>')
    >>> c = mb.contacts(m, m.q_default)          # a ball of radius 0.1 with its centre 0.09 above the floor
    >>> len(c), c.depth.round(12).tolist(), c.normal.tolist(), c.position.round(12).tolist()
    (1, [0.01], [[0.0, 0.0, 1.0]], [[0.0, 0.0, -0.005]])
    """
    _checks.model(model)
    model._require_numeric()
    if geoms is None:
        geoms = scene_geoms(model, ground)
    elif not isinstance(geoms, Geoms):
        raise TypeError(f"geoms: expected a multibody.model.geometry.Geoms, got {type(geoms).__name__}")
    if len(geoms) and geoms.body.max() >= model.nb:
        raise ValueError(f"geoms: a geom is on body {int(geoms.body.max())}; the model has {model.nb} bodies")
    pair, pos, normal, depth, slot = _core.scene_contacts(model._c, q, *geoms.packed)
    return Contacts(geoms, pair, pos, normal, depth, slot)


def lift_onto_ground(model, q, ground=True) -> np.ndarray:
    """``q`` with each floating base whose collision geoms start inside the floor z = ``ground``
    raised until its lowest geom touches it (other coordinates, and a base above the floor, as given).

    A URDF's neutral configuration has its base at the origin, half the robot under a floor added
    with ``ground=True``; ``mb.simulate`` and the CLI start a run from the default state this way.
    The lowest point of each geom is its depth below a plane placed above the whole model (the
    floor's own narrow phase, so every shape, hull and margin is measured as contact sees it).

    Parameters
    ----------
    model : Model
    q : (nq,) configuration
    ground : True or float
        the floor's height (True: z = 0), as ``mb.contacts``' ``ground``.

    Returns
    -------
    (nq,) array
        the configuration, its free roots' z raised where they penetrated the floor.

    Raises
    ------
    ValueError
        ``q`` of the wrong length or not finite, or a ``ground`` that is neither True nor a finite number.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> b = mb.ModelBuilder()
    >>> ball = b.add_body("ball", parent=None, joint="free", mass=1.0, inertia=np.eye(3) * 1e-3)
    >>> b.add_geometry(mb.Geometry(ball, "sphere", (0.1,), role="collision", name="ball"))
    >>> model = b.build()
    >>> mb.lift_onto_ground(model, model.neutral())[:3].round(12).tolist()      # the ball's centre 0.1 up
    [0.0, 0.0, 0.1]
    >>> mb.lift_onto_ground(model, [0, 0, 0.5, 1, 0, 0, 0])[:3].tolist()        # above the floor: as given
    [0.0, 0.0, 0.5]
    """
    _checks.model(model)
    model._require_numeric()
    q = _checks.vector("q", q, model.nq)
    if ground is True or ground is False or ground is None:
        height = 0.0
    else:
        height = _checks.number("ground", ground)
    from ..model.joints import JointType
    roots = [b for b in range(model.nb) if model.parent[b] < 0 and model.jtype[b] == JointType.FREE]
    geoms = model_geoms(model)
    if not roots or not len(geoms):
        return q
    root_of = np.arange(model.nb)
    for b in range(model.nb):          # parents come before their children
        if model.parent[b] >= 0:
            root_of[b] = root_of[model.parent[b]]
    # a plane above every geom: the highest body origin plus far more than any geom's reach from it
    from . import body_states
    above = float(np.asarray(body_states(model, q).p)[:, 2].max()) + 1e3
    floored = geoms.with_ground(height=above)
    c = contacts(model, q, geoms=floored)
    on_plane = c.geom_a == len(floored) - 1
    for r in roots:
        mine = on_plane & (root_of[c.body_b] == r)
        if np.any(mine):
            lowest = above - float(c.depth[mine].max())
            if lowest < height:
                q[model.q_start[r] + 2] += height - lowest
    return q
