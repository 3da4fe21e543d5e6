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

Everything runs in SymEngine, and nothing is simplified: A_D's invertibility is sampled at random
states (a rank test, not ``simplify(det A_D)``), the dependent speeds come from one Gauss–Jordan
elimination of A_D (pivots chosen on its numeric values) replayed on A_I and on Ȧ q̇ — Ṅ u solves
A_D (Ṅ u)_D = −Ȧ N u, from d/dt (A N) = 0, so N is never differentiated. The Whipple bicycle
(Meijaard et al. 2007; ``tests/test_symbolic_whipple.py``) derives in about a second and
linearises with :meth:`ReducedEquations.linearize` in about as long; its SymPy matrices are built
only when read (its f is too large for SymPy's simplify or lambdify:
:meth:`ReducedEquations.to_numeric` compiles it with SymEngine).

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

import numpy as np
import symengine as se
import sympy as sp

from ..model.constraints import RollingContact
from . import _core as C

__all__ = ["ReducedEquations", "kane_equations", "rolling_rows"]

# the states at which the dependent block A_D is sampled (a numeric rank test instead of
# simplify(det A_D), which on the bicycle's 5×5 block did not finish in minutes)
_SAMPLES = 3
_RANK_TOL = 1e-9


class ReducedEquations:
    """Kane's equations M u̇ + f = Q τ on the independent speeds u (module docstring).

    The projection runs in SymEngine; each SymPy matrix below is built on first use (the
    bicycle's f is large, and a caller that only linearises or generates code never needs it).

    Attributes
    ----------
    q, dq : sympy.Matrix
        The coordinates and their rates (dq[independent] = u).
    u : sympy.Matrix
        The independent speeds (symbols of dq).
    independent : list of int
        Their indices in q̇.
    N : sympy.Matrix
        q̇ = N u (nq × nu), Kane's partial velocities.
    M : sympy.Matrix
        Nᵀ M N (nu × nu).
    f : sympy.Matrix
        Nᵀ (M Ṅ u + b + g) with q̇ = N u (nu × 1).
    Q : sympy.Matrix
        Nᵀ Sᵀ (nu × m): the generalised forces of the actuators.
    tau : sympy.Matrix
        The actuator symbols.
    rows : sympy.Matrix
        The velocity rows A(q) the projection satisfies (A N = 0).
    """

    _LAZY = ("N", "M", "f", "Q", "rows")

    def __init__(self, *, q, dq, u, independent, N, M, f, Q, tau, rows, symbols=()):
        self.q, self.dq, self.u, self.tau = q, dq, u, tau
        self.independent = list(independent)
        self._se = {"N": N, "M": M, "f": f, "Q": Q, "rows": rows}
        self._symbols = list(q) + list(dq) + list(tau) + list(symbols)
        self._conv = None

    def __getattr__(self, name):
        # only reached for the matrices not yet converted (see the class docstring)
        if name in ReducedEquations._LAZY and "_se" in self.__dict__:
            rows = self.__dict__["_se"][name]
            if isinstance(rows, sp.MatrixBase):
                out = rows
            else:
                if self.__dict__["_conv"] is None:
                    self.__dict__["_conv"] = C.Converter(self.__dict__["_symbols"])
                conv = self.__dict__["_conv"]
                ncols = len(rows[0]) if rows else 0
                out = sp.Matrix(len(rows), ncols, [conv(e) for r in rows for e in r]) if rows and ncols \
                    else sp.zeros(len(rows), ncols)
            self.__dict__[name] = out
            return out
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _rows_se(self, name):
        rows = self._se[name]
        if isinstance(rows, sp.MatrixBase):
            rows = [[C.to_se(e) for e in rows.row(i)] for i in range(rows.rows)]
            self._se[name] = rows
        return rows

    def accelerations(self, values=None):
        """u̇ = M⁻¹ (Q τ − f) as a SymPy matrix.

        Parameters
        ----------
        values : dict, optional
            {symbol: value} substituted into M, f and Q first.

        Returns
        -------
        sympy.Matrix, shape (nu, 1)
            The independent accelerations.

        Examples
        --------
        >>> import sympy as sp, multibody as mb
        >>> b = mb.ModelBuilder("sleigh", gravity=(0, 0, 0))
        >>> _ = b.add_body("cx", None, "prismatic", axis=[1, 0, 0], mass=0, allow_massless=True)
        >>> _ = b.add_body("cy", "cx", "prismatic", axis=[0, 1, 0], mass=0, allow_massless=True)
        >>> _ = b.add_body("s", "cy", "revolute", axis=[0, 0, 1], mass=2.0, inertia=[0.1, 0.1, 0.1])
        >>> q, dq = sp.symbols("x y th"), sp.symbols("dx dy dth")
        >>> red = kane_equations(b.build(), [sp.Matrix([[-sp.sin(q[2]), sp.cos(q[2]), 0]])], [0, 2], q=q, dq=dq)
        >>> tau = dict(zip(red.tau, [2, 0, 0]))             # 2 N along x on 2 kg, heading along x
        >>> red.accelerations({q[2]: 0, dq[0]: 1, dq[2]: 0, **tau}).T
        Matrix([[1, 0]])
        """
        M, f, Q = (x.subs(values) if values else x for x in (self.M, self.f, self.Q))
        rhs = Q * self.tau - f
        return M.LUsolve(rhs.subs(values) if values else rhs)

    def to_numeric(self, values=None):
        """NumPy functions of the equations, compiled by SymEngine's ``Lambdify`` with common
        subexpressions shared (the bicycle's f is far too large for SymPy's ``lambdify``).

        Parameters
        ----------
        values : dict, optional
            {symbol: number} for the model's parameter symbols (none for a numeric model).

        Returns
        -------
        M, f, N : callable
            ``M(q, u)`` (nu × nu), ``f(q, u)`` (nu,), ``N(q)`` (nq × nu); ``q`` has nq entries,
            ``u`` nu (the independent speeds).

        Raises
        ------
        ValueError
            A symbol of the equations other than q and u without a value (named).

        Examples
        --------
        >>> import numpy as np, sympy as sp, multibody as mb
        >>> b = mb.ModelBuilder("sleigh", gravity=(0, 0, 0))
        >>> _ = b.add_body("cx", None, "prismatic", axis=[1, 0, 0], mass=0, allow_massless=True)
        >>> _ = b.add_body("cy", "cx", "prismatic", axis=[0, 1, 0], mass=0, allow_massless=True)
        >>> _ = b.add_body("s", "cy", "revolute", axis=[0, 0, 1], mass=2, com=[0.5, 0, 0], inertia=[1, 1, 1])
        >>> q, dq = sp.symbols("x y th"), sp.symbols("dx dy dth")
        >>> red = kane_equations(b.build(), [sp.Matrix([[-sp.sin(q[2]), sp.cos(q[2]), 0]])], [0, 2], q=q, dq=dq)
        >>> M, f, N = red.to_numeric()
        >>> np.round(N([0.0, 0.0, np.pi / 4])[:, 0], 12).tolist()       # ẏ = tan θ ẋ
        [1.0, 1.0, 0.0]
        """
        qe = [C.to_se(s) for s in self.q]
        ue = [C.to_se(s) for s in self.u]
        vals = {C.to_se(k): C.to_se(v) for k, v in dict(values or {}).items()}
        nq, nu = len(qe), len(ue)
        out = []
        for name, args, shape in (("M", qe + ue, (nu, nu)), ("f", qe + ue, (nu,)), ("N", qe, (nq, nu))):
            flat = [e.subs(vals) if vals else e for r in self._rows_se(name) for e in r]
            extra = sorted({str(s) for e in flat for s in e.free_symbols} - {str(a) for a in args})
            if extra:
                raise ValueError(f"values: no value for {', '.join(extra)} (give every parameter symbol of the "
                                 "equations)")
            if not flat:
                out.append(lambda *a, _s=shape: np.zeros(_s))
                continue
            fn = se.Lambdify(args, flat, cse=True, real=True)
            if name == "N":
                out.append(lambda q, _fn=fn, _s=shape: np.asarray(_fn(np.asarray(q, float)), float).reshape(_s))
            else:
                out.append(lambda q, u, _fn=fn, _s=shape: np.asarray(
                    _fn(np.concatenate([np.asarray(q, float), np.asarray(u, float)])), float).reshape(_s))
        return tuple(out)

    def linearize(self, point, coordinates, speeds=None, follow=()):
        """The linearised equations M δu̇ + C δu + K δq = Q δτ about a steady motion (u̇ = 0).

        The rows are Kane's equations along the chosen speeds; K differentiates along the chosen
        coordinates with the ``follow`` coordinates moving with them as the constraint rows
        say (∂q_d/∂q_c = N[d, c]: right for coordinates a holonomic row fixes, as the bicycle's
        rear-frame pitch). Derivatives are taken in SymEngine after every other symbol has been
        replaced by its value, so the bicycle's linearisation costs a fraction of a second.

        Parameters
        ----------
        point : dict
            {symbol: value} for every coordinate, independent speed and model parameter in the
            equations (values: numbers or SymPy expressions, e.g. a speed symbol ``v``).
        coordinates : sequence of int
            Indices in q of the coordinates perturbed (each one's rate must be independent).
        speeds : sequence of int, optional
            Indices in u of the speeds perturbed and of the equations kept (default: the rates
            of ``coordinates``).
        follow : sequence of int, optional
            Indices in q of dependent coordinates that move with ``coordinates``.

        Returns
        -------
        M, C, K : sympy.Matrix
            (len(speeds) × len(speeds)), (len(speeds) × len(speeds)), (len(speeds) × len(coordinates)).

        Raises
        ------
        ValueError
            A coordinate whose rate is not independent, an index out of range, or a symbol of the
            equations that ``point`` does not give (named).

        Examples
        --------
        The sleigh, perturbed in heading about straight motion at speed v: M = [[I + m a²]],
        C = [[m a v]] (the blade's restoring torque when the centre of mass leads), K = [[0]]:

        >>> import sympy as sp, multibody as mb
        >>> b = mb.ModelBuilder("sleigh", gravity=(0, 0, 0))
        >>> _ = b.add_body("cx", None, "prismatic", axis=[1, 0, 0], mass=0, allow_massless=True)
        >>> _ = b.add_body("cy", "cx", "prismatic", axis=[0, 1, 0], mass=0, allow_massless=True)
        >>> _ = b.add_body("s", "cy", "revolute", axis=[0, 0, 1], mass=2, com=[0.5, 0, 0], inertia=[1, 1, 1])
        >>> q, dq, v = sp.symbols("x y th"), sp.symbols("dx dy dth"), sp.Symbol("v")
        >>> red = kane_equations(b.build(), [sp.Matrix([[-sp.sin(q[2]), sp.cos(q[2]), 0]])], [0, 2], q=q, dq=dq)
        >>> red.linearize({q[0]: 0, q[1]: 0, q[2]: 0, dq[0]: v, dq[2]: 0}, coordinates=[2])
        (Matrix([[1.5]]), Matrix([[1.0*v]]), Matrix([[0]]))
        """
        nq, nu = self.q.rows, len(self.independent)
        coords = [int(k) for k in coordinates]
        fol = [int(k) for k in follow]
        for k in coords + fol:
            if not 0 <= k < nq:
                raise ValueError(f"coordinates/follow: index {k} is not in 0…{nq - 1}")
        missing = [k for k in coords if k not in self.independent]
        if missing:
            raise ValueError(f"coordinates: the rates of {missing} are not independent speeds {self.independent}")
        if speeds is None:
            speeds = [self.independent.index(k) for k in coords]
        sp_idx = [int(k) for k in speeds]
        if any(not 0 <= k < nu for k in sp_idx):
            raise ValueError(f"speeds: expected indices in 0…{nu - 1} (of u), got {list(speeds)}")
        qe = [C.to_se(s) for s in self.q]
        ue = [C.to_se(s) for s in self.u]
        Ms, fs, Ns = self._rows_se("M"), self._rows_se("f"), self._rows_se("N")
        keep = {qe[k] for k in coords + fol} | {ue[k] for k in sp_idx}
        values = {C.to_se(k): C.to_se(v) for k, v in dict(point).items()}
        exprs = [Ms[i][j] for i in sp_idx for j in sp_idx] + [fs[i][0] for i in sp_idx] \
            + [Ns[d][self.independent.index(c)] for d in fol for c in coords]
        needed = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
        tau = {C.to_se(s) for s in self.tau}
        absent = sorted(str(s) for s in needed - set(values) - keep - tau)
        if absent:
            raise ValueError(f"point: no value for {', '.join(absent)} (give every coordinate, independent speed "
                             "and parameter of the equations)")
        rest = {k: v for k, v in values.items() if k not in keep}
        rest.update({t: C.ZERO for t in tau})
        at = {k: values[k] for k in keep}
        part = lambda e: e.subs(rest)                          # noqa: E731
        n = len(sp_idx)
        M_l = [[part(Ms[i][j]).subs(at) for j in sp_idx] for i in sp_idx]
        fr = [part(fs[i][0]) for i in sp_idx]
        C_l = [[e.diff(ue[j]).subs(at) for j in sp_idx] for e in fr]
        dfol = {(d, c): part(Ns[d][self.independent.index(c)]).subs(at) for d in fol for c in coords}
        K_l = []
        for e in fr:
            grads = {k: e.diff(qe[k]).subs(at) for k in coords + fol}
            K_l.append([grads[c] + sum((grads[d] * dfol[(d, c)] for d in fol), C.ZERO) for c in coords])
        syms = self._symbols + sorted(set().union(*(sp.sympify(v).free_symbols for v in dict(point).values()),
                                                  set()), key=str)
        conv = C.Converter(syms)
        mat = lambda rows, c: sp.Matrix(n, c, [conv(x) for r in rows for x in r]) if n and c \
            else sp.zeros(n, c)                                # noqa: E731
        return mat(M_l, n), mat(C_l, n), mat(K_l, len(coords))


