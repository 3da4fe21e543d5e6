"""Constrained forward dynamics: spatial_v2 ``FDgq`` and loop closures with Lagrange multipliers.

The evaluation and the solve of the constraint descriptions of :mod:`multibody.model.constraints`
(what a user or a loader writes down), beside ``fd_gq`` (``dynamics/fdgq.py``).  Two ways to
describe constraints on a kinematic tree (RBDA §3.2), both here:

1. **Explicit, q = γ(y)** — spatial_v2's ``FDgq`` with a ``gamma_q`` function on the model
   (``Model.gamma_q``).  ``gamma_q(model, qo, qdo) -> (qn, qdn, G, gs)`` returns corrected
   positions and velocities that satisfy the constraints, ``G = ∂γ/∂y`` and ``gs = g + gstab``
   with ``q̈ = G ÿ + g``.  ``fd_gq`` then solves RBDA eq. 3.20::

       q̈ = G (Gᵀ H G)⁻¹ Gᵀ (τ − C − H gs) + gs

   The stabilisation term pulls the integrated state onto the constraint manifold with the
   critically damped error dynamics of time constant ``Tstab``::

       gstab = 2/Tstab (qdn − qdo) + 1/Tstab² (qn − qo)          (default Tstab = 0.1 s)

   Builders: :func:`~multibody.dynamics.fdgq.gamma_q_linear` (gears, 1:1 couplings: q = G y + q₀),
   :func:`~multibody.dynamics.fdgq.gamma_q_mimic` (a model's URDF ``<mimic>`` joints) and :func:`gamma_q_partitioned`
   (any c(q) = 0 by coordinate partitioning: y = chosen independent coordinates, the others
   solved by Newton iteration — spatial_v2's recipe for kinematic loops).

2. **Implicit, c(t, q) = 0** — Lagrange multipliers, the TMT paper's augmented system (eq. 6)::

       [ H   −Jᵀ ] [ q̈ ]   [ τ − C                              ]
       [ J    0  ] [ λ  ] = [ −J̇q̇ − 2α ċ − β² c   (Baumgarte)   ]

   (TMT writes M = TᵀMT, T_cn = J, d = τ − C, and D_cn q̇ = J̇q̇; the paper's right-hand side
   drops the minus sign of c̈ = J q̈ + J̇q̇ = 0.)  ``Jᵀλ`` is the generalised constraint force.
   Baumgarte stabilisation (Baumgarte 1972) turns c̈ = 0 into the critically damped
   ``c̈ + 2α ċ + β² c = 0``; the default is α = β = 1/T with T = ``DEFAULT_BAUMGARTE_TIME``
   = 0.02 s — fast enough that a 10 s RK4 run at 1 ms keeps |c| below 1e-6, slow enough
   (|λ·dt| ≤ 0.05 at dt = 1 ms) not to make the ODE stiff.

   Constraint rows (descriptions in ``model/constraints.py``, each evaluated here by one
   function of the table ``TERMS``, read by :func:`constraint_terms`): :class:`PointConstraint`
   (two points coincide — a spherical loop joint),
   :class:`AxisConstraint` (an axis of one body stays perpendicular to chosen directions of
   another — with a point constraint, a revolute loop joint: :func:`revolute_closure`),
   :class:`JointCoupling` (q_a = r q_b + offset, a gear), :class:`JointPath` (q_j = φ(t), a
   joint driven along a prescribed motion — the TMT flyer's flapping input) and
   :class:`FunctionConstraint` (any c(q) or c(t, q) with or without its Jacobian).

   Nonholonomic rows s = A(q) q̇ + a(t, q) = 0 (:class:`VelocityConstraint`, the tangential rows
   of :class:`RollingContact`) enter the same system at the acceleration level, A q̈ = −(ṡ − A q̈)
   − α s: J = A, the bias is d/dt(A q̇ + a) at q̈ = 0, and Baumgarte acts on the velocity
   residual alone (ṡ + α s = 0; ``ConstraintTerms.velocity`` marks these rows, whose c is 0 and
   whose ċ is s).

   Time-dependent (rheonomic) constraints c(t, q) = 0 enter the same system through their
   time derivatives: ċ = J q̇ + ∂c/∂t, and the bias c̈ − J q̈ = J̇q̇ + 2 (∂J/∂t) q̇ + ∂²c/∂t²,
   so Baumgarte's c̈ + 2αċ + β²c = 0 holds for them as for fixed ones.  :class:`ConstraintSet`
   stacks them and is what ``mb.simulate(..., constraints=...)`` calls; a single constraint is
   solved alone in a set with the default gains (``ConstraintSet(c)``, what
   :func:`with_model_constraints` builds).  :class:`GammaQ` does the same for ``FDgq``.

Both (and any user object with the two methods) follow the simulate contract::

    accelerations(model, q, qd, tau, f_ext=None, t=None) -> (qdd (nv,), lam (nc,))
    residual(model, q, qd, t=None) -> (c (nc,), cdot (nc,))

``mb.simulate`` passes the time ``t`` of every stage.  Called without ``t``, a set holding a
time-dependent constraint raises instead of silently evaluating it at t = 0.

Example
-------
>>> import numpy as np, multibody as mb
>>> from multibody.model.constraints import PointConstraint
>>> model = mb.models.planar(2)                 # tip of link 2 pinned to the point (1, 1, 0)
>>> pin = ConstraintSet(PointConstraint("link2", [1, 0, 0], None, [1, 1, 0], axes="xy"))
>>> q = np.array([np.pi / 2, -np.pi / 2])
>>> qdd, lam = pin.accelerations(model, q, np.zeros(2), np.zeros(2))
>>> c, cdot = pin.residual(model, q, np.zeros(2))
>>> bool(np.allclose(c, 0) and np.allclose(constraint_terms(pin, model, q, np.zeros(2)).J @ qdd, 0))
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from ..core import _core
from ..errors import ConstraintError
from ..kinematics.forward import body_states
from ..kinematics.jacobians import body_jacobian
from ..model.configuration import difference, integrate
from ..model.constraints import (AxisConstraint, Constraint, FunctionConstraint, JointCoupling, JointPath,
                                 PointConstraint, RollingContact, TendonCoupling, VelocityConstraint, WeldConstraint)
from .constraint_tables import constraint_tables, packed_table
from .fdgq import DEFAULT_TSTAB, _call_gamma_q, _fd_gq_with_force, _positive_time, gamma_stabilization
from .handc import hand_c

__all__ = [
    "DEFAULT_BAUMGARTE_TIME", "gamma_q_partitioned", "GammaQ", "ConstraintTerms", "TERMS", "constraint_terms",
    "ConstraintSet", "revolute_closure", "solve_constrained", "with_model_constraints", "rolling_contact_terms",
    "rolling_contact_point",
]

DEFAULT_BAUMGARTE_TIME = 0.02  # s, Baumgarte time constant: α = β = 1/T


# =============================================================================================
# helpers
# =============================================================================================
def _finite(a) -> bool:
    """All entries finite.  One dot product (the cheapest reduction NumPy offers) decides; only
    when it is not finite (a NaN or inf — or an overflow of huge finite entries) are the entries
    tested one by one."""
    r = a.ravel()
    return math.isfinite(r.dot(r)) or bool(np.isfinite(a).all())


def _state(model, q, qd):
    model._require_numeric()
    q = _vector("q", q, model.nq)
    qd = _vector("qd", qd, model.nv)
    return q, qd


def _vector(name, x, n):
    return _checks.vector(name, x, n, copy=False)


def _f_ext(model, f_ext):
    if f_ext is None:
        return None
    return _checks.array("f_ext", f_ext, (model.nb, 6), copy=False, what="spatial forces in base coordinates")


def _cross(a, b):
    """a × b for 3-vectors (np.cross costs microseconds of argument handling per call)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


