"""Frames by name: placement, velocity, acceleration and Jacobian of a frame fixed in a body.

A frame is found by :meth:`Model.frame <multibody.Model.frame>`: a URDF link (also one merged
into its parent by a fixed joint, e.g. the Panda's ``panda_hand``) or joint, an MJCF body or
site, or a body's own name.  F is fixed in body B at (A_BF, B_r_BF); B's pose and motion come from
the compiled recursion (``csrc/kernels/kinematics.c``: ``mb_body_states``, ``mb_jacobian``), and
the frame's follow by a rigid shift (RBDA §2.8).

``reference`` chooses the coordinates of the result, with Pinocchio's meanings
(``pin.ReferenceFrame``):

* ``"local"``: in F's own coordinates, linear part at F's origin (``LOCAL``);
* ``"local_world_aligned"``: in world coordinates, linear part at F's origin (``LOCAL_WORLD_ALIGNED``);
* ``"world"``: in world coordinates, linear part at the world origin — the spatial velocity of the
  body as seen at the origin (``WORLD``).

Spatial vectors are in this library's order, [angular; linear] (Pinocchio writes [linear;
angular]).  Two accelerations (Featherstone, RBDA §2.11): ``kind="spatial"`` is the derivative of
the spatial velocity in the chosen coordinates (Pinocchio's ``getFrameAcceleration``);
``kind="classical"`` adds ω × v to its linear part, so that in ``"local"`` and
``"local_world_aligned"`` it is the acceleration of F's origin (Pinocchio's
``getFrameClassicalAcceleration``, which applies the same rule to ``"world"``).
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from .forward import _required, body_states
from .jacobians import body_jacobian
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model

REFERENCES = ("local", "world", "local_world_aligned")
ACCELERATIONS = ("classical", "spatial")


def _frame(model, name):
    _checks.model(model)
    return model.frame(name)


def _apply(R, x):
    """R x for (…, 3, 3) and (…, 3)."""
    return np.einsum("...ij,...j->...i", R, x)


def frame_placement(model: Model, q: ArrayLike, name: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """World pose ``(R, p)`` of the frame ``name``: R = A_IF (…, 3, 3), p = I_r_OF (…, 3).

    Pinocchio's ``data.oMf[frame_id]`` after ``updateFramePlacements``.

    Parameters
    ----------
    model : Model
        The robot.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    name : str
        A frame's name (:meth:`Model.frame <multibody.Model.frame>`): a URDF link or joint, an MJCF
        body or site, or a body.

    Returns
    -------
    R : ndarray, shape (..., 3, 3)
        Orientation A_IF of the frame in the world.
    p : ndarray, shape (..., 3)
        Position of the frame's origin in the world, m.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        No frame has that name (the message lists close matches), an unknown ``reference``, or a
        wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> R, p = mb.frame_placement(m, [np.pi / 2, 0.0], "link2")
    >>> p.round(12).tolist()
    [0.0, 1.0, 0.0]
    """
    f = _frame(model, name)
    s = body_states(model, q)
    if f.body < 0:  # fixed in the base: index −1 must not pick the last body
        batch = s.p.shape[:-2]
        return (np.broadcast_to(f.rotation, batch + (3, 3)).copy(),
                np.broadcast_to(f.translation, batch + (3,)).copy())
    Rb, pb = s.R[..., f.body, :, :], s.p[..., f.body, :]
    return Rb @ f.rotation, pb + _apply(Rb, f.translation)


def _express(reference, f, Rb, pb, ang, lin):
    """[ang; lin] of a body motion at F's origin in body coordinates → ``reference`` (see the module notes)."""
    if reference == "local":
        At = f.rotation.T
        return np.concatenate([ang @ At.T, lin @ At.T], axis=-1)
    ang_w, lin_w = _apply(Rb, ang), _apply(Rb, lin)
    if reference == "world":  # shift the linear part from F's origin to the world origin: v_O = v_F + ω × (0 − p_F)
        pf = pb + _apply(Rb, f.translation)
        lin_w = lin_w - np.cross(ang_w, pf)
    return np.concatenate([ang_w, lin_w], axis=-1)


def _zeros(model, q, shape):
    """Zeros (…, *shape) for a frame welded to the fixed base, with q's batch (q checked as anywhere)."""
    return np.zeros(body_states(model, q).p.shape[:-2] + shape)


def frame_velocity(model: Model, q: ArrayLike, qd: ArrayLike, name: str, reference: str = "local"
                  ) -> NDArray[np.float64]:
    """Spatial velocity [ω; v] (…, 6) of the frame ``name`` in ``reference`` coordinates.

    Pinocchio's ``getFrameVelocity`` (order [v; ω] there).  In ``"local"`` and
    ``"local_world_aligned"`` v is the velocity of the frame's origin.

    Parameters
    ----------
    model : Model
        The robot.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    qd : array_like, shape (nv,) or (..., nv)
        Velocity.
    name : str
        A frame's name (:meth:`Model.frame <multibody.Model.frame>`): a URDF link or joint, an MJCF
        body or site, or a body.
    reference : {"local", "world", "local_world_aligned"}
        Coordinates of the result (module notes; Pinocchio's ``LOCAL``, ``WORLD``,
        ``LOCAL_WORLD_ALIGNED``).

    Returns
    -------
    ndarray, shape (..., 6)
        [ω; v]: rad/s and m/s.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        No frame has that name (the message lists close matches), an unknown ``reference``, or a
        wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> mb.frame_velocity(m, [0.0, 0.0], [1.0, 0.0], "link2", "local_world_aligned").tolist()
    [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    """
    f = _frame(model, name)
    _checks.one_of("reference", reference, REFERENCES)
    _required(qd=qd)
    s = body_states(model, q, qd)
    if f.body < 0:
        return np.zeros(s.v.shape[:-2] + (6,))
    i = f.body
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    return _express(reference, f, s.R[..., i, :, :], s.p[..., i, :], w, v + np.cross(w, f.translation))


