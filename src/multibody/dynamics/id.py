"""Inverse dynamics by the recursive Newton-Euler algorithm (RBDA table 5.1; spatial_v2 ``ID``).

The algorithm is ``csrc/kernels/rnea.c``; this is its Python face: signature, docstring, argument
conversion for anything that is not a plain 1-D float64 state.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
         f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Inverse dynamics τ = ID(q, q̇, q̈, f_ext) by the recursive Newton-Euler algorithm (RBDA table
    5.1; spatial_v2 ``ID``).

    The joint forces that give the accelerations ``qdd`` in the state (``q``, ``qd``) under the
    model's gravity and the external forces: τ = H(q) q̈ + C(q, q̇, f_ext).  The model's armature
    adds ``armature * qdd`` to τ.  Every argument may carry leading batch dimensions; they
    broadcast together (NumPy's rules) and the loop over states runs in compiled code.

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].
    qd : array_like, shape (..., nv)
        Joint velocities: rad/s, m/s; a spherical or free joint's [ω; v] in its body's coordinates.
    qdd : array_like, shape (..., nv)
        Joint accelerations: rad/s², m/s².
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in base coordinates, [moment (N·m) about the base
        origin; force (N)].  None: no external force.

    Returns
    -------
    tau : ndarray, shape (..., nv)
        Joint forces: N·m (revolute), N (prismatic).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; an array argument is None (``f_ext`` excepted), a
        string, complex or object array.
    ValueError
        A wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero quaternion, a
        symbolic model.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    See Also
    --------
    hand_c : H(q) and C = ID(q, q̇, 0, f_ext) together.
    aba : forward dynamics, the inverse of this function.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, qdd = np.array([0.3, -0.5]), np.array([1.0, 2.0]), np.array([0.5, -1.0])
    >>> tau = mb.rnea(m, q, qd, qdd)
    >>> bool(np.allclose(mb.aba(m, q, qd, tau), qdd))        # forward dynamics undoes it
    True
    >>> mb.rnea(m, np.zeros((5, 2)), qd, qdd).shape          # five configurations at once
    (5, 2)
    """
    _checks.model(model)
    return B.call_batched(_core.rnea, model, (model.nv,), q=q, qd=qd, qdd=qdd, f_ext=f_ext)


rnea = B.fast_entry(_core.rnea, rnea)  # called from C: no Python frame on the fast path
