"""Configuration space: q ⊕ v·dt and its inverse (q₁ ⊖ q₀) for joints with nq ≠ nv.

Free, spherical and planar joints integrate their body-frame velocity exactly for a constant
twist (exponential map), so quaternions stay unit and no drift is introduced.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import BAD_QD, FREE, JTYPE, OK, PLANAR, QS, SPHERICAL, VS, NVJ, \
    all_finite, check_configuration


@njit(cache=True)
def _quat_mul(a0, a1, a2, a3, b0, b1, b2, b3, out, o):
    out[o] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    out[o + 1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    out[o + 2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    out[o + 3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0


@njit(cache=True)
def _se3_left_jacobian_times(w, u, out):
    """out = V(w) u with V = I + (1−cos θ)/θ² [w]× + (θ − sin θ)/θ³ [w]×²."""
    th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    th = np.sqrt(th2)
    if th < 1e-6:
        b = 0.5 - th2 / 24.0
        c = 1.0 / 6.0 - th2 / 120.0
    else:
        b = (1.0 - np.cos(th)) / th2
        c = (th - np.sin(th)) / (th2 * th)
    wx0 = w[1] * u[2] - w[2] * u[1]
    wx1 = w[2] * u[0] - w[0] * u[2]
    wx2 = w[0] * u[1] - w[1] * u[0]
    ww0 = w[1] * wx2 - w[2] * wx1
    ww1 = w[2] * wx0 - w[0] * wx2
    ww2 = w[0] * wx1 - w[1] * wx0
    out[0] = u[0] + b * wx0 + c * ww0
    out[1] = u[1] + b * wx1 + c * ww1
    out[2] = u[2] + b * wx2 + c * ww2


@njit(cache=True)
def _rotate_by_quat(q0, q1, q2, q3, x, out):
    n = np.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    w, a, b, c = q0 / n, q1 / n, q2 / n, q3 / n
    # R(q) x
    out[0] = (1 - 2 * (b * b + c * c)) * x[0] + 2 * (a * b - w * c) * x[1] + 2 * (a * c + w * b) * x[2]
    out[1] = 2 * (a * b + w * c) * x[0] + (1 - 2 * (a * a + c * c)) * x[1] + 2 * (b * c - w * a) * x[2]
    out[2] = 2 * (a * c - w * b) * x[0] + 2 * (b * c + w * a) * x[1] + (1 - 2 * (a * a + b * b)) * x[2]


@njit(cache=True)
def _integrate_quat(q, s, w, out):
    """out[s:s+4] = q[s:s+4] ⊗ exp(w/2) (body-frame angular displacement w), normalised."""
    th = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    c = np.cos(th / 2)
    k = 0.5 - th * th / 48.0 if th < 1e-6 else np.sin(th / 2) / th
    n = np.sqrt(q[s] ** 2 + q[s + 1] ** 2 + q[s + 2] ** 2 + q[s + 3] ** 2)
    _quat_mul(q[s] / n, q[s + 1] / n, q[s + 2] / n, q[s + 3] / n, c, k * w[0], k * w[1], k * w[2], out, s)


@njit(cache=True)
def integrate_batch(ti, Q, V, dt, OUT):
    w = np.empty(3)
    u = np.empty(3)
    t = np.empty(3)
    for n in range(OUT.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        v = V[min(n, V.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        if not all_finite(v):
            return BAD_QD
        out = OUT[n]
        out[:] = q
        for i in range(ti.shape[0]):
            jt, qs, vs = ti[i, JTYPE], ti[i, QS], ti[i, VS]
            if jt == SPHERICAL:
                for r in range(3):
                    w[r] = v[vs + r] * dt
                _integrate_quat(q, qs, w, out)
            elif jt == FREE:
                for r in range(3):
                    w[r] = v[vs + r] * dt
                    u[r] = v[vs + 3 + r] * dt
                _se3_left_jacobian_times(w, u, t)
                _rotate_by_quat(q[qs + 3], q[qs + 4], q[qs + 5], q[qs + 6], t, u)
                for r in range(3):
                    out[qs + r] = q[qs + r] + u[r]
                _integrate_quat(q, qs + 3, w, out)
            elif jt == PLANAR:
                th = q[qs + 2]
                dth = v[vs + 2] * dt
                vx, vy = v[vs] * dt, v[vs + 1] * dt
                if abs(dth) < 1e-8:
                    a, b = 1.0 - dth * dth / 6.0, dth / 2.0
                else:
                    a, b = np.sin(dth) / dth, (1.0 - np.cos(dth)) / dth
                lx, ly = a * vx - b * vy, b * vx + a * vy
                out[qs] = q[qs] + np.cos(th) * lx - np.sin(th) * ly
                out[qs + 1] = q[qs + 1] + np.sin(th) * lx + np.cos(th) * ly
                out[qs + 2] = th + dth
            else:
                for k in range(ti[i, NVJ]):
                    out[qs + k] = q[qs + k] + v[vs + k] * dt
    return OK


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
    args, batch = B.states(model, q=q, qd=v)
    dt = float(dt)
    if not np.isfinite(dt):
        raise ValueError("dt: expected a finite number")
    ti = model._packed[0]
    out = np.empty((B.batch_size(batch), model.nq))
    B.raise_for(integrate_batch(ti, args["q"], args["qd"], dt, out))
    return out.reshape(batch + (model.nq,))


def difference(model, q0, q1):
    """v such that ``integrate(model, q0, v) == q1`` (the configuration-space logarithm q₁ ⊖ q₀).

    Solved by Newton iteration on the exact integrator, so it is its inverse by construction.
    """
    a0, b0 = B.as_batch("q0", q0, (model.nq,))
    a1, b1 = B.as_batch("q1", q1, (model.nq,))
    batch = B.batch_shape(b0, b1)
    q0 = np.broadcast_to(a0.reshape(b0 + (model.nq,)), batch + (model.nq,))
    q1 = np.broadcast_to(a1.reshape(b1 + (model.nq,)), batch + (model.nq,))
    # first guess: naive difference with quaternion logs, then Newton on the exact map
    v = np.zeros(batch + (model.nv,))
    simple = [(int(model.q_start[i]), int(model.v_start[i]), int(model.nv_joint[i]))
              for i in range(model.nb) if model.jtype[i] not in (SPHERICAL, FREE, PLANAR)]
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
        qs, vs, jt = int(model.q_start[i]), int(model.v_start[i]), int(model.jtype[i])
        if jt in (SPHERICAL, FREE):
            s = qs + (3 if jt == FREE else 0)
            a, b = qa[..., s:s + 4], q1[..., s:s + 4]
            sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1.0, 1.0)
            # vector part of conj(b)⊗a: body-frame rotation error
            w = (b[..., :1] * a[..., 1:] - a[..., :1] * b[..., 1:] - np.cross(b[..., 1:], a[..., 1:])) * sign
            if jt == FREE:
                out[..., vs:vs + 3] = 2 * w
                out[..., vs + 3:vs + 6] = qa[..., qs:qs + 3] - q1[..., qs:qs + 3]
            else:
                out[..., vs:vs + 3] = 2 * w
        else:
            n = int(model.nv_joint[i])
            out[..., vs:vs + n] = qa[..., qs:qs + n] - q1[..., qs:qs + n]
    return out
