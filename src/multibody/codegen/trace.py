"""``compile_algorithm``: RNEA, CRBA or ABA of one fixed model, traced into straight-line C.

For robots too big for closed-form symbolic equations (Talos, ANYmal), the numeric algorithm is
run once with SymEngine symbols for q, q̇, q̈/τ and the model's numbers as constants: products
with structural zeros vanish while tracing (exact zeros stay exact: model entries that are 0 or
±1 are kept as integers), the recorded expression graph goes through common-subexpression
elimination and is emitted as C by the same code path as :func:`multibody.codegen.compile`.

The traced algorithms are the book's (RBDA tables 5.1, 6.2 and 7.1; spatial_v2 ``ID``, ``HandC``,
``FDab``) in the pose form of the numeric core: a body's pose (R, p) in its parent, R rotating
body into parent coordinates; spatial vectors [angular; linear] in body coordinates.
"""
from __future__ import annotations

import numpy as np
import symengine as se

from ..model.joints import spec as joint_spec
from .spec import CodeSpec

__all__ = ["compile_algorithm", "trace_algorithm", "ALGORITHMS"]


ALGORITHMS = ("rnea", "crba", "aba")


def _c(x):
    """A model number as a constant: exact 0, ±1 as integers (so they fold away), else a double."""
    x = float(x)
    if x == 0.0:
        return 0
    if x == 1.0:
        return 1
    if x == -1.0:
        return -1
    return se.RealDouble(x)


# ---- the tape: every intermediate quantity of the algorithm becomes one named definition ------
class Tape:
    """Records ``w_k = expression`` definitions while tracing (identical ones only once).

    Binding the algorithm's intermediate vectors to symbols keeps each expression as small as one
    step of the book's recursion, so CSE and the compiler see straight-line code, not one huge
    expression tree. Numbers and symbols are not bound: structural zeros stay exact zeros.
    """

    def __init__(self):
        self.defs = []
        self.memo = {}

    def bind(self, x):
        if isinstance(x, list):
            return [self.bind(e) for e in x]
        if isinstance(x, (int, float)) or isinstance(x, (se.Number, se.Symbol)):
            return x
        got = self.memo.get(x)
        if got is None:
            got = se.Symbol(f"w_{len(self.defs)}")
            self.defs.append((got, x))
            self.memo[x] = got
        return got


_TAPE = [None]


def B(x):
    """Bind ``x`` (a scalar or nested lists) on the current tape."""
    return _TAPE[0].bind(x) if _TAPE[0] is not None else x


# ---- 3-vectors and 3×3 matrices (lists) ----------------------------------------------------
def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def mv(R, x):
    return [R[r][0] * x[0] + R[r][1] * x[1] + R[r][2] * x[2] for r in range(3)]


def mtv(R, x):  # Rᵀ x
    return [R[0][r] * x[0] + R[1][r] * x[1] + R[2][r] * x[2] for r in range(3)]


def mm(A, B):
    return [[A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c] for c in range(3)] for r in range(3)]


def add(a, b):
    return [x + y for x, y in zip(a, b)]


# ---- spatial operations on 6-vectors [ω; v] / [n; f] in pose form --------------------------
def motion_to_child(R, p, m):
    """X m with X = plux(Rᵀ, p): ω' = Rᵀω, v' = Rᵀ(v + ω × p)."""
    w, v = m[:3], m[3:]
    return mtv(R, w) + mtv(R, add(v, cross(w, p)))


def force_to_parent(R, p, f):
    """Xᵀ f: n = R n' + p × R f', f = R f'."""
    fp = mv(R, f[3:])
    return add(mv(R, f[:3]), cross(p, fp)) + fp


def crm(v, m):
    """v ×m m (spatial_v2 crm)."""
    w, u = v[:3], v[3:]
    return cross(w, m[:3]) + add(cross(w, m[3:]), cross(u, m[:3]))


def crf(v, f):
    """v ×* f (spatial_v2 crf)."""
    w, u = v[:3], v[3:]
    return add(cross(w, f[:3]), cross(u, f[3:])) + cross(w, f[3:])


def mat6_vec(A, x):
    return [sum((A[r][k] * x[k] for k in range(6)), se.Integer(0)) for r in range(6)]


