"""Impacts as velocity maps: the TMT paper's eq. (9), and a joint-limit wall built on it.

At an impact the configuration q does not change and the velocities jump.  Integrating the
equations of motion over the vanishing impact time leaves only the impulses (TMT eqs. 7–9):

    ⎡ M     −T_cnᵀ  −T_ρᵀ ⎤ ⎡ q̇*  ⎤   ⎡ M      ⎤
    ⎢ T_cn   0       0    ⎥ ⎢ ρ_λ ⎥ = ⎢ 0      ⎥ q̇
    ⎣ T_ρ    0       0    ⎦ ⎣ ρ   ⎦   ⎣ E T_ρ  ⎦

M is the joint-space inertia (``mb.crba``), T_ρ the contact Jacobian (rows: contact velocity
directions), T_cn the Jacobian of constraints that stay closed during the impact, ρ the contact
impulse and ρ_λ the constraint impulses.  Newton's law (eq. 8) T_ρ q̇* = E T_ρ q̇ sets the
post-impact contact velocity; with restitution coefficients e this module uses E = −diag(e), so
e = 1 reverses the contact velocity (elastic, the OpenDE report's ``bounce = 1.0``) and e = 0
stops it (plastic, the TMT walker's heel strike).
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from ..dynamics import crba
from .events import Event
from numpy.typing import ArrayLike, NDArray
from typing import Callable

from ..model.model import Model


def _matrix(name, J, nv):
    a = _checks.array(name, J, None)
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[1] != nv:
        raise ValueError(f"{name}: expected shape (k, {nv}) (one row per contact direction), got {a.shape}")
    return a


#: a row whose part independent of the rows before it is below this share of its own size (in J M⁻¹ Jᵀ's
#: metric) is dependent on them (``redundant="drop"``); the kept rows' J M⁻¹ Jᵀ is then far from singular
DEPENDENT_ROW = 1e-10
#: and a row whose independent part is below this share is dependent even where no row is dropped (the rows
#: then have no unique impulses: |part| below 1e-14 of the row, as a condition number past 1e14)
SINGULAR_ROW = 1e-28
REDUNDANT_MODES = ("error", "drop")


def impact_map(model: Model, q: ArrayLike, qd: ArrayLike, contact_jacobian: ArrayLike | Callable,
               restitution: float | ArrayLike = 0.0, *, constraint_jacobian: ArrayLike | None = None,
               E: ArrayLike | None = None, return_impulses: bool = False,
               redundant: str = "error") -> NDArray[np.float64] | tuple[NDArray[np.float64], ...]:
    """Post-impact joint velocities q̇* by the TMT paper's eq. (9).

    Solves the impulse balance M (q̇* − q̇) = T_ρᵀ ρ + T_cnᵀ ρ_λ with the contact rows' velocity law
    T_ρ q̇* = −diag(e) T_ρ q̇ (or E T_ρ q̇) and T_cn q̇* = 0 for constraints that stay closed.

    Parameters
    ----------
    model : Model
        The mechanism.
    q, qd : array_like, shape (nq,) and (nv,)
        Configuration and joint velocities just before the impact.
    contact_jacobian : array_like, shape (k, nv), or callable
        T_ρ, the contact point's velocity rows (e.g. ``mb.point_jacobian`` rows along the contact
        normal and tangent), or a callable ``(model, q) -> (k, nv)``.
    restitution : float or array_like, shape (k,), optional
        e ≥ 0 per row (default 0, a plastic impact).
    constraint_jacobian : array_like, shape (nc, nv), optional
        T_cn of constraints that stay closed through the impact.
    E : array_like, shape (k, k), optional
        The paper's matrix of eq. (8), used instead of ``restitution`` (T_ρ q̇* = E T_ρ q̇).
    return_impulses : bool, optional
        Also return the impulses.
    redundant : {'error', 'drop'}, optional
        Rows that depend on others (a joint's stop row with the same joint already held, two
        stops of a coupled pair): ``'error'`` (default) refuses them; ``'drop'`` keeps the rows
        in order — the closed constraints first, then the contact rows — and drops each row that
        depends on those kept before it (its impulse 0; its velocity is then what the kept rows
        give: a closed row wins over a contact row on the same direction), as the LCP of hard
        contact keeps a dependent row's impulse 0.  Independent rows give the same numbers in
        both modes.

    Returns
    -------
    qd_plus : ndarray, shape (nv,)
        Joint velocities just after the impact.
    rho, rho_lambda : ndarray, shape (k,) and (nc,)
        The contact and constraint impulses, N·s (only with ``return_impulses=True``).

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an argument is not numeric.
    ValueError
        A Jacobian of the wrong width, a negative restitution, an unknown ``redundant``, or a
        singular impulse system (dependent contact and constraint rows under
        ``redundant='error'``; a massless direction in either mode).

    Example
    -------
    A pendulum hitting a wall with bounce 1.0 (joint-space contact row):

    >>> import numpy as np, multibody as mb
    >>> model = mb.models.double_pendulum()
    >>> q, qd = np.array([-1.0, 0.3]), np.array([-2.0, 0.5])
    >>> qd_plus = mb.impact_map(model, q, qd, [[1.0, 0.0]], restitution=1.0)
    >>> bool(np.isclose(qd_plus[0], 2.0))           # the hinge's rate is reversed …
    True
    >>> M = mb.crba(model, q)                       # … and the kinetic energy kept
    >>> bool(np.isclose(qd_plus @ M @ qd_plus, qd @ M @ qd))
    True

    The hinge's row twice, once held closed: the closed row is kept, the contact row dropped

    >>> mb.impact_map(model, q, qd, [[1.0, 0.0]], 1.0, constraint_jacobian=[[1.0, 0.0]],
    ...               redundant="drop")[0].round(12)
    np.float64(0.0)
    """
    nv = model.nv
    q = np.asarray(q, dtype=float)
    qd = _checks.vector("qd", qd, nv)
    if callable(contact_jacobian):
        contact_jacobian = contact_jacobian(model, q)
    T_rho = _matrix("contact_jacobian", contact_jacobian, nv)
    k = T_rho.shape[0]
    if E is not None:
        if restitution not in (0, 0.0):
            raise ValueError("restitution: give either restitution or E, not both")
        Em = np.array(E, dtype=float)
        if Em.ndim == 0:
            Em = Em * np.eye(k)
        if Em.shape != (k, k) or not np.all(np.isfinite(Em)):
            raise ValueError(f"E: expected a finite {k}×{k} matrix, got shape {Em.shape}")
    else:
        e = np.array(restitution, dtype=float)
        if e.ndim == 0:
            e = np.full(k, float(e))
        if e.shape != (k,) or not np.all(np.isfinite(e)) or np.any(e < 0):
            raise ValueError(f"restitution: expected a number ≥ 0 or {k} numbers ≥ 0 (one per contact row), "
                             f"got {restitution!r}")
        Em = -np.diag(e)
    T_cn = np.zeros((0, nv)) if constraint_jacobian is None else _matrix("constraint_jacobian",
                                                                         constraint_jacobian, nv)
    nc = T_cn.shape[0]
    _checks.one_of("redundant", redundant, REDUNDANT_MODES)
    M = crba(model, q)
    J, targets = np.vstack([T_cn, T_rho]), np.concatenate([np.zeros(nc), Em @ (T_rho @ qd)])
    x = _impulse_solve(M, J, targets, qd, SINGULAR_ROW)   # every row, unless some depend on others
    if x is None and redundant == "drop":
        x = _impulse_solve(M, J, targets, qd, DEPENDENT_ROW)
    if x is None:
        raise ValueError("contact_jacobian: the impact equations (9) are singular: contact/constraint rows "
                         "linearly dependent (redundant='drop' keeps the independent ones); the impact has no "
                         "unique solution")
    qd_plus = x[:nv]
    if return_impulses:
        return qd_plus, x[nv + nc:], x[nv:nv + nc]
    return qd_plus


def _impulse_solve(M, J, targets, qd, dependent):
    """[q̇*; impulses] of eq. (9) by its range-space form, with the rows of J (closed constraints, then
    contact rows) that depend on the rows before them dropped (impulse 0) where ``dependent`` is
    :data:`DEPENDENT_ROW`; with :data:`SINGULAR_ROW`, None where a row depends on the others.

    In M's metric a row j is the vector y_j = L⁻¹ j (M = L Lᵀ), and J M⁻¹ Jᵀ = YᵀY; a row is kept
    when y_j has a part orthogonal to the kept rows' of more than ``dependent`` of |y_j|² (modified
    Gram–Schmidt in the rows' order).  The kept rows' impulses ρ solve (Y_kᵀY_k) ρ = targets − J_k q̇,
    and q̇* = q̇ + M⁻¹ J_kᵀ ρ: one Cholesky factor of M and solves of the rows' size, where the
    bordered system [[M, −Jᵀ], [J, 0]] and its condition number (an SVD of nv + rows) took 4 % of an
    event-heavy run of tiago_dual."""
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise ValueError("contact_jacobian: the impact equations (9) are singular: the joint-space inertia "
                         "is not positive definite (a massless direction)") from None
    Y = np.linalg.solve(L, J.T)            # (nv, rows): the rows in M's metric
    basis, kept = [], []
    for j in range(Y.shape[1]):
        y = Y[:, j]
        size = float(y @ y)
        r = y.copy()
        for e in basis:
            r -= (e @ r) * e
        if size > 0.0 and float(r @ r) > dependent * size:
            basis.append(r / np.sqrt(float(r @ r)))
            kept.append(j)
        elif dependent == SINGULAR_ROW:
            return None
    rho = np.zeros(J.shape[0])
    if kept:
        Yk = Y[:, kept]
        rho[kept] = np.linalg.solve(Yk.T @ Yk, targets[kept] - J[kept] @ qd)
    qd_plus = qd + np.linalg.solve(L.T, Yk @ rho[kept]) if kept else qd.copy()
    return np.concatenate([qd_plus, rho])


def joint_wall(model, joint, position, side="lower", restitution=1.0, name=None) -> Event:
    """An :class:`Event` for a rigid stop on one joint (revolute or prismatic, 1 dof).

    Fires when the joint reaches ``position`` from inside (``side="lower"``: moving down past it;
    ``"upper"``: moving up past it) and applies :func:`impact_map` with the joint's own row as the
    contact Jacobian, so coupled joints receive their share of the impulse.

    Parameters
    ----------
    model : Model
        The mechanism.
    joint : str or int
        The joint's name or index.
    position : float
        Where the wall stands, rad or m.
    side : {'lower', 'upper'}, optional
        Which side of the joint's travel the wall closes.
    restitution : float, optional
        Coefficient of restitution e ≥ 0 (default 1, an elastic bounce).
    name : str, optional
        The event's name (default ``"<joint> <side> wall"``).

    Returns
    -------
    Event
        For ``mb.simulate(..., events=[...])``.

    Raises
    ------
    ValueError
        An unknown joint, a joint with more than one dof, an unknown ``side`` or a negative or
        non-finite restitution.

    Example
    -------
    The OpenDE report's colliding pendulum wall (appendix D.5):

    >>> import numpy as np, multibody as mb
    >>> m = mb.models.double_pendulum()
    >>> wall = mb.joint_wall(m, "th1", -np.pi / 2, side="lower", restitution=1.0)
    >>> wall.direction, wall.name
    (-1, 'th1 lower wall')
    """
    j = model.joint_index(joint)
    if model.nv_joint[j] != 1 or model.nq_joint[j] != 1:
        raise ValueError(f"joint: {model.joint_names[j]!r} has {model.nv_joint[j]} degrees of freedom; "
                         f"a joint wall needs a 1-dof joint")
    _checks.one_of("side", side, ("lower", "upper"))
    pos = _checks.number("position", position)
    e = _checks.number("restitution", restitution, nonneg=True)
    qi, vi = int(model.q_start[j]), int(model.v_start[j])
    row = np.zeros((1, model.nv))
    row[0, vi] = 1.0
    sign = 1.0 if side == "lower" else -1.0

    def guard(t, q, qd):
        return sign * (q[qi] - pos)

    def reset(t, q, qd):
        return q, impact_map(model, q, qd, row, restitution=e)

    return Event(guard, direction=-1, reset=reset, name=name or f"{model.joint_names[j]} {side} wall")
