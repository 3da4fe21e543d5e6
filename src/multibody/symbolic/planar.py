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
the composite masses of the CRBA. Each harmonic's coefficient is then expanded and its common
factor taken out by :mod:`.trig` (``_rebuild_form``), the same canonical form the readable pass
gives, so every method's readable entries stay equal symbol for symbol.
"""
from __future__ import annotations

from . import _core as C
from . import trig as T
from .tree import FIX, PRI, REV, SymBody

__all__ = ["planar_normal", "planar_readable"]

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


class _Term:
    """One phasor ``z e^{iθ}`` of a position: z = (x, y) SymEngine, θ as {dof: ±1}, the bodies
    whose position holds it (``subtree``), its rate ż for a prismatic joint's offset."""

    __slots__ = ("x", "y", "theta", "bodies", "dz", "dof_pri", "index", "key")

    def __init__(self, x, y, theta, bodies, dz=None, dof_pri=-1):
        self.x, self.y, self.theta, self.bodies = x, y, theta, bodies
        self.dz, self.dof_pri = dz, dof_pri


#: phasor inner products a planar derivation may take (M, b and g together, counted before any is
#: formed): the pendulum on a cart needs 48 at n = 2, 357 at n = 4, 733 at n = 5, 1346 at n = 6, 3623
#: at n = 8. Past this the expanded harmonics outgrow the recursion's shared terms (n = 6: as long as
#: recursion + readable pass; n = 8: twice as long, and M, b, g read as SymPy grow with them), and the
#: recursion derives the tree
PLANAR_MAX_WORK = 1000