def inertia_matrix(model, i):
    """mcI: the body's 6×6 spatial inertia about its origin (constants)."""
    return [[_c(x) for x in row] for row in np.asarray(model.I[i], dtype=float)]


def plux(R, p):
    """6×6 X = plux(Rᵀ, p) (parent → body) as lists."""
    E = [[R[c][r] for c in range(3)] for r in range(3)]       # Rᵀ
    px = [[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]]
    Epx = mm(E, px)
    X = [[0] * 6 for _ in range(6)]
    for r in range(3):
        for c in range(3):
            X[r][c] = E[r][c]
            X[r + 3][c + 3] = E[r][c]
            X[r + 3][c] = -Epx[r][c]
    return X


def congruence(X, A):
    """Xᵀ A X for 6×6 lists, A symmetric: the upper triangle computed, the lower its mirror (the two
    triangles' expressions differ in form, so CSE would not find them equal: half the products)."""
    AX = [[sum((A[r][k] * X[k][c] for k in range(6)), se.Integer(0)) for c in range(6)] for r in range(6)]
    out = [[0] * 6 for _ in range(6)]
    for r in range(6):
        for c in range(r, 6):
            out[r][c] = out[c][r] = sum((X[k][r] * AX[k][c] for k in range(6)), se.Integer(0))
    return out


# ---- joints ----------------------------------------------------------------------------------
def joint_pose(model, i, q):
    """jcalc: (R, p) of body i in its parent at q, and the motion subspace rows S (nv_j × 6)."""
    a = [_c(x) for x in model.jaxis[i]]
    qs = int(model.q_start[i])
    one = se.Integer(1)
    RJ = [[one, 0, 0], [0, one, 0], [0, 0, one]]
    pJ = [0, 0, 0]
    for op, k in joint_spec(model.jtype[i]).pose:  # the joint table's steps, as joints.joint_pose
        x, Rs, ps = q[qs + k], None, None
        if op in ("rot", "rotz"):
            c, s = se.cos(x), se.sin(x)
            t = 1 - c
            a0, a1, a2 = a if op == "rot" else (0, 0, one)
            Rs = [[c + a0 * a0 * t, a0 * a1 * t - a2 * s, a0 * a2 * t + a1 * s],
                  [a1 * a0 * t + a2 * s, c + a1 * a1 * t, a1 * a2 * t - a0 * s],
                  [a2 * a0 * t - a1 * s, a2 * a1 * t + a0 * s, c + a2 * a2 * t]]
        elif op == "quat":
            w, x, y, z = q[qs + k:qs + k + 4]
            n = se.sqrt(w * w + x * x + y * y + z * z)
            w, x, y, z = w / n, x / n, y / n, z / n
            Rs = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
        elif op in ("slide", "screw"):
            d = x if op == "slide" else _c(model.jpitch[i]) * x
            ps = [a[0] * d, a[1] * d, a[2] * d]
        elif op == "xyz":
            ps = list(q[qs + k:qs + k + 3])
        elif op == "xy":
            ps = [x, q[qs + k + 1], 0]
        if ps is not None:
            pJ = add(pJ, mv(RJ, ps))
        if Rs is not None:
            RJ = mm(RJ, Rs)
    T = [[_c(x) for x in row] for row in model.tree_rotation[i]]
    R = B(mm(T, B(RJ)))
    p = B(add([_c(x) for x in model.tree_translation[i]], mv(T, pJ)))
    S = [[_c(x) for x in row] for row in model.S[model.v_start[i]:model.v_start[i] + model.nv_joint[i]]]
    return R, p, S


def _sdot(s, f):
    return sum((s[r] * f[r] for r in range(6)), se.Integer(0))


