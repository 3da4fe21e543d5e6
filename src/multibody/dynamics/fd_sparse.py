"""Forward dynamics exploiting branch-induced sparsity (RBDA §6.5, tables 6.3-6.4).

H q̈ = τ − C is solved with H from the composite-rigid-body algorithm, C from RNEA, and the
sparsity-preserving factorisation H = Lᵀ D L of :mod:`multibody.sparse` (``LTDL``), followed by
the O(n·depth) solves ``q̈ = L⁻¹ D⁻¹ L⁻ᵀ (τ − C)`` (``mpyLit``, ``mpyLi``).  The expanded parent
array λ of the velocity variables is ``model.dof_parent`` (``expandLambda``, table 6.4).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _boundary as B
from .._numba.primitives import (check_rates, BAD_TAU, OK, SINGULAR, check_configuration,
                                 first_error)
from ..sparse import _ltdl_kernel, _solve_ltdl_kernel
from .crba import crba_one
from .rnea import rnea_one


@njit(cache=True)
def fd_sparse_range(ti, tf, S, a_grav, lam, Q, QD, TAU, FEXT, use_fext, QDD, lo, hi):
    """States lo…hi−1, one compiled loop: CRBA → RNEA(q, q̇, 0) → LTDL → sparse back/forward solves.

    Arguments with leading size 1 are shared by all states."""
    nb = ti.shape[0]
    nv = S.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    R0 = np.empty((nb, 3, 3))
    p0 = np.empty((nb, 3))
    v = np.empty((nb, 6))
    a = np.empty((nb, 6))
    f = np.empty((nb, 6))
    Ic = np.empty((nb, 6, 6))
    X = np.empty((6, 6))
    H = np.empty((1, nv, nv))     # batch-of-one views for the sparse kernels
    L = np.empty((1, nv, nv))
    d = np.empty((1, nv))
    info = np.empty(1, dtype=np.int64)
    C = np.empty(nv)
    rhs = np.empty((1, nv))
    zero = np.zeros(nv)
    for n in range(lo, hi):
        q = Q[min(n, Q.shape[0] - 1)]
        qd = QD[min(n, QD.shape[0] - 1)]
        tau = TAU[min(n, TAU.shape[0] - 1)]
        fe = FEXT[min(n, FEXT.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        st = check_rates(qd, tau, BAD_TAU, fe, use_fext)
        if st != OK:
            return st
        crba_one(ti, tf, S, q, H[0], R, p, Ic, X)                               # H  (table 6.2)
        rnea_one(ti, tf, S, a_grav, q, qd, zero, fe, use_fext, C, R, p, R0, p0, v, a, f)  # C
        _ltdl_kernel(H, lam, L, d, info)                                        # H = Lᵀ D L (6.3)
        if info[0] >= 0:
            return SINGULAR
        for k in range(nv):  # a pivot that is round-off of its diagonal: H singular, not just ill-scaled
            if not d[0, k] > 1e-13 * H[0, k, k]:
                return SINGULAR
        for k in range(nv):
            rhs[0, k] = tau[k] - C[k]
        _solve_ltdl_kernel(L, d, lam, rhs, QDD[n:n + 1])                        # L⁻¹ D⁻¹ L⁻ᵀ
    return OK


@njit(cache=True)
def fd_sparse_batch(ti, tf, S, a_grav, lam, Q, QD, TAU, FEXT, use_fext, QDD):
    return fd_sparse_range(ti, tf, S, a_grav, lam, Q, QD, TAU, FEXT, use_fext, QDD, 0, QDD.shape[0])


@njit(cache=True, parallel=True)
def fd_sparse_batch_parallel(ti, tf, S, a_grav, lam, Q, QD, TAU, FEXT, use_fext, QDD, nchunk):
    N = QDD.shape[0]
    status = np.zeros(nchunk, dtype=np.int64)
    for c in prange(nchunk):
        status[c] = fd_sparse_range(ti, tf, S, a_grav, lam, Q, QD, TAU, FEXT, use_fext, QDD,
                                    c * N // nchunk, (c + 1) * N // nchunk)
    return first_error(status)


def fd_sparse(model, q, qd, tau, f_ext=None):
    """Forward dynamics by CRBA + sparse ``Lᵀ D L`` factorisation (RBDA §6.5; spatial_v2 ``FDcrb``
    with ``LTDL``/``mpyLi``/``mpyLit``).

    Same results as :func:`multibody.aba` and :func:`multibody.fd_crb`; the factorisation and
    solves cost O(n·d) (d = depth of the tree) instead of O(n³), which pays off on wide, shallow
    trees.  ``f_ext`` (…, nb, 6) are spatial forces in base coordinates.  Every argument may carry
    leading batch dimensions; the loop over states runs in compiled code.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> from multibody.dynamics.fd_sparse import fd_sparse
    >>> m = mb.models.auto_tree(7, bf=2)
    >>> q, qd, tau = np.full(7, 0.3), np.ones(7), np.zeros(7)
    >>> bool(np.allclose(fd_sparse(m, q, qd, tau), mb.aba(m, q, qd, tau)))
    True
    """
    args, batch = B.states(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    lam = model.dof_parent
    N = B.batch_size(batch)
    qdd = np.empty((N, S.shape[0]))
    fe = args.get("f_ext")
    B.run(fd_sparse_batch, fd_sparse_batch_parallel, N, ti, tf, S, a_grav, lam, args["q"], args["qd"],
          args["tau"], B.no_fext(model) if fe is None else fe, fe is not None, qdd)
    return qdd.reshape(batch + (S.shape[0],))


FDsparse = fd_sparse
