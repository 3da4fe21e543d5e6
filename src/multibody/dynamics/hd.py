"""Hybrid dynamics by the articulated-body algorithm (RBDA §9.2; spatial_v2 ``HD``).

The algorithm is ``csrc/kernels/hybrid.c`` (ABA's passes from ``csrc/kernels/aba.c``); this is its Python face.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


def hybrid_dynamics(model: Model, fd: ArrayLike, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, tau: ArrayLike,
                    f_ext: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Hybrid dynamics (spatial_v2 ``HD``; RBDA §9.2): accelerations at forward-dynamics joints,
    forces at the others.

    At a forward-dynamics joint (``fd`` True) the joint force is given and the acceleration is
    computed; at an inverse-dynamics joint (``fd`` False) the acceleration is given and the joint
    force is computed.  Both results are complete: ``rnea(model, q, qd, qdd_out) == tau_out``.
    The state arguments may carry leading batch dimensions; they broadcast together.

    Parameters
    ----------
    model : Model
        A numeric model.
    fd : array_like of bool, shape (nb,)
        Per joint (one entry per body): True = forward dynamics, False = inverse dynamics.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].
    qd : array_like, shape (..., nv)
        Joint velocities: rad/s, m/s; a spherical or free joint's [ω; v] in its body's coordinates.
    qdd : array_like, shape (..., nv)
        Accelerations (rad/s², m/s²); read at the inverse-dynamics joints only.
    tau : array_like, shape (..., nv)
        Joint forces (N·m, N); read at the forward-dynamics joints only.
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in base coordinates, [moment (N·m) about the base
        origin; force (N)].  None: no external force.

    Returns
    -------
    qdd_out : ndarray, shape (..., nv)
        All accelerations: computed at forward-dynamics joints, ``qdd`` at the others.
    tau_out : ndarray, shape (..., nv)
        All joint forces: computed at inverse-dynamics joints, ``tau`` at the others.

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; a state argument is None (``f_ext`` excepted), a string,
        complex or object array.
    ValueError
        ``fd`` is not nb booleans; a wrong shape, batch dimensions that do not broadcast, NaN or
        inf, a zero quaternion, a symbolic model, a singular articulated inertia at a
        forward-dynamics joint.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(3)
    >>> q, qd = np.array([0.1, 0.2, 0.3]), np.array([1.0, 0.0, -1.0])
    >>> qdd, tau = mb.hybrid_dynamics(m, [True, False, True], q, qd,
    ...                               np.array([0.0, 2.0, 0.0]), np.array([0.5, 0.0, -0.5]))
    >>> float(qdd[1]), float(tau[0]), float(tau[2])         # the given values come back
    (2.0, 0.5, -0.5)
    >>> bool(np.allclose(mb.rnea(m, q, qd, qdd), tau))      # and the rest is consistent
    True
    """
    _checks.model(model)
    fd_arr = np.asarray(fd)
    if fd_arr.shape != (model.nb,) or fd_arr.dtype.kind not in "bi":
        raise ValueError(f"fd: expected {model.nb} booleans (one per joint), got shape {fd_arr.shape} "
                         f"of {fd_arr.dtype}")
    fd_arr = np.ascontiguousarray(fd_arr != 0)
    c = model._c
    out = _core.hybrid(c, fd_arr, q, qd, qdd, tau, f_ext)
    if out is not None:
        return out
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd, tau=tau, f_ext=f_ext)
    qdd_out, tau_out = _core.hybrid(c, fd_arr, args["q"], args["qd"], args["qdd"], args["tau"], args.get("f_ext"))
    return qdd_out.reshape(batch + (model.nv,)), tau_out.reshape(batch + (model.nv,))
