"""Forward dynamics exploiting branch-induced sparsity (RBDA §6.5, tables 6.3-6.4).

H q̈ = τ − C is solved with H from the composite-rigid-body algorithm, C from RNEA, and the
sparsity-preserving factorisation H = Lᵀ D L (``LTDL``), followed by the O(n·depth) solves
``q̈ = L⁻¹ D⁻¹ L⁻ᵀ (τ − C)`` (``mpyLit``, ``mpyLi``).  The expanded parent array λ of the velocity
variables is ``model.dof_parent`` (``expandLambda``, table 6.4).  The algorithm is
``csrc/kernels/sparse.c``; this is its Python face.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


def fd_sparse(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
              f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Forward dynamics by CRBA and the sparse ``Lᵀ D L`` factorisation (RBDA §6.5, tables 6.3–6.4;
    spatial_v2 ``FDcrb`` with ``LTDL``, ``mpyLi``, ``mpyLit``).

    The same accelerations as :func:`aba` and :func:`fd_crb`; the factorisation and the solves
    cost O(nv·d) (d: the depth of the tree) instead of O(nv³), which pays off on wide, shallow
    trees.  Every argument may carry leading batch dimensions; they broadcast together and the
    loop over states runs in compiled code.

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

    See Also
    --------
    multibody.sparse : the factorisation and the solves one by one (``ltdl``, ``mpy_li``, …).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.auto_tree(7, bf=2)                     # a binary tree of 7 bodies
    >>> q, qd, tau = np.full(7, 0.3), np.ones(7), np.zeros(7)
    >>> bool(np.allclose(mb.fd_sparse(m, q, qd, tau), mb.aba(m, q, qd, tau)))
    True
    """
    _checks.model(model)
    return B.call_batched(_core.fd_sparse, model, (model.nv,), q=q, qd=qd, tau=tau, f_ext=f_ext)


fd_sparse = B.fast_entry(_core.fd_sparse, fd_sparse)  # called from C: no Python frame on the fast path
