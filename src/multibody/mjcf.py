"""MJCF models and MuJoCo states: ``mb.mjcf``.

A model read by :func:`load_mjcf` has MuJoCo's joints in MuJoCo's order, and q is MuJoCo's
``qpos`` for every joint (free: [x y z w qx qy qz], ball: [w qx qy qz]).  Velocities agree too,
except on free joints, where the two conventions differ:

* MuJoCo: qvel = [v; ω] with v the body origin's velocity in **world** coordinates and ω in body
  coordinates;
* here:   q̇ = [ω; v] with both in **body** coordinates (the spatial velocity of the body).

So qvel = [R v; ω], and for accelerations qacc = [R (v̇ + ω × v); ω̇] (the time derivative of
R v).  :func:`to_mujoco_state` and :func:`from_mujoco_state` convert both ways, for one state
or a batch (leading dimensions).
"""
from __future__ import annotations

import numpy as np

from . import _checks
from .model.joints import JointType
from .model.mjcf import MJCFError, MJCFWarning, from_mjmodel, load_mjcf
from .spatial.rotations import unit_quaternion

__all__ = ["load_mjcf", "from_mjmodel", "MJCFError", "MJCFWarning", "to_mujoco_state", "from_mujoco_state"]


def _rotations(quat, name, qs):
    """Rotation matrices (…, 3, 3) of a free joint's quaternions (…, 4) [w, x, y, z], normalised here
    (without overflow at 1e200); a zero quaternion is an error naming where it sits in ``name``."""
    if not np.all(np.any(quat != 0, axis=-1)):
        raise ValueError(f"{name}: the free joint's quaternion {name}[..., {qs + 3}:{qs + 7}] is zero; expected a "
                         "nonzero quaternion [w, x, y, z]")
    quat = unit_quaternion(quat, name)
    w, x, y, z = np.moveaxis(quat, -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def _arrays(model, q, v, a, qname, vname, aname):
    _checks.model(model)
    q = _checks.array(qname, q, None, what=f"positions (…, {model.nq})")
    v = _checks.array(vname, v, None, what=f"velocities (…, {model.nv})")
    if q.ndim == 0 or q.shape[-1] != model.nq:
        raise ValueError(f"{qname}: expected shape (…, {model.nq}), got {q.shape}")
    if v.ndim == 0 or v.shape[-1] != model.nv:
        raise ValueError(f"{vname}: expected shape (…, {model.nv}), got {v.shape}")
    if a is not None:
        a = _checks.array(aname, a, None, what=f"accelerations (…, {model.nv})")
        if a.ndim == 0 or a.shape[-1] != model.nv:
            raise ValueError(f"{aname}: expected shape (…, {model.nv}), got {a.shape}")
    try:
        batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], () if a is None else a.shape[:-1])
    except ValueError:
        names, shapes = f"{qname}, {vname}", f"{q.shape[:-1]} and {v.shape[:-1]}"
        if a is not None:
            names, shapes = f"{names}, {aname}", f"{q.shape[:-1]}, {v.shape[:-1]} and {a.shape[:-1]}"
        raise ValueError(f"{names}: batch shapes {shapes} do not broadcast") from None
    q = np.broadcast_to(q, batch + (model.nq,)).copy()
    v = np.broadcast_to(v, batch + (model.nv,)).copy()
    a = None if a is None else np.broadcast_to(a, batch + (model.nv,)).copy()
    return q, v, a


def _free_joints(model):
    return [(int(model.q_start[i]), int(model.v_start[i])) for i in np.flatnonzero(model.jtype == JointType.FREE)]