# =============================================================================================
# FDgq by coordinate partitioning: a gamma_q from any constraint object (the other builders and fd_gq
# are in dynamics/fdgq.py)
# =============================================================================================
def gamma_q_partitioned(constraint, independent, Tstab=DEFAULT_TSTAB, tol=1e-12, max_iter=50):
    """A ``gamma_q`` for any c(q) = 0 by coordinate partitioning (RBDA §3.2, §8.3; gammaq.html).

    ``constraint`` is a :class:`Constraint` (point, axis, function … or a ConstraintSet);
    ``independent`` lists the velocity indices chosen as y (one per degree of freedom).  Given
    qo, the dependent coordinates z are found by Newton iteration on c(y, z) = 0 from their
    given values (so the branch of the loop is kept), and::

        G = [I; −J_z⁻¹ J_y] (rows reordered),   g = −J_z⁻¹ J̇q̇ on the z rows, 0 on the y rows.

    For joints with one variable each (nq = nv); the constraint must be scleronomic.
    """
    if not isinstance(constraint, (Constraint, ConstraintSet)):
        raise TypeError(f"constraint: expected a Constraint or ConstraintSet, got {type(constraint).__name__}")
    T = _positive_time("Tstab", Tstab)
    ind = [int(i) for i in independent]

    def gamma_q(model, qo, qdo):
        qo, qdo = _state(model, qo, qdo)
        if model.nq != model.nv:
            raise ValueError("gamma_q_partitioned: needs joints with one variable each (nq = nv)")
        n = model.nv
        if len(set(ind)) != len(ind) or any(not 0 <= i < n for i in ind):
            raise ValueError(f"independent: expected distinct indices in 0…{n - 1}, got {ind}")
        dep = [k for k in range(n) if k not in ind]
        q = qo.copy()
        for _ in range(max_iter):
            terms = constraint_terms(constraint, model, q, np.zeros(n))
            if terms.velocity is not None and terms.velocity.any():
                raise ValueError("constraint: gamma_q_partitioned solves positions, and nonholonomic rows "
                                 "(VelocityConstraint, RollingContact) constrain velocities only; solve them with "
                                 "a ConstraintSet")
            if terms.c.shape[0] != len(dep):
                raise ValueError(f"independent: {len(ind)} independent variables leave {len(dep)} dependent ones, "
                                 f"but the constraint has {terms.c.shape[0]} rows")
            if np.max(np.abs(terms.c), initial=0.0) < tol:
                break
            Jz = terms.J[:, dep]
            try:
                q[dep] -= np.linalg.solve(Jz, terms.c)
            except np.linalg.LinAlgError:
                raise ConstraintError(f"gamma_q: ∂c/∂z is singular at q = {q}; the dependent variables "
                                      f"{dep} cannot be solved for here (choose other independent ones)") from None
        else:
            raise ConstraintError(f"gamma_q: Newton iteration for the dependent variables did not converge "
                                  f"(|c| = {np.max(np.abs(terms.c)):.3g}); the state is too far from the constraints")
        Jy, Jz = terms.J[:, ind], terms.J[:, dep]
        Gz = -np.linalg.solve(Jz, Jy)
        G = np.zeros((n, len(ind)))
        G[ind, np.arange(len(ind))] = 1.0
        G[dep] = Gz
        qdn = G @ qdo[ind]
        bias = constraint_terms(constraint, model, q, qdn).bias
        g = np.zeros(n)
        g[dep] = -np.linalg.solve(Jz, bias)
        return q, qdn, G, g + gamma_stabilization(qo, qdo, q, qdn, T)

    gamma_q.Tstab = T
    return gamma_q


