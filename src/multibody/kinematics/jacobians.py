"""Jacobians of bodies, points and the centre of mass, and their bias terms J̇·q̇."""
from __future__ import annotations

import numpy as np

from .. import _boundary as B
from .. import _checks
from ..core import _core
from .forward import _point, _required, body_states

FRAMES = ("world_aligned", "local", "world")


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
    _checks.model(model)
    _checks.one_of("frame", frame, FRAMES)
    i = model.body_index(body)
    if i < 0:
        raise ValueError("body: the fixed base has no Jacobian")
    r = _point("point", point)
    c, code = model._c, FRAMES.index(frame)
    J = _core.jacobian(c, q, i, r, code)
    if J is not None:
        return J
    args, batch = B.states(model, q=q)
    return _core.jacobian(c, args["q"], i, r, code).reshape(batch + (6, model.nv))


def point_jacobian(model, q, body, point=(0.0, 0.0, 0.0), frame="world_aligned"):
    """Translational Jacobian (…, 3, nv) of a point fixed in ``body`` (proNEu I_J_P)."""
    _checks.model(model)
    if frame == "world":
        raise ValueError("frame: a point Jacobian is 'world_aligned' or 'local'")
    return body_jacobian(model, q, body, point, frame)[..., 3:, :]


def rotation_jacobian(model, q, body, frame="world_aligned"):
    """Rotational Jacobian (…, 3, nv) of ``body`` (proNEu I_Jr)."""
    _checks.model(model)
    return body_jacobian(model, q, body, (0.0, 0.0, 0.0), frame)[..., :3, :]


def jdot_qd(model, q, qd, body, point=(0.0, 0.0, 0.0), frame="world_aligned"):
    """Bias J̇·q̇ (…, 6) = [α; a_P] of ``body`` at ``point`` for q̈ = 0 (classical acceleration).

    ``frame`` as in :func:`body_jacobian` ('world_aligned' or 'local').
    """
    _checks.model(model)
    _checks.one_of("frame", frame, FRAMES[:2])
    i = model.body_index(body)
    r = _point("point", point)
    _required(qd=qd)
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
    _checks.model(model)
    s = body_states(model, q)
    x = s.p + np.einsum("...bij,bj->...bi", s.R, model.com)
    return np.einsum("b,...bi->...i", model.mass, x) / model.mass.sum()


def com_jacobian(model, q):
    """Jacobian (…, 3, nv) of the centre of mass: Σ m_i J_i(c_i) / M (``csrc/kernels/kinematics.c``)."""
    _checks.model(model)
    c = model._c
    Jc = _core.com_jacobian(c, q)
    if Jc is None:
        args, batch = B.states(model, q=q)
        Jc = _core.com_jacobian(c, args["q"]).reshape(batch + (3, model.nv))
    return Jc / model.mass.sum()


def com_velocity(model, q, qd):
    """Velocity of the centre of mass (…, 3)."""
    _checks.model(model)
    _required(qd=qd)
    s = body_states(model, q, qd)
    vc = s.v[..., 3:] + np.cross(s.v[..., :3], np.broadcast_to(model.com, s.v.shape[:-1] + (3,)))
    vw = np.einsum("...bij,...bj->...bi", s.R, vc)
    return np.einsum("b,...bi->...i", model.mass, vw) / model.mass.sum()
