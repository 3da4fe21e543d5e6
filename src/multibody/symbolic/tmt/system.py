"""The TMT system and its equations, eqs. (2)–(9) of the paper (IRIS 2015, seed 002).

:class:`TMTSystem` takes the elements of :mod:`.elements`, checks them (every symbol must be a
coordinate, a rate, an actuator, time or a declared parameter) and derives

    T = ∂x/∂q, D = ∂(T q̇)/∂q (3);  M̄ = TᵀMT and the convective, gyroscopic, gravity, spring,
    damper and applied-force terms (4);  T_cn, D_cn of the constraints (5);  the augmented
    system (6);  the impact map (7)–(9);

with numeric helpers (``evaluate``, ``solve_accelerations``, ``impact``). Every term is formed in
SymEngine, end to end: the tree's bodies by :func:`tree_terms` (the code ``derive(model, "tmt")``
runs on a bare tree), the elements' Jacobians and D terms beside them; M, b, g are handed over
unconverted and ``extra`` converts each entry to SymPy when it is first read (:class:`LazyDict`),
so a derivation pays for the SymPy it is asked for and no more.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np
import symengine as se
import sympy as sp

from .. import _core as C
from ..eom import EquationsOfMotion
from ..utils import check_orthonormal, unskew
from .elements import (Constraint, Contact, LinearDamper, LinearSpring, RotationalDamper, RotationalSpring,
                       TreeBody, column)

__all__ = ["TMTSystem", "tree_terms", "LazyDict"]

#: the keys of ``extra`` and ``kinematics`` of :meth:`TMTSystem.equations` (method "tmt")
EXTRA_KEYS = ("T", "Mdiag", "D", "Dqd", "x", "b_convective", "g_gravity", "f_springs", "f_dampers", "f_forces",
              "kinetic_energy", "potential_energy", "time", "constraint", "constraint_jacobian", "constraint_D",
              "constraint_convective", "augmented_system", "contact_jacobian", "contact_D", "contact_points",
              "impact_map")
KINEMATICS_KEYS = ("I_r_CoG", "A_IB", "angle", "B_omega", "x")


def _check_names(m, allowed: set, what: str, kind: str) -> None:
    """:func:`_check_symbols` for a SymEngine matrix, against the allowed symbols' names."""
    bad = {s.name for e in m for s in e.free_symbols} - allowed
    if bad:
        raise ValueError(f"{what}: contains symbol(s) {', '.join(sorted(bad))} that are neither {kind} "
                         f"(declare model parameters in params=)")


