"""EquationsOfMotion: the common result of every symbolic derivation (proNEu, TMT, Lagrange, RNEA).

    M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ   (proNEu notation; f = Sᵀ τ)

Besides the fields, an ``EquationsOfMotion`` can

* print itself (``str(eom)``, ``eom.pretty()``) and write LaTeX (``eom.latex()``),
* substitute values (``eom.subs({l1: 1.0})``),
* simplify with a wall-clock limit that always terminates (``eom.simplify(time_limit=30)``),
* count operations, plain or after common-subexpression elimination (``eom.count_ops(cse=True)``),
* show the abbreviated form of the lecture slides, ``sin(q2) → S2``, ``cos(q2 + q3) → C23``
  (``eom.abbreviated()``),
* evaluate numerically (``eom.to_numeric(values)`` → NumPy functions ``M(q)``, ``b(q, dq)``, ``g(q)``),
* save/load itself atomically (``eom.save(path)``, ``EquationsOfMotion.load(path)``).

Derivation methods register themselves in :data:`DERIVATION_METHODS` (see :func:`register_method`);
``multibody.symbolic.derive(source, method=...)`` dispatches on that table.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing as _mp
import os
import queue as _queue
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import sympy as sp

from .._io import open_regular, write_bytes
from .safe_srepr import read_srepr

__all__ = [
    "EquationsOfMotion",
    "NumericEOM",
    "DERIVATION_METHODS",
    "DerivationMethod",
    "register_method",
    "abbreviate",
    "simplify_with_time_limit",
]

# --------------------------------------------------------------------------------------------
# Registry of derivation methods (rnea_sym.py, pne.py, tmt/, lagrange.py register themselves)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DerivationMethod:
    """One entry of :data:`DERIVATION_METHODS`.

    ``function(source, q, dq, tau, *, S, progress, **options)`` returns an
    :class:`EquationsOfMotion`; ``source`` is an instance of one of ``accepts`` and ``q``, ``dq``,
    ``tau``, ``S`` are the symbols and selection matrix ``derive`` chose for it.
    """

    name: str
    function: Callable[..., "EquationsOfMotion"]
    accepts: tuple
    summary: str = ""
    readable: bool = False   # the function takes ``readable=True`` and may return the readable form itself


#: method name → :class:`DerivationMethod`; ``derive(source, method=name)`` dispatches on it.
DERIVATION_METHODS: dict[str, DerivationMethod] = {}


def register_method(name: str, *, accepts: tuple | None = None, summary: str = "", readable: bool = False):
    """Decorator: make a derivation function available as ``derive(source, method=name)``.

    The function is called as ``func(source, q, dq, tau, S=S, progress=callback, **options)``
    (the symbols chosen by :func:`derive`) and must return an :class:`EquationsOfMotion`.
    Registering a name again replaces the earlier method of that name (the built-in ones too).

    Parameters
    ----------
    name : str
        The method's name (stored in lower case).
    accepts : type or tuple of types, optional
        The input types the method derives from (default: ``multibody.Model``).
    summary : str, optional
        One line for the method table (default: the function's docstring's first line).
    readable : bool, optional
        The function takes ``readable=True`` (``derive`` passes it unless ``raw``) and may then
        return M, b, g in the readable form itself, marked ``extra["form"] = "readable"``; default
        False (``derive`` runs :meth:`EquationsOfMotion.readable` on what it returns).

    Returns
    -------
    callable
        The decorator; it registers the function and returns it unchanged.

    Raises
    ------
    ValueError
        ``name`` is not a non-empty string.
    TypeError
        ``accepts`` is not a type or a tuple of types; the decorated object is not callable.

    Examples
    --------
    >>> import multibody as mb
    >>> from multibody.symbolic import derive, register_method
    >>> from multibody.symbolic.rnea_sym import rnea_equations
    >>> @register_method("rnea_body_frame", summary="RNEA in body coordinates")
    ... def rnea_body(model, q, dq, tau, *, S, progress=None):
    ...     return rnea_equations(model, q, dq, tau, S=S, progress=progress, frame="body")
    >>> derive(mb.models.double_pendulum(), "rnea_body_frame").extra["method"]
    'rnea'
    >>> from multibody.symbolic.eom import DERIVATION_METHODS
    >>> del DERIVATION_METHODS["rnea_body_frame"]         # leave the table as it was
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"register_method: name must be a non-empty string, got {name!r}")

    types = accepts
    if types is not None:
        types = (types,) if isinstance(types, type) else types
        if not isinstance(types, tuple) or not types or not all(isinstance(t, type) for t in types):
            raise TypeError(f"register_method: accepts must be a type or a tuple of types, got {accepts!r}")

    def deco(func):
        nonlocal types
        if not callable(func):
            raise TypeError(f"register_method({name!r}): decorates a function, got {type(func).__name__}")
        if types is None:
            from ..model.model import Model

            types = (Model,)
        DERIVATION_METHODS[name.lower()] = DerivationMethod(name.lower(), func, tuple(types),
                                                            summary or (func.__doc__ or "").strip().split("\n")[0],
                                                            bool(readable))
        return func

    return deco


