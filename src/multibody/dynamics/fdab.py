"""Forward dynamics by the articulated-body algorithm (RBDA table 7.1; spatial_v2 ``FDab``).

The algorithm is ``csrc/kernels/aba.c`` (its three passes also serve HD and FDfb); this is its Python face.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
        f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Forward dynamics q̈ = FD(q, q̇, τ, f_ext) by the articulated-body algorithm (RBDA table 7.1;
    spatial_v2 ``FDab``).

    The accelerations the joint forces ``tau`` give in the state (``q``, ``qd``) under the
    model's gravity and the external forces, in O(nb) without forming H(q): the solution of
    H(q) q̈ + C(q, q̇, f_ext) = τ.  The model's armature adds to each joint's D block
    (D_i = S_iᵀ U_i + armature).  Every argument may carry leading batch dimensions; they
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
    tau : array_like, shape (..., nv)
        Joint forces: N·m (revolute), N (prismatic).
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in base coordinates, [moment (N·m) about the base
        origin; force (N)].  None: no external force.

    Returns
    -------
    qdd : ndarray, shape (..., nv)
        Joint accelerations: rad/s², m/s² (a spherical or free joint's in its body's coordinates).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; an array argument is None (``f_ext`` excepted), a
        string, complex or object array.
    ValueError
        A wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero quaternion, a
        symbolic model, a singular inertia (a joint whose subtree has no inertia about its
        motion; the message names the body).
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    See Also
    --------
    rnea : inverse dynamics, the inverse of this function.
    fd_crb, fd_sparse : the same accelerations from H(q) and C.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, tau = np.array([0.3, -0.5]), np.array([1.0, 2.0]), np.array([0.2, 0.1])
    >>> qdd = mb.aba(m, q, qd, tau)
    >>> bool(np.allclose(mb.rnea(m, q, qd, qdd), tau))       # inverse dynamics gives τ back
    True
    >>> mb.aba(m, np.zeros((4, 3, 2)), qd, tau).shape       # a 4 × 3 batch of configurations
    (4, 3, 2)
    """
    _checks.model(model)
    return B.call_batched(_core.aba, model, (model.nv,), q=q, qd=qd, tau=tau, f_ext=f_ext)


aba = B.fast_entry(_core.aba, aba)  # called from C: no Python frame on the fast path