class GammaQ:
    """spatial_v2's ``FDgq`` as a constraint object for ``mb.simulate(model, ..., constraints=GammaQ())``.

    Every step then solves RBDA eq. 3.20 with the explicit constraints q = γ(y) of ``gamma_q``
    (see :func:`multibody.fd_gq`).  Only those: ``mb.simulate`` refuses ``GammaQ`` for a model
    that also carries implicit constraints (``model.constraints``); :func:`multibody.fd_gq` solves
    both together.

    Parameters
    ----------
    gamma_q : callable, optional
        ``gamma_q(model, qo, qdo) -> (qn, qdn, G, gs)`` (built by
        :func:`~multibody.dynamics.fdgq.gamma_q_linear`, :func:`~multibody.dynamics.fdgq.gamma_q_mimic`,
        :func:`gamma_q_partitioned`); None: the model's own ``model.gamma_q``.

    Raises
    ------
    TypeError
        ``gamma_q`` is not callable.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.double_elbow()                 # joints 2 and 3 geared 1:1 (model.gamma_q)
    >>> qdd, tau_c = mb.GammaQ().accelerations(model, [0.3, 0.2, 0.2], [0.0, 1.0, 1.0], np.zeros(3))
    >>> bool(np.isclose(qdd[1], qdd[2]))
    True
    >>> bool(np.allclose(qdd, mb.fd_gq(model, [0.3, 0.2, 0.2], [0.0, 1.0, 1.0], np.zeros(3))))
    True
    >>> dq, dqd = mb.GammaQ().residual(model, [0.3, 0.2, 0.25], np.zeros(3))
    >>> bool(abs(dq[1] - dq[2]) > 0)                    # off the constraint set by 0.05 rad
    True
    """

    n_states = 0

    def __init__(self, gamma_q: Callable | None = None):
        if gamma_q is not None and not callable(gamma_q):
            raise TypeError(f"gamma_q: expected a callable, got {type(gamma_q).__name__}")
        self.gamma_q = gamma_q

    def _gq(self, model):
        return self.gamma_q if self.gamma_q is not None else model.gamma_q

    def accelerations(self, model, q, qd, tau, f_ext=None, t=0.0):
        """(q̈ (nv,), τc (nv,)): FDgq's accelerations and the generalised constraint force
        τc = H q̈ + C − τ (Gᵀ τc = 0).  ``t`` is unused (explicit constraints do not depend on time)."""
        return _fd_gq_with_force(model, self._gq(model), q, qd, tau, f_ext)

    def residual(self, model, q, qd, t=0.0):
        """(q ⊖ qn (nv,), qd − qdn (nv,)): how far the state is from the constraint set (in the
        tangent space of :func:`multibody.difference` for quaternion joints)."""
        q, qd = _state(model, q, qd)
        gq = self._gq(model)
        if gq is None:
            raise ValueError("model.gamma_q: no constraint function on the model and none given")
        qn, qdn, _, _ = _call_gamma_q(model, gq, q, qd)
        dq = q - qn if model.nq == model.nv else difference(model, qn, q)
        return dq, qd - qdn


# =============================================================================================
# 2. Implicit constraints c(t, q) = 0 with Lagrange multipliers (TMT eq. 6)
# =============================================================================================
@dataclass(frozen=True)
class ConstraintTerms:
    """c (n,), ċ = J q̇ + ∂c/∂t (n,), J = ∂c/∂q in velocity coordinates (n, nv), and the bias
    c̈ − J q̈ (n,) (= J̇q̇ for scleronomic constraints).

    ``velocity`` (n,) marks nonholonomic rows, s = A q̇ + a = 0 with no position behind them: for
    those c = 0, ċ = s, J = A and bias = ṡ − A q̈; None: every row is holonomic."""
    c: np.ndarray
    cdot: np.ndarray
    J: np.ndarray
    bias: np.ndarray
    velocity: np.ndarray | None = None

    @staticmethod
    def stack(parts):
        """The rows of several terms, one after the other (their ``velocity`` marks kept)."""
        if len(parts) == 1:
            return parts[0]
        vel = None
        if any(p.velocity is not None for p in parts):
            vel = np.concatenate([np.zeros(p.c.shape[0], bool) if p.velocity is None else p.velocity
                                  for p in parts])
        return ConstraintTerms(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("c", "cdot", "J", "bias")),
                               velocity=vel)

    def stabilized_rhs(self, alpha, beta):
        """J q̈ = rhs with Baumgarte's terms: −bias − 2α ċ − β² c on holonomic rows (c̈ + 2αċ + β²c
        = 0), −bias − α s on nonholonomic rows (ṡ + α s = 0: there is no position to pull back)."""
        gain = 2.0 * alpha if self.velocity is None else np.where(self.velocity, alpha, 2.0 * alpha)
        return -self.bias - gain * self.cdot - beta ** 2 * self.c


class _Workspace:
    """The public kinematics/dynamics calls at one state, for one model (cached per model so the
    q̈ = 0 vector is not rebuilt at every integrator stage)."""

    def __init__(self, model):
        self.model = model
        self.zero = np.zeros(model.nv)

    @staticmethod
    def of(model):
        ws = model.__dict__.get("_simc_workspace")
        if ws is None:
            ws = _Workspace(model)
            object.__setattr__(model, "_simc_workspace", ws)   # per-model cache (Model is frozen)
        return ws

    def kinematics(self, q, qd):
        """World poses (R = A_IB, p), body-coordinate velocities [ω; v] and q̈ = 0 accelerations."""
        s = body_states(self.model, q, qd, self.zero)
        return s.R, s.p, s.v, s.a

    def jacobian(self, q, body, point):
        """6×nv Jacobian of ``body`` at ``point`` (body coordinates), vectors in world coordinates."""
        return body_jacobian(self.model, q, body, point, frame="world_aligned")

    def hand_c(self, model, q, qd, f_ext):
        return hand_c(model, q, qd, f_ext)


class _Kinematics:
    """Poses, velocities and q̈ = 0 accelerations of all bodies at one state (one ``body_states`` call)."""

    def __init__(self, model, q, qd):
        self.ws = _Workspace.of(model)
        self.model, self.q = model, q
        self.R, self.p, self.v, self.a = self.ws.kinematics(q, qd)

    def point(self, body, r):
        """World position, velocity and q̈ = 0 acceleration of a point r fixed in ``body``."""
        if body < 0:
            return r, np.zeros(3), np.zeros(3)
        R, w, v, al, a = self.R[body], self.v[body, :3], self.v[body, 3:], self.a[body, :3], self.a[body, 3:]
        vp = v + _cross(w, r)
        acc = a + _cross(al, r) + _cross(w, vp)
        return self.p[body] + R @ r, R @ vp, R @ acc

    def omega(self, body):
        """World angular velocity and q̈ = 0 angular acceleration of ``body``."""
        if body < 0:
            return np.zeros(3), np.zeros(3)
        return self.R[body] @ self.v[body, :3], self.R[body] @ self.a[body, :3]

    def rotation(self, body):
        return np.eye(3) if body < 0 else self.R[body]

    def jacobian(self, body, r):
        if body < 0:
            return np.zeros((6, self.model.nv))
        return self.ws.jacobian(self.q, body, np.ascontiguousarray(r, dtype=float))