def _solve_small(D, B):
    """D⁻¹ B for a small symmetric positive-definite D (k×k lists) by LDLᵀ, columns of B as lists."""
    k = len(D)
    if k == 1:
        inv = 1 / D[0][0]
        return [[inv * b for b in B[0]]]
    L = [[0] * k for _ in range(k)]
    d = [0] * k
    for j in range(k):
        d[j] = D[j][j] - sum((L[j][m] * L[j][m] * d[m] for m in range(j)), se.Integer(0))
        for r in range(j + 1, k):
            L[r][j] = (D[r][j] - sum((L[r][m] * L[j][m] * d[m] for m in range(j)), se.Integer(0))) / d[j]
    ncol = len(B[0])
    X = [[0] * ncol for _ in range(k)]
    for c in range(ncol):
        y = [0] * k
        for r in range(k):
            y[r] = B[r][c] - sum((L[r][m] * y[m] for m in range(r)), se.Integer(0))
        for r in range(k - 1, -1, -1):
            X[r][c] = y[r] / d[r] - sum((L[m][r] * X[m][c] for m in range(r + 1, k)), se.Integer(0))
    return X


# ---- the algorithms --------------------------------------------------------------------------
def trace_rnea(model, q, qd, qdd):
    """τ = ID(q, q̇, q̈), RBDA table 5.1."""
    nb, nv = model.nb, model.nv
    a_grav = [0, 0, 0] + [_c(-x) for x in model.gravity]     # the base accelerates upwards: −a_g
    v, a, f, poses = [None] * nb, [None] * nb, [None] * nb, [None] * nb
    for i in range(nb):
        R, p, S = joint_pose(model, i, q)
        poses[i] = (R, p, S)
        vs = int(model.v_start[i])
        vJ = [sum((S[k][r] * qd[vs + k] for k in range(len(S))), se.Integer(0)) for r in range(6)]
        aJ = [sum((S[k][r] * qdd[vs + k] for k in range(len(S))), se.Integer(0)) for r in range(6)]
        par = int(model.parent[i])
        if par < 0:
            v[i] = vJ
            a[i] = B(add(motion_to_child(R, p, a_grav), aJ))
        else:
            v[i] = B(add(motion_to_child(R, p, v[par]), vJ))
            a[i] = B(add(add(motion_to_child(R, p, a[par]), aJ), crm(v[i], vJ)))
        I = inertia_matrix(model, i)
        f[i] = B(add(mat6_vec(I, a[i]), crf(v[i], B(mat6_vec(I, v[i])))))
    tau = [se.Integer(0)] * nv
    for i in range(nb - 1, -1, -1):
        R, p, S = poses[i]
        vs = int(model.v_start[i])
        for k in range(len(S)):  # the rotor's torque armature·q̈ acts on the joint alone
            tau[vs + k] = _sdot(S[k], f[i]) + _c(model.armature[vs + k]) * qdd[vs + k]
        par = int(model.parent[i])
        if par >= 0:
            f[par] = B(add(f[par], force_to_parent(R, p, f[i])))
    return tau


def trace_crba(model, q):
    """H(q) by the composite-rigid-body algorithm, RBDA table 6.2 (upper triangle mirrored)."""
    nb, nv = model.nb, model.nv
    poses = [joint_pose(model, i, q) for i in range(nb)]
    Ic = [inertia_matrix(model, i) for i in range(nb)]
    for i in range(nb - 1, -1, -1):
        par = int(model.parent[i])
        if par >= 0:
            X = B(plux(poses[i][0], poses[i][1]))
            Ic[par] = B([[x + y for x, y in zip(r1, r2)] for r1, r2 in zip(Ic[par], congruence(X, Ic[i]))])
    H = [[se.Integer(0)] * nv for _ in range(nv)]
    for i in range(nb):
        R, p, S = poses[i]
        vs = int(model.v_start[i])
        for k in range(len(S)):
            F = B(mat6_vec(Ic[i], S[k]))
            for kk in range(len(S)):
                H[vs + k][vs + kk] = _sdot(S[kk], F)
            H[vs + k][vs + k] += _c(model.armature[vs + k])
            j = i
            while int(model.parent[j]) >= 0:
                Rj, pj, _ = poses[j]
                F = B(force_to_parent(Rj, pj, F))
                j = int(model.parent[j])
                _, _, Sj = poses[j]
                vj = int(model.v_start[j])
                for kk in range(len(Sj)):
                    H[vs + k][vj + kk] = _sdot(Sj[kk], F)
                    H[vj + kk][vs + k] = H[vs + k][vj + kk]
    return H