def _num(x):
    """A model number in SymEngine: an integral float as an Integer (so 0·x vanishes), else itself."""
    if isinstance(x, (int, float, np.integer, np.floating)):
        xf = float(x)
        return se.Integer(int(xf)) if xf.is_integer() else se.RealDouble(xf)
    return C.to_se(x)


def _rolling_rows_se(model, contact, kin):
    """The rows of a RollingContact as lists of SymEngine expressions (see :func:`rolling_rows`)."""
    qe, nq = kin["qe"], kin["nq"]
    i = model.body_index(contact.body)
    R = kin["R"][i]
    centre = C.add(kin["p"][i], C.mv(R, [_num(x) for x in contact.center]))
    n = [_num(x) for x in contact.normal]
    a = C.mv(R, [_num(x) for x in contact.axis])
    s = C.dot(a, n)
    root = se.sqrt(1 - s ** 2)
    r = _num(contact.radius)
    rd = [r * (s * a[k] - n[k]) / root for k in range(3)]    # centre → contact point
    Jc = C.jac_of_vec(centre, qe)
    Jw = C.matvec_cols(R, kin["T_omega"][i], nq)             # world ω per q̇
    rxJ = C.cross_cols(rd, Jw, nq)
    JP = [[Jc[k][j] - rxJ[k][j] for j in range(nq)] for k in range(3)]
    rows = []
    if contact.holonomic:
        h = C.dot(centre, n) - r * root
        rows.append([h.diff(qk) for qk in qe])
    for t in contact.tangents.tolist():
        t = [_num(x) for x in t]
        rows.append([t[0] * JP[0][j] + t[1] * JP[1][j] + t[2] * JP[2][j] for j in range(nq)])
    return rows


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
        from ``model`` and ``q`` when None). Only its ``q`` is read: the rows are written from
        the SymEngine kinematics.
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
    from .tmt.from_model import _tree_kinematics_se

    if not isinstance(contact, RollingContact):
        raise TypeError(f"contact: expected a RollingContact, got {type(contact).__name__}")
    if kinematics is not None and q is None:
        q = kinematics["q"]
    kin = _tree_kinematics_se(model, q)
    rows = _rolling_rows_se(model, contact, kin)
    conv = C.Converter(list(kin["q"]) + list(kin["params"]))
    return sp.Matrix(len(rows), kin["nq"], [conv(e) for r in rows for e in r])


