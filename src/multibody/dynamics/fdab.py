"""Forward dynamics by the articulated-body algorithm (RBDA table 7.1; spatial_v2 ``FDab``).

The algorithm is ``csrc/kernels/aba.c`` (its three passes also serve HD and FDfb); this is its Python face.
"""
from __future__ import annotations

from .. import _boundary as B
from .. import _checks
from ..core import _core


def aba(model, q, qd, tau, f_ext=None):
    """Forward dynamics q̈ = FD(q, q̇, τ, f_ext) by the articulated-body algorithm (spatial_v2 ``FDab``).

    The model's armature adds to each joint's D block (D_i = S_iᵀ U_i + armature).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> qdd = mb.aba(m, np.zeros(2), np.zeros(2), np.zeros(2))   # falls under gravity
    """
    _checks.model(model)
    return B.call_batched(_core.aba, model, (model.nv,), q=q, qd=qd, tau=tau, f_ext=f_ext)


aba = B.fast_entry(_core.aba, aba)  # called from C: no Python frame on the fast path