# =============================================================================================
# evaluation: one function per description kind (model/constraints.py), (c, ċ, J, bias) at (t, q, q̇)
# =============================================================================================
def _point(con, model, q, qd, t, kin):
    """PointConstraint: c = p_a − p_b (world), ċ = v_a − v_b, J = J_a − J_b (linear rows), bias
    = the points' q̈ = 0 accelerations a_a − a_b."""
    kin = kin or _Kinematics(model, q, qd)
    a = model.body_index(con.body_a)
    b = -1 if con.body_b is None else model.body_index(con.body_b)
    pa, va, aa = kin.point(a, con.point_a)
    ax = con.axes
    if b < 0:  # pinned to the base: p_b fixed, no Jacobian of its own
        return ConstraintTerms((pa - con.point_b)[ax], va[ax], kin.jacobian(a, con.point_a)[3:][ax], aa[ax])
    pb, vb, ab = kin.point(b, con.point_b)
    J = kin.jacobian(a, con.point_a)[3:] - kin.jacobian(b, con.point_b)[3:]
    return ConstraintTerms((pa - pb)[ax], (va - vb)[ax], J[ax], (aa - ab)[ax])


def _axis(con, model, q, qd, t, kin):
    """AxisConstraint: c_k = u·w_k, ċ = (u × w)·(ω_a − ω_b); the bias adds (u̇ × w + u × ẇ)·(ω_a − ω_b)
    with u̇ = ω_a × u, ẇ = ω_b × w."""
    kin = kin or _Kinematics(model, q, qd)
    a = model.body_index(con.body_a)
    b = -1 if con.body_b is None else model.body_index(con.body_b)
    u = kin.rotation(a) @ con.axis_a
    wa, ala = kin.omega(a)
    wb, alb = kin.omega(b)
    Jw = kin.jacobian(a, np.zeros(3))[:3] - kin.jacobian(b, np.zeros(3))[:3]
    rel, rel_acc = wa - wb, ala - alb
    ud = _cross(wa, u)
    rows = []
    for w0 in con.directions_b:
        w = kin.rotation(b) @ w0
        n = _cross(u, w)
        wd = _cross(wb, w)
        rows.append((u @ w, n @ rel, n @ Jw, (_cross(ud, w) + _cross(u, wd)) @ rel + n @ rel_acc))
    c, cd, J, bias = zip(*rows)
    return ConstraintTerms(np.array(c), np.array(cd), np.array(J), np.array(bias))


def _weld(con, model, q, qd, t, kin):
    """WeldConstraint: its point rows, then its three axis rows, at one kinematics pass."""
    kin = kin or _Kinematics(model, q, qd)
    return ConstraintTerms.stack([_point(con.point, model, q, qd, t, kin)] +
                                 [_axis(a, model, q, qd, t, kin) for a in con.axes])


def _one_variable(model, joint, what):
    """(q index, v index) of a one-variable joint (index or name)."""
    i = model.joint_index(joint)
    if model.nq_joint[i] != 1 or model.nv_joint[i] != 1:
        raise ValueError(f"joint: {model.joint_names[i]!r} has {model.nq_joint[i]} position variables; {what}")
    return int(model.q_start[i]), int(model.v_start[i])


def _coupling(con, model, q, qd, t, kin):
    """JointCoupling: c = q_a − a₀ − p(x), x = q_b − b₀; J = e_a − p′(x) e_b; bias = −p″(x) q̇_b²."""
    qa, va = _one_variable(model, con.joint_a, "a coupling needs one-variable joints")
    b = None if con.joint_b is None else _one_variable(model, con.joint_b, "a coupling needs one-variable joints")
    J = np.zeros((1, model.nv))
    J[0, va] += 1.0
    c, bias = q[qa] - con.reference[0], 0.0
    if b is not None:
        qb, vb = b
        p, dp, ddp = _polynomial(con.polynomial, q[qb] - con.reference[1])
        c -= p
        J[0, vb] -= dp
        bias = -ddp * qd[vb] ** 2
    else:
        c -= con.polynomial[0]
    return ConstraintTerms(np.array([c]), J @ qd, J, np.array([bias]))


def _path(con, model, q, qd, t, kin):
    """JointPath: c = q_j − φ(t), ċ = q̇_j − φ̇(t), bias c̈ − J q̈ = −φ̈(t)."""
    kq, kv = _one_variable(model, con.joint, "a JointPath needs a one-variable joint")
    phi, phid, phidd = con.motion(float(t))
    J = np.zeros((1, model.nv))
    J[0, kv] = 1.0
    return ConstraintTerms(np.array([q[kq] - phi]), np.array([qd[kv] - phid]), J, np.array([-phidd]))


def _fn_c(con, t, q):
    out = np.atleast_1d(np.asarray(con.c(t, q) if con.time_dependent else con.c(q), dtype=float))
    if out.ndim != 1 or not _finite(out):
        raise ValueError(f"{con.name}: c must return a finite 1-D array, got {out!r}")
    return out


def _move(model, q, v, s):
    return q + s * v if model.nq == model.nv else integrate(model, q, v, s)


def _fn_J(con, model, t, q, n):
    if con.jac is not None:
        J = np.asarray(con.jac(t, q) if con.time_dependent else con.jac(q), dtype=float)
        if J.shape != (n, model.nv):
            raise ValueError(f"{con.name}: jacobian must return shape ({n}, {model.nv}), got {J.shape}")
        if not _finite(J):
            raise ValueError(f"{con.name}: jacobian returned NaN or inf")
        return J
    h = con.h
    J = np.empty((n, model.nv))
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = 1.0
        J[:, k] = (_fn_c(con, t, _move(model, q, e, h)) - _fn_c(con, t, _move(model, q, e, -h))) / (2 * h)
    return J


def _function(con, model, q, qd, t, kin):
    """FunctionConstraint: the user's c (and J, bias, ∂c/∂t where given), else central differences."""
    c = _fn_c(con, t, q)
    n = c.shape[0]
    J = _fn_J(con, model, t, q, n)
    h = con.h
    ct = 0.0
    if con.dc_dt is not None:
        ct = np.atleast_1d(np.asarray(con.dc_dt(t, q), dtype=float))
        if ct.shape != (n,) or not _finite(ct):
            raise ValueError(f"{con.name}: dc_dt must return {n} finite numbers, got {ct!r}")
    elif con.time_dependent:
        ct = (_fn_c(con, t + h, q) - _fn_c(con, t - h, q)) / (2 * h)
    cdot = J @ qd + ct
    if con.bias_fn is not None:
        b = np.asarray(con.bias_fn(t, q, qd) if con.time_dependent else con.bias_fn(q, qd), dtype=float)
        if b.shape != (n,) or not _finite(b):
            raise ValueError(f"{con.name}: bias must return {n} finite numbers, got {b!r}")
    else:
        dt = h if con.time_dependent else 0.0
        if con.jac is not None and not con.time_dependent:
            # d/ds [J(q ⊕ s q̇) q̇] at s = 0: one difference instead of two
            b = (_fn_J(con, model, t, _move(model, q, qd, h), n) @ qd
                 - _fn_J(con, model, t, _move(model, q, qd, -h), n) @ qd) / (2 * h)
        else:
            b = (_fn_c(con, t + dt, _move(model, q, qd, h)) - 2 * c
                 + _fn_c(con, t - dt, _move(model, q, qd, -h))) / (h * h)
    return ConstraintTerms(c, cdot, J, b)


