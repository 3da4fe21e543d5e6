"""A ``Model`` as the symbolic methods read it: bodies, parameters and the symbols of q, q̇, τ.

Every symbolic method (RNEA/CRBA, proNEu, TMT, Lagrange) reads a model through this module only:
:func:`symbolic_bodies` checks the tree once (joint types it can derive, parents before children)
and gives per-body records in SymEngine; :func:`model_parameters` lists the symbols in the
model's arrays; :func:`model_symbols` chooses the coordinate, rate and actuator symbols — the
seed's names for the built-in models (``multibody.models.seed_info``), ``q0…``, ``dq0…``,
``tau0…`` otherwise.

The model's arrays may hold SymPy expressions (a *symbolic* model); only ``parent``, ``jtype``,
``jaxis``, ``jpitch``, ``tree_rotation`` (A_PJ), ``tree_translation`` (P_r_PJ), ``mass``, ``com``,
``inertia_com``, ``gravity``, ``nq``, ``nv``, ``v_start`` and ``body_names`` are read.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..model.joints import JointType, spec
from ..model.tree import sympy_entry  # the one rule for model entries as SymPy (model/tree.py builds with it)
from . import _core as C

__all__ = ["SymBody", "symbolic_bodies", "sympy_entry", "sympy_array", "rotation_chains", "model_parameters", "model_symbols",
           "REV", "PRI", "HEL", "FIX"]

REV, PRI, HEL, FIX = "R", "P", "H", "F"
_KIND = {"fixed": FIX, "revolute": REV, "prismatic": PRI, "helical": HEL}  # the joint table's chain names


@dataclass
class SymBody:
    """One body of a symbolic tree (SymEngine entries), as :func:`symbolic_bodies` reads it."""

    name: str
    parent: int          # −1 = fixed base
    kind: str            # REV, PRI, HEL or FIX
    dof: int             # index of its coordinate in q (−1 for fixed joints)
    axis: list           # Z, unit axis in joint = body coordinates
    pitch: object        # h (helical)
    A_PJ: list           # 3×3 rows
    t_PJ: list           # joint-frame origin in parent coordinates
    mass: object
    com: list
    inertia_com: list    # 3×3 rows about the CoM, body coordinates
    # |com|² and |P_r_PO|² when the vectors above are rotated copies (rnea_sym.inertial_view): the
    # lengths of the unrotated vectors, so sin² + cos² never enters the expressions (None: compute)
    com_sq: object = None
    origin_sq: object = None

_ARRAYS = ("jaxis", "jpitch", "tree_rotation", "tree_translation", "mass", "com", "inertia_com", "gravity")


def _body_name(model, i) -> str:
    names = getattr(model, "body_names", None)
    return names[i] if names is not None and len(names) > i else f"body{i}"


def sympy_array(a, shape=None) -> sp.Matrix:
    """A model array (vector or 3×3) as a SymPy matrix of :func:`sympy_entry` values."""
    arr = np.asarray(a, dtype=object)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"expected shape {shape}, got {arr.shape}")
    if arr.ndim == 1:
        return sp.Matrix([sympy_entry(v) for v in arr])
    return sp.Matrix(arr.shape[0], arr.shape[1], [sympy_entry(v) for v in arr.reshape(-1)])


# --- what one derivation reads of its model more than once -------------------------------------
# derive checks the joints and lists the parameters (model_symbols) before the method runs, and the
# method does both again (symbolic_bodies, model_parameters; pne's pne_system all of model_symbols):
# within one derive (:func:`one_derivation`) each is computed once per model. Nothing is kept past
# the call: a model's arrays may change between two derivations.
_DERIVING: ContextVar = ContextVar("multibody_symbolic_deriving", default=None)


@contextmanager
def one_derivation(model):
    """Within the block, :func:`model_parameters` and the joint checks of ``model`` are computed once."""
    token = _DERIVING.set((model, {}))
    try:
        yield
    finally:
        _DERIVING.reset(token)


def _once(model, key, fn):
    got = _DERIVING.get()
    if got is None or got[0] is not model:
        return fn(model)
    memo = got[1]
    if key not in memo:
        memo[key] = fn(model)
    return memo[key]


def model_parameters(model) -> tuple:
    """The symbols in the model's arrays, sorted by name."""
    return _once(model, "params", _model_parameters)


