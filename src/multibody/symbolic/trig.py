"""Readable entries: the Fourier (product-to-sum) normal form of M, b, g, in SymEngine.

The derivations write M, b and g with the absolute angles of the bodies (``cos(th1)``,
``cos(th1 + th2)``), so the double pendulum's M[0,0] comes out as
``l1*l2*m2*(sin(th1)*sin(th1 + th2) + cos(th1)*cos(th1 + th2)) + m2*l1**2*(sin(th1)**2 + cos(th1)**2) + …``
where the OpenDE report (DP_EOM, appendix D.2) and proNEu write ``… + l1*l2*m2*cos(th2)``.

Every entry of M, b, g of a chain of revolute and prismatic joints is a polynomial in the sines
and cosines of angles that are linear in the coordinates. The product-to-sum identities

    cos A cos B = ½[cos(A − B) + cos(A + B)]      sin A sin B = ½[cos(A − B) − cos(A + B)]
    sin A cos B = ½[sin(A + B) + sin(A − B)]

turn each term into a sum of single harmonics ``c·cos(k·q + φ)``, ``c·sin(k·q + φ)`` (k integer
vectors, the sign of k fixed by its first non-zero entry). That form is canonical — two entries
are equal exactly when their forms are — so ``sin² + cos² = 1`` and the angle-sum identities
collapse by themselves: ``cos(th1)cos(th1 + th2) + sin(th1)sin(th1 + th2)`` *is* ``cos(th2)``.
Each harmonic's coefficient then has its common factor taken out
(``m2*(h2**2 + 3*l2**2 + w2**2)/12``).

No simplifier runs. The form is built bottom-up over the expression DAG (:class:`_Harmonics`):
each node's harmonics with SymEngine coefficients, the identities applied where two forms
multiply, every node done once for all entries (the rows of b share most of their factors); then
one ``expand`` (C++) per harmonic's coefficient. The Python work goes with the number of
harmonics, not with the terms of the expanded entry, which the term-by-term pass this replaces
walked one by one (SymEngine's Python wrappers cost about a microsecond per ``args``, ``==`` or
``isinstance``). Which entries are rewritten depends on their size only (never on the clock): an
entry with more than ``max_ops`` operations, or whose form takes more than ``max_work`` products
of harmonics, is left as it is, and a rewritten entry is kept only when it is no longer than
the original.
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd

import symengine as se

from ._core import _Sym as _SymTwin   # the SymEngine twins of SymPy symbols (derivations' symbols)
from ._core import expand as _expand  # se.expand made canonical (SymEngine 0.15 leaves some sums non-canonical)

__all__ = ["fourier_form", "readable", "readable_entries", "READABLE_MAX_OPS"]

#: entries with more operations than this are left as derived (they are not read by a person)
READABLE_MAX_OPS = 600
_MAX_WORK = 128    # products of two harmonics one entry may take: planar chains need a few dozen; the
                   # 3-D entries past it (MA23's Lagrange entries need 500 and more) stay as derived
_ZERO, _ONE = se.Integer(0), se.Integer(1)
_ZERO_T = type(_ZERO)
_TRIG = (se.sin, se.cos)


class _TooBig(Exception):
    pass


_BASE = 1 << 20   # an angle k·q is one integer Σ k_i B^(n−1−i): adding angles adds integers, and its
                  # sign is the sign of the first non-zero k_i (while every |k_i| < B/2)


class _Angles:
    """Angles ``k·q + φ`` of the sines and cosines: k an integer vector over ``coords`` (kept as one
    integer, see ``_BASE``), φ the part free of the coordinates (a constant or a parameter; None
    for zero)."""

    def __init__(self, coords):
        self.coords = list(coords)
        n = len(self.coords)
        self.weight = {c: _BASE ** (n - 1 - i) for i, c in enumerate(self.coords)}
        self.memo = {}
        self.trig = {}     # sin/cos atom → (kind, k, φ), or None for an argument parse refuses
        self.angle_exprs = {}   # (k, φ) → the angle as an expression
        self.atoms = {}         # (kind, k, φ) → its cos or sin
        self.numbers = {}  # SymEngine rational → (numerator, denominator)
        self.rebuilt = {}  # a harmonic's coefficient → its expanded, factored form (entries share them:
                           # the pendulum's M entries and b rows repeat half of theirs)

    def harmonic(self, f):
        """(kind, k, φ) of one ``sin``/``cos`` (memoised), None when its angle does not parse."""
        parsed = self.parse(f.args[0])
        t = None if parsed is None else ("c" if isinstance(f, se.cos) else "s", *parsed)
        self.trig[f] = t
        return t

    def parse(self, arg):
        """(k, φ) of a sine's or cosine's argument, or None when it is not an integer combination of
        the coordinates plus a part free of them."""
        got = self.memo.get(arg, False)
        if got is not False:
            return got
        k, phi, out = 0, [], None
        for term in (arg.args if isinstance(arg, se.Add) else (arg,)):
            w = self.weight.get(term) if isinstance(term, se.Symbol) else None
            if w is not None:
                k += w
                continue
            if isinstance(term, se.Mul) and len(term.args) == 2:
                c, sym = term.args
                w = self.weight.get(sym) if isinstance(sym, se.Symbol) else None
                if w is not None:
                    if not isinstance(c, se.Integer) or abs(int(c)) >= _BASE // 4:
                        break
                    k += int(c) * w
                    continue
            if any(x in self.weight for x in term.free_symbols):
                break
            phi.append(term)
        else:
            out = (k, se.Add(*phi) if phi else None)
        self.memo[arg] = out
        return out

    def harmonic_atom(self, kind, k, phi):
        """``cos(k·q + φ)`` (kind "c") or ``sin(k·q + φ)`` (kind "s"), memoised: the entries of M, b
        and g repeat their harmonics."""
        key = (kind, k, phi)
        got = self.atoms.get(key)
        if got is None:
            a = self.expr(k, phi)
            got = self.atoms[key] = se.cos(a) if kind == "c" else se.sin(a)
        return got

    def expr(self, k, phi):
        """The angle ``k·q + φ`` as a SymEngine expression (memoised: entries share their angles)."""
        got = self.angle_exprs.get((k, phi))
        if got is None:
            got = self.angle_exprs[(k, phi)] = self._expr(k, phi)
        return got

    def digits(self, k):
        """The integer vector of the angle ``k`` (see ``_BASE``), one entry per coordinate, in order."""
        digits = []
        for _ in self.coords:
            d = k % _BASE
            if d > _BASE // 2:
                d -= _BASE
            digits.append(d)
            k = (k - d) // _BASE
        return digits[::-1]

    def _expr(self, k, phi):
        a = se.Add(*[c * d for c, d in zip(self.coords, self.digits(k)) if d])
        return a if phi is None else a + phi


def _add(p, q, sign=1):
    if q is None:
        return p
    if p is None:
        return q if sign > 0 else -q
    return p + q if sign > 0 else p - q


def _normal(kind, k, phi, c):
    """(kind, k, φ, c) with k > 0 (its first non-zero entry positive): cos(−A) = cos A,
    sin(−A) = −sin A. A harmonic with k = 0 is a number: kind "1", its value put into ``extra``."""
    if kind == "1" or k > 0:
        return kind, k, phi, c, None
    if k < 0:
        return kind, -k, (None if phi is None else -phi), (-c if kind == "s" else c), None
    if phi is None:
        return ("1", 0, None, c, None) if kind == "c" else (None, 0, None, 0, None)
    return "1", 0, None, c, (se.cos(phi) if kind == "c" else se.sin(phi))


def fourier_form(expr, coords, *, max_work: int = _MAX_WORK):
    """``{(kind, k, φ): {monomial: Fraction}}`` of a SymEngine expression: kind "c" (cos), "s" (sin)
    or "1" (no harmonic). Raises ``_TooBig`` past ``max_work`` products of harmonics; returns None
    when a sine or cosine has an argument that is not an integer combination of ``coords`` (plus a
    phase). A view of :class:`_Harmonics` (the form :func:`readable` rebuilds from), each
    harmonic's coefficient expanded into its monomials."""
    angles = coords if isinstance(coords, _Angles) else _Angles(coords)
    h = _Harmonics(angles)
    h.budget = max_work
    try:
        form = h.form(expr)
    except _Unparsed:
        return None
    acc = {}
    for key, coef in form.items():
        E = _expand(coef)
        slot = {}
        for t in (E.args if type(E) is se.Add else (E,)):
            if t == 0:
                continue
            c, m = (t.args[0], se.Mul(*t.args[1:])) if type(t) is se.Mul and t.args[0].is_Number else (_ONE, t)
            if t.is_Number:
                c, m = t, _ONE
            if isinstance(c, _NUMBER_TYPES):
                p, q = (int(v) for v in c.as_numer_denom())
                slot[m] = Fraction(p, q)
            else:                  # a float (a numeric model): its exact binary value, never int()'s truncation
                slot[m] = Fraction(float(c))
        if slot:
            acc[key] = slot
    return acc


