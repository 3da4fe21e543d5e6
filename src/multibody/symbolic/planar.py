"""Planar trees derived in the readable (Fourier) form directly: M, b, g as sums of harmonics.

A tree whose revolute joints all turn about one coordinate axis (±x, ±y or ±z, the plane's normal),
whose prismatic joints slide in the plane and whose joint frames are not rotated moves in the plane:
every body's angle is a sum ``θ_k = Σ ±q_j`` of the revolute coordinates on its path, and every
vector of the plane is a sum of *phasors* ``z e^{iθ}`` (z = x + iy, x and y along the plane's two
axes, the normal completing a right-handed frame). The position of body k's centre of mass is

    r_k = Σ_{b on the path to k} L_b e^{iθ_parent(b)} + c_k e^{iθ_k}

with L_b the joint's offset in the parent (plus q_b times the axis for a prismatic joint) and c_k
the centre of mass in the body. Lagrange's equations then need only inner products of phasors,

    ⟨z e^{iα}, w e^{iβ}⟩ = Re(z w̄) cos(α − β) − Im(z w̄) sin(α − β),

which *are* the product-to-sum identities: the entries come out as harmonics of the relative
angles with no ``sin² + cos²`` ever formed, so no readable pass runs afterwards.

    M_ij = Σ_k m_k ⟨∂r_k/∂q_i, ∂r_k/∂q_j⟩ + I_k ∂θ_k/∂q_i ∂θ_k/∂q_j
    b_i  = Σ_k m_k ⟨∂r_k/∂q_i, a_k⟩,  a_k = Σ_τ (−θ̇_τ² z_τ + 2i θ̇_τ ż_τ) e^{iθ_τ} (q̈ = 0)
    g_i  = −Σ_k m_k ⟨∂r_k/∂q_i, g⟩

(``∂(z e^{iθ})/∂q_j = (∂z/∂q_j + i θ[j] z) e^{iθ}``; I_k the body's inertia about the plane's
normal through its centre of mass). The sums over bodies are taken once per pair of phasors:
the bodies whose position holds both are one subtree, so each pair carries that subtree's mass —
the composite masses of the CRBA. The coefficients are summed as exact polynomials over the
model's symbols (:class:`_Poly`, Python ints and fractions: no SymEngine sum is built and expanded
again per harmonic), and each harmonic's coefficient is made SymEngine once, its common factor
taken out as :func:`.trig._factored` takes it: the same canonical form the readable pass gives, so
every method's readable entries stay equal symbol for symbol.
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd

from . import _core as C
from . import trig as T
from .tree import FIX, PRI, REV, SymBody

__all__ = ["planar_normal", "planar_readable", "planar_forms", "PlanarForms", "PLANAR_MAX_WORK", "PLANAR_MG_MAX_WORK"]

_PLANES = {0: (1, 2), 1: (2, 0), 2: (0, 1)}   # normal → (re, im) axes, (re, im, normal) right-handed


def _number(e):
    """The value of an exact SymEngine integer entry (0, ±1), else None."""
    return int(e) if isinstance(e, C.se.Integer) else None


def planar_normal(bodies: list[SymBody]):
    """(normal axis index, per body the sign of its revolute axis) when the tree is planar as the
    module docstring says, else None. Helical joints, rotated joint frames, a revolute axis off the
    normal or a prismatic axis with a normal component give None (the general recursion derives
    those)."""
    normal = None
    for bd in bodies:
        if bd.kind == REV:
            ax = [_number(a) for a in bd.axis]
            if None in ax or sorted(abs(a) for a in ax) != [0, 0, 1]:
                return None
            normal = next(k for k in range(3) if ax[k])
            break
    if normal is None:
        return None
    signs = []
    for bd in bodies:
        if bd.kind not in (REV, PRI, FIX) or not C.is_identity(bd.A_PJ):
            return None
        ax = [_number(a) for a in bd.axis]
        if bd.kind == REV:
            if None in ax or any(ax[k] for k in range(3) if k != normal) or abs(ax[normal]) != 1:
                return None
            signs.append(ax[normal])
        else:
            if bd.kind == PRI and ax[normal] != 0:
                return None
            signs.append(0)
    return normal, signs


class _Poly:
    """Exact polynomials over the model's symbols: ``{monomial: coefficient}``, a monomial the sorted
    tuple of its variables' indices (``m2*l1**2`` is ``(i_l1, i_l1, i_m2)``), a coefficient a Python
    int, ``Fraction`` or, for a numeric (float) model, float. The harmonics' coefficients are summed
    here and made SymEngine once, at the end (:meth:`expr`): summing SymEngine sums and expanding each
    harmonic's coefficient afterwards was two thirds of the planar derivation. Anything that is not a
    sum, product, power or number of symbols (``sqrt(2)``, ``sin(a)``) is a variable of its own."""

    def __init__(self):
        self.index = {}       # SymEngine atom → variable index
        self.atoms = []       # variable index → SymEngine atom
        self.memo = {}        # SymEngine expression → polynomial
        self.monos = {}       # monomial → SymEngine product
        self.numbers = {}     # exact coefficient → SymEngine number
        self.terms = {}       # (coefficient, monomial) → SymEngine term
        self.shapes = {}      # a coefficient's (coefficient, monomial) items → its shape
        self.opaque = False   # an atom that is no symbol (its powers may fold: sqrt(2)**2 = 2)
        self.numbers_trig = {}

    def of(self, e):
        """The polynomial of a SymEngine expression (memoised: the model's entries repeat)."""
        t = type(e)
        if t is C._Z:
            return {}
        got = self.memo.get(e)
        if got is not None:
            return got
        if isinstance(e, C.se.Integer):
            p = {(): int(e)}
        elif isinstance(e, C.se.Rational):
            n, d = (int(v) for v in e.as_numer_denom())
            p = {(): Fraction(n, d)}
        elif isinstance(e, C.se.RealDouble):
            p = {(): float(e)}
        elif t is C.se.Add:
            p = {}
            for a in e.args:
                _add_into(p, self.of(a), 1)
        elif t is C.se.Mul:
            args = e.args
            p = self.of(args[0])
            for a in args[1:]:
                p = _mul(p, self.of(a))
        elif t is C.se.Pow and isinstance(e.args[1], C.se.Integer) and int(e.args[1]) > 0:
            b = self.of(e.args[0])
            p = b
            for _ in range(int(e.args[1]) - 1):
                p = _mul(p, b)
        else:
            k = self.index.get(e)
            if k is None:
                k = self.index[e] = len(self.atoms)
                self.atoms.append(e)
                if type(e) not in _SYMBOL_TYPES:
                    self.opaque = True
            p = {(k,): 1}
        self.memo[e] = p
        return p

    def mono(self, m):
        got = self.monos.get(m)
        if got is None:
            factors, k = [], 0
            while k < len(m):
                j = k
                while j < len(m) and m[j] == m[k]:
                    j += 1
                a = self.atoms[m[k]]
                factors.append(a if j - k == 1 else a ** (j - k))
                k = j
            got = self.monos[m] = factors[0] if len(factors) == 1 else C.se.Mul(*factors)
        return got

    def number(self, c):
        got = self.numbers.get(c)
        if got is None:
            if type(c) is float:
                got = C.se.RealDouble(c)
            elif type(c) is int or c.denominator == 1:
                got = C.se.Integer(int(c))
            else:
                got = C.se.Rational(c.numerator, c.denominator)
            self.numbers[c] = got
        return got

    def term(self, c, m):
        """c · monomial m as SymEngine (memoised: the entries of M, b and g repeat their terms)."""
        key = (c, m)
        got = self.terms.get(key)
        if got is None:
            if not m:
                got = self.number(c)
            else:
                x = self.mono(m)
                got = x if c == 1 and type(c) is not float else self.number(c) * x
            self.terms[key] = got
        return got

    def shape(self, p):
        """A harmonic's coefficient with its common factor taken out the way :func:`.trig._factored`
        takes it out of the expanded coefficient (the gcd of the numerators over the lcm of the
        denominators, negative when every term is, each variable to its smallest power; none for a
        float model): None (zero), ``(c, m)`` (one term), ``(None, None, terms)`` (a sum) or
        ``(k, cm, terms)`` (``k·cm`` times the sum of ``terms``), terms as (coefficient, monomial).
        Memoised by value: M's entries and b's rows repeat half of their coefficients."""
        items = [(c, m) for m, c in p.items() if c]
        if not items:
            return None
        if len(items) == 1:
            return items[0]
        key = frozenset(items)
        got = self.shapes.get(key)
        if got is not None:
            return got
        g, lcm, neg, common, floats = 0, 1, True, None, False
        for c, m in items:
            tc = type(c)
            if tc is int:
                num, den = c, 1
            elif tc is float:
                floats = True
                break
            else:
                num, den = c.numerator, c.denominator
            g = gcd(g, num)
            if den != 1:
                lcm = lcm * den // gcd(lcm, den)
            neg = neg and num < 0
            common = m if common is None else _meet(common, m) if common else common
        if floats or (not common and not neg and g == 1 and lcm == 1):
            got = (None, None, items)
        else:
            k = Fraction(-g if neg else g, lcm)
            whole = k.denominator == 1
            kn = k.numerator
            got = (k, common, [(c // kn if whole and type(c) is int else c / k, _minus(m, common) if common else m)
                               for c, m in items])
        self.shapes[key] = got
        return got

    def expr(self, p):
        """A harmonic's coefficient as SymEngine: ``k·cm * (rest)``, the very expression the
        readable pass builds (see :meth:`shape`). With an atom that is no symbol the terms are
        summed, expanded and factored by SymEngine as the readable pass does (a product of such
        atoms folds, ``sqrt(2)**2 = 2``, so the polynomial's coefficients are not the terms')."""
        if self.opaque:
            E = C.expand(C.se.Add(*[self.term(c, m) for m, c in p.items() if c]))
            if type(E) is C._Z or E.is_Number and E == 0:
                return C.ZERO
            return T._factored(E, self.numbers_trig)
        sh = self.shape(p)
        if sh is None:
            return C.ZERO
        if len(sh) == 2:
            return self.term(*sh)
        k, cm, terms = sh
        rest = C.se.Add(*[self.term(c, m) for c, m in terms])
        return rest if k is None else self.term(k, cm) * rest


def _meet(a, b):
    """The common part of two monomials (sorted tuples of variable indices, repeated by power)."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        if x == y:
            out.append(x)
            i += 1
            j += 1
        elif x < y:
            i += 1
        else:
            j += 1
    return tuple(out)


def _minus(a, b):
    """Monomial a divided by its factor b."""
    out, j = [], 0
    for x in a:
        if j < len(b) and b[j] == x:
            j += 1
        else:
            out.append(x)
    return tuple(out)


def _add_into(acc, p, sign):
    """acc += sign · p (in place)."""
    get = acc.get
    if sign > 0:
        for m, c in p.items():
            v = get(m)
            acc[m] = c if v is None else v + c
    else:
        for m, c in p.items():
            v = get(m)
            acc[m] = -c if v is None else v - c


def _mul(a, b):
    """The product of two polynomials (an empty one is 0)."""
    if not a or not b:
        return {}
    if len(a) == 1 and len(b) == 1:     # most products: a parameter times a parameter
        (ma, ca), = a.items()
        (mb, cb), = b.items()
        return {tuple(sorted(ma + mb)) if ma and mb else ma or mb: ca * cb}
    out = {}
    get = out.get
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb)) if ma and mb else (ma or mb)
            c = ca * cb
            v = get(m)
            out[m] = c if v is None else v + c
    return out


class _Term:
    """One phasor ``z e^{iθ}`` of a position: z = (x, y) polynomials, θ as {dof: ±1}, the bodies whose
    position holds it (``bodies``), its rate's phasor ż (the axis) for a prismatic joint's offset."""

    __slots__ = ("x", "y", "theta", "bodies", "dz", "dof_pri", "index", "key")

    def __init__(self, x, y, theta, bodies, dz=None, dof_pri=-1):
        self.x, self.y, self.theta, self.bodies = x, y, theta, bodies
        self.dz, self.dof_pri = dz, dof_pri


#: phasor inner products a planar derivation may take (M, b and g together, counted before any is
#: formed): the pendulum on a cart needs 48 at n = 2, 357 at n = 4, 733 at n = 5, 1346 at n = 6, 2278
#: at n = 7, 3623 at n = 8. Past this the expanded harmonics outgrow the recursion's shared terms (their
#: entries grow as n⁵: 22 392 operations at n = 8, 65 558 at n = 10, and M, b, g read as SymPy grow with
#: them), and the recursion derives the tree. Measured (derive + M, b, g read as SymPy, min of 5, cache
#: cleared): planar against recursion + readable pass 6.6 / 11.7 ms at n = 5, 12.0 / 13.9 at n = 6,
#: 17.8 / 18.6 at n = 7 (a tie), 30.2 / 18.5 at n = 8
PLANAR_MAX_WORK = 2000

#: the same bound for M and g alone (``planar_forms(..., rates=False)``), b then derived by the
#: recursion: M's and g's harmonics grow as n⁴ and n², not n⁵ as b's do. The pendulum on a cart needs
#: 865 at n = 6, 2518 at n = 8, 5867 at n = 10, 8450 at n = 11, 11 808 at n = 12. Measured (M and g,
#: derived and read as SymPy, min of 5, cache cleared): planar against CRBA + RNEA + readable pass
#: 7.3 / 14.2 ms at n = 8, 13.9 / 20.4 at n = 10, 25.5 / 25.4 at n = 12 (a tie), 38.9 / 31.8 at n = 14.
#: Where the readable pass gives up on an entry of M (its harmonics take more than ``trig._MAX_WORK``
#: products: 23 of the 81 at n = 8) the planar entry is the readable one: M at n = 8 has 4956
#: operations against 12 856 (after CSE 343 against 411)
PLANAR_MG_MAX_WORK = 9000


def planar_readable(bodies: list[SymBody], q, dq, gravity, normal, signs, *, max_work: int | None = None):
    """(M rows, b, g) of a planar tree (see the module docstring) as readable SymEngine entries;
    ``q``, ``dq`` SymEngine symbols, ``gravity`` a 3-vector. None when it would take more than
    ``max_work`` phasor inner products (a bound on size, never on the clock)."""
    got = planar_forms(bodies, q, dq, gravity, normal, signs, max_work=max_work)
    return None if got is None else got.symengine()


def planar_forms(bodies: list[SymBody], q, dq, gravity, normal, signs, *, max_work: int | None = None,
                 rates: bool = True):
    """:class:`PlanarForms` of a planar tree: per entry of M, b, g its harmonics' coefficients as
    polynomials, made SymEngine or SymPy by the caller (arguments as :func:`planar_readable`).
    ``rates=False``: M and g only (b empty, its work not counted), for a tree whose b is derived by
    the recursion (see :func:`.rnea_sym.rnea_equations`)."""
    n = len(q)
    ra, im = _PLANES[normal]
    angles = T._Angles(q)
    weights = [angles.weight[s] for s in q]
    nb = len(bodies)
    P = _Poly()
    children = [[] for _ in range(nb)]
    for k, bd in enumerate(bodies):
        if bd.parent >= 0:
            children[bd.parent].append(k)
    subtree = [None] * nb
    for k in range(nb - 1, -1, -1):
        subtree[k] = frozenset([k]).union(*(subtree[c] for c in children[k]))
    theta = []
    terms: list[_Term] = []
    axis_terms = {}            # prismatic dof → the phasor of its axis (∂z/∂q of its offset)
    for k, bd in enumerate(bodies):
        th_p = theta[bd.parent] if bd.parent >= 0 else {}
        th = dict(th_p)
        if bd.kind == REV:
            th[bd.dof] = th.get(bd.dof, 0) + signs[k]
        theta.append(th)
        x, y = bd.t_PJ[ra], bd.t_PJ[im]
        if bd.kind == PRI:
            ux, uy = bd.axis[ra], bd.axis[im]
            u = _Term(P.of(ux), P.of(uy), th_p, subtree[k])
            axis_terms[bd.dof] = u
            px, py = dict(P.of(x)), dict(P.of(y))
            qd = P.of(q[bd.dof])
            _add_into(px, _mul(u.x, qd), 1)
            _add_into(py, _mul(u.y, qd), 1)
            terms.append(_Term(px, py, th_p, subtree[k], dz=u, dof_pri=bd.dof))
        elif type(x) is not C._Z or type(y) is not C._Z:
            terms.append(_Term(P.of(x), P.of(y), th_p, subtree[k]))
        cx, cy = bd.com[ra], bd.com[im]
        if type(cx) is not C._Z or type(cy) is not C._Z:
            terms.append(_Term(P.of(cx), P.of(cy), th, frozenset([k])))
    masses = [P.of(bd.mass) for bd in bodies]
    mass_memo = {}

    def mass_of(ks):
        got = mass_memo.get(ks)
        if got is None:
            got = mass_memo[ks] = {}
            for k in ks:
                _add_into(got, masses[k], 1)
        return got

    def key(th):
        return sum(weights[j] * s for j, s in th.items())

    # per dof j the columns ∂r/∂q_j as (flag i?, sign, term): revolute j turns every term whose
    # angle holds it (i θ[j] z), prismatic j moves its own offset (its axis phasor)
    cols = [[] for _ in range(n)]
    for t in terms:
        for j, s in t.theta.items():
            if s:
                cols[j].append((True, s, t))
    for j, u in axis_terms.items():
        cols[j].append((False, 1, u))
    sizes = [len(c) for c in cols]
    n_acc = sum(2 if t.dz is not None else 1 for t in terms) if rates else 0
    work = sum(sizes[i] * (sum(sizes[i:]) + n_acc + 1) for i in range(n))
    if work > (PLANAR_MAX_WORK if max_work is None else max_work):
        return None

    for idx, t in enumerate(terms + list(axis_terms.values())):
        t.index, t.key = idx, key(t.theta)
    nt = len(terms) + len(axis_terms)
    pairs = [[False] * nt for _ in range(nt)]

    def pair(t, u):
        """The inner products of the pair (t, u) in harmonics: with p = W z_t z̄_u (W the mass of the
        bodies holding both) and K = θ_t − θ_u, Re(p e^{iK}) = X cos K − Y sin K and
        Im(p e^{iK}) = X sin K + Y cos K; K ≥ 0 as the key (cos(−K) = cos K, sin(−K) = −sin K) and
        sin 0 = 0: (cosine key, sine key or None, the cosine's and the sine's coefficient as
        (polynomial, sign)) for Re and for Im. None when no body holds both."""
        got = pairs[t.index][u.index]
        if got is False:
            common = t.bodies & u.bodies
            if not common:
                got = None
            else:
                W = mass_of(common)
                x = _mul(t.x, u.x)
                if t.y and u.y:
                    _add_into(x, _mul(t.y, u.y), 1)
                y = _mul(t.y, u.x)
                if t.x and u.y:
                    _add_into(y, _mul(t.x, u.y), -1)
                X, Y = _mul(W, x), _mul(W, y)
                K = t.key - u.key
                sgn = (K > 0) - (K < 0)
                kc = ("c", abs(K), None) if K else T._CONST
                ks = ("s", abs(K), None) if K else None
                got = (kc, ks, (X, 1), (Y, -sgn), (Y, 1), (X, sgn))
            pairs[t.index][u.index] = got
        return got

    def add_to(acc, fa, sa, t, fb, sb, u):
        """acc += sa sb ⟨(i if fa) z_t e^{iθ_t}, (i if fb) z_u e^{iθ_u}⟩, acc a harmonic → polynomial."""
        p = pair(t, u)
        if p is None:
            return
        kc, ks, re_c, re_s, im_c, im_s = p
        s = sa * sb
        if fa == fb:           # Re
            c_part, s_part = re_c, re_s
        else:                  # fa: Re(i p) = −Im(p); fb: Re(−i p) = Im(p)
            c_part, s_part = im_c, im_s
            if fa:
                s = -s
        v, sg = c_part
        if v:
            slot = acc.get(kc)
            if slot is None:
                slot = acc[kc] = {}
            _add_into(slot, v, s * sg)
        v, sg = s_part
        if ks is not None and sg and v:
            slot = acc.get(ks)
            if slot is None:
                slot = acc[ks] = {}
            _add_into(slot, v, s * sg)

    def rebuild(acc):
        """The entry's harmonics, harmonic-free part first (the readable pass's order)."""
        return [(kk, acc[kk]) for kk in sorted(acc, key=lambda h: (h[0] != "1", h[1]))]

    inertias = [P.of(bd.inertia_com[normal][normal]) for bd in bodies]
    M = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            acc = {}
            for fa, sa, t in cols[i]:
                for fb, sb, u in cols[j]:
                    add_to(acc, fa, sa, t, fb, sb, u)
            for k in range(nb):
                s = theta[k].get(i, 0) * theta[k].get(j, 0)
                if s and inertias[k]:
                    _add_into(acc.setdefault(T._CONST, {}), inertias[k], s)
            M[i][j] = M[j][i] = rebuild(acc)
    # velocity-product accelerations: −θ̇² z (every term), 2 i θ̇ ż (a prismatic offset: ż = u q̇);
    # the products with one rate factor are summed before it multiplies them (one product per
    # harmonic and rate, not per pair)
    omegas = {}
    accel = []
    for t in (terms if rates else ()):
        w = omegas.get(t.key)
        if w is None:
            w = omegas[t.key] = {}
            for j, s in t.theta.items():
                if s:
                    _add_into(w, P.of(dq[j]), s)
        if not w:
            continue
        accel.append((False, ("w2", t.key), t))
        if t.dz is not None:
            accel.append((True, ("wd", t.key, t.dof_pri), t.dz))
    factors = {}
    for _, name, _ in accel:
        if name not in factors:
            w = omegas[name[1]]
            if name[0] == "w2":
                f = {}
                _add_into(f, _mul(w, w), -1)
            else:
                f = _mul(w, P.of(2 * dq[name[2]]))
            factors[name] = f
    b = []
    for i in range(n if rates else 0):
        groups = {}
        for fa, sa, t in cols[i]:
            for fb, name, u in accel:
                acc = groups.get(name)
                if acc is None:
                    acc = groups[name] = {}
                add_to(acc, fa, sa, t, fb, 1, u)
        acc = {}
        for name, part in groups.items():
            f = factors[name]
            for kk, v in part.items():
                if v:
                    slot = acc.get(kk)
                    if slot is None:
                        slot = acc[kk] = {}
                    _add_into(slot, _mul(f, v), 1)
        b.append(rebuild(acc))
    gx, gy = P.of(gravity[ra]), P.of(gravity[im])
    if not gx and not gy:
        return PlanarForms(P, angles, M, b, [[] for _ in range(n)])
    G = _Term({m: -c for m, c in gx.items()}, {m: -c for m, c in gy.items()}, {}, frozenset(range(nb)))
    G.index, G.key = nt, 0        # −g: g_i = −Σ m ⟨J, g⟩
    for row in pairs:
        row.append(False)
    pairs.append([False] * (nt + 1))
    g = []
    for i in range(n):
        acc = {}
        for fa, sa, t in cols[i]:
            add_to(acc, fa, sa, t, False, 1, G)
        g.append(rebuild(acc))
    return PlanarForms(P, angles, M, b, g)


class PlanarForms:
    """M (rows, the upper triangle's forms shared with the lower), b and g of a planar tree: per
    entry its harmonics ``[(key, polynomial)]``, harmonic-free part first. :meth:`symengine` and
    :meth:`sympy` build the same readable entries; the SymPy ones straight from the polynomials (no
    SymEngine entry built and walked again: that conversion was a third of deriving the pendulum on
    a cart at n = 2 and half of it at n = 6)."""

    def __init__(self, poly: _Poly, angles, M, b, g):
        self.poly, self.angles, self.M, self.b, self.g = poly, angles, M, b, g

    def _rows(self, entry):
        memo = {}

        def one(form):
            got = memo.get(id(form))
            if got is None:
                got = memo[id(form)] = entry(form)
            return got
        return [[one(f) for f in row] for row in self.M], [one(f) for f in self.b], [one(f) for f in self.g]

    def symengine(self):
        """(M rows, b, g) as SymEngine entries (built once)."""
        got = self.__dict__.get("_se")
        if got is None:
            got = self._se = self._rows(self._entry_se)
        return got

    def sympy(self, conv):
        """(M rows, b, g) as SymPy entries, node for node what ``conv`` (a :class:`._core.Converter`)
        makes of :meth:`symengine`'s: each product and sum built from the arguments SymEngine's would
        hold, by the converter's own rules (its canonical sort, a number distributed over a sum of
        two arguments, nested sums flattened), so the two agree symbol for symbol (the tests hold
        them). Models with an atom that is no symbol (``sqrt(2)``: SymEngine folds its powers) go
        through SymEngine."""
        P, angles = self.poly, self.angles
        if not all(type(a) in _SYMBOL_TYPES for a in P.atoms):
            return self._rows(lambda form: conv(self._entry_se(form)))
        sp_mul, sp_add, com = C.sp.Mul._from_args, C.sp.Add._from_args, conv.commutative
        powers, terms, factor_memo, parts, atoms = {}, {}, {}, {}, {}

        def mul(args):
            if len(args) == 1:
                return args[0]
            if len(args) == 2 and (args[0].is_Number or args[1].is_Number) and (args[0].is_Add or args[1].is_Add):
                return conv._distribute(*args) if args[0].is_Number else conv._distribute(args[1], args[0])
            if any(a.is_Mul for a in args):
                return C.sp.Mul(*args)
            conv._sort(args)
            return sp_mul(args, com)

        def add(args):
            if len(args) == 1:
                return args[0]
            if any(a.is_Add for a in args):
                return conv._flat_add(args)
            conv._sort(args)
            return sp_add(args, com)

        def factors(c, m):
            """The converted arguments of SymEngine's product c·m (a new list)."""
            key = (c, m)
            got = factor_memo.get(key)
            if got is None:
                got = factor_memo[key] = _factors(c, m)
            return list(got)

        def _factors(c, m):
            out = [] if (c == 1 and type(c) is not float) and m else [conv(P.number(c))]
            k = 0
            while k < len(m):
                j = k
                while j < len(m) and m[j] == m[k]:
                    j += 1
                key = (m[k], j - k)
                f = powers.get(key)
                if f is None:
                    a = P.atoms[m[k]]
                    f = powers[key] = conv(a if j == k + 1 else a ** (j - k))
                out.append(f)
                k = j
            return out

        def term(c, m):
            key = (c, m)
            got = terms.get(key)
            if got is None:
                got = terms[key] = mul(factors(c, m))
            return got

        coords = [conv(x) for x in angles.coords]
        sp_integer, sp_cos, sp_sin = C.sp.Integer, C.sp.cos, C.sp.sin

        def harmonic(kk):
            """``cos``/``sin`` of the angle ``kk`` as the converter makes it of SymEngine's (the angle's
            terms ``d*q`` sorted and summed by its rules, the function applied as it applies it),
            built here from the coordinates: making SymEngine's first and converting it was a twelfth
            of reading the pendulum on a cart's M, b, g at n = 6."""
            got = atoms.get(kk)
            if got is None:
                kind, k, phi = kk
                if phi is not None:
                    got = conv(angles.harmonic_atom(*kk))
                else:
                    terms = [q if d == 1 else mul([sp_integer(d), q]) for d, q in zip(angles.digits(k), coords) if d]
                    got = C._apply(sp_cos if kind == "c" else sp_sin, [add(terms)])
                atoms[kk] = got
            return got

        def part(sh, kk):
            """The arguments one harmonic gives its entry's sum (a list)."""
            atom = [] if kk[0] == "1" else [harmonic(kk)]
            if len(sh) == 2:
                return [term(*sh) if not atom else mul(factors(*sh) + atom)]
            k, cm, items = sh
            if k is None and not atom:      # SymEngine's sum takes a sum's terms in
                return [term(c, m) for c, m in items]
            rest = add([term(c, m) for c, m in items])
            return [mul((factors(k, cm) if k is not None else []) + [rest] + atom)]

        def entry(form):
            # a harmonic and its coefficient recur across entries (M's cos(θa − θb) with la lb Wab in
            # every M_ij with i ≤ a, j ≤ b): each built once (shapes are kept by P, their ids stable)
            args = []
            for kk, p in form:
                sh = P.shape(p)
                if sh is None:
                    continue
                key = (sh if len(sh) == 2 else id(sh), kk)
                got = parts.get(key)
                if got is None:
                    got = parts[key] = part(sh, kk)
                args.extend(got)
            return add(args) if args else C.sp.S.Zero
        return self._rows(entry)

    def _entry_se(self, form):
        P, angles = self.poly, self.angles
        parts = []
        for kk, p in form:
            c = P.expr(p)
            if type(c) is not C._Z:
                parts.append(c if kk[0] == "1" else c * angles.harmonic_atom(*kk))
        return C.se.Add(*parts) if parts else C.ZERO


_SYMBOL_TYPES = (C.se.Symbol, C._Sym)
