"""Argument checks shared by every layer (spatial, model, dynamics, simulation, engine, view).

One rule decides the exception class (also written in :mod:`multibody.errors`):

- the wrong *kind* of thing — ``None`` where a value is needed, a string, a bool or complex where a
  real number is needed, a non-integer count, an array of objects or strings — raises ``TypeError``;
- the right kind with a wrong *value* — NaN or inf, out of range, a wrong shape or length, a name
  that is not among the known ones, an index out of range — raises ``ValueError``.

Messages start with the argument's name and say what was expected: ``"dt: expected a finite
number > 0, got -1.0"``.  The state arrays of the numeric kernels (q, qd, qdd, tau, f_ext, with
batch dimensions) are checked by :mod:`multibody._boundary` and the C core, not here.

>>> from multibody import _checks
>>> _checks.number("dt", 0.01, positive=True)
0.01
>>> _checks.number("dt", float("nan"), positive=True)
Traceback (most recent call last):
...
ValueError: dt: expected a finite number > 0, got nan
>>> _checks.number("dt", "0.01")
Traceback (most recent call last):
...
TypeError: dt: expected a real number, got str '0.01'
"""
from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from .core._core import gate as _gate

__all__ = ["number", "integer", "vector", "array", "one_of", "name_index", "model", "function", "all_finite"]


def _got(x) -> str:
    r = repr(x)
    return f"{type(x).__name__} {r[:60]}" if not isinstance(x, (numbers.Number, np.ndarray)) else r[:80]


def _is_real_scalar(x) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, numbers.Real):
        return True
    return isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf"


def number(name: str, x, *, positive: bool = False, nonneg: bool = False, lo=None, hi=None,
           allow_inf: bool = False) -> float:
    """``x`` as a float: a real number (TypeError otherwise), not NaN, finite unless ``allow_inf``,
    and > 0 / ≥ 0 / within [lo, hi] as asked (ValueError otherwise)."""
    if not _is_real_scalar(x):
        raise TypeError(f"{name}: expected a real number, got {_got(x)}")
    v = float(x)
    conds = (["> 0"] if positive else []) + (["≥ 0"] if nonneg and not positive else [])
    conds += ([f"≥ {lo:g}"] if lo is not None else []) + ([f"≤ {hi:g}"] if hi is not None else [])
    ok = not math.isnan(v) and (allow_inf or math.isfinite(v))
    ok = ok and not (positive and v <= 0) and not (nonneg and v < 0)
    ok = ok and not (lo is not None and v < lo) and not (hi is not None and v > hi)
    if not ok:
        what = "a number" if allow_inf else "a finite number"
        raise ValueError(f"{name}: expected {what}{' ' + ' and '.join(conds) if conds else ''}, got {v!r}")
    return v


def integer(name: str, x, *, lo: int | None = None, hi: int | None = None) -> int:
    """``x`` as an int: an integer (TypeError for floats, bools, strings …) within [lo, hi] (ValueError)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an integer, got {_got(x)}")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, got {_got(x)}") from None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f" ≥ {lo}" if hi is None else f" ≤ {hi}" if lo is None else f" in {lo}…{hi}"
        raise ValueError(f"{name}: expected an integer{rng}, got {v}")
    return v


def array(name: str, x, shape: tuple | None, *, finite: bool = True, what: str = "", copy: bool = True) -> np.ndarray:
    """``x`` as a new float64 array of ``shape`` (``None`` entries match any size; ``shape=None`` any
    shape; ``copy=False`` returns a float64 ndarray itself, for callers that only read it).

    Converted by the C core's one array gate, as every kernel argument is: TypeError for things
    that are not real numbers (None, strings, complex, objects, masked arrays); ValueError for a
    wrong shape, ragged nesting, or NaN/inf when ``finite``."""
    a = _gate(name, x)        # the C core's one array gate (csrc/common/gate.h): the same rules as the kernels'
    if copy and a is x:
        a = a.copy()
    if shape is not None and (a.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, a.shape))):
        raise ValueError(f"{name}: expected {what + ', ' if what else ''}shape {_shape(shape)}, got {a.shape}")
    if finite and not all_finite(a):
        raise ValueError(f"{name}: contains NaN or inf")
    return a


def vector(name: str, x, n: int | None = None, *, finite: bool = True, copy: bool = True) -> np.ndarray:
    """``x`` as a new 1-D float64 array of length ``n`` (any length if None); see :func:`array`.

    >>> vector("axis", [0, 0, 1], 3)
    array([0., 0., 1.])
    """
    return array(name, x, (n,), finite=finite, copy=copy)


def one_of(name: str, x, choices):
    """``x`` if it is one of ``choices``: ValueError naming them otherwise — TypeError when ``x`` is
    not of the choices' kind (a list where names are expected).

    >>> one_of("side", "upper", ("lower", "upper"))
    'upper'
    """
    kinds = {type(c) for c in choices}
    listed = sorted(map(str, choices)) if isinstance(choices, (set, frozenset, dict)) else list(choices)
    try:
        ok = x in choices
    except TypeError:  # unhashable, and the choices a set or dict
        ok = None
    if ok is None or (not ok and len(kinds) == 1 and not isinstance(x, kinds.pop())):
        raise TypeError(f"{name}: expected one of {listed}, got {_got(x)}") from None
    if not ok:
        raise ValueError(f"{name}: expected one of {listed}, got {x!r}")
    return x


def name_index(name: str, x, names, *, kind: str = "body", allow_base: bool = False) -> int:
    """Index of ``x`` given by position or by name among ``names``.

    ``allow_base`` admits −1 (the fixed base).  TypeError for anything but an int or a str;
    ValueError for an unknown name or an index out of range.

    >>> name_index("body", "b", ("a", "b"))
    1
    >>> name_index("body", "c", ("a", "b"))
    Traceback (most recent call last):
    ...
    ValueError: body: no body named 'c'; bodies are ['a', 'b']
    """
    if isinstance(x, str):
        try:
            return list(names).index(x)
        except ValueError:
            raise ValueError(f"{name}: no {kind} named {x!r}; {_PLURAL.get(kind, kind + 's')} are "
                             f"{list(names)}") from None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        raise TypeError(f"{name}: expected a {kind} name or index, got {_got(x)}")
    if not (-1 if allow_base else 0) <= x < len(names):
        raise ValueError(f"{name}: index {int(x)} out of range 0…{len(names) - 1}"
                         + (" (or −1, the base)" if allow_base else ""))
    return int(x)


_MODEL = []  # multibody.model.model.Model, registered by model.py when it defines the class (this
#             module imports nothing above it: before model.py ran, nothing is a Model)


def model(x, name: str = "model"):
    """``x`` if it is a numeric ``multibody.Model`` (TypeError otherwise; ValueError if symbolic)."""
    if not _MODEL or not isinstance(x, _MODEL[0]):
        raise TypeError(f"{name}: expected a multibody.Model, got {type(x).__name__}")
    x._require_numeric()
    return x


def function(name: str, f, *, optional: bool = False, signature: str = "") -> object:
    """``f`` if callable (or None when ``optional``); TypeError otherwise."""
    if f is None and optional:
        return None
    if not callable(f):
        raise TypeError(f"{name}: expected a callable{' ' + signature if signature else ''}"
                        f"{' or None' if optional else ''}, got {_got(f)}")
    return f


def all_finite(a) -> bool:
    """Every entry of the float array ``a`` is finite (no warning for huge finite entries)."""
    return bool(np.isfinite(a).all())


_PLURAL = {"body": "bodies"}


def _shape(shape) -> str:
    return "(" + ", ".join("…" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
