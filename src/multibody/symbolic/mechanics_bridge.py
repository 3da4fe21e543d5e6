"""A bridge to and from ``sympy.physics.mechanics`` (issue 35, item 3).

People who already have a ``KanesMethod`` or ``LagrangesMethod`` system take it in as an
:class:`~multibody.symbolic.EquationsOfMotion` (then print it readably, generate code, compare it
with ``derive``), and take any ``EquationsOfMotion`` out as the matrix pair SymPy's mechanics
works with, ``mass_matrix · q̈ = forcing``.

The two conventions::

    multibody:  M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ
    SymPy:      mass_matrix(q) u̇ = forcing(q, u, r)      (Kane: q̇ = u;  Lagrange: u = q̇)

so ``M = mass_matrix``, ``g = −forcing`` at u = 0, r = 0, ``b = −forcing − g`` at r = 0 and
``Sᵀ = ∂forcing/∂r`` (the specified inputs r, which must enter linearly, become τ).
"""
from __future__ import annotations

from typing import Any, Sequence

import sympy as sp

from .eom import EquationsOfMotion

__all__ = ["from_mechanics", "to_mechanics"]


def _plain(f, suffix: str = "") -> sp.Symbol:
    """The plain symbol of a dynamicsymbol ``q1(t)`` (``q1``) or its derivative (``q1`` + suffix)."""
    name = f.func.__name__ if isinstance(f, sp.core.function.AppliedUndef) else str(f)
    return sp.Symbol(name + suffix)


def from_mechanics(system: Any) -> EquationsOfMotion:
    """Equations of motion ``M q̈ + b + g = Sᵀ τ`` of a ``sympy.physics.mechanics`` system.

    Kane's ``mass_matrix`` and ``forcing`` (with the kinematic differential equations q̇ = u) or
    Lagrange's (after ``form_lagranges_equations``) are split into M, the velocity terms b, the
    gravity and spring terms g and the input map Sᵀ = ∂forcing/∂r; the dynamicsymbols become plain
    symbols: ``q1(t)`` → ``q1``, Kane's ``u1(t)`` → ``u1``, Lagrange's ``q1'(t)`` → ``dq1``, an input
    ``F(t)`` → ``F``.

    Parameters
    ----------
    system : sympy.physics.mechanics.KanesMethod or LagrangesMethod
        A system whose equations are formed (``kanes_equations`` or ``form_lagranges_equations``
        has run), without dependent speeds, constraints or Lagrange multipliers.

    Returns
    -------
    EquationsOfMotion
        ``M`` (n×n), ``b``, ``g`` (n×1), ``S`` (m×n) for the m specified inputs (τ), ``params``
        (every other symbol), ``extra["method"] == "sympy.physics.mechanics"``.

    Raises
    ------
    TypeError
        ``system`` is neither a KanesMethod nor a LagrangesMethod.
    ValueError
        Its equations are not formed; it has dependent speeds, constraints or multipliers; Kane's
        kinematic differential equations are not q̇ = u; an input enters the forcing nonlinearly; a
        plain symbol's name is taken by a parameter.

    Examples
    --------
    >>> from sympy.physics.mechanics.models import n_link_pendulum_on_cart
    >>> from multibody.symbolic import from_mechanics
    >>> eom = from_mechanics(n_link_pendulum_on_cart(1, cart_force=True, joint_torques=False))
    >>> list(eom.q), list(eom.dq), list(eom.tau)
    ([q0, q1], [u0, u1], [F])
    >>> eom.g[1]
    -g*l0*m1*sin(q1)
    """
    import sympy.physics.mechanics as me

    t = me.dynamicsymbols._t
    if isinstance(system, me.KanesMethod):
        kind = "Kane"
        try:
            Mm, F = system.mass_matrix, system.forcing
        except (AttributeError, ValueError) as exc:
            raise ValueError("from_mechanics: the KanesMethod's equations are not formed; call "
                             "kanes_equations(bodies, loads) first") from exc
        if len(system._udep) or len(system._qdep):
            raise ValueError("from_mechanics: the KanesMethod has dependent coordinates or speeds "
                             "(nonholonomic or configuration constraints); give a system of independent speeds")
        q, u = list(system.q), list(system.u)
        kd = system.kindiffdict()
        if any(sp.simplify(kd.get(qi.diff(t), sp.nan) - ui) != 0 for qi, ui in zip(q, u)):
            raise ValueError("from_mechanics: the kinematic differential equations must be q̇ = u (u_i = q_i'), "
                             f"got {kd}")
        F = F.xreplace(kd)
        u_plain = [_plain(ui) for ui in u]
        speed = dict(zip(u, u_plain))
    elif isinstance(system, me.LagrangesMethod):
        kind = "Lagrange"
        if system.eom is None:
            raise ValueError("from_mechanics: the LagrangesMethod's equations are not formed; call "
                             "form_lagranges_equations() first")
        if len(system.lam_vec):
            raise ValueError("from_mechanics: the LagrangesMethod has constraints (Lagrange multipliers "
                             f"{list(system.lam_vec)}); give an unconstrained system")
        Mm, F = system.mass_matrix, system.forcing
        q = list(system.q)
        u = [qi.diff(t) for qi in q]
        u_plain = [_plain(qi, "") for qi in q]
        u_plain = [sp.Symbol("d" + s.name) for s in u_plain]
        speed = dict(zip(u, u_plain))
    else:
        raise TypeError("from_mechanics: expected a sympy.physics.mechanics KanesMethod or LagrangesMethod, got "
                        f"{type(system).__name__}")
    q_plain = [_plain(qi) for qi in q]
    known = set(q) | set(u) | {qi.diff(t) for qi in q} | {ui.diff(t) for ui in u}
    inputs = sorted(me.find_dynamicsymbols(sp.Matrix.hstack(Mm, F)) - known, key=str)
    tau = [_plain(r) for r in inputs]
    # speeds before coordinates: u(t) contains no q(t), but a Derivative(q(t), t) contains q(t)
    rep = {**speed, **dict(zip(inputs, tau)), **dict(zip(q, q_plain))}
    M = Mm.xreplace(rep)
    F = F.xreplace(rep)
    params = sorted((M.free_symbols | F.free_symbols) - set(q_plain) - set(u_plain) - set(tau) - {t}, key=str)
    clash = {s.name for s in params} & {s.name for s in q_plain + u_plain + tau}
    if clash:
        raise ValueError(f"from_mechanics: the name(s) {sorted(clash)} are taken by both a parameter and a "
                         "coordinate, speed or input; rename the parameter")
    n = len(q)
    if M.shape != (n, n) or F.shape != (n, 1):
        raise ValueError(f"from_mechanics: mass_matrix {M.shape} and forcing {F.shape} do not match n = {n}")
    St = F.jacobian(tau) if tau else sp.zeros(n, 0)
    if any(sp.expand(e.diff(r)) != 0 for e in St for r in tau):
        raise ValueError(f"from_mechanics: the inputs {tau} enter the forcing nonlinearly; f = Sᵀτ must be linear")
    zero_tau = {r: 0 for r in tau}
    F0 = F.xreplace(zero_tau)
    g = -F0.xreplace({s: 0 for s in u_plain})
    b = (-F0 - g).applyfunc(sp.expand)
    return EquationsOfMotion(q=sp.Matrix(q_plain), dq=sp.Matrix(u_plain), M=M, b=b, g=g, S=St.T,
                             tau=sp.Matrix(tau) if tau else sp.zeros(0, 1), params=tuple(params),
                             extra={"method": "sympy.physics.mechanics", "from": kind})


