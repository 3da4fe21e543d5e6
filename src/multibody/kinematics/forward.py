"""Forward kinematics: body poses, spatial velocities and accelerations, points and frames.

Poses are (R, p): R = A_IB rotates body coordinates into base (world) coordinates and p = I_r_OB
is the body origin in world coordinates (proNEu names).  Velocities here are body-coordinate
spatial vectors [ω; v] (RBDA), converted to world vectors where a function says so.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _boundary as B
from .. import _checks
from ..core import _core


@dataclass(frozen=True)
class BodyStates:
    """Per-body kinematics with the caller's batch dimensions.

    R (…, nb, 3, 3) A_IB; p (…, nb, 3) I_r_OB; v, a (…, nb, 6) spatial velocity and acceleration
    in body coordinates (gravity not included); None where not requested.
    """
    R: np.ndarray
    p: np.ndarray
    v: np.ndarray | None = None
    a: np.ndarray | None = None


def body_states(model, q, qd=None, qdd=None) -> BodyStates:
    """Poses of all bodies; with ``qd`` also velocities; with ``qdd`` also accelerations.

    The recursion is ``csrc/kernels/kinematics.c`` (``mb_body_states``).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> s = mb.body_states(mb.models.planar(2), [0.0, 0.0], [1.0, 0.0])
    >>> s.v[1].tolist()            # body 2 turns with body 1: [ω; v] in its own coordinates
    [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    """
    _checks.model(model)
    if qd is None:
        qdd = None
    c = model._c
    out = _core.body_states(c, q, qd, qdd)
    if out is None:
        args, batch = B.states(model, optional=("qd", "qdd"), q=q, qd=qd, qdd=qdd)
        out = _core.body_states(c, args["q"], args.get("qd"), args.get("qdd"))
        shp = lambda x, tail: None if x is None else x.reshape(batch + tail)  # noqa: E731
        out = (shp(out[0], (model.nb, 3, 3)), shp(out[1], (model.nb, 3)), shp(out[2], (model.nb, 6)),
               shp(out[3], (model.nb, 6)))
    return BodyStates(R=out[0], p=out[1], v=out[2], a=out[3])


def forward_kinematics(model, q):
    """Pose of every body: ``(R, p)`` with R = A_IB (…, nb, 3, 3) and p = I_r_OB (…, nb, 3).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> R, p = mb.forward_kinematics(mb.models.planar(2), [0.0, 0.0])
    >>> p[1].tolist()
    [1.0, 0.0, 0.0]
    """
    s = body_states(model, q)
    return s.R, s.p


def _point(name, point):
    return _checks.array(name, point, (3,), what="3 coordinates in body coordinates")


def _required(**arrays):
    """body_states reads a None rate as "not given"; where a rate is required, None is a TypeError
    naming it, as in every C entry point."""
    for name, x in arrays.items():
        if x is None:
            raise TypeError(f"{name}: expected an array of numbers, got None")


def point_position(model, q, body, point=(0.0, 0.0, 0.0)):
    """World position of a point fixed in ``body`` (given in body coordinates)."""
    _checks.model(model)
    i = model.body_index(body)
    r = _point("point", point)
    s = body_states(model, q)
    return s.p[..., i, :] + s.R[..., i, :, :] @ r


def point_velocity(model, q, qd, body, point=(0.0, 0.0, 0.0)):
    """World linear velocity of a point fixed in ``body``: R (v + ω × r)."""
    _checks.model(model)
    i = model.body_index(body)
    r = _point("point", point)
    _required(qd=qd)
    s = body_states(model, q, qd)
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    return np.einsum("...ij,...j->...i", s.R[..., i, :, :], v + np.cross(w, r))


def point_acceleration(model, q, qd, qdd, body, point=(0.0, 0.0, 0.0)):
    """World classical acceleration of a point fixed in ``body`` (gravity not included).

    With ``qdd = 0`` this is J̇·q̇ of the point Jacobian.
    """
    _checks.model(model)
    i = model.body_index(body)
    r = _point("point", point)
    _required(qd=qd, qdd=qdd)
    s = body_states(model, q, qd, qdd)
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    al, a = s.a[..., i, :3], s.a[..., i, 3:]
    vp = v + np.cross(w, r)
    acc = a + np.cross(al, r) + np.cross(w, vp)
    return np.einsum("...ij,...j->...i", s.R[..., i, :, :], acc)


def frame_pose(model, q, frame):
    """World pose (R, p) of a named frame: :func:`multibody.frame_placement` (this name came first)."""
    from .frames import frame_placement
    return frame_placement(model, q, frame)
