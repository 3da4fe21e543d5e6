"""spatial_v2 ``FDgq``: forward dynamics of a kinematic tree with explicit constraints q = γ(y).

A model's ``gamma_q(model, qo, qdo) -> (qn, qdn, G, gs)`` (``Model.gamma_q``) returns corrected
positions and velocities on the constraint set, ``G = ∂γ/∂y`` and ``gs = g + gstab`` with
q̈ = G ÿ + g (RBDA §3.2, spatial_v2's ``gammaq.html``).  The builders of such functions are here
(:func:`gamma_q_linear`, :func:`gamma_q_mimic`, with :func:`gamma_stabilization`);
``gamma_q_partitioned`` (a gamma_q from any constraint description) and the simulate constraint
object :class:`~multibody.dynamics.constraints.GammaQ` live beside it in ``dynamics/constraints.py``
with the constrained solve.
This module solves RBDA eq. 3.20::

    q̈ = G (Gᵀ H G)⁻¹ Gᵀ (τ − C − H gs) + gs
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _checks
from ..core import _core
from ..errors import ConstraintError
from ..model.configuration import difference
from ..model.model import Model
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


def _positive_time(name, T):
    return _checks.number(f"{name} (a time constant in seconds)", T, positive=True)


DEFAULT_TSTAB = 0.1            # s, FDgq stabilisation time constant (gammaq.html's Tstab)


# =============================================================================================
# 1. FDgq: explicit constraints q = γ(y)
# =============================================================================================
def gamma_stabilization(qo, qdo, qn, qdn, Tstab=DEFAULT_TSTAB, model=None):
    """gstab = 2/Tstab (qdn − qdo) + 1/Tstab² (qn − qo): drives the state onto the constraints.

    With quaternion joints (nq ≠ nv) pass ``model``: qn − qo is then taken in the tangent space
    (``mb.difference(model, qo, qn)``).
    """
    T = _positive_time("Tstab", Tstab)
    dq = np.asarray(qn, float) - np.asarray(qo, float) if model is None or model.nq == model.nv \
        else difference(model, qo, qn)
    return 2.0 / T * (np.asarray(qdn, float) - np.asarray(qdo, float)) + dq / (T * T)


def gamma_q_linear(G, q0=None, Tstab=DEFAULT_TSTAB):
    """A ``gamma_q`` for linear constraints q = G y + q₀ (gears, pulleys, 1:1 couplings).

    ``G`` is (n, ny) with independent columns; y = G⁺(qo − q₀) projects the given position onto
    the constraint set (least squares, the pseudo-inverse γ* of gammaq.html); qdn = G G⁺ qdo;
    g = 0 (G is constant), so gs = gstab.  For joints with one variable each (nq = nv).

    Example
    -------
    >>> import numpy as np
    >>> gq = gamma_q_linear([[1, 0], [0, 1], [0, 1]])          # q3 = q2 (spatial_v2 doubleElbow)
    >>> qn, qdn, G, gs = gq(None, np.array([0.1, 0.2, 0.4]), np.zeros(3))
    >>> qn.round(6).tolist()
    [0.1, 0.3, 0.3]
    """
    G = np.asarray(G, dtype=float)
    if G.ndim != 2 or G.shape[1] > G.shape[0] or G.shape[1] == 0:
        raise ValueError(f"G: expected an (n, ny) matrix with 0 < ny ≤ n, got shape {G.shape}")
    if not _finite(G):
        raise ValueError("G: contains NaN or inf")
    if np.linalg.matrix_rank(G) < G.shape[1]:
        raise ValueError(f"G: columns are linearly dependent (rank {np.linalg.matrix_rank(G)} < {G.shape[1]}); "
                         "y would not be independent")
    n = G.shape[0]
    q0 = np.zeros(n) if q0 is None else _vector("q0", q0, n)
    T = _positive_time("Tstab", Tstab)
    Gp = np.linalg.pinv(G)
    P = G @ Gp

    def gamma_q(model, qo, qdo):
        qo = _vector("q", qo, n)
        qdo = _vector("qd", qdo, n)
        qn = G @ (Gp @ (qo - q0)) + q0
        qdn = P @ qdo
        return qn, qdn, G, gamma_stabilization(qo, qdo, qn, qdn, T)

    gamma_q.G, gamma_q.q0, gamma_q.Tstab = G, q0, T
    return gamma_q


def gamma_q_mimic(model, Tstab=DEFAULT_TSTAB):
    """A ``gamma_q`` from the model's mimic records (URDF ``<mimic>``): q_j = r q_m + offset.

    Every mimicking joint and its mimicked joint must have one variable (revolute, prismatic,
    helical) and the model only such joints.  The independent variables y are the joints that
    mimic nothing.
    """
    if not model.mimics:
        raise ValueError("model: has no mimic joints; nothing to constrain")
    if model.nq != model.nv or any(int(n) != 1 for n in model.nq_joint if n):
        raise ValueError("model: gamma_q_mimic needs joints with one variable each (no free/spherical/planar)")
    var = {j: int(model.q_start[j]) for j in range(model.nb) if model.nq_joint[j] == 1}
    dependent = {}
    for mm in model.mimics:
        if mm.joint not in var or mm.mimicked not in var:
            raise ValueError(f"mimic: joint {mm.joint} or {mm.mimicked} has no single variable")
        dependent[var[mm.joint]] = (var[mm.mimicked], mm.multiplier, mm.offset)
    indep = [k for k in range(model.nq) if k not in dependent]
    col = {k: c for c, k in enumerate(indep)}
    G = np.zeros((model.nq, len(indep)))
    q0 = np.zeros(model.nq)
    for k in indep:
        G[k, col[k]] = 1.0
    for k, (m, r, off) in dependent.items():
        if m in dependent:
            raise ValueError(f"mimic: variable {k} mimics variable {m}, which itself mimics another joint")
        G[k, col[m]] = r
        q0[k] = off
    return gamma_q_linear(G, q0, Tstab)


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


def fd_gq(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None = None, *,
          constraints=None, t: float | None = None) -> NDArray[np.float64]:
    """Forward dynamics of a constrained tree (spatial_v2 ``FDgq``; RBDA §3.2, eq. 3.20): the
    model's explicit constraints ``model.gamma_q`` and its implicit ones ``model.constraints``.

    With ``gamma_q`` (q = γ(y)): H and C by :func:`multibody.hand_c` at the corrected state, then

        q̈ = G (Gᵀ H G)⁻¹ Gᵀ (τ − C − H gs) + gs

    ``q``, ``qd`` need not satisfy the constraints exactly: ``gamma_q`` corrects them and q̈
    contains its stabilisation term (the module docstring).  Implicit constraints c(t, q) = 0 —
    ``model.constraints`` joined with ``constraints`` — are solved with it by Lagrange multipliers
    in the coordinates y of ``gamma_q`` (G = 1, gs = 0 without one): q̈ = G ÿ + gs with
    J q̈ = −J̇q̇ − 2α ċ − β² c (the set's Baumgarte gains; = −J̇q̇ on the constraint set).

    Parameters
    ----------
    model : Model
        A numeric model with ``model.gamma_q``, ``model.constraints`` or both (or pass
        ``constraints``).
    q : array_like, shape (nq,) or (..., nq)
        Joint positions: rad (revolute), m (prismatic).
    qd : array_like, shape (nv,) or (..., nv)
        Joint velocities: rad/s, m/s.
    tau : array_like, shape (nv,) or (..., nv)
        Joint forces: N·m, N.
    f_ext : array_like, shape (nb, 6) or (..., nb, 6), optional
        External spatial forces on the bodies in base coordinates, [moment (N·m) about the base
        origin; force (N)].
    constraints : Constraint or ConstraintSet, optional
        More implicit constraints (``mb.PointConstraint``, … or a ``mb.ConstraintSet``), solved
        with the model's own, as ``mb.simulate`` takes them.
    t : float, optional
        The time (s) of time-dependent constraints.

    Returns
    -------
    qdd : ndarray, shape (nv,) or (..., nv)
        Joint accelerations (rad/s², m/s²).  Leading batch dimensions loop in Python (``gamma_q``
        is a Python function).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; ``constraints`` is not a constraint; an array argument is
        None, a string, complex or object array.
    ValueError
        Neither ``model.gamma_q`` nor constraints; a wrong shape, NaN or inf; ``gamma_q``'s
        results of the wrong shape or not finite; a time-dependent constraint without ``t``.
    ConstraintError
        Gᵀ H G is not positive definite, or the constraint Jacobian is singular (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.double_elbow()                   # joints 2 and 3 geared 1:1
    >>> qdd = mb.fd_gq(model, [0.3, 0.2, 0.2], [0.0, 1.0, 1.0], np.zeros(3))
    >>> bool(np.isclose(qdd[1], qdd[2]))                   # the gearing holds in q̈
    True
    """
    _checks.model(model)
    cons = _constraint_set(model, constraints)
    q_a, qd_a, tau_a = (_checks.array(name, x, None, copy=False) for name, x in (("q", q), ("qd", qd), ("tau", tau)))
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
    from .constraints import ConstraintSet, with_model_constraints  # (that module imports this one)
    cons = with_model_constraints(model, constraints)      # a single description comes back in a set
    if cons is None or isinstance(cons, ConstraintSet):
        return cons
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
    # force, Gᵀτc = 0) in one call of the C core (csrc/sim/kkt.c)
    out = _core.fdgq_solve(H, C, tau, G, gs)
    if out is None:
        ny = G.shape[1]
        raise ConstraintError(f"FDgq: Gᵀ H G ({ny}×{ny}) is not positive definite")
    return out
