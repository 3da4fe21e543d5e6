"""proNEu in Python: projected Newton-Euler equations of a kinematic tree (proNEu manual, ch. 1-2).

Describe the robot as the MATLAB tool does — a list of :class:`Body` (``m``, ``B_Th``,
``B_r_COG``, ``P_r_PO``, ``A_PB``, ``parent``) and force elements :class:`RotForce` ('rot') and
:class:`LinForce` ('lin') — then

    eom = compute_pne(bodies, force_elements, q, dq, tau, I_a_grav, params=params)

gives ``M q̈ + b + g = Sᵀ τ`` (manual eqs. 1.24-1.26) and the per-body global kinematics
(``eom.kinematics["A_IB"][i]``, ``I_r_O``, ``I_dr_O``, ``I_r_CoG``, ``I_dr_CoG``, ``I_J_O``,
``I_J_CoG``, ``I_Jr``, ``I_Omega``, ``B_Omega``, ``I_dJ_O_dq`` …).

Implementation: the global kinematics are built recursively from the parent (A_IB = A_IP·A_PB,
I_J_O = I_J_O,P − ĩ_d·I_Jr,P + A_IP·∂P_r_PO/∂q, …) and the Jacobian time derivatives enter only
as the bias accelerations J̇·q̇, also recursively — the same quantities ``computePNE`` forms with
``jacobian`` and ``dMATdt``, without their cost. All arithmetic runs in SymEngine; the result is
converted to SymPy.

Parents and force-element bodies are given as a body name, a 0-based index into ``bodies``, or
``None`` / ``-1`` / ``"I"`` for the inertial frame (proNEu's ``0``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import symengine as se
import sympy as sp

from . import _core as C
from .eom import EquationsOfMotion
from .utils import check_orthonormal

__all__ = ["Body", "RotForce", "LinForce", "compute_pne", "INERTIAL"]

INERTIAL = None
_INERTIAL_NAMES = {"I", "inertial", "world", "base"}


@dataclass
class Body:
    """A rigid body of the kinematic tree (proNEu ``body(i)`` struct).

    name     : str
    m        : mass (``body(i).param.m``)
    B_Th     : 3×3 inertia about the CoG in body coordinates (``param.B_Th``)
    B_r_COG  : CoG in body coordinates (``param.B_r_COG``)
    P_r_PO   : body-frame origin in parent coordinates (``cs.P_r_PO``), may depend on q
    A_PB     : rotation B → parent coordinates (``cs.A_PB``), a 3×3 matrix of expressions of q,
               or a sequence of factors ``("x"|"y"|"z", angle)`` / 3×3 matrices whose product it is
    parent   : parent body (name, 0-based index, or None/-1/"I" for the inertial frame)
    """

    name: str
    m: Any
    B_Th: Any
    B_r_COG: Any
    P_r_PO: Any
    A_PB: Any
    parent: Any = None


@dataclass
class RotForce:
    """Torque element ('rot'): torque ``B_T`` (body-B coordinates) acts on ``body_B``, −``B_T`` on ``body_P``."""

    body_P: Any
    body_B: Any
    B_T: Any
    name: str | None = None
    type: str = "rot"


@dataclass
class LinForce:
    """Force element ('lin'): force ``B_F`` (body-B coordinates) acts on ``body_B`` at ``B_r_A``
    (point of action, B coordinates) and −``B_F`` on ``body_P`` at ``P_r_R`` (point of reaction,
    P coordinates)."""

    body_P: Any
    body_B: Any
    P_r_R: Any
    B_r_A: Any
    B_F: Any
    name: str | None = None
    type: str = "lin"


# ---------------------------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------------------------


def _as_symbols(seq, what) -> list[sp.Symbol]:
    if isinstance(seq, sp.MatrixBase):
        seq = list(seq)
    out = [sp.sympify(s) for s in seq]
    for s in out:
        if not isinstance(s, sp.Symbol):
            raise ValueError(f"{what}: entries must be SymPy symbols, got {s!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated symbols")
    return out


def _resolve_ref(ref, names, what, upto=None):
    """Body reference → index (−1 = inertial). ``upto``: must be < upto (tree order)."""
    if ref is None or (isinstance(ref, str) and ref in _INERTIAL_NAMES and ref not in names):
        return -1
    if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool):
        idx = int(ref)
        if idx == -1:
            return -1
        if not 0 <= idx < len(names):
            raise ValueError(f"{what}: body index {idx} does not exist "
                             f"(there are {len(names)} bodies, 0…{len(names) - 1}; −1/None = inertial)")
    elif isinstance(ref, str):
        if ref not in names:
            raise ValueError(f"{what}: no body named {ref!r} (known: {', '.join(names)})")
        idx = names.index(ref)
    else:
        raise ValueError(f"{what}: body reference must be a name, an index or None, got {ref!r}")
    if upto is not None and idx >= upto:
        raise ValueError(f"{what}: parent {names[idx]!r} must come before the body in the list")
    return idx


# ---------------------------------------------------------------------------------------------
# compute_pne
# ---------------------------------------------------------------------------------------------


def compute_pne(bodies: Sequence[Body], force_elements: Sequence, q, dq, tau, gravity=(0, 0, -9.81),
                params=None, *, simplify: bool | float = False, kinematics: bool | str = True,
                frame: str = "auto",
                check_rotations: bool = True,
                progress: Callable[[str], None] | None = None) -> EquationsOfMotion:
    """proNEu ``computePNE``: M, b, g, S of ``M q̈ + b + g = Sᵀ τ`` by projected Newton-Euler.

    The bodies' Jacobians of translation and rotation project the Newton and Euler equations
    onto the generalized coordinates (proNEu manual §2): M = Σ (J_Pᵀ m J_P + J_Rᵀ Θ J_R),
    b and g from the velocity- and gravity-dependent accelerations, Sᵀτ from the force elements.

    Parameters
    ----------
    bodies : sequence of Body
        The kinematic tree, parents before children (proNEu ``body(i)``): mass, inertia about
        the CoG (body coordinates), CoG, origin and rotation A_PB in the parent, parent.
    force_elements : sequence of RotForce or LinForce
        Torque and force elements (proNEu ``ftel``); their τ symbols are the actuators.
    q, dq : sequence of sympy.Symbol
        Generalized coordinates (rad or m) and velocities.
    tau : sequence of sympy.Symbol
        Actuator symbols (N·m or N), in the order of S's rows.
    gravity : sequence of 3, optional
        I_a_grav, the gravity acceleration (m/s²) in the inertial frame; may hold parameters.
    params : sequence of sympy.Symbol, optional
        The model parameters; when given, any other symbol in the input is an error (naming the
        body or element and the symbol). None: every symbol that is not in q, dq, tau counts
        as a parameter.
    simplify : bool or float, optional
        False, True (60 s) or seconds for :meth:`EquationsOfMotion.simplify`.
    kinematics : bool or "full", optional
        True: global kinematics of every body in ``eom.kinematics``; "full": also the Jacobian
        time derivatives I_dJ_O, I_dJ_CoG, I_dJr and dA_IB; False: none.
    frame : {"auto", "body", "inertial"}, optional
        Where the recursion runs: "body" (each body's own coordinates; only the local A_PB
        enter, best for spatial trees), "inertial" (additive recursion in I with merged rotation
        chains A_IB, best for planar mechanisms, where R_z(q1)R_z(q2) = R_z(q1+q2)), or "auto"
        (inertial when every chain merges into one rotation).
    check_rotations : bool, optional
        Check that every A_PB is a rotation matrix (default True; False skips the test for
        rotations built as products of elementary ones).
    progress : callable, optional
        ``progress(message)``, called at each stage.

    Returns
    -------
    EquationsOfMotion
        M (n×n), b, g (n×1), S (m×n); ``extra["f_passive"]`` holds force-element terms that do
        not depend on τ (``M q̈ + b + g = Sᵀτ + f_passive``), if there are any.

    Raises
    ------
    ValueError
        A malformed tree (unknown or later parent, wrong shapes), an A_PB that is not a
        rotation, q/dq of different lengths, a symbol outside ``params``, a force element on an
        unknown body (each message names the body or element).

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody.symbolic import Body, RotForce, compute_pne
    >>> from multibody.symbolic.utils import rot_y
    >>> q, dq, T, m, l = sp.symbols("q dq T m l")
    >>> arm = Body("arm", m, sp.zeros(3, 3), [0, 0, -l], [0, 0, 0], rot_y(q))   # a point mass on a rod
    >>> eom = compute_pne([arm], [RotForce(None, "arm", sp.Matrix([0, T, 0]))], [q], [dq], [T],
    ...                   gravity=[0, 0, -9.81])
    >>> sp.simplify(eom.M), eom.g, eom.S
    (Matrix([[l**2*m]]), Matrix([[9.81*l*m*sin(q)]]), Matrix([[1]]))
    """
    t0 = time.perf_counter()
    say = progress or (lambda msg: None)
    tree = _read_input(bodies, force_elements, q, dq, tau, gravity, params, check_rotations)   # 2.1, 2.2
    say(f"input checked ({len(tree.names)} bodies, {len(tree.felems)} force elements, n = {tree.n})")
    frame = _choose_frame(tree.chains, frame)
    cache = C.ChainCache()
    K = _global_kinematics(tree, frame, cache, say)                                           # 1.1
    M, b, g = _projected_newton_euler(tree, K)                                                 # (1.24)–(1.26)
    f = _force_element_forces(tree, K, frame, cache)                                           # 2.2
    S_rows, passive = _actuator_selection(tree, f)
    say("assembling result")
    n = tree.n
    conv = C.Converter(tree.q + tree.dq + tree.tau + list(tree.params))
    extra = {"method": "pne", "frame": frame, "body_names": list(tree.names), "parents": list(tree.parents)}
    if any(x != 0 for x in passive):
        extra["f_passive"] = C.sp_matrix(passive, conv)
    S = C.sp_matrix(S_rows, conv) if tree.tau else sp.zeros(0, n)
    kin = (_kinematics_output(K, tree.parents, tree.chains, cache, tree.names, tree.qe, tree.dqe, n, kinematics,
                              conv, frame == "inertial") if kinematics else {})
    eom = EquationsOfMotion.from_symengine(q=sp.Matrix(tree.q), dq=sp.Matrix(tree.dq), M=M, b=b, g=g, S=S,
                                           tau=sp.Matrix(tree.tau), params=tree.params, kinematics=kin,
                                           extra=extra)
    eom.extra["seconds"] = time.perf_counter() - t0
    if simplify:
        limit = 60.0 if simplify is True else float(simplify)
        say(f"simplifying (at most {limit:g} s)")
        eom = eom.simplify(time_limit=limit, progress=progress)
    return eom


@dataclass
class _Tree:
    """The checked input of :func:`compute_pne` in SymEngine (manual 2.1 and 2.2)."""

    q: list
    dq: list
    tau: list
    qe: list
    dqe: list
    params: tuple
    names: list
    parents: list
    data: list          # per body (m, B_Th, B_r_COG, P_r_PO, rotation factors of A_PB)
    chains: list        # per body: rotation factors of A_IB (merged)
    felems: list        # ("rot", iP, iB, B_T) | ("lin", iP, iB, P_r_R, B_r_A, B_F)
    grav: list

    @property
    def n(self) -> int:
        return len(self.q)


def _read_input(bodies, force_elements, q, dq, tau, gravity, params, check_rotations) -> _Tree:
    """The input of computePNE checked, everything wrong named: symbols, the kinematic tree (manual
    2.1), the force elements (2.2), gravity; with the merged rotation chains A_IB of the bodies."""
    q = _as_symbols(q, "q")
    dq = _as_symbols(dq, "dq")
    tau = _as_symbols(tau, "tau")
    if len(q) != len(dq):
        raise ValueError(f"q has {len(q)} coordinates but dq has {len(dq)} velocities")
    overlap = (set(q) & set(dq)) | (set(q) & set(tau)) | (set(dq) & set(tau))
    if overlap:
        raise ValueError(f"q, dq and tau must be distinct symbols; shared: "
                         f"{', '.join(sorted(s.name for s in overlap))}")
    bodies = list(bodies)
    force_elements = list(force_elements)
    if not bodies:
        raise ValueError("compute_pne: no bodies")
    names = []
    for i, b in enumerate(bodies):
        if not isinstance(b, Body):
            raise ValueError(f"bodies[{i}]: expected a Body, got {type(b).__name__}")
        if b.name in names:
            raise ValueError(f"body {b.name!r}: name used twice")
        names.append(str(b.name))
    gravity_sp = sp.Matrix(list(gravity)) if not isinstance(gravity, sp.MatrixBase) else gravity
    if len(gravity_sp) != 3:
        raise ValueError(f"gravity: expected 3 entries, got {len(gravity_sp)}")

    params_t, strict = _parameters(bodies, force_elements, gravity_sp, q, dq, tau, params)
    check_syms = _SymbolCheck(q, dq, tau, params_t, strict)
    parents, data = _read_bodies(bodies, names, q, check_syms, check_rotations)     # manual 2.1
    check_syms(gravity_sp, "gravity")
    grav = C.vec3(gravity_sp, "gravity")
    felems = _read_force_elements(force_elements, names, tau, check_syms)        # manual 2.2
    qe = [C.to_se(s) for s in q]
    dqe = [C.to_se(s) for s in dq]
    chains = []
    for i, (_, _, _, _, factors) in enumerate(data):
        chains.append(C.merge(chains[parents[i]] if parents[i] >= 0 else [], factors))
    return _Tree(q, dq, tau, qe, dqe, params_t, names, parents, data, chains, felems, grav)


def _read_bodies(bodies, names, q, check_syms, check_rotations):
    """Manual 2.1, the kinematic tree: parents, mass properties, P_r_PO and A_PB of every body."""
    qs = set(q)
    parents, data = [], []
    for i, b in enumerate(bodies):
        where = f"body {b.name!r}"
        parents.append(_resolve_ref(b.parent, names, where, upto=i))
        m = C.to_se(b.m)
        try:
            Th = C.mat3(b.B_Th, f"{where}: B_Th")
            rc = C.vec3(b.B_r_COG, f"{where}: B_r_COG")
            p = C.vec3(b.P_r_PO, f"{where}: P_r_PO")
        except (TypeError, sp.SympifyError) as exc:
            raise ValueError(f"{where}: {exc}") from exc
        if any(Th[r][c] - Th[c][r] != 0 for r in range(3) for c in range(r)):
            raise ValueError(f"{where}: B_Th is not symmetric")
        factors = _factors(b.A_PB, q, where, check_rotations)
        A = C.product(factors)
        for obj, part in ((b.m, "m"), (b.B_Th, "B_Th"), (b.B_r_COG, "B_r_COG"),
                          (b.P_r_PO, "P_r_PO"), (_factor_input(b.A_PB), "A_PB")):
            check_syms(obj, f"{where}: {part}")
        for e in (m, *[x for r in Th for x in r]):
            if C.free_symbols(e) & qs:
                raise ValueError(f"{where}: mass/inertia must not depend on the coordinates")
        if check_rotations and any(f.axis is None for f in factors):
            check_orthonormal(C.sp_matrix(A), where, what="A_PB")  # elementary factors are rotations
        data.append((m, Th, rc, p, factors))
    return parents, data


def _read_force_elements(force_elements, names, tau, check_syms) -> list:
    """Manual 2.2, the force elements: 'rot' torques and 'lin' forces between two bodies."""
    felems = []
    for k, fe in enumerate(force_elements):
        label = fe.name or f"force element {k} ({getattr(fe, 'type', '?')})"
        kind = getattr(fe, "type", None)
        if kind not in ("rot", "lin"):
            raise ValueError(f"{label}: type must be 'rot' or 'lin', got {kind!r}")
        iB = _resolve_ref(fe.body_B, names, f"{label}: body_B")
        iP = _resolve_ref(fe.body_P, names, f"{label}: body_P")
        if iB == -1:
            raise ValueError(f"{label}: body_B (body of action) cannot be the inertial frame")
        if iB == iP:
            raise ValueError(f"{label}: body_P and body_B are the same body")
        if kind == "rot":
            check_syms(fe.B_T, f"{label}: B_T", allowed_extra=tau)
            felems.append(("rot", iP, iB, C.vec3(fe.B_T, f"{label}: B_T")))
        else:
            for attr in ("P_r_R", "B_r_A"):
                check_syms(getattr(fe, attr), f"{label}: {attr}")
            check_syms(fe.B_F, f"{label}: B_F", allowed_extra=tau)
            felems.append(("lin", iP, iB, C.vec3(fe.P_r_R, f"{label}: P_r_R"),
                           C.vec3(fe.B_r_A, f"{label}: B_r_A"), C.vec3(fe.B_F, f"{label}: B_F")))
    return felems


def _parameters(bodies, force_elements, gravity_sp, q, dq, tau, params):
    """The declared parameters (strict checking), or every other symbol found in the input."""
    if params is not None:
        return tuple(_as_symbols(params, "params")), True
    found = set()
    for b in bodies:
        for attr in ("m", "B_Th", "B_r_COG", "P_r_PO", "A_PB"):
            found |= C.free_symbols(_factor_input(getattr(b, attr)))
    for fe in force_elements:
        for attr in ("B_T", "P_r_R", "B_r_A", "B_F"):
            if hasattr(fe, attr):
                found |= C.free_symbols(getattr(fe, attr))
    found |= C.free_symbols(gravity_sp)
    return tuple(sorted(found - set(q) - set(dq) - set(tau), key=lambda s: s.name)), False


class _SymbolCheck:
    """``check(obj, where, allowed_extra=())``: no rates anywhere, τ only where allowed, and (strict)
    nothing but coordinates and declared parameters."""

    def __init__(self, q, dq, tau, params, strict):
        self.qs, self.dqs, self.taus, self.pset, self.strict = set(q), set(dq), set(tau), set(params), strict

    def __call__(self, obj, where, allowed_extra=()):
        syms = C.free_symbols(obj)
        bad_rate = syms & self.dqs
        if bad_rate:
            raise ValueError(f"{where}: contains velocity symbol(s) "
                             f"{', '.join(sorted(s.name for s in bad_rate))}; only q and parameters are allowed")
        bad_tau = (syms & self.taus) - set(allowed_extra)
        if bad_tau:
            raise ValueError(f"{where}: contains actuator symbol(s) "
                             f"{', '.join(sorted(s.name for s in bad_tau))}; τ belongs in force elements")
        if self.strict:
            unknown = syms - self.qs - self.pset - set(allowed_extra)
            if unknown:
                raise ValueError(f"{where}: unknown symbol(s) {', '.join(sorted(s.name for s in unknown))} "
                                 f"(neither a coordinate nor a declared parameter)")


def _choose_frame(chains, frame: str) -> str:
    """Additive inertial-frame recursion stays short when every body's rotation chain merges into at
    most one elementary rotation (planar mechanisms); otherwise body coordinates."""
    if frame == "auto":
        frame = "inertial" if max(len(c) for c in chains) <= 1 else "body"
    if frame not in ("body", "inertial"):
        raise ValueError(f"frame must be 'auto', 'body' or 'inertial', got {frame!r}")
    return frame


def _global_kinematics(tree: _Tree, frame: str, cache, say) -> list[dict]:
    """Manual 1.1: per body, recursively from its parent, the Jacobians of the origin and the CoG,
    the rotational Jacobian J_R, Ω, and the bias accelerations J̇ q̇ (q̈ = 0), in the working frame
    (each body's own coordinates, or I); the rotational terms also in body coordinates."""
    # Every quantity of body B is kept in B coordinates: B_Jr = A_PBᵀ(P_Jr) + B_Jr,loc, ...;
    # the projections (1.24)-(1.26) do not depend on the frame the Jacobians are written in, and
    # body coordinates need only the local rotations A_PB, which keeps the expressions short.
    qe, dqe, n, parents, grav = tree.qe, tree.dqe, tree.n, tree.parents, tree.grav
    Z3n = lambda: [[C.ZERO] * n for _ in range(3)]  # noqa: E731
    K = []  # per body: dict of SymEngine quantities (body coordinates)
    zero3 = [C.ZERO, C.ZERO, C.ZERO]
    root = {"J": Z3n(), "Jr": Z3n(), "Om": zero3, "dOm_b": zero3, "a_b": zero3, "grav": grav}

    def bias(Jac):
        """(d/dt Jac)·q̇ with q̈ = 0, for a 3×n Jacobian of SymEngine expressions."""
        return [sum((C.time_derivative(Jac[r][k], qe, dqe) * dqe[k] for k in range(n)
                     if Jac[r][k] != 0 and not Jac[r][k].is_number), C.ZERO) for r in range(3)]

    def mtv_cols(A, J):
        return [[A[0][r] * J[0][k] + A[1][r] * J[1][k] + A[2][r] * J[2][k] for k in range(n)]
                for r in range(3)]

    for i, (m, Th, rc, p, factors) in enumerate(tree.data):
        P = root if parents[i] < 0 else K[parents[i]]
        A = C.product(factors)                                   # A_PB
        Jloc = C.chain_local_omega(factors, qe, n)          # B coordinates
        Jp = C.jac_of_vec(p, qe)
        Jc = C.jac_of_vec(rc, qe)
        p_dot = C.jac_times(Jp, dqe, n)
        if frame == "inertial":
            A_IB = cache.matrix(tree.chains[i])
            A_IP = cache.matrix(tree.chains[parents[i]]) if parents[i] >= 0 else C.eye3()
            JlocI = C.matvec_cols(A_IB, Jloc, n)
            Jr = [[x + y for x, y in zip(r1, r2)] for r1, r2 in zip(P["Jr"], JlocI)]
            w_rel = C.jac_times(JlocI, dqe, n)
            Om = C.add(P["Om"], w_rel)
            dOm_b = C.add(C.add(P["dOm_b"], C.cross(P["Om"], w_rel)), C.mv(A_IB, bias(Jloc)))
            d = C.mv(A_IP, p)
            dJr = C.cross_cols(d, P["Jr"], n)
            AJp = C.matvec_cols(A_IP, Jp, n)
            J_O = [[P["J"][r][k] - dJr[r][k] + AJp[r][k] for k in range(n)] for r in range(3)]
            a_O_b = C.add(P["a_b"], C.cross(P["dOm_b"], d))
            a_O_b = C.add(a_O_b, C.cross(P["Om"], C.cross(P["Om"], d)))
            a_O_b = C.add(a_O_b, C.scale(2, C.cross(P["Om"], C.mv(A_IP, p_dot))))
            a_O_b = C.add(a_O_b, C.mv(A_IP, bias(Jp)))
            e = C.mv(A_IB, rc)
            eJr = C.cross_cols(e, Jr, n)
            AJc = C.matvec_cols(A_IB, Jc, n)
            J_S = [[J_O[r][k] - eJr[r][k] + AJc[r][k] for k in range(n)] for r in range(3)]
            a_S_b = C.add(a_O_b, C.cross(dOm_b, e))
            a_S_b = C.add(a_S_b, C.cross(Om, C.cross(Om, e)))
            a_S_b = C.add(a_S_b, C.scale(2, C.cross(Om, C.mv(A_IB, C.jac_times(Jc, dqe, n)))))
            a_S_b = C.add(a_S_b, C.mv(A_IB, bias(Jc)))
            grav_B = grav
            K.append({"factors": factors, "A_PB": A, "A_IB": A_IB, "p": p, "rc": rc, "J": J_O,
                      "Jr": Jr, "Om": Om, "dOm_b": dOm_b, "a_b": a_O_b, "J_S": J_S,
                      "a_S_b": a_S_b, "grav": grav})
            # rotational terms need body coordinates
            Jr_B = mtv_cols(A_IB, Jr) if any(x != 0 for row in Th for x in row) else None
            Om_B, dOm_B = (C.mtv(A_IB, Om), C.mtv(A_IB, dOm_b)) if Jr_B is not None else (None, None)
        else:
            Jr = [[x + y for x, y in zip(r1, r2)] for r1, r2 in zip(mtv_cols(A, P["Jr"]), Jloc)]
            w_rel = C.jac_times(Jloc, dqe, n)
            Om_P = C.mtv(A, P["Om"])
            Om = C.add(Om_P, w_rel)
            dOm_b = C.add(C.add(C.mtv(A, P["dOm_b"]), C.cross(Om_P, w_rel)), bias(Jloc))
            # origin: B_J_O = A_PBᵀ(P_J − p̃ P_Jr + ∂p/∂q) ; bias acceleration
            pJr = C.cross_cols(p, P["Jr"], n)
            J_O = mtv_cols(A, [[P["J"][r][k] - pJr[r][k] + Jp[r][k] for k in range(n)] for r in range(3)])
            a_P = C.add(P["a_b"], C.cross(P["dOm_b"], p))
            a_P = C.add(a_P, C.cross(P["Om"], C.cross(P["Om"], p)))
            a_P = C.add(a_P, C.scale(2, C.cross(P["Om"], p_dot)))
            a_P = C.add(a_P, bias(Jp))
            a_O_b = C.mtv(A, a_P)
            grav_B = C.mtv(A, P["grav"])
            # centre of gravity
            cJr = C.cross_cols(rc, Jr, n)
            J_S = [[J_O[r][k] - cJr[r][k] + Jc[r][k] for k in range(n)] for r in range(3)]
            a_S_b = C.add(a_O_b, C.cross(dOm_b, rc))
            a_S_b = C.add(a_S_b, C.cross(Om, C.cross(Om, rc)))
            a_S_b = C.add(a_S_b, C.scale(2, C.cross(Om, C.jac_times(Jc, dqe, n))))
            a_S_b = C.add(a_S_b, bias(Jc))
            K.append({"factors": factors, "A_PB": A, "p": p, "rc": rc, "J": J_O, "Jr": Jr,
                      "Om": Om, "dOm_b": dOm_b, "a_b": a_O_b, "J_S": J_S, "a_S_b": a_S_b,
                      "grav": grav_B, "A_IB": None})
            Jr_B, Om_B, dOm_B = Jr, Om, dOm_b
        K[-1].update({"m": m, "Th": Th, "Jr_B": Jr_B, "Om_B": Om_B, "dOm_B": dOm_B})
        say(f"body {i + 1}/{len(tree.data)} {tree.names[i]!r} done")
    return K


def _projected_newton_euler(tree: _Tree, K: list[dict]):
    """Eqs. (1.24)–(1.26): M = Σ J_Sᵀ m J_S + J_Rᵀ Θ J_R, b = Σ J_Sᵀ m J̇_S q̇ + J_Rᵀ(Θ J̇_R q̇ + Ω × Θ Ω),
    g = −Σ J_Sᵀ F_g; upper triangle summed, mirrored at the end."""
    n = tree.n
    Mm = [[C.ZERO] * n for _ in range(n)]
    bv = [C.ZERO] * n
    gv = [C.ZERO] * n
    for Kb in K:
        m, Th, J_S, a_S_b, grav_B = Kb["m"], Kb["Th"], Kb["J_S"], Kb["a_S_b"], Kb["grav"]
        Jr_B, Om_B, dOm_B = Kb["Jr_B"], Kb["Om_B"], Kb["dOm_B"]
        # projected Newton-Euler contributions (1.24)-(1.26), in body coordinates
        if m != 0:
            cols = [k for k in range(n) if any(J_S[r][k] != 0 for r in range(3))]
            for ia, a in enumerate(cols):
                ja = [J_S[0][a], J_S[1][a], J_S[2][a]]
                for b_ in cols[ia:]:
                    Mm[a][b_] = Mm[a][b_] + m * C.dot(ja, [J_S[0][b_], J_S[1][b_], J_S[2][b_]])
                bv[a] = bv[a] + m * C.dot(ja, a_S_b)
                gv[a] = gv[a] - m * C.dot(ja, grav_B)
        if Jr_B is not None and any(x != 0 for row in Th for x in row):
            ThJ = [[Th[r][0] * Jr_B[0][k] + Th[r][1] * Jr_B[1][k] + Th[r][2] * Jr_B[2][k]
                    for k in range(n)] for r in range(3)]
            rot_b = C.add(C.mv(Th, dOm_B), C.cross(Om_B, C.mv(Th, Om_B)))
            cols = [k for k in range(n) if any(Jr_B[r][k] != 0 for r in range(3))]
            for ia, a in enumerate(cols):
                for b_ in cols[ia:]:
                    Mm[a][b_] = Mm[a][b_] + (Jr_B[0][a] * ThJ[0][b_] + Jr_B[1][a] * ThJ[1][b_]
                                             + Jr_B[2][a] * ThJ[2][b_])
                bv[a] = bv[a] + C.dot([Jr_B[0][a], Jr_B[1][a], Jr_B[2][a]], rot_b)
    for a in range(n):
        for b_ in range(a):
            Mm[a][b_] = Mm[b_][a]
    return Mm, bv, gv


def _force_element_forces(tree: _Tree, K: list[dict], frame: str, cache) -> list:
    """Manual 2.2: generalized forces of the force elements — a 'rot' torque B_T acts on body B
    and −B_T on body P (J_Rᵀ projections), a 'lin' force B_F acts on B at B_r_A and −B_F on P at
    P_r_R (point-Jacobian projections)."""
    # vectors go into the working frame of each body: its own frame, or I for frame="inertial"
    n, parents, qe = tree.n, tree.parents, tree.qe
    chains, inertial = tree.chains, frame == "inertial"
    fv = [C.ZERO] * n

    def rel_rot(iP, iB):
        """A_PB between any two bodies (P may be −1 = inertial)."""
        R, j = K[iB]["A_PB"], parents[iB]
        while j != iP and j >= 0:
            R = C.mm(K[j]["A_PB"], R)
            j = parents[j]
        if j == iP:
            return R
        return C.mm(C.transpose(cache.matrix(chains[iP])), cache.matrix(chains[iB]))

    def work(ib, v):
        """Vector in body-ib coordinates → body ib's working frame."""
        return C.mv(K[ib]["A_IB"], v) if inertial else v

    def to_P(iP, iB, v):
        """Vector in body-iB coordinates → body iP's working frame."""
        return C.mv(K[iB]["A_IB"], v) if inertial else C.mv(rel_rot(iP, iB), v)

    def point_jac(ib, B_r):
        Kb = K[ib]
        rw = work(ib, B_r)
        rJr = C.cross_cols(rw, Kb["Jr"], n)
        Jr_ = C.jac_of_vec(B_r, qe)
        if inertial:
            Jr_ = C.matvec_cols(Kb["A_IB"], Jr_, n)
        return [[Kb["J"][r][k] - rJr[r][k] + Jr_[r][k] for k in range(n)] for r in range(3)]

    for fe in tree.felems:
        if fe[0] == "rot":
            _, iP, iB, B_T = fe
            contrib = C.jacT_times(K[iB]["Jr"], work(iB, B_T), n)
            if iP >= 0:
                contrib = [c - x for c, x in zip(contrib, C.jacT_times(K[iP]["Jr"], to_P(iP, iB, B_T), n))]
        else:
            _, iP, iB, P_r_R, B_r_A, B_F = fe
            contrib = C.jacT_times(point_jac(iB, B_r_A), work(iB, B_F), n)
            if iP >= 0:
                contrib = [c - x for c, x in
                           zip(contrib, C.jacT_times(point_jac(iP, P_r_R), to_P(iP, iB, B_F), n))]
        fv = [a + b_ for a, b_ in zip(fv, contrib)]
    return fv


def _actuator_selection(tree: _Tree, fv: list):
    """S from f = Sᵀτ (∂f/∂τ; f must be linear in τ), and the part of f without τ (passive)."""
    n, tau, taus = tree.n, tree.tau, set(tree.tau)
    taue = [C.to_se(t) for t in tau]
    S_rows = [[fv[k].diff(t) for k in range(n)] for t in taue]
    passive = [C.expand(fv[k] - sum((S_rows[j][k] * taue[j] for j in range(len(tau))), C.ZERO))
               for k in range(n)]
    for j, t in enumerate(tau):
        if all(S_rows[j][k] == 0 for k in range(n)):
            raise ValueError(f"actuator {t} appears in no force element")
    for row in S_rows:
        for k in range(n):
            if C.free_symbols(row[k]) & taus:
                raise ValueError("force elements must be linear in the actuator symbols τ")
    return S_rows, passive


def _is_factor_list(A) -> bool:
    return isinstance(A, (list, tuple)) and len(A) > 0 and all(
        (isinstance(f, tuple) and len(f) == 2 and isinstance(f[0], str))
        or isinstance(f, (sp.MatrixBase, se.DenseMatrix)) for f in A)


def _factor_input(A):
    """What an A_PB holds, for symbol checks: the matrix, or the angles/matrices of a factor list."""
    if _is_factor_list(A):
        return [f[1] if isinstance(f, tuple) else f for f in A]
    return A


def _factors(A, q, where, check=True) -> list:
    """A_PB (matrix or factor list) → chain of C.Factor."""
    qe = [C.to_se(s) for s in q]
    if _is_factor_list(A):
        out = []
        for f in A:
            if isinstance(f, tuple):
                ax, ang = f
                if ax not in ("x", "y", "z"):
                    raise ValueError(f"{where}: A_PB factor axis must be 'x', 'y' or 'z', got {ax!r}")
                out = C.merge(out, [C.Factor(ax, C.to_se(ang))])
            else:
                Mf = C.mat3(f, f"{where}: A_PB factor")
                if check:
                    check_orthonormal(C.sp_matrix(Mf), where, what="A_PB factor")
                out = C.merge(out, C.factor_rotation(Mf, qe))
        return out
    try:
        Am = C.mat3(A, f"{where}: A_PB")
    except (TypeError, sp.SympifyError) as exc:
        raise ValueError(f"{where}: A_PB: {exc}") from exc
    return C.factor_rotation(Am, qe)


def _kinematics_output(K, parents, chains, cache, names, qe, dqe, n, level, conv, inertial=False):
    """Global (inertial-frame) kinematics of every body from the body-frame recursion."""
    keys = ("A_IB", "I_r_O", "I_dr_O", "I_r_CoG", "I_dr_CoG", "I_J_O", "I_J_CoG", "I_Jr",
            "I_Omega", "I_dJ_O_dq", "I_dJ_CoG_dq", "I_dJr_dq", "B_Omega", "B_J_O", "B_Jr")
    out = {k: [] for k in keys}
    out["names"] = list(names)
    if level == "full":
        for k in ("dA_IB", "I_dJ_O", "I_dJ_CoG", "I_dJr"):
            out[k] = []
    I_r = []
    for i, Kb in enumerate(K):
        A_IB = cache.matrix(chains[i])
        A_IP = cache.matrix(chains[parents[i]]) if parents[i] >= 0 else C.eye3()
        r_O = C.mv(A_IP, Kb["p"]) if parents[i] < 0 else C.add(I_r[parents[i]], C.mv(A_IP, Kb["p"]))
        I_r.append(r_O)
        if inertial:  # working frame is I: body-frame values by A_IBᵀ
            cols = lambda J: J  # noqa: E731
            vec = lambda v: v  # noqa: E731
            bcols = lambda J: [[A_IB[0][r] * J[0][k] + A_IB[1][r] * J[1][k] + A_IB[2][r] * J[2][k]  # noqa: E731
                                for k in range(n)] for r in range(3)]
            bvec = lambda v: C.mtv(A_IB, v)  # noqa: E731
        else:
            cols = lambda J: C.matvec_cols(A_IB, J, n)  # noqa: E731
            vec = lambda v: C.mv(A_IB, v)  # noqa: E731
            bcols = lambda J: J  # noqa: E731
            bvec = lambda v: v  # noqa: E731
        I_J, I_JS, I_Jr = cols(Kb["J"]), cols(Kb["J_S"]), cols(Kb["Jr"])
        vals = {
            "A_IB": A_IB, "I_r_O": r_O,
            "I_dr_O": vec(C.jac_times(Kb["J"], dqe, n)),
            "I_r_CoG": C.add(r_O, C.mv(A_IB, Kb["rc"])),
            "I_dr_CoG": vec(C.jac_times(Kb["J_S"], dqe, n)),
            "I_J_O": I_J, "I_J_CoG": I_JS, "I_Jr": I_Jr, "I_Omega": vec(Kb["Om"]),
            "I_dJ_O_dq": vec(Kb["a_b"]), "I_dJ_CoG_dq": vec(Kb["a_S_b"]),
            "I_dJr_dq": vec(Kb["dOm_b"]),
            "B_Omega": bvec(Kb["Om"]), "B_J_O": bcols(Kb["J"]), "B_Jr": bcols(Kb["Jr"]),
        }
        for k in keys:
            out[k].append(C.sp_matrix(vals[k], conv))
        if level == "full":
            td = lambda M_: [[C.time_derivative(x, qe, dqe) for x in row] for row in M_]  # noqa: E731
            out["dA_IB"].append(C.sp_matrix(td(A_IB), conv))
            out["I_dJ_O"].append(C.sp_matrix(td(I_J), conv))
            out["I_dJ_CoG"].append(C.sp_matrix(td(I_JS), conv))
            out["I_dJr"].append(C.sp_matrix(td(I_Jr), conv))
    return out
