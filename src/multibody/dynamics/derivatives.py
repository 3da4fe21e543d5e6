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

from .. import _boundary as B
from ..core import _core


def _reshaped(outs, batch, nv):
    return tuple(o.reshape(batch + (nv, nv)) for o in outs)


def rnea_derivatives(model, q, qd, qdd, f_ext=None):
    """(∂τ/∂q, ∂τ/∂q̇, M) of inverse dynamics τ = ID(q, q̇, q̈, f_ext), analytically.

    Each is (…, nv, nv) with entry [j, k] = ∂τ_j/∂x_k; ∂/∂q in the body-frame tangent space of
    :func:`multibody.integrate` (see the module docstring).  M = ∂τ/∂q̇̈ is the joint-space inertia
    (armature included, as :func:`multibody.crba`).  ``f_ext`` (…, nb, 6) are spatial forces in base
    coordinates, [moment; force], fixed in the base while q moves.  Inputs may carry leading batch
    dimensions, like :func:`multibody.rnea`; a batch without ``f_ext`` runs groups of states in SIMD
    lanes, each state's result the single call's bit for bit, and reuses the memory of the last
    batch's results of the same size once they are freed (:func:`multibody.core.release_output_memory`).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, qdd = np.array([0.3, -0.2]), np.array([1.0, 0.5]), np.zeros(2)
    >>> dq, dqd, M = mb.rnea_derivatives(m, q, qd, qdd)
    >>> h = 1e-6
    >>> num = (mb.rnea(m, q + [h, 0], qd, qdd) - mb.rnea(m, q - [h, 0], qd, qdd)) / (2 * h)
    >>> bool(np.allclose(dq[:, 0], num, atol=1e-6)), bool(np.allclose(M, mb.crba(m, q)))
    (True, True)
    """
    args, batch = B.states(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    outs = _core.rnea_derivatives(model._c, args["q"], args["qd"], args["qdd"], args.get("f_ext"))
    return _reshaped(outs, batch, model.nv)


def aba_derivatives(model, q, qd, tau, f_ext=None):
    """(∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) of forward dynamics q̈ = FD(q, q̇, τ, f_ext), analytically.

    From ID(q, q̇, FD(q, q̇, τ)) = τ: ∂q̈/∂x = −M⁻¹ ∂ID/∂x at q̈ = :func:`multibody.aba`'s result,
    and ∂q̈/∂τ = M⁻¹ (by :func:`minv`).  Conventions (tangent space, f_ext, batches) as
    :func:`rnea_derivatives`.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> q, qd, tau = np.array([0.3, -0.2]), np.array([1.0, 0.5]), np.zeros(2)
    >>> dq, dqd, Minv = mb.aba_derivatives(m, q, qd, tau)
    >>> h = 1e-6
    >>> num = (mb.aba(m, q, qd + [0, h], tau) - mb.aba(m, q, qd - [0, h], tau)) / (2 * h)
    >>> bool(np.allclose(dqd[:, 1], num, atol=1e-6)), bool(np.allclose(Minv @ mb.crba(m, q), np.eye(2)))
    (True, True)
    """
    args, batch = B.states(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    outs = _core.aba_derivatives(model._c, args["q"], args["qd"], args["tau"], args.get("f_ext"))
    return _reshaped(outs, batch, model.nv)


def minv(model, q):
    """M⁻¹(q), the inverse joint-space inertia (armature included), without forming M.

    ABA run on the nv unit torques at once (Carpentier 2018): O(nv²) work after one articulated
    pass, no factorisation.  ``q`` may carry leading batch dimensions.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(3)
    >>> q = np.array([0.1, 0.2, 0.3])
    >>> bool(np.allclose(mb.minv(m, q) @ mb.crba(m, q), np.eye(3)))
    True
    """
    args, batch = B.states(model, q=q)
    return _core.minv(model._c, args["q"]).reshape(batch + (model.nv, model.nv))


# called from C: no Python frame on the fast path (plain single states)
rnea_derivatives = B.fast_entry(_core.rnea_derivatives, rnea_derivatives)
aba_derivatives = B.fast_entry(_core.aba_derivatives, aba_derivatives)
minv = B.fast_entry(_core.minv, minv)
