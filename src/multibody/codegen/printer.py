"""Print SymEngine expressions as C, NumPy or MATLAB text (one printer, three dialects).

Numbers are printed with ``repr(float)`` (shortest text that reads back to the same double), so
generated code and the Python reference agree to the last bit of every constant. Small integer
powers become products (``x*x``), ``x**(1/2)`` becomes ``sqrt(x)``; any function the target has
no name for raises ``ValueError`` naming it. MATLAB's other power is ``x.^y`` (no ``pow``).
"""
from __future__ import annotations

import math
import re

import symengine as se

__all__ = ["Printer", "C_FUNCS", "NUMPY_FUNCS", "MATLAB_FUNCS", "comment_text"]

# what free text may keep in generated source: no quote, backslash, '*', '/', '?', '%', newline
_UNSAFE_TEXT = re.compile(r"[^A-Za-z0-9 _.,:;+\-=()\[\]<>@#!|~^&]")
_COMMENT_LIMIT = 160


def comment_text(text) -> str:
    """Free text (a model's, body's, joint's or parameter's name) made safe for a comment or
    docstring of every generated language.

    Names come from files a user did not write (``<robot name>``, ``<mujoco model>``). Pasted as
    they are, a name that closes a Python docstring, a C comment (``*/``) or a MATLAB comment line
    would run its own code in the generated module. Every printer passes free text through here:
    each character outside a small ASCII set (letters, digits, space, ``_.,:;+-=()[]<>@#!|~^&``)
    becomes ``_`` — no quote, backslash, ``*``, ``/``, ``?`` (C trigraphs) or line break survives —
    and the text is cut to 160 characters. Array and function names never come here: they
    must be identifiers, which :class:`~multibody.codegen.spec.CodeSpec` checks.

    >>> comment_text("arm'; import os")
    'arm_; import os'
    >>> comment_text("a */ evil(); /* b")
    'a __ evil(); __ b'
    """
    cleaned = _UNSAFE_TEXT.sub("_", str(text))
    return cleaned if len(cleaned) <= _COMMENT_LIMIT else cleaned[:_COMMENT_LIMIT - 3] + "..."


C_FUNCS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
           "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log", "Abs": "fabs",
           "atan2": "atan2", "sqrt": "sqrt"}
NUMPY_FUNCS = {k: "np." + {"Abs": "abs", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
                           "atan2": "arctan2"}.get(k, v) for k, v in C_FUNCS.items()}
MATLAB_FUNCS = {**C_FUNCS, "Abs": "abs"}
_DIALECT_FUNCS = {"c": C_FUNCS, "numpy": NUMPY_FUNCS, "matlab": MATLAB_FUNCS}
_NAMED_CONSTANTS = {"Pi": math.pi, "Exp1": math.e}


def _number(e) -> float | None:
    if isinstance(e, se.Number):
        if getattr(e, "is_complex", False) and not e.is_real:
            raise ValueError(f"complex constant {e} cannot be printed into real code")
        return float(e)
    t = type(e).__name__
    if t in _NAMED_CONSTANTS:
        return _NAMED_CONSTANTS[t]
    return None


class Printer:
    """Expression → source text. ``names`` maps symbols to the text that reads them."""

    def __init__(self, names: dict, dialect: str = "c"):
        if dialect not in _DIALECT_FUNCS:
            raise ValueError(f"dialect: expected 'c', 'numpy' or 'matlab', got {dialect!r}")
        self.names = names
        self.dialect = dialect
        self.funcs = _DIALECT_FUNCS[dialect]
        self.sqrt = self.funcs["sqrt"]
        self.pow = "pow" if dialect == "c" else "np.power"

    def num(self, x: float) -> str:
        if not math.isfinite(x):
            raise ValueError(f"cannot print the non-finite constant {x!r} into generated code")
        s = repr(float(x))
        return s

    def __call__(self, e) -> str:
        return self.expr(e)

    # precedence: 0 = sum, 1 = product, 2 = atom
    def expr(self, e, prec: int = 0) -> str:
        x = _number(e)
        if x is not None:
            s = self.num(x)
            return f"({s})" if x < 0 and prec > 0 else s
        t = type(e).__name__
        if isinstance(e, se.Symbol):
            try:
                return self.names[e]
            except KeyError:
                raise ValueError(f"symbol {e} is not an input of the generated code") from None
        if t == "Add":
            return self._add(e, prec)
        if t == "Mul":
            return self._mul(e, prec)
        if t == "Pow":
            return self._pow(e, prec)
        fname = self.funcs.get(t)
        if fname is None:
            raise ValueError(f"function {t!r} (in {e}) has no {self.dialect} equivalent in the code generator")
        return f"{fname}(" + ", ".join(self.expr(a) for a in e.args) + ")"

    def _signed(self, term):
        """(negative?, magnitude) of a product term."""
        x = _number(term)
        if x is not None:
            return x < 0, se.RealDouble(-x) if x < 0 else term
        if type(term).__name__ == "Mul":
            c = term.args[0]
            cx = _number(c)
            if cx is not None and cx < 0:
                return True, -term
        return False, term

    def _add(self, e, prec):
        args = list(e.args)
        # numbers last reads better: x + y + 1.0
        args.sort(key=lambda a: _number(a) is not None)
        parts = []
        for k, a in enumerate(args):
            neg, mag = self._signed(a)
            s = self.expr(mag, 1 if neg else 0)
            if k == 0:
                parts.append(("-" + s) if neg else s)
            else:
                parts.append((" - " if neg else " + ") + s)
        out = "".join(parts)
        return f"({out})" if prec > 0 else out

    def _mul(self, e, prec):
        num, den = [], []
        coeff = 1.0
        for a in e.args:
            x = _number(a)
            if x is not None:
                coeff *= x
                continue
            if type(a).__name__ == "Pow":
                ex = _number(a.args[1])
                if ex is not None and ex < 0:
                    den.append(a.args[0] ** (-a.args[1]))
                    continue
            num.append(a)
        neg = coeff < 0
        coeff = abs(coeff)
        parts = ([self.num(coeff)] if coeff != 1.0 or not num else []) + [self.expr(a, 1) for a in num]
        s = "*".join(parts)
        if den:
            d = "*".join(self.expr(a, 2) for a in den)
            s = f"{s}/" + (f"({d})" if len(den) > 1 else d)
        if neg:
            s = "-" + s
            return f"({s})" if prec > 0 else s
        return f"({s})" if prec > 1 and (den or len(parts) > 1) else s

    def _pow(self, e, prec):
        base, ex = e.args
        x = _number(ex)
        b = self.expr(base, 2)
        if x is not None:
            if x == int(x) and 1 <= x <= 4:
                s = "*".join([b] * int(x))
                return f"({s})" if prec > 1 and x > 1 else s
            if x == int(x) and -4 <= x <= -1:
                s = "*".join([b] * int(-x))
                return f"(1.0/({s}))" if x < -1 else f"(1.0/{b})"
            if x == 0.5:
                return f"{self.sqrt}({self.expr(base)})"
            if x == -0.5:
                return f"(1.0/{self.sqrt}({self.expr(base)}))"
        if self.dialect == "matlab":
            s = f"{b}.^{self.expr(ex, 2)}"
            return f"({s})" if prec > 1 else s
        return f"{self.pow}({self.expr(base)}, {self.expr(ex)})"
