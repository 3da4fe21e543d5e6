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
_HALF = se.Rational(1, 2)


class _TooBig(Exception):
    pass


class _Angles:
    """Angles ``k·q + φ`` of the sines and cosines: k an integer (rational) tuple over ``coords``, φ
    the part free of the coordinates (a constant or a parameter)."""

    def __init__(self, coords):
        self.index = {c: i for i, c in enumerate(coords)}
        self.n = len(self.index)
        self.memo = {}

    def parse(self, arg):
        """(k, φ) of a sine's or cosine's argument, or None when it is not linear in the coordinates."""
        got = self.memo.get(arg, False)
        if got is not False:
            return got
        k = [0] * self.n
        phi = []
        ok = True
        for term in (arg.args if isinstance(arg, se.Add) else (arg,)):
            if isinstance(term, se.Symbol) and term in self.index:
                k[self.index[term]] += 1
                continue
            if isinstance(term, se.Mul) and len(term.args) == 2:
                c, s = term.args
                if isinstance(s, se.Symbol) and s in self.index:
                    if not isinstance(c, se.Rational) and not isinstance(c, se.Integer):
                        ok = False
                        break
                    k[self.index[s]] += Fraction(int(c.as_numer_denom()[0]), int(c.as_numer_denom()[1]))
                    continue
            if any(s in self.index for s in term.free_symbols):
                ok = False
                break
            phi.append(term)
        out = (tuple(k), se.Add(*phi) if phi else _ZERO) if ok else None
        self.memo[arg] = out
        return out

    def expr(self, k, phi, coords):
        return se.Add(*[c * (int(x) if x.denominator == 1 else se.Rational(x.numerator, x.denominator))
                        for c, x in zip(coords, k) if x]) + phi


def _normal(kind, k, phi, coef):
    """(kind, k, φ) with the first non-zero entry of k positive: cos(−A) = cos A, sin(−A) = −sin A.
    With k = 0 the harmonic is a number: returns ("1", (), 0) and the coefficient times it."""
    if kind == "1":
        return kind, k, phi, coef
    for x in k:
        if x:
            if x < 0:
                k = tuple(-y for y in k)
                phi = -phi
                if kind == "s":
                    coef = -coef
            return kind, k, phi, coef
    if kind == "c":
        return "1", (), _ZERO, coef * se.cos(phi) if phi != 0 else coef
    return "1", (), _ZERO, coef * se.sin(phi) if phi != 0 else _ZERO


def _times(prod, kind, k, phi):
    """A sum of harmonics [(c, kind, k, φ)] times one cos/sin, by the product-to-sum identities."""
    out = []
    for c, kd, k0, p0 in prod:
        if kd == "1":
            out.append((c, kind, k, phi))
            continue
        kp = tuple(a + b for a, b in zip(k0, k))
        km = tuple(a - b for a, b in zip(k0, k))
        pp, pm = p0 + phi, p0 - phi
        h = c * _HALF
        if kd == "c" and kind == "c":       # cos A cos B
            out += [(h, "c", km, pm), (h, "c", kp, pp)]
        elif kd == "s" and kind == "s":     # sin A sin B
            out += [(h, "c", km, pm), (-h, "c", kp, pp)]
        elif kd == "s":                     # sin A cos B
            out += [(h, "s", kp, pp), (h, "s", km, pm)]
        else:                               # cos A sin B
            out += [(h, "s", kp, pp), (-h, "s", km, pm)]
    return out


def fourier_form(expr, coords, *, max_work: int = _MAX_WORK):
    """``{(kind, k, φ): [coefficient terms]}`` of a SymEngine expression: kind "c" (cos), "s" (sin)
    or "1" (no harmonic). Raises ``_TooBig`` past ``max_work`` harmonics; returns None when a sine
    or cosine has an argument that is not linear in ``coords``. The work is bounded before it is
    done: at most ``max_work`` harmonics, and at most four per term of the expanded entry on average
    (planar chains need two; deep 3-D products, which would only grow, are left alone)."""
    angles = coords if isinstance(coords, _Angles) else _Angles(coords)
    e = se.expand(expr)
    terms = e.args if isinstance(e, se.Add) else (e,)
    # the work before doing it: a term with k sines and cosines becomes up to 2^(k−1) harmonics
    work = 0
    for term in terms:
        k = 0
        for f in (term.args if isinstance(term, se.Mul) else (term,)):
            if isinstance(f, (se.sin, se.cos)):
                k += 1
            elif isinstance(f, se.Pow) and isinstance(f.args[0], (se.sin, se.cos)) and isinstance(f.args[1], se.Integer):
                k += max(int(f.args[1]), 1)
        work += 1 << max(k - 1, 0)
    if work > min(max_work, 4 * len(terms) + 32):
        raise _TooBig
    acc: dict = {}
    for term in terms:
        rest = []
        prod = [(_ONE, "1", (), _ZERO)]
        for f in (term.args if isinstance(term, se.Mul) else (term,)):
            base, power = f, 1
            if isinstance(f, se.Pow) and isinstance(f.args[0], (se.sin, se.cos)) \
                    and isinstance(f.args[1], se.Integer) and int(f.args[1]) > 0:
                base, power = f.args[0], int(f.args[1])
            if isinstance(base, (se.sin, se.cos)):
                parsed = angles.parse(base.args[0])
                if parsed is None:
                    return None
                kind = "c" if isinstance(base, se.cos) else "s"
                for _ in range(power):
                    prod = _times(prod, kind, *parsed)
            else:
                rest.append(f)
        r = se.Mul(*rest) if rest else _ONE
        for c, kind, k, phi in prod:
            kind, k, phi, c = _normal(kind, k, phi, c)
            if c != 0:
                acc.setdefault((kind, k, phi), []).append(c * r)
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


def _rebuild(acc, angles, coords):
    parts = []
    for (kind, k, phi), terms in sorted(acc.items(), key=lambda kv: (kv[0][0] != "1", kv[0][1])):
        coef = se.Add(*terms)
        if coef == 0:
            continue
        if isinstance(coef, se.Add):
            c, rest = _content(list(coef.args))
            coef = c * se.Add(*rest)
        if kind == "1":
            parts.append(coef)
        else:
            a = angles.expr(k, phi, coords)
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
    out = _rebuild(acc, angles, list(coords))
    return out if se.count_ops(out) <= ops else expr


def readable_entries(exprs, coords, *, max_ops: int = READABLE_MAX_OPS):
    """:func:`readable` of each entry of a list (one angle table for all)."""
    coords = list(coords)
    angles = _Angles(coords)
    return [readable(e, coords, max_ops=max_ops, _angles=angles) for e in exprs]
