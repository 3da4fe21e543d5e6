"""Shared machinery of the symbolic derivations: SymEngine 3-vector algebra and rotation chains.

Derivations run on SymEngine expressions held in plain Python lists (3-vectors ``[x, y, z]``,
3×3 matrices as lists of rows), which is several times faster than SymPy for building the large,
unexpanded expressions of M, b, g; results are converted back to SymPy at the end.

Rotations are kept as *chains of factors* — elementary rotations ``("x"|"y"|"z", angle)`` and
general 3×3 matrices — so that consecutive rotations about the same axis merge into one angle
(R_z(q1)·R_z(q2) = R_z(q1+q2)). This keeps planar chains as compact as the slides' ``C123``
form, and gives the relative angular velocity of a chain exactly, with no trigonometric
simplification.
"""
from __future__ import annotations

import itertools

import numpy as np

import symengine as se
import sympy as sp
from sympy.core import basic as _sp_basic
from sympy.core.parameters import global_parameters as _sp_params
from mpmath.libmp import fzero as _mpf_zero, finf as _mpf_inf, fninf as _mpf_ninf, fnan as _mpf_nan

_MPF_SPECIAL = (_mpf_inf, _mpf_ninf, _mpf_nan)

ZERO = se.Integer(0)
ONE = se.Integer(1)
_Z = type(ZERO)     # SymEngine's 0 is its own class: a type test is 65 ns, ``x == 0`` 1.3 µs
_ONE_T = type(ONE)  # and so is its 1

# ---------------------------------------------------------------------------------------------
# conversion
# ---------------------------------------------------------------------------------------------


class _Sym(se.Symbol):
    """A SymEngine symbol that converts back to the very SymPy symbol it came from
    (SymEngine keeps no assumptions such as ``real=True``)."""

    def __init__(self, name, orig):
        super().__init__(name)
        self.orig = orig

    def _sympy_(self):
        return self.orig


_SYMS: dict = {}


def se_symbol(sym: sp.Symbol):
    """The SymEngine twin of a SymPy symbol (converts back to ``sym`` itself)."""
    t = _SYMS.get(sym)
    if t is None:
        t = _SYMS[sym] = _Sym(sym.name, sym)
    return t


class _Unwalked(Exception):
    """A SymPy node :func:`walk_se` leaves to SymEngine's own conversion."""


def _twin(x):
    if not isinstance(x, sp.Symbol):   # a Dummy, Wild …: not walked
        raise _Unwalked
    return se_symbol(x)


def _unwalked(x):
    raise _Unwalked


def walk_se(x, symbol=_twin, memo=None, other=_unwalked):
    """SymPy → SymEngine for sums, products and powers, exact rationals, double floats and the
    functions of ``_SE_FUNCS``, built bottom-up: SymEngine builds the same canonical expression from
    the same arguments, without asking SymPy for each node's parts as ``se.sympify`` does.  A symbol
    becomes ``symbol(s)`` (its twin, :func:`se_symbol`, by default), any other node ``other(node)``
    (by default :class:`_Unwalked` is raised); ``memo`` (a dict) converts a subexpression shared by
    several inputs once.  Measured: ``se.sympify`` and the twins' ``subs`` took ~85 µs for the double
    pendulum's ``m1*(h1**2 + w1**2)/12`` against ~10 µs here, and 13 ms against 0.6 ms on the flapping
    flyer's aerodynamic forces with SymPy's cache cleared (TMT's elements).

    >>> import sympy as sp
    >>> x, y = sp.symbols("x y")
    >>> walk_se(sp.Rational(1, 2) * x * sp.sin(y) + 0.25)
    0.25 + (1/2)*x*sin(y)
    """
    if memo is not None:
        r = memo.get(x)
        if r is not None:
            return r
    if not isinstance(x, sp.Basic):
        r = other(x)
    elif x.is_Symbol:
        r = symbol(x)
    elif x.is_Rational:            # Integer or Rational
        r = se.Integer(x.p) if x.q == 1 else se.Rational(x.p, x.q)
    elif x.is_Float and x._prec <= 53:
        r = se.RealDouble(float(x))
    elif x.is_Add:
        r = se.Add(*[walk_se(a, symbol, memo, other) for a in x.args])
    elif x.is_Mul:
        r = se.Mul(*[walk_se(a, symbol, memo, other) for a in x.args])
    elif x.is_Pow:
        b, e = x.args
        r = se.Pow(walk_se(b, symbol, memo, other), walk_se(e, symbol, memo, other))
    else:
        fn = _SE_FUNCS.get(type(x))
        r = other(x) if fn is None else fn(*[walk_se(a, symbol, memo, other) for a in x.args])
    if memo is not None:
        memo[x] = r
    return r


def to_se(x):
    """SymPy (or number) → SymEngine; symbols keep their SymPy identity on the way back."""
    if isinstance(x, se.Basic):
        return x
    if isinstance(x, sp.Symbol):
        return se_symbol(x)
    if isinstance(x, sp.Expr):
        try:
            return walk_se(x)
        except _Unwalked:
            pass
    e = se.sympify(x)
    free = x.free_symbols if isinstance(x, sp.Basic) else None   # (a walk of x: once)
    if free:
        e = e.subs({se.Symbol(s.name): se_symbol(s) for s in free})
    return e


