"""Analytic derivatives of the dynamics (Carpentier & Mansard, "Analytical Derivatives of Rigid
Body Dynamics Algorithms", RSS 2018): ∂RNEA, ∂ABA and M⁻¹ without forming M.

The algorithms are ``csrc/kernels/rnea_derivatives.c``, ``csrc/kernels/aba_derivatives.c`` and ``csrc/kernels/minv.c``;
this is their Python face.

**Tangent convention.**  ∂/∂q is taken in the tangent space of :func:`multibody.integrate`:
column k of ∂f/∂q is d/dε f(integrate(q, ε e_k)) at ε = 0, so ∂f/∂q has nv columns for every
joint type.  The increment is applied in the *body* frame (on the right): a spherical joint's
rotation becomes R·exp(ε [e_k]×), a free joint's pose T·exp(ε ê_k) with the twist [ω; v] in body
coordinates (the free joint's q̇ ordering), a planar joint's the same in the plane.  For revolute,
prismatic and helical joints this is the ordinary partial derivative.  The chain rule then reads
d/dε f(integrate(q, ε v)) = (∂f/∂q) v.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.model import Model


def _reshaped(outs, batch, nv):
    return tuple(o.reshape(batch + (nv, nv)) for o in outs)


def rnea_derivatives(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                     f_ext: ArrayLike | None = None) -> tuple[NDArray[np.float64], ...]:
    """(∂τ/∂q, ∂τ/∂q̇, M) of inverse dynamics τ = ID(q, q̇, q̈, f_ext), analytically (Carpentier &
    Mansard 2018, the derivative of RNEA, RBDA table 5.1).

    Entry [j, k] of each matrix is ∂τ_j/∂x_k.  ∂/∂q is taken in the body-frame tangent space of
    :func:`multibody.integrate` (see the module docstring), so it has nv columns for every joint
    type; for revolute, prismatic and helical joints it is the ordinary partial derivative.
    ``f_ext`` is held fixed in the base while q moves.  A batch without ``f_ext`` runs groups of
    states in SIMD lanes, each state's result the single call's bit for bit, and reuses the memory
    of the last batch's results of the same size once they are freed
    (:func:`multibody.core.release_output_memory`).

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].
    qd : array_like, shape (..., nv)
        Joint velocities: rad/s, m/s; a spherical or free joint's [ω; v] in its body's coordinates.
    qdd : array_like, shape (..., nv)
        Joint accelerations: rad/s², m/s².
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in base coordinates, [moment (N·m) about the base
        origin; force (N)].  None: no external force.

    Returns
    -------
    dtau_dq : ndarray, shape (..., nv, nv)
        ∂τ/∂q (N·m/rad, N/m, …).
    dtau_dqd : ndarray, shape (..., nv, nv)
        ∂τ/∂q̇.
    M : ndarray, shape (..., nv, nv)
        ∂τ/∂q̈, the joint-space inertia (armature included), as :func:`multibody.crba`.

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; an array argument is None (``f_ext`` excepted), a
        string, complex or object array.
    ValueError
        A wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero quaternion, a
        symbolic model.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, qdd = np.array([0.3, -0.2]), np.array([1.0, 0.5]), np.zeros(2)
    >>> dq, dqd, M = mb.rnea_derivatives(m, q, qd, qdd)
    >>> h = 1e-6                                          # against central differences
    >>> num = (mb.rnea(m, q + [h, 0], qd, qdd) - mb.rnea(m, q - [h, 0], qd, qdd)) / (2 * h)
    >>> bool(np.allclose(dq[:, 0], num, atol=1e-6)), bool(np.allclose(M, mb.crba(m, q)))
    (True, True)
    """
    _checks.model(model)
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    outs = _core.rnea_derivatives(model._c, args["q"], args["qd"], args["qdd"], args.get("f_ext"))
    return _reshaped(outs, batch, model.nv)


def aba_derivatives(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                    f_ext: ArrayLike | None = None) -> tuple[NDArray[np.float64], ...]:
    """(∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) of forward dynamics q̈ = FD(q, q̇, τ, f_ext), analytically (Carpentier &
    Mansard 2018, the derivative of ABA, RBDA table 7.1).

    From ID(q, q̇, FD(q, q̇, τ)) = τ: ∂q̈/∂x = −M⁻¹ ∂ID/∂x at q̈ = :func:`multibody.aba`'s result,
    and ∂q̈/∂τ = M⁻¹ (by :func:`minv`).  The tangent space of ∂/∂q, ``f_ext`` and batches as in
    :func:`rnea_derivatives`.

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
    dqdd_dq : ndarray, shape (..., nv, nv)
        ∂q̈/∂q.
    dqdd_dqd : ndarray, shape (..., nv, nv)
        ∂q̈/∂q̇.
    Minv : ndarray, shape (..., nv, nv)
        ∂q̈/∂τ = M⁻¹, the inverse joint-space inertia (armature included).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; an array argument is None (``f_ext`` excepted), a
        string, complex or object array.
    ValueError
        A wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero quaternion, a
        symbolic model, a singular inertia (the message names the body).
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, tau = np.array([0.3, -0.2]), np.array([1.0, 0.5]), np.zeros(2)
    >>> dq, dqd, Minv = mb.aba_derivatives(m, q, qd, tau)
    >>> h = 1e-6                                          # against central differences
    >>> num = (mb.aba(m, q, qd + [0, h], tau) - mb.aba(m, q, qd - [0, h], tau)) / (2 * h)
    >>> bool(np.allclose(dqd[:, 1], num, atol=1e-6)), bool(np.allclose(Minv @ mb.crba(m, q), np.eye(2)))
    (True, True)
    """
    _checks.model(model)
    args, batch = B.states(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    outs = _core.aba_derivatives(model._c, args["q"], args["qd"], args["tau"], args.get("f_ext"))
    return _reshaped(outs, batch, model.nv)


def minv(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """M⁻¹(q), the inverse joint-space inertia (armature included), without forming M (Carpentier &
    Mansard 2018).

    ABA run on the nv unit joint forces at once: O(nv²) work after one articulated-body pass, no
    factorisation.

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].  Leading batch
        dimensions give a batch of matrices.

    Returns
    -------
    Minv : ndarray, shape (..., nv, nv)
        The inverse of :func:`multibody.crba`'s H(q), symmetric positive definite.

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; ``q`` is None, a string, complex or object array.
    ValueError
        A wrong shape, NaN or inf, a zero quaternion, a symbolic model, a singular inertia (the
        message names the body).
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(3)
    >>> q = np.array([0.1, 0.2, 0.3])
    >>> bool(np.allclose(mb.minv(m, q) @ mb.crba(m, q), np.eye(3)))
    True
    """
    _checks.model(model)
    args, batch = B.states(model, q=q)
    return _core.minv(model._c, args["q"]).reshape(batch + (model.nv, model.nv))


# called from C: no Python frame on the fast path (plain single states)
rnea_derivatives = B.fast_entry(_core.rnea_derivatives, rnea_derivatives)
aba_derivatives = B.fast_entry(_core.aba_derivatives, aba_derivatives)
minv = B.fast_entry(_core.minv, minv)