def to_mechanics(eom: EquationsOfMotion, q: Sequence | None = None,
                 u: Sequence | None = None) -> tuple[sp.Matrix, sp.Matrix]:
    """The matrix pair ``(mass_matrix, forcing)`` of ``sympy.physics.mechanics`` for ``eom``.

    ``mass_matrix · u̇ = forcing`` with ``mass_matrix = M`` and ``forcing = Sᵀτ − b − g``, in
    dynamicsymbols: each coordinate ``q1`` becomes ``q1(t)``, each rate the given speed ``u1(t)``
    (Kane's form, q̇ = u) or, by default, ``q1(t)'`` (Lagrange's form), each actuator ``T1`` an
    input ``T1(t)``. The pair compares directly with a KanesMethod's ``mass_matrix`` and
    ``forcing`` or a LagrangesMethod's.

    Parameters
    ----------
    eom : EquationsOfMotion
        Equations from :func:`~multibody.symbolic.derive` or :func:`from_mechanics`.
    q : sequence of dynamicsymbols, optional
        The coordinates as functions of time (default ``dynamicsymbols`` of ``eom.q``'s names).
    u : sequence of dynamicsymbols, optional
        The speeds, u = q̇ (default: the time derivatives of ``q``).

    Returns
    -------
    mass_matrix : sympy.Matrix, shape (n, n)
    forcing : sympy.Matrix, shape (n, 1)

    Raises
    ------
    TypeError
        ``eom`` is not an EquationsOfMotion.
    ValueError
        ``q`` or ``u`` does not have n entries.

    Examples
    --------
    >>> import multibody as mb
    >>> import sympy as sp
    >>> from multibody.symbolic import derive, to_mechanics
    >>> Mm, F = to_mechanics(derive(mb.models.double_pendulum(symbolic=True)))
    >>> Mm.shape, F.shape
    ((2, 2), (2, 1))
    >>> sorted(str(s) for s in Mm.atoms(sp.Function))[:2]
    ['cos(th2(t))', 'th2(t)']
    """
    import sympy.physics.mechanics as me

    if not isinstance(eom, EquationsOfMotion):
        raise TypeError(f"to_mechanics: expected an EquationsOfMotion, got {type(eom).__name__}")
    n = eom.n
    t = me.dynamicsymbols._t
    qf = [me.dynamicsymbols(str(s)) for s in eom.q] if q is None else list(q)
    uf = [x.diff(t) for x in qf] if u is None else list(u)
    for name, v in (("q", qf), ("u", uf)):
        if len(v) != n:
            raise ValueError(f"to_mechanics: {name} has {len(v)} entries, the equations have n = {n}")
    tf = [me.dynamicsymbols(str(s)) for s in eom.tau]
    rep = {**dict(zip(eom.q, qf)), **dict(zip(eom.dq, uf)), **dict(zip(eom.tau, tf))}
    forcing = eom.S.T * eom.tau - eom.b - eom.g
    return eom.M.xreplace(rep), forcing.xreplace(rep)
