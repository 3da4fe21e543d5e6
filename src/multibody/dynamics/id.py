"""Inverse dynamics by the recursive Newton-Euler algorithm (RBDA table 5.1; spatial_v2 ``ID``).

The algorithm is ``csrc/kernels/rnea.c``; this is its Python face: signature, docstring, argument
conversion for anything that is not a plain 1-D float64 state.
"""
from __future__ import annotations

from .. import _boundary as B
from .. import _checks
from ..core import _core


def rnea(model, q, qd, qdd, f_ext=None):
    """Inverse dynamics τ = ID(q, q̇, q̈, f_ext) by recursive Newton-Euler (spatial_v2 ``ID``).

    ``f_ext`` (…, nb, 6) are spatial forces on the bodies in base coordinates, [moment; force].
    Every argument may carry leading batch dimensions.  The model's armature adds
    ``armature * qdd`` to τ.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> tau = mb.rnea(m, np.zeros(2), np.zeros(2), np.zeros(2))   # holds the arm against gravity
    >>> tau.shape
    (2,)
    """
    _checks.model(model)
    return B.call_batched(_core.rnea, model, (model.nv,), q=q, qd=qd, qdd=qdd, f_ext=f_ext)


rnea = B.fast_entry(_core.rnea, rnea)  # called from C: no Python frame on the fast path
