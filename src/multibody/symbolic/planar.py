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

    __slots__ = ("x", "y", "theta", "bodies", "dz", "dof_pri")

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

    pair_memo = {}

    def pair(t, u):
        """(K, W x, W y): Re and Im of W z_t z̄_u at the angle key K = θ_t − θ_u, W the mass of the
        bodies holding both (None when none does)."""
        got = pair_memo.get((id(t), id(u)))
        if got is None:
            common = t.bodies & u.bodies
            if not common:
                got = None
            else:
                W = mass_of(common)
                x = C._lin(t.x, u.x, t.y, u.y, C.ZERO, C.ZERO)
                y = C._det2(t.y, u.x, t.x, u.y)
                got = (key(t.theta) - key(u.theta), W * x if type(x) is not C._Z else x,
                       W * y if type(y) is not C._Z else y)
            pair_memo[(id(t), id(u))] = got
        return got

    def put(acc, kind, k, c):
        if type(c) is C._Z:
            return
        kind, k, phi, c, value = T._normal(kind, k, None, c)
        if kind is not None:
            acc.setdefault((kind, k, phi), []).append(c)

    def inner(acc, fa, sa, t, fb, sb, u, scale=None):
        """acc += sa sb scale ⟨(i if fa) z_t e^{iθ_t}, (i if fb) z_u e^{iθ_u}⟩ in harmonics."""
        p = pair(t, u)
        if p is None:
            return
        K, x, y = p
        s = sa * sb
        if scale is not None:
            x, y = x * scale, y * scale
        if fa == fb:          # Re(p e^{iK}) = x cos K − y sin K
            put(acc, "c", K, x if s > 0 else -x)
            put(acc, "s", K, -y if s > 0 else y)
        elif fa:              # Re(i p e^{iK}) = −Im(p e^{iK}) = −(x sin K + y cos K)
            put(acc, "s", K, -x if s > 0 else x)
            put(acc, "c", K, -y if s > 0 else y)
        else:                 # Re(−i p e^{iK}) = x sin K + y cos K
            put(acc, "s", K, x if s > 0 else -x)
            put(acc, "c", K, y if s > 0 else -y)

    def rebuild(acc):
        form = {kk: (cs[0] if len(cs) == 1 else C.se.Add(*cs)) for kk, cs in acc.items()}
        return T._rebuild_form(form, angles) if form else C.ZERO

    inertias = [bd.inertia_com[normal][normal] for bd in bodies]
    M = [[C.ZERO] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            acc = {}
            for fa, sa, t in cols[i]:
                for fb, sb, u in cols[j]:
                    inner(acc, fa, sa, t, fb, sb, u)
            rot = [inertias[k] * (theta[k].get(i, 0) * theta[k].get(j, 0)) for k in range(nb)
                   if theta[k].get(i) and theta[k].get(j) and type(inertias[k]) is not C._Z]
            if rot:
                acc.setdefault(T._CONST, []).extend(rot)
            M[i][j] = M[j][i] = rebuild(acc)
    # velocity-product accelerations: −θ̇² z (every term), 2 i θ̇ ż (a prismatic offset: ż = u q̇)
    rates = {}

    def rate(th):
        k = key(th)
        got = rates.get(k)
        if got is None:
            got = rates[k] = C.se.Add(*[dq[j] * s for j, s in th.items() if s])
        return got

    accel = []
    for t in terms:
        w = rate(t.theta)
        if type(w) is C._Z:
            continue
        accel.append((False, -(w * w), t))
        if t.dz is not None:
            accel.append((True, 2 * w * dq[t.dof_pri], t.dz))
    b = []
    for i in range(n):
        acc = {}
        for fa, sa, t in cols[i]:
            for fb, scale, u in accel:
                inner(acc, fa, sa, t, fb, 1, u, scale)
        b.append(rebuild(acc))
    gx, gy = gravity[ra], gravity[im]
    g = []
    if type(gx) is C._Z and type(gy) is C._Z:
        return M, [*b], [C.ZERO] * n
    G = _Term(-gx, -gy, {}, frozenset(range(nb)))      # −g: g_i = −Σ m ⟨J, g⟩
    for i in range(n):
        acc = {}
        for fa, sa, t in cols[i]:
            inner(acc, fa, sa, t, False, 1, G)
        g.append(rebuild(acc))
    return M, b, g