def _check_symbols(expr, allowed: set, what: str, kind: str) -> None:
    bad = C.free_symbols(expr) - allowed
    if bad:
        names = ", ".join(sorted(str(s) for s in bad))
        raise ValueError(
            f"{what}: contains symbol(s) {names} that are neither {kind} "
            f"(declare model parameters in params=)")


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
                 values=None, q0=None, dq0=None, name="", simplify=False, _rotations_checked=False):
        self.name = name
        # bodies whose orientations a tree built as products of rotations (tmt_system_from_model)
        # need no numeric orthonormality test, which was a third of a small system's derivation
        self._rotations_checked = _rotations_checked
        self.q = column(q, "q") if len(q) else sp.zeros(0, 1)
        self.dq = column(dq, "dq") if len(dq) else sp.zeros(0, 1)
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
            self.tau = column(tau, "tau") if len(tau) else sp.zeros(0, 1)
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
        dims = set()
        for i, b in enumerate(self.bodies):
            # a tree's body (TreeBody) is 3-D and was checked with its Model: no SymPy read of it here
            d = 3 if isinstance(b, TreeBody) else len(column(b.position, self._bname(i, b) + " position"))
            if d not in (2, 3):
                raise ValueError(f"{self._bname(i, b)}: position must have 2 (planar) or 3 entries, got {d}")
            dims.add(d)
        if len(dims) != 1:
            raise ValueError(f"bodies mix planar and 3-D positions ({sorted(dims)} entries); use one kind")
        self.dim = dims.pop()
        self.planar = self.dim == 2
        if gravity is None:
            self.gravity = sp.zeros(self.dim, 1)
        else:
            self.gravity = column(gravity, "gravity")
            if self.gravity.shape[0] != self.dim:
                raise ValueError(f"gravity has {self.gravity.shape[0]} entries, bodies have {self.dim}")
        self._se_elements: dict = {}        # (element, field) → SymEngine column (_element)
        self._memo: dict = {}               # SymPy → SymEngine conversions (_to_se)
        self._validate()
        self._eom: EquationsOfMotion | None = None
        self._eom_lagrange: EquationsOfMotion | None = None
        self._numeric: dict = {}
        self._se: dict | None = None        # the input in SymEngine (_inputs)
        self._terms: dict = {}              # method → its terms in SymEngine (equations)

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
            if isinstance(b, TreeBody):
                continue            # from the Model's tree: its symbols are the model's parameters
            _check_symbols(column(b.position, nm), qs | ps, nm + " position", "coordinates q nor parameters")
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
                if not self._rotations_checked:
                    check_orthonormal(R, nm, what="orientation", exact=False)
                if b.T_omega is not None:
                    To = sp.Matrix(b.T_omega)
                    if To.shape != (3, len(self.q)):
                        raise ValueError(f"{nm}: T_omega must be 3×{len(self.q)}, got {To.shape}")
                    _check_symbols(To, qs | ps, nm + " T_omega", "coordinates q nor parameters")
        # the elements: each field read once (column), converted to SymEngine once (kept for
        # equations) and its symbols checked there, by name
        qn, dqn, pn = {s.name for s in qs}, {s.name for s in dqs}, {s.name for s in ps}
        tn, taun = {s.name for s in ts}, {s.name for s in taus}
        el = self._element
        for i, f in enumerate(self.forces):
            nm = self._ename("force", i, f)
            p, F = el(f, "point", nm + " point"), el(f, "force", nm + " force")
            if p.nrows() != self.dim or F.nrows() != self.dim:
                raise ValueError(f"{nm}: point and force need {self.dim} entries, got {p.nrows()} and {F.nrows()}")
            _check_names(p, qn | pn, nm + " point", "coordinates q nor parameters")
            _check_names(F, qn | dqn | pn | taun | tn, nm + " force",
                         "coordinates, rates, actuators, time nor parameters")
        for i, s in enumerate(self.springs):
            if isinstance(s, LinearSpring):
                nm = self._ename("linear spring", i, s)
                for a in ("point1", "point2"):
                    pp = el(s, a, nm)
                    if pp.nrows() != self.dim:
                        raise ValueError(f"{nm}: end points need {self.dim} entries, got {pp.nrows()}")
                    _check_names(pp, qn | pn, nm + " end point", "coordinates q nor parameters")
                _check_symbols(sp.Matrix([s.stiffness, s.rest_length]), ps, nm + " stiffness/rest length", "parameters")
            elif isinstance(s, RotationalSpring):
                nm = self._ename("rotational spring", i, s)
                _check_names(el(s, "angle", nm + " angle"), qn | pn, nm + " angle", "coordinates q nor parameters")
                _check_symbols(sp.Matrix([s.stiffness, s.rest_angle]), ps, nm + " stiffness/rest angle", "parameters")
            else:
                raise ValueError(f"spring {i}: expected LinearSpring or RotationalSpring, got {type(s).__name__}")
        for i, d in enumerate(self.dampers):
            if isinstance(d, LinearDamper):
                nm = self._ename("linear damper", i, d)
                for a in ("point1", "point2"):
                    pp = el(d, a, nm)
                    if pp.nrows() != self.dim:
                        raise ValueError(f"{nm}: end points need {self.dim} entries, got {pp.nrows()}")
                    _check_names(pp, qn | pn, nm + " end point", "coordinates q nor parameters")
            elif isinstance(d, RotationalDamper):
                nm = self._ename("rotational damper", i, d)
                _check_names(el(d, "angle", nm + " angle"), qn | pn, nm + " angle", "coordinates q nor parameters")
            else:
                raise ValueError(f"damper {i}: expected LinearDamper or RotationalDamper, got {type(d).__name__}")
            _check_symbols(d.damping, ps, nm + " damping", "parameters")
        for i, c in enumerate(self.constraints):
            if not isinstance(c, Constraint):
                c = self.constraints[i] = Constraint(c)
            nm = self._ename("constraint", i, c)
            _check_names(el(c, "expr", nm), qn | pn | tn, nm, "coordinates q, time nor parameters")
        for i, c in enumerate(self.contacts):
            if not isinstance(c, Contact):
                c = self.contacts[i] = Contact(c)
            nm = self._ename("contact", i, c)
            p = el(c, "point", nm)
            if p.nrows() != self.dim:
                raise ValueError(f"{nm}: point needs {self.dim} entries, got {p.nrows()}")
            _check_names(p, qn | pn, nm + " point", "coordinates q nor parameters")
            if c.directions is not None:
                Dm = sp.Matrix(c.directions)
                if Dm.shape[1] != self.dim:
                    raise ValueError(f"{nm}: directions must have {self.dim} columns, got {Dm.shape}")
                _check_symbols(Dm, qs | ps, nm + " directions", "coordinates q nor parameters")
        for k in self.values:
            if k not in set(self.params):
                raise ValueError(f"values: {k} is not one of the parameters")

    def _element(self, element, field: str, what: str) -> se.DenseMatrix:
        """An element's field (a scalar or a vector, read by :func:`column`) as a SymEngine
        column, converted once per system (:meth:`_validate` checks it, :meth:`equations` uses it)."""
        key = (id(element), field)
        hit = self._se_elements.get(key)
        if hit is None or hit[0] is not element:
            hit = self._se_elements[key] = (element, _se_col(getattr(element, field), what, self._memo))
        return hit[1]

    # -- derivation ----------------------------------------------------------------------------
    def _inputs(self) -> dict:
        """The system's input in SymEngine, once: per body (m, Θ, r, T_ω) for :func:`tree_terms`
        (planar: T_ω = ∂θ/∂q, Θ 1×1) and what the elements need; element expressions are
        converted once here, a :class:`TreeBody`'s kinematics are taken as the tree walk left them."""
        if self._se is not None:
            return self._se
        memo = self._memo
        q = [se.Symbol(s.name) for s in self.q]
        qm = se.Matrix(q) if q else se.zeros(0, 1)
        dqm = se.Matrix([se.Symbol(s.name) for s in self.dq]) if q else se.zeros(0, 1)
        n = len(q)
        bodies, angles, rots = [], [], []
        for b in self.bodies:
            twins = b.se if isinstance(b, TreeBody) else {}
            m = twins["m"] if "m" in twins else _se_scalar(b.mass, memo)
            r = twins.get("r")
            if r is None:
                r = _se_col(b.position, memo=memo)
            if self.planar:
                th = _se_scalar(b.orientation, memo)
                To = se.Matrix([[th]]).jacobian(qm) if n else se.zeros(1, 0)
                Th = se.Matrix([[_se_scalar(b.inertia, memo)]])
                angles.append(th)
            else:
                R = twins.get("R")
                if R is None:
                    R = se.eye(3) if _is_scalar_zero(b.orientation) else _se_mat(b.orientation, memo=memo)
                To = twins.get("To")
                if To is None:
                    if b.T_omega is not None:
                        To = _se_mat(b.T_omega, memo=memo) if n else se.zeros(3, 0)
                    else:
                        # eq. (2) in body coordinates: skew(ω_B) = Rᵀ ∂R/∂q_k q̇_k (SymPy: trigsimp
                        # keeps ω readable; only bodies given without T_ω take this road)
                        Rs = sp.eye(3) if _is_scalar_zero(b.orientation) else sp.Matrix(b.orientation)
                        cols = [unskew(Rs.T * Rs.diff(qk)) for qk in self.q]
                        To = _se_mat(sp.Matrix.hstack(*cols).applyfunc(_tidy), memo) if cols else se.zeros(3, 0)
                Th = twins["I"] if "I" in twins else _se_mat(b.inertia, memo=memo)
                rots.append(R)
            bodies.append((m, Th, r, To))
        t = se.Symbol(self.time.name) if self.time is not None else None
        self._se = {"q": qm, "dq": dqm, "bodies": bodies, "angles": angles, "rotations": rots, "time": t,
                    "gravity": _se_col(self.gravity, memo=memo),
                    "tau": se.Matrix([se.Symbol(s.name) for s in self.tau]) if len(self.tau) else se.zeros(0, 1),
                    "S": se.Matrix(self.S.tolist()) if 0 not in self.S.shape else se.zeros(*self.S.shape)}
        return self._se

    def equations(self, method: str = "tmt") -> EquationsOfMotion:
        """Derive M, b, g and the constraint/impact terms (eqs. 3–9); cached.

        Every term is formed in SymEngine from the bodies' kinematics (:func:`tree_terms`, the
        same code ``derive(model, "tmt")`` runs on a bare tree) and the elements; M, b, g are
        handed over unconverted (:meth:`EquationsOfMotion.from_symengine`) and each entry of
        ``extra`` and ``kinematics`` is converted to SymPy when it is first read.

        ``method="lagrange"`` derives the tree's M̄, convective and gravity terms from the bodies'
        energies by Lagrange's equations (:mod:`multibody.symbolic.lagrange`) instead of TᵀMT
        (eqs. 3–4), and the elements (springs, dampers, forces, constraints, contacts) as TMT does:
        the same equations by the other road, so that the two can be compared on constrained
        systems.  ``extra`` then has no ``"D"``/``"Dqd"`` (TMT's eq. 3).
        """
        if method not in ("tmt", "lagrange"):
            raise ValueError(f"method: expected 'tmt' or 'lagrange', got {method!r}")
        cached = self._eom if method == "tmt" else self._eom_lagrange
        if cached is not None:
            return cached
        inp = self._inputs()
        qm, dqm, t = inp["q"], inp["dq"], inp["time"]
        n = qm.nrows()
        J = (lambda v: v.jacobian(qm)) if n else (lambda v: se.zeros(v.nrows(), 0))  # noqa: E731
        if method == "lagrange":
            M, b_conv, g_grav, V, per = _lagrange_tree(inp["bodies"], qm, dqm, inp["gravity"], self.q, self.dq,
                                                       self.params)
        else:
            M, b_conv, g_grav, V, per = tree_terms(inp["bodies"], qm, dqm, inp["gravity"])
        # springs (f_k), dampers (f_v), general forces (f_c/nc), eq. (4)
        el, memo = self._element, self._memo
        f_k, f_v, f_ef = se.zeros(n, 1), se.zeros(n, 1), se.zeros(n, 1)
        for s in self.springs:
            k = _se_scalar(s.stiffness, memo)
            if isinstance(s, LinearSpring):
                p1, p2 = el(s, "point1", ""), el(s, "point2", "")
                l = p2 - p1
                L = se.sqrt((l.T * l)[0])
                l0 = _se_scalar(s.rest_length, memo)
                f_k += (-k * (L - l0) / L) * ((J(p2) - J(p1)).T * l)
                V += k * (L - l0) ** 2 / 2
            else:
                th, th0 = el(s, "angle", "")[0], _se_scalar(s.rest_angle, memo)
                f_k += (-k * (th - th0)) * J(se.Matrix([[th]])).T
                V += k * (th - th0) ** 2 / 2
        for d in self.dampers:
            c = _se_scalar(d.damping, memo)
            if isinstance(d, LinearDamper):
                Tv = J(el(d, "point2", "")) - J(el(d, "point1", ""))
            else:
                Tv = J(el(d, "angle", ""))
            f_v += -c * (Tv.T * (Tv * dqm))
        for f in self.forces:
            f_ef += J(el(f, "point", "")).T * el(f, "force", "")
        b = b_conv - f_v - f_ef
        g = g_grav - f_k
        # constraints, eq. (5)
        c = _vstack([el(cc, "expr", "") for cc in self.constraints], 1)
        nc = c.nrows()
        Tcn = J(c) if nc else se.zeros(0, n)
        Dcn = J(Tcn * dqm) if nc else se.zeros(0, n)
        gamma = Dcn * dqm if nc else se.zeros(0, 1)
        if t is not None and nc:
            ct = c.diff(t)
            gamma = gamma + 2 * (J(ct) * dqm) + ct.diff(t)
        # contacts, eq. (7)–(9)
        Trho_rows, Drho_rows, points = [], [], []
        for cc in self.contacts:
            p = el(cc, "point", "")
            Jp = J(p)
            if cc.directions is not None:
                Jp = _se_mat(cc.directions, memo=memo) * Jp
            Trho_rows.append(Jp)
            Drho_rows.append(J(Jp * dqm))
            points.append(p)
        Trho, Drho = _vstack(Trho_rows, n), _vstack(Drho_rows, n)
        x_blocks = []            # x of eq. (3): CoM positions (planar: and the absolute angles)
        for i, (_, _, r, _) in enumerate(inp["bodies"]):
            x_blocks += [r, se.Matrix([[inp["angles"][i]]])] if self.planar else [r]
        # M, b, g and the sizes read at once are formed here; T, D, x, the energy and d (eq. 6) when
        # first read (stacking the blocks and T q̇ products were a third of the flyer's equations)
        terms = LazyDict({"M": M, "b": b, "g": g, "b_convective": b_conv, "g_gravity": g_grav, "f_springs": f_k,
                          "f_dampers": f_v, "f_forces": f_ef, "potential_energy": se.Matrix([[V]]),
                          "constraint": c, "constraint_jacobian": Tcn, "constraint_D": Dcn,
                          "constraint_convective": gamma, "contact_jacobian": Trho, "contact_D": Drho})
        terms.lazy("T", lambda: _vstack([blk for Jr, To, *_ in per for blk in (Jr, To)], n))
        terms.lazy("x", lambda: _vstack(x_blocks, 1))
        terms.lazy("kinetic_energy", lambda: se.Matrix([[(dqm.T * M * dqm)[0] / 2 if n else se.Integer(0)]]))
        terms.lazy("d", lambda: inp["S"].T * inp["tau"] - b - g if len(self.tau) else -b - g)
        if method == "tmt":
            terms.lazy("D", lambda: _vstack([blk for _, _, Dr, Dw, _ in per for blk in (Dr, Dw)], n))
            terms.lazy("Dqd", lambda: terms["D"] * dqm if n else se.zeros(terms["D"].nrows(), 1))
        self._terms[method] = terms
        eom = self._eom_of(terms, per, inp, points, method)
        if method == "tmt":
            self._eom = eom
        else:
            self._eom_lagrange = eom
        return eom

    def _eom_of(self, terms, per, inp, points, method) -> EquationsOfMotion:
        """The EquationsOfMotion of SymEngine ``terms``: M, b, g unconverted (or simplified, when
        the system asks for it), ``extra`` and ``kinematics`` converted entry by entry on first read
        through one memo (shared subexpressions are converted once)."""
        conv = C.Converter(list(self.q) + list(self.dq) + list(self.tau) + list(self.params)
                           + ([self.time] if self.time is not None else []))
        out = lambda m: sp.Matrix(m.nrows(), m.ncols(), [conv(e) for e in m])  # noqa: E731
        n = len(self.q)
        M, b, g = terms["M"], terms["b"], terms["g"]
        Mbar = functools.cache(lambda: out(M))    # the raw M̄ (derive's readable copy is another), once
        nc, k = terms["constraint"].nrows(), terms["contact_jacobian"].nrows()
        extra = LazyDict()

        def augmented():         # eq. (6), unknowns [q̈; λ]
            Tcn = extra["constraint_jacobian"]
            A6 = sp.Matrix.vstack(sp.Matrix.hstack(Mbar(), -Tcn.T), sp.Matrix.hstack(Tcn, sp.zeros(nc, nc)))
            rhs6 = sp.Matrix.vstack(out(terms["d"]), -extra["constraint_convective"])
            return {"A": A6, "rhs": rhs6, "unknowns": "[qdd; lambda]"}

        def impact_map():        # eq. (9), unknowns [q̇*; ρ_λ; ρ], B multiplies q̇
            Tcn, Trho = extra["constraint_jacobian"], extra["contact_jacobian"]
            E = sp.Matrix(k, k, lambda i, j: sp.Symbol(f"E_{i}_{j}"))
            A9 = sp.Matrix.vstack(sp.Matrix.hstack(Mbar(), -Tcn.T, -Trho.T),
                                  sp.Matrix.hstack(Tcn, sp.zeros(nc, nc), sp.zeros(nc, k)),
                                  sp.Matrix.hstack(Trho, sp.zeros(k, nc), sp.zeros(k, k)))
            B9 = sp.Matrix.vstack(Mbar(), sp.zeros(nc, n), E * Trho)
            return {"A": A9, "B": B9, "E": E, "unknowns": "[dq_plus; rho_lambda; rho]"}
        thunks = {"Mdiag": self._mass_blocks, "augmented_system": augmented, "impact_map": impact_map,
                  "kinetic_energy": lambda: conv(terms["kinetic_energy"][0]),
                  "potential_energy": lambda: conv(terms["potential_energy"][0]),
                  "contact_points": lambda: [out(p) for p in points]}
        for key in EXTRA_KEYS:
            if key == "time":
                extra["time"] = self.time
            elif key in thunks:
                extra.lazy(key, thunks[key])
            elif key in terms:                  # T, D (TMT only), x, the force and constraint terms
                extra.lazy(key, lambda key=key: out(terms[key]))
        kin = LazyDict()
        if self.planar:
            kin.lazy("I_r_CoG", lambda: [out(r) for _, _, r, _ in inp["bodies"]])
            kin.lazy("angle", lambda: [conv(th) for th in inp["angles"]])
            kin["A_IB"], kin["B_omega"] = [], []
        else:
            kin.lazy("I_r_CoG", lambda: [out(r) for _, _, r, _ in inp["bodies"]])
            kin.lazy("A_IB", lambda: [out(R) for R in inp["rotations"]])
            kin["angle"] = []
            kin.lazy("B_omega", lambda: [out(w) for *_, w in per])
        kin.lazy("x", lambda: extra["x"])
        simp = self.simplify
        if simp:
            fn = sp.simplify if simp is True else simp
            eom = EquationsOfMotion(q=self.q, dq=self.dq, M=out(M).applyfunc(fn), b=out(b).applyfunc(fn),
                                    g=out(g).applyfunc(fn), S=self.S, tau=self.tau, params=self.params,
                                    kinematics=kin, extra=extra)
        else:
            eom = EquationsOfMotion.from_symengine(
                M=[[M[i, j] for j in range(n)] for i in range(n)], b=list(b), g=list(g), q=self.q, dq=self.dq,
                tau=self.tau, S=self.S, params=self.params, kinematics=kin, extra=extra)
        return eom

    def _mass_blocks(self) -> sp.Matrix:
        """M = diag[m_i, m_i, (m_i,) I_i, …], the bodies' "diagonal" mass matrix (eq. 4)."""
        blocks = []
        for b in self.bodies:
            m = sp.sympify(b.mass)
            blocks.append(sp.diag(m, m, sp.sympify(b.inertia)) if self.planar
                          else sp.diag(m, m, m, sp.Matrix(b.inertia)))
        return sp.diag(*blocks)

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

    def _fn(self, key: str, build: Callable[[], Any]):
        """Compiled numeric function f(q, dq, tau, t, params) → array (SymEngine Lambdify) of the
        SymEngine (or SymPy) matrix ``build()`` gives."""
        if key not in self._numeric:
            t = self.time if self.time is not None else sp.Symbol("_t_unused")
            args = list(self.q) + list(self.dq) + list(self.tau) + [t] + list(self.params)
            expr = build()
            if not isinstance(expr, se.DenseMatrix):
                expr = se.Matrix(expr.tolist()) if 0 not in expr.shape else se.zeros(*expr.shape)
            shape = (expr.nrows(), expr.ncols())
            if 0 in shape:
                def fn(q, dq, tau, tt, p, _shape=shape):
                    return np.zeros(_shape)
            else:
                f = se.Lambdify([se.Symbol(a.name) for a in args], expr, cse=True)

                def fn(q, dq, tau, tt, p, _f=f, _shape=shape):
                    return np.asarray(_f(np.concatenate([q, dq, tau, [tt], p])), dtype=float).reshape(_shape)
            self._numeric[key] = fn
        return self._numeric[key]

    def _term(self, name: str):
        """``build`` for :meth:`_fn`: the SymEngine term of :meth:`equations` named ``name`` (M, b, g
        and the extra matrices), else the SymPy entry of ``extra``."""
        e = self.equations()
        terms = self._terms["tmt"]
        if name in terms:
            return lambda: terms[name]
        expr = e.extra[name]
        if not isinstance(expr, sp.MatrixBase):
            expr = sp.Matrix([expr])
        return lambda: expr

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
        n = len(self.q)
        q = np.zeros(n) if q is None else q
        dq = np.zeros(n) if dq is None else dq
        q, dq, tau = self._state(q, dq, tau)
        f = self._fn("eval:" + name, self._term(name))
        return np.asarray(f(q, dq, tau, t, self._param_values(values)), dtype=float)

    def solve_accelerations(self, values=None, q=None, dq=None, tau=None, t=0.0):
        """Solve the augmented system (6) numerically: returns (q̈, λ)."""
        q, dq, tau = self._state(q, dq, tau)
        p = self._param_values(values)
        M = self._fn("eval:M", self._term("M"))(q, dq, tau, t, p)
        Tcn = self._fn("eval:constraint_jacobian", self._term("constraint_jacobian"))(q, dq, tau, t, p)
        d = self._fn("eval:d", self._term("d"))(q, dq, tau, t, p).reshape(-1)
        gamma = self._fn("eval:constraint_convective", self._term("constraint_convective"))(q, dq, tau, t, p)
        nc = Tcn.shape[0]
        A = np.block([[M, -Tcn.T], [Tcn, np.zeros((nc, nc))]])
        x = _solve(A, np.concatenate([d, -gamma.reshape(-1)]))
        n = len(self.q)
        return x[:n], x[n:]

    def impact(self, values=None, q=None, dq_minus=None, E=None, active_constraints=None, t=0.0):
        """Impact map (9): returns (q̇*, ρ_λ, ρ) for pre-impact rates ``dq_minus``.

        ``E`` is the k×k matrix of eq. (8) (k = number of contact rows; a scalar is taken as
        ``E·I``). ``active_constraints`` lists the constraint rows that stay closed during the
        impact (default: all); e.g. a walker's trailing foot is released at heel strike.
        """
        self.equations()
        q, dq, _ = self._state(q, dq_minus, None)
        n = len(self.q)
        k = self._terms["tmt"]["contact_jacobian"].nrows()
        if k == 0:
            raise ValueError("impact: the system has no contacts")
        Ev = np.asarray(E, dtype=float)
        if Ev.ndim == 0:
            Ev = Ev * np.eye(k)
        if Ev.shape != (k, k):
            raise ValueError(f"impact: E must be {k}×{k} for {k} contact rows, got {Ev.shape}")
        p = self._param_values(values)
        tau0 = np.zeros(len(self.tau))
        M = self._fn("eval:M", self._term("M"))(q, dq, tau0, t, p)
        Trho = self._fn("eval:contact_jacobian", self._term("contact_jacobian"))(q, dq, tau0, t, p)
        Tcn = self._fn("eval:constraint_jacobian", self._term("constraint_jacobian"))(q, dq, tau0, t, p)
        nc_all = Tcn.shape[0]
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