def _tendon_row(con, model, tendon, q):
    """(L, ∂L/∂q in velocity coordinates) of a fixed tendon {joint: coefficient}."""
    row, L = np.zeros(model.nv), 0.0
    for j, k in tendon.items():
        i = model.joint_index(j)
        if model.nq_joint[i] != 1 or model.nv_joint[i] != 1:
            raise ValueError(f"{con.name}: joint {model.joint_names[i]!r} has {model.nq_joint[i]} position "
                             "variables; a fixed tendon spans one-variable joints")
        L += k * q[model.q_start[i]]
        row[model.v_start[i]] += k
    return L, row


def _tendon(con, model, q, qd, t, kin):
    """TendonCoupling: c = L_a − a₀ − p(L_b − b₀); J = ∂L_a − p′ ∂L_b; bias = −p″ L̇_b²."""
    La, J = _tendon_row(con, model, con.tendon_a, q)
    c, bias = La - con.reference[0], 0.0
    if con.tendon_b is None:
        c -= con.polynomial[0]
    else:
        Lb, Jb = _tendon_row(con, model, con.tendon_b, q)
        p, dp, ddp = _polynomial(con.polynomial, Lb - con.reference[1])
        c -= p
        J = J - dp * Jb
        bias = -ddp * float(Jb @ qd) ** 2
    J = J[None, :]
    return ConstraintTerms(np.array([c]), J @ qd, J, np.array([bias]))


def _velocity(con, model, q, qd, t, kin):
    """VelocityConstraint: s = A(q) q̇ + a, J = A, bias = ṡ − A q̈ (the user's, else a central
    difference of s along the constant-velocity path s ↦ (t + s, q ⊕ s q̇))."""
    def rows(tt, qq):
        A = np.asarray(con.A(qq), dtype=float)
        if A.ndim != 2 or A.shape[1] != model.nv or not _finite(A):
            raise ValueError(f"{con.name}: A(q) must return a finite (m, {model.nv}) matrix, got shape "
                             f"{getattr(A, 'shape', None)}")
        if con.a is None:
            return A, np.zeros(A.shape[0])
        a = np.atleast_1d(np.asarray(con.a(tt, qq) if con.time_dependent else con.a(qq), dtype=float))
        if a.shape != (A.shape[0],) or not _finite(a):
            raise ValueError(f"{con.name}: a must return {A.shape[0]} finite numbers, got {a!r}")
        return A, a

    A, a = rows(t, q)
    s = A @ qd + a
    if con.bias_fn is not None:
        b = np.asarray(con.bias_fn(t, q, qd) if con.time_dependent else con.bias_fn(q, qd), dtype=float)
        if b.shape != s.shape or not _finite(b):
            raise ValueError(f"{con.name}: bias must return {s.shape[0]} finite numbers, got {b!r}")
    else:
        h, dt = con.h, (con.h if con.time_dependent else 0.0)
        (Ap, ap), (Am, am) = rows(t + dt, _move(model, q, qd, h)), rows(t - dt, _move(model, q, qd, -h))
        b = ((Ap - Am) @ qd + ap - am) / (2 * h)
    return ConstraintTerms(np.zeros_like(s), s, A, b, velocity=np.ones(s.shape[0], bool))


def rolling_contact_point(normal, radius, axis, omega):
    """The rim's lowest point of a wheel, and its rate: (r d, r ḋ, s = a·n, √(1 − s²)).

    d = (−n + s a)/√(1 − s²) points from the wheel's centre to its contact point (n the plane's
    normal, a the wheel's axis, both world); ȧ = ω × a, ṡ = ȧ·n and
    ḋ = (ṡ a + s ȧ)/√(1 − s²) + d s ṡ/(1 − s²).  Written for any array type (a complex step
    through it is exact)."""
    s = axis @ normal
    root = np.sqrt(1.0 - s * s)
    d = (s * axis - normal) / root
    adot = _cross(omega, axis)
    sdot = adot @ normal
    ddot = (sdot * axis + s * adot) / root + d * (s * sdot / (root * root))
    return radius * d, radius * ddot, s, root


def rolling_contact_terms(con, center, v_center, a_center, R, omega, alpha, J_center, J_omega):
    """(c, ċ, J, bias, velocity marks) of a :class:`RollingContact` from its wheel's kinematics.

    ``center``, ``v_center``, ``a_center`` — the wheel centre's world position, velocity and q̈ = 0
    acceleration; ``R`` the wheel's rotation (body → world); ``omega``, ``alpha`` its world angular
    velocity and q̈ = 0 angular acceleration; ``J_center`` (3, nv), ``J_omega`` (3, nv) the
    Jacobians of the centre's velocity and of ω.  The material point at P = C + r d moves with
    v_P = v_C + ω × r d, whose rate at q̈ = 0 — d moves over the rim — is
    b = a_C + α × r d + ω × r ḋ.  Rows: n·P − height (holonomic; ċ = n·v_P, since P is the rim's
    lowest point its own motion along n vanishes), then t_k·v_P (nonholonomic).  Any array type."""
    a = R @ con.axis
    s = a @ con.normal
    if not abs(1.0 - s * s) > 1e-12:
        raise ConstraintError(f"{con.name}: the wheel's axis is normal to the plane (|a·n| = {abs(s):.12g}); "
                              "a disc lying flat has no rim contact point")
    rd, rddot, _, _ = rolling_contact_point(con.normal, con.radius, a, omega)
    vP = v_center + _cross(omega, rd)
    bP = a_center + _cross(alpha, rd) + _cross(omega, rddot)
    dirs = con.directions
    # e·v_P = e·v_C + e·(ω × r d) = e·v_C − (e × r d)·ω: the rows of J_P along each direction e
    JP = dirs @ J_center - np.array([_cross(e, rd) for e in dirs]) @ J_omega
    rows = dirs @ vP
    c = np.zeros(len(dirs), dtype=rows.dtype)
    if con.holonomic:
        c[0] = (center + rd) @ con.normal - con.height
    return ConstraintTerms(c, rows, JP, dirs @ bP, velocity=con.velocity_rows)