def _model_parameters(model) -> tuple:
    params = set()
    for name in _ARRAYS:
        params |= C.free_symbols(np.asarray(getattr(model, name), dtype=object))
    return tuple(sorted(params, key=lambda s: s.name))


def _entry_converter():
    """Model array entry → SymEngine, memoised for one model (most entries are 0, 1 or repeat):
    numbers directly (integral floats exact, as :func:`sympy_entry`), SymPy expressions with their
    symbols' SymEngine twins. The memo is keyed by the entry's identity (the entries stay alive in
    ``keep`` while the converter is used, so an id is never reused): a lookup by value hashed each
    SymPy number in Python and took three type tests first, 1.6 µs an entry, 58 entries a 2-link chain."""
    memo, keep = {}, []

    def conv(x):
        got = memo.get(id(x))
        if got is not None:
            return got
        if isinstance(x, (bool, np.bool_)):
            out = C.to_se(sympy_entry(x))
        elif isinstance(x, (int, np.integer)):
            out = C.se.Integer(int(x))
        elif isinstance(x, (float, np.floating)):
            out = C.se.Integer(int(x)) if float(x).is_integer() else C.se.RealDouble(float(x))
        else:
            out = C.to_se(sympy_entry(x))
        memo[id(x)] = out
        keep.append(x)
        return out

    return conv


def _as_list(a) -> list:
    """A model array as nested Python lists of its entries (NumPy scalars of a numeric array become
    Python numbers, which :func:`_entry_converter` reads the same way)."""
    return a.tolist() if isinstance(a, np.ndarray) else list(a)


def _joint_chains(model) -> list:
    """Per model body its joint type's chain of one-dof joints, after the checks: known joint type,
    no quaternion or planar coordinates, parents before children."""
    return _once(model, "chains", _checked_chains)


def _checked_chains(model) -> list:
    parent = np.asarray(model.parent)
    jtype = np.asarray(model.jtype)
    chains = []
    for i in range(len(parent)):
        nm = f"body {i} ({_body_name(model, i)!r})"
        try:
            jt = JointType(int(jtype[i]))
        except ValueError:
            raise ValueError(f"{nm}: unknown joint type code {int(jtype[i])}") from None
        if jt in (JointType.FREE, JointType.SPHERICAL):
            raise ValueError(
                f"{nm}: joint type {jt.name} — {jt.name.lower()} joints (quaternion coordinates) are not supported "
                "symbolically; build the floating base from three prismatic and three revolute joints "
                "(Euler angles x-y-z) through massless bodies, as the proNEu StarlETH example does "
                "(multibody.models.starleth, or multibody.models.floatbase)")
        if jt == JointType.PLANAR:
            raise ValueError(f"{nm}: planar joints are not supported symbolically; use two "
                             "prismatic joints and a revolute joint")
        p = int(parent[i])
        if not -1 <= p < i:
            raise ValueError(f"{nm}: parent {p} must be −1 or an earlier body")
        chain = spec(jt).chain
        if chain is None:
            raise ValueError(f"{nm}: joint type {jt.name} is not supported symbolically")
        chains.append(chain)
    return chains


def symbolic_bodies(model) -> list[SymBody]:
    """The model's bodies as :class:`SymBody` records (SymEngine entries), validated.

    Revolute, prismatic, helical and fixed joints are derived symbolically; a joint whose table
    row gives a ``chain`` of them (cylindrical: revolute then prismatic on one axis) becomes that
    chain through massless bodies, the last one carrying the body.  Free and spherical joints
    (quaternion coordinates) and planar joints are refused with a message naming the body and what
    to build instead.
    """
    chains = _joint_chains(model)
    parent = np.asarray(model.parent).tolist()
    v_start = np.asarray(model.v_start).tolist()
    # the arrays read as nested lists once: a NumPy object array's rows and items cost an indexing
    # call each, and every entry of a body is read
    jaxis, jpitch = _as_list(model.jaxis), _as_list(model.jpitch)
    rotation, translation = _as_list(model.tree_rotation), _as_list(model.tree_translation)
    mass, com, inertia = _as_list(model.mass), _as_list(model.com), _as_list(model.inertia_com)
    conv = _entry_converter()
    vec = lambda a: [conv(x) for x in a]                      # noqa: E731
    mat = lambda a: [[conv(x) for x in row] for row in a]     # noqa: E731
    eye, z3 = C.eye3(), [C.ZERO, C.ZERO, C.ZERO]
    z33 = [[C.ZERO] * 3 for _ in range(3)]
    out, record = [], []  # record[i]: index in out of model body i (the last of its chain)
    for i, chain in enumerate(chains):
        p = int(parent[i])
        axis, pitch = vec(jaxis[i]), conv(jpitch[i])
        A_PJ, t_PJ = mat(rotation[i]), vec(translation[i])
        for j, kind in enumerate(chain):  # all but the last: massless, on the joint frame
            last = j == len(chain) - 1
            out.append(SymBody(
                name=_body_name(model, i) if last else f"{_body_name(model, i)}:{kind}", kind=_KIND[kind],
                parent=(record[p] if p >= 0 else -1) if j == 0 else len(out) - 1,
                dof=int(v_start[i]) + j if kind != "fixed" else -1, axis=axis, pitch=pitch,
                A_PJ=A_PJ if j == 0 else eye, t_PJ=t_PJ if j == 0 else list(z3),
                mass=conv(mass[i]) if last else C.ZERO,
                com=vec(com[i]) if last else list(z3),
                inertia_com=mat(inertia[i]) if last else [list(r) for r in z33]))
        record.append(len(out) - 1)
    return out


