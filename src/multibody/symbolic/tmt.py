"""TMT method: the linear vector form of Lagrange's equations with constraints and collisions.

Source: Sadati, Naghibi, Naraghi, "An Automatic Algorithm to Derive Linear Vector Form of
Lagrangian Equation of Motion with Collision and Constraint", IRIS 2015 (seed ``002_…``).
Equation numbers below are the paper's.

The system is described by the absolute coordinates of its bodies, all functions of the
generalized coordinates ``q``::

    x(q) = [r_1, θ_1, r_2, θ_2, …]        planar bodies: r_i ∈ R², θ_i the absolute angle
    ẋ    = [ṙ_1, ω_1, ṙ_2, ω_2, …]        3-D bodies: r_i ∈ R³, ω_i the angular velocity (eq. 2)

and the method is, step by step (the boxed quantities of the paper):

    T = ∂x/∂q                          (3)   ẋ = T q̇, with the rows of ω_i = T_ωi q̇ (eq. 2)
    D = ∂(T q̇)/∂q                      (3)   ẍ = T q̈ + D q̇
    M = diag[m_i, m_i, (m_i,) I_i, …]        the "diagonal" mass matrix of the bodies
    Tᵀ M T q̈ = Tᵀ (f − M D q̇) + f_c/nc + f_k + f_v                              (4)

    c(q) = 0  →  c̈ = T_cn q̈ + D_cn q̇ = 0,   T_cn = ∂c/∂q,  D_cn = ∂(T_cn q̇)/∂q   (5)

    [ M̄     −T_cnᵀ ] [ q̈ ]   [     d     ]
    [ T_cn    0    ] [ λ  ] = [ −D_cn q̇  ],   M̄ = TᵀMT,   d = Tᵀ(f_g − M D q̇) + f_c/nc + f_k + f_v  (6)

    [ M̄     −T_cnᵀ  −T_ρᵀ ] [ q̇*  ]   [ M̄     ]
    [ T_cn    0      0    ] [ ρ_λ ] = [ 0     ] q̇,     T_ρ q̇* = E T_ρ q̇    (8)          (9)
    [ T_ρ     0      0    ] [ ρ   ]   [ E T_ρ ]

Notes on the paper's text (each checked by the tests):

* Eq. (6) prints ``D_cn q̇`` on the right-hand side; eq. (5) gives ``T_cn q̈ = −D_cn q̇``, which
  is what is built here (the tests check c̈ = 0).
* Springs and dampers are printed with ``(T_s1 − T_s1)``; the generalized forces built here are
  ``f_k = −k(|l| − l0) (T_s2 − T_s1)ᵀ l̂`` (a stretched spring pulls its ends together) and
  ``f_v = −c (T_v2 − T_v1)ᵀ l̇`` (a damper takes energy out), ``f_k = −k(θ − θ0) ∂θ/∂q`` for
  rotational springs.
* 3-D bodies: the paper's M = diag[m, m, m, I] multiplies the angular part of ẍ. With the
  angular velocity taken in body coordinates (ω_B, ``skew(ω_B) = Rᵀ (∂R/∂q q̇)``, the
  body-frame form of eq. 2) the inertia block I_B is constant, and Euler's equation adds the
  gyroscopic force ``−ω_B × I_B ω_B`` to f. It vanishes for planar motion, where eq. (4) is
  exactly the paper's.
* Eq. (8) is used literally: ``T_ρ q̇* = E T_ρ q̇``. Newton's restitution law with coefficient
  e along a unit normal n (and no tangential slip) is ``E = −e n nᵀ``; see
  :func:`newton_restitution`. A contact may also be restricted to chosen directions (rows), e.g.
  only its normal, for a frictionless impact.

Result convention (shared with proNEu, :class:`EquationsOfMotion`)::

    M q̈ + b + g = Sᵀ τ,     M = TᵀMT,
    b = Tᵀ (M D q̇ + f_gyro) − f_v − f_c/nc      (convective, gyroscopic, dampers, applied forces)
    g = −Tᵀ f_g − f_k                            (gravity and springs: g = ∂V/∂q)

``extra`` keys (all SymPy):
    "T", "Mdiag", "D" (matrix D of eq. 3), "Dqd" (D q̇), "x" (stacked CoM positions; angles for
    planar bodies), "b_convective", "g_gravity", "f_springs", "f_dampers", "f_forces",
    "kinetic_energy", "potential_energy",
    "constraint" (c), "constraint_jacobian" (T_cn), "constraint_D" (D_cn),
    "constraint_convective" (γ with c̈ = T_cn q̈ + γ; γ = D_cn q̇ for time-free constraints),
    "augmented_system" (dict: "A", "rhs" of eq. 6, unknowns [q̈; λ]),
    "contact_jacobian" (T_ρ), "contact_D" (D_ρ), "contact_points",
    "impact_map" (dict: "A", "B", "E" of eq. 9, unknowns [q̇*; ρ_λ; ρ], B multiplies q̇),
    "time" (the time symbol or None).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import sympy as sp

try:  # SymEngine differentiates and multiplies ~100× faster than SymPy; results come back as SymPy
    import symengine as se
except ImportError:  # pragma: no cover - symengine is a declared dependency
    se = None

from .eom import EquationsOfMotion, register_method

__all__ = [
    "TMTBody",
    "PointForce",
    "LinearSpring",
    "RotationalSpring",
    "LinearDamper",
    "RotationalDamper",
    "Constraint",
    "Contact",
    "TMTSystem",
    "derive_tmt",
    "newton_restitution",
    "skew",
    "vee",
    "tree_kinematics",
    "joint_chain",
    "tmt_system_from_model",
    "jacobian",
]


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------
def skew(v) -> sp.Matrix:
    """Cross-product matrix: skew(v) w = v × w."""
    v = sp.Matrix(v)
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def vee(S) -> sp.Matrix:
    """Inverse of :func:`skew` (takes the skew-symmetric part of S)."""
    S = sp.Matrix(S)
    return sp.Matrix([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]]) / 2


def _col(x, what: str) -> sp.Matrix:
    """A column sympy.Matrix from a scalar, sequence or matrix."""
    try:
        if isinstance(x, (sp.MatrixBase, np.ndarray, list, tuple)):
            m = sp.Matrix(x)
        else:
            m = sp.Matrix([sp.sympify(x)])
    except (sp.SympifyError, TypeError, ValueError) as exc:
        raise ValueError(f"{what}: cannot read {x!r} as a vector ({exc})") from None
    if m.shape[1] != 1:
        if m.shape[0] == 1:
            m = m.T
        else:
            raise ValueError(f"{what}: expected a vector, got shape {m.shape}")
    return m


def _restore_symbols(*inputs):
    """SymEngine drops SymPy assumptions (real=True …): map plain symbols back to the originals."""
    back = {}
    for m in inputs:
        for s in _symbols_of(m):
            plain = sp.Symbol(s.name)
            if plain != s:
                back[plain] = s
    return back


def _from_se(Mse, back) -> sp.Matrix:
    out = sp.Matrix(Mse.nrows(), Mse.ncols(), [sp.sympify(e) for e in Mse])
    return out.xreplace(back) if back else out


def matmul(*ms) -> sp.Matrix:
    """Product of SymPy matrices, computed in SymEngine when available, returned as SymPy."""
    ms = [sp.Matrix(m) for m in ms]
    shape = (ms[0].shape[0], ms[-1].shape[1])
    if se is None or 0 in shape or any(0 in m.shape for m in ms):
        out = ms[0]
        for m in ms[1:]:
            out = out * m
        return out if 0 not in shape else sp.zeros(*shape)
    out = se.Matrix(ms[0].tolist())
    for m in ms[1:]:
        out = out * se.Matrix(m.tolist())
    return _from_se(out, _restore_symbols(*ms))


def jacobian(v, x) -> sp.Matrix:
    """∂v/∂x for a column v and symbols x (SymEngine when available), as a SymPy matrix."""
    v = sp.Matrix(v)
    x = list(x)
    if not x or v.shape[0] == 0:
        return sp.zeros(v.shape[0], len(x))
    if se is None:
        return v.jacobian(x)
    J = se.Matrix(v.tolist()).jacobian(se.Matrix(x))
    return _from_se(J, _restore_symbols(v, sp.Matrix(x)))


def _symbols_of(expr) -> set:
    if isinstance(expr, sp.MatrixBase):
        out: set = set()
        for e in expr:
            out |= sp.sympify(e).free_symbols
        return out
    return sp.sympify(expr).free_symbols


def _check_symbols(expr, allowed: set, what: str, kind: str) -> None:
    bad = _symbols_of(expr) - allowed
    if bad:
        names = ", ".join(sorted(str(s) for s in bad))
        raise ValueError(
            f"{what}: contains symbol(s) {names} that are neither {kind} "
            f"(declare model parameters in params=)")


def newton_restitution(e, normal, tangential=0) -> np.ndarray:
    """Restitution matrix E of eq. (8) for Newton's law along a unit ``normal``.

    ``T_ρ q̇* = E T_ρ q̇`` with ``E = −e n nᵀ + t (I − n nᵀ)``: the normal contact velocity is
    reversed and scaled by e, the tangential one multiplied by ``tangential`` (0: no slip).
    """
    n = np.asarray(normal, dtype=float).reshape(-1)
    n = n / np.linalg.norm(n)
    P = np.outer(n, n)
    return -float(e) * P + float(tangential) * (np.eye(n.size) - P)


# --------------------------------------------------------------------------------------------
# input elements (the paper's l_c / J / J_kd input, as Python objects)
# --------------------------------------------------------------------------------------------
@dataclass
class TMTBody:
    """One rigid body of the TMT input.

    mass        m_i
    inertia     planar: the scalar moment of inertia about the CoM; 3-D: the 3×3 inertia about
                the CoM in body coordinates (I_B)
    position    CoM position r_i(q) in the reference frame (2 entries: planar, 3: spatial)
    orientation planar: the absolute angle θ_i(q); 3-D: the rotation matrix R_i(q) = A_IB
                (body coordinates → reference coordinates)
    T_omega     optional 3×n body-frame angular velocity Jacobian (ω_B = T_omega q̇) when it is
                known in a simpler form than eq. (2) gives (e.g. from joint axes)
    """

    mass: Any
    inertia: Any
    position: Any
    orientation: Any = 0
    name: str = ""
    T_omega: Any = None


@dataclass
class PointForce:
    """General force F acting at point r_f(q): generalized force ``T_fᵀ F``, ``T_f = ∂r_f/∂q``.

    ``force`` may depend on q, q̇, time, parameters and actuator symbols (e.g. aerodynamics).
    """

    point: Any
    force: Any
    name: str = ""


@dataclass
class LinearSpring:
    """Linear spring between points r_s1(q), r_s2(q): f_k = −k(|l| − l0)(T_s2 − T_s1)ᵀ l̂."""

    point1: Any
    point2: Any
    stiffness: Any
    rest_length: Any = 0
    name: str = ""


@dataclass
class RotationalSpring:
    """Rotational spring on an angle θ(q): f_k = −k (θ − θ0) ∂θ/∂q, V = ½ k (θ − θ0)²."""

    angle: Any
    stiffness: Any
    rest_angle: Any = 0
    name: str = ""


@dataclass
class LinearDamper:
    """Linear damper between points r_v1(q), r_v2(q): f_v = −c (T_v2 − T_v1)ᵀ l̇, l̇ = (T_v2 − T_v1) q̇."""

    point1: Any
    point2: Any
    damping: Any
    name: str = ""


@dataclass
class RotationalDamper:
    """Rotational damper on an angle θ(q): f_v = −c θ̇ ∂θ/∂q."""

    angle: Any
    damping: Any
    name: str = ""


@dataclass
class Constraint:
    """Position constraint(s) c(q[, t]) = 0 (a scalar or a vector)."""

    expr: Any
    name: str = ""


@dataclass
class Contact:
    """Contact (collision) point x_ρ(q) for the impact map (9).

    ``directions`` (k × dim rows) restricts the impulse to chosen directions, e.g. ``[[0, 1]]``
    for a frictionless impact on a floor with normal y; default: all Cartesian directions.
    """

    point: Any
    directions: Any = None
    name: str = ""


# --------------------------------------------------------------------------------------------
# the system
# --------------------------------------------------------------------------------------------
class TMTSystem:
    """A mechanism in the TMT input form; :meth:`equations` derives eqs. (3)–(9).

    Parameters
    ----------
    q, dq : generalized coordinates and rates (sequences of symbols, same length)
    bodies : list of :class:`TMTBody` (all planar or all 3-D)
    params : the model parameters (symbols) that expressions may contain besides q, q̇, τ, t
    gravity : gravity vector (2 or 3 entries; default 0)
    forces, springs, dampers, constraints, contacts : lists of the element classes above
    tau, S : actuator symbols and selection matrix (f = Sᵀ τ); ``S`` defaults to the identity
             when ``len(tau) == len(q)``
    time : the time symbol, when constraints or forces depend on time
    values : numeric values of the parameters (defaults for the numeric helpers)
    q0, dq0 : an initial state (documentation and tests)
    simplify : False, True (``sympy.simplify`` on M, b, g entries) or a callable applied to
               each entry
    """

    def __init__(self, q, dq, bodies, *, params=(), gravity=None, forces=(), springs=(),
                 dampers=(), constraints=(), contacts=(), tau=None, S=None, time=None,
                 values=None, q0=None, dq0=None, name="", simplify=False):
        self.name = name
        self.q = _col(q, "q") if len(q) else sp.zeros(0, 1)
        self.dq = _col(dq, "dq") if len(dq) else sp.zeros(0, 1)
        n = self.q.shape[0]
        if self.dq.shape[0] != n:
            raise ValueError(f"q has {n} entries but dq has {self.dq.shape[0]}")
        for s in list(self.q) + list(self.dq):
            if not isinstance(s, sp.Symbol):
                raise ValueError(f"generalized coordinates and rates must be symbols, got {s!r}")
        if len(set(self.q) | set(self.dq)) != 2 * n:
            raise ValueError("q and dq must be 2n distinct symbols")
        self.params = tuple(sp.sympify(p) for p in params)
        for p in self.params:
            if not isinstance(p, sp.Symbol):
                raise ValueError(f"params: {p!r} is not a symbol")
            if p in set(self.q) | set(self.dq):
                raise ValueError(f"params: {p} is also a generalized coordinate or rate")
        self.time = time
        if tau is None:
            self.tau = sp.zeros(0, 1)
        else:
            self.tau = _col(tau, "tau") if len(tau) else sp.zeros(0, 1)
        m = self.tau.shape[0]
        if S is None:
            if m == 0:
                self.S = sp.zeros(0, n)
            elif m == n:
                self.S = sp.eye(n)
            else:
                raise ValueError(f"tau has {m} entries, q has {n}: give the {m}×{n} selection matrix S")
        else:
            self.S = sp.Matrix(S)
            if self.S.shape != (m, n):
                raise ValueError(f"S has shape {self.S.shape}, expected ({m}, {n}) for {m} actuators and {n} coordinates")
        if not bodies:
            raise ValueError("bodies: at least one body is needed")
        self.bodies = list(bodies)
        self.forces = list(forces)
        self.springs = list(springs)
        self.dampers = list(dampers)
        self.constraints = list(constraints)
        self.contacts = list(contacts)
        self.values = dict(values or {})
        self.q0 = None if q0 is None else np.asarray(q0, dtype=float)
        self.dq0 = None if dq0 is None else np.asarray(dq0, dtype=float)
        self.simplify = simplify

        # --- dimension and validation ---------------------------------------------------------
        dims = {len(_col(b.position, self._bname(i, b) + " position")) for i, b in enumerate(self.bodies)}
        for i, b in enumerate(self.bodies):
            d = len(_col(b.position, self._bname(i, b) + " position"))
            if d not in (2, 3):
                raise ValueError(f"{self._bname(i, b)}: position must have 2 (planar) or 3 entries, got {d}")
        if len(dims) != 1:
            raise ValueError(f"bodies mix planar and 3-D positions ({sorted(dims)} entries); use one kind")
        self.dim = dims.pop()
        self.planar = self.dim == 2
        if gravity is None:
            self.gravity = sp.zeros(self.dim, 1)
        else:
            self.gravity = _col(gravity, "gravity")
            if self.gravity.shape[0] != self.dim:
                raise ValueError(f"gravity has {self.gravity.shape[0]} entries, bodies have {self.dim}")
        self._validate()
        self._eom: EquationsOfMotion | None = None
        self._numeric: dict = {}

    # -- validation ----------------------------------------------------------------------------
    @staticmethod
    def _bname(i, b) -> str:
        return f"body {i}" + (f" ({b.name!r})" if getattr(b, "name", "") else "")

    @staticmethod
    def _ename(kind, i, e) -> str:
        return f"{kind} {i}" + (f" ({e.name!r})" if getattr(e, "name", "") else "")

    def _validate(self) -> None:
        qs, dqs, ps = set(self.q), set(self.dq), set(self.params)
        taus = set(self.tau)
        ts = {self.time} if self.time is not None else set()
        _check_symbols(self.gravity, ps, "gravity", "parameters")
        for i, b in enumerate(self.bodies):
            nm = self._bname(i, b)
            _check_symbols(_col(b.position, nm), qs | ps, nm + " position", "coordinates q nor parameters")
            _check_symbols(b.mass, ps, nm + " mass", "parameters")
            if self.planar:
                if isinstance(b.orientation, (sp.MatrixBase, np.ndarray, list, tuple)):
                    raise ValueError(f"{nm}: planar bodies take an angle θ(q) as orientation, not a matrix")
                I = sp.sympify(b.inertia)
                if isinstance(I, sp.MatrixBase):
                    raise ValueError(f"{nm}: planar bodies take a scalar inertia (about the CoM)")
                _check_symbols(I, ps, nm + " inertia", "parameters")
                _check_symbols(b.orientation, qs | ps, nm + " orientation", "coordinates q nor parameters")
            else:
                R = sp.Matrix(b.orientation) if not _is_scalar_zero(b.orientation) else sp.eye(3)
                if R.shape != (3, 3):
                    raise ValueError(f"{nm}: orientation must be a 3×3 rotation matrix, got shape {R.shape}")
                _check_symbols(R, qs | ps, nm + " orientation", "coordinates q nor parameters")
                I = sp.Matrix(b.inertia)
                if I.shape != (3, 3):
                    raise ValueError(f"{nm}: inertia must be 3×3 for a 3-D body, got shape {I.shape}")
                _check_symbols(I, ps, nm + " inertia", "parameters")
                if (I - I.T).applyfunc(sp.expand) != sp.zeros(3, 3):
                    raise ValueError(f"{nm}: inertia is not symmetric")
                _check_rotation(R, self.q, self.params, self.values, nm)
                if b.T_omega is not None:
                    To = sp.Matrix(b.T_omega)
                    if To.shape != (3, len(self.q)):
                        raise ValueError(f"{nm}: T_omega must be 3×{len(self.q)}, got {To.shape}")
                    _check_symbols(To, qs | ps, nm + " T_omega", "coordinates q nor parameters")
        for i, f in enumerate(self.forces):
            nm = self._ename("force", i, f)
            p = _col(f.point, nm + " point")
            F = _col(f.force, nm + " force")
            if p.shape[0] != self.dim or F.shape[0] != self.dim:
                raise ValueError(f"{nm}: point and force need {self.dim} entries, got {p.shape[0]} and {F.shape[0]}")
            _check_symbols(p, qs | ps, nm + " point", "coordinates q nor parameters")
            _check_symbols(F, qs | dqs | ps | taus | ts, nm + " force", "coordinates, rates, actuators, time nor parameters")
        for i, s in enumerate(self.springs):
            if isinstance(s, LinearSpring):
                nm = self._ename("linear spring", i, s)
                for p in (s.point1, s.point2):
                    pp = _col(p, nm)
                    if pp.shape[0] != self.dim:
                        raise ValueError(f"{nm}: end points need {self.dim} entries, got {pp.shape[0]}")
                    _check_symbols(pp, qs | ps, nm + " end point", "coordinates q nor parameters")
                _check_symbols(sp.Matrix([s.stiffness, s.rest_length]), ps, nm + " stiffness/rest length", "parameters")
            elif isinstance(s, RotationalSpring):
                nm = self._ename("rotational spring", i, s)
                _check_symbols(s.angle, qs | ps, nm + " angle", "coordinates q nor parameters")
                _check_symbols(sp.Matrix([s.stiffness, s.rest_angle]), ps, nm + " stiffness/rest angle", "parameters")
            else:
                raise ValueError(f"spring {i}: expected LinearSpring or RotationalSpring, got {type(s).__name__}")
        for i, d in enumerate(self.dampers):
            if isinstance(d, LinearDamper):
                nm = self._ename("linear damper", i, d)
                for p in (d.point1, d.point2):
                    pp = _col(p, nm)
                    if pp.shape[0] != self.dim:
                        raise ValueError(f"{nm}: end points need {self.dim} entries, got {pp.shape[0]}")
                    _check_symbols(pp, qs | ps, nm + " end point", "coordinates q nor parameters")
            elif isinstance(d, RotationalDamper):
                nm = self._ename("rotational damper", i, d)
                _check_symbols(d.angle, qs | ps, nm + " angle", "coordinates q nor parameters")
            else:
                raise ValueError(f"damper {i}: expected LinearDamper or RotationalDamper, got {type(d).__name__}")
            _check_symbols(d.damping, ps, nm + " damping", "parameters")
        for i, c in enumerate(self.constraints):
            if not isinstance(c, Constraint):
                c = self.constraints[i] = Constraint(c)
            nm = self._ename("constraint", i, c)
            _check_symbols(_col(c.expr, nm), qs | ps | ts, nm, "coordinates q, time nor parameters")
        for i, c in enumerate(self.contacts):
            if not isinstance(c, Contact):
                c = self.contacts[i] = Contact(c)
            nm = self._ename("contact", i, c)
            p = _col(c.point, nm)
            if p.shape[0] != self.dim:
                raise ValueError(f"{nm}: point needs {self.dim} entries, got {p.shape[0]}")
            _check_symbols(p, qs | ps, nm + " point", "coordinates q nor parameters")
            if c.directions is not None:
                Dm = sp.Matrix(c.directions)
                if Dm.shape[1] != self.dim:
                    raise ValueError(f"{nm}: directions must have {self.dim} columns, got {Dm.shape}")
                _check_symbols(Dm, qs | ps, nm + " directions", "coordinates q nor parameters")
        for k in self.values:
            if k not in set(self.params):
                raise ValueError(f"values: {k} is not one of the parameters")

    # -- derivation ----------------------------------------------------------------------------
    def _jac(self, v: sp.Matrix) -> sp.Matrix:
        return jacobian(v, self.q)

    def equations(self) -> EquationsOfMotion:
        """Derive M, b, g and the constraint/impact terms (eqs. 3–9); cached."""
        if self._eom is not None:
            return self._eom
        q, dq, n = self.q, self.dq, len(self.q)
        rows_T, mass_blocks, f_g_rows, gyro_rows, x_rows = [], [], [], [], []
        kin: dict[str, list] = {"I_r_CoG": [], "A_IB": [], "angle": [], "B_omega": []}
        for i, b in enumerate(self.bodies):
            r = _col(b.position, "")
            m = sp.sympify(b.mass)
            if self.planar:
                th = sp.sympify(b.orientation)
                rows_T += [r, sp.Matrix([th])]          # differentiated below: T = ∂x/∂q
                mass_blocks.append(sp.diag(m, m, sp.sympify(b.inertia)))
                f_g_rows.append(sp.Matrix([m * self.gravity[0], m * self.gravity[1], 0]))
                gyro_rows.append(None)
                x_rows += [r, sp.Matrix([th])]
                kin["I_r_CoG"].append(r)
                kin["angle"].append(th)
            else:
                R = sp.eye(3) if _is_scalar_zero(b.orientation) else sp.Matrix(b.orientation)
                if b.T_omega is not None:
                    To = sp.Matrix(b.T_omega)
                else:
                    # eq. (2) in body coordinates: skew(ω_B) = Rᵀ ∂R/∂q_k q̇_k
                    cols = [vee(R.T * R.diff(qk)) for qk in q]
                    To = sp.Matrix.hstack(*cols) if cols else sp.zeros(3, 0)
                    To = To.applyfunc(_tidy)
                I = sp.Matrix(b.inertia)
                rows_T += [r, To]
                mass_blocks.append(sp.diag(m, m, m, I))
                f_g_rows.append(sp.Matrix.vstack(m * self.gravity, sp.zeros(3, 1)))
                gyro_rows.append((To, I))
                x_rows.append(r)
                kin["I_r_CoG"].append(r)
                kin["A_IB"].append(R)
        Mdiag = sp.diag(*mass_blocks)
        f_g = sp.Matrix.vstack(*f_g_rows)
        # T = ∂x/∂q (positions differentiated, angular rows given), D = ∂(T q̇)/∂q (eq. 3),
        # M̄ = TᵀMT and the convective/gyroscopic force: computed in SymEngine when available
        # and converted to SymPy once, with one memo for the shared subexpressions.
        parts = _tmt_core(rows_T, gyro_rows, Mdiag, f_g, q, dq, self.planar)
        T, D, Dqd, Mbar, b_conv, g_grav, omegas = parts
        kin["B_omega"] = omegas
        # springs (f_k), dampers (f_v), general forces (f_c/nc), eq. (4)
        f_k = sp.zeros(n, 1)
        V = -sum(((sp.sympify(b.mass) * (self.gravity.T * _col(b.position, ""))[0]) for b in self.bodies), sp.S.Zero)
        for s in self.springs:
            if isinstance(s, LinearSpring):
                p1, p2 = _col(s.point1, ""), _col(s.point2, "")
                l = p2 - p1
                L = sp.sqrt((l.T * l)[0])
                Tl = self._jac(p2) - self._jac(p1)
                f_k += -s.stiffness * (L - s.rest_length) * (Tl.T * l) / L
                V += s.stiffness * (L - s.rest_length) ** 2 / 2
            else:
                th = sp.sympify(s.angle)
                f_k += -s.stiffness * (th - s.rest_angle) * self._jac(sp.Matrix([th])).T
                V += s.stiffness * (th - s.rest_angle) ** 2 / 2
        f_v = sp.zeros(n, 1)
        for d in self.dampers:
            if isinstance(d, LinearDamper):
                Tv = self._jac(_col(d.point2, "")) - self._jac(_col(d.point1, ""))
                f_v += -d.damping * Tv.T * (Tv * dq)
            else:
                Jth = self._jac(sp.Matrix([sp.sympify(d.angle)]))
                f_v += -d.damping * Jth.T * (Jth * dq)
        f_ef = sp.zeros(n, 1)
        for f in self.forces:
            f_ef += self._jac(_col(f.point, "")).T * _col(f.force, "")
        b = b_conv - f_v - f_ef
        g = g_grav - f_k
        Tkin = matmul(dq.T, Mbar, dq)[0] / 2

        simp = self.simplify
        if simp:
            fn = sp.simplify if simp is True else simp
            Mbar = Mbar.applyfunc(fn)
            b = b.applyfunc(fn)
            g = g.applyfunc(fn)

        extra: dict[str, Any] = {
            "T": T, "Mdiag": Mdiag, "D": D, "Dqd": Dqd, "x": sp.Matrix.vstack(*x_rows),
            "b_convective": b_conv, "g_gravity": g_grav, "f_springs": f_k, "f_dampers": f_v,
            "f_forces": f_ef, "kinetic_energy": Tkin, "potential_energy": V, "time": self.time,
        }

        # constraints, eq. (5)
        if self.constraints:
            c = sp.Matrix.vstack(*[_col(cc.expr, "") for cc in self.constraints])
        else:
            c = sp.zeros(0, 1)
        Tcn = self._jac(c) if c.shape[0] else sp.zeros(0, n)
        Dcn = self._jac(matmul(Tcn, dq)) if c.shape[0] else sp.zeros(0, n)
        gamma = matmul(Dcn, dq)
        if self.time is not None and c.shape[0]:
            ct = c.diff(self.time)
            gamma = gamma + 2 * matmul(self._jac(ct), dq) + ct.diff(self.time)
        nc = c.shape[0]
        extra.update({"constraint": c, "constraint_jacobian": Tcn, "constraint_D": Dcn,
                      "constraint_convective": gamma})
        # augmented system, eq. (6)
        d_vec = self.S.T * self.tau - b - g
        A6 = sp.Matrix.vstack(sp.Matrix.hstack(Mbar, -Tcn.T), sp.Matrix.hstack(Tcn, sp.zeros(nc, nc)))
        rhs6 = sp.Matrix.vstack(d_vec, -gamma)
        extra["augmented_system"] = {"A": A6, "rhs": rhs6, "unknowns": "[qdd; lambda]"}

        # contacts and impact map, eq. (7)–(9)
        Trho_rows, Drho_rows, points = [], [], []
        for cc in self.contacts:
            p = _col(cc.point, "")
            Jp = self._jac(p)
            if cc.directions is not None:
                Dm = sp.Matrix(cc.directions)
                Jp = Dm * Jp
            Trho_rows.append(Jp)
            Drho_rows.append(self._jac(matmul(Jp, dq)))
            points.append(p)
        if Trho_rows:
            Trho = sp.Matrix.vstack(*Trho_rows)
            Drho = sp.Matrix.vstack(*Drho_rows)
        else:
            Trho, Drho = sp.zeros(0, n), sp.zeros(0, n)
        k = Trho.shape[0]
        E = sp.Matrix(k, k, lambda i, j: sp.Symbol(f"E_{i}_{j}"))
        A9 = sp.Matrix.vstack(
            sp.Matrix.hstack(Mbar, -Tcn.T, -Trho.T),
            sp.Matrix.hstack(Tcn, sp.zeros(nc, nc), sp.zeros(nc, k)),
            sp.Matrix.hstack(Trho, sp.zeros(k, nc), sp.zeros(k, k)),
        )
        B9 = sp.Matrix.vstack(Mbar, sp.zeros(nc, n), E * Trho)
        extra.update({"contact_jacobian": Trho, "contact_D": Drho, "contact_points": points,
                      "impact_map": {"A": A9, "B": B9, "E": E, "unknowns": "[dq_plus; rho_lambda; rho]"}})
        kin["x"] = extra["x"]
        self._eom = EquationsOfMotion(q=q, dq=dq, M=Mbar, b=b, g=g, S=self.S, tau=self.tau,
                                      params=self.params, kinematics=kin, extra=extra)
        return self._eom

    # -- energies ------------------------------------------------------------------------------
    def energy(self):
        """(kinetic, potential) energy expressions; V includes gravity and springs."""
        e = self.equations()
        return e.extra["kinetic_energy"], e.extra["potential_energy"]

    # -- numerics ------------------------------------------------------------------------------
    def _param_values(self, values) -> list[float]:
        vals = dict(self.values)
        by_name = {p.name: p for p in self.params}
        for k, v in (values or {}).items():
            if isinstance(k, str) and k not in by_name:
                raise ValueError(f"values: {k!r} is not one of the parameters ({', '.join(sorted(by_name))})")
            vals[by_name[k] if isinstance(k, str) else k] = v
        missing = [p for p in self.params if p not in vals]
        if missing:
            raise ValueError(f"no numeric value for parameter(s) {', '.join(map(str, missing))}")
        return [float(vals[p]) for p in self.params]

    def _fn(self, key: str, build: Callable[[], sp.Matrix]):
        """Compiled numeric function f(q, dq, tau, t, params) → array (SymEngine Lambdify)."""
        if key not in self._numeric:
            t = self.time if self.time is not None else sp.Symbol("_t_unused")
            args = list(self.q) + list(self.dq) + list(self.tau) + [t] + list(self.params)
            expr = build()
            if se is not None:
                f = se.Lambdify([se.sympify(a) for a in args], se.Matrix(expr.tolist()) if expr.shape[0] and expr.shape[1] else se.Matrix([[0]]), cse=True)
                empty = 0 in expr.shape

                def fn(q, dq, tau, tt, p, _f=f, _empty=empty, _shape=expr.shape):
                    if _empty:
                        return np.zeros(_shape)
                    return np.asarray(_f(np.concatenate([q, dq, tau, [tt], p])), dtype=float).reshape(_shape)
            else:  # pragma: no cover
                f = sp.lambdify(args, expr, modules="numpy", cse=True)

                def fn(q, dq, tau, tt, p, _f=f):
                    return _f(*q, *dq, *tau, tt, *p)
            self._numeric[key] = fn
        return self._numeric[key]

    def _state(self, q, dq, tau):
        n, m = len(self.q), len(self.tau)
        q = np.asarray(q, dtype=float).reshape(-1)
        dq = np.asarray(dq, dtype=float).reshape(-1)
        if q.size != n or dq.size != n:
            raise ValueError(f"q and dq need {n} entries, got {q.size} and {dq.size}")
        tau = np.zeros(m) if tau is None else np.asarray(tau, dtype=float).reshape(-1)
        if tau.size != m:
            raise ValueError(f"tau needs {m} entries, got {tau.size}")
        return q, dq, tau

    def evaluate(self, name: str, values=None, q=None, dq=None, tau=None, t=0.0) -> np.ndarray:
        """Numeric value of ``M``, ``b``, ``g`` or any matrix in ``extra`` at a state."""
        e = self.equations()
        n = len(self.q)
        q = np.zeros(n) if q is None else q
        dq = np.zeros(n) if dq is None else dq
        q, dq, tau = self._state(q, dq, tau)
        expr = {"M": e.M, "b": e.b, "g": e.g}.get(name)
        if expr is None:
            expr = e.extra[name]
        if not isinstance(expr, sp.MatrixBase):
            expr = sp.Matrix([expr])
        f = self._fn("eval:" + name, lambda: expr)
        return np.array(f(q, dq, tau, t, self._param_values(values)), dtype=float).reshape(expr.shape)

    def solve_accelerations(self, values=None, q=None, dq=None, tau=None, t=0.0):
        """Solve the augmented system (6) numerically: returns (q̈, λ)."""
        e = self.equations()
        q, dq, tau = self._state(q, dq, tau)
        A6, rhs6 = e.extra["augmented_system"]["A"], e.extra["augmented_system"]["rhs"]
        fA = self._fn("A6", lambda: A6)
        fr = self._fn("rhs6", lambda: rhs6)
        p = self._param_values(values)
        A = np.array(fA(q, dq, tau, t, p), dtype=float).reshape(A6.shape)
        r = np.array(fr(q, dq, tau, t, p), dtype=float).reshape(-1)
        x = _solve(A, r)
        n = len(self.q)
        return x[:n], x[n:]

    def impact(self, values=None, q=None, dq_minus=None, E=None, active_constraints=None, t=0.0):
        """Impact map (9): returns (q̇*, ρ_λ, ρ) for pre-impact rates ``dq_minus``.

        ``E`` is the k×k matrix of eq. (8) (k = number of contact rows; a scalar is taken as
        ``E·I``). ``active_constraints`` lists the constraint rows that stay closed during the
        impact (default: all); e.g. a walker's trailing foot is released at heel strike.
        """
        e = self.equations()
        q, dq, _ = self._state(q, dq_minus, None)
        n = len(self.q)
        Trho_s = e.extra["contact_jacobian"]
        k = Trho_s.shape[0]
        if k == 0:
            raise ValueError("impact: the system has no contacts")
        Ev = np.asarray(E, dtype=float)
        if Ev.ndim == 0:
            Ev = Ev * np.eye(k)
        if Ev.shape != (k, k):
            raise ValueError(f"impact: E must be {k}×{k} for {k} contact rows, got {Ev.shape}")
        p = self._param_values(values)
        M = np.array(self._fn("M", lambda: e.M)(q, dq, np.zeros(len(self.tau)), t, p), dtype=float).reshape(n, n)
        Trho = np.array(self._fn("Trho", lambda: Trho_s)(q, dq, np.zeros(len(self.tau)), t, p), dtype=float).reshape(k, n)
        Tcn_s = e.extra["constraint_jacobian"]
        nc_all = Tcn_s.shape[0]
        if nc_all:
            Tcn = np.array(self._fn("Tcn", lambda: Tcn_s)(q, dq, np.zeros(len(self.tau)), t, p), dtype=float).reshape(nc_all, n)
        else:
            Tcn = np.zeros((0, n))
        if active_constraints is not None:
            idx = list(active_constraints)
            for i in idx:
                if not 0 <= i < nc_all:
                    raise ValueError(f"impact: constraint row {i} does not exist ({nc_all} rows)")
            Tcn = Tcn[idx]
        nc = Tcn.shape[0]
        A = np.block([
            [M, -Tcn.T, -Trho.T],
            [Tcn, np.zeros((nc, nc)), np.zeros((nc, k))],
            [Trho, np.zeros((k, nc)), np.zeros((k, k))],
        ])
        B = np.vstack([M, np.zeros((nc, n)), Ev @ Trho])
        x = _solve(A, B @ dq)
        return x[:n], x[n:n + nc], x[n + nc:]


def _tmt_core(rows_T, gyro_rows, Mdiag, f_g, q, dq, planar):
    """T, D, D q̇, TᵀMT, Tᵀ(M D q̇ + f_gyro), −Tᵀ f_g and the body angular velocities.

    ``rows_T`` alternates per body: position (differentiated here) and, for 3-D bodies, the given
    angular velocity Jacobian T_ω (planar: the angle, differentiated here).
    """
    n = len(q)
    if se is None:  # pragma: no cover - SymPy fallback
        blocks = []
        for k, blk in enumerate(rows_T):
            blocks.append(blk if (not planar and k % 2 == 1) else blk.jacobian(q))
        T = sp.Matrix.vstack(*blocks)
        gy, om = [], []
        for item in gyro_rows:
            if item is None:
                gy.append(sp.zeros(3, 1))
            else:
                To, I = item
                w = To * dq
                om.append(w)
                gy.append(sp.Matrix.vstack(sp.zeros(3, 1), w.cross(I * w)))
        f_gyro = sp.Matrix.vstack(*gy)
        Tdq = T * dq
        D = Tdq.jacobian(q)
        Dqd = D * dq
        return T, D, Dqd, T.T * Mdiag * T, T.T * (Mdiag * Dqd + f_gyro), -(T.T * f_g), om
    syms = set(q) | set(dq)
    for blk in rows_T:
        syms |= _symbols_of(blk)
    syms |= _symbols_of(Mdiag) | _symbols_of(f_g)
    S = lambda m: se.Matrix(sp.Matrix(m).tolist()) if m.shape[0] * m.shape[1] else se.zeros(*m.shape)  # noqa: E731
    qs = [se.Symbol(v.name) for v in q]
    dqs = se.Matrix([se.Symbol(v.name) for v in dq])
    rows = []
    for k, blk in enumerate(rows_T):
        B = S(blk)
        if planar or k % 2 == 0:
            B = B.jacobian(se.Matrix(qs))
        rows += [[B[r_, c] for c in range(n)] for r_ in range(B.nrows())]
    T = se.Matrix(rows)
    gy, om = [], []
    for item in gyro_rows:
        if item is None:
            gy += [0, 0, 0]
        else:
            To, I = S(item[0]), S(item[1])
            w = To * dqs
            om.append(w)
            Iw = I * w
            gy += [0, 0, 0, w[1] * Iw[2] - w[2] * Iw[1], w[2] * Iw[0] - w[0] * Iw[2], w[0] * Iw[1] - w[1] * Iw[0]]
    f_gyro = se.Matrix(gy)
    Md = S(Mdiag)
    Tdq = T * dqs
    D = Tdq.jacobian(se.Matrix(qs))
    Dqd = D * dqs
    Mbar = T.T * Md * T
    b_conv = T.T * (Md * Dqd + f_gyro)
    g_grav = -(T.T * S(f_g))
    conv = _converter(syms)
    out = lambda m: sp.Matrix(m.nrows(), m.ncols(), [conv(e) for e in m])  # noqa: E731
    return (out(T), out(D), out(Dqd), out(Mbar), out(b_conv), out(g_grav), [out(w) for w in om])


def _converter(symbols):
    """SymEngine → SymPy converter giving back the caller's symbols (memoised when possible)."""
    try:
        from ._core import Converter
        return Converter(symbols)
    except ImportError:  # pragma: no cover
        back = {sp.Symbol(s_.name): s_ for s_ in symbols}
        return lambda e: sp.sympify(e).xreplace(back)


