"""Energy, momentum and related quantities (spatial_v2 ``EnerMo``).

The recursion is ``csrc/kernels/energy.c``; this face derives mass, CoM, potential energy and CoM
velocity from the total inertia and momentum it returns.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


@dataclass(frozen=True)
class Energy:
    """The results of :func:`energy` (spatial_v2 ``EnerMo``); every field carries the caller's batch
    dimensions ``...``.

    Attributes
    ----------
    KE : ndarray, shape (...)
        Kinetic energy (J), including ½ armature q̇² of the joints' rotors.
    PE : ndarray, shape (...)
        Potential energy in the model's gravity (J), zero with the centre of mass at the base origin.
    htot : ndarray, shape (..., 6)
        Total spatial momentum about the base origin in base coordinates, [angular (kg·m²/s);
        linear (kg·m/s)].
    Itot : ndarray, shape (..., 6, 6)
        Total spatial inertia of all bodies in base coordinates.
    mass : ndarray, shape (...)
        Total mass (kg).
    cm : ndarray, shape (..., 3)
        Centre of mass in base coordinates (m); zeros when the mass is zero.
    vcm : ndarray, shape (..., 3)
        Velocity of the centre of mass in base coordinates (m/s).
    total : ndarray, shape (...)
        KE + PE (a property).
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
        """KE + PE: the total mechanical energy (J)."""
        return self.KE + self.PE


def energy(model: Model, q: ArrayLike, qd: ArrayLike) -> Energy:
    """Energy, momentum, total inertia, mass and centre of mass (spatial_v2 ``EnerMo``).

    One pass over the bodies gives the kinetic energy, the total spatial inertia and momentum;
    mass, centre of mass, potential energy and centre-of-mass velocity follow from those.  Both
    arguments may carry leading batch dimensions.

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].
    qd : array_like, shape (..., nv)
        Joint velocities: rad/s, m/s; a spherical or free joint's [ω; v] in its body's coordinates.

    Returns
    -------
    Energy
        ``KE``, ``PE`` (J), ``htot`` (..., 6), ``Itot`` (..., 6, 6), ``mass`` (kg), ``cm``,
        ``vcm`` (..., 3), all in base coordinates (see :class:`Energy`).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; ``q`` or ``qd`` is None, a string, complex or object array.
    ValueError
        A wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero quaternion, a
        symbolic model.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)                     # two links of 1 kg
    >>> q, qd = np.array([0.3, -0.5]), np.array([1.0, 2.0])
    >>> e = mb.energy(m, q, qd)
    >>> float(e.mass), bool(np.isclose(e.KE, 0.5 * qd @ mb.crba(m, q) @ qd))
    (2.0, True)
    >>> bool(np.isclose(e.PE, -e.mass * e.cm @ m.gravity))
    True
    >>> mb.energy(m, np.zeros((10, 2)), qd).KE.shape    # a batch of 10 states
    (10,)
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