def frame_acceleration(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, name: str,
                       reference: str = "local", kind: str = "classical") -> NDArray[np.float64]:
    """Acceleration [α; a] (…, 6) of the frame ``name`` in ``reference`` coordinates (gravity not included).

    ``kind="classical"`` (default): in ``"local"`` and ``"local_world_aligned"``, ``a`` is the
    acceleration of the frame's origin (Pinocchio's ``getFrameClassicalAcceleration``);
    ``kind="spatial"``: the spatial acceleration (Pinocchio's ``getFrameAcceleration``).  With
    q̈ = 0 the classical one is J̇·q̇.

    Parameters
    ----------
    model : Model
        The robot.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    qd : array_like, shape (nv,) or (..., nv)
        Velocity.
    qdd : array_like, shape (nv,) or (..., nv)
        Acceleration.
    name : str
        A frame's name (:meth:`Model.frame <multibody.Model.frame>`): a URDF link or joint, an MJCF
        body or site, or a body.
    reference : {"local", "world", "local_world_aligned"}
        Coordinates of the result (module notes; Pinocchio's ``LOCAL``, ``WORLD``,
        ``LOCAL_WORLD_ALIGNED``).
    kind : {"classical", "spatial"}
        The classical acceleration of the frame's origin, or the spatial acceleration.

    Returns
    -------
    ndarray, shape (..., 6)
        [α; a]: rad/s² and m/s².

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        No frame has that name (the message lists close matches), an unknown ``reference``, or a
        wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)          # turning at 1 rad/s: the tip of link 2 accelerates inwards
    >>> a = mb.frame_acceleration(m, [0.0, 0.0], [1.0, 0.0], [0.0, 0.0], "link2", "local_world_aligned")
    >>> a.round(12).tolist()
    [0.0, 0.0, 0.0, -1.0, 0.0, 0.0]
    """
    f = _frame(model, name)
    _checks.one_of("reference", reference, REFERENCES)
    _checks.one_of("kind", kind, ACCELERATIONS)
    _required(qd=qd, qdd=qdd)
    s = body_states(model, q, qd, qdd)
    if f.body < 0:
        return np.zeros(s.v.shape[:-2] + (6,))
    i, r = f.body, f.translation
    Rb, pb = s.R[..., i, :, :], s.p[..., i, :]
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    al, a = s.a[..., i, :3], s.a[..., i, 3:]
    out = _express(reference, f, Rb, pb, al, a + np.cross(al, r))   # spatial: a rigid shift, no ω × v
    if kind == "classical":
        vel = _express(reference, f, Rb, pb, w, v + np.cross(w, r))
        out[..., 3:] += np.cross(vel[..., :3], vel[..., 3:])
    return out


def frame_jacobian(model: Model, q: ArrayLike, name: str, reference: str = "local") -> NDArray[np.float64]:
    """Jacobian (…, 6, nv) of the frame ``name``: ``frame_velocity(model, q, qd, name, reference) == J @ qd``.

    Pinocchio's ``getFrameJacobian`` (rows [v; ω] there, columns in its velocity order: see
    :mod:`multibody.pinocchio`).  Computed by the compiled Jacobian kernel at the frame's origin.

    Parameters
    ----------
    model : Model
        The robot.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    name : str
        A frame's name (:meth:`Model.frame <multibody.Model.frame>`): a URDF link or joint, an MJCF
        body or site, or a body.
    reference : {"local", "world", "local_world_aligned"}
        Coordinates of the result (module notes; Pinocchio's ``LOCAL``, ``WORLD``,
        ``LOCAL_WORLD_ALIGNED``).

    Returns
    -------
    ndarray, shape (..., 6, nv)
        Rows [ω; v], one column per velocity variable.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        No frame has that name (the message lists close matches), an unknown ``reference``, or a
        wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> J = mb.frame_jacobian(mb.models.planar(2), [0.0, 0.0], "link2", "local_world_aligned")
    >>> J[3:5].tolist()             # the origin of link 2 moves with joint 1 only
    [[0.0, 0.0], [1.0, 0.0]]
    """
    f = _frame(model, name)
    _checks.one_of("reference", reference, REFERENCES)
    if f.body < 0:
        return _zeros(model, q, (6, model.nv))
    if reference == "world":
        return body_jacobian(model, q, f.body, frame="world")
    J = body_jacobian(model, q, f.body, point=f.translation,
                      frame="local" if reference == "local" else "world_aligned")
    if reference == "local":   # body coordinates → the frame's: A_BFᵀ on both halves
        At = f.rotation.T
        J = np.concatenate([At @ J[..., :3, :], At @ J[..., 3:, :]], axis=-2)
    return J