def tree_terms(bodies, q, dq, gravity) -> tuple:
    """The TMT paper's eqs. 3–4 for rigid bodies, in SymEngine: M̄ = TᵀMT, the convective and
    gyroscopic force Tᵀ(M D q̇ + f_gyro) and the gravity force −Tᵀ f_g, body by body.

    Per body, with J_r = ∂r/∂q (T = [J_r; T_ω], eq. 3)::

        M̄ += m J_rᵀ J_r + T_ωᵀ Θ T_ω
        b += J_rᵀ m (D_r q̇) + T_ωᵀ (Θ D_ω q̇ + ω × Θ ω),   D_r = ∂(J_r q̇)/∂q,  D_ω = ∂(T_ω q̇)/∂q
        g −= J_rᵀ m g_vec,    V −= m g_vecᵀ r

    ``derive(model, "tmt")`` on a bare tree and :meth:`TMTSystem.equations` both run this (the
    block-diagonal M summed body by body, T, M and D never formed whole).

    Parameters
    ----------
    bodies : sequence of (m, Θ, r, T_ω)
        Per body, SymEngine: the mass, the inertia about the CoM (3×3 in body coordinates; 1×1
        for a planar body), the CoM position r(q) (a column of 3, or 2 for a planar body) and the
        angular-velocity Jacobian (ω = T_ω q̇: 3×n in body coordinates, eq. 2; planar 1×n, ∂θ/∂q).
    q, dq : symengine.DenseMatrix
        The n coordinates and rates, columns.
    gravity : symengine.DenseMatrix
        The gravity vector, a column like r.

    Returns
    -------
    M, b, g : symengine.DenseMatrix
        M̄ (n×n), the convective and gyroscopic terms (n×1), the gravity terms (n×1): M̄ q̈ + b + g = f.
    V : symengine.Expr
        The potential energy of gravity, −Σ m g_vecᵀ r.
    per_body : list of tuple
        ``(J_r, T_ω, D_r, D_ω, ω)`` per body: the blocks of T and D (eq. 3) ``extra`` holds.

    Raises
    ------
    symengine.SympifyError, TypeError
        An entry that is not a SymEngine expression, or blocks of mismatched shapes.

    Examples
    --------
    A point mass on a rod of length l about z, under gravity −g ŷ: M = m l² (as derived, not
    simplified), no convective term, g = m g l cos a.

    >>> import symengine as se
    >>> a, da, m, l, g = se.symbols("a da m l g")
    >>> r = se.Matrix([l * se.cos(a), l * se.sin(a), 0])
    >>> M, b, grav, V, _ = tree_terms([(m, se.zeros(3, 3), r, se.Matrix([[0], [0], [1]]))],
    ...                               se.Matrix([a]), se.Matrix([da]), se.Matrix([0, -g, 0]))
    >>> M[0, 0], b[0], grav[0]
    ((l**2*sin(a)**2 + l**2*cos(a)**2)*m, 0, g*l*m*cos(a))
    """
    n = q.nrows()
    M, b, g, V = se.zeros(n, n), se.zeros(n, 1), se.zeros(n, 1), se.Integer(0)
    per = []
    for m, Th, r, To in bodies:
        Jr = r.jacobian(q) if n else se.zeros(r.nrows(), 0)
        if n:
            v, w = Jr * dq, To * dq
            Dr, Dw = v.jacobian(q), w.jacobian(q)                # D of eq. 3, this body's rows
            Iw = Th * w
            if w.nrows() == 3:
                Iw_dot = Th * (Dw * dq) + se.Matrix([w[1] * Iw[2] - w[2] * Iw[1], w[2] * Iw[0] - w[0] * Iw[2],
                                                     w[0] * Iw[1] - w[1] * Iw[0]])
            else:                                                # planar: no gyroscopic term
                Iw_dot = Th * (Dw * dq)
            JrT, ToT = Jr.T, To.T
            M = M + m * (JrT * Jr) + ToT * Th * To
            b = b + JrT * (m * (Dr * dq)) + ToT * Iw_dot
            g = g - JrT * (m * gravity)
        else:
            w, Dr, Dw = se.zeros(To.nrows(), 1), se.zeros(r.nrows(), 0), se.zeros(To.nrows(), 0)
        V = V - m * (gravity.T * r)[0]
        per.append((Jr, To, Dr, Dw, w))
    return M, b, g, V, per


