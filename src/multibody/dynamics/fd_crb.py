"""Forward dynamics by the composite-rigid-body algorithm (spatial_v2 ``FDcrb``): solve H q̈ = τ − C."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import BAD_TAU, OK, SINGULAR, all_finite
from .crba import crba_batch
from .rnea import rnea_batch


@njit(cache=True)
def cholesky_solve(H, b, x):
    """x = H⁻¹ b for SPD H by an in-place Cholesky factorisation; False if H is not SPD."""
    n = H.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not (s > 0.0 and s > 1e-13 * H[j, j]):  # pivot lost to round-off: H is singular
            return False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = H[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
    return True


@njit(cache=True)
def fd_crb_solve(TAU, H, C, QDD):
    rhs = np.empty(C.shape[1])
    for n in range(QDD.shape[0]):
        tau = TAU[min(n, TAU.shape[0] - 1)]
        if not all_finite(tau):
            return BAD_TAU
        for k in range(rhs.size):
            rhs[k] = tau[k] - C[n, k]
        if not cholesky_solve(H[n], rhs, QDD[n]):
            return SINGULAR
    return OK


def fd_crb(model, q, qd, tau, f_ext=None):
    """spatial_v2 ``FDcrb``: q̈ from H (CRBA) and C (RNEA) by a dense Cholesky solve.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> bool(np.allclose(mb.fd_crb(m, [0.1, 0.2], [0, 1], [0, 0]), mb.aba(m, [0.1, 0.2], [0, 1], [0, 0])))
    True
    """
    args, batch = B.states(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    N = B.batch_size(batch)
    H = np.empty((N, model.nv, model.nv))
    C = np.empty((N, model.nv))
    B.raise_for(crba_batch(ti, tf, S, args["q"], H))
    fe = args.get("f_ext")
    B.raise_for(rnea_batch(ti, tf, S, a_grav, args["q"], args["qd"], np.zeros((1, model.nv)),
                           B.no_fext(model) if fe is None else fe, fe is not None, C))
    qdd = np.empty((N, model.nv))
    B.raise_for(fd_crb_solve(args["tau"], H, C, qdd))
    return qdd.reshape(batch + (model.nv,))


FDcrb = fd_crb