def trace_aba(model, q, qd, tau):
    """q̈ = FD(q, q̇, τ) by the articulated-body algorithm, RBDA table 7.1 (three passes)."""
    nb, nv = model.nb, model.nv
    a_grav = [0, 0, 0] + [_c(-x) for x in model.gravity]
    poses, v, c, IA, pA = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb
    for i in range(nb):                                        # pass 1: velocities, bias terms
        R, p, S = joint_pose(model, i, q)
        poses[i] = (R, p, S)
        vs = int(model.v_start[i])
        vJ = [sum((S[k][r] * qd[vs + k] for k in range(len(S))), se.Integer(0)) for r in range(6)]
        par = int(model.parent[i])
        if par < 0:
            v[i] = vJ
            c[i] = [se.Integer(0)] * 6
        else:
            v[i] = B(add(motion_to_child(R, p, v[par]), vJ))
            c[i] = B(crm(v[i], vJ))
        IA[i] = inertia_matrix(model, i)
        pA[i] = B(crf(v[i], B(mat6_vec(IA[i], v[i]))))
    U, Dblk, Dsolve_u, Dsolve_Ut = [None] * nb, [None] * nb, [None] * nb, [None] * nb
    for i in range(nb - 1, -1, -1):                            # pass 2: articulated inertias
        R, p, S = poses[i]
        k = len(S)
        vs = int(model.v_start[i])
        par = int(model.parent[i])
        Ui = B([mat6_vec(IA[i], S[j]) for j in range(k)])     # rows: U = IA S
        D = B([[_sdot(S[r], Ui[cc]) + (_c(model.armature[vs + r]) if r == cc else 0) for cc in range(k)]
               for r in range(k)])                             # D = Sᵀ U + armature
        Dblk[i] = D
        u = B([tau[vs + j] - _sdot(S[j], pA[i]) for j in range(k)])
        U[i] = Ui
        if k:
            Dsolve_u[i] = B([row[0] for row in _solve_small(D, [[x] for x in u])])
        if par >= 0:
            if k:
                Dsolve_Ut[i] = B(_solve_small(D, Ui))            # D⁻¹ Uᵀ (k × 6)
                Ia = [[0] * 6 for _ in range(6)]           # IA − U D⁻¹ Uᵀ: symmetric, upper triangle mirrored
                for r in range(6):
                    for cc in range(r, 6):
                        Ia[r][cc] = Ia[cc][r] = IA[i][r][cc] - sum((Ui[j][r] * Dsolve_Ut[i][j][cc] for j in range(k)),
                                                                   se.Integer(0))
                Ia = B(Ia)
                pa = B(add(add(pA[i], mat6_vec(Ia, c[i])),
                           [sum((Ui[j][r] * Dsolve_u[i][j] for j in range(k)), se.Integer(0)) for r in range(6)]))
            else:
                Ia = IA[i]
                pa = B(add(pA[i], mat6_vec(Ia, c[i])))
            X = B(plux(R, p))
            IA[par] = B([[x + y for x, y in zip(r1, r2)] for r1, r2 in zip(IA[par], congruence(X, Ia))])
            pA[par] = B(add(pA[par], force_to_parent(R, p, pa)))
    qdd = [se.Integer(0)] * nv
    a = [None] * nb
    for i in range(nb):                                        # pass 3: accelerations
        R, p, S = poses[i]
        k = len(S)
        vs = int(model.v_start[i])
        par = int(model.parent[i])
        ap = motion_to_child(R, p, a_grav if par < 0 else a[par])
        ai = B(add(ap, c[i]))
        if k:
            if Dsolve_Ut[i] is None:
                Dsolve_Ut[i] = _solve_small(Dblk[i], U[i])
            for j in range(k):
                qdd[vs + j] = B(Dsolve_u[i][j] - sum((Dsolve_Ut[i][j][r] * ai[r] for r in range(6)), se.Integer(0)))
            ai = B(add(ai, [sum((S[j][r] * qdd[vs + j] for j in range(k)), se.Integer(0)) for r in range(6)]))
        a[i] = ai
    return qdd


