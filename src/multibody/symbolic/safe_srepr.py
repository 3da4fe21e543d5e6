"""Read ``sympy.srepr`` text back into expressions without ``eval``.

Saved equations of motion hold each expression as ``srepr`` text (``Add(Symbol('m'),
Integer(1))``). Evaluating that text would run whatever a file says, and a checksum stored next to
it proves nothing (anyone can recompute it). This reader parses the text with Python's ``ast``
(no evaluation) and builds only what ``srepr`` writes: calls of SymPy's expression classes,
undefined functions ``Function('f')(...)``, the named constants (``pi``, ``E``, ``I``, ``oo``, …),
and literal numbers, booleans and strings. A string is accepted only where ``srepr`` puts one — the
name of a symbol or function and the digits of a ``Float`` — because SymPy's constructors would
``sympify`` (and so evaluate) a string anywhere else.

>>> import sympy as sp
>>> x = sp.Symbol("x", real=True)
>>> e = sp.sin(x) ** 2 + sp.Rational(1, 3) * sp.Function("f")(x) + 2.5 * sp.pi
>>> read_srepr(sp.srepr(e)) == e
True
>>> read_srepr("__import__('os')")
Traceback (most recent call last):
...
ValueError: srepr text: '__import__' is not a SymPy expression class or constant
"""
from __future__ import annotations

import ast
import re

import sympy as sp

__all__ = ["read_srepr"]

#: classes whose first positional argument is a name or the digits of a number (srepr writes them so)
_TEXT_FIRST = frozenset({"Symbol", "Dummy", "Wild", "Function", "Float", "Str"})
_FLOAT_TEXT = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:inf|nan)$")
_MAX_TEXT = 1 << 24        # 16 MiB of text for one expression
_MAX_NAME = 1000           # characters of one symbol or function name

#: what equations of motion are made of. A class outside this list may compute on construction
#: (``factorial(Integer(10**9))``), so it is refused rather than built.
_CLASSES = """
Symbol Dummy Wild Str Function Integer Rational Float Half One Zero NegativeOne ImaginaryUnit
NaN Infinity NegativeInfinity ComplexInfinity Pi Exp1
Add Mul Pow Abs sign re im conjugate Max Min floor ceiling Mod
sin cos tan cot sec csc asin acos atan acot atan2 sinh cosh tanh asinh acosh atanh exp log
Heaviside DiracDelta Piecewise ExprCondPair Derivative Subs Tuple
ImmutableDenseMatrix ImmutableSparseMatrix BooleanTrue BooleanFalse
Equality Unequality StrictLessThan LessThan StrictGreaterThan GreaterThan And Or Not
""".split()
_CONSTANTS = ("pi", "E", "I", "oo", "zoo", "nan", "true", "false", "S")
_MAX_POWER = 64            # |k| of an integer power of a number (srepr never writes one: SymPy folds it)

_TABLE: dict | None = None


def _table() -> dict:
    """{name: SymPy class or constant} that srepr text of equations of motion may name."""
    global _TABLE
    if _TABLE is None:
        import sympy.core.numbers as numbers
        from sympy.core.symbol import Str
        from sympy.logic.boolalg import BooleanFalse, BooleanTrue

        places = (sp, numbers, sp.matrices.immutable)
        table = {"Str": Str, "BooleanTrue": BooleanTrue, "BooleanFalse": BooleanFalse}
        for name in _CLASSES:
            for place in places:
                obj = getattr(place, name, None)
                if isinstance(obj, type) and issubclass(obj, sp.Basic):
                    table.setdefault(name, obj)
        for name in _CONSTANTS[:-1]:
            table[name] = getattr(sp, name)
        _TABLE = table
    return _TABLE


def read_srepr(text: str):
    """The SymPy object ``text`` (written by ``sympy.srepr``) describes; ``ValueError`` for anything
    else (a name that is not a SymPy expression class, an operator, an attribute, a string where
    srepr writes none)."""
    if not isinstance(text, str):
        raise ValueError(f"srepr text: expected a string, got {type(text).__name__}")
    if len(text) > _MAX_TEXT:
        raise ValueError(f"srepr text: {len(text)} characters, more than the {_MAX_TEXT} allowed")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"srepr text does not parse ({type(exc).__name__})") from None
    try:
        return _build(tree.body)
    except RecursionError:
        raise ValueError("srepr text is nested too deeply") from None


def _literal(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)) and node.value is not None:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    raise ValueError(f"srepr text: unexpected {type(node).__name__} where a number or boolean belongs")


def _text(node, cls_name):
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise ValueError(f"srepr text: {cls_name} takes a quoted name first")
    s = node.value
    if cls_name == "Float" and not _FLOAT_TEXT.match(s):
        raise ValueError(f"srepr text: Float({s[:40]!r}) is not a decimal number")
    if len(s) > _MAX_NAME:
        raise ValueError(f"srepr text: a name of {len(s)} characters (at most {_MAX_NAME})")
    return s


def _build(node):
    if isinstance(node, ast.Name):
        obj = _table().get(node.id)
        if obj is None:
            raise ValueError(f"srepr text: {node.id!r} is not a SymPy expression class or constant")
        return obj
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_build(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Call):
        return _call(node)
    return _literal(node)


def _call(node):
    func = node.func
    if isinstance(func, ast.Call):          # Function('f')(args): an undefined function applied
        if not (isinstance(func.func, ast.Name) and func.func.id == "Function"):
            raise ValueError("srepr text: only Function('name') may be called with arguments")
        head = _call(func)
    elif isinstance(func, ast.Name):
        head = _table().get(func.id)
        if head is None or not isinstance(head, type):
            raise ValueError(f"srepr text: {func.id!r} is not a SymPy expression class or constant")
    else:
        raise ValueError(f"srepr text: unexpected {type(func).__name__} as a function")
    name = getattr(head, "__name__", "")
    args = []
    for k, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            raise ValueError("srepr text: starred arguments are not srepr")
        if k == 0 and name in _TEXT_FIRST and _table().get(name) is head:
            args.append(_text(a, name))
        elif isinstance(a, ast.Constant) and isinstance(a.value, str):
            raise ValueError(f"srepr text: a string argument to {name} (SymPy would evaluate it)")
        else:
            args.append(_build(a))
    kwargs = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise ValueError("srepr text: ** arguments are not srepr")
        kwargs[kw.arg] = _literal(kw.value)     # assumptions (real=True), Float's precision=53
    if head is sp.Pow and len(args) == 2 and all(isinstance(a, sp.Number) for a in args) \
            and isinstance(args[1], sp.Integer) and abs(int(args[1])) > _MAX_POWER:
        raise ValueError(f"srepr text: a number to the power {args[1]} (srepr never writes one)")
    try:
        return head(*args, **kwargs)
    except (TypeError, ValueError, AttributeError, sp.SympifyError) as exc:
        raise ValueError(f"srepr text: {name}(...) cannot be built ({exc})") from None
