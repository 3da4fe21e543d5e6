"""The TMT paper's eqs. 3–4 of a tree in the readable (Fourier) form directly.

TMT (IRIS 2015, seed 002) derives T = ∂x/∂q, the convective terms D q̇ = ∂(T q̇)/∂q q̇ and
M̄ = TᵀMT; :func:`~.system.tree_terms` does it in SymEngine and ``derive`` then rewrites M, b, g
into the readable form of :mod:`multibody.symbolic.trig` (a sum of harmonics ``c·cos(k·q + φ)``,
``c·sin(k·q + φ)`` per entry). That rewrite walked the derived entries' product trees again and
was two thirds of RA3Link's derivation.

Here the bodies' positions and angular-velocity Jacobians are put in that form once, and T and D
are taken *in* it: the derivative of a harmonic is a harmonic of the same angle,

    ∂/∂q_i [c cos(k·q + φ)] = −k_i c sin(k·q + φ) + (∂c/∂q_i) cos(k·q + φ)

(the coefficient's own derivative only for prismatic coordinates), so the velocity ṙ = J_r q̇ and
the convective acceleration D_r q̇ = d/dt(J_r q̇) (q̈ = 0) are the position's harmonics with their
coefficients times (k·q̇) and −(k·q̇)²: no product is formed for T or D. The products are those of
eq. 4 alone, by the product-to-sum identities (:class:`trig._Harmonics`),

    M̄_ij = Σ_b m_b J_r,iᵀ J_r,j + T_ω,iᵀ Θ T_ω,j
    b_i  = Σ_b m_b J_r,iᵀ (D_r q̇) + T_ω,iᵀ (Θ D_ω q̇ + ω × Θ ω)
    g_i  = −Σ_b m_b J_r,iᵀ g_vec

and each entry's coefficients are expanded and their common factors taken out by the readable
pass's own last step (``trig._rebuild_form``). The form is canonical, so an entry rewritten here
is the readable pass's entry symbol for symbol; the pass's rules on which entries to rewrite are
kept (more than ``READABLE_MAX_OPS`` operations derived, or longer rewritten: left as derived).
"""
from __future__ import annotations

import symengine as se

from .. import trig as T

__all__ = ["tree_terms_readable"]

_CONST = T._CONST
#: products of two harmonics one entry may take, else it stays as derived: the readable pass's own
#: bound (trig._MAX_WORK), counted here on the entry's pairs of eq. 4 (T and D cost none). On
#: RA3Link it leaves b[2] as derived where the readable pass rewrote it (344 against 142 operations);
#: the operations after CSE of M, b + g fall all the same (413 -> 357: the derived b[2] shares its
#: subexpressions with b[0] and b[1]), and 300 here (b[1], b[2] rewritten) made the derivation slower
#: than the readable pass it replaces
MAX_ENTRY_WORK = T._MAX_WORK


