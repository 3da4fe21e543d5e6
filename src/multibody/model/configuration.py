"""Configuration space: q ⊕ v·dt and its inverse (q₁ ⊖ q₀) for joints with nq ≠ nv.

Free, spherical and planar joints integrate their body-frame velocity exactly for a constant
twist (exponential map), so quaternions stay unit and no drift is introduced.
"""
from __future__ import annotations

import numpy as np

from .. import _boundary as B
from .. import _checks
from ..core import _core  # the exponential maps are in csrc/kernels/kinematics.c (mb_integrate)
from .joints import spec

def integrate(model, q, v, dt=1.0):
    """q ⊕ v·dt: move configuration ``q`` with velocity ``v`` for time ``dt`` (exact for constant v).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.singlebody()
    >>> q1 = mb.integrate(m, m.neutral(), [0, 0, np.pi, 0, 0, 0])   # half a turn about body z
    >>> np.round(q1[3:], 12).tolist()
    [0.0, 0.0, 0.0, 1.0]
    """
    _checks.model(model)
    args, batch = B.states(model, q=q, v=v)
    dt = _checks.number("dt", dt)
    return _core.integrate(model._c, args["q"], args["v"], dt).reshape(batch + (model.nq,))


def difference(model, q0, q1):
    """v such that ``integrate(model, q0, v) == q1`` (the configuration-space logarithm q₁ ⊖ q₀).

    Solved by Newton iteration on the exact integrator, so it is its inverse by construction.
    """
    _checks.model(model)
    a0, b0 = B.as_batch("q0", q0, (model.nq,))
    a1, b1 = B.as_batch("q1", q1, (model.nq,))
    batch = B.batch_shape(b0, b1)
    q0 = np.broadcast_to(a0.reshape(b0 + (model.nq,)), batch + (model.nq,))
    q1 = np.broadcast_to(a1.reshape(b1 + (model.nq,)), batch + (model.nq,))
    # first guess: naive difference with quaternion logs, then Newton on the exact map
    v = np.zeros(batch + (model.nv,))
    simple = [(int(model.q_start[i]), int(model.v_start[i]), int(model.nv_joint[i]))
              for i in range(model.nb) if spec(model.jtype[i]).vector]
    for qs, vs, n in simple:
        v[..., vs:vs + n] = q1[..., qs:qs + n] - q0[..., qs:qs + n]
    eps = 1e-7
    for _ in range(30):
        r = _residual(model, q0, v, q1)
        if np.max(np.abs(r), initial=0.0) < 1e-13:
            break
        Jm = np.empty(batch + (model.nv, model.nv))
        for k in range(model.nv):  # finite-difference Jacobian, columns over dofs (not states)
            dv = np.zeros(model.nv)
            dv[k] = eps
            Jm[..., :, k] = (_residual(model, q0, v + dv, q1) - r) / eps
        v = v - np.linalg.solve(Jm, r[..., None])[..., 0]
    return v


def _residual(model, q0, v, q1):
    """Local-coordinates error between integrate(q0, v) and q1, one entry per velocity variable."""
    qa = integrate(model, q0, v)
    out = np.empty(qa.shape[:-1] + (model.nv,))
    for i in range(model.nb):
        qs, vs, o = int(model.q_start[i]), int(model.v_start[i]), spec(model.jtype[i]).quat
        if o >= 0:  # spherical, free: the quaternion's error, then a free joint's position
            s = qs + o
            a, b = qa[..., s:s + 4], q1[..., s:s + 4]
            sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1.0, 1.0)
            # vector part of conj(b)⊗a: body-frame rotation error
            w = (b[..., :1] * a[..., 1:] - a[..., :1] * b[..., 1:] - np.cross(b[..., 1:], a[..., 1:])) * sign
            out[..., vs:vs + 3] = 2 * w
            if o > 0:
                out[..., vs + 3:vs + 6] = qa[..., qs:qs + 3] - q1[..., qs:qs + 3]
        else:
            n = int(model.nv_joint[i])
            out[..., vs:vs + n] = qa[..., qs:qs + n] - q1[..., qs:qs + n]
    return out
