"""Energy, momentum and related quantities (spatial_v2 ``EnerMo``).

The recursion is ``csrc/kernels/energy.c``; this face derives mass, CoM, potential energy and CoM
velocity from the total inertia and momentum it returns.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _boundary as B
from .. import _checks
from ..core import _core


@dataclass(frozen=True)
class Energy:
    """EnerMo results; every field carries the caller's batch dimensions.

    KE, PE: kinetic and potential energy (KE includes ½ armature q̇² of the joints' rotors);
    htot: total spatial momentum about the base origin in base coordinates [angular; linear];
    Itot: total spatial inertia (6×6, base coordinates); mass; cm: centre of mass; vcm:
    centre-of-mass velocity.
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


def energy(model, q, qd) -> Energy:
    """spatial_v2 ``EnerMo``: kinetic and potential energy, momentum, total inertia, mass, CoM.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> e = mb.energy(mb.models.planar(2), np.zeros(2), np.ones(2))
    >>> float(e.mass)
    2.0
    """
    _checks.model(model)
    c = model._c
    out = _core.energy(c, q, qd)
    if out is None:
        args, batch = B.states(model, q=q, qd=qd)
        out = _core.energy(c, args["q"], args["qd"])
    else:
        batch = out[0].shape  # () for one 1-D state, (N,) for (N, n) arrays
    KE, htot, Itot = out[0].reshape(-1), out[1].reshape(-1, 6), out[2].reshape(-1, 6, 6)
    mass = Itot[:, 5, 5]
    safe = np.where(mass > 0, mass, 1.0)
    # mcI: m c× sits in the upper-right block of the spatial inertia
    cm = np.stack([Itot[:, 2, 4], Itot[:, 0, 5], Itot[:, 1, 3]], axis=-1) / safe[:, None]
    PE = -mass * (cm @ model.gravity)
    vcm = htot[:, 3:] / safe[:, None]
    shp = lambda a, tail=(): a.reshape(batch + tail)  # noqa: E731
    return Energy(KE=shp(KE), PE=shp(PE), htot=shp(htot, (6,)), Itot=shp(Itot, (6, 6)), mass=shp(mass),
                  cm=shp(cm, (3,)), vcm=shp(vcm, (3,)))