def joint_factors(bd: SymBody, q) -> list:
    """Rotation factors of a body's joint: A_PJ (if not the identity), then the joint's rotation
    about its axis by its coordinate (revolute, helical) — A_PB = A_PJ · R(axis, q)."""
    factors = [] if C.is_identity(bd.A_PJ) else [C.Factor(matrix=bd.A_PJ)]
    if bd.kind in (REV, HEL):
        factors = C.merge(factors, [C.joint_factor(bd.axis, q[bd.dof])])
    return factors


def rotation_chains(bodies: list[SymBody], q) -> list[list]:
    """Per body, the chain of rotation factors of A_IB from the base, with neighbouring rotations
    about the same axis merged (R_z(q1)·R_z(q2) = R_z(q1 + q2)); ``q`` are SymEngine symbols."""
    chains = []
    for bd in bodies:
        chains.append(C.merge(chains[bd.parent] if bd.parent >= 0 else [], joint_factors(bd, q)))
    return chains


def check_model(model) -> None:
    """Refuse, naming the argument, what is not a multibody Model (before any attribute is read)."""
    from ..model.model import Model

    if not isinstance(model, Model):
        raise TypeError(f"model: expected a multibody Model, got {type(model).__name__}")


def symbol_column(values, name: str) -> sp.Matrix:
    """``values`` (a sequence of SymPy symbols) as a column matrix; anything else is refused by name."""
    if isinstance(values, (str, bytes, sp.Basic)) and not isinstance(values, sp.MatrixBase):
        raise TypeError(f"{name}: expected a sequence of SymPy symbols, got {type(values).__name__} {values!r}")
    try:
        entries = list(values)
    except TypeError:
        raise TypeError(f"{name}: expected a sequence of SymPy symbols, got {type(values).__name__}") from None
    bad = [e for e in entries if not isinstance(e, sp.Symbol)]
    if bad:
        raise TypeError(f"{name}: expected SymPy symbols, got {bad[0]!r} ({type(bad[0]).__name__})")
    return sp.Matrix(entries) if entries else sp.zeros(0, 1)


_REAL_SYMBOLS: dict = {}


def real_symbol(name: str) -> sp.Symbol:
    """``sympy.Symbol(name, real=True)``, made once per name for the process. Once SymPy's cache is
    cleared (the bench clears it before every run, a long session's cache cycles) each creation
    deduces the assumptions of ``real`` anew: 21 µs a symbol, 190 µs of the 1.3 ms a pendulum on a
    cart with n = 2 took to derive. Symbols are immutable and equal by name and assumptions, so
    handing out the same object changes no result.

    >>> real_symbol("th1") is real_symbol("th1"), real_symbol("th1") == sp.Symbol("th1", real=True)
    (True, True)
    """
    s = _REAL_SYMBOLS.get(name)
    if s is None:
        s = _REAL_SYMBOLS[name] = sp.Symbol(name, real=True)
    return s