def _lagrange_tree(bodies, q, dq, gravity, q_sp, dq_sp, params):
    """M̄, C q̇, g = ∂V/∂q of the bodies of :func:`tree_terms` by Lagrange's equations:
    K = Σ ½ (m ṙᵀṙ + ωᵀ Θ ω), V = −Σ m gᵀ r, then M = ∂²K/∂q̇², the Christoffel symbols and
    ∂V/∂q (:func:`multibody.symbolic.lagrange._lagrange`). Same return as :func:`tree_terms`
    (no D blocks)."""
    from ..lagrange import _actuation, _lagrange
    n = q.nrows()
    K, V, per = se.Integer(0), se.Integer(0), []
    for m, Th, r, To in bodies:
        Jr = r.jacobian(q)
        v, w = Jr * dq, To * dq
        K += (m * (v.T * v)[0] + (w.T * Th * w)[0]) / 2
        V -= m * (gravity.T * r)[0]
        per.append((Jr, To, None, None, w))
    eom = _lagrange(K, V, q_sp, dq_sp, params, *_actuation(None, None, n), False)
    cache = eom.__dict__["_se_exprs"]
    return (se.Matrix(n, n, list(cache["M"])), se.Matrix(n, 1, list(cache["b"])), se.Matrix(n, 1, list(cache["g"])),
            V, per)