def to_sp(x):
    """SymEngine → SymPy (number stays a SymPy number)."""
    if isinstance(x, se.Basic):
        return x._sympy_()
    return sp.sympify(x)


def expand(e):
    """``se.expand(e)``, made canonical.

    SymEngine 0.15's ``expand`` leaves a non-canonical sum when the base of a power collapses to
    one term with a number in front, and other terms are beside it: ``expand(x**2/50 +
    (x/2 + y/8 - y/8)**2/25)`` holds the key ``(1/4)*x**2`` under the coefficient 1/25. It prints
    right and ``xreplace`` evaluates it right, but ``args`` drop the key's number (two terms
    ``x**2/50`` and ``x**2/25``), and everything that walks ``args`` — ``cse``, ``Lambdify(cse=True)``,
    the conversion to SymPy — reads a different expression (auto_tree(5, bf=2, skew=0.4)'s b[2], pne
    inertial: 1.4e-3 off). A second ``expand`` over the result (a polynomial with no powers of sums
    left) multiplies each key's number into its coefficient; it is all C++ and linear in the terms.
    """
    return se.expand(se.expand(e))


class Converter:
    """SymEngine → SymPy, fast, giving back the caller's own symbols.

    Walks the SymEngine DAG once (memoised, so shared subexpressions are converted once) and
    builds SymPy nodes from already-canonical arguments without re-evaluating them (arguments
    are put in SymPy's canonical order, so results compare equal to evaluated SymPy). SymEngine
    keeps no assumptions: a plain symbol ``q1`` comes back as the caller's ``Symbol('q1', real=True)``.
    """

    def __init__(self, symbols=()):
        self.back = {s.name: s for s in symbols}
        # SymEngine has only commutative symbols; with the caller's all commutative too, every node
        # is, and Add/Mul are built without SymPy asking each argument (fuzzy_and over
        # is_commutative: a fifth of converting a pendulum's M, b, g)
        self.commutative = True if all(s.is_commutative for s in self.back.values()) else None
        self.memo = {}
        self.keys = {}     # id of a converted SymPy node → its canonical sort key (see _key)
        self._alive = []   # nodes whose id() is a key in self.keys stay alive with the converter

    def _key(self, x):
        """A tuple that orders SymPy nodes exactly as ``Basic.compare`` (the order SymPy's
        ``_addsort``/``_mulsort`` give Add and Mul arguments): the class's place in
        ``ordering_of_classes`` (then its name), the length of the hashable content, then the
        content item by item, Basic items by their own key. Built once per node and compared as
        tuples in C, where ``cmp_to_key(Basic.compare)`` walks both trees in Python at every
        comparison of a sort."""
        keys = self.keys
        k = keys.get(id(x))
        if k is not None:
            return k
        t = type(x)
        head = _HEADS.get(t)
        if head is None:
            head = _HEADS[t] = _head(t)
        if head[2]:        # sums, products, powers, functions: the content is the arguments, all Basic
            args = x._args
            get = keys.get
            k = (head[0], head[1], len(args), tuple([get(id(a)) or self._key(a) for a in args]))
        else:
            hc = x._hashable_content()
            items = []
            for item in hc:
                if isinstance(item, sp.Basic):
                    items.append(self._key(item))
                elif isinstance(item, frozenset):
                    raise _NoKey
                else:
                    items.append(item)
            k = (head[0], head[1], len(hc), tuple(items))
        keys[id(x)] = k
        self._alive.append(x)
        return k

    def _sort(self, args):
        """Sort Add/Mul arguments in SymPy's canonical order (``_addsort``/``_mulsort``)."""
        try:
            args.sort(key=self._key)
        except (_NoKey, TypeError):   # an item Basic.compare would handle differently: its own sort
            args.sort(key=_sp_basic._args_sortkey)

    def _flat_add(self, args):
        """``sympy.Add(*args)`` for canonical arguments of which some are sums (SymPy distributes
        a number over a sum, so SymEngine's ``2*(x + y)`` comes back as ``2*x + 2*y``), as
        ``Add.flatten`` does it: the sums' terms merged in, like terms collected (coefficient by
        ``as_coeff_Mul``), numbers added first, the rest in canonical order by the tuple key of
        :meth:`_sort` instead of ``Basic.compare`` (Add.flatten's sort was 70 % of reading a
        16-link pendulum's M, b, g). The terms are visited in Add.flatten's order (a sum's terms
        appended at the end, not in place), so float coefficients are added in the same order
        and come out the same to the last bit (the flapping flyer's b is full of floats). Anything
        but finite terms and powers of symbolic bases goes to SymPy's own Add."""
        terms: dict = {}
        num = sp.S.Zero
        seq = list(args)
        for t in seq:           # (extended while visited, as Add.flatten's loop)
            if t.is_Add:
                seq.extend(t.args)
                continue
            if t.is_Number:
                if not _finite(t):
                    return sp.Add(*args)
                num = num + t
                continue
            if t.is_Pow and t.base.is_Number or not t.is_commutative or t.is_Order:
                return sp.Add(*args)
            c, m = t.as_coeff_Mul() if t.is_Mul else (sp.S.One, t)
            if not _finite(c):
                return sp.Add(*args)
            old = terms.get(m)
            terms[m] = c if old is None else old + c
        out = []
        for m, c in terms.items():
            if _number_zero(c):
                continue
            if c is sp.S.One:
                out.append(m)
            elif m.is_Mul:
                out.append(m._new_rawargs(*((c,) + m.args)))   # Add.flatten's own fast way
            elif m.is_Add:
                out.append(sp.Mul(c, m, evaluate=False))
            else:
                out.append(sp.Mul(c, m))
        self._sort(out)
        if num is not sp.S.Zero:
            out.insert(0, num)
        if not out:
            return sp.S.Zero
        if len(out) == 1:
            return out[0]
        return sp.Add._from_args(out, self.commutative)

    def _distribute(self, c, s):
        """``sympy.Mul(c, s)`` for a number ``c`` and a canonical sum ``s``: what Mul.flatten's
        two-argument case does for a rational ``c`` (``Add(*[_keep_coeff(c, t) for t in s.args])``),
        each term's coefficient multiplied in (by SymPy's own number arithmetic) and the terms
        summed by :meth:`_flat_add`, without Mul.flatten and Add.flatten (their sorts by
        ``Basic.compare`` were a fifth of converting the double pendulum's readable M, b, g:
        ``(1/12)*(h1**2*m1 + …)`` in M[0,0]; most of the flyer's). ``_keep_coeff`` drops a
        product's coefficient that became 1 by its own ``== 1`` (SymPy 1.13 on: a float 1.0 is
        not 1 and stays), and for ``c = −1`` negates (``Mul.__neg__``: only an exact 1 goes), both
        kept here. A float ``c``, a power of a number (``2*sqrt(2)``) or SymPy's distribution
        switched off: SymPy's own."""
        if not c.is_Rational or c.is_zero or self.commutative is not True or not _sp_params.distribute:
            return sp.Mul(c, s)
        new = sp.Mul._from_args
        neg = c is sp.S.NegativeOne
        terms = []
        for t in s.args:
            if t.is_Number:
                terms.append(c * t)
                continue
            fs = t.args if t.is_Mul else (t,)
            if any(f.is_Pow and f.base.is_Number for f in fs):
                return sp.Mul(c, s)
            if t.is_Mul and fs[0].is_Number:
                k = fs[0] * c
                drop = k is sp.S.One if neg else k == 1
                terms.append(new(fs[1:], True) if drop else new((k,) + fs[1:], True))
            else:
                terms.append(new((c,) + fs, True))
        return self._flat_add(terms)

    def __call__(self, x):
        if not isinstance(x, se.Basic):
            return sp.sympify(x)
        return self._conv(x)

    def _args(self, e):
        """The converted arguments of ``e``: those already converted (most of a DAG's leaves and
        shared nodes) read from the memo here, without a call of :meth:`_conv` each."""
        get, conv = self.memo.get, self._conv
        return [r if (r := get(a)) is not None else conv(a) for a in e.args]

    def _conv(self, e):
        r = self.memo.get(e)
        if r is not None:
            return r
        t = type(e)
        if t is _SE_ADD or (t is not _SE_MUL and isinstance(e, se.Add)):   # (the class first: most nodes)
            args = self._args(e)
            if any(a.is_Add for a in args):
                r = self._flat_add(args)  # a distributed coefficient produced a nested sum
            else:
                self._sort(args)
                r = sp.Add._from_args(args, self.commutative)
        elif t is _SE_MUL or isinstance(e, se.Mul):
            args = self._args(e)
            if len(args) == 2 and any(a.is_Number for a in args) and any(a.is_Add for a in args):
                # SymPy distributes a number over a sum: 2*(x + y) → 2*x + 2*y
                r = self._distribute(*args) if args[0].is_Number else self._distribute(args[1], args[0])
            elif any(a.is_Mul for a in args):
                r = sp.Mul(*args)
            else:
                self._sort(args)
                r = sp.Mul._from_args(args, self.commutative)
        elif isinstance(e, se.Symbol):
            r = e._sympy_()
            if isinstance(r, sp.Symbol):
                r = self.back.get(r.name, r)
            if r.is_commutative is not True:
                self.commutative = None   # nodes built from here on ask their arguments
        elif isinstance(e, se.Number):
            r = e._sympy_()
        elif isinstance(e, se.Pow):
            b, ex = e.args
            b, ex = self._conv(b), self._conv(ex)
            if b.is_Mul:
                r = sp.Pow(b, ex)       # SymPy distributes an integer power over a product
            elif self.commutative is True and type(ex) in _SP_NUMBERS_OR_INT:
                # what Pow(b, ex, evaluate=False) builds (its cache lookup and constructor
                # post-processors cost ~8 µs a power after the cache is cleared; a symbol's
                # square is in most entries of M): the node, commutative as its base
                r = _sp_basic.Basic.__new__(sp.Pow, b, ex)
                r.is_commutative = b.is_commutative
            else:
                r = sp.Pow(b, ex, evaluate=False)
        else:
            fn = _SP_FUNCS.get(type(e).__name__)
            if fn is not None:
                r = _apply(fn, [self._conv(a) for a in e.args])
            else:  # anything else: SymPy's own conversion, then our symbols
                r = e._sympy_()
                if r.free_symbols:
                    r = r.xreplace({s: self.back[s.name] for s in r.free_symbols
                                    if s.name in self.back})
        self.memo[e] = r
        return r

    def matrix(self, rows) -> sp.Matrix:
        if rows and isinstance(rows[0], (list, tuple)):
            return sp.Matrix([[self(e) for e in r] for r in rows])
        return sp.Matrix([self(e) for e in rows])


