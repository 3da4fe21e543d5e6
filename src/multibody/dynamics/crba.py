"""Joint-space inertia by the composite-rigid-body algorithm (RBDA table 6.2; spatial_v2 ``HandC``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import (F_INERTIA, OK, PARENT, VS, NVJ, check_configuration, congruence_add,
                                 force_to_parent_add, plux_matrix, tree_poses)
from .rnea import rnea_batch


@njit(cache=True)
def crba_one(ti, tf, S, q, H, R, p, Ic, X):
    nb = ti.shape[0]
    F = np.empty(6)
    G = np.empty(6)
    tree_poses(ti, tf, q, R, p)
    for i in range(nb):
        for r in range(6):
            for c in range(6):
                Ic[i, r, c] = tf[i, F_INERTIA + 6 * r + c]
    for i in range(nb - 1, -1, -1):  # composite inertias, leaves to root
        par = ti[i, PARENT]
        if par >= 0:
            plux_matrix(R[i], p[i], X)
            congruence_add(X, Ic[i], Ic[par])
    H[:, :] = 0.0
    for i in range(nb):
        for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
            for r in range(6):  # F = Ic S_k
                s = 0.0
                for c in range(6):
                    s += Ic[i, r, c] * S[k, c]
                F[r] = s
            for k2 in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
                s = 0.0
                for r in range(6):
                    s += S[k2, r] * F[r]
                H[k2, k] = s
            j = i
            while ti[j, PARENT] >= 0:  # walk to the root: F = Xupᵀ F
                G[:] = 0.0
                force_to_parent_add(R[j], p[j], F, G)
                F[:] = G
                j = ti[j, PARENT]
                for k2 in range(ti[j, VS], ti[j, VS] + ti[j, NVJ]):
                    s = 0.0
                    for r in range(6):
                        s += S[k2, r] * F[r]
                    H[k2, k] = s
                    H[k, k2] = s


@njit(cache=True)
def crba_batch(ti, tf, S, Q, HH):
    nb = ti.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    Ic = np.empty((nb, 6, 6))
    X = np.empty((6, 6))
    for n in range(HH.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        crba_one(ti, tf, S, q, HH[n], R, p, Ic, X)
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
    args, batch = B.states(model, q=q)
    ti, tf, S, _ = model._packed
    H = np.empty((B.batch_size(batch), model.nv, model.nv))
    B.raise_for(crba_batch(ti, tf, S, args["q"], H))
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
    B.raise_for(crba_batch(ti, tf, S, args["q"], H))
    fe = args.get("f_ext")
    B.raise_for(rnea_batch(ti, tf, S, a_grav, args["q"], args["qd"], np.zeros((1, model.nv)),
                           B.no_fext(model) if fe is None else fe, fe is not None, C))
    return H.reshape(batch + (model.nv, model.nv)), C.reshape(batch + (model.nv,))


HandC = hand_c
