"""Nonholonomic constraints in the symbolic derivation: Kane's equations by projection onto
independent speeds (Kane and Levinson, Dynamics: Theory and Applications, 1985, ch. 4 and 6).

Why Kane's projection and not TMT with velocity constraints: TMT (the TMT paper's eq. 6) keeps
every coordinate and adds a multiplier per row, so a symbolic result is the augmented matrix, not
equations one can read or linearise; the projection eliminates the constraint forces and leaves
one equation per independent speed — for the bicycle, the roll, steer and forward-speed
equations the benchmark is written in.

Given the tree's equations M q̈ + b + g = Sᵀ τ (any of :func:`~multibody.symbolic.derive`'s
methods) and velocity rows A(q) q̇ = 0 (nonholonomic rows, and holonomic rows in their velocity
form J q̇ = 0), choose independent speeds u = q̇_I; the dependent ones follow,
q̇_D = −A_D⁻¹ A_I u, so q̇ = N(q) u with N = [I; −A_D⁻¹ A_I] (rows in coordinate order).  The
columns of N are Kane's partial velocities in joint space; the constraint forces Aᵀλ do no work
along them (A N = 0), and Kane's dynamical equations are Nᵀ(M q̈ + b + g − Sᵀτ) = 0 with
q̈ = N u̇ + Ṅ u::

    M_r(q) u̇ + f_r(q, u) = Nᵀ Sᵀ τ,   M_r = Nᵀ M N,   f_r = Nᵀ (M Ṅ u + b + g) at q̇ = N u.

Holonomic rows stay in q (their positions are solved numerically where needed, as for the
bicycle's pitch); the equations hold on the constraint set.

Rows of :class:`~multibody.model.constraints.RollingContact` are written symbolically from the
tree's kinematics (``tree_kinematics``): the wheel's centre C(q), axis a(q), ω = A_IB T_ω q̇,
contact point P = C + r d, d = (−n + (a·n) a)/√(1 − (a·n)²), v_P = (∂C/∂q − [r d]× A_IB T_ω) q̇.

Example — the Chaplygin sleigh (blade at the joint origin, centre of mass a ahead):

>>> import sympy as sp, multibody as mb
>>> m, a, I = sp.symbols("m a I", positive=True)
>>> b = mb.ModelBuilder("sleigh", gravity=(0, 0, 0))
>>> _ = b.add_body("px", None, "prismatic", axis=[1, 0, 0], mass=0, allow_massless=True)
>>> _ = b.add_body("py", "px", "prismatic", axis=[0, 1, 0], mass=0, allow_massless=True)
>>> _ = b.add_body("s", "py", "revolute", axis=[0, 0, 1], mass=m, com=[a, 0, 0], inertia=[I, I, I])
>>> sleigh = b.build()
>>> x, y, th = sp.symbols("x y theta")
>>> blade = sp.Matrix([[-sp.sin(th), sp.cos(th), 0]])
>>> red = kane_equations(sleigh, [blade], independent=[0, 2], q=[x, y, th])
>>> red.u.T, sp.simplify(red.M)                      # u = (ẋ, θ̇); ẏ = tan θ ẋ
(Matrix([[dq0, dq2]]), Matrix([
[m/cos(theta)**2,          0],
[              0, I + a**2*m]]))
>>> sp.simplify(red.f[1])          # (I + m a²) ω̇ = −m a v ω with v = ẋ / cos θ: Chaplygin's equation
a*dq0*dq2*m/cos(theta)
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..model.constraints import RollingContact
from .utils import skew

__all__ = ["ReducedEquations", "kane_equations", "rolling_rows"]


@dataclass
class ReducedEquations:
    """Kane's equations M u̇ + f = Q τ on the independent speeds u (module docstring).

    q, dq : sympy.Matrix    the coordinates and their rates (dq[independent] = u)
    u : sympy.Matrix        the independent speeds (symbols of dq)
    independent : list      their indices in q̇
    N : sympy.Matrix        q̇ = N u (nq × nu), Kane's partial velocities
    M : sympy.Matrix        Nᵀ M N (nu × nu)
    f : sympy.Matrix        Nᵀ (M Ṅ u + b + g) with q̇ = N u (nu × 1)
    Q : sympy.Matrix        Nᵀ Sᵀ (nu × m): the generalised forces of the actuators
    tau : sympy.Matrix      the actuator symbols
    rows : sympy.Matrix     the velocity rows A(q) the projection satisfies (A N = 0)
    """
    q: sp.Matrix
    dq: sp.Matrix
    u: sp.Matrix
    independent: list
    N: sp.Matrix
    M: sp.Matrix
    f: sp.Matrix
    Q: sp.Matrix
    tau: sp.Matrix
    rows: sp.Matrix

    def accelerations(self, values=None):
        """u̇ = M⁻¹ (Q τ − f) as a SymPy matrix (``values`` substituted first: {symbol: value})."""
        M, f, Q = (x.subs(values) if values else x for x in (self.M, self.f, self.Q))
        return M.LUsolve(Q * self.tau - f)


def rolling_rows(model, contact: RollingContact, kinematics=None, q=None) -> sp.Matrix:
    """The rows of a :class:`~multibody.model.constraints.RollingContact` as a SymPy matrix A(q)
    (rows × nv): the height row's gradient (if ``contact.holonomic``), then t_k·v_P / q̇.

    Parameters
    ----------
    model : Model
        The tree (revolute, prismatic, helical and fixed joints, as :func:`derive` takes them).
    contact : RollingContact
        The wheel or disc and the plane it rolls on.
    kinematics : dict, optional
        :func:`multibody.symbolic.tmt.from_model.tree_kinematics`'s result for ``model`` (built
        from ``model`` and ``q`` when None; pass it to share it between contacts).
    q : sequence of sympy.Symbol, optional
        The coordinates' symbols (default ``q0, q1, …``).

    Returns
    -------
    sympy.Matrix, shape (rows, nq)
        A(q): the contact point's velocity along the plane's tangents (and the height row's gradient)
        per unit q̇.

    Raises
    ------
    TypeError
        ``contact`` is not a RollingContact.
    ValueError
        An unknown body.

    Example
    -------
    A disc on a chain x, y, heading, lean, spin rolling on the ground:

    >>> import multibody as mb
    >>> from multibody.model.constraints import RollingContact
    >>> from multibody.symbolic.nonholonomic import rolling_rows
    >>> b = mb.ModelBuilder("disc")
    >>> for name, parent, axis in [("cx", None, [1, 0, 0]), ("cy", "cx", [0, 1, 0])]:
    ...     _ = b.add_body(name, parent, "prismatic", axis=axis, mass=0, allow_massless=True)
    >>> _ = b.add_body("heading", "cy", "revolute", axis=[0, 0, 1], mass=0, allow_massless=True)
    >>> _ = b.add_body("lean", "heading", "revolute", axis=[1, 0, 0], mass=0, allow_massless=True)
    >>> _ = b.add_body("disc", "lean", "revolute", axis=[0, 1, 0], joint_translation=[0, 0, 0.5],
    ...                mass=1.0, inertia=[0.1, 0.2, 0.1])
    >>> rolling_rows(b.build(), RollingContact("disc", 0.5, holonomic=False)).shape
    (2, 5)
    """
    from .tmt.from_model import tree_kinematics

    if not isinstance(contact, RollingContact):
        raise TypeError(f"contact: expected a RollingContact, got {type(contact).__name__}")
    kin = kinematics if kinematics is not None else tree_kinematics(model, q)
    qs = kin["q"]
    i = model.body_index(contact.body)
    R = kin["R"][i]
    C = kin["p"][i] + R * sp.Matrix(contact.center)
    n = sp.Matrix(contact.normal)
    a = R * sp.Matrix(contact.axis)
    s = (a.T * n)[0]
    root = sp.sqrt(1 - s ** 2)
    rd = contact.radius * (s * a - n) / root
    Jc = C.jacobian(qs)
    Jw = R * kin["T_omega"][i]
    JP = Jc - skew(rd) * Jw
    rows = [sp.Matrix([(C.T * n)[0] - contact.radius * root]).jacobian(qs)] if contact.holonomic else []
    rows += [sp.Matrix(t).T * JP for t in contact.tangents.tolist()]
    return sp.Matrix.vstack(*rows)


def kane_equations(source, constraints, independent, *, method="rnea", q=None, dq=None) -> ReducedEquations:
    """Kane's equations of a tree with velocity constraints, by projection onto independent speeds.

    Parameters
    ----------
    source : Model or EquationsOfMotion
        A model (derived with ``method``, in the symbols ``q``, ``dq``) or equations already
        derived from one (then ``constraints`` must be SymPy rows in its symbols).
    constraints : sequence
        :class:`~multibody.model.constraints.RollingContact` descriptions (rows from the tree's
        kinematics) and SymPy matrices A(q) (rows × nq: A q̇ = 0 — a nonholonomic row, or a
        holonomic one in velocity form).
    independent : sequence of int
        The indices of the independent speeds in q̇ (one per degree of freedom of the motion).
    method : str
        The derivation method for a model (:func:`~multibody.symbolic.derive`).
    q, dq : sequence of sympy.Symbol, optional
        The symbols of the coordinates and their rates (for a model; default ``q0, …``, ``dq0, …``).

    Returns
    -------
    ReducedEquations
        M u̇ + f = Q τ on the independent speeds u, with N (q̇ = N u) and the rows A (A N = 0).

    Raises
    ------
    ValueError
        Independent indices that are not distinct indices of q̇, or a count of them that does not
        leave as many dependent speeds as rows; rows whose dependent block is singular.
    TypeError
        A constraint that is neither a RollingContact nor a SymPy matrix.

    Example
    -------
    Chaplygin's sleigh: a body on the plane whose origin cannot slip sideways,
    −sin θ ẋ + cos θ ẏ = 0, with ẋ and θ̇ independent:

    >>> import sympy as sp, multibody as mb
    >>> from multibody.symbolic.nonholonomic import kane_equations
    >>> b = mb.ModelBuilder("sleigh", gravity=(0, 0, 0))
    >>> _ = b.add_body("cx", None, "prismatic", axis=[1, 0, 0], mass=0, allow_massless=True)
    >>> _ = b.add_body("cy", "cx", "prismatic", axis=[0, 1, 0], mass=0, allow_massless=True)
    >>> _ = b.add_body("sled", "cy", "revolute", axis=[0, 0, 1], mass=1.0, inertia=[0.1, 0.1, 0.1])
    >>> q, dq = sp.symbols("x y th"), sp.symbols("dx dy dth")
    >>> A = sp.Matrix([[-sp.sin(q[2]), sp.cos(q[2]), 0]])
    >>> red = kane_equations(b.build(), [A], independent=[0, 2], q=q, dq=dq)
    >>> red.M.shape, sp.simplify(A * red.N)
    ((2, 2), Matrix([[0, 0]]))
    """
    from ..model.model import Model
    from .derivation import derive

    model = source if isinstance(source, Model) else None
    eom = derive(source, method, q=q, dq=dq, raw=True) if model is not None else source
    qs, dqs = eom.q, eom.dq
    nq = qs.rows
    parts = []
    kin = None
    for c in constraints:
        if isinstance(c, RollingContact):
            if model is None:
                raise TypeError("constraints: a RollingContact needs the model (pass the Model as source)")
            if kin is None:
                from .tmt.from_model import tree_kinematics
                kin = tree_kinematics(model, qs)
            parts.append(rolling_rows(model, c, kin))
        elif isinstance(c, (sp.MatrixBase,)):
            if c.cols != nq:
                raise ValueError(f"constraints: a row matrix has {c.cols} columns, expected {nq} (one per q̇)")
            parts.append(sp.Matrix(c))
        else:
            raise TypeError(f"constraints: expected RollingContact descriptions or SymPy row matrices, got "
                            f"{type(c).__name__}")
    A = sp.Matrix.vstack(*parts)
    ind = [int(k) for k in independent]
    if len(set(ind)) != len(ind) or any(not 0 <= k < nq for k in ind):
        raise ValueError(f"independent: expected distinct indices in 0…{nq - 1}, got {list(independent)}")
    dep = [k for k in range(nq) if k not in ind]
    if len(dep) != A.rows:
        raise ValueError(f"independent: {len(ind)} independent speeds leave {len(dep)} dependent ones, but there "
                         f"are {A.rows} constraint rows")
    AD, AI = A.extract(list(range(A.rows)), dep), A.extract(list(range(A.rows)), ind)
    if AD.rows and sp.simplify(AD.det()) == 0:
        raise ValueError(f"independent: the rows do not determine the dependent speeds {dep} (A_D is singular)")
    ND = -AD.LUsolve(AI) if AD.rows else sp.zeros(0, len(ind))
    N = sp.zeros(nq, len(ind))
    for col, k in enumerate(ind):
        N[k, col] = 1
    for row, k in enumerate(dep):
        N[k, :] = ND[row, :]
    u = sp.Matrix([dqs[k] for k in ind])
    on = {dqs[k]: (N[k, :] * u)[0] for k in dep}           # q̇ = N u
    Ndot = sp.zeros(nq, len(ind))
    for k in range(nq):
        Ndot += N.diff(qs[k]) * (N[k, :] * u)[0]
    Mt = eom.M
    M_r = N.T * Mt * N
    f_r = N.T * (Mt * Ndot * u + (eom.b + eom.g).subs(on))
    Q = N.T * eom.S.T
    return ReducedEquations(q=qs, dq=dqs, u=u, independent=ind, N=N, M=M_r, f=f_r, Q=Q, tau=eom.tau, rows=A)