def _finite(c) -> bool:
    """``c.is_finite`` of a SymPy number, for rationals and floats from the class and the mpf
    (an assumption query on a new Float deduces its facts: ~10 µs, a tenth of converting the
    flapping flyer's M, b, g)."""
    if c.is_Rational:
        return True
    if c.is_Float:
        return c._mpf_ not in _MPF_SPECIAL
    return c.is_finite


def _number_zero(c) -> bool:
    """``c.is_zero`` of a SymPy number (as :func:`_finite`)."""
    if c.is_Rational:
        return c is sp.S.Zero
    if c.is_Float:
        return c._mpf_ == _mpf_zero
    return c.is_zero


class _NoKey(Exception):
    pass


_SE_ADD, _SE_MUL = type(se.Symbol("x") + se.Symbol("y")), type(se.Symbol("x") * se.Symbol("y"))
_CLASS_RANK = {name: i for i, name in enumerate(_sp_basic.ordering_of_classes)}
_UNKNOWN_RANK = len(_sp_basic.ordering_of_classes) + 1
_HEADS: dict = {}   # SymPy class → (rank, name or "", whether its hashable content is its arguments)


def _head(cls):
    """The class's part of :meth:`Converter._key`: its place in ``ordering_of_classes`` (its name
    breaks ties among the unknown ones), and whether ``_hashable_content`` is Basic's own (the
    arguments: sums, products, powers, sin, cos …), read as ``_args`` without the call and the
    per-item class tests."""
    name = cls.__name__
    rank = _CLASS_RANK.get(name, _UNKNOWN_RANK)
    own = cls._hashable_content in (_sp_basic.Basic._hashable_content, sp.Expr._hashable_content)
    return rank, name if rank == _UNKNOWN_RANK else "", own