class _Pending:
    """A value computed on first use, once (the entries of :class:`LazyDict`)."""

    __slots__ = ("fn", "value")

    def __init__(self, fn):
        self.fn, self.value = fn, None

    def __call__(self):
        if self.fn is not None:
            self.value, self.fn = self.fn(), None
        return self.value


class LazyDict(dict):
    """A dict whose entries may be computed when first read (``lazy(key, fn)``).

    ``extra`` and ``kinematics`` of :meth:`TMTSystem.equations` are these: T, D, the constraint
    and impact terms are converted to SymPy only when a caller reads them. ``copy()`` shares the
    pending entries (each is computed once for all copies); reading every entry — ``items()``,
    ``values()``, ``dict(d)``, saving — computes the rest.

    >>> d = LazyDict(method="tmt")
    >>> d.lazy("T", lambda: "computed")
    >>> "T" in d, d["T"], dict(d)
    (True, 'computed', {'method': 'tmt', 'T': 'computed'})
    """

    def lazy(self, key, fn: Callable[[], Any]) -> None:
        """Set ``key`` to ``fn()``, called when the entry is first read.

        Parameters
        ----------
        key : hashable
            The entry.
        fn : callable
            No arguments; its result becomes the entry's value (once, for every copy).

        Returns
        -------
        None

        Examples
        --------
        >>> d = LazyDict()
        >>> d.lazy("x", lambda: 2 + 2)
        >>> d["x"]
        4
        """
        dict.__setitem__(self, key, _Pending(fn))

    def __getitem__(self, key):
        v = dict.__getitem__(self, key)
        if type(v) is _Pending:
            v = v()
            dict.__setitem__(self, key, v)
        return v

    def __iter__(self):          # not dict's own: dict(d) and {**d} then read through __getitem__
        return iter(list(dict.keys(self)))

    def get(self, key, default=None):
        return self[key] if dict.__contains__(self, key) else default

    def items(self):
        return [(k, self[k]) for k in list(dict.keys(self))]

    def values(self):
        return [self[k] for k in list(dict.keys(self))]

    def pop(self, key, *default):
        if dict.__contains__(self, key):
            v = self[key]
            dict.pop(self, key)
            return v
        return dict.pop(self, key, *default)

    def popitem(self):
        k = next(reversed(list(dict.keys(self))))
        return k, self.pop(k)

    def setdefault(self, key, default=None):
        if dict.__contains__(self, key):
            return self[key]
        dict.__setitem__(self, key, default)
        return default

    def copy(self) -> "LazyDict":
        new = LazyDict()
        for k in list(dict.keys(self)):
            dict.__setitem__(new, k, dict.__getitem__(self, k))
        return new

    def __eq__(self, other):
        return dict(self.items()) == other

    __hash__ = None

    def __or__(self, other):
        return dict(self.items()) | other

    def __repr__(self):
        return repr(dict(self.items()))

    def __reduce__(self):
        return (dict, (dict(self.items()),))