_HALF = se.Rational(1, 2)

#: The product-to-sum identities: a harmonic of kind ka (angle A) times one of kind kb (B) is ½ times the
#: sum of two harmonics, each (of A + B: True, of A − B: False; its kind; its sign), in the order the
#: readable pass and TMT's direct form (tmt/fourier.py) accumulate them.
_PRODUCT_TO_SUM = {
    ("c", "c"): ((False, "c", 1), (True, "c", 1)),     # cos A cos B = ½[cos(A − B) + cos(A + B)]
    ("s", "s"): ((False, "c", 1), (True, "c", -1)),    # sin A sin B = ½[cos(A − B) − cos(A + B)]
    ("s", "c"): ((True, "s", 1), (False, "s", 1)),     # sin A cos B = ½[sin(A + B) + sin(A − B)]
    ("c", "s"): ((True, "s", 1), (False, "s", -1)),    # cos A sin B = ½[sin(A + B) − sin(A − B)]
}
_LEAVES = frozenset({se.Symbol, _SymTwin, se.Integer, se.Rational, type(_HALF)})
_CONST = ("1", 0, None)          # the key of the harmonic-free part
_SIN, _COS = se.sin, se.cos


class _Unparsed(Exception):
    pass


class _Harmonics:
    """Fourier forms ``{(kind, k, φ): SymEngine coefficient}`` of the nodes of SymEngine expressions,
    built bottom-up over the expression DAG and memoised per node, so subexpressions shared between
    entries (b's rows share most of their factors) are put in Fourier form once.

    The product-to-sum identities are applied where two forms are multiplied; the coefficients stay
    SymEngine expressions (combined in C++), so the Python work goes with the number of harmonics of
    each node, not with the number of terms of the expanded entry. ``budget`` bounds the
    harmonic products of one entry (``_TooBig`` past it), a bound on size, never on the clock."""

    def __init__(self, angles: _Angles):
        self.angles = angles
        self.memo: dict = {}
        self.work = 0
        self.budget = _MAX_WORK

    def form(self, e):
        t = type(e)
        if t in _LEAVES:       # symbols and numbers: no memo (a lookup compares, a microsecond and more)
            return {_CONST: e}
        f = self.memo.get(e)
        if f is not None:
            return f
        if t is se.Add:
            f = self._sum(e.args, e)
        elif t is se.Mul:
            f = self._mul(e.args, e)
        elif t is _SIN or t is _COS:
            h = self.angles.harmonic(e) if e not in self.angles.trig else self.angles.trig[e]
            if h is None:
                raise _Unparsed
            kind, k, phi, c, value = _normal(h[0], h[1], h[2], _ONE)
            if kind is None:
                f = {}
            else:
                f = {(kind, k, phi): c if value is None else c * value}
        elif t is se.Pow:
            base, ex = e.args
            fb = self.form(base)
            if len(fb) == 1 and _CONST in fb or type(ex) is not se.Integer or int(ex) <= 0:
                f = {_CONST: e}      # free of harmonics, or not a polynomial in them: a coefficient
            else:
                f = fb
                for _ in range(int(ex) - 1):
                    f = self._product(f, fb)
        else:
            f = {_CONST: e}
        self.memo[e] = f
        return f

    def _sum(self, args, e):
        # symbols and numbers go straight into the harmonic-free part (no form of their own: most
        # terms' factors are parameters); a sum free of harmonics is its own coefficient
        consts, forms = [], []
        for a in args:
            if type(a) in _LEAVES:
                consts.append(a)
                continue
            f = self.form(a)
            if len(f) == 1 and _CONST in f:
                consts.append(f[_CONST])
            else:
                forms.append(f)
        if not forms:
            return {_CONST: e}
        acc: dict = {_CONST: consts} if consts else {}
        for f in forms:
            for key, c in f.items():
                acc.setdefault(key, []).append(c)
        return {key: cs[0] if len(cs) == 1 else se.Add(*cs) for key, cs in acc.items()}

    def _mul(self, args, e):
        const, forms = [], []
        for a in args:
            if type(a) in _LEAVES:
                const.append(a)
                continue
            f = self.form(a)
            if len(f) == 1 and _CONST in f:
                const.append(a)
            else:
                forms.append(f)
        if not forms:
            return {_CONST: e}
        f = forms[0]
        for g in forms[1:]:
            f = self._product(f, g)
        if const:
            c = se.Mul(*const)
            f = {key: c * v for key, v in f.items()}
        return f

    def _product(self, fa, fb):
        """Product of two forms by the product-to-sum identities (:data:`_PRODUCT_TO_SUM`)."""
        self.work += len(fa) * len(fb)
        if self.work > self.budget:     # decided before the products are built
            raise _TooBig
        acc: dict = {}
        put = acc.setdefault
        for (ka, k0, p0), ca in fa.items():
            for (kb, k1, p1), cb in fb.items():
                c = ca * cb
                if ka == "1":
                    put((kb, k1, p1), []).append(c)
                    continue
                if kb == "1":
                    put((ka, k0, p0), []).append(c)
                    continue
                h = _HALF * c
                kp, km = k0 + k1, k0 - k1
                pp, pm = _add(p0, p1), _add(p0, p1, -1)
                for plus, kind, sign in _PRODUCT_TO_SUM[ka, kb]:
                    kind, k, phi, v, value = _normal(kind, kp if plus else km, pp if plus else pm, h if sign > 0 else -h)
                    if kind is not None:
                        put((kind, k, phi), []).append(v if value is None else v * value)
        return {key: cs[0] if len(cs) == 1 else se.Add(*cs) for key, cs in acc.items()}