def _rolling(con, model, q, qd, t, kin):
    """RollingContact: its wheel's kinematics (one ``body_states`` pass, one Jacobian at the centre)
    handed to :func:`rolling_contact_terms`."""
    kin = kin or _Kinematics(model, q, qd)
    b = model.body_index(con.body)
    pc, vc, ac = kin.point(b, con.center)
    w, al = kin.omega(b)
    Jc = kin.jacobian(b, con.center)
    return rolling_contact_terms(con, pc, vc, ac, kin.R[b], w, al, Jc[3:], Jc[:3])


# the evaluation of each description kind; the kinds that read body kinematics share one pass in a set
TERMS = {PointConstraint: _point, AxisConstraint: _axis, WeldConstraint: _weld, JointCoupling: _coupling,
         JointPath: _path, FunctionConstraint: _function, TendonCoupling: _tendon, VelocityConstraint: _velocity,
         RollingContact: _rolling}
_KINEMATIC = (PointConstraint, AxisConstraint, WeldConstraint, RollingContact)


def constraint_terms(constraint, model, q, qd, t=0.0, kin=None) -> ConstraintTerms:
    """(c, ċ, J, bias) of one constraint description (or of a :class:`ConstraintSet`) at (t, q, q̇).

    ``J`` is ∂c/∂q in velocity coordinates (rows, nv) and ``bias`` is c̈ − J q̈ (J̇q̇ for a
    constraint without time).

    >>> import numpy as np, multibody as mb
    >>> from multibody.model.constraints import JointCoupling
    >>> quad = JointCoupling(1, 0, polynomial=(0.0, 0.5, 2.0))        # q₁ = 0.5 q₀ + 2 q₀²
    >>> t = constraint_terms(quad, mb.models.planar(2), np.array([0.1, 0.07]), np.array([1.0, 0.9]))
    >>> np.round([t.c[0], t.J[0, 0], t.bias[0]], 12).tolist()
    [0.0, -0.9, -4.0]
    """
    if isinstance(constraint, ConstraintSet):
        return constraint.evaluate(model, q, qd, t)
    for kind in type(constraint).__mro__:
        fn = TERMS.get(kind)
        if fn is not None:
            return fn(constraint, model, q, qd, t, kin)
    raise TypeError(f"constraint: expected a constraint description ({', '.join(k.__name__ for k in TERMS)}) "
                    f"or a ConstraintSet, got {type(constraint).__name__}")


def revolute_closure(body_a: str | int, point_a: ArrayLike, axis_a: ArrayLike, body_b: str | int | None,
                     point_b: ArrayLike, axis_b: ArrayLike, name: str | None = None) -> ConstraintSet:
    """A kinematic loop closed by a revolute joint (RBDA §8.1): the joint's two points coincide and
    its two axes stay parallel — 5 constraint rows.

    A :class:`PointConstraint` (3 rows) and an :class:`AxisConstraint` keeping ``axis_a``
    perpendicular to two directions normal to ``axis_b`` (2 rows), in one :class:`ConstraintSet`
    with the default Baumgarte gains.

    Parameters
    ----------
    body_a : str or int
        The body on one side of the loop joint (name or index).
    point_a : array_like, shape (3,)
        A point of the joint axis in ``body_a``'s coordinates (m).
    axis_a : array_like, shape (3,)
        The joint axis in ``body_a``'s coordinates (any non-zero length).
    body_b : str, int or None
        The body on the other side; None: the fixed base.
    point_b : array_like, shape (3,)
        The same point in ``body_b``'s coordinates (base coordinates for None) (m).
    axis_b : array_like, shape (3,)
        The joint axis in ``body_b``'s coordinates (any non-zero length).
    name : str, optional
        Name of the closure in error messages (default ``"revolute(body_a, body_b)"``).

    Returns
    -------
    ConstraintSet
        The 5 rows, ready for ``mb.simulate(..., constraints=...)`` or :func:`multibody.fd_gq`.

    Raises
    ------
    TypeError
        A point or an axis that is not 3 numbers (None, a string …).
    ValueError
        A point or an axis of the wrong length, NaN or inf, a zero axis.  An unknown body name is
        a ``ValueError`` when the set is first evaluated on a model.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)                # links of 1 m turning about z
    >>> loop = mb.revolute_closure("link2", [1, 0, 0], [0, 0, 1], None, [1, 1, 0], [0, 0, 1])
    >>> c, cdot = loop.residual(m, np.array([np.pi / 2, -np.pi / 2]), np.zeros(2))
    >>> c.shape, bool(np.allclose(c, 0))      # the tip of link 2 is on the pivot at (1, 1, 0)
    ((5,), True)
    """
    ab = _checks.vector("axis_b", axis_b, 3, copy=False)
    if not np.linalg.norm(ab) > 0:
        raise ValueError("axis_b: expected a non-zero 3-vector (the joint axis in body_b), got [0, 0, 0]")
    ab = ab / np.linalg.norm(ab)
    e = np.eye(3)[int(np.argmin(np.abs(ab)))]
    d1 = _cross(ab, e)
    d1 /= np.linalg.norm(d1)
    d2 = _cross(ab, d1)
    nm = name or f"revolute({body_a}, {body_b})"
    return ConstraintSet(PointConstraint(body_a, point_a, body_b, point_b, name=nm + ".point"),
                         AxisConstraint(body_a, axis_a, body_b, (d1, d2), name=nm + ".axis"))


def _polynomial(coef, x):
    """p(x), p′(x), p″(x) for p(x) = Σ_k coef[k] x^k (Horner)."""
    p = dp = ddp = 0.0
    for c in reversed(coef):
        ddp = ddp * x + 2.0 * dp
        dp = dp * x + p
        p = p * x + c
    return p, dp, ddp


