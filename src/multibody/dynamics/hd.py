"""Hybrid dynamics by the articulated-body algorithm (RBDA §9.2; spatial_v2 ``HD``).

The algorithm is ``csrc/kernels/hybrid.c`` (ABA's passes from ``csrc/kernels/aba.c``); this is its Python face.
"""
from __future__ import annotations

import numpy as np

from .. import _boundary as B
from .. import _checks
from ..core import _core


def hybrid_dynamics(model, fd, q, qd, qdd, tau, f_ext=None):
    """spatial_v2 ``HD``: unknown accelerations at forward-dynamics joints, unknown forces elsewhere.

    ``fd`` is a boolean per joint (length nb): True = forward-dynamics joint (τ given, q̈ computed),
    False = inverse-dynamics joint (q̈ given, τ computed).  Returns ``(qdd_out, tau_out)``, both
    fully instantiated.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(3)
    >>> qdd, tau = mb.hybrid_dynamics(m, [True, False, True], np.zeros(3), np.zeros(3),
    ...                               np.zeros(3), np.zeros(3))
    """
    _checks.model(model)
    fd_arr = np.asarray(fd)
    if fd_arr.shape != (model.nb,) or fd_arr.dtype.kind not in "bi":
        raise ValueError(f"fd: expected {model.nb} booleans (one per joint), got shape {fd_arr.shape}")
    fd_arr = np.ascontiguousarray(fd_arr != 0)
    c = model._c
    out = _core.hybrid(c, fd_arr, q, qd, qdd, tau, f_ext)
    if out is not None:
        return out
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd, tau=tau, f_ext=f_ext)
    qdd_out, tau_out = _core.hybrid(c, fd_arr, args["q"], args["qd"], args["qdd"], args["tau"], args.get("f_ext"))
    return qdd_out.reshape(batch + (model.nv,)), tau_out.reshape(batch + (model.nv,))