def to_mujoco_state(model, q, qd, qdd=None):
    """MuJoCo's ``(qpos, qvel)`` — and ``qacc`` when ``qdd`` is given — for our (q, q̇[, q̈]).

    A free joint's velocity [ω; v] (both in body coordinates) becomes [R v; ω] (v in world
    coordinates, R the body's rotation), its acceleration [ω̇; v̇] becomes [R (v̇ + ω × v); ω̇];
    every other joint's entries are copied.

    Parameters
    ----------
    model : Model
        A numeric model, typically read by :func:`load_mjcf` (MuJoCo's joints in MuJoCo's order).
    q : array_like, shape (..., model.nq)
        Our joint positions (free-joint quaternions scalar-first, any nonzero magnitude).
    qd : array_like, shape (..., model.nv)
        Our joint velocities (rad/s, m/s).
    qdd : array_like, shape (..., model.nv), optional
        Our joint accelerations. The leading dimensions of q, qd, qdd broadcast.

    Returns
    -------
    tuple of ndarray
        ``(qpos, qvel)``, or ``(qpos, qvel, qacc)`` with ``qdd``; shapes (..., nq), (..., nv).

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`; an array is not real numbers.
    ValueError
        ``model`` is symbolic; an array whose last dimension is wrong, NaN or inf; batch shapes
        that do not broadcast; a free joint's quaternion that is zero.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><body><freejoint/><geom size="0.1"/></body></worldbody></mujoco>')
    >>> q = np.array([0, 0, 1, np.cos(0.5), 0, 0, np.sin(0.5)])          # turned 1 rad about z
    >>> qpos, qvel = mb.mjcf.to_mujoco_state(m, q, [0, 0, 2, 1, 0, 0])   # ω = 2 ez, v = ex (body)
    >>> qvel.round(6).tolist()                                           # [v (world); ω (body)]
    [0.540302, 0.841471, 0.0, 0.0, 0.0, 2.0]
    """
    qpos, qvel, qacc = _arrays(model, q, qd, qdd, "q", "qd", "qdd")
    for qs, vs in _free_joints(model):
        R = _rotations(qpos[..., qs + 3:qs + 7], "q", qs)
        om, v = qvel[..., vs:vs + 3].copy(), qvel[..., vs + 3:vs + 6].copy()
        qvel[..., vs:vs + 3] = np.einsum("...ij,...j->...i", R, v)
        qvel[..., vs + 3:vs + 6] = om
        if qacc is not None:
            omd, vd = qacc[..., vs:vs + 3].copy(), qacc[..., vs + 3:vs + 6].copy()
            qacc[..., vs:vs + 3] = np.einsum("...ij,...j->...i", R, vd + np.cross(om, v))
            qacc[..., vs + 3:vs + 6] = omd
    return (qpos, qvel) if qacc is None else (qpos, qvel, qacc)


def from_mujoco_state(model, qpos, qvel, qacc=None):
    """Our ``(q, q̇)`` — and ``q̈`` when ``qacc`` is given — for MuJoCo's (qpos, qvel[, qacc]).

    The inverse of :func:`to_mujoco_state`: a free joint's qvel [v_world; ω] becomes
    [ω; Rᵀ v_world], its qacc [a_world; ω̇] becomes [ω̇; Rᵀ a_world − ω × v].

    Parameters
    ----------
    model : Model
        A numeric model, typically read by :func:`load_mjcf`.
    qpos : array_like, shape (..., model.nq)
        MuJoCo's positions (``data.qpos``).
    qvel : array_like, shape (..., model.nv)
        MuJoCo's velocities (``data.qvel``).
    qacc : array_like, shape (..., model.nv), optional
        MuJoCo's accelerations (``data.qacc``). The leading dimensions broadcast.

    Returns
    -------
    tuple of ndarray
        ``(q, qd)``, or ``(q, qd, qdd)`` with ``qacc``.

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`; an array is not real numbers.
    ValueError
        ``model`` is symbolic; an array whose last dimension is wrong, NaN or inf; batch shapes
        that do not broadcast; a free joint's quaternion that is zero.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><body><freejoint/><geom size="0.1"/></body></worldbody></mujoco>')
    >>> qpos = np.array([0, 0, 1, np.cos(0.5), 0, 0, np.sin(0.5)])
    >>> q, qd = mb.mjcf.from_mujoco_state(m, qpos, [0.540302, 0.841471, 0, 0, 0, 2])
    >>> qd.round(6).tolist()                                             # [ω; v] (body)
    [0.0, 0.0, 2.0, 1.0, 0.0, 0.0]
    """
    q, qd, qdd = _arrays(model, qpos, qvel, qacc, "qpos", "qvel", "qacc")
    for qs, vs in _free_joints(model):
        Rt = np.swapaxes(_rotations(q[..., qs + 3:qs + 7], "qpos", qs), -1, -2)
        v_world, om = qd[..., vs:vs + 3].copy(), qd[..., vs + 3:vs + 6].copy()
        v = np.einsum("...ij,...j->...i", Rt, v_world)
        qd[..., vs:vs + 3], qd[..., vs + 3:vs + 6] = om, v
        if qdd is not None:
            a_world, omd = qdd[..., vs:vs + 3].copy(), qdd[..., vs + 3:vs + 6].copy()
            qdd[..., vs:vs + 3] = omd
            qdd[..., vs + 3:vs + 6] = np.einsum("...ij,...j->...i", Rt, a_world) - np.cross(om, v)
    return (q, qd) if qdd is None else (q, qd, qdd)
