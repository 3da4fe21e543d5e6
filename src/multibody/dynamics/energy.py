"""Energy, momentum and related quantities (spatial_v2 ``EnerMo``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .. import _boundary as B
from .._numba.primitives import (BAD_QD, F_INERTIA, OK, PARENT, VS, NVJ, all_finite, check_configuration,
                                 congruence_add, force_to_parent_add, inertia_times,
                                 motion_to_child, plux_matrix, tree_poses)


@dataclass(frozen=True)
class Energy:
    """EnerMo results; every field carries the caller's batch dimensions.

    KE, PE: kinetic and potential energy; htot: total spatial momentum about the base origin in
    base coordinates [angular; linear]; Itot: total spatial inertia (6×6, base coordinates);
    mass; cm: centre of mass; vcm: centre-of-mass velocity.
    """
    KE: np.ndarray
    PE: np.ndarray
    htot: np.ndarray
    Itot: np.ndarray
    mass: np.ndarray
    cm: np.ndarray
    vcm: np.ndarray

    @property
    def total(self):
        return self.KE + self.PE


@njit(cache=True)
def energy_batch(ti, tf, S, a_grav, Q, QD, KE, HTOT, ITOT):
    nb = ti.shape[0]
    R = np.empty((nb, 3, 3))
    p = np.empty((nb, 3))
    v = np.empty((nb, 6))
    Ic = np.empty((nb, 6, 6))
    hc = np.empty((nb, 6))
    vJ = np.empty(6)
    tmp = np.empty(6)
    X = np.empty((6, 6))
    for n in range(KE.shape[0]):
        q = Q[min(n, Q.shape[0] - 1)]
        qd = QD[min(n, QD.shape[0] - 1)]
        st = check_configuration(ti, q)
        if st != OK:
            return st
        if not all_finite(qd):
            return BAD_QD
        tree_poses(ti, tf, q, R, p)
        ke = 0.0
        for i in range(nb):
            vJ[:] = 0.0
            for k in range(ti[i, VS], ti[i, VS] + ti[i, NVJ]):
                for r in range(6):
                    vJ[r] += S[k, r] * qd[k]
            par = ti[i, PARENT]
            if par < 0:
                v[i] = vJ
            else:
                motion_to_child(R[i], p[i], v[par], tmp)
                for r in range(6):
                    v[i, r] = tmp[r] + vJ[r]
            inertia_times(tf[i], v[i], hc[i])
            for r in range(6):
                ke += 0.5 * v[i, r] * hc[i, r]
                for cc in range(6):
                    Ic[i, r, cc] = tf[i, F_INERTIA + 6 * r + cc]
        KE[n] = ke
        HTOT[n] = 0.0
        ITOT[n] = 0.0
        for i in range(nb - 1, -1, -1):
            par = ti[i, PARENT]
            plux_matrix(R[i], p[i], X)
            if par >= 0:
                congruence_add(X, Ic[i], Ic[par])
                force_to_parent_add(R[i], p[i], hc[i], hc[par])
            else:
                congruence_add(X, Ic[i], ITOT[n])
                force_to_parent_add(R[i], p[i], hc[i], HTOT[n])
    return OK


def energy(model, q, qd) -> Energy:
    """spatial_v2 ``EnerMo``: kinetic and potential energy, momentum, total inertia, mass, CoM.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> e = mb.energy(mb.models.planar(2), np.zeros(2), np.ones(2))
    >>> float(e.mass)
    2.0
    """
    args, batch = B.states(model, q=q, qd=qd)
    ti, tf, S, a_grav = model._packed
    N = B.batch_size(batch)
    KE = np.empty(N)
    htot = np.empty((N, 6))
    Itot = np.empty((N, 6, 6))
    B.raise_for(energy_batch(ti, tf, S, a_grav, args["q"], args["qd"], KE, htot, Itot))
    mass = Itot[:, 5, 5]
    safe = np.where(mass > 0, mass, 1.0)
    # mcI: m c× sits in the upper-right block of the spatial inertia
    cm = np.stack([Itot[:, 2, 4], Itot[:, 0, 5], Itot[:, 1, 3]], axis=-1) / safe[:, None]
    PE = -mass * (cm @ model.gravity)
    vcm = htot[:, 3:] / safe[:, None]
    shp = lambda a, tail=(): a.reshape(batch + tail)  # noqa: E731
    return Energy(KE=shp(KE), PE=shp(PE), htot=shp(htot, (6,)), Itot=shp(Itot, (6, 6)), mass=shp(mass),
                  cm=shp(cm, (3,)), vcm=shp(vcm, (3,)))


EnerMo = energy
