"""Joint-space inertia by the composite-rigid-body algorithm (RBDA table 6.2; spatial_v2 ``HandC``)."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _boundary as B
from .._numba.primitives import (F_INERTIA, OK, PARENT, VS, NVJ, check_configuration, first_error,
                                 tree_poses, xtf_add)
from .rnea import rnea_batch, rnea_batch_parallel


@njit(cache=True)
def rigid_inertia_to_parent(R, p, i, Ic, j, k):
    """Ic[k] += Xup_iᵀ Ic[j] Xup_i for rigid-body inertias kept as (m, h, Ī) rows (RBDA §2.18).

    Row layout: [m, h0, h1, h2, Ī00, Ī01, Ī02, Ī11, Ī12, Ī22].  With y = R h:
    h' = y + m p,  Ī' = R Ī Rᵀ + m(|p|² 1 − p pᵀ) + 2(p·y) 1 − (y pᵀ + p yᵀ).
    """
    m = Ic[j, 0]
    I00, I01, I02, I11, I12, I22 = Ic[j, 4], Ic[j, 5], Ic[j, 6], Ic[j, 7], Ic[j, 8], Ic[j, 9]
    p0, p1, p2 = p[i, 0], p[i, 1], p[i, 2]
    y0 = R[i, 0, 0] * Ic[j, 1] + R[i, 0, 1] * Ic[j, 2] + R[i, 0, 2] * Ic[j, 3]
    y1 = R[i, 1, 0] * Ic[j, 1] + R[i, 1, 1] * Ic[j, 2] + R[i, 1, 2] * Ic[j, 3]
    y2 = R[i, 2, 0] * Ic[j, 1] + R[i, 2, 1] * Ic[j, 2] + R[i, 2, 2] * Ic[j, 3]
    pp = p0 * p0 + p1 * p1 + p2 * p2
    py = p0 * y0 + p1 * y1 + p2 * y2
    d = m * pp + 2.0 * py
    P = (p0, p1, p2)
    Y = (y0, y1, y2)
    col = 4
    for r in range(3):  # row r of R Ī, then its products with rows c ≥ r of R
        a0, a1, a2 = R[i, r, 0], R[i, r, 1], R[i, r, 2]
        t0 = a0 * I00 + a1 * I01 + a2 * I02
        t1 = a0 * I01 + a1 * I11 + a2 * I12
        t2 = a0 * I02 + a1 * I12 + a2 * I22
        for c in range(r, 3):
            v = t0 * R[i, c, 0] + t1 * R[i, c, 1] + t2 * R[i, c, 2]
            v += -m * P[r] * P[c] - (Y[r] * P[c] + P[r] * Y[c])
            if r == c:
                v += d
            Ic[k, col] += v
            col += 1
    Ic[k, 0] += m
    Ic[k, 1] += y0 + m * p0
    Ic[k, 2] += y1 + m * p1
    Ic[k, 3] += y2 + m * p2


@njit(cache=True)
def rigid_inertia_times(Ic, i, S, k, F):
    """F[0] = Ic_i S_k = [Ī ω + h × v; m v − h × ω] for the rigid-body row Ic[i]."""
    m, h0, h1, h2 = Ic[i, 0], Ic[i, 1], Ic[i, 2], Ic[i, 3]
    w0, w1, w2, l0, l1, l2 = S[k, 0], S[k, 1], S[k, 2], S[k, 3], S[k, 4], S[k, 5]
    F[0, 0] = Ic[i, 4] * w0 + Ic[i, 5] * w1 + Ic[i, 6] * w2 + h1 * l2 - h2 * l1
    F[0, 1] = Ic[i, 5] * w0 + Ic[i, 7] * w1 + Ic[i, 8] * w2 + h2 * l0 - h0 * l2
    F[0, 2] = Ic[i, 6] * w0 + Ic[i, 8] * w1 + Ic[i, 9] * w2 + h0 * l1 - h1 * l0
    F[0, 3] = m * l0 - (h1 * w2 - h2 * w1)
    F[0, 4] = m * l1 - (h2 * w0 - h0 * w2)
    F[0, 5] = m * l2 - (h0 * w1 - h1 * w0)


@njit(cache=True)
def crba_one(ti, tf, S, q, H, R, p, Ic, X):
    """H(q): composite inertias Ic_λ += Xupᵀ Ic_i Xup, then F = Ic_i S_k carried to the root.

    Composite inertias stay rigid-body inertias, so they are kept as (m, h, Ī) — 10 numbers
    instead of a 6×6 matrix — in the caller's (nb, 6, 6) scratch Ic.  X is unused.
    """
    nb = ti.shape[0]
    F = np.empty((2, 6))
    Icr = Ic.reshape((nb, 36))  # rows of (m, h, Ī) in the caller's (nb, 6, 6) scratch
    tree_poses(ti, tf, q, R, p)
    for i in range(nb):  # (m, h, Ī) from the stored mcI matrix
        b = F_INERTIA
        Icr[i, 0] = tf[i, b + 35]
        Icr[i, 1] = tf[i, b + 16]
        Icr[i, 2] = tf[i, b + 5]
        Icr[i, 3] = tf[i, b + 9]
        Icr[i, 4] = tf[i, b + 0]
        Icr[i, 5] = tf[i, b + 1]
        Icr[i, 6] = tf[i, b + 2]
        Icr[i, 7] = tf[i, b + 7]
        Icr[i, 8] = tf[i, b + 8]
        Icr[i, 9] = tf[i, b + 14]
    for i in range(nb - 1, -1, -1):  # composite inertias, leaves to root
        par = ti[i, PARENT]
        if par >= 0:
            rigid_inertia_to_parent(R, p, i, Icr, i, par)
    H[:, :] = 0.0
    for i in range(nb):
        for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
            rigid_inertia_times(Icr, i, S, k, F)  # F = Ic S_k
            for k2 in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
                s = 0.0
                for r in range(6):
                    s += S[k2, r] * F[0, r]
                H[k2, k] = s
            j = i
            while ti[j, PARENT] >= 0:  # walk to the root: F = Xup_jᵀ F
                for r in range(6):
                    F[1, r] = 0.0
                xtf_add(R, p, j, F, 0, F, 1)
                for r in range(6):
                    F[0, r] = F[1, r]
                j = ti[j, PARENT]
                for k2 in range(ti[j, VS], ti[j, VS] + ti[j, NVJ]):
                    s = 0.0
                    for r in range(6):
                        s += S[k2, r] * F[0, r]
                    H[k2, k] = s
                    H[k, k2] = s


@njit(cache=True)
def crba_range(ti, tf, S, Q, HH, lo, hi):
    nb = ti.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    Ic = np.empty((nb, 6, 6))
    X = np.empty((6, 6))
    for n in range(lo, hi):
        q = Q[min(n, Q.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        crba_one(ti, tf, S, q, HH[n], R, p, Ic, X)
    return OK


@njit(cache=True)
def crba_batch(ti, tf, S, Q, HH):
    return crba_range(ti, tf, S, Q, HH, 0, HH.shape[0])


@njit(cache=True, parallel=True)
def crba_batch_parallel(ti, tf, S, Q, HH, nchunk):
    N = HH.shape[0]
    status = np.zeros(nchunk, dtype=np.int64)
    for c in prange(nchunk):
        status[c] = crba_range(ti, tf, S, Q, HH, c * N // nchunk, (c + 1) * N // nchunk)
    return first_error(status)


@njit(cache=True)
def crba_single(ti, tf, S, a_grav, q, H):
    nb = ti.shape[0]
    st = check_configuration(ti, q)
    if st != OK:
        return st
    crba_one(ti, tf, S, q, H, np.empty((nb, 3, 3)), np.empty((nb, 3)), np.empty((nb, 6, 6)), np.empty((6, 6)))
    return OK


def crba(model, q):
    """Joint-space inertia matrix H(q) (nv × nv) by the composite-rigid-body algorithm.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> H = mb.crba(mb.models.planar(2), np.zeros(2))
    >>> bool(np.allclose(H, H.T))
    True
    """
    if B.is_vec(q, model.nq):
        H = np.empty((model.nv, model.nv))
        B.raise_for(crba_single(*model._packed, q, H))
        return _add_armature(model, H)
    args, batch = B.states(model, q=q)
    ti, tf, S, _ = model._packed
    N = B.batch_size(batch)
    H = np.empty((N, model.nv, model.nv))
    B.run(crba_batch, crba_batch_parallel, N, ti, tf, S, args["q"], H)
    return _add_armature(model, H).reshape(batch + (model.nv, model.nv))


def _add_armature(model, H):
    """H += diag(armature): rotor inertia of each dof (MuJoCo's dof_armature)."""
    if model.armature.any():  # interim, until the compiled core adds it
        d = np.arange(model.nv)
        H[..., d, d] += model.armature
    return H


def hand_c(model, q, qd, f_ext=None):
    """spatial_v2 ``HandC``: H (CRBA) and C = ID(q, q̇, 0, f_ext) (RNEA), so that H q̈ + C = τ.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> H, C = mb.hand_c(mb.models.planar(2), np.zeros(2), np.ones(2))
    """
    args, batch = B.states(model, q=q, qd=qd, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    N = B.batch_size(batch)
    H = np.empty((N, model.nv, model.nv))
    C = np.empty((N, model.nv))
    B.run(crba_batch, crba_batch_parallel, N, ti, tf, S, args["q"], H)
    _add_armature(model, H)
    fe = args.get("f_ext")
    B.run(rnea_batch, rnea_batch_parallel, N, ti, tf, S, a_grav, args["q"], args["qd"],
          np.zeros((1, model.nv)), B.no_fext(model) if fe is None else fe, fe is not None, C)
    return H.reshape(batch + (model.nv, model.nv)), C.reshape(batch + (model.nv,))


HandC = hand_c