class _Forms:
    """Fourier forms ``{(kind, k, φ): coefficient}`` (trig's representation) and the operations
    TMT needs on them: derivatives along q and along the motion, and the products of eq. 4
    accumulated into one entry (:meth:`dot`)."""

    def __init__(self, q, dq):
        self.q, self.dq = list(q), list(dq)
        self.harm = T._Harmonics(T._Angles(self.q))
        self.n = len(self.q)
        self._digits: dict = {}
        self._kdq: dict = {}
        self._qset = frozenset(self.q)
        # whether any coefficient read by :meth:`of` holds a coordinate (a prismatic or helical
        # joint's offset): the derivatives and products of q-free coefficients are q-free, so
        # without one no coefficient is ever differentiated and _has_q answers at once (the
        # double pendulum asked free_symbols ~26 times per derivation, for nothing)
        self._poly = False

    def of(self, e) -> dict:
        """The form of a SymEngine expression (no entry for a zero: it takes no products)."""
        if _is_zero(e):
            return {}
        f = self.harm.form(e)
        if not self._poly:
            self._poly = any(self._holds_q(c) for c in f.values())
        return f

    def digits(self, k: int) -> list:
        """The integer vector k of an angle ``k·q`` (trig keeps it as one integer, base 2²⁰)."""
        d = self._digits.get(k)
        if d is None:
            out, rest = [], k
            for _ in range(self.n):
                x = rest % T._BASE
                if x > T._BASE // 2:
                    x -= T._BASE
                out.append(x)
                rest = (rest - x) // T._BASE
            d = self._digits[k] = out[::-1]
        return d

    def k_dq(self, k: int):
        """k·q̇, the rate of the angle k·q."""
        v = self._kdq.get(k)
        if v is None:
            v = self._kdq[k] = se.Add(*[c * s for c, s in zip(self.digits(k), self.dq) if c])
        return v

    def _has_q(self, c) -> bool:
        """Whether a coefficient holds a coordinate (a prismatic joint's): only then is it differentiated."""
        return self._poly and self._holds_q(c)

    def _holds_q(self, c) -> bool:
        t = type(c)
        if t is se.Integer or t is se.Rational:
            return False
        if t is se.Symbol or t is T._SymTwin:
            return c in self._qset
        return not self._qset.isdisjoint(c.free_symbols)

    def partial(self, f: dict, i: int) -> dict:
        """∂f/∂q_i."""
        acc: dict = {}
        qi = self.q[i]
        for key, c in f.items():
            kind, k, phi = key
            if self._has_q(c):
                dc = c.diff(qi)
                if not _is_zero(dc):
                    acc.setdefault(key, []).append(dc)
            if kind == "1":
                continue
            ki = self.digits(k)[i]
            if ki:
                if kind == "c":
                    acc.setdefault(("s", k, phi), []).append(-ki * c)
                else:
                    acc.setdefault(("c", k, phi), []).append(ki * c)
        return _join_clean(acc)

    def rate(self, f: dict) -> dict:
        """d f/dt = Σ_i q̇_i ∂f/∂q_i (the coefficients' rates q̇ are constants of the motion, q̈ = 0)."""
        acc: dict = {}
        for key, c in f.items():
            kind, k, phi = key
            if self._has_q(c):
                dc = se.Add(*[s * c.diff(qi) for qi, s in zip(self.q, self.dq)])
                if not _is_zero(dc):
                    acc.setdefault(key, []).append(dc)
            if kind == "1":
                continue
            w = self.k_dq(k)
            if kind == "c":
                acc.setdefault(("s", k, phi), []).append(-w * c)
            else:
                acc.setdefault(("c", k, phi), []).append(w * c)
        return _join_clean(acc)

    def dot(self, acc: dict, pairs) -> None:
        """Add Σ fa·fb over ``pairs`` of forms to the entry ``acc`` (``{key: [whole, halves, −halves]}``).

        The product-to-sum identities of ``trig._PRODUCT_TO_SUM`` (the readable pass's), with the sums
        over bodies and rows of eq. 4 taken into one entry and the ½ and the signs
        applied once per harmonic (:func:`_finish`), not once per pair: one SymEngine product per
        pair of harmonics (the caller bounds the pairs of each entry)."""
        for fa, fb in pairs:
            if not fa or not fb:
                continue
            for (ka, k0, p0), ca in fa.items():
                for (kb, k1, p1), cb in fb.items():
                    c = ca * cb
                    if ka == "1" or kb == "1":
                        key = (kb, k1, p1) if ka == "1" else (ka, k0, p0)
                        _put(acc, key, 0, c)
                        continue
                    kp, pp = k0 + k1, T._add(p0, p1)
                    km = k0 - k1
                    pm = T._add(p0, p1, -1)
                    for plus, kind, sign in T._PRODUCT_TO_SUM[ka, kb]:   # slot 1: +½, 2: −½
                        if plus:
                            _put(acc, (kind, kp, pp), 1 if sign > 0 else 2, c)
                        else:
                            _put_harmonic(acc, kind, km, pm, 1 if sign > 0 else 2, c)


class _Rot:
    """A row of Θ D_ω q̇ + ω × Θω: its length (an upper bound) is known before the cross product's
    pairs are multiplied, which only an entry within the budget asks for (:meth:`form`, once)."""

    __slots__ = ("lin", "pairs", "done")

    def __init__(self, lin, pairs):
        self.lin, self.pairs, self.done = lin, pairs, None

    def __len__(self):
        return len(self.lin) + sum(len(a) * len(b) * 2 for a, b in self.pairs)

    def form(self, F) -> dict:
        if self.done is None:
            acc: dict = {}
            F.dot(acc, self.pairs)
            self.done = _sum([self.lin, _finish(acc)])
        return self.done


def _put(acc, key, slot, c):
    got = acc.get(key)
    if got is None:
        got = acc[key] = ([], [], [])
    got[slot].append(c)


def _put_harmonic(acc, kind, k, phi, slot, c):
    """``±½ c`` times cos/sin(k·q + φ) (slot 1: +½, 2: −½), k brought to its normal sign as
    ``trig._normal`` does: cos(−A) = cos A, sin(−A) = −sin A; k = 0 is harmonic-free."""
    if k > 0:
        _put(acc, (kind, k, phi), slot, c)
        return
    if k < 0:
        if kind == "s":
            slot = 3 - slot
        _put(acc, (kind, -k, None if phi is None else -phi), slot, c)
        return
    if phi is None:
        if kind == "c":
            _put(acc, _CONST, slot, c)
        return
    _put(acc, _CONST, slot, c * (se.cos(phi) if kind == "c" else se.sin(phi)))


_HALF = se.Rational(1, 2)


