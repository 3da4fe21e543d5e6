"""Forward dynamics by the articulated-body algorithm (RBDA table 7.1; spatial_v2 ``FDab``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import (BAD_FEXT, BAD_QD, BAD_TAU, F_INERTIA, OK, PARENT, SINGULAR, VS, NVJ,
                                 all_finite, check_configuration, congruence_add, cross_force,
                                 cross_motion, force_to_child, force_to_parent_add, inertia_times,
                                 motion_to_child, plux_matrix, tree_poses, world_poses)


@njit(cache=True)
def invert_spd(D, n, Dinv):
    """Inverse of the small SPD block D[:n,:n] by Gauss-Jordan; False if (numerically) singular."""
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
    pa = np.empty(6)
    D = np.empty((6, 6))
    tmp = np.empty(6)
    for i in range(nb - 1, -1, -1):
        vs = ti[i, VS]
        nj = ti[i, NVJ]
        par = ti[i, PARENT]
        Ia[:, :] = IA[i]
        pa[:] = pA[i]
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
                            pa[r] += U[vs + a, r] * dab * u[vs + b]
        if par >= 0:
            for r in range(6):
                s = 0.0
                for cc in range(6):
                    s += Ia[r, cc] * c[i, cc]
                tmp[r] = s
            for r in range(6):
                pa[r] += tmp[r]
            plux_matrix(R[i], p[i], X)
            congruence_add(X, Ia, IA[par])
            force_to_parent_add(R[i], p[i], pa, pA[par])
    return True


@njit(cache=True)
def velocity_pass(ti, tf, S, a_grav, q, qd, fext, use_fext, R, p, R0, p0, v, c, IA, pA):
    """Pass 1 of ABA: velocities, velocity-product accelerations c, and rigid-body bias forces."""
    nb = ti.shape[0]
    vJ = np.empty(6)
    tmp = np.empty(6)
    tmp2 = np.empty(6)
    tree_poses(ti, tf, q, R, p)
    if use_fext:
        world_poses(ti, R, p, R0, p0)
    for i in range(nb):
        par = ti[i, PARENT]
        vJ[:] = 0.0
        for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
            for r in range(6):
                vJ[r] += S[k, r] * qd[k]
        if par < 0:
            v[i] = vJ
            c[i] = 0.0
        else:
            motion_to_child(R[i], p[i], v[par], tmp)
            for r in range(6):
                v[i, r] = tmp[r] + vJ[r]
            cross_motion(v[i], vJ, c[i])
        for r in range(6):
            for cc in range(6):
                IA[i, r, cc] = tf[i, F_INERTIA + 6 * r + cc]
        inertia_times(tf[i], v[i], tmp)
        cross_force(v[i], tmp, pA[i])
        if use_fext:
            force_to_child(R0[i], p0[i], fext[i], tmp2)
            for r in range(6):
                pA[i, r] -= tmp2[r]


@njit(cache=True)
def acceleration_pass(ti, S, a_grav, R, p, c, U, Dinv, u, a, qdd):
    """Pass 3 of ABA: accelerations, root to leaves."""
    nb = ti.shape[0]
    tmp = np.empty(6)
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
def aba_batch(ti, tf, S, a_grav, Q, QD, TAU, FEXT, use_fext, QDD):
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
    for n in range(QDD.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        qd = QD[min(n, QD.shape[0] - 1)]
        tau = TAU[min(n, TAU.shape[0] - 1)]
        fe = FEXT[min(n, FEXT.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        if not all_finite(qd):
            return BAD_QD
        if not all_finite(tau):
            return BAD_TAU
        if use_fext and not all_finite(fe):
            return BAD_FEXT
        velocity_pass(ti, tf, S, a_grav, q, qd, fe, use_fext, R, p, R0, p0, v, c, IA, pA)
        if not articulated_pass(ti, tf, S, tau, fd, R, p, v, c, IA, pA, U, Dinv, u, X):
            return SINGULAR
        acceleration_pass(ti, S, a_grav, R, p, c, U, Dinv, u, a, QDD[n])
    return OK


def aba(model, q, qd, tau, f_ext=None):
    """Forward dynamics q̈ = FD(q, q̇, τ, f_ext) by the articulated-body algorithm (spatial_v2 ``FDab``).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> qdd = mb.aba(m, np.zeros(2), np.zeros(2), np.zeros(2))   # falls under gravity
    """
    args, batch = B.states(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    qdd = np.empty((B.batch_size(batch), model.nv))
    fe = args.get("f_ext")
    B.raise_for(aba_batch(ti, tf, S, a_grav, args["q"], args["qd"], args["tau"],
                          B.no_fext(model) if fe is None else fe, fe is not None, qdd))
    return qdd.reshape(batch + (model.nv,))


FDab = aba
forward_dynamics = aba