def _solve(A: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Solve A x = r; with redundant constraint rows (singular A) the least-squares solution."""
    try:
        return np.linalg.solve(A, r)
    except np.linalg.LinAlgError:
        x, *_ = np.linalg.lstsq(A, r, rcond=None)
        if np.linalg.norm(A @ x - r) > 1e-8 * (1 + np.linalg.norm(r)):
            raise ValueError("the augmented system is inconsistent (constraints incompatible)") from None
        return x


def _is_scalar_zero(x) -> bool:
    if isinstance(x, (sp.MatrixBase, np.ndarray, list, tuple)):
        return False
    return sp.sympify(x) == 0


def _tidy(e):
    """Cheap clean-up of angular-velocity entries (sin² + cos² = 1 where it is visible)."""
    e = sp.expand(e)
    if e.has(sp.sin, sp.cos) and sp.count_ops(e) < 400:
        e = sp.trigsimp(e)
    return e


def _check_rotation(R: sp.Matrix, q, params, values, name: str, trials: int = 3) -> None:
    """Numerically check RᵀR = I and det R = 1 at random q and parameter values."""
    syms = sorted(_symbols_of(R), key=str)
    if not syms:
        Rn = np.array(R.evalf(), dtype=float)
        _check_rot_numeric(Rn, name)
        return
    f = sp.lambdify(syms, R, modules="numpy")
    rng = np.random.default_rng(0)
    for _ in range(trials):
        vals = [float(values[s]) if s in values else rng.uniform(0.3, 1.7) for s in syms]
        _check_rot_numeric(np.array(f(*vals), dtype=float), name)


def _check_rot_numeric(Rn: np.ndarray, name: str) -> None:
    if not np.allclose(Rn.T @ Rn, np.eye(3), atol=1e-9) or abs(np.linalg.det(Rn) - 1) > 1e-9:
        raise ValueError(f"{name}: orientation is not a rotation matrix (RᵀR ≠ I or det R ≠ 1)")


# --------------------------------------------------------------------------------------------
# the paper's joint description (cube J): consecutive rotations and translations
# --------------------------------------------------------------------------------------------
def joint_chain(steps, q, start=None):
    """Frames along a chain of elementary motions, as the paper's cube J describes a joint.

    ``steps`` is a sequence of ``("t", v)`` (translate by v in the current frame),
    ``("x" | "y" | "z", θ)`` (rotate about the current frame's axis by θ, an expression of q or a
    constant) or ``("R", C)`` (a constant rotation). This is eq. (1): Γ_Ri = Π Γ_Rfi with
    post-multiplied rotations. ``start`` is a previous result to continue from.

    Returns ``(R, p, T_omega)``: the rotation (frame → reference), the origin, and the body-frame
    angular velocity Jacobian (ω_B = T_omega q̇), propagated step by step
    (ω_new = R_stepᵀ ω_old + a θ̇), which is eq. (2) without differentiating R.
    """
    q = sp.Matrix(list(q))
    n = len(q)
    if start is None:
        R, p, Tw = sp.eye(3), sp.zeros(3, 1), sp.zeros(3, n)
    else:
        R, p, Tw = (sp.Matrix(x) for x in start)
    axes = {"x": sp.Matrix([1, 0, 0]), "y": sp.Matrix([0, 1, 0]), "z": sp.Matrix([0, 0, 1])}
    for k, step in enumerate(steps):
        try:
            kind, val = step
        except (TypeError, ValueError):
            raise ValueError(f"joint_chain step {k}: expected (kind, value), got {step!r}") from None
        if kind == "t":
            v = _col(val, f"joint_chain step {k}")
            if v.shape[0] != 3:
                raise ValueError(f"joint_chain step {k}: translation needs 3 entries")
            p = p + R * v
        elif kind in axes:
            th = sp.sympify(val)
            Rs = _axis_rotation(axes[kind], th)
            R = R * Rs
            dth = sp.Matrix([th]).jacobian(q) if n else sp.zeros(1, 0)
            Tw = Rs.T * Tw + axes[kind] * dth
        elif kind == "R":
            C = sp.Matrix(val)
            if C.shape != (3, 3):
                raise ValueError(f"joint_chain step {k}: rotation needs a 3×3 matrix")
            R = R * C
            Tw = C.T * Tw
        else:
            raise ValueError(f"joint_chain step {k}: unknown kind {kind!r} (use 't', 'x', 'y', 'z', 'R')")
    return R.applyfunc(sp.expand), p.applyfunc(sp.expand), Tw.applyfunc(sp.expand)


# --------------------------------------------------------------------------------------------
# from an array-based Model
# --------------------------------------------------------------------------------------------
_FIXED, _REVOLUTE, _PRISMATIC, _HELICAL, _SPHERICAL, _FREE, _PLANAR = range(7)


def _axis_rotation(a: sp.Matrix, th) -> sp.Matrix:
    """Rotation by angle th about unit axis a (Rodrigues); exact for coordinate axes."""
    a = sp.Matrix(a)
    if list(a) == [1, 0, 0]:
        return sp.Matrix([[1, 0, 0], [0, sp.cos(th), -sp.sin(th)], [0, sp.sin(th), sp.cos(th)]])
    if list(a) == [0, 1, 0]:
        return sp.Matrix([[sp.cos(th), 0, sp.sin(th)], [0, 1, 0], [-sp.sin(th), 0, sp.cos(th)]])
    if list(a) == [0, 0, 1]:
        return sp.Matrix([[sp.cos(th), -sp.sin(th), 0], [sp.sin(th), sp.cos(th), 0], [0, 0, 1]])
    K = skew(a)
    return sp.eye(3) + sp.sin(th) * K + (1 - sp.cos(th)) * K * K


def _sym(x):
    """Model array entry → SymPy (floats that are integers become Integers)."""
    if isinstance(x, (float, np.floating)) and float(x).is_integer():
        return sp.Integer(int(x))
    return sp.sympify(x)


def _symmat(a, shape=None) -> sp.Matrix:
    arr = np.asarray(a, dtype=object)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"expected shape {shape}, got {arr.shape}")
    if arr.ndim == 1:
        return sp.Matrix([_sym(v) for v in arr])
    return sp.Matrix(arr.shape[0], arr.shape[1], [_sym(v) for v in arr.reshape(-1)])


def tree_kinematics(model, q=None):
    """Per-body kinematics of a Model (revolute/prismatic/helical/fixed joints), symbolically.

    Returns a dict with lists over bodies: ``R`` (A_IB), ``p`` (body-frame origin), ``r_com``
    (CoM position), ``T_omega`` (body-frame angular velocity Jacobian, 3×nq, from the joint
    axes: ω_B,i = Σ_j (R_jᵀ R_i)ᵀ a_j q̇_j over the rotating joints j on the path to i), and
    ``q``, ``qindex`` (coordinate of each body's joint, −1 for fixed), ``params``.
    """
    nb = len(model.parent)
    jtype = [int(t) for t in np.asarray(model.jtype).reshape(-1)]
    parent = [int(p) for p in np.asarray(model.parent).reshape(-1)]
    names = list(getattr(model, "body_names", None) or [f"body{i}" for i in range(nb)])
    for i in range(nb):
        nm = f"body {i} ({names[i]!r})"
        if jtype[i] in (_SPHERICAL, _FREE):
            raise ValueError(f"{nm}: joint type {'SPHERICAL' if jtype[i] == _SPHERICAL else 'FREE'} is not "
                             "supported by the TMT/Lagrange derivation; describe the rotation with "
                             "Euler-angle coordinates (a chain of revolute joints)")
        if jtype[i] not in (_FIXED, _REVOLUTE, _PRISMATIC, _HELICAL):
            raise ValueError(f"{nm}: joint type {jtype[i]} is not supported (revolute, prismatic, helical, fixed)")
        if not -1 <= parent[i] < i:
            raise ValueError(f"{nm}: parent {parent[i]} does not exist or is not earlier in the tree")
    qindex, k = [], 0
    for i in range(nb):
        if jtype[i] == _FIXED:
            qindex.append(-1)
        else:
            qindex.append(k)
            k += 1
    nq = k
    if hasattr(model, "nq") and int(model.nq) != nq:
        raise ValueError(f"model.nq = {model.nq} but the joints have {nq} coordinates")
    if q is None:
        q = sp.Matrix(sp.symbols(f"q0:{nq}")) if nq else sp.zeros(0, 1)
    else:
        q = sp.Matrix(list(q))
        if len(q) != nq:
            raise ValueError(f"q has {len(q)} entries, the model has nq = {nq}")
    R, p, rc, Tw = [], [], [], []
    # Rotations are kept as factor lists [("C", A) | ("A", axis, angle)]; consecutive rotations
    # about the same axis merge (Rz(q1)·Rz(q2) = Rz(q1 + q2)), so planar chains give the compact
    # cos(q1 + q2) form of DP_EOM instead of nested products. Products run in SymEngine when
    # available and are converted to SymPy once per result.
    if se is not None:
        M_ = lambda m: se.Matrix(sp.Matrix(m).tolist())  # noqa: E731
        from .tree import model_parameters

        back = _restore_symbols(q, sp.Matrix(list(model_parameters(model)) or [0]))
        out = lambda m: _from_se(m, back)  # noqa: E731
    else:  # pragma: no cover
        M_ = sp.Matrix  # noqa: E731
        out = lambda m: m  # noqa: E731
    I3 = sp.eye(3)

    def merge(factors, new):
        f = list(factors)
        for fac in new:
            if fac[0] == "A" and f and f[-1][0] == "A" and f[-1][1] == fac[1]:
                f[-1] = ("A", fac[1], f[-1][2] + fac[2])
            else:
                f.append(fac)
        return f

    cache: dict = {}

    def evaluate(factors):
        key = tuple((fac[0], fac[1], fac[2]) if fac[0] == "A" else ("C", tuple(fac[1])) for fac in factors)
        if key not in cache:
            m = M_(I3)
            for fac in factors:
                m = m * M_(_axis_rotation(sp.Matrix(fac[1]), fac[2]) if fac[0] == "A" else fac[1])
            cache[key] = m
        return cache[key]

    Rf: list[list] = []          # per body: factors of R_i
    chain_rel: list[list] = []   # per body: (coordinate index, axis, factors of R_jᵀ R_i)
    pse = []
    for i in range(nb):
        a = _symmat(model.jaxis[i], (3,))
        A_PJ = _symmat(model.tree_rotation[i], (3, 3))
        r_PJ = M_(_symmat(model.tree_translation[i], (3,)))
        qi = q[qindex[i]] if qindex[i] >= 0 else 0
        if jtype[i] == _PRISMATIC:
            tJ = a * qi
        elif jtype[i] == _HELICAL:
            tJ = a * (_sym(model.jpitch[i]) * qi)
        else:
            tJ = sp.zeros(3, 1)
        X = [] if A_PJ == I3 else [("C", A_PJ)]
        if jtype[i] in (_REVOLUTE, _HELICAL):
            X = X + [("A", tuple(a), qi)]
        t_in_parent = r_PJ + M_(A_PJ) * M_(tJ)
        if parent[i] < 0:
            Rf.append(merge([], X))
            pse.append(t_in_parent)
            rel = []
        else:
            Rf.append(merge(Rf[parent[i]], X))
            pse.append(pse[parent[i]] + evaluate(Rf[parent[i]]) * t_in_parent)
            rel = [(j, aj, merge(F, X)) for (j, aj, F) in chain_rel[parent[i]]]
        if jtype[i] in (_REVOLUTE, _HELICAL):
            rel = rel + [(qindex[i], a, [])]
        chain_rel.append(rel)
        Ri = evaluate(Rf[i])
        R.append(out(Ri))
        p.append(out(pse[i]))
        rc.append(out(pse[i] + Ri * M_(_symmat(model.com[i], (3,)))))
        cols = {}
        for (j, aj, F) in rel:
            v = evaluate(F).T * M_(aj)
            cols[j] = v if j not in cols else cols[j] + v
        T = sp.zeros(3, nq)
        for j, v in cols.items():
            T[:, j] = out(v)
        Tw.append(T)
    params = set()
    for arr in (model.mass, model.com, model.inertia_com, model.gravity, model.jaxis, model.jpitch,
                model.tree_rotation, model.tree_translation):
        for v in np.asarray(arr, dtype=object).reshape(-1):
            params |= sp.sympify(v).free_symbols
    return {"R": R, "p": p, "r_com": rc, "T_omega": Tw, "q": q, "qindex": qindex,
            "params": tuple(sorted(params, key=str)), "names": names, "nq": nq}


def _model_actuation(nq, tau, S, actuated):
    """tau symbols and S (m×nq) for a Model: all joints actuated unless ``actuated``/``S`` say otherwise."""
    if actuated is not None and S is None:
        idx = [int(i) for i in actuated]
        for i in idx:
            if not 0 <= i < nq:
                raise ValueError(f"actuated: dof {i} does not exist (nq = {nq})")
        S = sp.zeros(len(idx), nq)
        for r, i in enumerate(idx):
            S[r, i] = 1
    m = nq if S is None else sp.Matrix(S).shape[0]
    tau = sp.Matrix(sp.symbols(f"tau0:{m}")) if tau is None else sp.Matrix(list(tau))
    if S is None:
        if len(tau) != nq:
            raise ValueError(f"tau has {len(tau)} entries, the model has nq = {nq}: give S or actuated=")
        S = sp.eye(nq)
    S = sp.Matrix(S)
    if S.shape != (len(tau), nq):
        raise ValueError(f"S has shape {S.shape}, expected ({len(tau)}, {nq})")
    return tau, S


def derive_tmt(model, q=None, dq=None, tau=None, *, S=None, actuated=None, simplify=False,
               progress=None, **kw) -> EquationsOfMotion:
    """TMT equations of motion of a Model (eqs. 3–4).

    Reads only ``parent, jtype, jaxis, jpitch, tree_rotation, tree_translation, mass, com,
    inertia_com, gravity, nq, body_names``. ``q``/``dq``/``tau`` default to symbols q0…, dq0…,
    tau0…; every joint is actuated (S = I) unless ``S`` or ``actuated`` (dof indices) is given.
    ``progress(message)`` is called at each stage. Returns the EquationsOfMotion of
    :meth:`TMTSystem.equations` (saveable: ``extra`` holds only SymPy objects); use
    :func:`tmt_system_from_model` for the TMTSystem and its numeric helpers.
    """
    say = progress or (lambda msg: None)
    say("TMT: kinematics of the tree")
    sysm = tmt_system_from_model(model, q=q, dq=dq, tau=tau, S=S, actuated=actuated,
                                 simplify=simplify, **kw)
    say(f"TMT: T, D and TᵀMT for {len(sysm.bodies)} bodies, n = {len(sysm.q)}")
    eom = sysm.equations()
    eom.extra["method"] = "tmt"
    say("TMT: done")
    return eom


def tmt_system_from_model(model, q=None, dq=None, tau=None, *, S=None, actuated=None,
                          simplify=False, extra_params=(), **kw) -> TMTSystem:
    """The :class:`TMTSystem` (3-D bodies) of a Model; see :func:`derive_tmt`.

    Bodies with zero mass and zero inertia are left out (they move nothing). ``extra_params``
    are parameter symbols of the elements in ``kw`` (forces, springs, dampers, constraints,
    contacts) that are not in the model's arrays.
    """
    kin = tree_kinematics(model, q)
    q = kin["q"]
    nq = kin["nq"]
    dq = sp.Matrix(sp.symbols(f"dq0:{nq}")) if dq is None else sp.Matrix(list(dq))
    if len(dq) != nq:
        raise ValueError(f"dq has {len(dq)} entries, the model has nq = {nq}")
    tau, S = _model_actuation(nq, tau, S, actuated)
    bodies = []
    for i in range(len(kin["R"])):
        m, I = _sym(model.mass[i]), _symmat(model.inertia_com[i], (3, 3))
        if m == 0 and I == sp.zeros(3, 3):
            continue
        bodies.append(TMTBody(mass=m, inertia=I, position=kin["r_com"][i], orientation=kin["R"][i],
                              name=kin["names"][i], T_omega=kin["T_omega"][i]))
    params = tuple(dict.fromkeys(list(kin["params"]) + [sp.sympify(p) for p in extra_params]))
    kw.setdefault("name", getattr(model, "name", ""))
    return TMTSystem(q, dq, bodies, params=params, gravity=_symmat(model.gravity, (3,)),
                     tau=tau, S=S, simplify=simplify, **kw)


def _tmt_sources():
    from ..model.model import Model
    from ..models.mechanism import Mechanism

    return (Model, Mechanism, TMTSystem)


@register_method("tmt", accepts=_tmt_sources(), summary="TMT method: linear vector form of Lagrange (IRIS 2015)")
def tmt_equations(source, q, dq, tau, *, S, progress=None, **options) -> EquationsOfMotion:
    """``derive(source, "tmt")`` for a Model, a :class:`~multibody.models.Mechanism` (tree plus
    constraints, springs, dampers, forces, contacts) or a :class:`TMTSystem`."""
    from ..model.model import Model
    from ..models.mechanism import Mechanism

    say = progress or (lambda msg: None)
    say("TMT: kinematics of the tree")
    if isinstance(source, Model):
        system = tmt_system_from_model(source, q=q, dq=dq, tau=tau, S=S, **options)
    elif isinstance(source, Mechanism):
        system = source.tmt_system(**options)
    else:
        system = source
    say(f"TMT: T, D and TᵀMT for {len(system.bodies)} bodies, n = {len(system.q)}")
    eom = system.equations()
    eom.extra["method"] = "tmt"
    say("TMT: done")
    return eom
