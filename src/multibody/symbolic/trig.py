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

No simplifier runs: one ``expand`` (SymEngine, C++) and one pass over the terms. Which entries
are rewritten depends on their size only (never on the clock): an entry with more than
``max_ops`` operations, or whose product-to-sum form would take more than ``max_work`` terms,
is left as it is, and a rewritten entry is kept only when it is no longer than the original.
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd

import symengine as se

__all__ = ["fourier_form", "readable", "readable_entries", "READABLE_MAX_OPS"]

#: entries with more operations than this are left as derived (they are not read by a person)
READABLE_MAX_OPS = 600
_MAX_WORK = 5000   # harmonics the product-to-sum expansion of one entry may create
_ZERO, _ONE = se.Integer(0), se.Integer(1)
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
        self.monos = {}    # tuple of factors → their SymEngine product

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

    def expr(self, k, phi):
        digits = []
        for _ in self.coords:
            d = k % _BASE
            if d > _BASE // 2:
                d -= _BASE
            digits.append(d)
            k = (k - d) // _BASE
        a = se.Add(*[c * d for c, d in zip(self.coords, reversed(digits)) if d])
        return a if phi is None else a + phi


def _add(p, q, sign=1):
    if q is None:
        return p
    if p is None:
        return q if sign > 0 else -q
    return p + q if sign > 0 else p - q


