"""spatial_v2 ``FDgq``: forward dynamics of a kinematic tree with explicit constraints q = γ(y).

A model's ``gamma_q(model, qo, qdo) -> (qn, qdn, G, gs)`` (``Model.gamma_q``) returns corrected
positions and velocities on the constraint set, ``G = ∂γ/∂y`` and ``gs = g + gstab`` with
q̈ = G ÿ + g (RBDA §3.2, spatial_v2's ``gammaq.html``); the builders of such functions and the
simulate constraint object :class:`~multibody.simulation.constraints.GammaQ` live in
``multibody.simulation.constraints``.  This module solves RBDA eq. 3.20::

    q̈ = G (Gᵀ H G)⁻¹ Gᵀ (τ − C − H gs) + gs
"""
from __future__ import annotations

import math

import numpy as np

from .. import _checks
from ..core import _core
from ..errors import ConstraintError
from .handc import hand_c


def _finite(a) -> bool:
    r = a.ravel()
    return math.isfinite(r.dot(r)) or bool(np.isfinite(a).all())


def _vector(name, x, n):
    return _checks.vector(name, x, n, copy=False)


def _state(model, q, qd):
    model._require_numeric()
    return _vector("q", q, model.nq), _vector("qd", qd, model.nv)


def _f_ext(model, f_ext):
    if f_ext is None:
        return None
    return _checks.array("f_ext", f_ext, (model.nb, 6), copy=False, what="spatial forces in base coordinates")


def _call_gamma_q(model, gq, q, qd):
    if not callable(gq):
        raise TypeError(f"model.gamma_q: expected a callable gamma_q(model, q, qd) -> (qn, qdn, G, gs), "
                        f"got {type(gq).__name__}")
    out = gq(model, q, qd)
    if not isinstance(out, tuple) or len(out) != 4:
        raise ValueError("model.gamma_q: must return the tuple (qn, qdn, G, gs)")
    qn, qdn, G, gs = (np.asarray(a, dtype=float) for a in out)
    if qn.shape != (model.nq,):
        raise ValueError(f"model.gamma_q: qn must have shape ({model.nq},), got {qn.shape}")
    if qdn.shape != (model.nv,) or gs.shape != (model.nv,):
        raise ValueError(f"model.gamma_q: qdn and gs must have shape ({model.nv},), got {qdn.shape}, {gs.shape}")
    if G.ndim != 2 or G.shape[0] != model.nv or G.shape[1] > model.nv:
        raise ValueError(f"model.gamma_q: G must have shape ({model.nv}, ny) with ny ≤ {model.nv}, got {G.shape}")
    for name, a in (("qn", qn), ("qdn", qdn), ("G", G), ("gs", gs)):
        if not _finite(a):
            raise ValueError(f"model.gamma_q: returned {name} with NaN or inf")
    return qn, qdn, G, gs


