"""Forward dynamics by the composite-rigid-body algorithm (spatial_v2 ``FDcrb``): solve H q̈ = τ − C.

The algorithm is ``csrc/kernels/fd_crb.c``; this is its Python face.
"""
from __future__ import annotations

from .. import _boundary as B
from .. import _checks
from ..core import _core


def fd_crb(model, q, qd, tau, f_ext=None):
    """spatial_v2 ``FDcrb``: q̈ from H (CRBA) and C (RNEA) by a dense Cholesky solve.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> bool(np.allclose(mb.fd_crb(m, [0.1, 0.2], [0, 1], [0, 0]), mb.aba(m, [0.1, 0.2], [0, 1], [0, 0])))
    True
    """
    _checks.model(model)
    return B.call_batched(_core.fd_crb, model, (model.nv,), q=q, qd=qd, tau=tau, f_ext=f_ext)


fd_crb = B.fast_entry(_core.fd_crb, fd_crb)  # called from C: no Python frame on the fast path