# --------------------------------------------------------------------------------------------
# Numeric evaluation
# --------------------------------------------------------------------------------------------


@dataclass
class NumericEOM:
    """NumPy functions of a derived model with its parameters fixed.

    ``M(q)`` → (n, n), ``b(q, dq)`` → (n,), ``g(q)`` → (n,), ``f(tau, q)`` → (n,) (= Sᵀτ),
    ``qdd(q, dq, tau)`` solves ``M q̈ = f − b − g``.
    """

    n: int
    _M: Callable
    _b: Callable
    _g: Callable
    _f: Callable
    pvals: np.ndarray

    def _x(self, *parts):
        return np.concatenate([np.asarray(p, dtype=float).ravel() for p in parts] + [self.pvals])

    def M(self, q):
        return np.asarray(self._M(self._x(q)), dtype=float).reshape(self.n, self.n)

    def b(self, q, dq):
        return np.asarray(self._b(self._x(q, dq)), dtype=float).reshape(self.n)

    def g(self, q):
        return np.asarray(self._g(self._x(q)), dtype=float).reshape(self.n)

    def f(self, tau, q=None):
        qv = np.zeros(self.n) if q is None else q
        return np.asarray(self._f(self._x(qv, tau)), dtype=float).reshape(self.n)

    def qdd(self, q, dq, tau):
        return np.linalg.solve(self.M(q), self.f(tau, q) - self.b(q, dq) - self.g(q))


def _lambdify(args, exprs):
    """Fast numeric callback of a list of expressions (SymEngine Lambdify with CSE; SymPy fallback)."""
    flat = list(exprs)
    try:
        import symengine as se

        f = se.Lambdify([se.sympify(a) for a in args], [se.sympify(e) for e in flat],
                        cse=True, backend="lambda")
        return lambda x: np.asarray(f(np.asarray(x, dtype=float)))
    except Exception:  # pragma: no cover - symengine missing or unsupported function
        f = sp.lambdify([list(args)], [sp.sympify(e) for e in flat], modules="numpy", cse=True)
        return lambda x: np.asarray(f(np.asarray(x, dtype=float)), dtype=float)


# --------------------------------------------------------------------------------------------
# Simplification with a time limit
# --------------------------------------------------------------------------------------------


def _canonical(e):
    from ._core import trig_canonical

    return trig_canonical(e)


def _simplify_worker(method, inbox, outbox):  # runs in a child process
    funcs = {
        "simplify": sp.simplify,
        "trigsimp": sp.trigsimp,
        "fu": sp.fu,
        "expand_trig": lambda e: sp.trigsimp(sp.expand(e)),
        "cancel": sp.cancel,
        "canonical": _canonical,
    }
    fn = funcs[method] if isinstance(method, str) else method
    while True:
        item = inbox.get()
        if item is None:
            return
        k, expr = item
        try:
            res = fn(expr)
        except Exception:  # keep the original on any failure of the simplifier
            res = expr
        outbox.put((k, res))


