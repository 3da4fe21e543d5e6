"""``mb.linearize``: the state-space model ẋ = A x + B u of a mechanism at an operating point.

With x = [δq, δq̇] (δq in velocity coordinates, i.e. the tangent space for quaternion joints)
and u = δτ, forward dynamics q̈ = M⁻¹(τ − C(q, q̇)) gives

    A = ⎡ 0              I            ⎤      B = ⎡ 0   ⎤
        ⎣ −M⁻¹ ∂ID/∂q    −M⁻¹ ∂ID/∂q̇  ⎦          ⎣ M⁻¹ ⎦

where ID(q, q̇, q̈₀) is inverse dynamics (``mb.rnea``) at the operating point's acceleration q̈₀ =
FD(q, q̇, τ): differentiating ID(q, q̇, FD(q, q̇, τ)) = τ gives ∂FD/∂x = −M⁻¹ ∂ID/∂x.  By default all
of it is analytic (``mb.aba_derivatives``).  With ``method="fd"``, M comes from
``mb.crba``, ∂ID/∂q̇ is exact up to round-off by central differences (ID is quadratic in q̇);
∂ID/∂q is taken by central differences with Richardson extrapolation (error O(h⁴), h = 1e-3), on
the manifold (q ⊕ h·e_k) for quaternion joints.

Constrained models (``model.constraints`` — an MJCF file's equalities —, ``constraints=``, or
``model.gamma_q``) are linearised as the dynamics they obey, q̈ = ``mb.fd_gq``(q, q̇, τ): the
constrained accelerations with the constraint set's Baumgarte terms.  Its full-state matrices
(``coordinates="full"``, 2·nv states) have as eigenvalues those of the mechanism's motion on the
constraint set and, for each independent constraint row, the double root −1/T of the Baumgarte
error dynamics c̈ + 2αċ + β²c = 0 (α = β = 1/T).  The default, ``coordinates="minimal"``, returns
the motion on the constraint set alone: with N (nv × r) an orthonormal basis of the admissible
velocities (ker J at q, within range G of ``gamma_q``), the states x_r = [δy, δẏ] (2·r) stand for

    [δq, δq̇] = V x_r,     V = diag(N, N),     A_r = Vᵀ A V,   B_r = Vᵀ B.

V spans the tangent space of the constraint set {c = 0, ċ = 0}, which the flow leaves invariant;
A maps that tangent space into itself (A V = V A_r, checked) where the set is flat (constraints
linear in q: joint couplings, fixed-tendon equalities — at any state) or at an equilibrium (q̇ = 0,
q̈ = 0 — e.g. τ = the gravity torques ``mb.rnea(model, q, 0, 0)``).  Elsewhere the tangent space
turns along the motion, no constant V reduces A, and ``coordinates="minimal"`` refuses.  Both come
from central differences of ``fd_gq`` (Richardson-extrapolated in q, ``step``), whatever ``method``.

Nonholonomic rows (``VelocityConstraint``, ``RollingContact``'s no-slip rows) constrain speeds
only: their minimal states are the kernel of the state-space rows Φ = [J_h 0; ∂ċ/∂q J] (holonomic
positions and rates, nonholonomic rates), so a rolling wheel keeps its position on the plane as a
state.  About a steady motion whose rows do not depend on the coordinates that change (a bicycle
running straight: its position, heading and wheel angles are ignorable) that kernel is invariant
and A_r = Vᵀ A V holds the motion's eigenvalues (``_nonholonomic``).
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from ..dynamics import aba
from ..dynamics import aba_derivatives
from ..dynamics import crba
from ..dynamics import rnea
from ..dynamics.fdgq import _call_gamma_q, _constraint_set, fd_gq
from ..model.configuration import difference, integrate
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model


class Linearization(tuple):
    """(A, B) — unpacks as a pair — with ``basis`` V: the full state [δq, δq̇] = V x (identity for
    an unconstrained model or ``coordinates="full"``)."""

    def __new__(cls, A, B, basis):
        self = super().__new__(cls, (A, B))
        self.basis = basis
        return self

    @property
    def A(self):
        return self[0]

    @property
    def B(self):
        return self[1]


def linearize(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike | None = None,
              f_ext: ArrayLike | None = None, *, method: str = "analytic", step: float = 1e-3,
              constraints: object | None = None, coordinates: str = "minimal") -> Linearization:
    """(A, B) of ẋ = A x + B u about (q, q̇, τ): x = [δq, δq̇] (2·nv), u = δτ (nv).

    A constrained model (``model.constraints``, ``constraints`` joined with them, or
    ``model.gamma_q``) is linearised on its constraint set (module docstring): by default
    (``coordinates="minimal"``) x = [δy, δẏ] (2·r, r the mechanism's degrees of freedom), whose
    eigenvalues are the constrained mechanism's; ``coordinates="full"`` gives the 2·nv-state
    linearisation of q̈ = ``fd_gq``, Baumgarte modes included.  The result's ``basis`` maps x to
    [δq, δq̇].

    ``method="analytic"`` (default) takes ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ from
    :func:`multibody.aba_derivatives` (exact, δq in the body-frame tangent space of
    :func:`multibody.integrate`); ``method="fd"`` takes the central differences of the module
    docstring (``step`` is their h), for comparison.

    With nonholonomic rows (``mb.RollingContact``, ``mb.VelocityConstraint``) the minimal states
    are the tangent space of the constraints' state set — positions keep the dimensions only
    velocities lose (a rolling wheel's place on the plane) — and the operating point may be a
    steady motion (a bicycle running straight), not only an equilibrium.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,)
        The operating point's configuration.
    qd : array_like, shape (nv,)
        Its joint velocities.
    tau : array_like, shape (nv,), optional
        Its joint forces (default 0; ``mb.rnea(model, q, 0, 0)`` holds it at rest).
    f_ext : array_like, shape (nb, 6), optional
        External spatial forces on the bodies, held constant.
    method : {'analytic', 'fd'}, optional
        Exact derivatives (default) or central differences.
    step : float, optional
        h of the central differences (``method="fd"``).
    constraints : optional
        Constraints joined with the model's own (``mb.ConstraintSet``, ``mb.GammaQ``, …).
    coordinates : {'minimal', 'full'}, optional
        States on the constraint set, or all 2·nv (constrained models only).

    Returns
    -------
    Linearization
        ``(A, B)``, unpacking as a pair: A (n_x, n_x), B (n_x, nv), with ``.basis`` V (2·nv, n_x):
        the full state [δq, δq̇] = V x (the identity for a tree without constraints).

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an argument is not numeric.
    ValueError
        A wrong shape, NaN or inf, an unknown ``method`` or ``coordinates``, a step that is not
        positive, or constraints whose rows are dependent at the operating point.

    Example
    -------
    A pendulum hanging down: ẍ = −(m g d / I) x, so A[1, 0] = −ω².

    >>> import numpy as np, multibody as mb
    >>> b = mb.ModelBuilder("pendulum", gravity=(0, 0, -9.81))
    >>> _ = b.add_body("rod", None, "Rx", mass=2.0, com=[0, 0, -0.5], inertia=np.diag([0.1, 0.1, 0.01]))
    >>> A, B = mb.linearize(b.build(), [0.0], [0.0])
    >>> I_hinge = 0.1 + 2.0 * 0.5 ** 2
    >>> bool(np.isclose(A[1, 0], -2.0 * 9.81 * 0.5 / I_hinge)), bool(np.isclose(B[1, 0], 1 / I_hinge))
    (True, True)
    """
    nv = model.nv
    q = _checks.vector("q", q, model.nq)
    qd = _checks.vector("qd", qd, nv)
    tau = np.zeros(nv) if tau is None else _checks.vector("tau", tau, nv)
    method = _checks.one_of("method", method, ("analytic", "fd"))
    step = _checks.number("step", step, positive=True)
    coordinates = _checks.one_of("coordinates", coordinates, ("minimal", "full"))
    cons = _constraint_set(model, constraints)
    if cons is not None or model.gamma_q is not None:
        return _constrained(model, q, qd, tau, f_ext, cons, step, coordinates)
    A, B = _tree(model, q, qd, tau, f_ext, method, step)
    return Linearization(A, B, np.eye(2 * nv))


def _tree(model, q, qd, tau, f_ext, method, step):
    nv = model.nv
    A = np.zeros((2 * nv, 2 * nv))
    A[:nv, nv:] = np.eye(nv)
    if method == "analytic":
        A[nv:, :nv], A[nv:, nv:], Minv = aba_derivatives(model, q, qd, tau, f_ext)
        return A, np.vstack([np.zeros((nv, nv)), Minv])
    qdd0 = aba(model, q, qd, tau, f_ext)
    M = crba(model, q)
    Minv = np.linalg.inv(M)
    E = np.eye(nv)

    def id_q(h):
        """Central difference of ID in q, all directions in one batched RNEA call."""
        qp = integrate(model, np.broadcast_to(q, (nv, model.nq)), h * E)
        qm = integrate(model, np.broadcast_to(q, (nv, model.nq)), -h * E)
        return (rnea(model, qp, qd, qdd0, f_ext) - rnea(model, qm, qd, qdd0, f_ext)).T / (2 * h)

    dID_dq = (4 * id_q(step / 2) - id_q(step)) / 3          # Richardson: O(h²) → O(h⁴)
    hv = 1.0
    dID_dqd = (rnea(model, q, qd + hv * E, qdd0, f_ext) - rnea(model, q, qd - hv * E, qdd0, f_ext)).T / (2 * hv)
    A[nv:, :nv] = -Minv @ dID_dq
    A[nv:, nv:] = -Minv @ dID_dqd
    B = np.vstack([np.zeros((nv, nv)), Minv])
    return A, B


def _constrained(model, q, qd, tau, f_ext, cons, step, coordinates):
    nv = model.nv
    E = np.eye(nv)
    Q = np.broadcast_to(q, (nv, model.nq))

    def fd(qs, qds, taus):
        return fd_gq(model, qs, qds, taus, f_ext, constraints=cons)

    def d_dq(f, h):
        """Central difference in q on the manifold (q ⊕ ±h e_k), all directions in one batch: (·, nv)."""
        return (f(integrate(model, Q, h * E)) - f(integrate(model, Q, -h * E))).T / (2 * h)

    def richardson(f):
        return (4 * d_dq(f, step / 2) - d_dq(f, step)) / 3             # O(h²) → O(h⁴)

    A = np.zeros((2 * nv, 2 * nv))
    A[:nv, nv:] = E
    A[nv:, :nv] = richardson(lambda qs: fd(qs, qd, tau))
    # q̈ is quadratic in q̇ (C, J̇q̇) and linear in τ: central differences are exact up to round-off
    hv = max(1.0, float(np.abs(qd).max(initial=0.0)))
    A[nv:, nv:] = (fd(q, qd + hv * E, tau) - fd(q, qd - hv * E, tau)).T / (2 * hv)
    B = np.vstack([np.zeros((nv, nv)), (fd(q, qd, tau + E) - fd(q, qd, tau - E)).T / 2])
    if coordinates == "full":
        return Linearization(A, B, np.eye(2 * nv))
    if cons is not None and _has_velocity_rows(model, cons, q, qd):
        return _nonholonomic(model, cons, q, qd, A, B, step, lambda: fd(q, qd, tau))
    rows = _velocity_rows(model, cons)
    Phi = rows(q)
    _check_on_constraints(model, cons, q, qd, Phi)
    N = _null_basis(Phi, nv)
    r = N.shape[1]
    V = np.zeros((2 * nv, 2 * r))
    V[:nv, :r] = V[nv:, r:] = N
    Ar, Br = V.T @ A @ V, V.T @ B
    off = np.abs(A @ V - V @ Ar).max(initial=0.0)
    if off > 1e-6 * max(1.0, np.abs(A).max()):
        raise ValueError(f"q, qd, tau: the constraint set is curved here and the point is no equilibrium "
                         f"(|q̈| = {np.abs(fd(q, qd, tau)).max():.3g}): the tangent space turns along the motion "
                         f"(|A V − V A_r| = {off:.3g}) and no constant basis reduces A; linearise at an "
                         "equilibrium (q̇ = 0, τ = mb.rnea(model, q, 0, 0)) or pass coordinates='full'")
    return Linearization(Ar, Br, V)


def _has_velocity_rows(model, cons, q, qd):
    vel = cons.evaluate(model, q, qd).velocity
    return vel is not None and bool(vel.any())


def _nonholonomic(model, cons, q, qd, A, B, step, qdd):
    """Minimal coordinates of a model with nonholonomic rows (``VelocityConstraint``,
    ``RollingContact``): the tangent space, at the operating point, of the state set
    {c = 0, ċ = 0 on holonomic rows; s = 0 on velocity rows}, the kernel of

        Φ = ⎡ J_h        0   ⎤      (δc)
            ⎢ ∂ċ_h/∂q    J_h ⎥      (δċ)
            ⎣ ∂s/∂q      A   ⎦      (δs)

    (∂/∂q by central differences on the manifold, Richardson-extrapolated).  Positions keep the
    dimensions the nonholonomic rows do not take (nv − holonomic rows), speeds lose both: a
    rolling wheel's position on the plane is a state, its sliding is not.  About a steady motion
    whose state set does not turn along the motion (the rows do not depend on the coordinates
    that change — a bicycle's position, heading and wheel angles), A maps ker Φ into itself and
    A_r = Vᵀ A V (V an orthonormal basis of ker Φ, the result's ``basis``) holds the motion's
    eigenvalues; elsewhere this refuses as the holonomic case does."""
    if model.gamma_q is not None:
        raise ValueError("constraints: minimal coordinates of nonholonomic rows together with model.gamma_q are "
                         "not supported; pass coordinates='full'")
    nv = model.nv
    terms = cons.evaluate(model, q, qd)
    hol = ~terms.velocity
    c, cdot = terms.c, terms.cdot
    scale = 1.0 + float(np.abs(qd).max(initial=0.0))
    if np.abs(c).max(initial=0.0) > 1e-8 or np.abs(cdot).max(initial=0.0) > 1e-8 * scale:
        raise ValueError(f"q, qd: the operating point is not on the constraints (|c| = "
                         f"{np.abs(c).max(initial=0.0):.3g}, |ċ| = {np.abs(cdot).max(initial=0.0):.3g}); "
                         "minimal coordinates need a consistent state — pass one, or coordinates='full'")
    E = np.eye(nv)

    def d_dq(h):
        return np.column_stack([(cons.evaluate(model, integrate(model, q, h * E[k]), qd).cdot
                                 - cons.evaluate(model, integrate(model, q, -h * E[k]), qd).cdot) / (2 * h)
                                for k in range(nv)])

    D = (4 * d_dq(step / 2) - d_dq(step)) / 3
    J = terms.J
    Phi = np.vstack([np.hstack([J[hol], np.zeros_like(J[hol])]), np.hstack([D, J])])
    V = _null_basis(Phi, 2 * nv)
    Ar, Br = V.T @ A @ V, V.T @ B
    off = np.abs(A @ V - V @ Ar).max(initial=0.0)
    if off > 1e-6 * max(1.0, np.abs(A).max()):
        raise ValueError(f"q, qd, tau: the state set of the constraints turns along the motion here "
                         f"(|q̈| = {np.abs(qdd()).max():.3g}, |A V − V A_r| = {off:.3g}) and no constant basis "
                         "reduces A; linearise about a steady motion or an equilibrium, or pass coordinates='full'")
    return Linearization(Ar, Br, V)


def _velocity_rows(model, cons):
    """Φ(q): the rows of the velocity constraints Φ q̇ = 0 — the implicit constraints' J, and for
    ``gamma_q`` the complement of range G (I − G G⁺)."""
    gq = model.gamma_q

    def rows(q):
        parts = []
        if cons is not None:
            parts.append(cons.targets(model, q, np.zeros(model.nv))[0])
        if gq is not None:
            G = _call_gamma_q(model, gq, q, np.zeros(model.nv))[2]
            parts.append(np.eye(model.nv) - G @ np.linalg.pinv(G))
        return np.vstack(parts)
    return rows


def _null_basis(Phi, nv):
    """Orthonormal basis of ker Φ (rank by singular values above 1e-9 of the largest)."""
    _, sv, Vt = np.linalg.svd(Phi)
    rank = int(np.sum(sv > 1e-9 * max(sv[0] if sv.size else 0.0, 1e-300)))
    N = Vt[rank:].T
    # a deterministic orientation: the largest entry of each column positive
    return N * np.where(N[np.abs(N).argmax(axis=0), np.arange(N.shape[1])] < 0, -1.0, 1.0)


def _check_on_constraints(model, cons, q, qd, Phi):
    c = cons.residual(model, q, qd)[0] if cons is not None else np.zeros(0)
    if model.gamma_q is not None:
        qn, _, _, _ = _call_gamma_q(model, model.gamma_q, q, qd)
        c = np.concatenate([c, difference(model, q, qn)])
    cdot = Phi @ qd
    scale = 1.0 + float(np.abs(qd).max(initial=0.0))
    if np.abs(c).max(initial=0.0) > 1e-8 or np.abs(cdot).max(initial=0.0) > 1e-8 * scale:
        raise ValueError(f"q, qd: the operating point is not on the constraints (|c| = "
                         f"{np.abs(c).max(initial=0.0):.3g}, |ċ| = {np.abs(cdot).max(initial=0.0):.3g}); "
                         "minimal coordinates need a consistent state — pass one, or coordinates='full'")