def planar_readable(bodies: list[SymBody], q, dq, gravity, normal, signs, *, max_work: int | None = None):
    """(M rows, b, g) of a planar tree (see the module docstring) as readable SymEngine entries;
    ``q``, ``dq`` SymEngine symbols, ``gravity`` a 3-vector. None when it would take more than
    ``max_work`` phasor inner products (a bound on size, never on the clock)."""
    n = len(q)
    ra, im = _PLANES[normal]
    angles = T._Angles(q)
    weights = [angles.weight[s] for s in q]
    nb = len(bodies)
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
            x, y = C._plus(x, ux * q[bd.dof]), C._plus(y, uy * q[bd.dof])
            u = _Term(ux, uy, th_p, subtree[k])
            axis_terms[bd.dof] = u
            terms.append(_Term(x, y, th_p, subtree[k], dz=u, dof_pri=bd.dof))
        elif type(x) is not C._Z or type(y) is not C._Z:
            terms.append(_Term(x, y, th_p, subtree[k]))
        cx, cy = bd.com[ra], bd.com[im]
        if type(cx) is not C._Z or type(cy) is not C._Z:
            terms.append(_Term(cx, cy, th, frozenset([k])))
    masses = [bd.mass for bd in bodies]
    mass_memo = {}

    def mass_of(ks):
        got = mass_memo.get(ks)
        if got is None:
            got = mass_memo[ks] = C.se.Add(*[masses[k] for k in sorted(ks)])
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
    n_acc = sum(2 if t.dz is not None else 1 for t in terms)
    work = sum(sizes[i] * (sum(sizes[i:]) + n_acc + 1) for i in range(n))
    if work > (PLANAR_MAX_WORK if max_work is None else max_work):
        return None

    for idx, t in enumerate(terms + list(axis_terms.values())):
        t.index, t.key = idx, key(t.theta)
    nt = len(terms) + len(axis_terms)
    pairs = [[False] * nt for _ in range(nt)]

    def pair(t, u):
        """The inner products of the pair (t, u) in harmonics: (K, X, Y) with K = |θ_t − θ_u| as a key,
        X and sgn(θ_t − θ_u)·Y the cosine's and sine's parts of W z_t z̄_u e^{i(θ_t − θ_u)} ... see
        ``contributions``; None when no body holds both."""
        got = pairs[t.index][u.index]
        if got is False:
            common = t.bodies & u.bodies
            if not common:
                got = None
            else:
                W = mass_of(common)
                x = C._lin(t.x, u.x, t.y, u.y, C.ZERO, C.ZERO)
                y = C._det2(t.y, u.x, t.x, u.y)
                X = W * x if type(x) is not C._Z else x
                Y = W * y if type(y) is not C._Z else y
                K = t.key - u.key
                sgn = (K > 0) - (K < 0)
                # Re(p e^{iK}) = X cos K − Y sin K and Im(p e^{iK}) = X sin K + Y cos K, with K ≥ 0 as the
                # key (cos(−K) = cos K, sin(−K) = −sin K) and sin 0 = 0: (cosine key, sine key or None,
                # the cosine's and the sine's coefficient as (value, sign)) for Re and for Im
                kc = ("c", abs(K), None) if K else T._CONST
                ks = ("s", abs(K), None) if K else None
                got = (kc, ks, (X, 1), (Y, -sgn), (Y, 1), (X, sgn))
            pairs[t.index][u.index] = got
        return got

    def add_to(acc, fa, sa, t, fb, sb, u):
        """acc += sa sb ⟨(i if fa) z_t e^{iθ_t}, (i if fb) z_u e^{iθ_u}⟩: acc maps a harmonic to its
        (plus, minus) lists of coefficients (no SymEngine negation per term)."""
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
        if type(v) is not C._Z:
            slot = acc.get(kc)
            if slot is None:
                slot = acc[kc] = ([], [])
            slot[0 if s * sg > 0 else 1].append(v)
        v, sg = s_part
        if ks is not None and sg and type(v) is not C._Z:
            slot = acc.get(ks)
            if slot is None:
                slot = acc[ks] = ([], [])
            slot[0 if s * sg > 0 else 1].append(v)

    def total(slot):
        plus, minus = slot
        a = plus[0] if len(plus) == 1 else C.se.Add(*plus) if plus else C.ZERO
        if not minus:
            return a
        return a - (minus[0] if len(minus) == 1 else C.se.Add(*minus))

    def rebuild(acc, extra=None):
        form = {kk: total(sl) for kk, sl in acc.items()}
        if extra:
            form[T._CONST] = C._plus(form.get(T._CONST, C.ZERO), C.se.Add(*extra))
        form = {kk: v for kk, v in form.items() if type(v) is not C._Z}
        return T._rebuild_form(form, angles) if form else C.ZERO

    inertias = [bd.inertia_com[normal][normal] for bd in bodies]
    M = [[C.ZERO] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            acc = {}
            for fa, sa, t in cols[i]:
                for fb, sb, u in cols[j]:
                    add_to(acc, fa, sa, t, fb, sb, u)
            rot = [inertias[k] * (theta[k].get(i, 0) * theta[k].get(j, 0)) for k in range(nb)
                   if theta[k].get(i) and theta[k].get(j) and type(inertias[k]) is not C._Z]
            M[i][j] = M[j][i] = rebuild(acc, rot)
    # velocity-product accelerations: −θ̇² z (every term), 2 i θ̇ ż (a prismatic offset: ż = u q̇);
    # the products with one rate factor are summed before it multiplies them (one product per
    # harmonic and rate, not per pair)
    rates = {}
    accel = []
    for t in terms:
        w = rates.get(t.key)
        if w is None:
            w = rates[t.key] = C.se.Add(*[dq[j] * s for j, s in t.theta.items() if s])
        if type(w) is C._Z:
            continue
        accel.append((False, ("w2", t.key), t))
        if t.dz is not None:
            accel.append((True, ("wd", t.key, t.dof_pri), t.dz))
    factors = {}
    for _, name, _ in accel:
        if name not in factors:
            w = rates[name[1]]
            factors[name] = -(w * w) if name[0] == "w2" else 2 * w * dq[name[2]]
    b = []
    for i in range(n):
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
            for kk, sl in part.items():
                v = total(sl)
                if type(v) is not C._Z:
                    slot = acc.get(kk)
                    if slot is None:
                        slot = acc[kk] = ([], [])
                    slot[0].append(f * v)
        b.append(rebuild(acc))
    gx, gy = gravity[ra], gravity[im]
    if type(gx) is C._Z and type(gy) is C._Z:
        return M, b, [C.ZERO] * n
    G = _Term(-gx, -gy, {}, frozenset(range(nb)))      # −g: g_i = −Σ m ⟨J, g⟩
    G.index, G.key = nt, 0
    for row in pairs:
        row.append(False)
    pairs.append([False] * (nt + 1))
    g = []
    for i in range(n):
        acc = {}
        for fa, sa, t in cols[i]:
            add_to(acc, fa, sa, t, False, 1, G)
        g.append(rebuild(acc))
    return M, b, g