def _rebuild_form(form, angles, limit=None):
    """The readable expression of a form: each harmonic's coefficient expanded (SymEngine), its
    common factor taken out (:func:`_factored`), harmonic-free part first.

    ``limit``: None when the expression would take more than ``limit`` operations (``count_ops``).
    The parts are distinct harmonics, so the sum's count is at least the parts' counts plus one
    ``+`` between each two that are not numbers (numbers, a float model's ``0.0`` too, merge into
    one); that running bound, taken after 1, 2, 4, … parts (a few ``count_ops`` calls per entry), decides
    as soon as it passes ``limit``: :func:`readable` keeps the entry as derived then, and the
    rest of a form longer than its entry (most of the 3-D chains' entries, two of the 8-link
    pendulum's) is never expanded and factored."""
    parts = []
    memo = angles.rebuilt
    counted, ops, signs, check = 0, 0, 0, 1
    for (kind, k, phi), coef in sorted(form.items(), key=lambda kv: (kv[0][0] != "1", kv[0][1])):
        done = memo.get(coef)
        if done is None:
            E = _expand(coef)
            # (a canonical 0 is SymEngine's own zero; only a number, 0.0, needs the comparison)
            zero = type(E) is _ZERO_T or E.is_Number and E == 0
            done = memo[coef] = _ZERO if zero else _factored(E, angles.numbers)
        if type(done) is _ZERO_T:
            continue
        coef = done
        if kind == "1":
            parts.append(coef)
        else:
            parts.append(coef * angles.harmonic_atom(kind, k, phi))
        if limit is not None and len(parts) >= check:
            new = parts[counted:]
            ops += se.count_ops(*new)
            signs += sum(not p.is_Number for p in new)
            counted, check = len(parts), 2 * len(parts)
            if ops + signs - 1 > limit:
                return None
    return se.Add(*parts) if parts else _ZERO


