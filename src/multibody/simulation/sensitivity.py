"""Sensitivities of a walker's stride map by variational equations and the saltation at heel strike.

Along a stance phase the state y = [q, q̇] (vector joints) flows by ẏ = f(t, y); its sensitivity
Φ(t) = ∂y(t)/∂y(0) obeys the variational equation Φ̇ = A(t) Φ, A = ∂f/∂y, integrated with the
state (here A by fourth-order central differences of the same right-hand side ``System.deriv`` the run uses —
analytic dynamics derivatives can replace them where they exist).  The stance phase ends where
the guard g(y) (the swing foot's height) reaches zero, at a time that itself depends on y(0):

    ∂y⁻/∂y(0) = (I − f⁻ ∇gᵀ / (∇g · f⁻)) Φ(t⁻)          (the saltation of a terminal event)

and the heel-strike map H (impact, TMT eq. 9, and leg swap; algebraic and smooth) contributes its
Jacobian ∂H/∂y⁻ (the same differences of H).  The stride map's Jacobian is then
∂P/∂x = S ∂H/∂y⁻ ∂y⁻/∂y(0) E, with E, S the section's embedding and projection.  Its accuracy is
the integration tolerance's (not a difference quotient of the whole stride, whose noise is the
tolerance divided by the step).
"""
from __future__ import annotations

import numpy as np

from .system import System

#: relative step of the differences of the right-hand side, the guard and the reset: fourth-order
#: central differences, so the truncation (h⁴) and the round-off (ε/h) both stay near 1e-12
DIFF_STEP = 1e-3


def _central(fn, y, step=DIFF_STEP):
    """∂fn/∂y by the five-point stencil (f(y−2h) − 8 f(y−h) + 8 f(y+h) − f(y+2h)) / 12h per column."""
    y = np.asarray(y, float)
    cols = []
    for k in range(len(y)):
        h = step * max(1.0, abs(y[k]))
        e = np.zeros(len(y))
        e[k] = h
        f = lambda d: np.asarray(fn(y + d * e), float)  # noqa: E731
        cols.append((f(-2) - 8 * f(-1) + 8 * f(1) - f(2)) / (12 * h))
    return np.column_stack(cols)


def stride_jacobian(walker, x):
    """(P(x), ∂P/∂x) of a :class:`~multibody.simulation.walker.Walker`'s stride map at section state x.

    Example — the simplest walking model's multipliers:

    >>> import numpy as np
    >>> from multibody.simulation.walker import tmt_biped
    >>> model, walker = tmt_biped(upper_body=False, k_h=0.0, gamma=0.009)
    >>> Px, J = stride_jacobian(walker, [0.2003, -0.4006, -0.1998, 0.0])
    >>> J.shape
    (4, 4)
    """
    from scipy.integrate import solve_ivp
    model = walker.model
    if model.nq != model.nv:
        raise ValueError("walker: variational stride Jacobians need vector joints (nq == nv)")
    q0, qd0 = walker.state(x)
    walker.pin.position = q0[walker.pin.q_index].copy()
    system = System(model, walker.controller, None, walker.pin)
    n = model.nq + model.nv

    def f(t, y):
        return system.deriv(t, y)[0]

    def rhs(t, z):
        y = z[:n]
        A = _central(lambda yy: f(t, yy), y)
        return np.concatenate([f(t, y), (A @ z[n:].reshape(n, n)).ravel()])

    def guard(t, z):
        return walker.heel_height(t, z[:model.nq], z[model.nq:n])
    guard.terminal, guard.direction = True, -1

    z0 = np.concatenate([q0, qd0, np.eye(n).ravel()])
    sol = solve_ivp(rhs, (0.0, walker.max_stride_time), z0, method="DOP853", rtol=walker.rtol, atol=walker.atol,
                    events=guard)
    if sol.status != 1 or not len(sol.t_events[0]):
        raise ValueError(f"walker: no heel strike within {walker.max_stride_time} s from x = {x!r}")
    z = sol.y_events[0][0]
    y_minus, Phi = z[:n], z[n:].reshape(n, n)
    f_minus = f(sol.t_events[0][0], y_minus)
    grad = _central(lambda yy: [walker.heel_height(0.0, yy[:model.nq], yy[model.nq:])], y_minus)[0]
    dy_minus = (np.eye(n) - np.outer(f_minus, grad) / (grad @ f_minus)) @ Phi

    def strike(yy):
        qp, qdp = walker.heel_strike(yy[:model.nq], yy[model.nq:])
        return walker.section(qp, qdp)
    H = _central(strike, y_minus)
    E = np.zeros((n, 2 * walker.n_free))
    E[walker.pin.free_q, np.arange(walker.n_free)] = 1.0
    E[model.nq + walker.pin.free_v, walker.n_free + np.arange(walker.n_free)] = 1.0
    return strike(y_minus), H @ dy_minus @ E
