"""Forward dynamics by the composite-rigid-body algorithm (spatial_v2 ``FDcrb``): solve H q̈ = τ − C.

The algorithm is ``csrc/kernels/fd_crb.c``; this is its Python face.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


def fd_crb(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
           f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Forward dynamics by the composite-rigid-body algorithm (spatial_v2 ``FDcrb``; RBDA §6.2).

    H(q) by CRBA and C(q, q̇, f_ext) by RNEA, then q̈ = H⁻¹(τ − C) by a dense Cholesky solve:
    O(nv³), the same accelerations as :func:`aba`.  Every argument may carry leading batch
    dimensions; they broadcast together and the loop over states runs in compiled code.

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].
    qd : array_like, shape (..., nv)
        Joint velocities: rad/s, m/s; a spherical or free joint's [ω; v] in its body's coordinates.
    tau : array_like, shape (..., nv)
        Joint forces: N·m (revolute), N (prismatic).
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in base coordinates, [moment (N·m) about the base
        origin; force (N)].  None: no external force.

    Returns
    -------
    qdd : ndarray, shape (..., nv)
        Joint accelerations: rad/s², m/s².

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; an array argument is None (``f_ext`` excepted), a
        string, complex or object array.
    ValueError
        A wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero quaternion, a
        symbolic model, a singular H(q) (a massless body or chain).
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, tau = np.array([0.1, 0.2]), np.array([0.0, 1.0]), np.zeros(2)
    >>> bool(np.allclose(mb.fd_crb(m, q, qd, tau), mb.aba(m, q, qd, tau)))
    True
    """
    _checks.model(model)
    return B.call_batched(_core.fd_crb, model, (model.nv,), q=q, qd=qd, tau=tau, f_ext=f_ext)


fd_crb = B.fast_entry(_core.fd_crb, fd_crb)  # called from C: no Python frame on the fast path
