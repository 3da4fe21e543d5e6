"""Forward dynamics exploiting branch-induced sparsity (RBDA §6.5, tables 6.3-6.4).

H q̈ = τ − C is solved with H from the composite-rigid-body algorithm, C from RNEA, and the
sparsity-preserving factorisation H = Lᵀ D L (``LTDL``), followed by the O(n·depth) solves
``q̈ = L⁻¹ D⁻¹ L⁻ᵀ (τ − C)`` (``mpyLit``, ``mpyLi``).  The expanded parent array λ of the velocity
variables is ``model.dof_parent`` (``expandLambda``, table 6.4).  The algorithm is
``csrc/kernels/sparse.c``; this is its Python face.
"""
from __future__ import annotations

from .. import _boundary as B
from .. import _checks
from ..core import _core


def fd_sparse(model, q, qd, tau, f_ext=None):
    """Forward dynamics by CRBA + sparse ``Lᵀ D L`` factorisation (RBDA §6.5; spatial_v2 ``FDcrb``
    with ``LTDL``/``mpyLi``/``mpyLit``).

    Same results as :func:`multibody.aba` and :func:`multibody.fd_crb`; the factorisation and
    solves cost O(n·d) (d = depth of the tree) instead of O(n³), which pays off on wide, shallow
    trees.  ``f_ext`` (…, nb, 6) are spatial forces in base coordinates.  Every argument may carry
    leading batch dimensions; the loop over states runs in compiled code.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.auto_tree(7, bf=2)
    >>> q, qd, tau = np.full(7, 0.3), np.ones(7), np.zeros(7)
    >>> bool(np.allclose(mb.fd_sparse(m, q, qd, tau), mb.aba(m, q, qd, tau)))
    True
    """
    _checks.model(model)
    return B.call_batched(_core.fd_sparse, model, (model.nv,), q=q, qd=qd, tau=tau, f_ext=f_ext)


fd_sparse = B.fast_entry(_core.fd_sparse, fd_sparse)  # called from C: no Python frame on the fast path
