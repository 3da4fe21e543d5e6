"""Inverse dynamics by the recursive Newton-Euler algorithm (RBDA table 5.1; spatial_v2 ``ID``)."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _boundary as B
from .._numba.primitives import (check_rates, BAD_QD, BAD_QDD, OK, PARENT, VS, NVJ, all_finite,
                                 check_configuration, crf_add, crm_add, first_error, force_to_child,
                                 inertia_mul, tree_poses, world_poses, xm, xtf_add)


@njit(cache=True)
def rnea_one(ti, tf, S, a_grav, q, qd, qdd, fext, use_fext, tau, R, p, R0, p0, v, a, f):
    """One state; v, a, f are body-coordinate velocity, acceleration and net force (rows per body).

    Rows: vJ = Σ S_k q̇_k;  v_i = Xup_i v_λ + vJ;  a_i = Xup_i a_λ + Σ S_k q̈_k + v_i ×m vJ;
    f_i = I_i a_i + v_i ×* I_i v_i − X*_0i f_ext,i;  τ_k = S_kᵀ f_i;  f_λ += Xup_iᵀ f_i.
    """
    nb = ti.shape[0]
    w = np.empty((3, 6))  # rows: vJ, −a_grav, scratch
    for r in range(6):
        w[1, r] = -a_grav[r]
    tree_poses(ti, tf, q, R, p)
    if use_fext:
        world_poses(ti, R, p, R0, p0)
    for i in range(nb):
        par = ti[i, PARENT]
        vs = ti[i, VS]
        for r in range(6):
            w[0, r] = 0.0
        for k in range(vs, vs + ti[i, NVJ]):
            for r in range(6):
                w[0, r] += S[k, r] * qd[k]
        if par < 0:
            for r in range(6):
                v[i, r] = w[0, r]
            xm(R, p, i, w, 1, a, i)
        else:
            xm(R, p, i, v, par, v, i)
            for r in range(6):
                v[i, r] += w[0, r]
            xm(R, p, i, a, par, a, i)
            crm_add(v, i, w, 0, a, i)
        for k in range(vs, vs + ti[i, NVJ]):
            for r in range(6):
                a[i, r] += S[k, r] * qdd[k]
        inertia_mul(tf, i, a, i, f, i)
        inertia_mul(tf, i, v, i, w, 2)
        crf_add(v, i, w, 2, f, i)
        if use_fext:
            force_to_child(R0[i], p0[i], fext[i], w[2])
            for r in range(6):
                f[i, r] -= w[2, r]
    for i in range(nb - 1, -1, -1):
        vs = ti[i, VS]
        for k in range(vs, vs + ti[i, NVJ]):
            s = 0.0
            for r in range(6):
                s += S[k, r] * f[i, r]
            tau[k] = s
        par = ti[i, PARENT]
        if par >= 0:
            xtf_add(R, p, i, f, i, f, par)


@njit(cache=True)
def rnea_range(ti, tf, S, a_grav, Q, QD, QDD, FEXT, use_fext, TAU, lo, hi):
    """States lo…hi−1 of a batch (arguments with leading size 1 are shared by all states)."""
    nb = ti.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    R0 = np.empty((nb, 3, 3))
    p0 = np.empty((nb, 3))
    v = np.empty((nb, 6))
    a = np.empty((nb, 6))
    f = np.empty((nb, 6))
    for n in range(lo, hi):
        q = Q[min(n, Q.shape[0] - 1)]
        qd = QD[min(n, QD.shape[0] - 1)]
        qdd = QDD[min(n, QDD.shape[0] - 1)]
        fe = FEXT[min(n, FEXT.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        st = check_rates(qd, qdd, BAD_QDD, fe, use_fext)
        if st != OK:
            return st
        rnea_one(ti, tf, S, a_grav, q, qd, qdd, fe, use_fext, TAU[n], R, p, R0, p0, v, a, f)
    return OK


@njit(cache=True)
def rnea_batch(ti, tf, S, a_grav, Q, QD, QDD, FEXT, use_fext, TAU):
    return rnea_range(ti, tf, S, a_grav, Q, QD, QDD, FEXT, use_fext, TAU, 0, TAU.shape[0])


@njit(cache=True, parallel=True)
def rnea_batch_parallel(ti, tf, S, a_grav, Q, QD, QDD, FEXT, use_fext, TAU, nchunk):
    N = TAU.shape[0]
    status = np.zeros(nchunk, dtype=np.int64)
    for c in prange(nchunk):
        status[c] = rnea_range(ti, tf, S, a_grav, Q, QD, QDD, FEXT, use_fext, TAU,
                               c * N // nchunk, (c + 1) * N // nchunk)
    return first_error(status)


@njit(cache=True)
def rnea_single(ti, tf, S, a_grav, q, qd, qdd, tau):
    """Single-state fast path (1-D arrays, output given: returning a new array costs a boxing)."""
    nb = ti.shape[0]
    st = check_configuration(ti, q)
    if st != OK:
        return st
    if not all_finite(qd):
        return BAD_QD
    if not all_finite(qdd):
        return BAD_QDD
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    v = np.empty((nb, 6))
    a = np.empty((nb, 6))
    f = np.empty((nb, 6))
    rnea_one(ti, tf, S, a_grav, q, qd, qdd, v, False, tau, R, p, R, p, v, a, f)
    return OK


def rnea(model, q, qd, qdd, f_ext=None):
    """Inverse dynamics τ = ID(q, q̇, q̈, f_ext) by recursive Newton-Euler (spatial_v2 ``ID``).

    ``f_ext`` (…, nb, 6) are spatial forces on the bodies in base coordinates, [moment; force].
    Every argument may carry leading batch dimensions.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> tau = mb.rnea(m, np.zeros(2), np.zeros(2), np.zeros(2))   # holds the arm against gravity
    >>> tau.shape
    (2,)
    """
    if f_ext is None and B.is_vec(q, model.nq) and B.is_vec(qd, model.nv) and B.is_vec(qdd, model.nv):
        tau = np.empty(model.nv)
        B.raise_for(rnea_single(*model._packed, q, qd, qdd, tau))
        if model.armature.any():  # rotor inertia: τ += armature·q̈ (interim, until the compiled core adds it)
            tau += model.armature * qdd
        return tau
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    N = B.batch_size(batch)
    tau = np.empty((N, model.nv))
    fe = args.get("f_ext")
    B.run(rnea_batch, rnea_batch_parallel, N, ti, tf, S, a_grav, args["q"], args["qd"], args["qdd"],
          B.no_fext(model) if fe is None else fe, fe is not None, tau)
    if model.armature.any():  # rotor inertia: τ += armature·q̈
        tau += model.armature * args["qdd"]
    return tau.reshape(batch + (model.nv,))


ID = rnea
inverse_dynamics = rnea