_NUMBER_TYPES = (se.Integer, se.Rational)
_SYMBOLS = frozenset({se.Symbol, _SymTwin})


def _factored(E, numbers):
    """``c * (E / c)`` with c the common factor of the terms of the expanded polynomial ``E``:
    the gcd of their numerators over the lcm of their denominators (negative when every term is),
    times each symbol to its smallest power. Read with type
    tests and memoised numbers (SymEngine's ``isinstance`` and ``int`` cost a microsecond each) and
    divided out by one ``expand`` in C++ instead of one division per term."""
    if type(E) is not se.Add:
        return E            # one term is its own content: c · 1
    terms = E.args
    g, lcm, neg, powers = 0, 1, True, None
    Pow, Mul, Integer = se.Pow, se.Mul, se.Integer
    for t in terms:
        p, q = 1, 1
        if powers is not None and not powers:
            # no symbol is common any more: only the term's number is read (SymEngine puts it
            # first in a product's args), not every factor into a dict
            f = t.args[0] if type(t) is Mul else t
            if f.is_Number:
                n = numbers.get(f)
                if n is None:
                    if not isinstance(f, _NUMBER_TYPES):
                        return E
                    n = numbers[f] = tuple(int(v) for v in f.as_numer_denom())
                p, q = n
            g = gcd(g, abs(p))
            if q != 1:
                lcm = lcm * q // gcd(lcm, q)
            neg = neg and p < 0
            continue
        pw = {}
        for f in (t.args if type(t) is Mul else (t,)):
            tf = type(f)
            if tf in _SYMBOLS:          # most factors: a symbol (tested first, no ``is_Number`` call)
                pw[f] = 1
            elif tf is Pow:
                b, x = f.args
                if type(x) is Integer:
                    n = numbers.get(x)
                    if n is None:
                        n = numbers[x] = (int(x), 1)
                    if n[0] > 0:
                        pw[b] = n[0]
                        continue
                pw[f] = 1
            elif f.is_Number:
                n = numbers.get(f)
                if n is None:
                    if not isinstance(f, _NUMBER_TYPES):
                        return E              # a float or a complex factor: no content taken out
                    n = numbers[f] = tuple(int(v) for v in f.as_numer_denom())
                p, q = n
            else:
                pw[f] = 1
        g = gcd(g, abs(p))
        if q != 1:
            lcm = lcm * q // gcd(lcm, q)
        neg = neg and p < 0
        powers = pw if powers is None else {b: min(x, pw[b]) for b, x in powers.items() if b in pw}
    if not powers and not neg and g == 1 and lcm == 1:
        return E      # c = 1 (g/lcm is in lowest terms: no prime divides a numerator and its denominator)
    c = se.Rational(-g if neg else g, lcm)
    if powers:
        c = c * se.Mul(*[b if x == 1 else b ** x for b, x in powers.items()])
    rest = se.expand(E / c)
    return c * rest


