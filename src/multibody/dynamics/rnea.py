"""Inverse dynamics by the recursive Newton-Euler algorithm (RBDA table 5.1; spatial_v2 ``ID``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import (BAD_FEXT, BAD_QD, BAD_QDD, OK, PARENT, VS, NVJ, check_configuration,
                                 all_finite, cross_force, cross_motion, force_to_child,
                                 force_to_parent_add, inertia_times, motion_to_child, tree_poses,
                                 world_poses)


@njit(cache=True)
def rnea_one(ti, tf, S, a_grav, q, qd, qdd, fext, use_fext, tau, R, p, R0, p0, v, a, f):
    """One state.  v, a, f are body-coordinate spatial velocity, acceleration and net force."""
    nb = ti.shape[0]
    vJ = np.empty(6)
    tmp = np.empty(6)
    tmp2 = np.empty(6)
    tree_poses(ti, tf, q, R, p)
    if use_fext:
        world_poses(ti, R, p, R0, p0)
    for i in range(nb):
        par = ti[i, PARENT]
        vs = ti[i, VS]
        vJ[:] = 0.0
        for k in range(vs, vs + ti[i, NVJ]):
            for r in range(6):
                vJ[r] += S[k, r] * qd[k]
        if par < 0:
            v[i] = vJ
            for r in range(6):
                tmp[r] = -a_grav[r]
            motion_to_child(R[i], p[i], tmp, a[i])
        else:
            motion_to_child(R[i], p[i], v[par], tmp)
            for r in range(6):
                v[i, r] = tmp[r] + vJ[r]
            motion_to_child(R[i], p[i], a[par], a[i])
            cross_motion(v[i], vJ, tmp)
            for r in range(6):
                a[i, r] += tmp[r]
        for k in range(vs, vs + ti[i, NVJ]):
            for r in range(6):
                a[i, r] += S[k, r] * qdd[k]
        # f = I a + v ×* I v − fext (fext given in base coordinates)
        inertia_times(tf[i], a[i], f[i])
        inertia_times(tf[i], v[i], tmp)
        cross_force(v[i], tmp, tmp2)
        for r in range(6):
            f[i, r] += tmp2[r]
        if use_fext:
            force_to_child(R0[i], p0[i], fext[i], tmp)
            for r in range(6):
                f[i, r] -= tmp[r]
    for i in range(nb - 1, -1, -1):
        vs = ti[i, VS]
        for k in range(vs, vs + ti[i, NVJ]):
            s = 0.0
            for r in range(6):
                s += S[k, r] * f[i, r]
            tau[k] = s
        par = ti[i, PARENT]
        if par >= 0:
            force_to_parent_add(R[i], p[i], f[i], f[par])


@njit(cache=True)
def rnea_batch(ti, tf, S, a_grav, Q, QD, QDD, FEXT, use_fext, TAU):
    nb = ti.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    R0 = np.empty((nb, 3, 3))
    p0 = np.empty((nb, 3))
    v = np.empty((nb, 6))
    a = np.empty((nb, 6))
    f = np.empty((nb, 6))
    for n in range(TAU.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        qd = QD[min(n, QD.shape[0] - 1)]
        qdd = QDD[min(n, QDD.shape[0] - 1)]
        fe = FEXT[min(n, FEXT.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        if not all_finite(qd):
            return BAD_QD
        if not all_finite(qdd):
            return BAD_QDD
        if use_fext and not all_finite(fe):
            return BAD_FEXT
        rnea_one(ti, tf, S, a_grav, q, qd, qdd, fe, use_fext, TAU[n], R, p, R0, p0, v, a, f)
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
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    ti, tf, S, a_grav = model._packed
    tau = np.empty((B.batch_size(batch), model.nv))
    fe = args.get("f_ext")
    B.raise_for(rnea_batch(ti, tf, S, a_grav, args["q"], args["qd"], args["qdd"],
                           B.no_fext(model) if fe is None else fe, fe is not None, tau))
    return tau.reshape(batch + (model.nv,))


ID = rnea
inverse_dynamics = rnea
