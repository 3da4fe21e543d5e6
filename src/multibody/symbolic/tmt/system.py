"""The TMT system and its equations, eqs. (2)–(9) of the paper (IRIS 2015, seed 002).

:class:`TMTSystem` takes the elements of :mod:`.elements`, checks them (every symbol must be a
coordinate, a rate, an actuator, time or a declared parameter) and derives

    T = ∂x/∂q, D = ∂(T q̇)/∂q (3);  M̄ = TᵀMT and the convective, gyroscopic, gravity, spring,
    damper and applied-force terms (4);  T_cn, D_cn of the constraints (5);  the augmented
    system (6);  the impact map (7)–(9);

with numeric helpers (``evaluate``, ``solve_accelerations``, ``impact``). T, D and TᵀMT are formed
in SymEngine and converted back to SymPy once (:func:`_tmt_core`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import symengine as se
import sympy as sp

from .. import _core as C
from ..eom import EquationsOfMotion
from ..utils import check_orthonormal, unskew
from .elements import (Constraint, Contact, LinearDamper, LinearSpring, RotationalDamper, RotationalSpring,
                       column)

__all__ = ["TMTSystem"]


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
        dims = {len(column(b.position, self._bname(i, b) + " position")) for i, b in enumerate(self.bodies)}
        for i, b in enumerate(self.bodies):
            d = len(column(b.position, self._bname(i, b) + " position"))
            if d not in (2, 3):
                raise ValueError(f"{self._bname(i, b)}: position must have 2 (planar) or 3 entries, got {d}")
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
        self._validate()
        self._eom: EquationsOfMotion | None = None
        self._eom_lagrange: EquationsOfMotion | None = None
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
        for i, f in enumerate(self.forces):
            nm = self._ename("force", i, f)
            p = column(f.point, nm + " point")
            F = column(f.force, nm + " force")
            if p.shape[0] != self.dim or F.shape[0] != self.dim:
                raise ValueError(f"{nm}: point and force need {self.dim} entries, got {p.shape[0]} and {F.shape[0]}")
            _check_symbols(p, qs | ps, nm + " point", "coordinates q nor parameters")
            _check_symbols(F, qs | dqs | ps | taus | ts, nm + " force", "coordinates, rates, actuators, time nor parameters")
        for i, s in enumerate(self.springs):
            if isinstance(s, LinearSpring):
                nm = self._ename("linear spring", i, s)
                for p in (s.point1, s.point2):
                    pp = column(p, nm)
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
                    pp = column(p, nm)
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
            _check_symbols(column(c.expr, nm), qs | ps | ts, nm, "coordinates q, time nor parameters")
        for i, c in enumerate(self.contacts):
            if not isinstance(c, Contact):
                c = self.contacts[i] = Contact(c)
            nm = self._ename("contact", i, c)
            p = column(c.point, nm)
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
        return C.jacobian(v, self.q)

    def equations(self, method: str = "tmt") -> EquationsOfMotion:
        """Derive M, b, g and the constraint/impact terms (eqs. 3–9); cached.

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
        q, dq, n = self.q, self.dq, len(self.q)
        rows_T, mass_blocks, f_g_rows, gyro_rows, x_rows = [], [], [], [], []
        kin: dict[str, list] = {"I_r_CoG": [], "A_IB": [], "angle": [], "B_omega": []}
        for i, b in enumerate(self.bodies):
            r = column(b.position, "")
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
                    cols = [unskew(R.T * R.diff(qk)) for qk in q]
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
        if method == "lagrange":
            T, Mbar, b_conv, g_grav, omegas, se_mbg = _lagrange_core(rows_T, mass_blocks, f_g_rows, q, dq,
                                                                     self.planar, self.params)
            D = Dqd = None
        else:
            T, D, Dqd, Mbar, b_conv, g_grav, omegas, se_mbg = _tmt_core(rows_T, gyro_rows, Mdiag, f_g, q, dq,
                                                                        self.planar)
        kin["B_omega"] = omegas
        # springs (f_k), dampers (f_v), general forces (f_c/nc), eq. (4)
        f_k = sp.zeros(n, 1)
        Tk_se, V_se, conv = se_mbg[3:]
        se_mbg = se_mbg[:3]
        V = conv(V_se)           # −Σ m gᵀ r, formed in SymEngine by the core (a SymPy sum here cost more than TᵀMT)
        for s in self.springs:
            if isinstance(s, LinearSpring):
                p1, p2 = column(s.point1, ""), column(s.point2, "")
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
                Tv = self._jac(column(d.point2, "")) - self._jac(column(d.point1, ""))
                f_v += -d.damping * Tv.T * (Tv * dq)
            else:
                Jth = self._jac(sp.Matrix([sp.sympify(d.angle)]))
                f_v += -d.damping * Jth.T * (Jth * dq)
        f_ef = sp.zeros(n, 1)
        for f in self.forces:
            f_ef += self._jac(column(f.point, "")).T * column(f.force, "")
        b = b_conv - f_v - f_ef
        g = g_grav - f_k
        Tkin = conv(Tk_se)       # ½ q̇ᵀ M̄ q̇ from the core's SymEngine M̄ (no round trip through SymPy)

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
            c = sp.Matrix.vstack(*[column(cc.expr, "") for cc in self.constraints])
        else:
            c = sp.zeros(0, 1)
        Tcn = self._jac(c) if c.shape[0] else sp.zeros(0, n)
        Dcn = self._jac(C.matmul(Tcn, dq)) if c.shape[0] else sp.zeros(0, n)
        gamma = C.matmul(Dcn, dq)
        if self.time is not None and c.shape[0]:
            ct = c.diff(self.time)
            gamma = gamma + 2 * C.matmul(self._jac(ct), dq) + ct.diff(self.time)
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
            p = column(cc.point, "")
            Jp = self._jac(p)
            if cc.directions is not None:
                Dm = sp.Matrix(cc.directions)
                Jp = Dm * Jp
            Trho_rows.append(Jp)
            Drho_rows.append(self._jac(C.matmul(Jp, dq)))
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
        eom = EquationsOfMotion(q=q, dq=dq, M=Mbar, b=b, g=g, S=self.S, tau=self.tau,
                                params=self.params, kinematics=kin, extra=extra)
        if not (self.springs or self.dampers or self.forces or simp):
            # M, b, g as the core left them in SymEngine: the readable pass reads them there (no
            # conversion back), and they are converted once, after it
            eom._set_symengine(*se_mbg)
        if method == "tmt":
            self._eom = eom
        else:
            eom.extra.pop("D"), eom.extra.pop("Dqd")
            self._eom_lagrange = eom
        return eom

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
            if 0 in expr.shape:
                def fn(q, dq, tau, tt, p, _shape=expr.shape):
                    return np.zeros(_shape)
            else:
                f = se.Lambdify([se.sympify(a) for a in args], se.Matrix(expr.tolist()), cse=True)

                def fn(q, dq, tau, tt, p, _f=f, _shape=expr.shape):
                    return np.asarray(_f(np.concatenate([q, dq, tau, [tt], p])), dtype=float).reshape(_shape)
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
    syms = set(q) | set(dq)
    for blk in rows_T:
        syms |= C.free_symbols(blk)
    syms |= C.free_symbols(Mdiag) | C.free_symbols(f_g)
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
    fg = S(f_g)
    g_grav = -(T.T * fg)
    # potential energy of gravity −Σ (m g)ᵀ r and kinetic energy ½ q̇ᵀ M̄ q̇, here in SymEngine
    per, npos = (3, 2) if planar else (6, 3)
    V = se.Integer(0)
    for i, blk in enumerate(rows_T[0::2]):
        r = S(blk)
        V -= sum((fg[per * i + a] * r[a] for a in range(npos)), se.Integer(0))
    Tk = (dqs.T * Mbar * dqs)[0] / 2
    conv = C.Converter(syms)
    out = lambda m: sp.Matrix(m.nrows(), m.ncols(), [conv(e) for e in m])  # noqa: E731
    return (out(T), out(D), out(Dqd), out(Mbar), out(b_conv), out(g_grav), [out(w) for w in om],
            (list(Mbar), list(b_conv), list(g_grav), Tk, V, conv))