def readable(expr, coords, *, max_ops: int = READABLE_MAX_OPS, _angles=None):
    """``expr`` (SymEngine) in the readable Fourier form, or ``expr`` itself when it is too large,
    not a trigonometric polynomial in ``coords``, or not shorter that way.

    >>> import symengine as se
    >>> th1, th2, l = se.symbols("th1 th2 l")
    >>> readable(l * (se.sin(th1) * se.sin(th1 + th2) + se.cos(th1) * se.cos(th1 + th2)), [th1, th2])
    l*cos(th2)
    """
    if not isinstance(expr, se.Basic) or expr.is_Atom:
        return expr
    ops = se.count_ops(expr)
    if ops > max_ops:
        return expr
    harm = _angles if isinstance(_angles, _Harmonics) else _Harmonics(_angles or _Angles(coords))
    harm.work = 0
    try:
        form = harm.form(expr)
    except (_TooBig, _Unparsed):
        return expr
    out = _rebuild_form(form, harm.angles, limit=ops)
    return out if out is not None and se.count_ops(out) <= ops else expr


def readable_entries(exprs, coords, *, max_ops: int = READABLE_MAX_OPS):
    """:func:`readable` of each entry of a list (one angle table for all)."""
    coords = list(coords)
    harm = _Harmonics(_Angles(coords))     # one memo: the entries share their subexpressions
    return [readable(e, coords, max_ops=max_ops, _angles=harm) for e in exprs]