def _times(prod, kind, k, phi):
    """A sum of harmonics [(c, kind, k, φ)] (c an integer numerator) times one cos/sin, by the
    product-to-sum identities."""
    out = []
    for c, kd, k0, p0 in prod:
        if kd == "1":
            out.append((c, kind, k, phi))
            continue
        h = c >> 1     # exact: c is a multiple of 2^(levels left), see fourier_form's scale
        kp, km = k0 + k, k0 - k
        pp, pm = _add(p0, phi), _add(p0, phi, -1)
        if kd == "c":
            if kind == "c":                 # cos A cos B = ½[cos(A − B) + cos(A + B)]
                out += [(h, "c", km, pm), (h, "c", kp, pp)]
            else:                           # cos A sin B = ½[sin(A + B) − sin(A − B)]
                out += [(h, "s", kp, pp), (-h, "s", km, pm)]
        elif kind == "s":                   # sin A sin B = ½[cos(A − B) − cos(A + B)]
            out += [(h, "c", km, pm), (-h, "c", kp, pp)]
        else:                               # sin A cos B = ½[sin(A + B) + sin(A − B)]
            out += [(h, "s", kp, pp), (h, "s", km, pm)]
    return out


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
    or "1" (no harmonic). Raises ``_TooBig`` past ``max_work`` harmonics; returns None when a sine
    or cosine has an argument that is not an integer combination of ``coords`` (plus a phase).
    The work is bounded before it is done: at most ``max_work`` harmonics, and at most four per
    term of the expanded entry on average (planar chains need two; deep 3-D products, which would
    only grow, are left alone). Numeric factors are integers over one common denominator
    (``lcm · 2^depth``, so every halving is exact) until the end: ``sin² + cos²`` cancels by
    integer addition, without building an expression or a fraction."""
    angles = coords if isinstance(coords, _Angles) else _Angles(coords)
    e = se.expand(expr)
    terms = e.args if isinstance(e, se.Add) else (e,)
    split = []
    work = 0
    depth = 0
    lcm = 1
    trig_of = angles.trig
    bound = min(max_work, 4 * len(terms) + 32)
    for term in terms:
        if work > bound:       # decided: the rest of the terms cannot bring it back under
            raise _TooBig
        a, b, rest, trig = 1, 1, [], []
        for f in (term.args if isinstance(term, se.Mul) else (term,)):
            t = trig_of.get(f)
            if t is None:
                if isinstance(f, _TRIG):
                    t = angles.harmonic(f)
                elif isinstance(f, se.Pow) and isinstance(f.args[0], _TRIG) \
                        and isinstance(f.args[1], se.Integer) and int(f.args[1]) > 0:
                    t = angles.harmonic(f.args[0])
                    trig += [t] * int(f.args[1])
                    continue
                elif isinstance(f, (se.Integer, se.Rational)):
                    a, b = (int(x) for x in f.as_numer_denom())
                    continue
                else:
                    rest.append(f)
                    continue
            trig.append(t)
        d = len(trig)
        work += 1 << max(d - 1, 0)
        depth = max(depth, d)
        if b != 1:
            lcm = lcm * b // gcd(lcm, b)
        split.append((a, b, rest, trig))
    if work > min(max_work, 4 * len(terms) + 32):
        raise _TooBig
    acc: dict = {}
    scale = lcm << depth
    monos = angles.monos
    for a, b, rest, trig in split:
        prod = [(a * (scale // b), "1", 0, None)]
        for t in trig:
            if t is None:
                return None
            prod = _times(prod, *t)
        key = tuple(rest)
        r = monos.get(key)
        if r is None:
            r = monos[key] = se.Mul(*rest) if rest else _ONE
        for c, kind, k, phi in prod:
            kind, k, phi, c, value = _normal(kind, k, phi, c)
            if kind is None or not c:
                continue
            mono = r if value is None else r * value
            slot = acc.get((kind, k, phi))
            if slot is None:
                acc[(kind, k, phi)] = {mono: c}
            else:
                slot[mono] = slot.get(mono, 0) + c
    for slot in acc.values():
        for mono, c in slot.items():
            slot[mono] = Fraction(c, scale)
    return acc


def _content(terms):
    """(content, rest): the common numeric and symbol-power factor of a list of monomials."""
    nums, powers = [], None
    for t in terms:
        num = _ONE
        pw = {}
        for f in (t.args if isinstance(t, se.Mul) else (t,)):
            if isinstance(f, se.Number):
                num = f
            elif isinstance(f, se.Pow) and isinstance(f.args[1], se.Integer) and int(f.args[1]) > 0:
                pw[f.args[0]] = int(f.args[1])
            else:
                pw[f] = 1
        if not isinstance(num, (se.Integer, se.Rational)):
            return _ONE, terms
        p, q = (int(x) for x in num.as_numer_denom())
        nums.append((p, q))
        powers = pw if powers is None else {b: min(e, pw[b]) for b, e in powers.items() if b in pw}
    g = 0
    lcm = 1
    for p, q in nums:
        g = gcd(g, abs(p))
        lcm = lcm * q // gcd(lcm, q)
    sign = -1 if all(p < 0 for p, _ in nums) else 1
    c = se.Rational(sign * g, lcm) * se.Mul(*[b ** e for b, e in (powers or {}).items()])
    if c == 1:
        return _ONE, terms
    return c, [t / c for t in terms]


def _rebuild(acc, angles):
    parts = []
    for (kind, k, phi), monos in sorted(acc.items(), key=lambda kv: (kv[0][0] != "1", kv[0][1])):
        terms = [(se.Integer(c.numerator) if c.denominator == 1 else se.Rational(c.numerator, c.denominator)) * m
                 for m, c in monos.items() if c]
        if not terms:
            continue
        c, rest = _content(terms)
        coef = c * se.Add(*rest) if len(rest) > 1 else c * rest[0]
        if kind == "1":
            parts.append(coef)
        else:
            a = angles.expr(k, phi)
            parts.append(coef * (se.cos(a) if kind == "c" else se.sin(a)))
    return se.Add(*parts) if parts else _ZERO


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
    angles = _angles or _Angles(coords)
    try:
        acc = fourier_form(expr, angles)
    except _TooBig:
        return expr
    if acc is None:
        return expr
    out = _rebuild(acc, angles)
    return out if se.count_ops(out) <= ops else expr


def readable_entries(exprs, coords, *, max_ops: int = READABLE_MAX_OPS):
    """:func:`readable` of each entry of a list (one angle table for all)."""
    coords = list(coords)
    angles = _Angles(coords)
    return [readable(e, coords, max_ops=max_ops, _angles=angles) for e in exprs]
