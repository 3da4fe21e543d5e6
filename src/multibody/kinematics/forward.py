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
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model


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
    """Poses of all bodies; with ``qd`` also their velocities; with ``qdd`` also their accelerations.

    The forward recursion of RBDA §3.3 (``csrc/kernels/kinematics.c``, ``mb_body_states``).

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    qd : array_like, shape (nv,) or (..., nv), optional
        Joint velocities; without them only poses are computed.
    qdd : array_like, shape (nv,) or (..., nv), optional
        Joint accelerations (used only with ``qd``).

    Returns
    -------
    BodyStates
        ``R`` (..., nb, 3, 3) = A_IB, ``p`` (..., nb, 3) = I_r_OB in m, and ``v``, ``a`` (..., nb, 6):
        spatial velocity and acceleration [ω; v] in body coordinates (gravity not included), None
        where not requested.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        A wrong shape, NaN or inf in the arrays.

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


def forward_kinematics(model: Model, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Pose of every body: ``(R, p)`` with R = A_IB and p = I_r_OB.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).

    Returns
    -------
    R : ndarray, shape (..., nb, 3, 3)
        Orientation A_IB of each body in the world.
    p : ndarray, shape (..., nb, 3)
        Position of each body's origin in the world, m.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        A wrong shape, NaN or inf in the arrays.

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


def point_position(model: Model, q: ArrayLike, body: str | int, point: ArrayLike = (0.0, 0.0, 0.0)
                  ) -> NDArray[np.float64]:
    """World position of a point fixed in ``body``.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    body : str or int
        The body's name (a URDF link, an MJCF body) or its index (−1 is the fixed base).
    point : array_like, shape (3,), optional
        The point in body coordinates, m (default the body's origin).

    Returns
    -------
    ndarray, shape (..., 3)
        The point in world coordinates, m.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        An unknown body (the message lists the bodies), a wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.point_position(mb.models.planar(2), [np.pi / 2, 0.0], "link2", [1, 0, 0]).round(12).tolist()
    [0.0, 2.0, 0.0]
    """
    _checks.model(model)
    i = model.body_index(body)
    r = _point("point", point)
    s = body_states(model, q)
    return s.p[..., i, :] + s.R[..., i, :, :] @ r


def point_velocity(model: Model, q: ArrayLike, qd: ArrayLike, body: str | int,
                   point: ArrayLike = (0.0, 0.0, 0.0)) -> NDArray[np.float64]:
    """World linear velocity R (v + ω × r) of a point fixed in ``body``.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    qd : array_like, shape (nv,) or (..., nv)
        Joint velocities.
    body : str or int
        The body's name (a URDF link, an MJCF body) or its index (−1 is the fixed base).
    point : array_like, shape (3,), optional
        The point in body coordinates, m (default the body's origin).

    Returns
    -------
    ndarray, shape (..., 3)
        The point's velocity in world coordinates, m/s.

    Raises
    ------
    TypeError
        ``model`` is not a Model, an array argument is not numeric, or ``qd`` is None.
    ValueError
        An unknown body (the message lists the bodies), a wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.point_velocity(mb.models.planar(2), [0.0, 0.0], [1.0, 0.0], "link2", [1, 0, 0]).tolist()
    [0.0, 2.0, 0.0]
    """
    _checks.model(model)
    i = model.body_index(body)
    r = _point("point", point)
    _required(qd=qd)
    s = body_states(model, q, qd)
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    return np.einsum("...ij,...j->...i", s.R[..., i, :, :], v + np.cross(w, r))


def point_acceleration(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, body: str | int,
                       point: ArrayLike = (0.0, 0.0, 0.0)) -> NDArray[np.float64]:
    """World classical acceleration of a point fixed in ``body`` (gravity not included).

    With ``qdd = 0`` this is J̇·q̇ of the point Jacobian.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    qd : array_like, shape (nv,) or (..., nv)
        Joint velocities.
    qdd : array_like, shape (nv,) or (..., nv)
        Joint accelerations.
    body : str or int
        The body's name (a URDF link, an MJCF body) or its index (−1 is the fixed base).
    point : array_like, shape (3,), optional
        The point in body coordinates, m (default the body's origin).

    Returns
    -------
    ndarray, shape (..., 3)
        The point's acceleration in world coordinates, m/s².

    Raises
    ------
    TypeError
        ``model`` is not a Model, an array argument is not numeric, or ``qd`` or ``qdd`` is None.
    ValueError
        An unknown body (the message lists the bodies), a wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> mb.point_acceleration(m, [0.0, 0.0], [1.0, 0.0], [0.0, 0.0], "link2", [1, 0, 0]).tolist()  # centripetal
    [-2.0, 0.0, 0.0]
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


def frame_pose(model: Model, q: ArrayLike, frame: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """World pose (R, p) of a named frame: :func:`multibody.frame_placement` (this name came first).

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    frame : str
        A frame's name: a URDF link or joint, an MJCF body or site, or a body.

    Returns
    -------
    R : ndarray, shape (..., 3, 3)
        Orientation of the frame in the world.
    p : ndarray, shape (..., 3)
        Position of the frame's origin in the world, m.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        No frame has that name, a wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> R, p = mb.frame_pose(mb.models.planar(2), [np.pi / 2, 0.0], "link2")
    >>> p.round(12).tolist()
    [0.0, 1.0, 0.0]
    """
    from .frames import frame_placement
    return frame_placement(model, q, frame)