_SP_FUNCS = {"sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "exp": sp.exp, "log": sp.log,
             "asin": sp.asin, "acos": sp.acos, "atan": sp.atan, "atan2": sp.atan2,
             "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "Abs": sp.Abs, "sign": sp.sign}


_SE_FUNCS = {getattr(sp, name): getattr(se, name) for name in ("sin", "cos", "tan", "exp", "log", "asin", "acos",
                                                                 "atan", "sinh", "cosh", "tanh", "atan2", "Abs",
                                                                 "sign")}
_NARGS: dict = {}


def _apply(fn, args):
    """``fn(*args, evaluate=False)`` without its cost: SymPy's Function.__new__ builds the class's
    ``nargs`` FiniteSet twice per call (about 0.1 ms after the cache is cleared, the largest fixed
    cost of converting a small system); the node it returns is ``Basic.__new__(fn, *args)`` with
    that set as ``nargs``, which is built here once per (function, arity) by SymPy itself."""
    key = (fn, len(args))
    nargs = _NARGS.get(key)
    if nargs is None:
        r = fn(*args, evaluate=False)
        _NARGS[key] = r.nargs
        return r
    r = _sp_basic.Basic.__new__(fn, *args)
    r.nargs = nargs
    return r


_PLAIN = (int, float, bool)
_SP_NUMBERS = frozenset(type(x) for x in (sp.S.Zero, sp.S.One, sp.S.NegativeOne, sp.S.Half))
_SP_NUMBERS_OR_INT = _SP_NUMBERS | {sp.Integer, sp.Rational}


def free_symbols(obj) -> set:
    """SymPy free symbols of anything the derivations handle: SymPy or SymEngine expressions and
    matrices, nested lists/tuples, NumPy object arrays, plain numbers (none)."""
    if isinstance(obj, sp.Basic):
        return set(obj.free_symbols)
    if isinstance(obj, sp.MatrixBase):
        return set(obj.free_symbols)
    if isinstance(obj, se.Basic):
        return {to_sp(s) for s in obj.free_symbols}
    if isinstance(obj, se.DenseMatrix):
        return set().union(*(free_symbols(e) for e in obj)) if len(obj) else set()
    if isinstance(obj, np.ndarray):
        if obj.dtype != object:
            return set()
        # a model's arrays are mostly plain numbers, SymPy's 0 and 1 and bare symbols: those are
        # answered here (Basic.free_symbols walks and hashes each one, ~1 µs a call after the
        # cache is cleared; a symbolic model has ~90 entries and derive reads them twice)
        out = set()
        for e in obj.ravel():
            t = type(e)
            if t in _PLAIN or t in _SP_NUMBERS:
                continue
            if t is sp.Symbol:
                out.add(e)
            else:
                out |= free_symbols(e)
        return out
    if isinstance(obj, (list, tuple)):
        return set().union(*(free_symbols(e) for e in obj)) if obj else set()
    if isinstance(obj, (int, float, complex, np.number)) or obj is None:
        return set()
    return set(sp.sympify(obj).free_symbols)


def _se_matrix(m: sp.MatrixBase):
    return se.Matrix(m.tolist())


def matmul(*ms) -> sp.Matrix:
    """Product of SymPy matrices, computed in SymEngine, returned as SymPy with the inputs' symbols."""
    ms = [sp.Matrix(m) for m in ms]
    shape = (ms[0].shape[0], ms[-1].shape[1])
    if 0 in shape or any(0 in m.shape for m in ms):
        return sp.zeros(*shape)
    out = _se_matrix(ms[0])
    for m in ms[1:]:
        out = out * _se_matrix(m)
    conv = Converter(free_symbols(ms))
    return sp.Matrix(out.nrows(), out.ncols(), [conv(e) for e in out])


def jacobian(v, x) -> sp.Matrix:
    """∂v/∂x of a SymPy column ``v`` by the symbols ``x``, computed in SymEngine, returned as SymPy."""
    v, x = sp.Matrix(v), list(x)
    if not x or v.shape[0] == 0:
        return sp.zeros(v.shape[0], len(x))
    J = _se_matrix(v).jacobian(se.Matrix([to_se(s) for s in x]))
    conv = Converter(free_symbols(v) | set(x))
    return sp.Matrix(J.nrows(), J.ncols(), [conv(e) for e in J])


_DENSE = sp.MutableDenseMatrix


def flat_matrix(rows: int, cols: int, flat) -> sp.Matrix:
    """``sympy.Matrix(rows, cols, flat)`` of SymPy entries, built as SymPy builds it but without
    its input parsing (``_handle_creation_inputs``: 15–20 µs of the 40 a small matrix costs; a
    derivation builds seven). The same matrix (same domain and entries); SymPy's own constructor
    when its private layout is not there."""
    flat = list(flat)
    if not rows or not cols:
        return sp.zeros(rows, cols)
    try:
        types = set(map(type, flat))
        if types <= _SURELY_EXPR and not types.isdisjoint(_NEVER_ZERO) and _EXRAW is not None:
            # what _flat_list_to_DomainMatrix does for entries that are expressions and not all
            # rational numbers (those go to ZZ or QQ there): the non-zero entries into an EXRAW
            # matrix. Its ``element != 0`` sympifies 0 for every entry; a symbol, sum, product,
            # power or function is never structurally 0, so only the others are compared
            dod: dict = {}
            zero = sp.S.Zero
            for k, e in enumerate(flat):
                if e is zero or (type(e) not in _NEVER_ZERO and e == 0):
                    continue
                i, j = divmod(k, cols)
                row = dod.get(i)
                if row is None:
                    row = dod[i] = {}
                row[j] = e
            return _DENSE._fromrep(_DomainMatrix(dod, (rows, cols), _EXRAW))
        return _DENSE._fromrep(_DENSE._flat_list_to_DomainMatrix(rows, cols, flat))
    except AttributeError:    # pragma: no cover - another SymPy's internals
        return sp.Matrix(rows, cols, flat)


def selection_matrix(rows, cols: int) -> sp.Matrix:
    """The m×n matrix with a 1 in row r at column ``rows[r]`` and zeros elsewhere (an actuator
    selection S), as ``sympy.Matrix`` builds it from those ones and zeros (a sparse integer matrix
    over ZZ), without reading and classifying each entry (22 of the 145 µs of a small model's
    symbols). SymPy's own constructor when its private layout is not there.

    >>> selection_matrix([0, 2], 3)
    Matrix([
    [1, 0, 0],
    [0, 0, 1]])
    """
    rows = list(rows)
    try:
        from sympy.polys.domains import ZZ

        one = ZZ(1)
        return _DENSE._fromrep(_DomainMatrix({r: {int(k): one} for r, k in enumerate(rows)}, (len(rows), cols), ZZ))
    except (AttributeError, TypeError):    # pragma: no cover - another SymPy's internals
        return sp.Matrix(len(rows), cols, lambda r, k: 1 if k == rows[r] else 0)


try:
    from sympy.polys.domains import EXRAW as _EXRAW
    from sympy.polys.matrices import DomainMatrix as _DomainMatrix
except ImportError:           # pragma: no cover - another SymPy's layout
    _EXRAW = _DomainMatrix = None
_NEVER_ZERO = frozenset({sp.Symbol, sp.Add, sp.Mul, sp.Pow, sp.sin, sp.cos})
# entry types of the fast path: expressions that are not all rational numbers together (a matrix
# with a symbol in it is EXRAW in SymPy too); the numbers SymPy's derivations leave beside them
_SURELY_EXPR = _NEVER_ZERO | {type(sp.S.Zero), type(sp.S.One), type(sp.S.NegativeOne), type(sp.S.Half),
                              sp.Integer, sp.Rational}


def sp_matrix(rows, conv: Converter | None = None) -> sp.Matrix:
    """List of rows (or list of scalars = column) of SymEngine expressions → sympy.Matrix."""
    if conv is not None:
        return conv.matrix(rows)
    if rows and isinstance(rows[0], (list, tuple)):
        return sp.Matrix([[to_sp(e) for e in r] for r in rows])
    return sp.Matrix([to_sp(e) for e in rows])


def vec3(v, what="vector"):
    """Any 3-vector-like input → list of 3 SymEngine expressions."""
    if isinstance(v, (sp.MatrixBase, se.DenseMatrix)):
        items = list(v)
    else:
        items = list(v)
    if len(items) != 3:
        raise ValueError(f"{what}: expected 3 entries, got {len(items)}")
    return [to_se(e) for e in items]


def mat3(A, what="matrix"):
    """Any 3×3-like input → list of 3 rows of SymEngine expressions."""
    if isinstance(A, (sp.MatrixBase, se.DenseMatrix)):
        if (A.rows, A.cols) != (3, 3):
            raise ValueError(f"{what}: expected a 3×3 matrix, got {A.rows}×{A.cols}")
        return [[to_se(A[i, j]) for j in range(3)] for i in range(3)]
    rows = [list(r) for r in A]
    if len(rows) != 3 or any(len(r) != 3 for r in rows):
        raise ValueError(f"{what}: expected a 3×3 matrix")
    return [[to_se(e) for e in r] for r in rows]


# ---------------------------------------------------------------------------------------------
# 3-vector algebra on lists
# ---------------------------------------------------------------------------------------------


def _plus(x, y):
    """``x + y``; an exact 0 on either side gives the other one (no SymEngine call)."""
    return x if type(y) is _Z else (y if type(x) is _Z else x + y)


def minus_product(acc, x, y):
    """``acc − x*y``, with no SymEngine call when x or y is an exact 0 (then ``acc``)."""
    if type(x) is _Z or type(y) is _Z:
        return acc
    return acc - x * y


def add(a, b):
    return [_plus(a[0], b[0]), _plus(a[1], b[1]), _plus(a[2], b[2])]


def sub(a, b):
    return [x if type(y) is _Z else x - y for x, y in zip(a, b)]


def scale(s, a):
    return [e if type(e) is _Z else s * e for e in a]


def _lin(a0, b0, a1, b1, a2, b2):
    """``a0*b0 + a1*b1 + a2*b2`` with the products of an exact 0 left out: the same expression
    (0·x = 0 and y + 0 = y, the other terms added in the same order), without the SymEngine
    operations on zeros — an axis, a CoM or a point mass's inertia is mostly zeros, and the
    recursions multiply them by every rotation and velocity."""
    out = None
    if type(a0) is not _Z and type(b0) is not _Z:
        out = a0 * b0
    if type(a1) is not _Z and type(b1) is not _Z:
        out = a1 * b1 if out is None else out + a1 * b1
    if type(a2) is not _Z and type(b2) is not _Z:
        out = a2 * b2 if out is None else out + a2 * b2
    return ZERO if out is None else out


def _det2(a, b, c, d):
    """``a*b - c*d``, zeros left out as in :func:`_lin`."""
    if type(a) is _Z or type(b) is _Z:
        return ZERO if type(c) is _Z or type(d) is _Z else -(c * d)
    if type(c) is _Z or type(d) is _Z:
        return a * b
    return a * b - c * d


def dot(a, b):
    return _lin(a[0], b[0], a[1], b[1], a[2], b[2])


def cross(a, b):
    return [_det2(a[1], b[2], a[2], b[1]), _det2(a[2], b[0], a[0], b[2]), _det2(a[0], b[1], a[1], b[0])]


def mv(A, v):
    """A·v."""
    v0, v1, v2 = v
    return [_lin(r[0], v0, r[1], v1, r[2], v2) for r in A]


def mtv(A, v):
    """Aᵀ·v."""
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = A
    v0, v1, v2 = v
    return [_lin(a00, v0, a10, v1, a20, v2), _lin(a01, v0, a11, v1, a21, v2), _lin(a02, v0, a12, v1, a22, v2)]


def mm(A, B):
    (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = B
    return [[_lin(a0, b00, a1, b10, a2, b20), _lin(a0, b01, a1, b11, a2, b21), _lin(a0, b02, a1, b12, a2, b22)]
            for a0, a1, a2 in A]


def transpose(A):
    return [[A[j][i] for j in range(3)] for i in range(3)]


def eye3():
    return [[ONE if i == j else ZERO for j in range(3)] for i in range(3)]


def _is_exactly(e, value, canonical) -> bool:
    """``e == value`` for 0 or 1, answered by a type test where ``e`` is SymEngine's own ``canonical`` number
    (``==`` with a Python number costs ~1 µs: it converts the number first) and for any other SymEngine
    expression that is not a number (a canonical expression equal to 0 or 1 is SymEngine's 0 or 1 itself);
    a float, a Python number or SymPy compares."""
    if type(e) is canonical:
        return True
    if isinstance(e, se.Basic) and not e.is_Number:
        return False
    return e == value


def _is0(e) -> bool:
    return _is_exactly(e, 0, _Z)


def is_zero_vec(v):
    return all(_is0(e) for e in v)


def _is1(e) -> bool:
    return _is_exactly(e, 1, _ONE_T)


def is_identity(A):
    """Whether the 3×3 list ``A`` is the identity (each body's A_PJ and joint rotation is asked, by
    several recursions: type tests, not SymEngine comparisons)."""
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = A
    return (_is1(a00) and _is1(a11) and _is1(a22) and _is0(a01) and _is0(a02) and _is0(a10) and _is0(a12)
            and _is0(a20) and _is0(a21))


def time_derivative(expr, q, dq):
    """Σ_k ∂expr/∂q_k · q̇_k for a SymEngine expression."""
    out = ZERO
    for qk, dqk in zip(q, dq):
        d = expr.diff(qk)
        if d != 0:
            out = out + d * dqk
    return out


# ---------------------------------------------------------------------------------------------
# trigonometric canonical form (small local expressions only)
# ---------------------------------------------------------------------------------------------


def trig_canonical(e):
    """Canonical polynomial form in sin/cos of single angles: expand_trig, expand, sin² → 1 − cos².

    Zero exactly when the input is a polynomial trigonometric identity in independent angles.
    Meant for small local expressions (a joint's rotation matrix); returns SymPy.
    """
    e = sp.expand(sp.expand_trig(sp.sympify(e)))

    def is_sin_pow(x):
        return x.is_Pow and isinstance(x.base, sp.sin) and x.exp.is_Integer and x.exp >= 2

    def repl(x):
        k = int(x.exp)
        return (1 - sp.cos(x.base.args[0]) ** 2) ** (k // 2) * x.base ** (k % 2)

    for _ in range(3):
        new = sp.expand(e.replace(is_sin_pow, repl))
        if new == e:
            break
        e = new
    return e


# ---------------------------------------------------------------------------------------------
# rotation chains
# ---------------------------------------------------------------------------------------------

AXES = {"x": (ONE, ZERO, ZERO), "y": (ZERO, ONE, ZERO), "z": (ZERO, ZERO, ONE)}


def elementary_rows(axis: str, c, s, one=ONE, zero=ZERO):
    """Rows of the elementary rotation about x/y/z with cosine ``c`` and sine ``s`` (A_IB of a frame
    turned about the axis): the one statement, read by :func:`elementary` and ``utils.rot_x …``."""
    if axis == "x":
        return [[one, zero, zero], [zero, c, -s], [zero, s, c]]
    if axis == "y":
        return [[c, zero, s], [zero, one, zero], [-s, zero, c]]
    return [[c, -s, zero], [s, c, zero], [zero, zero, one]]


def elementary(axis: str, a):
    """Elementary rotation matrix (list of rows) about x/y/z by angle ``a`` (SymEngine)."""
    a = to_se(a)
    return elementary_rows(axis, se.cos(a), se.sin(a))   # fresh lists of SymEngine entries


def axis_letter(axis):
    """"x", "y" or "z" when ``axis`` (3 SymEngine entries) is that coordinate axis, else None
    (type tests, :func:`_is1` and :func:`_is0`: every joint asks, twice)."""
    x, y, z = axis
    if _is0(y) and _is0(z):
        return "x" if _is1(x) else None
    if _is0(x):
        if _is1(y) and _is0(z):
            return "y"
        if _is0(y) and _is1(z):
            return "z"
    return None


def axis_rotation(axis, angle):
    """Rotation by ``angle`` about unit ``axis`` (Rodrigues); exact elementary matrices for x/y/z."""
    letter = axis_letter(axis)
    if letter is not None:
        return elementary(letter, angle)
    c, s = se.cos(angle), se.sin(angle)
    x, y, z = axis
    t = 1 - c
    return [[c + x * x * t, x * y * t - z * s, x * z * t + y * s],
            [y * x * t + z * s, c + y * y * t, y * z * t - x * s],
            [z * x * t - y * s, z * y * t + x * s, c + z * z * t]]


def joint_factor(axis, angle) -> "Factor":
    """The rotation of a revolute/helical joint as one chain factor (elementary when it can be:
    about −x, −y or −z it is the elementary rotation by −angle, which merges with its neighbours
    and whose angular velocity needs no trigonometric canonical form, as Rodrigues' matrix did)."""
    letter = axis_letter(axis)
    if letter is not None:
        return Factor(letter, angle)
    letter = axis_letter([-a for a in axis])
    if letter is not None:
        return Factor(letter, -angle)
    return Factor(matrix=axis_rotation(axis, angle))


class Factor:
    """One factor of a rotation chain: elementary (axis, angle) or a general matrix."""

    __slots__ = ("axis", "angle", "matrix", "_key")

    def __init__(self, axis=None, angle=None, matrix=None):
        self.axis = axis
        self.angle = angle
        self.matrix = matrix if matrix is not None else elementary(axis, angle)
        if axis is not None:
            self._key = (axis, angle)
        else:
            self._key = ("M",) + tuple(e for r in self.matrix for e in r)

    def key(self):
        return self._key


def product(factors):
    out = None
    for f in factors:
        out = f.matrix if out is None else mm(out, f.matrix)
    return out if out is not None else eye3()


def merge(chain_a, chain_b):
    """Concatenate two chains, merging neighbouring rotations about the same axis."""
    out = list(chain_a)
    for f in chain_b:
        if out and f.axis is not None and out[-1].axis == f.axis:
            ang = out[-1].angle + f.angle
            out.pop()
            if ang != 0:
                out.append(Factor(f.axis, ang))
        elif f.axis is None and is_identity(f.matrix):
            continue
        else:
            out.append(f)
    return out


class ChainCache:
    """Materialises chains with shared prefixes (so A_IB = A_IP·A_PB shares A_IP's entries)."""

    def __init__(self):
        self._memo = {(): eye3()}

    def matrix(self, chain):
        key = tuple(f.key() for f in chain)
        if key in self._memo:
            return self._memo[key]
        prev = self.matrix(chain[:-1])
        out = chain[-1].matrix if not chain[:-1] else mm(prev, chain[-1].matrix)
        self._memo[key] = out
        return out


def _matches(A, factors) -> bool:
    P = product(factors)
    return all(expand(A[i][j] - P[i][j]) == 0 for i in range(3) for j in range(3))


def factor_rotation(A, coords) -> list[Factor]:
    """Write the 3×3 SymEngine matrix ``A`` as a chain of factors.

    Constant matrices (free of the coordinates) become one general factor (none if identity);
    products of up to three elementary rotations whose angles appear in ``A`` are recognised;
    anything else stays one general factor.
    """
    coords = set(coords)
    free = set().union(*(e.free_symbols for r in A for e in r))
    if not (free & coords):
        return [] if is_identity(A) else [Factor(matrix=A)]
    args = []
    for r in A:
        for e in r:
            for fn in e.atoms(se.sin, se.cos):
                a = fn.args[0]
                if a not in args:
                    args.append(a)
    if 1 <= len(args) <= 3:
        for perm in itertools.permutations(args):
            for axes in itertools.product("xyz", repeat=len(perm)):
                if any(axes[k] == axes[k + 1] for k in range(len(axes) - 1)):
                    continue
                fs = [Factor(ax, a) for ax, a in zip(axes, perm)]
                if _matches(A, fs):
                    return fs
    return [Factor(matrix=A)]


def chain_local_omega(chain, q, n):
    """Relative angular velocity of a chain F_1⋯F_k, in the chain's *last* frame (body frame B).

    Jacobian as 3×n lists: ω = Σ_j (F_{j+1}⋯F_k)ᵀ ω_j, with ω_j = axis_j · ∂angle_j/∂q for an
    elementary factor (the same in its first and last frame) and ω_j = unskew(F_jᵀ ∂F_j/∂q)
    (in F_j's last frame, put into trigonometric canonical form) for a general one.
    """
    J = [[ZERO] * n for _ in range(3)]
    suffix = None  # F_{j+1}⋯F_k
    for f in reversed(chain):
        cols = []
        if f.axis is not None:
            ax = list(AXES[f.axis])
            for k in range(n):
                d = f.angle.diff(q[k])
                if d != 0:
                    cols.append((k, [a * d for a in ax]))
        else:
            F = f.matrix
            for k in range(n):
                dF = [[F[i][j].diff(q[k]) for j in range(3)] for i in range(3)]
                if all(e == 0 for row in dF for e in row):
                    continue
                W = mm(transpose(F), dF)  # F^T dF/dq_k: body-fixed angular velocity per q̇_k
                w = (W[2][1], W[0][2], W[1][0])      # unskew: [S32, S13, S21]
                cols.append((k, [to_se(trig_canonical(to_sp(x))) for x in w]))
        for k, w in cols:
            if suffix is not None:
                w = mtv(suffix, w)
            for r in range(3):
                J[r][k] = J[r][k] + w[r]
        suffix = f.matrix if suffix is None else mm(f.matrix, suffix)
    return J


def matvec_cols(A, J, n):
    """A (3×3) times a 3×n Jacobian."""
    return [[A[r][0] * J[0][k] + A[r][1] * J[1][k] + A[r][2] * J[2][k] for k in range(n)]
            for r in range(3)]


def jac_times(J, v, n):
    """3×n Jacobian times n-vector."""
    return [sum((J[r][k] * v[k] for k in range(n) if J[r][k] != 0), ZERO) for r in range(3)]


def jacT_times(J, f, n):
    """(3×n)ᵀ times 3-vector → n-list."""
    return [J[0][k] * f[0] + J[1][k] * f[1] + J[2][k] * f[2] for k in range(n)]


def cross_cols(a, J, n):
    """a × (each column of J)."""
    return [[a[1] * J[2][k] - a[2] * J[1][k] for k in range(n)],
            [a[2] * J[0][k] - a[0] * J[2][k] for k in range(n)],
            [a[0] * J[1][k] - a[1] * J[0][k] for k in range(n)]]


def jac_of_vec(v, q):
    """∂v/∂q (3×n) of a 3-vector of SymEngine expressions."""
    return [[e.diff(qk) for qk in q] for e in v]