def model_symbols(model, q=None, dq=None, tau=None, actuated=None):
    """Coordinate, rate and actuator symbols for ``model``, and its parameter symbols.

    These are the symbols :func:`derive` uses for a model; all default symbols are real.

    Parameters
    ----------
    model : Model
        A multibody model whose joints are revolute, prismatic, helical or fixed.
    q, dq : sequence of sympy.Symbol, optional
        One symbol per coordinate (rad or m) and per rate; default: the seed's names for a
        built-in model (``q1``, ``Dq1`` … for RA3Link), else ``q0…``, ``dq0…``.
    tau : sequence of sympy.Symbol, optional
        One symbol per actuated dof (N·m or N); default: the seed's names, else ``tau<k>`` for dof k.
    actuated : sequence of int, optional
        Dof indices that get an actuator (default: the seed's actuated dofs, else all).

    Returns
    -------
    q, dq : sympy.Matrix, shape (n, 1)
        Coordinate and rate symbols.
    tau : sympy.Matrix, shape (m, 1)
        Actuator symbols.
    S : sympy.Matrix, shape (m, n)
        Selection matrix: the joint forces are Sᵀ τ.
    params : tuple of sympy.Symbol
        The symbols in the model's arrays (masses, lengths, …), sorted by name.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``q``, ``dq`` or ``tau`` is not a sequence of symbols.
    ValueError
        Wrong numbers of symbols; ``actuated`` indices repeated or out of range; symbols that
        repeat or clash with the model's parameters; a quaternion or planar joint.

    Examples
    --------
    >>> import multibody as mb
    >>> q, dq, tau, S, params = mb.symbolic.model_symbols(mb.models.ra3link(symbolic=True))
    >>> list(q), list(dq), list(tau)
    ([q1, q2, q3], [Dq1, Dq2, Dq3], [T1, T2, T3])
    >>> S.shape, len(params)
    ((3, 3), 18)
    """
    from ..model.seed import seed_info

    check_model(model)
    _joint_chains(model)  # refuses quaternion/planar joints, naming the body
    n = int(model.nv)
    if int(model.nq) != n:  # pragma: no cover - symbolic_bodies refuses every joint with nq ≠ nv
        raise ValueError(f"model has nq = {model.nq} ≠ nv = {n}")
    info = seed_info(model)
    names_q = info.coordinates if info else tuple(f"q{k}" for k in range(n))
    names_dq = info.rates if info else tuple(f"dq{k}" for k in range(n))
    # the symbols as lists too: the checks below read them (a Matrix's entries cost a __getitem__ each)
    q_l = [real_symbol(s) for s in names_q] if q is None else None
    dq_l = [real_symbol(s) for s in names_dq] if dq is None else None
    q = C.flat_matrix(len(q_l), 1, q_l) if q is None else symbol_column(q, "q")
    dq = C.flat_matrix(len(dq_l), 1, dq_l) if dq is None else symbol_column(dq, "dq")
    if q.rows != n or dq.rows != n:
        raise ValueError(f"model has {n} coordinates; got {q.rows} symbols in q and {dq.rows} in dq")
    if actuated is None:
        idx = list(info.actuated) if info and info.actuators else list(range(n))
    else:
        idx = [int(k) for k in actuated]
    if any(not 0 <= k < n for k in idx) or len(set(idx)) != len(idx):
        raise ValueError(f"actuated: dof indices must be distinct and in 0…{n - 1}, got {idx}")
    seed_tau = dict(zip(info.actuated, info.actuators)) if info else {}
    tau_l = None
    if tau is None:      # ours: symbols already, one per actuated dof (nothing to check)
        tau_l = [real_symbol(seed_tau.get(k, f"tau{k}")) for k in idx]
        tau = C.flat_matrix(len(idx), 1, tau_l)
    else:
        tau = symbol_column(tau, "tau")
    if tau.rows != len(idx):
        raise ValueError(f"{len(idx)} actuated dofs but {tau.rows} symbols in tau")
    S = C.selection_matrix(idx, n)
    fixed = set(q if q_l is None else q_l) | set(dq if dq_l is None else dq_l) | set(tau if tau_l is None else tau_l)
    if len(fixed) != 2 * n + tau.rows:
        raise ValueError("q, dq and tau must be distinct symbols")
    params = model_parameters(model)
    clash = set(params) & fixed
    if clash:
        raise ValueError("model parameters clash with coordinate/actuator symbols: "
                         + ", ".join(sorted(s.name for s in clash)))
    return q, dq, tau, S, params