def fd_gq(model, q, qd, tau, f_ext=None, *, constraints=None, t=None):
    """spatial_v2 ``FDgq``: forward dynamics of a constrained tree via CRBA and ``model.gamma_q``,
    and the model's own constraints (``model.constraints``, e.g. an MJCF file's equalities).

    ``q``, ``qd`` need not satisfy the constraints exactly; ``gamma_q`` corrects them and the
    returned q̈ contains its stabilisation term (module docstring).  ``f_ext`` (nb, 6): spatial
    forces in base coordinates.  A leading batch dimension loops in Python (``gamma_q`` is a
    Python function).

        q̈ = G (Gᵀ H G)⁻¹ Gᵀ (τ − C − H gs) + gs            (RBDA eq. 3.20)

    Implicit constraints c(t, q) = 0 — ``model.constraints`` joined with ``constraints`` (a
    ``Constraint`` or ``ConstraintSet``, as ``mb.simulate`` takes them) — are solved with it by
    Lagrange multipliers in the coordinates y of ``gamma_q`` (G = 1, gs = 0 without one): q̈ = G ÿ
    + gs with J q̈ = −J̇q̇ − 2α ċ − β² c (the set's Baumgarte gains; = −J̇q̇ on the constraint
    set).  ``t`` is the time of time-dependent constraints.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.double_elbow()
    >>> qdd = mb.fd_gq(model, [0.3, 0.2, 0.2], [0.0, 1.0, 1.0], np.zeros(3))
    >>> bool(np.isclose(qdd[1], qdd[2]))                   # the 1:1 gearing holds in q̈
    True
    """
    cons = _constraint_set(model, constraints)
    q_a, qd_a, tau_a = np.asarray(q, dtype=float), np.asarray(qd, dtype=float), np.asarray(tau, dtype=float)
    if max(q_a.ndim, qd_a.ndim, tau_a.ndim) > 1:  # batch: one state at a time
        batch = np.broadcast_shapes(q_a.shape[:-1], qd_a.shape[:-1], tau_a.shape[:-1])
        Q = np.broadcast_to(q_a, batch + (model.nq,)).reshape(-1, model.nq)
        QD = np.broadcast_to(qd_a, batch + (model.nv,)).reshape(-1, model.nv)
        TAU = np.broadcast_to(tau_a, batch + (model.nv,)).reshape(-1, model.nv)
        F = None if f_ext is None else np.broadcast_to(f_ext, batch + (model.nb, 6)).reshape(-1, model.nb, 6)
        out = np.array([_fd_gq_with_force(model, model.gamma_q, Q[k], QD[k], TAU[k], None if F is None else F[k],
                                          cons, t)[0] for k in range(len(Q))])
        return out.reshape(batch + (model.nv,))
    qdd, _ = _fd_gq_with_force(model, model.gamma_q, q, qd, tau, f_ext, cons, t)
    return qdd


def _constraint_set(model, constraints):
    """model.constraints joined with the caller's, as one ConstraintSet (None: there are none)."""
    from ..simulation.constraints import Constraint, ConstraintSet, with_model_constraints  # (imports this module)
    cons = with_model_constraints(model, constraints)
    if cons is None or isinstance(cons, ConstraintSet):
        return cons
    if isinstance(cons, Constraint):
        return cons._as_set()
    raise TypeError(f"constraints: expected a Constraint or ConstraintSet, got {type(cons).__name__}")


def _fd_gq_with_force(model, gq, q, qd, tau, f_ext, constraints=None, t=None):
    if gq is None and constraints is None:
        raise ValueError("model.gamma_q: FDgq needs a constraint function or constraints; build the model with "
                         "dataclasses.replace(model, gamma_q=...) (see gamma_q_linear, gamma_q_partitioned) or "
                         "pass constraints=... (model.constraints is empty)")
    q, qd = _state(model, q, qd)
    tau = _vector("tau", tau, model.nv)
    f_ext = _f_ext(model, f_ext)
    if gq is None:
        return constraints.accelerations(model, q, qd, tau, f_ext, t)
    qn, qdn, G, gs = _call_gamma_q(model, gq, q, qd)
    H, C = hand_c(model, qn, qdn, f_ext)
    if constraints is not None:
        # the implicit rows in y: J (G ÿ + gs) = rhs, solved with Gᵀ H G ÿ = Gᵀ(τ − C − H gs) + (J G)ᵀλ
        J, rhs = constraints.targets(model, qn, qdn, t)
        ydd, _ = constraints.solve(G.T @ H @ G, G.T @ (tau - C - H @ gs), J @ G, rhs - J @ gs)
        qdd = G @ ydd + gs
        return qdd, H @ qdd + C - tau
    # q̈ = G (GᵀHG)⁻¹ Gᵀ(τ − C − H gs) + gs and τc = H q̈ + C − τ (the generalised constraint
    # force, Gᵀτc = 0) in one call of the C core (core/kkt.c)
    out = _core.fdgq_solve(H, C, tau, G, gs)
    if out is None:
        ny = G.shape[1]
        raise ConstraintError(f"FDgq: Gᵀ H G ({ny}×{ny}) is not positive definite")
    return out