class _Elimination:
    """Gauss–Jordan elimination of a square SymEngine block, recorded so that it can be replayed on
    any right-hand side (the bicycle solves with A_I first, then with Ȧ q̇, which needs N).

    Pivots are chosen on the block's numeric value at a sample state (largest magnitude in the
    column, among rows not yet used), carried along in NumPy, so a pivot that is not structurally
    zero but vanishes at generic states is never divided by."""

    def __init__(self, A, A_num):
        n = len(A)
        A = [list(r) for r in A]
        W = np.array(A_num, dtype=float)
        self.steps, self.order = [], []
        free = list(range(n))
        for k in range(n):
            p = max(free, key=lambda r: abs(W[r, k]))
            free.remove(p)
            piv = A[p][k]
            mult = {}
            for r in range(n):
                if r == p or A[r][k] == 0:
                    continue
                m = A[r][k] / piv
                mult[r] = m
                A[r] = [A[r][j] - m * A[p][j] if A[p][j] != 0 else A[r][j] for j in range(n)]
                A[r][k] = C.ZERO
                W[r] = W[r] - (W[r, k] / W[p, k]) * W[p]
            self.steps.append((p, mult))
            self.order.append((p, piv))

    def solve(self, B):
        """X with A X = B (B: list of rows, one per row of A)."""
        B = [list(r) for r in B]
        for p, mult in self.steps:
            for r, m in mult.items():
                B[r] = [B[r][j] - m * B[p][j] if B[p][j] != 0 else B[r][j] for j in range(len(B[r]))]
        return [[e / piv for e in B[p]] for p, piv in self.order]


