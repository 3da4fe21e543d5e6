"""Hybrid dynamics by the articulated-body algorithm (RBDA §9.2; spatial_v2 ``HD``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import (BAD_QD, BAD_QDD, BAD_TAU, BAD_FEXT, OK, SINGULAR, PARENT, VS, NVJ,
                                 all_finite, check_configuration, motion_to_child)
from .aba import articulated_pass, velocity_pass


@njit(cache=True)
def hd_batch(ti, tf, S, a_grav, fd, Q, QD, QDD, TAU, FEXT, use_fext, QDD_OUT, TAU_OUT):
    nb = ti.shape[0]
    nv = S.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    R0 = np.empty((nb, 3, 3))
    p0 = np.empty((nb, 3))
    v = np.empty((nb, 6))
    c = np.empty((nb, 6))
    a = np.empty((nb, 6))
    IA = np.empty((nb, 6, 6))
    pA = np.empty((nb, 6))
    U = np.empty((nv, 6))
    Dinv = np.empty((nb, 6, 6))
    u = np.empty(nv)
    X = np.empty((6, 6))
    tmp = np.empty(6)
    for n in range(QDD_OUT.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        qd = QD[min(n, QD.shape[0] - 1)]
        qdd_in = QDD[min(n, QDD.shape[0] - 1)]
        tau_in = TAU[min(n, TAU.shape[0] - 1)]
        fe = FEXT[min(n, FEXT.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        if not all_finite(qd):
            return BAD_QD
        if use_fext and not all_finite(fe):
            return BAD_FEXT
        qdd = QDD_OUT[n]
        tau = TAU_OUT[n]
        for i in range(nb):  # inputs are finite where they are used
            for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
                if fd[i]:
                    if not np.isfinite(tau_in[k]):
                        return BAD_TAU
                    tau[k] = tau_in[k]
                else:
                    if not np.isfinite(qdd_in[k]):
                        return BAD_QDD
                    qdd[k] = qdd_in[k]
        velocity_pass(ti, tf, S, a_grav, q, qd, fe, use_fext, R, p, R0, p0, v, c, IA, pA)
        for i in range(nb):  # c += S q̈ at inverse-dynamics joints
            if not fd[i]:
                for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
                    for r in range(6):
                        c[i, r] += S[k, r] * qdd[k]
        if not articulated_pass(ti, tf, S, tau, fd, R, p, v, c, IA, pA, U, Dinv, u, X):
            return SINGULAR
        for i in range(nb):
            par = ti[i, PARENT]
            vs = ti[i, VS]
            nj = ti[i, NVJ]
            if par < 0:
                for r in range(6):
                    tmp[r] = -a_grav[r]
                motion_to_child(R[i], p[i], tmp, a[i])
            else:
                motion_to_child(R[i], p[i], a[par], a[i])
            for r in range(6):
                a[i, r] += c[i, r]
            if fd[i]:
                for x in range(nj):
                    s = 0.0
                    for y in range(nj):
                        w = u[vs + y]
                        for r in range(6):
                            w -= U[vs + y, r] * a[i, r]
                        s += Dinv[i, x, y] * w
                    qdd[vs + x] = s
                for x in range(nj):
                    for r in range(6):
                        a[i, r] += S[vs + x, r] * qdd[vs + x]
            else:  # τ = Sᵀ (IA a + pA)
                for r in range(6):
                    s = pA[i, r]
                    for cc in range(6):
                        s += IA[i, r, cc] * a[i, cc]
                    tmp[r] = s
                for x in range(nj):
                    s = 0.0
                    for r in range(6):
                        s += S[vs + x, r] * tmp[r]
                    tau[vs + x] = s
    return OK


def hybrid_dynamics(model, fd, q, qd, qdd, tau, f_ext=None):
    """spatial_v2 ``HD``: unknown accelerations at forward-dynamics joints, unknown forces elsewhere.

    ``fd`` is a boolean per joint (length nb): True = forward-dynamics joint (τ given, q̈ computed),
    False = inverse-dynamics joint (q̈ given, τ computed).  Returns ``(qdd_out, tau_out)``, both
    fully instantiated.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(3)
    >>> qdd, tau = mb.hybrid_dynamics(m, [True, False, True], np.zeros(3), np.zeros(3),
    ...                               np.zeros(3), np.zeros(3))
    """
    fd_arr = np.asarray(fd)
    if fd_arr.shape != (model.nb,) or fd_arr.dtype.kind not in "bi":
        raise ValueError(f"fd: expected {model.nb} booleans (one per joint), got shape {fd_arr.shape}")
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd, tau=tau, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    N = B.batch_size(batch)
    qdd_out = np.empty((N, model.nv))
    tau_out = np.empty((N, model.nv))
    fe = args.get("f_ext")
    B.raise_for(hd_batch(ti, tf, S, a_grav, fd_arr.astype(np.bool_), args["q"], args["qd"], args["qdd"],
                         args["tau"], B.no_fext(model) if fe is None else fe, fe is not None,
                         qdd_out, tau_out))
    return qdd_out.reshape(batch + (model.nv,)), tau_out.reshape(batch + (model.nv,))


HD = hybrid_dynamics
