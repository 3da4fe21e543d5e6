"""Jacobians of bodies, points and the centre of mass, and their bias terms J̇·q̇."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import OK, PARENT, VS, NVJ, check_configuration, tree_poses, world_poses
from .forward import _point, body_states

FRAMES = ("world_aligned", "local", "world")


@njit(cache=True)
def jacobian_batch(ti, tf, S, Q, body, point, frame, J):
    """Columns [ω; v_P] of the body's ancestors' dofs; P = point (body coordinates).

    frame 0: world-aligned (ω and v_P in world coordinates); 1: local (body coordinates);
    2: world/spatial (v at the world origin, like Pinocchio's WORLD).
    """
    nb = ti.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    R0 = np.empty((nb, 3, 3))
    p0 = np.empty((nb, 3))
    P = np.empty(3)
    w = np.empty(3)
    u = np.empty(3)
    for n in range(J.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        tree_poses(ti, tf, q, R, p)
        world_poses(ti, R, p, R0, p0)
        Jn = J[n]
        Jn[:, :] = 0.0
        for r in range(3):
            if frame == 2:
                P[r] = 0.0
            else:
                P[r] = p0[body, r] + R0[body, r, 0] * point[0] + R0[body, r, 1] * point[1] \
                    + R0[body, r, 2] * point[2]
        j = body
        while j >= 0:
            for k in range(ti[j, VS], ti[j, VS] + ti[j, NVJ]):
                for r in range(3):
                    w[r] = R0[j, r, 0] * S[k, 0] + R0[j, r, 1] * S[k, 1] + R0[j, r, 2] * S[k, 2]
                    u[r] = R0[j, r, 0] * S[k, 3] + R0[j, r, 1] * S[k, 4] + R0[j, r, 2] * S[k, 5]
                d0 = P[0] - p0[j, 0]
                d1 = P[1] - p0[j, 1]
                d2 = P[2] - p0[j, 2]
                u[0] += w[1] * d2 - w[2] * d1
                u[1] += w[2] * d0 - w[0] * d2
                u[2] += w[0] * d1 - w[1] * d0
                if frame == 1:  # rotate into body coordinates
                    for r in range(3):
                        Jn[r, k] = R0[body, 0, r] * w[0] + R0[body, 1, r] * w[1] + R0[body, 2, r] * w[2]
                        Jn[3 + r, k] = R0[body, 0, r] * u[0] + R0[body, 1, r] * u[1] + R0[body, 2, r] * u[2]
                else:
                    for r in range(3):
                        Jn[r, k] = w[r]
                        Jn[3 + r, k] = u[r]
            j = ti[j, PARENT]
    return OK


def body_jacobian(model, q, body, point=(0.0, 0.0, 0.0), frame="world_aligned"):
    """Jacobian (…, 6, nv) mapping q̇ to [ω; v_P] of ``body`` at ``point`` (body coordinates).

    ``frame``: ``"world_aligned"`` (vectors in world coordinates, Pinocchio's LOCAL_WORLD_ALIGNED),
    ``"local"`` (body coordinates, Pinocchio's LOCAL) or ``"world"`` (spatial velocity with the
    linear part at the world origin, Pinocchio's WORLD).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> J = mb.body_jacobian(mb.models.planar(2), [0.0, 0.0], "link2", point=[1, 0, 0])
    >>> J[3:5].round(6).tolist()   # tip velocity in the plane
    [[0.0, 0.0], [2.0, 1.0]]
    """
    if frame not in FRAMES:
        raise ValueError(f"frame: expected one of {FRAMES}, got {frame!r}")
    i = model.body_index(body)
    if i < 0:
        raise ValueError("body: the fixed base has no Jacobian")
    r = _point("point", point)
    args, batch = B.states(model, q=q)
    ti, tf, S, _ = model._packed
    J = np.empty((B.batch_size(batch), 6, model.nv))
    B.raise_for(jacobian_batch(ti, tf, S, args["q"], i, r, FRAMES.index(frame), J))
    return J.reshape(batch + (6, model.nv))


def point_jacobian(model, q, body, point=(0.0, 0.0, 0.0), frame="world_aligned"):
    """Translational Jacobian (…, 3, nv) of a point fixed in ``body`` (proNEu I_J_P)."""
    if frame == "world":
        raise ValueError("frame: a point Jacobian is 'world_aligned' or 'local'")
    return body_jacobian(model, q, body, point, frame)[..., 3:, :]


def rotation_jacobian(model, q, body, frame="world_aligned"):
    """Rotational Jacobian (…, 3, nv) of ``body`` (proNEu I_Jr)."""
    return body_jacobian(model, q, body, (0.0, 0.0, 0.0), frame)[..., :3, :]


def jdot_qd(model, q, qd, body, point=(0.0, 0.0, 0.0), frame="world_aligned"):
    """Bias J̇·q̇ (…, 6) = [α; a_P] of ``body`` at ``point`` for q̈ = 0 (classical acceleration).

    ``frame`` as in :func:`body_jacobian` ('world_aligned' or 'local').
    """
    if frame not in FRAMES[:2]:
        raise ValueError("frame: J̇·q̇ is given 'world_aligned' or 'local'")
    i = model.body_index(body)
    r = _point("point", point)
    s = body_states(model, q, qd, np.zeros(model.nv))
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    al, a = s.a[..., i, :3], s.a[..., i, 3:]
    acc = a + np.cross(al, r) + np.cross(w, v + np.cross(w, r))
    out = np.concatenate([al, acc], axis=-1)
    if frame == "world_aligned":
        Rb = s.R[..., i, :, :]
        out = np.concatenate([np.einsum("...ij,...j->...i", Rb, out[..., :3]),
                              np.einsum("...ij,...j->...i", Rb, out[..., 3:])], axis=-1)
    return out


def center_of_mass(model, q):
    """Centre of mass of the whole tree in world coordinates (…, 3)."""
    s = body_states(model, q)
    x = s.p + np.einsum("...bij,bj->...bi", s.R, model.com)
    return np.einsum("b,...bi->...i", model.mass, x) / model.mass.sum()


def com_jacobian(model, q):
    """Jacobian (…, 3, nv) of the centre of mass: Σ m_i J_i(c_i) / M."""
    args, batch = B.states(model, q=q)
    ti, tf, S, _ = model._packed
    N = B.batch_size(batch)
    Jc = np.zeros((N, 3, model.nv))
    Jb = np.empty((N, 6, model.nv))
    for i in range(model.nb):  # over bodies, not states: each call loops the batch in compiled code
        if model.mass[i] == 0:
            continue
        B.raise_for(jacobian_batch(ti, tf, S, args["q"], i, np.ascontiguousarray(model.com[i]), 0, Jb))
        Jc += model.mass[i] * Jb[:, 3:, :]
    return (Jc / model.mass.sum()).reshape(batch + (3, model.nv))


def com_velocity(model, q, qd):
    """Velocity of the centre of mass (…, 3)."""
    s = body_states(model, q, qd)
    vc = s.v[..., 3:] + np.cross(s.v[..., :3], np.broadcast_to(model.com, s.v.shape[:-1] + (3,)))
    vw = np.einsum("...bij,...bj->...bi", s.R, vc)
    return np.einsum("b,...bi->...i", model.mass, vw) / model.mass.sum()