def _finish(acc: dict) -> dict:
    """The form of an accumulated entry: per harmonic, whole + ½ (halves − negative halves)."""
    out = {}
    for key, (whole, plus, minus) in acc.items():
        parts = list(whole)
        if plus or minus:
            half = se.Add(*plus) if not minus else se.Add(*plus) - se.Add(*minus)
            parts.append(_HALF * half)
        out[key] = parts[0] if len(parts) == 1 else se.Add(*parts)
    return out


def _join_clean(acc: dict) -> dict:
    """:func:`_join` where a coefficient's own derivative met a harmonic's (a prismatic or helical
    coordinate): those sums expanded and dropped when they cancel (a harmonic with coefficient 0
    would take products). Keys from one source keep their coefficient as it is: the derivative
    maps distinct harmonics to distinct ones."""
    out = {}
    for key, cs in acc.items():
        if len(cs) == 1:
            out[key] = cs[0]
        else:
            E = T._expand(se.Add(*cs))
            if not _is_zero(E):
                out[key] = E
    return out


def _join(acc: dict) -> dict:
    return {key: cs[0] if len(cs) == 1 else se.Add(*cs) for key, cs in acc.items()}


_ZERO_T, _ONE_T = type(se.Integer(0)), type(se.Integer(1))    # SymEngine's own classes Zero and One


def _is_zero(x) -> bool:
    """An exact zero, by its type (SymEngine's 0 is a ``Zero``): ``x == 0`` sympifies the Python 0
    and cost ~4 µs, with hundreds of calls a derivation."""
    return type(x) is _ZERO_T


def _scale(f: dict, c) -> dict:
    t = type(c)
    if t is _ZERO_T:
        return {}
    if t is _ONE_T:
        return f
    return {key: c * v for key, v in f.items()}


def _sum(forms) -> dict:
    acc: dict = {}
    for f in forms:
        for key, c in f.items():
            acc.setdefault(key, []).append(c)
    return _join(acc)


