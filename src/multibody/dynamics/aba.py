"""Forward dynamics by the articulated-body algorithm (RBDA table 7.1; spatial_v2 ``FDab``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from numba import prange

from .._numba.primitives import (check_rates, BAD_TAU, F_INERTIA, OK, PARENT, SINGULAR, VS, NVJ,
                                 check_configuration, congruence_add_ws, crf_add, crm_add,
                                 first_error, force_to_child, inertia_mul, plux_matrix, tree_poses,
                                 world_poses, xm, xtf_add)


@njit(cache=True)
def invert_spd(D, n, Dinv):
    """Inverse of the small SPD block D[:n,:n] by Gauss-Jordan; False if (numerically) singular."""
    if n == 1:
        if not D[0, 0] > 0.0:
            return False
        Dinv[0, 0] = 1.0 / D[0, 0]
        return True
    A = np.empty((n, 2 * n))
    scale = 0.0
    for r in range(n):
        scale = max(scale, abs(D[r, r]))
        for c in range(n):
            A[r, c] = D[r, c]
            A[r, n + c] = 1.0 if r == c else 0.0
    if scale == 0.0:
        return False
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[piv, c]):
                piv = r
        if abs(A[piv, c]) <= 1e-14 * scale:
            return False
        if piv != c:
            for k in range(2 * n):
                A[c, k], A[piv, k] = A[piv, k], A[c, k]
        d = A[c, c]
        for k in range(2 * n):
            A[c, k] /= d
        for r in range(n):
            if r != c:
                e = A[r, c]
                if e != 0.0:
                    for k in range(2 * n):
                        A[r, k] -= e * A[c, k]
    for r in range(n):
        for c in range(n):
            Dinv[r, c] = A[r, n + c]
    return True


@njit(cache=True)
def articulated_pass(ti, tf, S, tau, fd, R, p, v, c, IA, pA, U, Dinv, u, X):
    """Pass 2 of ABA/HD: articulated inertias and bias forces, leaves to root.

    Joints with fd[i] False are inverse-dynamics joints (HD): their acceleration, already folded
    into c[i], passes the full inertia on.  Returns False if a D block is singular.
    """
    nb = ti.shape[0]
    Ia = np.empty((6, 6))
    pa = np.empty((1, 6))
    D = np.empty((6, 6))
    tmp = np.empty((6, 6))
    for i in range(nb - 1, -1, -1):
        vs = ti[i, VS]
        nj = ti[i, NVJ]
        par = ti[i, PARENT]
        Ia[:, :] = IA[i]
        for r in range(6):
            pa[0, r] = pA[i, r]
        if fd[i] and nj > 0:
            for a in range(nj):  # U = IA S, D = Sᵀ U, u = τ − Sᵀ pA
                k = vs + a
                for r in range(6):
                    s = 0.0
                    for cc in range(6):
                        s += IA[i, r, cc] * S[k, cc]
                    U[k, r] = s
                s = 0.0
                for r in range(6):
                    s += S[k, r] * pA[i, r]
                u[k] = tau[k] - s
            for a in range(nj):
                for b in range(nj):
                    s = 0.0
                    for r in range(6):
                        s += S[vs + a, r] * U[vs + b, r]
                    D[a, b] = s
            if not invert_spd(D, nj, Dinv[i]):
                return False
            if par >= 0:
                # Ia = IA − U D⁻¹ Uᵀ ;  pa = pA + Ia c + U D⁻¹ u
                for a in range(nj):
                    for b in range(nj):
                        dab = Dinv[i, a, b]
                        for r in range(6):
                            ur = U[vs + a, r] * dab
                            for cc in range(6):
                                Ia[r, cc] -= ur * U[vs + b, cc]
                        for r in range(6):
                            pa[0, r] += U[vs + a, r] * dab * u[vs + b]
        if par >= 0:
            for r in range(6):
                s = 0.0
                for cc in range(6):
                    s += Ia[r, cc] * c[i, cc]
                pa[0, r] += s
            plux_matrix(R[i], p[i], X)
            congruence_add_ws(X, Ia, IA[par], tmp)
            xtf_add(R, p, i, pa, 0, pA, par)
    return True


@njit(cache=True)
def velocity_pass(ti, tf, S, a_grav, q, qd, fext, use_fext, R, p, R0, p0, v, c, IA, pA):
    """Pass 1 of ABA: velocities, velocity-product accelerations c, and rigid-body bias forces."""
    nb = ti.shape[0]
    w = np.empty((2, 6))  # rows: vJ, scratch
    tree_poses(ti, tf, q, R, p)
    if use_fext:
        world_poses(ti, R, p, R0, p0)
    for i in range(nb):
        par = ti[i, PARENT]
        for r in range(6):
            w[0, r] = 0.0
            c[i, r] = 0.0
            pA[i, r] = 0.0
        for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
            for r in range(6):
                w[0, r] += S[k, r] * qd[k]
        if par < 0:
            for r in range(6):
                v[i, r] = w[0, r]
        else:
            xm(R, p, i, v, par, v, i)
            for r in range(6):
                v[i, r] += w[0, r]
            crm_add(v, i, w, 0, c, i)
        for r in range(6):
            for cc in range(6):
                IA[i, r, cc] = tf[i, F_INERTIA + 6 * r + cc]
        inertia_mul(tf, i, v, i, w, 1)
        crf_add(v, i, w, 1, pA, i)
        if use_fext:
            force_to_child(R0[i], p0[i], fext[i], w[1])
            for r in range(6):
                pA[i, r] -= w[1, r]


@njit(cache=True)
def acceleration_pass(ti, S, a_grav, R, p, c, U, Dinv, u, a, qdd):
    """Pass 3 of ABA: accelerations, root to leaves."""
    nb = ti.shape[0]
    g = np.empty((1, 6))
    for r in range(6):
        g[0, r] = -a_grav[r]
    for i in range(nb):
        par = ti[i, PARENT]
        vs = ti[i, VS]
        nj = ti[i, NVJ]
        if par < 0:
            xm(R, p, i, g, 0, a, i)
        else:
            xm(R, p, i, a, par, a, i)
        for r in range(6):
            a[i, r] += c[i, r]
        for x in range(nj):  # q̈ = D⁻¹ (u − Uᵀ a)
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


@njit(cache=True)
def aba_range(ti, tf, S, a_grav, Q, QD, TAU, FEXT, use_fext, QDD, lo, hi):
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
    fd = np.ones(nb, dtype=np.bool_)
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
        velocity_pass(ti, tf, S, a_grav, q, qd, fe, use_fext, R, p, R0, p0, v, c, IA, pA)
        if not articulated_pass(ti, tf, S, tau, fd, R, p, v, c, IA, pA, U, Dinv, u, X):
            return SINGULAR
        acceleration_pass(ti, S, a_grav, R, p, c, U, Dinv, u, a, QDD[n])
    return OK


@njit(cache=True)
def aba_batch(ti, tf, S, a_grav, Q, QD, TAU, FEXT, use_fext, QDD):
    return aba_range(ti, tf, S, a_grav, Q, QD, TAU, FEXT, use_fext, QDD, 0, QDD.shape[0])


@njit(cache=True, parallel=True)
def aba_batch_parallel(ti, tf, S, a_grav, Q, QD, TAU, FEXT, use_fext, QDD, nchunk):
    N = QDD.shape[0]
    status = np.zeros(nchunk, dtype=np.int64)
    for c in prange(nchunk):
        status[c] = aba_range(ti, tf, S, a_grav, Q, QD, TAU, FEXT, use_fext, QDD,
                              c * N // nchunk, (c + 1) * N // nchunk)
    return first_error(status)


def aba(model, q, qd, tau, f_ext=None):
    """Forward dynamics q̈ = FD(q, q̇, τ, f_ext) by the articulated-body algorithm (spatial_v2 ``FDab``).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> qdd = mb.aba(m, np.zeros(2), np.zeros(2), np.zeros(2))   # falls under gravity
    """
    if f_ext is None and B.is_vec(q, model.nq) and B.is_vec(qd, model.nv) and B.is_vec(tau, model.nv):
        out = np.empty((1, model.nv))  # single state: same kernel, no broadcasting work
        B.raise_for(aba_batch(*model._packed, q[None], qd[None], tau[None], model._no_fext, False, out))
        return out[0]
    args, batch = B.states(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    N = B.batch_size(batch)
    qdd = np.empty((N, model.nv))
    fe = args.get("f_ext")
    B.run(aba_batch, aba_batch_parallel, N, ti, tf, S, a_grav, args["q"], args["qd"], args["tau"],
          B.no_fext(model) if fe is None else fe, fe is not None, qdd)
    return qdd.reshape(batch + (model.nv,))


FDab = aba
forward_dynamics = aba