class ConstraintSet:
    """Constraints c(t, q) = 0 solved together by Lagrange multipliers with Baumgarte stabilisation
    (the TMT paper's eq. 6; Baumgarte 1972).

    The object ``mb.simulate(..., constraints=...)``, ``mb.fd_gq`` and ``mb.linearize`` solve::

        accelerations(model, q, qd, tau, f_ext=None, t=None) -> (q̈ (nv,), λ (nc,))
        residual(model, q, qd, t=None) -> (c (nc,), ċ (nc,))

    Parameters
    ----------
    *constraints : Constraint, ConstraintSet or sequence of them
        The descriptions (``mb.PointConstraint``, ``mb.AxisConstraint``, ``mb.JointCoupling``,
        ``mb.FunctionConstraint`` …); nested sets and lists are flattened.
    time_constant : float, optional
        Baumgarte time constant T (s): α = β = 1/T, critically damped c̈ + 2αċ + β²c = 0
        (default ``DEFAULT_BAUMGARTE_TIME`` = 0.02 s).
    alpha, beta : float, optional
        The gains (1/s) instead of ``time_constant``; ``alpha = beta = 0`` switches
        stabilisation off.
    redundant : {"error", "least_squares"}, optional
        When the constraint Jacobian J loses rank: raise :class:`~multibody.errors.ConstraintError`
        naming the dependent rows (default), or take the minimum-norm multipliers (for mechanisms
        whose closures are redundant by design).
    rank_tol : float, optional
        Relative pivot below which J H⁻¹ Jᵀ counts as singular (default 1e-10).

    Raises
    ------
    TypeError
        An argument that is not a constraint description.
    ValueError
        No constraint; a time constant or gain that is not a finite number > 0 (≥ 0 for the
        gains); an unknown ``redundant``.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)                          # tip of link 2 pinned at (1, 1, 0)
    >>> pin = mb.ConstraintSet(mb.PointConstraint("link2", [1, 0, 0], None, [1, 1, 0], axes="xy"))
    >>> q = np.array([np.pi / 2, -np.pi / 2])
    >>> qdd, lam = pin.accelerations(m, q, np.zeros(2), np.zeros(2))
    >>> bool(np.allclose(qdd, 0)), lam.shape              # held still; λ: the pin's force (N)
    (True, (2,))
    >>> c, cdot = pin.residual(m, q, np.zeros(2))
    >>> bool(np.allclose(c, 0))
    True
    """

    n_states = 0

    def __init__(self, *constraints, time_constant=DEFAULT_BAUMGARTE_TIME, alpha=None, beta=None,
                 redundant="error", rank_tol=1e-10):
        flat = []
        for c in constraints:
            if isinstance(c, ConstraintSet):
                flat.extend(c.constraints)
            elif isinstance(c, Constraint):
                flat.append(c)
            elif isinstance(c, (list, tuple)):
                flat.extend(ConstraintSet(*c).constraints)
            else:
                raise TypeError(f"constraints: expected Constraint objects, got {type(c).__name__}")
        if not flat:
            raise ValueError("constraints: need at least one constraint")
        self.constraints = tuple(flat)
        T = _positive_time("time_constant", time_constant)
        self.alpha = 1.0 / T if alpha is None else _checks.number("alpha (a Baumgarte gain, 1/s)", alpha, nonneg=True)
        self.beta = 1.0 / T if beta is None else _checks.number("beta (a Baumgarte gain, 1/s)", beta, nonneg=True)
        _checks.one_of("redundant", redundant, ("error", "least_squares"))
        self.redundant, self.rank_tol = redundant, float(rank_tol)
        self._rows, self._row_names = None, []

    def evaluate(self, model, q, qd, t=0.0) -> ConstraintTerms:
        """The stacked (c, ċ, J, bias) of the set's constraints at (t, q, q̇)."""
        kin = None
        parts = []
        for c in self.constraints:
            if isinstance(c, _KINEMATIC):
                kin = kin or _Kinematics(model, q, qd)
            parts.append(constraint_terms(c, model, q, qd, t, kin))
        rows = tuple(p.c.shape[0] for p in parts)
        if rows != self._rows:  # the names of the rows, for error messages (rebuilt when counts change)
            self._rows = rows
            self._row_names = [nm for c, n in zip(self.constraints, rows) for nm in c.row_names(n)]
        return ConstraintTerms.stack(parts)

    def _time(self, t):
        if t is None:
            if any(getattr(c, "time_dependent", False) for c in self.constraints):
                raise ValueError("t: a time-dependent constraint needs the time; call accelerations/residual with "
                                 "t=... (mb.simulate passes it)")
            return 0.0
        return float(t)

    def residual(self, model, q, qd, t=None):
        """(c (nc,), ċ (nc,)) at (t, q, q̇): the constraint errors and their rates (m, rad …) —
        in C for the kinds of fixed geometry (``csrc/sim/constraints.c``), else by :meth:`evaluate`."""
        packed = self._compiled(model)[1]
        if packed is not None:
            try:
                c, cdot, _, _ = _core.constraint_rows(model._c, packed, q, qd)
                return c, cdot
            except (ValueError, TypeError):   # bad input: named below as it always has been
                pass
        q, qd = _state(model, q, qd)
        terms = self.evaluate(model, q, qd, self._time(t))
        return terms.c, terms.cdot

    def targets(self, model, q, qd, t=None):
        """(J, rhs): the rows J q̈ = rhs = −J̇q̇ − 2α ċ − β² c that the set asks of q̈ at (t, q, q̇)."""
        terms = self.evaluate(model, q, qd, self._time(t))
        return terms.J, terms.stabilized_rhs(self.alpha, self.beta)

    def solve(self, H, d, J, rhs):
        """TMT eq. (6) with this set's treatment of dependent rows (:func:`solve_constrained`)."""
        return solve_constrained(H, d, J, rhs, redundant=self.redundant, rank_tol=self.rank_tol,
                                 row_names=self._row_names)

    def tables(self, model):
        """The set's tables for ``csrc/sim/constraints.c`` on ``model`` (:mod:`multibody.dynamics.constraint_tables`),
        or None when it holds a kind that stays in Python (kept for the last model asked)."""
        return self._compiled(model)[0]

    def _compiled(self, model):
        """(tables, the same packed in one array) for ``model``, or (None, None); cached for the last few
        models (a run asks for its model and for the one its forward dynamics runs on, in turn)."""
        cache = self.__dict__.setdefault("_tables_for", {})
        key = (self.alpha, self.beta, self.rank_tol)
        hit = cache.get(id(model))
        if hit is not None and hit[0] is model and hit[1] == key:
            return hit[2]
        tables = None if getattr(model, "_symbolic", False) else constraint_tables(self, model)
        out = (tables, None if tables is None else packed_table(*tables))
        if len(cache) >= 4:
            cache.clear()
        cache[id(model)] = (model, key, out)
        return out

    def accelerations(self, model, q, qd, tau, f_ext=None, t=None):
        """(q̈ (nv,), λ (nc,)): TMT eq. (6) at (t, q, q̇) with joint forces ``tau`` and ``f_ext``
        (nb, 6) in base coordinates; Jᵀλ is the generalised constraint force.

        Sets of the kinds of fixed geometry (:mod:`multibody.dynamics.constraint_tables`) are solved
        in C (``csrc/sim/constraints.c``); the others, and a C solve that finds J H⁻¹Jᵀ singular (the
        diagnostics, or the minimum-norm multipliers), by the Python statement :meth:`reference_accelerations`."""
        packed = self._compiled(model)[1]
        if packed is not None:
            try:
                st, qdd, lam = _core.constrained_accelerations(model._c, packed, q, qd, tau, f_ext)
            except (ValueError, TypeError):   # bad input: the Python statement names it as it always has
                st = -1
            if st == 0:
                return qdd, lam
        return self.reference_accelerations(model, q, qd, tau, f_ext, t)

    def reference_accelerations(self, model, q, qd, tau, f_ext=None, t=None):
        """:meth:`accelerations` by the Python statement: the evaluation of each kind's rows in this
        module, ``hand_c`` and the KKT solve (the reference the C evaluation is tested against)."""
        t = self._time(t)
        q, qd = _state(model, q, qd)
        tau = _vector("tau", tau, model.nv)
        H, C = _Workspace.of(model).hand_c(model, q, qd, _f_ext(model, f_ext))
        J, rhs = self.targets(model, q, qd, t)
        return self.solve(H, tau - C, J, rhs)


