"""Joint-space inertia by the composite-rigid-body algorithm (RBDA table 6.2; spatial_v2 ``HandC``).

The algorithm is ``csrc/kernels/crba.c`` (C from ``csrc/kernels/rnea.c``); this is its Python face.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


def crba(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """Joint-space inertia matrix H(q) by the composite-rigid-body algorithm (RBDA table 6.2; the H
    of spatial_v2 ``HandC``).

    H is symmetric and positive definite for a model whose bodies all have mass; the model's
    armature is added to its diagonal.  The kinetic energy is ½ q̇ᵀ H q̇.

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].  Leading batch
        dimensions give a batch of matrices.

    Returns
    -------
    H : ndarray, shape (..., nv, nv)
        The joint-space inertia: kg·m² between rotations, kg between translations, kg·m between
        the two (entry [j, k] pairs velocity variables j and k).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; ``q`` is None, a string, complex or object array.
    ValueError
        A wrong shape, NaN or inf, a zero quaternion, a symbolic model.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd = np.array([0.3, -0.5]), np.array([1.0, 2.0])
    >>> H = mb.crba(m, q)
    >>> bool(np.allclose(H, H.T)), bool(np.all(np.linalg.eigvalsh(H) > 0))
    (True, True)
    >>> bool(np.isclose(0.5 * qd @ H @ qd, mb.energy(m, q, qd).KE))     # kinetic energy
    True
    """
    _checks.model(model)
    return B.call_batched(_core.crba, model, (model.nv, model.nv), q=q)


crba = B.fast_entry(_core.crba, crba)  # called from C: no Python frame on the fast path


def hand_c(model: Model, q: ArrayLike, qd: ArrayLike,
           f_ext: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """H(q) and C(q, q̇, f_ext) of the equation of motion H q̈ + C = τ (spatial_v2 ``HandC``; RBDA
    tables 6.2 and 5.1).

    H by the composite-rigid-body algorithm (armature on its diagonal, as :func:`crba`) and
    C = ID(q, q̇, 0, f_ext) by RNEA: the Coriolis, centrifugal and gravity forces minus those of
    ``f_ext``.  Every argument may carry leading batch dimensions; they broadcast together.

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].
    qd : array_like, shape (..., nv)
        Joint velocities: rad/s, m/s; a spherical or free joint's [ω; v] in its body's coordinates.
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in base coordinates, [moment (N·m) about the base
        origin; force (N)].  None: no external force.

    Returns
    -------
    H : ndarray, shape (..., nv, nv)
        The joint-space inertia (kg·m², kg, kg·m), as :func:`crba`.
    C : ndarray, shape (..., nv)
        The bias forces: N·m (revolute), N (prismatic).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; ``q`` or ``qd`` is None, or an argument is a string,
        complex or object array.
    ValueError
        A wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero quaternion, a
        symbolic model.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, qdd = np.array([0.3, -0.5]), np.array([1.0, 2.0]), np.array([0.5, -1.0])
    >>> H, C = mb.hand_c(m, q, qd)
    >>> bool(np.allclose(H @ qdd + C, mb.rnea(m, q, qd, qdd)))
    True
    """
    _checks.model(model)
    c = model._c
    out = _core.hand_c(c, q, qd, f_ext)
    if out is not None:
        return out
    args, batch = B.states(model, q=q, qd=qd, f_ext=f_ext)
    H, C = _core.hand_c(c, args["q"], args["qd"], args.get("f_ext"))
    return H.reshape(batch + (model.nv, model.nv)), C.reshape(batch + (model.nv,))