def _plain_symbol(s):
    return se.Symbol(s.name)


def _to_se(e, memo: dict):
    """SymPy → SymEngine through a memo (a subexpression shared by elements is converted once):
    :func:`~multibody.symbolic._core.walk_se` with plain SymEngine symbols, anything it does not
    walk through ``se.sympify``."""
    return C.walk_se(e, _plain_symbol, memo, se.sympify)


def _se_scalar(x, memo: dict | None = None):
    """A scalar input (number, SymPy or SymEngine) as SymEngine."""
    if isinstance(x, se.Basic):
        return x
    return _to_se(sp.sympify(x), {} if memo is None else memo)


def _se_col(x, what: str = "", memo: dict | None = None) -> se.DenseMatrix:
    """A column input (anything :func:`column` reads) as a SymEngine n×1 matrix."""
    if isinstance(x, se.DenseMatrix):
        return x
    memo = {} if memo is None else memo
    # the common inputs read without a sympy.Matrix (building one cost ~0.1 ms, six a flyer's
    # element): a list or tuple of SymPy expressions and numbers, a SymPy row or column
    if isinstance(x, (list, tuple)) and x and all(isinstance(e, _SCALARS) and type(e) is not bool for e in x):
        return se.Matrix([_to_se(e, memo) for e in x])
    if isinstance(x, sp.MatrixBase) and 1 in x.shape and len(x):
        return se.Matrix([_to_se(e, memo) for e in x])
    if isinstance(x, _SCALARS) and type(x) is not bool:
        return se.Matrix([_to_se(x, memo)])
    return se.Matrix([_to_se(e, memo) for e in column(x, what)])


_SCALARS = (sp.Expr, int, float)     # what _se_col converts entry by entry (sp.Expr: not a Boolean or a set)


def _se_mat(x, memo: dict | None = None) -> se.DenseMatrix:
    """A matrix input as a SymEngine matrix."""
    if isinstance(x, se.DenseMatrix):
        return x
    m = sp.Matrix(x)
    if 0 in m.shape:
        return se.zeros(*m.shape)
    memo = {} if memo is None else memo
    return se.Matrix([[_to_se(e, memo) for e in row] for row in m.tolist()])


def _vstack(blocks, ncols) -> se.DenseMatrix:
    """Rows of SymEngine matrices stacked (no blocks: 0 × ncols); read by ``tolist`` (a matrix's
    ``[i, j]`` costs microseconds in Python)."""
    rows = [row for blk in blocks if blk.nrows() for row in blk.tolist()]
    return se.Matrix(rows) if rows and ncols else se.zeros(len(rows), ncols)


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