def _sample_points(symbols, count, seed=0):
    """Random values for ``symbols`` (SymEngine), each uniform in ±0.9: generic states (and
    parameter values) of a mechanism, away from the special angles 0 and ±π/2."""
    rng = np.random.default_rng(seed)
    return [{s: float(rng.uniform(-0.9, 0.9)) for s in symbols} for _ in range(count)]


def _evaluate_rows(rows, values):
    """A list of rows of SymEngine expressions at ``values`` as a float array."""
    flat = [e for r in rows for e in r]
    if not flat:
        return np.zeros((len(rows), 0))
    f = se.Lambdify(list(values), flat, real=True)
    return np.asarray(f(list(values.values())), dtype=float).reshape(len(rows), -1)


def kane_equations(source, constraints, independent, *, method="rnea", q=None, dq=None) -> ReducedEquations:
    """Kane's equations of a tree with velocity constraints, by projection onto independent speeds.

    Runs in SymEngine from the tree's equations to the result (module docstring); A_D's
    invertibility is tested numerically at random states, and the dependent speeds and the
    acceleration terms come from one Gauss–Jordan elimination of A_D replayed on A_I and on
    Ȧ q̇ (A Ṅ u = −Ȧ N u, so N is never differentiated).

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
        leave as many dependent speeds as rows; rows whose dependent block is singular (at every
        sampled state).
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
    qe, dqe = [C.to_se(s) for s in qs], [C.to_se(s) for s in dqs]
    parts = []
    kin = None
    for c in constraints:
        if isinstance(c, RollingContact):
            if model is None:
                raise TypeError("constraints: a RollingContact needs the model (pass the Model as source)")
            if kin is None:
                from .tmt.from_model import _tree_kinematics_se
                kin = _tree_kinematics_se(model, qs)
            parts.extend(_rolling_rows_se(model, c, kin))
        elif isinstance(c, (sp.MatrixBase,)):
            if c.cols != nq:
                raise ValueError(f"constraints: a row matrix has {c.cols} columns, expected {nq} (one per q̇)")
            parts.extend([[C.to_se(e) for e in c.row(i)] for i in range(c.rows)])
        else:
            raise TypeError(f"constraints: expected RollingContact descriptions or SymPy row matrices, got "
                            f"{type(c).__name__}")
    A = parts
    ind = [int(k) for k in independent]
    if len(set(ind)) != len(ind) or any(not 0 <= k < nq for k in ind):
        raise ValueError(f"independent: expected distinct indices in 0…{nq - 1}, got {list(independent)}")
    dep = [k for k in range(nq) if k not in ind]
    nr = len(A)
    if len(dep) != nr:
        raise ValueError(f"independent: {len(ind)} independent speeds leave {len(dep)} dependent ones, but there "
                         f"are {nr} constraint rows")
    AD = [[A[r][k] for k in dep] for r in range(nr)]
    AI = [[A[r][k] for k in ind] for r in range(nr)]
    ND = []
    elim = None
    if nr:
        # A_D's smallest singular value against the largest of the whole rows A (a 1×1 block has
        # nothing else to compare with) at a few random states; the best state picks the pivots
        syms = sorted(set().union(*(e.free_symbols for r in A for e in r)), key=str)
        best = None
        for point in _sample_points(syms, _SAMPLES):
            W = _evaluate_rows(A, point) if syms else np.array([[float(e) for e in r] for r in A])
            WD = W[:, dep]
            top = np.linalg.svd(W, compute_uv=False)[0]
            ratio = np.linalg.svd(WD, compute_uv=False)[-1] / top if top > 0 else 0.0
            if best is None or ratio > best[0]:
                best = (ratio, WD)
        if not best[0] > _RANK_TOL:
            raise ValueError(f"independent: the rows do not determine the dependent speeds {dep} (A_D is singular "
                             f"at {_SAMPLES} random states)")
        elim = _Elimination(AD, best[1])
        ND = [[-e for e in r] for r in elim.solve(AI)]
    # q̇ = N u
    N = [[C.ZERO] * len(ind) for _ in range(nq)]
    for col, k in enumerate(ind):
        N[k][col] = C.ONE
    for row, k in enumerate(dep):
        N[k] = ND[row]
    u = [dqe[k] for k in ind]
    v = [sum((N[k][c] * u[c] for c in range(len(ind)) if N[k][c] != 0), C.ZERO) for k in range(nq)]
    # Ṅ u: zero on the independent rows; A_D (Ṅ u)_D = −Ȧ q̇ at q̇ = N u (from d/dt (A N) = 0)
    acc = [C.ZERO] * nq
    if nr:
        # Ȧ q̇ = Σ_j Σ_k ∂A_rk/∂q_j q̇_j q̇_k, q̇ held fixed (at q̇ = N u after differentiating)
        Aw = [sum((A[r][k].diff(qe[j]) * v[j] * v[k] for j in range(nq) for k in range(nq)
                   if A[r][k] != 0 and v[j] != 0 and v[k] != 0), C.ZERO) for r in range(nr)]
        sol = elim.solve([[e] for e in Aw])
        for row, k in enumerate(dep):
            acc[k] = -sol[row][0]
    # the tree's equations in SymEngine (kept by the rnea derivation; converted otherwise)
    se_exprs = getattr(eom, "__dict__", {}).get("_se_exprs")
    if se_exprs is not None:
        Mf, b, g = se_exprs["M"], se_exprs["b"], se_exprs["g"]
        Mt = [Mf[i * nq:(i + 1) * nq] for i in range(nq)]
    else:
        Mt = [[C.to_se(e) for e in eom.M.row(i)] for i in range(nq)]
        b, g = [C.to_se(e) for e in eom.b], [C.to_se(e) for e in eom.g]
    on = {dqe[k]: v[k] for k in dep}
    h = [(b[i].subs(on) if on else b[i]) + g[i] for i in range(nq)]
    for i in range(nq):
        h[i] = h[i] + sum((Mt[i][k] * acc[k] for k in range(nq) if acc[k] != 0 and Mt[i][k] != 0), C.ZERO)
    nu = len(ind)
    NT = [[N[k][c] for k in range(nq)] for c in range(nu)]
    MN = [[sum((Mt[i][k] * N[k][c] for k in range(nq) if N[k][c] != 0 and Mt[i][k] != 0), C.ZERO)
           for c in range(nu)] for i in range(nq)]
    M_r = [[sum((NT[r][i] * MN[i][c] for i in range(nq) if NT[r][i] != 0), C.ZERO) for c in range(nu)]
           for r in range(nu)]
    f_r = [[sum((NT[r][i] * h[i] for i in range(nq) if NT[r][i] != 0), C.ZERO)] for r in range(nu)]
    S = eom.S
    ST = [[C.to_se(S[j, i]) for j in range(S.rows)] for i in range(nq)]
    Q = [[sum((NT[r][i] * ST[i][j] for i in range(nq) if NT[r][i] != 0 and ST[i][j] != 0), C.ZERO)
          for j in range(S.rows)] for r in range(nu)]
    return ReducedEquations(q=qs, dq=dqs, u=sp.Matrix([dqs[k] for k in ind]), independent=ind, N=N, M=M_r,
                            f=f_r, Q=Q, tau=eom.tau, rows=A, symbols=list(eom.params))