def _lagrange_core(rows_T, mass_blocks, f_g_rows, q, dq, planar, params):
    """T, M̄, C q̇, −∂V_g/∂q… by Lagrange's equations from the bodies of :func:`_tmt_core`'s input:
    K = Σ ½ (m ṙᵀṙ + ωᵀ I ω) with ω = T_ω q̇ (planar: θ̇), V = −Σ (m g)ᵀ r; then M = ∂²K/∂q̇²,
    the Christoffel symbols and g = ∂V/∂q (:func:`multibody.symbolic.lagrange._lagrange`)."""
    from ..lagrange import _actuation, _lagrange
    S = lambda m: se.Matrix(sp.Matrix(m).tolist())  # noqa: E731
    qs = se.Matrix([se.Symbol(v.name) for v in q])
    dqs = se.Matrix([se.Symbol(v.name) for v in dq])
    K, V, rows, omegas = se.Integer(0), se.Integer(0), [], []
    for i, blk in enumerate(mass_blocks):
        r, m, mg = S(rows_T[2 * i]), se.sympify(blk[0, 0]), S(f_g_rows[i])
        Jr = r.jacobian(qs)
        v = Jr * dqs
        K += m * (v.T * v)[0] / 2
        V -= sum((mg[k] * r[k] for k in range(r.nrows())), se.Integer(0))
        if planar:
            Jw = S(rows_T[2 * i + 1]).jacobian(qs)
            w = (Jw * dqs)[0]
            K += se.sympify(blk[2, 2]) * w * w / 2
        else:
            Jw = S(rows_T[2 * i + 1])
            w = Jw * dqs
            omegas.append(w)
            K += (w.T * S(blk[3:, 3:]) * w)[0] / 2
        rows += [[Jr[a, c] for c in range(len(q))] for a in range(Jr.nrows())]
        rows += [[Jw[a, c] for c in range(len(q))] for a in range(Jw.nrows())]
    eom = _lagrange(K, V, q, dq, params, *_actuation(None, None, len(q)), False)
    syms = set(q) | set(dq) | set(params)
    conv = C.Converter(syms)
    out = lambda m: sp.Matrix(m.nrows(), m.ncols(), [conv(e) for e in m])  # noqa: E731
    se_mbg = tuple(eom.__dict__["_se_exprs"][k] for k in ("M", "b", "g"))
    Ms = se.Matrix(len(q), len(q), list(se_mbg[0]))
    se_mbg += ((dqs.T * Ms * dqs)[0] / 2, V, conv)
    return out(se.Matrix(rows)), eom.M, eom.b, eom.g, [out(w) for w in omegas], se_mbg


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