def with_model_constraints(model, constraints=None):
    """The user's constraints joined with the model's own (``model.constraints``, e.g. an MJCF
    file's equalities), solved as one set; a single description alone in a set with the default
    gains; any other ``constraints`` object (``GammaQ``, a user's object with ``accelerations``
    and ``residual``) itself when the model has none.

    What ``mb.simulate``, ``mb.fd_gq`` and ``mb.linearize`` solve.  The model's own constraints
    passed again (``ConstraintSet(*model.constraints, alpha=…)`` to choose the gains) are not
    added twice: twice the rows would make the set singular.

    >>> import multibody as mb
    >>> with_model_constraints(mb.models.double_pendulum()) is None
    True
    >>> with_model_constraints(mb.models.planar(2), JointCoupling(0, 1)).constraints
    (JointCoupling('coupling(0, 1)'),)
    """
    own = tuple(getattr(model, "constraints", ()) or ())
    if not own:
        # a description is solved by a set (the gains live there, not in the description)
        return ConstraintSet(constraints) if isinstance(constraints, Constraint) else constraints
    if constraints is None:
        return ConstraintSet(*own)
    if isinstance(constraints, ConstraintSet):
        extra = tuple(c for c in own if not any(c is mine for mine in constraints.constraints))
        return ConstraintSet(*extra, *constraints.constraints, alpha=constraints.alpha, beta=constraints.beta,
                             redundant=constraints.redundant, rank_tol=constraints.rank_tol)
    if isinstance(constraints, Constraint):
        return ConstraintSet(*(c for c in own if c is not constraints), constraints)
    raise TypeError(f"constraints: the model carries constraints ({len(own)}: model.constraints) that must be "
                    f"solved with yours; expected a Constraint or ConstraintSet, got "
                    f"{type(constraints).__name__}")


def _kkt_solve(H, d, J, rhs, rank_tol):
    """Range-space solution of TMT eq. (6) in the C core (``csrc/sim/kkt.c``): (status, q̈, λ);
    status 0 ok, 1 H not SPD (a Cholesky pivot below 1e-13 of its diagonal entry), 2 J H⁻¹Jᵀ
    singular (a pivot below ``rank_tol`` of its diagonal entry)."""
    return _core.kkt_solve(H, d, J, rhs, 1e-13, rank_tol)


def solve_constrained(H, d, J, rhs, redundant="error", rank_tol=1e-10, row_names=None):
    """Solve TMT eq. (6): [H −Jᵀ; J 0][q̈; λ] = [d; rhs] by the range-space (Schur) method.

    q̈₀ = H⁻¹d, A = J H⁻¹ Jᵀ, λ = A⁻¹(rhs − J q̈₀), q̈ = q̈₀ + H⁻¹Jᵀλ (Cholesky
    factorisations of H and A in the C core, ``csrc/sim/kkt.c``).  Raises :class:`ConstraintError` naming the dependent rows if A
    is singular (a Cholesky pivot below ``rank_tol`` of its diagonal entry) unless
    ``redundant="least_squares"``, which takes the minimum-norm multipliers instead.
    """
    st, qdd, lam = _kkt_solve(H, d, J, rhs, rank_tol)
    if st == 0:
        return qdd, lam
    H, J, d, rhs = (np.asarray(a, dtype=float) for a in (H, J, d, rhs))
    if st == 1:
        raise ConstraintError("the joint-space inertia matrix H is not positive definite (a massless chain?)")
    X = np.linalg.solve(H, np.column_stack([d, J.T]))
    qdd0, HiJt = X[:, 0], X[:, 1:]
    A = J @ HiJt
    A = 0.5 * (A + A.T)
    w, V = np.linalg.eigh(A)
    small = w < max(rank_tol, 1e-12) * max(w[-1], np.finfo(float).tiny)
    if redundant == "error":
        null = V[:, small] if np.any(small) else V[:, :1]
        involved = np.flatnonzero(np.max(np.abs(null), axis=1) > 1e-6)
        names = [row_names[i] if row_names else str(i) for i in involved]
        raise ConstraintError(
            f"constraint Jacobian is singular: rank {int(np.sum(~small))} < {A.shape[0]} rows; "
            f"rows {names} are linearly dependent (a redundant closure, or a singular posture). "
            "Drop the redundant rows (e.g. PointConstraint(axes='xy') for a planar loop) or pass "
            "redundant='least_squares'")
    inv = np.where(small, 0.0, 1.0 / np.where(small, 1.0, w))
    lam = V @ (inv * (V.T @ (rhs - J @ qdd0)))
    return qdd0 + HiJt @ lam, lam


