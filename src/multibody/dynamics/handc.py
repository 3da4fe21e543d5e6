"""Joint-space inertia by the composite-rigid-body algorithm (RBDA table 6.2; spatial_v2 ``HandC``).

The algorithm is ``csrc/kernels/crba.c`` (C from ``csrc/kernels/rnea.c``); this is its Python face.
"""
from __future__ import annotations

from .. import _boundary as B
from .. import _checks
from ..core import _core


def crba(model, q):
    """Joint-space inertia matrix H(q) (nv × nv) by the composite-rigid-body algorithm.

    The model's armature is added to the diagonal.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> H = mb.crba(mb.models.planar(2), np.zeros(2))
    >>> bool(np.allclose(H, H.T))
    True
    """
    _checks.model(model)
    return B.call_batched(_core.crba, model, (model.nv, model.nv), q=q)


crba = B.fast_entry(_core.crba, crba)  # called from C: no Python frame on the fast path


def hand_c(model, q, qd, f_ext=None):
    """spatial_v2 ``HandC``: H (CRBA) and C = ID(q, q̇, 0, f_ext) (RNEA), so that H q̈ + C = τ.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> H, C = mb.hand_c(mb.models.planar(2), np.zeros(2), np.ones(2))
    """
    _checks.model(model)
    c = model._c
    out = _core.hand_c(c, q, qd, f_ext)
    if out is not None:
        return out
    args, batch = B.states(model, q=q, qd=qd, f_ext=f_ext)
    H, C = _core.hand_c(c, args["q"], args["qd"], args.get("f_ext"))
    return H.reshape(batch + (model.nv, model.nv)), C.reshape(batch + (model.nv,))
