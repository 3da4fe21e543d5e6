"""Joint-space inertia by the composite-rigid-body algorithm (RBDA table 6.2; spatial_v2 ``HandC``)."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _boundary as B
from .._numba.primitives import (F_INERTIA, OK, PARENT, VS, NVJ, check_configuration, congruence_add_ws,
                                 first_error, plux_matrix, tree_poses, xtf_add)
from .rnea import rnea_batch, rnea_batch_parallel


@njit(cache=True)
def crba_one(ti, tf, S, q, H, R, p, Ic, X):
    """H(q): composite inertias Ic_λ += Xupᵀ Ic_i Xup, then F = Ic_i S_k carried to the root."""
    nb = ti.shape[0]
    F = np.empty((2, 6))
    tmp = np.empty((6, 6))
    tree_poses(ti, tf, q, R, p)
    for i in range(nb):
        for r in range(6):
            for c in range(6):
                Ic[i, r, c] = tf[i, F_INERTIA + 6 * r + c]
    for i in range(nb - 1, -1, -1):  # composite inertias, leaves to root
        par = ti[i, PARENT]
        if par >= 0:
            plux_matrix(R[i], p[i], X)
            congruence_add_ws(X, Ic[i], Ic[par], tmp)
    H[:, :] = 0.0
    for i in range(nb):
        for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
            for r in range(6):  # F = Ic S_k
                s = 0.0
                for c in range(6):
                    s += Ic[i, r, c] * S[k, c]
                F[0, r] = s
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
        return H
    args, batch = B.states(model, q=q)
    ti, tf, S, _ = model._packed
    N = B.batch_size(batch)
    H = np.empty((N, model.nv, model.nv))
    B.run(crba_batch, crba_batch_parallel, N, ti, tf, S, args["q"], H)
    return H.reshape(batch + (model.nv, model.nv))


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
    fe = args.get("f_ext")
    B.run(rnea_batch, rnea_batch_parallel, N, ti, tf, S, a_grav, args["q"], args["qd"],
          np.zeros((1, model.nv)), B.no_fext(model) if fe is None else fe, fe is not None, C)
    return H.reshape(batch + (model.nv, model.nv)), C.reshape(batch + (model.nv,))


HandC = hand_c