def tree_terms_readable(bodies, q, dq, gravity, raw):
    """M̄, b, g of :func:`~.system.tree_terms` in the readable form, from the bodies' positions.

    Parameters
    ----------
    bodies : sequence of (m, Θ, r, T_ω)
        As :func:`~.system.tree_terms` takes them (3-D bodies: Θ 3×3, r 3×1, T_ω 3×n; SymEngine).
    q, dq : sequence of symengine.Symbol
        The coordinates and rates.
    gravity : symengine.DenseMatrix
        The gravity vector (3×1).
    raw : tuple of (list, list, list)
        The derived entries (M's n×n flat, b, g) of :func:`~.system.tree_terms`: the readable
        pass's rules read their size (an entry with more than ``trig.READABLE_MAX_OPS``
        operations, or one longer rewritten, stays as derived).

    Returns
    -------
    (M_flat, b, g) or None
        The entries (M row by row), or None when a sine's or cosine's argument is not an integer
        combination of q plus a phase, or a body is planar: the caller then runs the readable
        pass on ``raw``. Every entry's products are bounded by ``MAX_ENTRY_WORK`` (a bound on
        size, never on the clock).

    Examples
    --------
    A point mass on a rod of length l about z, under gravity −g ŷ:

    >>> import symengine as se
    >>> a, da, m, l, g = se.symbols("a da m l g")
    >>> r = se.Matrix([l * se.cos(a), l * se.sin(a), 0])
    >>> body = (m, se.zeros(3, 3), r, se.Matrix([[0], [0], [1]]))
    >>> raw = ([m * l**2 * (se.sin(a)**2 + se.cos(a)**2)], [se.Integer(0)], [g * l * m * se.cos(a)])
    >>> tree_terms_readable([body], [a], [da], se.Matrix([0, -g, 0]), raw)
    ([l**2*m], [0], [g*l*m*cos(a)])
    """
    n = len(q)
    F = _Forms(q, dq)
    grav = [(k, -x) for k, x in enumerate(list(gravity)) if not _is_zero(x)]
    M_raw, b_raw, g_raw = raw
    # the readable pass's rules, decided before any form is built: an atom, or an entry with more
    # than READABLE_MAX_OPS operations derived, stays as derived; and so does an entry whose pairs
    # of forms would take more than MAX_ENTRY_WORK products of harmonics — its pairs are counted as
    # the bodies are read, and once no entry of M or b is left to rewrite the bodies' D q̇ and
    # rotations are no longer put in harmonics (MA23: every entry past the bounds).
    # Matrices are read as lists once (a SymEngine matrix's [a, c] costs microseconds in Python),
    # zeros of Θ and T_ω skipped.

    counted: dict = {}      # id of a derived entry → its operations (read by alive and entry)

    def ops_of(e):
        got = counted.get(id(e))
        if got is None:
            got = counted[id(e)] = se.count_ops(e)
        return got

    def alive(e):
        return isinstance(e, se.Basic) and not e.is_Atom and ops_of(e) <= T.READABLE_MAX_OPS
    Mp = {(i, j): [] if alive(M_raw[i * n + j]) else None for i in range(n) for j in range(i, n)}
    bp = [[] if alive(e) else None for e in b_raw]
    work = dict.fromkeys(list(Mp) + list(range(n)), 0)
    gf = [[] for _ in range(n)]
    R3 = range(3)
    budget = MAX_ENTRY_WORK

    def add(slots, key, pairs):
        got = slots[key]
        if got is None:
            return
        w = work[key] + sum(len(a) * len(b) for a, b in pairs)
        if w > budget:
            slots[key] = None
        else:
            work[key] = w
            got += pairs
    try:
        for m, Th, r, To in bodies:
            if r.nrows() != 3 or To.nrows() != 3:
                return None
            need_M = any(v is not None for v in Mp.values())
            need_b = any(v is not None for v in bp)
            fr = [F.of(x) for x in list(r)]
            J = [[F.partial(fr[k], i) for i in range(n)] for k in R3]                 # T = ∂r/∂q (eq. 3)
            mJ = [[_scale(J[k][i], m) for i in range(n)] for k in R3]
            acc = [F.rate(F.rate(fr[k])) for k in R3] if need_b else None             # D_r q̇ (eq. 3)
            for i in range(n):
                mJi = [mJ[k][i] for k in R3]
                if need_M:
                    for j in range(i, n):
                        add(Mp, (i, j), [(mJi[k], J[k][j]) for k in R3 if mJi[k] and J[k][j]])
                if need_b:
                    add(bp, i, [(mJi[k], acc[k]) for k in R3 if mJi[k] and acc[k]])
                gf[i] += [_scale(mJi[k], c) for k, c in grav if mJi[k]]
            Thl = Th.tolist()              # (a SymEngine matrix's [a, c] checks its key in Python each time)
            th = [(a, c, Thl[a][c]) for a in R3 for c in R3]
            th = [(a, c, x) for a, c, x in th if not _is_zero(x)]
            if not th or not (need_M or need_b):
                continue
            W = [[F.of(x) for x in row] for row in To.tolist()] if n else [[], [], []]  # T_ω (eq. 2)

            def times_theta(v):            # Θ v for a 3-vector of forms
                out = [[], [], []]
                for a, c, x in th:
                    if v[c]:
                        out[a].append(_scale(v[c], x))
                return [_sum(f) for f in out]
            ThW = [times_theta([W[0][j], W[1][j], W[2][j]]) for j in range(n)]       # ThW[j][a]
            w = [_sum([_scale(W[a][j], dq[j]) for j in range(n) if W[a][j]]) for a in R3]   # ω = T_ω q̇
            Iw = times_theta(w)
            lin = times_theta([F.rate(w[a]) for a in R3])                             # Θ D_ω q̇
            # Θ D_ω q̇ + ω × Θω, row a; its length bounded before the cross product is formed
            rot = [_Rot(lin[a], [(w[(a + 1) % 3], Iw[(a + 2) % 3]), (_scale(w[(a + 2) % 3], -1), Iw[(a + 1) % 3])])
                   for a in R3]
            for i in range(n):
                Wi = [W[a][i] for a in R3]
                for j in range(i, n):
                    add(Mp, (i, j), [(Wi[a], ThW[j][a]) for a in R3 if Wi[a] and ThW[j][a]])
                add(bp, i, [(Wi[a], rot[a]) for a in R3 if Wi[a]])

        def products(pairs):
            if pairs is None:
                return None
            acc: dict = {}
            F.dot(acc, [(fa, fb.form(F) if type(fb) is _Rot else fb) for fa, fb in pairs])
            return _finish(acc)
        Mf = {key: products(pairs) for key, pairs in Mp.items()}
        bf = [products(pairs) for pairs in bp]
    except (T._TooBig, T._Unparsed):
        return None
    angles = F.harm.angles

    def entry(form, derived):
        # the readable pass's rules (trig.readable): atoms and entries past READABLE_MAX_OPS stay
        # as derived, and so does an entry the rewrite would lengthen
        if not isinstance(derived, se.Basic) or derived.is_Atom:
            return derived
        ops = ops_of(derived)
        if ops > T.READABLE_MAX_OPS or form is None:
            return derived
        out = T._rebuild_form(form, angles, limit=ops)
        return out if out is not None and se.count_ops(out) <= ops else derived
    M = [None] * (n * n)
    for (i, j), forms in Mf.items():
        M[i * n + j] = M[j * n + i] = entry(forms, M_raw[i * n + j])
    b = [entry(bf[i], b_raw[i]) for i in range(n)]
    g = [entry(_sum(gf[i]), g_raw[i]) for i in range(n)]
    return M, b, g
