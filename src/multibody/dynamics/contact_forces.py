"""The compliant contact law on a contact list: ``mb.contact_forces(model, q, qd, contacts, K, D, u)``.

The law of :class:`multibody.GroundContact` (Azad & Featherstone, ACRA 2010; spatial_v2's
``gcontact``), taken from "a point below the ground z = 0" to "a contact of two geoms with a
normal and a depth" (:func:`multibody.contacts`).  With d the depth, n the normal (from geom a
into geom b), v = v_b − v_a the two bodies' relative velocity at the contact point and t1, t2 the
contact's tangent axes (t1 along x made orthogonal to n, or along y when n is near ±x;
t2 = n × t1 — for n = z they are the ground contact's x and y)::

    f_n = √d (K d − D n·v)               clipped at 0: contact only pushes
    sticking   f_t = −√d (K u + D v_t),  u̇ = v_t
    sliding    |f_t| > μ f_n: f_t scaled onto μ f_n,  u̇ = −(f_t / √d + K u) / D
    apart      f = 0,  u̇ = −(K / D) u
    μ = 0      (condim 1, or no sliding friction): f_t = 0, u̇ = 0

u (n, 2) is each contact's tangential deformation (the law's state, in t1, t2), μ the pair's
sliding friction.  f = f_n n + f_t acts on body b at the contact point and −f on body a; the
result ``f_ext`` (nb, 6) holds them as spatial forces about the base origin in base coordinates,
as every dynamics function and the simulation loop take them.  The arithmetic is C
(``csrc/sim/scene_contact.c``, the loop's), one state at a time.

Example
-------
>>> import numpy as np, multibody as mb
>>> b = mb.ModelBuilder()
>>> ball = b.add_body("ball", parent=None, joint="free", mass=1.0, inertia=np.eye(3) * 1e-3)
>>> b.add_geometry(mb.Geometry(ball, "sphere", (0.1,), role="collision", name="ball"))
>>> model = b.build()
>>> q = np.array([0.0, 0.0, 0.099, 1, 0, 0, 0])        # 1 mm into the floor, at rest
>>> c = mb.contacts(model, q, ground=True)
>>> f = mb.contact_forces(model, q, np.zeros(6), c, stiffness=1e7, damping=1e5)
>>> round(float(f.force[0, 2]), 6), round(1e7 * 1e-3 ** 1.5, 6)   # K d^1.5 up, on the ball
(316.227766, 316.227766)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _checks
from ..core import _core

__all__ = ["ContactForces", "contact_forces"]


@dataclass(frozen=True)
class ContactForces:
    """The compliant law's result: ``f_ext`` (nb, 6) on the bodies, ``udot`` (n, 2) the rate of
    each contact's tangential deformation, ``force`` (n, 3) the world force on geom b's body,
    ``state`` (n,) 0 apart, 1 sticking, 2 sliding."""
    f_ext: Any
    udot: Any
    force: Any
    state: Any


def contact_forces(model, q, qd, contacts, stiffness, damping, u=None) -> ContactForces:
    """The compliant law's forces on a contact list (module notes).

    Parameters
    ----------
    model : Model
        The model the contacts were found on.
    q : array_like, shape (nq,)
        Configuration (the one :func:`multibody.contacts` was called at).
    qd : array_like, shape (nv,)
        Velocity.
    contacts : Contacts
        :func:`multibody.contacts` at this ``q``.
    stiffness : float
        K, N/m^1.5 (:func:`multibody.contact_parameters` picks K and D from a weight, a static
        depth and a damping ratio).
    damping : float
        D, N·s/m^1.5; positive when a contact has friction.
    u : array_like, shape (n, 2), optional
        The contacts' tangential deformations, m (default zero: contacts just made).

    Returns
    -------
    ContactForces
        ``f_ext`` (nb, 6) spatial forces on the bodies about the base origin in base coordinates
        (what the simulator's ``f_ext`` takes), ``udot`` (n, 2) the deformations' rates, ``force``
        (n, 3) each contact's force on body b in world coordinates, ``state`` (n,) each contact's
        state (0 apart, 1 sticking, 2 sliding).

    Raises
    ------
    TypeError
        ``model`` is not a Model or ``contacts`` is not a Contacts record.
    ValueError
        A negative or non-finite stiffness or damping, zero damping with friction, or arrays of the
        wrong shape.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.09">'
    ...                  '<freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>')
    >>> c = mb.contacts(m, m.q_default)
    >>> f = mb.contact_forces(m, m.q_default, np.zeros(m.nv), c, stiffness=1e5, damping=100.0)
    >>> f.force.round(9).tolist()        # K·depth^1.5 = 1e5 · 0.01^1.5, straight up
    [[0.0, 0.0, 100.0]]
    """
    _checks.model(model)
    model._require_numeric()
    if not all(hasattr(contacts, k) for k in ("geoms", "pair", "position", "normal", "depth")):
        raise TypeError(f"contacts: expected a multibody.kinematics.contacts.Contacts (mb.contacts), "
                        f"got {type(contacts).__name__}")
    K = _checks.number("stiffness", stiffness, nonneg=True)
    D = _checks.number("damping", damping, nonneg=True)
    n = len(contacts)
    u = np.zeros((n, 2)) if u is None else u
    f, ud, F, state = _core.scene_forces(model._c, q, qd, *contacts.geoms.packed, contacts.pair, contacts.position,
                                         contacts.normal, contacts.depth, K, D, u)
    return ContactForces(f, ud, F, state)