def trace_algorithm(model, algorithm: str, *, name: str | None = None) -> CodeSpec:
    """The :class:`CodeSpec` of ``algorithm`` ("rnea", "crba", "aba") traced over ``model``.

    Inputs and outputs: rnea (q, qd, qdd) → tau; crba (q) → M; aba (q, qd, tau) → qdd.
    """
    if not (hasattr(model, "jtype") and hasattr(model, "parent")):
        raise TypeError(f"model: expected a multibody Model, got {type(model).__name__}")
    if getattr(model, "is_symbolic", False):
        raise ValueError("model: compile_algorithm needs a numeric model (substitute parameter values with "
                         "model.subs({...}) first)")
    alg = str(algorithm).lower()
    if alg not in ALGORITHMS:
        raise ValueError(f"algorithm: expected one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    q = [se.Symbol(f"q_{k}") for k in range(model.nq)]
    qd = [se.Symbol(f"qd_{k}") for k in range(model.nv)]
    x = [se.Symbol(f"x_{k}") for k in range(model.nv)]
    nv = model.nv
    tape = Tape()
    _TAPE[0] = tape
    try:
        out, ins = _trace(model, alg, q, qd, x, nv)
    finally:
        _TAPE[0] = None
    out = [(nm, shp, [se.sympify(e) for e in ex]) for nm, shp, ex in out]
    spec = CodeSpec(name or alg, ins, out, {}, {"model": getattr(model, "name", "model"), "algorithm": alg})
    spec.tape = tape.defs
    return spec.validate()


def _trace(model, alg, q, qd, x, nv):
    if alg == "rnea":
        out = [("tau", (nv, 1), trace_rnea(model, q, qd, x))]
        ins = [("q", q), ("qd", qd), ("qdd", x)]
    elif alg == "crba":
        H = trace_crba(model, q)
        out = [("M", (nv, nv), [e for row in H for e in row])]
        ins = [("q", q)]
    else:
        out = [("qdd", (nv, 1), trace_aba(model, q, qd, x))]
        ins = [("q", q), ("qd", qd), ("tau", x)]
    return out, ins


def compile_algorithm(model, algorithm: str, *, cache_dir=None, progress=None):
    """Straight-line compiled code of RNEA, CRBA or ABA for one fixed numeric model.

    The algorithm (RBDA tables 5.1, 6.2, 7.1) runs once over symbols with the model's numbers in
    place; the trace, after CSE, is compiled by :func:`multibody.codegen.compile` (cached).
    Free and spherical joints take scalar-first quaternions [w, x, y, z], as the numeric core does.

    Parameters
    ----------
    model : Model
        A numeric model (a ``symbolic=True`` one is refused).
    algorithm : {"rnea", "crba", "aba"}
        Which algorithm (case-insensitive).
    cache_dir : str or os.PathLike, optional
        Cache folder, as :func:`compile`'s.
    progress : callable, optional
        Called with a one-line message at each stage.

    Returns
    -------
    CompiledFunction
        ``rnea(q, qd, qdd)`` → {"tau": (..., nv)}, ``crba(q)`` → {"M": (..., nv, nv)},
        ``aba(q, qd, tau)`` → {"qdd": (..., nv)}; ``q`` (..., nq), the others (..., nv), in
        the units of ``mb.rnea``/``mb.crba``/``mb.aba``; inputs may carry a batch dimension.

    Raises
    ------
    TypeError
        ``model`` is not a multibody Model.
    ValueError
        ``algorithm`` is not one of rnea, crba, aba; ``model`` is symbolic.
    CompilerNotFoundError
        There is no C compiler.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> from multibody import codegen
    >>> model = mb.models.auto_tree(4, bf=2)
    >>> aba = codegen.compile_algorithm(model, "aba")
    >>> q, qd, tau = np.full(4, 0.3), np.full(4, -0.2), np.ones(4)
    >>> bool(np.allclose(aba(q, qd, tau)["qdd"], mb.aba(model, q, qd, tau), rtol=1e-12, atol=1e-12))
    True
    """
    from .compiled import compile as _compile

    say = progress or (lambda msg: None)
    say(f"tracing {algorithm} over {getattr(model, 'name', 'model')}")
    spec = trace_algorithm(model, algorithm)
    return _compile(spec, cache_dir=cache_dir, progress=progress)