def simplify_with_time_limit(exprs, *, time_limit: float = 60.0, per_entry: float | None = None,
                             method: str | Callable = "simplify", progress=None):
    """Simplify a list of expressions; stops after ``time_limit`` seconds in all.

    The simplifier runs in a child process that gets one entry at a time and is terminated when
    an entry takes longer than ``per_entry`` seconds (default: the whole remaining budget) or the
    total budget is used up; entries not simplified in time are returned unchanged, so this
    always terminates. A result is kept only if it has no more operations than the input.
    Returns ``(list, n_simplified)``.
    """
    exprs = list(exprs)
    out = list(exprs)
    todo = [k for k, e in enumerate(exprs) if isinstance(e, sp.Basic) and not e.is_Atom]
    if not todo:
        return out, 0
    ctx = _mp.get_context("fork") if hasattr(os, "fork") else _mp.get_context()
    deadline = time.monotonic() + float(time_limit)
    done = 0
    pos = 0
    proc = inbox = outbox = None

    def stop():
        if proc is not None:
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=5)
            if proc.is_alive():  # pragma: no cover
                proc.kill()
                proc.join()
        for qu in (inbox, outbox):
            if qu is not None:
                qu.cancel_join_thread()
                qu.close()

    try:
        while pos < len(todo) and time.monotonic() < deadline:
            if proc is None:
                inbox, outbox = ctx.Queue(), ctx.Queue()
                proc = ctx.Process(target=_simplify_worker, args=(method, inbox, outbox), daemon=True)
                proc.start()
            k = todo[pos]
            inbox.put((k, exprs[k]))
            remaining = deadline - time.monotonic()
            wait = remaining if per_entry is None else min(remaining, per_entry)
            try:
                _, res = outbox.get(timeout=max(wait, 0.01))
            except _queue.Empty:
                stop()  # this entry ran out of time: kill the worker, keep the entry as it was
                proc = inbox = outbox = None
                pos += 1
                continue
            if sp.count_ops(res) <= sp.count_ops(exprs[k]):
                out[k] = res
            done += 1
            pos += 1
            if progress is not None:
                progress(f"simplified {pos}/{len(todo)} entries")
        if proc is not None:
            inbox.put(None)
    finally:
        stop()
    return out, done


# --------------------------------------------------------------------------------------------
# Abbreviated S2, C23 form (lecture slides)
# --------------------------------------------------------------------------------------------


def _count_ops(exprs) -> int:
    """SymEngine's operation count of a list of SymEngine expressions (0 for none)."""
    import symengine as se

    return int(se.count_ops(*exprs)) if exprs else 0


def _coord_label(sym: sp.Symbol, position: int) -> str:
    m = re.search(r"(\d+)$", sym.name)
    return m.group(1) if m else str(position + 1)


def abbreviate(expr, q):
    """Replace sin/cos of coordinates (and of sums of coordinates) by short symbols.

    ``sin(q2) → S2``, ``cos(q2 + q3) → C23``, ``sin(q2 - q3) → S2m3``. The label of a coordinate
    is the trailing number of its name (``q2`` → ``2``), else its 1-based position in ``q``.
    Returns ``(abbreviated, definitions)`` where ``definitions`` maps each new symbol to the
    function it stands for. Arguments that are not ±1-combinations of coordinates stay as they are.
    """
    q = list(q)
    labels = {s: _coord_label(s, i) for i, s in enumerate(q)}
    defs: dict[sp.Symbol, sp.Expr] = {}
    repl: dict[sp.Expr, sp.Symbol] = {}
    is_matrix = isinstance(expr, sp.MatrixBase)
    items = list(expr) if is_matrix else [sp.sympify(expr)]
    for e in items:
        for fn in e.atoms(sp.sin, sp.cos):
            arg = fn.args[0]
            coeffs = arg.as_coefficients_dict()
            ok = all(k in labels and v in (1, -1) for k, v in coeffs.items())
            if not ok:
                continue
            terms = sorted(coeffs.items(), key=lambda kv: q.index(kv[0]))
            label = "".join(("" if v == 1 else "m") + labels[k] for k, v in terms)
            name = ("S" if isinstance(fn, sp.sin) else "C") + label
            s = sp.Symbol(name, real=True)
            defs[s] = fn
            repl[fn] = s
    new = [e.xreplace(repl) for e in items]
    if is_matrix:
        return sp.Matrix(expr.shape[0], expr.shape[1], new), defs
    return new[0], defs


# --------------------------------------------------------------------------------------------
# Serialisation helpers
# --------------------------------------------------------------------------------------------

_FORMAT = "multibody.EquationsOfMotion"
#: entries longer than this (operations) are printed as SymEngine writes them, from the derivation's own
#: SymEngine form: SymPy's printer orders the terms of every sum, 69 s for StarlETH's 4 MB of equations
#: against SymEngine's 0.6 s (and 1.3 s for its entries up to this size)
PRINT_ORDERED_MAX_OPS = 1000
_VERSION = 1


