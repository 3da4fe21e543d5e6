"""Lagrange's equations from the kinetic and potential energy, with C from Christoffel symbols.

As in DP_EOM.m (OpenDE report, appendix D.1) and the Lagrange form of the slides::

    K = ½ q̇ᵀ M(q) q̇ = Σ_i ½ (m_i v_ciᵀ v_ci + ω_iᵀ I_i ω_i),     V = −Σ_i m_i gᵀ r_ci
    M = ∂²K/∂q̇²                                  (D_q in DP_EOM)
    c_ijk = ½ (∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)       (c_q{ii,jj,kk})
    C_kj  = Σ_i c_ijk q̇_i                         (C_q)
    g     = ∂V/∂q                                 (g_q)
    M q̈ + C q̇ + g = Sᵀ τ

The result is an :class:`EquationsOfMotion` with ``b = C q̇``; ``extra`` holds ``"C"`` (the
matrix), ``"christoffel"`` (nested list c[i][j][k] = c_ijk), ``"kinetic_energy"`` and
``"potential_energy"``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

import symengine as se

from ..model.mechanism import Mechanism
from ..model.model import Model
from ._core import Converter, free_symbols
from .eom import EquationsOfMotion, register_method
from .tmt.system import TMTSystem

__all__ = ["lagrange_from_energies", "derive_lagrange", "christoffel_C"]


def christoffel_C(M: sp.Matrix, q, dq):
    """Coriolis matrix C(q, q̇) and Christoffel symbols c[i][j][k] of the first kind of M(q).

    c[i][j][k] = ½ (∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k) and C_kj = Σ_i c[i][j][k] q̇_i,
    so that the Coriolis and centrifugal terms are b = C q̇.

    Parameters
    ----------
    M : sympy.Matrix, shape (n, n)
        Mass matrix as a function of q.
    q, dq : sequence of sympy.Symbol
        The n coordinates and their rates.

    Returns
    -------
    C : sympy.Matrix, shape (n, n)
        The Coriolis matrix.
    c : list of list of list
        The Christoffel symbols, ``c[i][j][k]``.

    Raises
    ------
    ValueError
        ``M`` is not n×n, or q and dq have different lengths.

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody.symbolic import christoffel_C
    >>> r, th, dr, dth, m = sp.symbols("r th dr dth m")
    >>> C, c = christoffel_C(sp.diag(m, m * r**2), [r, th], [dr, dth])     # a point in polar coordinates
    >>> C * sp.Matrix([dr, dth])                                           # centrifugal and Coriolis terms
    Matrix([
    [ -dth**2*m*r],
    [2*dr*dth*m*r]])
    """
    q, dq = list(q), list(dq)
    n = len(q)
    if len(dq) != n:
        raise ValueError(f"christoffel_C: q has {n} entries but dq has {len(dq)}")
    M = sp.Matrix(M)
    if M.shape != (n, n):
        raise ValueError(f"christoffel_C: M must be {n}×{n} (one row and column per coordinate), got "
                         f"{M.rows}×{M.cols}")
    Ms = se.Matrix(M.tolist())
    dM = [Ms.diff(se.sympify(qi)) for qi in q]
    conv = Converter(free_symbols(sp.Matrix(M)) | set(q))
    c = [[[conv((dM[i][k, j] + dM[j][k, i] - dM[k][i, j]) / 2) for k in range(n)] for j in range(n)]
         for i in range(n)]
    C = sp.zeros(n, n)
    for k in range(n):
        for j in range(n):
            C[k, j] = sp.Add(*[c[i][j][k] * dq[i] for i in range(n)])
    return C, c


def _is_quadratic_form(T, M, q, dq, params, trials: int = 3) -> bool:
    """Numerically: T(q, q̇) = ½ q̇ᵀ M(q) q̇ at random points (exact checks are too slow for big T)."""
    syms = list(q) + list(dq) + list(params)
    dqs = se.Matrix([se.sympify(v) for v in dq])
    Ms = M if isinstance(M, se.DenseMatrix) else se.Matrix(sp.Matrix(M).tolist())
    rest = se.sympify(T) - (dqs.T * Ms * dqs)[0] / 2
    f = se.Lambdify([se.sympify(v) for v in syms], [rest, se.sympify(T)], real=False)
    ev = lambda x: np.asarray(f(x)).reshape(-1)  # noqa: E731
    rng = np.random.default_rng(0)
    for _ in range(trials):
        val, tot = ev(rng.uniform(0.2, 1.3, len(syms)))
        if not np.isfinite(val) or abs(val) > 1e-9 * (1.0 + abs(tot)):
            return False
    return True


def lagrange_from_energies(T, V, q, dq, params=(), tau=None, S=None, simplify=False) -> EquationsOfMotion:
    """Equations of motion from kinetic energy T(q, q̇) and potential energy V(q).

    M = ∂²T/∂q̇², b = C(q, q̇) q̇ with the Christoffel symbols of M (:func:`christoffel_C`),
    g = ∂V/∂q, for M q̈ + b + g = Sᵀ τ.

    Parameters
    ----------
    T : sympy expression
        Kinetic energy (J); a quadratic form in q̇ (scleronomic: M may not contain q̇).
    V : sympy expression
        Potential energy (J), a function of q and the parameters.
    q, dq : sequence of sympy.Symbol
        Coordinates and rates, of equal length.
    params : sequence of sympy.Symbol, optional
        The parameters; every other symbol in T and V must be a coordinate or a rate.
    tau : sequence of sympy.Symbol, optional
        Actuator symbols (default none: S is 0×n).
    S : matrix, optional
        Selection matrix (m×n); required when ``tau`` has fewer entries than q.
    simplify : bool or float, optional
        Simplify the results (False, True or seconds).

    Returns
    -------
    EquationsOfMotion
        M (n×n), b, g (n×1), S.

    Raises
    ------
    ValueError
        q and dq of different lengths; a symbol that is no coordinate, rate or parameter; T not
        quadratic in q̇; tau and S of inconsistent sizes.

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody.symbolic import lagrange_from_energies
    >>> x, dx, m, k = sp.symbols("x dx m k")
    >>> eom = lagrange_from_energies(m * dx**2 / 2, k * x**2 / 2, [x], [dx], params=[m, k])
    >>> eom.M, eom.b, eom.g                     # m ẍ + k x = 0
    (Matrix([[m]]), Matrix([[0]]), Matrix([[k*x]]))
    """
    q = sp.Matrix(list(q))
    dq = sp.Matrix(list(dq))
    n = len(q)
    if len(dq) != n:
        raise ValueError(f"q has {n} entries but dq has {len(dq)}")
    T = sp.sympify(T)
    V = sp.sympify(V)
    params = tuple(sp.sympify(p) for p in params)
    allowed = set(q) | set(dq) | set(params)
    for what, ex, ok in (("kinetic energy T", T, allowed), ("potential energy V", V, set(q) | set(params))):
        bad = ex.free_symbols - ok
        if bad:
            raise ValueError(f"{what}: contains symbol(s) {', '.join(sorted(map(str, bad)))} that are "
                             "neither coordinates nor parameters")
    tau, S = _actuation(tau, S, n)
    return _lagrange(T, V, q, dq, params, tau, S, simplify, T_sympy=T, V_sympy=V)


def _actuation(tau, S, n):
    if tau is None:
        tau = sp.zeros(0, 1)
        S = sp.zeros(0, n) if S is None else sp.Matrix(S)
    else:
        tau = sp.Matrix(list(tau))
        S = sp.eye(n) if S is None and len(tau) == n else sp.Matrix(S) if S is not None else None
        if S is None:
            raise ValueError(f"tau has {len(tau)} entries, q has {n}: give the selection matrix S")
    if S.shape != (len(tau), n):
        raise ValueError(f"S has shape {S.shape}, expected ({len(tau)}, {n})")
    return tau, S


def _lagrange(T, V, q, dq, params, tau, S, simplify, T_sympy=None, V_sympy=None) -> EquationsOfMotion:
    """M = ∂²T/∂q̇², Christoffel C, g = ∂V/∂q; T and V may be SymPy or SymEngine expressions.

    With SymEngine the derivatives run there and everything converts back to SymPy once, through
    one memo (the entries of M, C and g share most subexpressions).
    """
    n = len(q)
    if n == 0:
        raise ValueError("Lagrange: no coordinates (q is empty)")
    qs = [se.Symbol(v.name) for v in q]
    dqs = [se.Symbol(v.name) for v in dq]
    Ts, Vs = se.sympify(T), se.sympify(V)
    first = [Ts.diff(v) for v in dqs]
    upper = [[first[i].diff(dqs[j]) if j >= i else None for j in range(n)] for i in range(n)]
    Mse = se.Matrix([[upper[i][j] if j >= i else upper[j][i] for j in range(n)] for i in range(n)])
    dM = [Mse.diff(v) for v in qs]
    c_se = [[[(dM[i][k, j] + dM[j][k, i] - dM[k][i, j]) / 2 for k in range(n)] for j in range(n)]
            for i in range(n)]
    C_se = se.Matrix([[sum((c_se[i][j][k] * dqs[i] for i in range(n)), se.Integer(0)) for j in range(n)]
                      for k in range(n)])
    g_se = se.Matrix([Vs.diff(v) for v in qs])
    b_se = C_se * se.Matrix(dqs)
    conv = Converter(set(q) | set(dq) | set(params))
    out = lambda m: sp.Matrix(m.nrows(), m.ncols(), [conv(e) for e in m])  # noqa: E731
    # the checks read the SymEngine entries: M, b, g are converted once, after the readable pass
    if set().union(*[e.free_symbols for e in Mse]) & set(dqs):
        raise ValueError("kinetic energy T is not a quadratic form in dq (M = ∂²T/∂dq² depends on dq)")
    T_sp = T_sympy if T_sympy is not None else conv(Ts)
    V_sp = V_sympy if V_sympy is not None else conv(Vs)
    if not _is_quadratic_form(Ts, Mse, q, dq, params):
        raise ValueError("kinetic energy T has terms that are not quadratic in dq (linear or constant terms)")
    lazy = not simplify
    if simplify:
        M = out(Mse)
        fn = sp.simplify if simplify is True else simplify
        M = M.applyfunc(fn)
        C, c = christoffel_C(M, q, dq)
        g = sp.Matrix([V_sp.diff(v) for v in q])
        C, g = C.applyfunc(fn), g.applyfunc(fn)
        b = (C * dq).applyfunc(fn)
    else:
        C = out(C_se)
        c = [[[conv(c_se[i][j][k]) for k in range(n)] for j in range(n)] for i in range(n)]
        M = b = g = sp.zeros(0, 0)
    eom = EquationsOfMotion(q=q, dq=dq, M=M, b=b, g=g, S=S, tau=tau, params=params,
                            extra={"C": C, "christoffel": c, "kinetic_energy": T_sp, "potential_energy": V_sp})
    if lazy:   # M, b, g stay SymEngine until read (EquationsOfMotion.from_symengine)
        eom._set_symengine(list(Mse), list(b_se), list(g_se))
    return eom


@register_method("lagrange", accepts=(Model, Mechanism, TMTSystem),
                 summary="Lagrange: energies, Christoffel symbols (DP_EOM)")
def derive_lagrange(model, q=None, dq=None, tau=None, *, S=None, actuated=None, simplify=False,
                    progress=None) -> EquationsOfMotion:
    """Lagrange equations of a Model (revolute/prismatic/helical/fixed joints).

    Kinetic energy from CoM velocities and body-frame angular velocities (joint axes),
    K = Σ ½ (m v_cᵀ v_c + ω_Bᵀ I ω_B), potential energy V = −Σ m gᵀ r_c, then M = ∂²K/∂q̇²,
    Christoffel C and g = ∂V/∂q as in :func:`lagrange_from_energies`. A
    :class:`~multibody.model.mechanism.Mechanism` or a :class:`TMTSystem` (a tree with
    constraints, springs, dampers, forces and contacts) is derived by
    :meth:`TMTSystem.equations` with ``method="lagrange"``: the bodies' M̄, convective and
    gravity terms by Lagrange's equations, the elements as the TMT paper writes them (eqs. 4–9).

    Parameters
    ----------
    model : Model, Mechanism or TMTSystem
        A model with revolute, prismatic, helical or fixed joints (numeric or symbolic).
    q, dq : sequence of sympy.Symbol, optional
        Coordinate (rad or m) and rate symbols; default ``q0…``, ``dq0…``.
    tau : sequence of sympy.Symbol, optional
        Actuator symbols (N·m or N); default ``tau0…``, one per row of S.
    S : matrix, optional
        Selection matrix (m×n): the joint forces are Sᵀ τ (default: the identity, every joint
        actuated).
    actuated : sequence of int, optional
        Dof indices that carry an actuator (builds S when ``S`` is None).
    simplify : bool or float, optional
        Simplify the system's expressions (False, True or seconds).
    progress : callable, optional
        ``progress(message)``, called at each stage.

    Returns
    -------
    EquationsOfMotion
        M (n×n), b, g (n×1), S (m×n), ``extra["method"] == "lagrange"``.

    Raises
    ------
    TypeError
        ``model`` is none of Model, Mechanism, TMTSystem; ``q``, ``dq`` or ``tau`` is not a
        sequence of symbols.
    ValueError
        Symbols or S of the wrong size, an ``actuated`` dof that does not exist, a model without
        degrees of freedom, a quaternion or planar joint.

    Examples
    --------
    >>> import multibody as mb
    >>> from multibody.symbolic import derive_lagrange
    >>> eom = derive_lagrange(mb.models.double_pendulum(symbolic=True))
    >>> eom.extra["method"], eom.M.shape, eom.g.shape
    ('lagrange', (2, 2), (2, 1))
    """
    from .tmt.from_model import _model_actuation, tmt_system, tree_kinematics
    from .tree import symbol_column, sympy_array, sympy_entry

    say = progress or (lambda msg: None)
    if not isinstance(model, (Model, Mechanism, TMTSystem)):
        raise TypeError(f"model: expected a multibody Model, Mechanism or TMTSystem, got {type(model).__name__}")
    if not isinstance(model, Model):
        say("Lagrange: the mechanism's bodies and elements")
        system = model if isinstance(model, TMTSystem) else tmt_system(model, simplify=simplify)
        eom = system.equations("lagrange")
        eom.extra["method"] = "lagrange"
        say("Lagrange: done")
        return eom
    say("Lagrange: kinematics of the tree")
    kin = tree_kinematics(model, q)
    q = kin["q"]
    nq = kin["nq"]
    dq = sp.Matrix(sp.symbols(f"dq0:{nq}")) if dq is None else symbol_column(dq, "dq")
    if len(dq) != nq:
        raise ValueError(f"dq has {len(dq)} entries, the model has nq = {nq}")
    tau, S = _model_actuation(nq, tau, S, actuated)
    grav = sympy_array(model.gravity, (3,))
    say("Lagrange: kinetic and potential energy")
    if nq == 0:
        raise ValueError(f"model {getattr(model, 'name', '')!r} has no degrees of freedom")
    E = lambda m: se.Matrix(sp.Matrix(m).tolist())  # noqa: E731
    qs = se.Matrix([se.Symbol(v.name) for v in q])
    dqs = se.Matrix([se.Symbol(v.name) for v in dq])
    K, V = se.Integer(0), se.Integer(0)
    g_se = E(grav)
    for i in range(len(kin["R"])):
        m = se.sympify(sympy_entry(model.mass[i]))
        I = E(sympy_array(model.inertia_com[i], (3, 3)))
        rc = E(kin["r_com"][i])
        v = rc.jacobian(qs) * dqs
        w = E(kin["T_omega"][i]) * dqs
        K += (m * (v.T * v)[0] + (w.T * I * w)[0]) / 2
        V += -m * (g_se.T * rc)[0]
    say("Lagrange: M = ∂²K/∂q̇², Christoffel symbols, g = ∂V/∂q")
    eom = _lagrange(K, V, q, dq, kin["params"], tau, S, simplify)
    eom.extra["method"] = "lagrange"
    say("Lagrange: done")
    eom.kinematics.update({"A_IB": kin["R"], "I_r_O": kin["p"], "I_r_CoG": kin["r_com"],
                           "B_Jr": kin["T_omega"]})
    return eom
