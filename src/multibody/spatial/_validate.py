"""Argument checking shared by the spatial-algebra functions.

Every public function converts its inputs with :func:`as_real` and checks their shapes here, so
the error messages have one form: ``"<function>: <argument> must ..., got shape (...)"``, and the
exception class follows the one rule of :mod:`multibody._checks`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["as_real", "shape_error", "check_last", "check_last2", "batch_shape", "finite_result"]


def as_real(x, fn: str, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array.

    The rule of :mod:`multibody._checks`: TypeError for what is not real numbers (None, strings,
    complex, objects); ValueError for NaN or inf (and, in the checks below, for shapes)."""
    tx = type(x)
    if tx is float or tx is int:
        if not math.isfinite(x):
            raise ValueError(f"{fn}: {name} contains NaN or inf")
        return np.float64(x)
    if tx is np.ndarray and x.dtype == np.float64:
        a = x
    else:
        try:
            raw = np.asarray(x)
        except ValueError:  # nested sequences of unequal lengths
            raise ValueError(f"{fn}: {name} must be a real numeric array, got ragged nested sequences") from None
        if raw.dtype.kind == "c":
            raise TypeError(f"{fn}: {name} must be real, got a complex array")
        if raw.dtype.kind not in "iuf":
            raise TypeError(f"{fn}: {name} must be a real numeric array, got {type(x).__name__}")
        a = raw.astype(np.float64, copy=False)
    if not np.isfinite(a).all():
        raise ValueError(f"{fn}: {name} contains NaN or inf")
    return a


def shape_error(fn: str, name: str, expected: str, a: np.ndarray) -> ValueError:
    return ValueError(f"{fn}: {name} must {expected}, got shape {tuple(np.shape(a))}")


def check_last(a: np.ndarray, n: int, fn: str, name: str) -> None:
    """Require ``a`` to have shape ``(..., n)``."""
    if a.ndim < 1 or a.shape[-1] != n:
        raise shape_error(fn, name, f"have shape (..., {n})", a)


def check_last2(a: np.ndarray, n: int, m: int, fn: str, name: str) -> None:
    """Require ``a`` to have shape ``(..., n, m)``."""
    if a.ndim < 2 or a.shape[-2:] != (n, m):
        raise shape_error(fn, name, f"have shape (..., {n}, {m})", a)


def batch_shape(fn: str, **leading) -> tuple:
    """The broadcast of the arguments' leading (batch) dimensions, or ValueError naming them.

    ``leading`` maps each argument's name to its leading dimensions, e.g.
    ``batch_shape("plux", E=E.shape[:-2], r=r.shape[:-1])``."""
    try:
        return np.broadcast_shapes(*leading.values())
    except ValueError:
        shown = ", ".join(f"{name} {tuple(shape)}" for name, shape in leading.items())
        raise ValueError(f"{fn}: the leading (batch) dimensions do not broadcast: {shown}") from None


def finite_result(fn):
    """Decorate a public function whose finite input can give a result beyond the double range
    (``rv([1e308, 1e308, 0])``, ``mcI(1e300, [1e10, 0, 0], I)``): such a result raises
    ``ResultOverflowError`` (a ValueError) naming the function, never a silent inf or NaN, and
    numpy's overflow warnings are not shown on the way."""
    name = fn.__name__

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = fn(*args, **kwargs)
        for part in out if isinstance(out, tuple) else (out,):
            if not np.isfinite(part).all():
                from ..core import ResultOverflowError   # the one class for finite input whose result overflows
                raise ResultOverflowError(f"{name}: the result overflows the double range (the input has entries "
                                          "too large, e.g. near 1e308, or divides by a value near 0)")
        return out
    return checked