def _encode(obj):
    if isinstance(obj, sp.MatrixBase):
        return {"__matrix__": [obj.rows, obj.cols, [sp.srepr(e) for e in obj]]}
    if isinstance(obj, sp.Basic):
        return {"__sympy__": sp.srepr(obj)}
    if isinstance(obj, dict):
        return {"__dict__": [[_encode(k), _encode(v)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return {"__ndarray__": _encode(obj.tolist()), "dtype": str(obj.dtype)}
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot save object of type {type(obj).__name__}")


def _parse(s: str):
    return read_srepr(s)   # parsed, never evaluated: a file is data, whoever wrote it


def _decode(obj):
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    if isinstance(obj, dict):
        if "__matrix__" in obj:
            r, c, entries = obj["__matrix__"]
            return sp.Matrix(r, c, [_parse(e) for e in entries]) if r * c else sp.zeros(r, c)
        if "__sympy__" in obj:
            return _parse(obj["__sympy__"])
        if "__dict__" in obj:
            return {_decode(k): _decode(v) for k, v in obj["__dict__"]}
        if "__tuple__" in obj:
            return tuple(_decode(v) for v in obj["__tuple__"])
        if "__ndarray__" in obj:
            dtype = np.dtype(str(obj["dtype"]))
            if dtype.kind not in "biuf":
                raise ValueError(f"array of dtype {dtype} (expected numbers)")
            return np.array(_decode(obj["__ndarray__"]), dtype=dtype)
        raise ValueError(f"unknown entry {sorted(obj)}")
    return obj


# --------------------------------------------------------------------------------------------
# EquationsOfMotion
# --------------------------------------------------------------------------------------------


@dataclass
class EquationsOfMotion:
    """Symbolic equations of motion ``M q̈ + b + g = Sᵀ τ``.

    Attributes
    ----------
    q, dq : sympy.Matrix (n×1)   generalized coordinates and their rates
    M : sympy.Matrix (n×n)        mass matrix
    b : sympy.Matrix (n×1)        Coriolis and centrifugal terms
    g : sympy.Matrix (n×1)        gravity terms
    S : sympy.Matrix (m×n)        selection matrix of the actuators (f = Sᵀ τ)
    tau : sympy.Matrix (m×1)      actuator symbols
    params : tuple                model parameters (symbols) the expressions may contain
    kinematics : dict             per-body global kinematics, e.g. {"A_IB": [...], "I_r_O": [...]}
    extra : dict                  method-specific results (constraints, impact maps, ...)
    """

    q: sp.Matrix
    dq: sp.Matrix
    M: sp.Matrix
    b: sp.Matrix
    g: sp.Matrix
    S: sp.Matrix
    tau: sp.Matrix
    params: tuple = ()
    kinematics: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    # ---- SymEngine-backed entries (derivations hand over M, b, g unconverted) ------------

    @classmethod
    def from_symengine(cls, *, M, b, g, q, dq, tau, params=(), **fields) -> "EquationsOfMotion":
        """Equations whose M (n×n rows), b and g are SymEngine expressions, kept as they are: the
        SymPy matrices ``M``, ``b``, ``g`` are built on first use, once, with the caller's own
        symbols (``q``, ``dq``, ``tau``, ``params``). Code generation and :meth:`to_numeric` read
        the SymEngine entries directly, and :meth:`readable` rewrites them before any conversion."""
        z = sp.zeros(0, 0)
        eom = cls(M=z, b=z, g=z, q=q, dq=dq, tau=tau, params=params, **fields)
        eom._set_symengine([x for row in M for x in row], list(b), list(g))
        return eom

    @classmethod
    def from_builders(cls, *, sympy, symengine, q, dq, tau, params=(), **fields) -> "EquationsOfMotion":
        """Equations whose M, b, g are built on first use, each form from the derivation's own
        result: ``sympy(converter)`` gives the SymPy entries (M rows, b, g; ``converter`` a
        :class:`._core.Converter` with the caller's symbols) when ``M``, ``b`` or ``g`` is read,
        ``symengine()`` the SymEngine ones when code generation or :meth:`to_numeric` asks for them.
        The planar derivation builds either straight from its polynomials, neither from the other."""
        z = sp.zeros(0, 0)
        eom = cls(M=z, b=z, g=z, q=q, dq=dq, tau=tau, params=params, **fields)
        for name in ("M", "b", "g"):
            eom.__dict__.pop(name, None)
        eom.__dict__["_builders"] = (sympy, symengine)
        return eom

    def _set_symengine(self, M_flat, b, g) -> None:
        self._se_exprs = {"M": list(M_flat), "b": list(b), "g": list(g)}
        for name in ("M", "b", "g"):     # converted on first access (__getattr__)
            self.__dict__.pop(name, None)

    def __getattr__(self, name):
        # only reached for M, b, g still waiting as SymEngine entries (see from_symengine) or to be
        # built (from_builders), and for the SymEngine entries of the latter
        builders = self.__dict__.get("_builders")
        if builders is not None and name in ("M", "b", "g", "_se_exprs"):
            from ._core import Converter, flat_matrix

            if name == "_se_exprs":
                M, b, g = builders[1]()
                self.__dict__["_se_exprs"] = {"M": [x for row in M for x in row], "b": list(b), "g": list(g)}
                return self.__dict__["_se_exprs"]
            conv = Converter(list(self.q) + list(self.dq) + list(self.tau) + list(self.params))
            M, b, g = builders[0](conv)
            n = self.q.rows
            for key, flat in (("M", [x for row in M for x in row]), ("b", b), ("g", g)):
                if key not in self.__dict__:
                    self.__dict__[key] = flat_matrix(n, n if key == "M" else 1, flat)
            return self.__dict__[name]
        if name in ("M", "b", "g") and "_se_exprs" in self.__dict__:
            from ._core import Converter, flat_matrix

            conv = Converter(list(self.q) + list(self.dq) + list(self.tau) + list(self.params))
            n = self.q.rows
            cache = self.__dict__["_se_exprs"]
            made = self.__dict__.setdefault("_from_se", {})    # the matrices built from it (see _entry_text)
            for key in ("M", "b", "g"):
                if key not in self.__dict__:
                    flat = [conv(e) for e in cache[key]]
                    self.__dict__[key] = made[key] = flat_matrix(n, n if key == "M" else 1, flat)
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def readable(self) -> "EquationsOfMotion":
        """A copy with M, b, g in the readable (Fourier) form of :mod:`multibody.symbolic.trig`:
        ``sin² + cos²`` and angle sums collapsed, each harmonic's common factor taken out, so the
        double pendulum's M[0,0] reads ``l1*l2*m2*cos(th2) + …`` as in the OpenDE report's DP_EOM.
        Entries too large to read (more than ``trig.READABLE_MAX_OPS`` operations) stay as derived;
        ``extra["size"]`` gives the operation counts of M, b, g before and after.

        >>> import multibody as mb
        >>> from multibody.symbolic import derive
        >>> eom = derive(mb.models.double_pendulum(symbolic=True), raw=True).readable()
        >>> eom.M[0, 1]
        l1*l2*m2*cos(th2)/2 + m2*(h2**2 + 3*l2**2 + w2**2)/12
        """
        from ._core import to_se
        from .trig import readable_entries

        n = self.n
        cache = getattr(self, "_se_exprs", None)
        if cache is None:
            cache = {k: [to_se(e) for e in getattr(self, k)] for k in ("M", "b", "g")}
        M = cache["M"]
        upper = [(i, j) for i in range(n) for j in range(i, n)]
        todo = [M[i * n + j] for i, j in upper] + list(cache["b"]) + list(cache["g"])
        done = readable_entries(todo, [to_se(s) for s in self.q])
        newM = [None] * (n * n)
        for (i, j), e in zip(upper, done):
            newM[i * n + j] = newM[j * n + i] = e
        nb = len(upper)
        b, g = done[nb:nb + n], done[nb + n:]
        from .tmt.system import LazyDict

        # a lazy extra (TMT) stays lazy in the copy; the sizes are counted when read (the CLI prints
        # them): counting every entry before and after was a sixth of the pendulum's readable pass
        extra = self.extra.copy() if isinstance(self.extra, LazyDict) else LazyDict(self.extra)
        derived = {k: list(cache[k]) for k in ("M", "b", "g")}
        extra.lazy("size", lambda: {"derived": {k: _count_ops(v) for k, v in derived.items()},
                                    "readable": {"M": _count_ops(newM), "b": _count_ops(b), "g": _count_ops(g)}})
        extra["form"] = "readable"
        out = EquationsOfMotion.from_symengine(
            M=[newM[i * n:(i + 1) * n] for i in range(n)], b=b, g=g, q=self.q, dq=self.dq, tau=self.tau,
            params=self.params, S=self.S, kinematics=self.kinematics, extra=extra)
        return out

    @property
    def f(self) -> sp.Matrix:
        """Generalized actuator forces f = Sᵀ τ."""
        return self.S.T * self.tau

    @property
    def n(self) -> int:
        """Number of generalized coordinates."""
        return self.q.rows

    # ---- printing -----------------------------------------------------------------------

    def __str__(self) -> str:
        n = self.n
        lines = [f"EquationsOfMotion: M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ,  n = {n}, "
                 f"actuators = {self.tau.rows}",
                 f"q   = {list(self.q)}", f"dq  = {list(self.dq)}", f"tau = {list(self.tau)}"]
        if self.params:
            lines.append(f"params = {list(self.params)}")
        entries, long = [], []
        for i in range(n):
            for j in range(i, n):
                if self.M[i, j] != 0:
                    entries.append(f"M[{i},{j}] = {self._entry_text('M', i * n + j, self.M[i, j], long)}")
        for name, vec in (("b", self.b), ("g", self.g), ("f", self.f)):
            for i in range(n):
                if vec[i] != 0:
                    entries.append(f"{name}[{i}] = {self._entry_text(name, i, vec[i], long)}")
        if long:
            lines.append(f"({len(long)} {'entry' if len(long) == 1 else 'entries'} of more than "
                         f"{PRINT_ORDERED_MAX_OPS} operations in SymEngine's order of terms)")
        return "\n".join(lines + entries)

    def _entry_text(self, key, k, expr, long):
        """SymPy's text of ``expr``, entry k of M (flattened), b or g; for one of more than
        ``PRINT_ORDERED_MAX_OPS`` operations in a matrix built from the derivation's SymEngine form,
        SymEngine's text of that form (the same expression, its terms unordered; appended to ``long``)."""
        cache = self.__dict__.get("_se_exprs")
        made = self.__dict__.get("_from_se", {}).get(key)
        if cache is not None and key in cache and made is not None and made is self.__dict__.get(key):
            import symengine as se

            e = cache[key][k]
            if se.count_ops(e) > PRINT_ORDERED_MAX_OPS:
                long.append((key, k))
                return str(e)
        return str(expr)

    def __repr__(self) -> str:
        return (f"EquationsOfMotion(n={self.n}, q={list(self.q)}, actuators={self.tau.rows}, "
                f"params={len(self.params)})")

    def pretty(self, **kwargs) -> str:
        """Two-dimensional text rendering of M, b, g and f (sympy.pretty)."""
        parts = []
        for name in ("M", "b", "g", "f"):
            parts.append(f"{name} =\n" + sp.pretty(getattr(self, name), **kwargs))
        return "\n\n".join(parts)

    def latex(self, which=("M", "b", "g", "f"), **kwargs) -> str:
        r"""LaTeX for the equation and each requested part (``\mathbf{M} = ...``)."""
        lines = [r"\mathbf{M}(\mathbf{q})\ddot{\mathbf{q}} + \mathbf{b}(\mathbf{q},\dot{\mathbf{q}})"
                 r" + \mathbf{g}(\mathbf{q}) = \mathbf{S}^T\boldsymbol{\tau}"]
        for name in which:
            lines.append(rf"\mathbf{{{name}}} = " + sp.latex(getattr(self, name), **kwargs))
        return "\n\n".join(lines)

    def _repr_latex_(self):  # Jupyter
        return "$" + sp.latex(self.M) + "$"

    # ---- transformations ----------------------------------------------------------------

    def _map(self, fn, kinematics=True) -> "EquationsOfMotion":
        def m(x):
            if isinstance(x, sp.MatrixBase):
                return x.applyfunc(fn)
            if isinstance(x, sp.Basic):
                return fn(x)
            if isinstance(x, dict):
                return {k: m(v) for k, v in x.items()}
            if isinstance(x, (list, tuple)):
                return type(x)(m(v) for v in x)
            return x

        return replace(self, M=m(self.M), b=m(self.b), g=m(self.g), S=m(self.S),
                       kinematics=m(self.kinematics) if kinematics else dict(self.kinematics),
                       extra=m(self.extra) if kinematics else dict(self.extra))

    def subs(self, values: dict, **kwargs) -> "EquationsOfMotion":
        """Substitute symbols (or names of symbols) by values/expressions everywhere.

        Substituted parameters are dropped from ``params``. Coordinates may be substituted too
        (e.g. to freeze a joint), ``q``/``dq``/``tau`` themselves are kept as they are.
        """
        vals = self._resolve(values)
        out = self._map(lambda e: e.xreplace(vals) if vals else e)
        out.params = tuple(p for p in self.params if p not in vals)
        return out

    def _resolve(self, values) -> dict:
        by_name = {s.name: s for s in self._all_symbols()}
        out = {}
        for k, v in dict(values).items():
            if isinstance(k, str):
                if k not in by_name:
                    raise KeyError(f"no symbol named {k!r} in these equations of motion")
                k = by_name[k]
            out[sp.sympify(k)] = sp.sympify(v)
        return out

    def _all_symbols(self) -> set:
        syms = set(self.q) | set(self.dq) | set(self.tau) | set(self.params)
        for mat in (self.M, self.b, self.g, self.S):
            syms |= mat.free_symbols
        return syms

    def simplify(self, time_limit: float = 60.0, per_entry: float | None = None,
                 method: str | Callable = "simplify", progress=None) -> "EquationsOfMotion":
        """Simplified copy of M, b, g, S; terminates after about ``time_limit`` seconds.

        Entries are simplified one after another in a child process (``method``: "simplify",
        "trigsimp", "fu", "expand_trig", "cancel", "canonical" (expanded polynomial in sin/cos of
        single angles with sin² → 1 − cos²: exact zero test, often shorter) or a callable); entries not done in time
        stay as they were. ``extra['simplified']`` reports how many entries were processed.
        """
        mats = {"M": self.M, "b": self.b, "g": self.g, "S": self.S}
        flat, index = [], []
        for name, mat in mats.items():
            for k in range(len(mat)):
                if name == "M" and (k // mat.cols) > (k % mat.cols):
                    continue  # symmetric: simplify the upper triangle only
                flat.append(mat[k])
                index.append((name, k))
        t0 = time.perf_counter()
        res, done = simplify_with_time_limit(flat, time_limit=time_limit, per_entry=per_entry,
                                             method=method, progress=progress)
        new = {name: mat.copy() for name, mat in mats.items()}
        for (name, k), e in zip(index, res):
            new[name][k] = e
        n = self.M.rows
        for i in range(n):
            for j in range(i):
                new["M"][i, j] = new["M"][j, i]
        extra = self.extra.copy()
        extra["simplified"] = {"entries": len(flat), "done": done,
                               "seconds": time.perf_counter() - t0}
        return replace(self, M=new["M"], b=new["b"], g=new["g"], S=new["S"], extra=extra)

    # ---- operation counts ---------------------------------------------------------------

    def count_ops(self, cse: bool = False) -> dict[str, int]:
        """Number of arithmetic operations in M, b, g (sympy.count_ops).

        With ``cse=True`` the three are first put through one common-subexpression elimination
        and the operations of the replacements and the reduced expressions are counted.
        """
        if not cse:
            return {name: int(sp.count_ops(list(getattr(self, name)))) for name in ("M", "b", "g")}
        allx = list(self.M) + list(self.b) + list(self.g)
        repl, red = sp.cse(allx, optimizations="basic")
        return {"temporaries": len(repl),
                "total": int(sp.count_ops([r for _, r in repl]) + sp.count_ops(red))}

    # ---- abbreviated form ---------------------------------------------------------------

    def abbreviated(self, which=("M", "b", "g")) -> tuple[dict[str, sp.Matrix], dict]:
        """The slides' abbreviated form: ``sin(q2) → S2``, ``cos(q2+q3) → C23``.

        Returns ``({"M": ..., "b": ..., "g": ...}, definitions)``.
        """
        out, defs = {}, {}
        for name in which:
            mat, d = abbreviate(getattr(self, name), self.q)
            out[name] = mat
            defs.update(d)
        return out, defs

    def abbreviated_str(self, which=("M", "b", "g")) -> str:
        """Text of the abbreviated form, one entry per line, followed by the definitions."""
        mats, defs = self.abbreviated(which)
        lines = []
        for name, mat in mats.items():
            for i in range(mat.rows):
                for j in range(mat.cols):
                    if name == "M" and j < i:
                        continue
                    if mat[i, j] != 0:
                        idx = f"{i + 1}{j + 1}" if mat.cols > 1 else f"{i + 1}"
                        lines.append(f"{name}{idx} = {mat[i, j]}")
        lines.append("where " + ", ".join(f"{k} = {v}" for k, v in
                                          sorted(defs.items(), key=lambda kv: kv[0].name)))
        return "\n".join(lines)

    # ---- numeric ------------------------------------------------------------------------

    def to_numeric(self, values: dict | None = None) -> NumericEOM:
        """NumPy functions ``M(q)``, ``b(q, dq)``, ``g(q)``, ``f(tau, q)`` with parameters fixed.

        ``values`` maps parameter symbols (or their names) to numbers; every symbol other than
        q, dq, tau must get a value, else ``ValueError`` names the missing ones. Uses the
        SymEngine expressions a derivation left behind (``_se_exprs``) when there are any, which
        avoids converting large expressions back from SymPy.
        """
        vals = self._resolve(values or {})
        q, dq, tau = list(self.q), list(self.dq), list(self.tau)
        allowed = set(q) | set(dq) | set(tau)
        f = self.f
        cache = getattr(self, "_se_exprs", None)
        if cache is not None:
            by_name = {s.name: s for s in list(self.params) + q + dq + tau}
            names = set()
            for key in ("M", "b", "g"):
                for e in cache[key]:
                    names |= {str(x) for x in e.free_symbols}
            unknown = names - set(by_name)
            if unknown:  # pragma: no cover - derivations declare every parameter
                cache = None
        if cache is not None:
            present = ({by_name[nm] for nm in names} | f.free_symbols) - allowed
        else:
            present = set().union(*(x.free_symbols for x in (self.M, self.b, self.g, f))) - allowed
        missing = present - set(vals)
        if missing:
            raise ValueError("to_numeric: no value given for "
                             + ", ".join(sorted(s.name for s in missing)))
        pars = sorted(present, key=lambda s: s.name)
        try:
            pvals = np.array([float(vals[s]) for s in pars], dtype=float)
        except TypeError as exc:
            raise ValueError(f"to_numeric: parameter values must be numbers ({exc})") from exc
        M, b, g = ((cache["M"], cache["b"], cache["g"]) if cache is not None
                   else (list(self.M), list(self.b), list(self.g)))
        return NumericEOM(n=self.n, _M=_lambdify(q + pars, M), _b=_lambdify(q + dq + pars, b),
                          _g=_lambdify(q + pars, g), _f=_lambdify(q + tau + pars, list(f)),
                          pvals=pvals)

    # ---- save / load --------------------------------------------------------------------

    def save(self, path) -> None:
        """Write to ``path`` atomically (temporary file in the same folder + os.replace).

        The file is JSON with every expression as ``sympy.srepr`` text and a SHA-256 checksum of
        the payload (it catches damage, not intent). ``load`` never evaluates the text: it parses
        it and builds only SymPy expression classes (:mod:`multibody.symbolic.safe_srepr`).
        """
        payload = {k: _encode(getattr(self, k)) for k in
                   ("q", "dq", "M", "b", "g", "S", "tau", "params", "kinematics", "extra")}
        body = json.dumps(payload, separators=(",", ":"))
        doc = json.dumps({"format": _FORMAT, "version": _VERSION,
                          "sha256": hashlib.sha256(body.encode()).hexdigest(), "payload": body})
        write_bytes(path, doc.encode("utf-8"), name="path")

    @classmethod
    def load(cls, path) -> "EquationsOfMotion":
        """Read a file written by :meth:`save`; ``ValueError`` if it is corrupt or foreign."""
        path = os.fspath(path)
        try:
            with open_regular(path, "path", "r") as fh:   # a FIFO would block forever
                doc = json.load(fh)
            if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
                raise ValueError("not an EquationsOfMotion file")
            if doc.get("version") != _VERSION:
                raise ValueError(f"unsupported version {doc.get('version')!r}")
            body = doc["payload"]
            if hashlib.sha256(body.encode()).hexdigest() != doc["sha256"]:
                raise ValueError("checksum mismatch")
            data = {k: _decode(v) for k, v in json.loads(body).items()}
            return cls(**data)
        except FileNotFoundError:
            raise
        except Exception as exc:
            raise ValueError(f"{path}: corrupt or unreadable EquationsOfMotion file ({exc})") from exc
