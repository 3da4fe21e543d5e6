"""Forward kinematics: body poses, spatial velocities and accelerations, points and frames.

Poses are (R, p): R = A_IB rotates body coordinates into base (world) coordinates and p = I_r_OB
is the body origin in world coordinates (proNEu names).  Velocities here are body-coordinate
spatial vectors [ω; v] (RBDA), converted to world vectors where a function says so.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import (BAD_QD, BAD_QDD, OK, PARENT, VS, NVJ, all_finite, check_configuration,
                                 cross_motion, motion_to_child, tree_poses, world_poses)


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


@njit(cache=True)
def kinematics_batch(ti, tf, S, Q, QD, QDD, order, R0, P0, V, A):
    """order 0: poses; 1: + velocities; 2: + accelerations (no gravity)."""
    nb = ti.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    vJ = np.empty(6)
    tmp = np.empty(6)
    for n in range(R0.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        tree_poses(ti, tf, q, R, p)
        world_poses(ti, R, p, R0[n], P0[n])
        if order == 0:
            continue
        qd = QD[min(n, QD.shape[0] - 1)]
        qdd = QDD[min(n, QDD.shape[0] - 1)]
        if not all_finite(qd):
            return BAD_QD
        if order > 1 and not all_finite(qdd):
            return BAD_QDD
        v = V[n]
        a = A[n]
        for i in range(nb):
            par = ti[i, PARENT]
            vJ[:] = 0.0
            for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
                for r in range(6):
                    vJ[r] += S[k, r] * qd[k]
            if par < 0:
                v[i] = vJ
                a[i] = 0.0
            else:
                motion_to_child(R[i], p[i], v[par], tmp)
                for r in range(6):
                    v[i, r] = tmp[r] + vJ[r]
                if order > 1:
                    motion_to_child(R[i], p[i], a[par], a[i])
                    cross_motion(v[i], vJ, tmp)
                    for r in range(6):
                        a[i, r] += tmp[r]
            if order > 1:
                for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
                    for r in range(6):
                        a[i, r] += S[k, r] * qdd[k]
    return OK


def body_states(model, q, qd=None, qdd=None) -> BodyStates:
    """Poses of all bodies; with ``qd`` also velocities; with ``qdd`` also accelerations."""
    order = 0 if qd is None else (1 if qdd is None else 2)
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd)
    ti, tf, S, _ = model._packed
    N = B.batch_size(batch)
    R0 = np.empty((N, model.nb, 3, 3))
    P0 = np.empty((N, model.nb, 3))
    V = np.empty((N if order else 0, model.nb, 6))
    A = np.zeros((N if order > 1 else 0, model.nb, 6)) if order > 1 else np.empty((N if order else 0, model.nb, 6))
    dummy = np.zeros((1, model.nv))
    B.raise_for(kinematics_batch(ti, tf, S, args["q"], args.get("qd", dummy), args.get("qdd", dummy),
                                 order, R0, P0, V, A))
    shp = lambda x, tail: x.reshape(batch + tail)  # noqa: E731
    return BodyStates(R=shp(R0, (model.nb, 3, 3)), p=shp(P0, (model.nb, 3)),
                      v=shp(V, (model.nb, 6)) if order else None, a=shp(A, (model.nb, 6)) if order > 1 else None)


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
    a = np.asarray(point, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected 3 finite coordinates in body coordinates, got {point!r}")
    return a


def point_position(model, q, body, point=(0.0, 0.0, 0.0)):
    """World position of a point fixed in ``body`` (given in body coordinates)."""
    i = model.body_index(body)
    r = _point("point", point)
    s = body_states(model, q)
    return s.p[..., i, :] + s.R[..., i, :, :] @ r


def point_velocity(model, q, qd, body, point=(0.0, 0.0, 0.0)):
    """World linear velocity of a point fixed in ``body``: R (v + ω × r)."""
    i = model.body_index(body)
    r = _point("point", point)
    s = body_states(model, q, qd)
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    return np.einsum("...ij,...j->...i", s.R[..., i, :, :], v + np.cross(w, r))


def point_acceleration(model, q, qd, qdd, body, point=(0.0, 0.0, 0.0)):
    """World classical acceleration of a point fixed in ``body`` (gravity not included).

    With ``qdd = 0`` this is J̇·q̇ of the point Jacobian.
    """
    i = model.body_index(body)
    r = _point("point", point)
    s = body_states(model, q, qd, qdd)
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    al, a = s.a[..., i, :3], s.a[..., i, 3:]
    vp = v + np.cross(w, r)
    acc = a + np.cross(al, r) + np.cross(w, vp)
    return np.einsum("...ij,...j->...i", s.R[..., i, :, :], acc)


def frame_pose(model, q, frame):
    """World pose (R, p) of a named frame."""
    f = model.frame(frame)
    s = body_states(model, q)
    if f.body < 0:  # fixed in the base: index −1 must not pick the last body
        batch = s.p.shape[:-2]
        return (np.broadcast_to(f.rotation, batch + (3, 3)).copy(),
                np.broadcast_to(f.translation, batch + (3,)).copy())
    Rb, pb = s.R[..., f.body, :, :], s.p[..., f.body, :]
    return Rb @ f.rotation, pb + Rb @ f.translation
