"""Compiled spatial primitives over flat arrays (no Python objects).

A transform between a parent frame P and a child frame C is kept as a pose (R, p): R rotates
C-coordinates into P-coordinates and p is C's origin in P-coordinates.  The spatial_v2 motion
transform P→C is then X = plux(Rᵀ, p); the functions below apply X, X⁻¹ and Xᵀ without forming
6×6 matrices.  Spatial vectors are [angular; linear].
"""
from __future__ import annotations

import numpy as np
from numba import njit

# Columns of the packed integer table (one row per body).
PARENT, JTYPE, QS, NQJ, VS, NVJ = 0, 1, 2, 3, 4, 5
N_INT = 6
# Columns of the packed float table (one row per body).
F_TREE_R = 0    # 9: R_PJ row-major (joint frame in parent)
F_TREE_P = 9    # 3: p_PJ
F_AXIS = 12     # 3: joint axis
F_PITCH = 15    # 1: helical pitch
F_INERTIA = 16  # 36: spatial inertia about the body origin, body coordinates, row-major
N_FLOAT = 52

FIXED, REVOLUTE, PRISMATIC, HELICAL, SPHERICAL, FREE, PLANAR = 0, 1, 2, 3, 4, 5, 6

# Status codes returned by kernels instead of raising inside compiled code.
OK, BAD_Q, BAD_QD, BAD_QDD, BAD_TAU, BAD_FEXT, ZERO_QUAT, SINGULAR = 0, 1, 2, 3, 4, 5, 6, 7


@njit(cache=True)
def all_finite(x):
    for k in range(x.size):
        if not np.isfinite(x.flat[k]):
            return False
    return True


@njit(cache=True)
def quat_to_rot(w, x, y, z, R):
    """Rotation matrix of a (normalised here) quaternion [w, x, y, z]; R rotates body into parent."""
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w /= n
    x /= n
    y /= n
    z /= n
    R[0, 0] = 1 - 2 * (y * y + z * z)
    R[0, 1] = 2 * (x * y - w * z)
    R[0, 2] = 2 * (x * z + w * y)
    R[1, 0] = 2 * (x * y + w * z)
    R[1, 1] = 1 - 2 * (x * x + z * z)
    R[1, 2] = 2 * (y * z - w * x)
    R[2, 0] = 2 * (x * z - w * y)
    R[2, 1] = 2 * (y * z + w * x)
    R[2, 2] = 1 - 2 * (x * x + y * y)


@njit(cache=True)
def axis_angle_to_rot(a0, a1, a2, th, R):
    """Rodrigues: rotation by th about the unit axis a (rotates body into joint frame)."""
    c = np.cos(th)
    s = np.sin(th)
    t = 1.0 - c
    R[0, 0] = c + a0 * a0 * t
    R[0, 1] = a0 * a1 * t - a2 * s
    R[0, 2] = a0 * a2 * t + a1 * s
    R[1, 0] = a1 * a0 * t + a2 * s
    R[1, 1] = c + a1 * a1 * t
    R[1, 2] = a1 * a2 * t - a0 * s
    R[2, 0] = a2 * a0 * t - a1 * s
    R[2, 1] = a2 * a1 * t + a0 * s
    R[2, 2] = c + a2 * a2 * t


@njit(cache=True)
def joint_pose(jtype, tf, i, q, qs):
    """jcalc: pose of body i in its joint frame at q, as 12 scalars (R_JB row-major, then p_JB).

    Scalars rather than arrays so the hot loops allocate nothing."""
    a0 = tf[i, F_AXIS]
    a1 = tf[i, F_AXIS + 1]
    a2 = tf[i, F_AXIS + 2]
    if jtype == REVOLUTE or jtype == HELICAL:
        th = q[qs]
        c = np.cos(th)
        s = np.sin(th)
        t = 1.0 - c
        d = tf[i, F_PITCH] * th if jtype == HELICAL else 0.0
        return (c + a0 * a0 * t, a0 * a1 * t - a2 * s, a0 * a2 * t + a1 * s,
                a1 * a0 * t + a2 * s, c + a1 * a1 * t, a1 * a2 * t - a0 * s,
                a2 * a0 * t - a1 * s, a2 * a1 * t + a0 * s, c + a2 * a2 * t, a0 * d, a1 * d, a2 * d)
    if jtype == PRISMATIC:
        x = q[qs]
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, a0 * x, a1 * x, a2 * x)
    if jtype == SPHERICAL or jtype == FREE:
        o = qs + 3 if jtype == FREE else qs
        w = q[o]
        x = q[o + 1]
        y = q[o + 2]
        z = q[o + 3]
        n = np.sqrt(w * w + x * x + y * y + z * z)
        w /= n
        x /= n
        y /= n
        z /= n
        px = q[qs] if jtype == FREE else 0.0
        py = q[qs + 1] if jtype == FREE else 0.0
        pz = q[qs + 2] if jtype == FREE else 0.0
        return (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), px, py, pz)
    if jtype == PLANAR:
        c = np.cos(q[qs + 2])
        s = np.sin(q[qs + 2])
        return (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0, q[qs], q[qs + 1], 0.0)
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


@njit(cache=True)
def check_configuration(ti, q):
    """Status of q: non-finite entries or zero quaternions cannot be evaluated."""
    if not all_finite(q):
        return BAD_Q
    for i in range(ti.shape[0]):
        jt = ti[i, JTYPE]
        if jt == SPHERICAL or jt == FREE:
            s = ti[i, QS] + (3 if jt == FREE else 0)
            n = q[s] ** 2 + q[s + 1] ** 2 + q[s + 2] ** 2 + q[s + 3] ** 2
            if n < 1e-24:
                return ZERO_QUAT
    return OK


@njit(cache=True)
def tree_poses(ti, tf, q, R, p):
    """Xup for every body as poses: (R[i], p[i]) of body i in its parent's frame."""
    for i in range(ti.shape[0]):
        j = joint_pose(ti[i, JTYPE], tf, i, q, ti[i, QS])
        for r in range(3):
            t0 = tf[i, F_TREE_R + 3 * r]
            t1 = tf[i, F_TREE_R + 3 * r + 1]
            t2 = tf[i, F_TREE_R + 3 * r + 2]
            R[i, r, 0] = t0 * j[0] + t1 * j[3] + t2 * j[6]
            R[i, r, 1] = t0 * j[1] + t1 * j[4] + t2 * j[7]
            R[i, r, 2] = t0 * j[2] + t1 * j[5] + t2 * j[8]
            p[i, r] = tf[i, F_TREE_P + r] + t0 * j[9] + t1 * j[10] + t2 * j[11]


@njit(cache=True)
def world_poses(ti, R, p, R0, p0):
    """Compose parent-relative poses into base-frame poses (bodies are numbered parents-first)."""
    for i in range(ti.shape[0]):
        par = ti[i, PARENT]
        if par < 0:
            R0[i] = R[i]
            p0[i] = p[i]
        else:
            for r in range(3):
                acc = p0[par, r]
                for c in range(3):
                    acc += R0[par, r, c] * p[i, c]
                    s = 0.0
                    for k in range(3):
                        s += R0[par, r, k] * R[i, k, c]
                    R0[i, r, c] = s
                p0[i, r] = acc


@njit(cache=True)
def motion_to_child(R, p, m, out):
    """out = X m with X = plux(Rᵀ, p): ω' = Rᵀω, v' = Rᵀ(v + ω × p)."""
    w0, w1, w2 = m[0], m[1], m[2]
    l0 = m[3] + w1 * p[2] - w2 * p[1]
    l1 = m[4] + w2 * p[0] - w0 * p[2]
    l2 = m[5] + w0 * p[1] - w1 * p[0]
    for r in range(3):
        out[r] = R[0, r] * w0 + R[1, r] * w1 + R[2, r] * w2
        out[3 + r] = R[0, r] * l0 + R[1, r] * l1 + R[2, r] * l2


@njit(cache=True)
def motion_to_parent(R, p, m, out):
    """out = X⁻¹ m: ω = Rω', v = Rv' + p × ω."""
    for r in range(3):
        out[r] = R[r, 0] * m[0] + R[r, 1] * m[1] + R[r, 2] * m[2]
        out[3 + r] = R[r, 0] * m[3] + R[r, 1] * m[4] + R[r, 2] * m[5]
    out[3] += p[1] * out[2] - p[2] * out[1]
    out[4] += p[2] * out[0] - p[0] * out[2]
    out[5] += p[0] * out[1] - p[1] * out[0]


@njit(cache=True)
def force_to_parent_add(R, p, f, out):
    """out += Xᵀ f (a force in child coordinates expressed in the parent): f = Rf', n = Rn' + p × f."""
    g0 = R[0, 0] * f[3] + R[0, 1] * f[4] + R[0, 2] * f[5]
    g1 = R[1, 0] * f[3] + R[1, 1] * f[4] + R[1, 2] * f[5]
    g2 = R[2, 0] * f[3] + R[2, 1] * f[4] + R[2, 2] * f[5]
    for r in range(3):
        out[r] += R[r, 0] * f[0] + R[r, 1] * f[1] + R[r, 2] * f[2]
    out[0] += p[1] * g2 - p[2] * g1
    out[1] += p[2] * g0 - p[0] * g2
    out[2] += p[0] * g1 - p[1] * g0
    out[3] += g0
    out[4] += g1
    out[5] += g2


@njit(cache=True)
def force_to_child(R, p, f, out):
    """out = X* f for a force in parent coordinates: f' = Rᵀf, n' = Rᵀ(n − p × f)."""
    n0 = f[0] - (p[1] * f[5] - p[2] * f[4])
    n1 = f[1] - (p[2] * f[3] - p[0] * f[5])
    n2 = f[2] - (p[0] * f[4] - p[1] * f[3])
    for r in range(3):
        out[r] = R[0, r] * n0 + R[1, r] * n1 + R[2, r] * n2
        out[3 + r] = R[0, r] * f[3] + R[1, r] * f[4] + R[2, r] * f[5]


@njit(cache=True)
def cross_motion(v, m, out):
    """out = v ×m m  (spatial_v2 crm(v) @ m)."""
    out[0] = v[1] * m[2] - v[2] * m[1]
    out[1] = v[2] * m[0] - v[0] * m[2]
    out[2] = v[0] * m[1] - v[1] * m[0]
    out[3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    out[4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    out[5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit(cache=True)
def cross_force(v, f, out):
    """out = v ×* f  (spatial_v2 crf(v) @ f)."""
    out[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] = v[1] * f[5] - v[2] * f[4]
    out[4] = v[2] * f[3] - v[0] * f[5]
    out[5] = v[0] * f[4] - v[1] * f[3]


@njit(cache=True)
def inertia_times(tf_row, v, out):
    """out = I v for one body's float-table row (view form of ``inertia_mul``)."""
    inertia_mul(tf_row.reshape((1, tf_row.shape[0])), 0, v.reshape((1, 6)), 0, out.reshape((1, 6)), 0)


@njit(cache=True)
def plux_matrix(R, p, X):
    """6×6 X = plux(Rᵀ, p) for the few places (CRBA, ABA) that transform inertias."""
    for r in range(3):
        for c in range(3):
            e = R[c, r]
            X[r, c] = e
            X[3 + r, 3 + c] = e
            X[r, 3 + c] = 0.0
    # lower-left block: -E skew(p)
    for r in range(3):
        e0, e1, e2 = R[0, r], R[1, r], R[2, r]
        X[3 + r, 0] = -(e1 * p[2] - e2 * p[1])
        X[3 + r, 1] = -(e2 * p[0] - e0 * p[2])
        X[3 + r, 2] = -(e0 * p[1] - e1 * p[0])


@njit(cache=True)
def congruence_add(X, A, out):
    """out += Xᵀ A X (inertia of a child expressed in its parent)."""
    congruence_add_ws(X, A, out, np.empty((6, 6)))


@njit(cache=True)
def congruence_add_ws(X, A, out, tmp):
    """congruence_add with caller-owned 6×6 scratch."""
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += A[r, k] * X[k, c]
            tmp[r, c] = s
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += X[k, r] * tmp[k, c]
            out[r, c] += s


# Batches at least this large run on all threads (Numba prange over chunks of states); smaller
# ones, and single states, stay on the calling thread, where thread start-up would dominate.
PARALLEL_MIN_BATCH = 256


# ---- Row-indexed forms: spatial vectors are rows of (n, 6) arrays, transforms rows of R/p. ------
# Passing (array, row) instead of a view keeps Numba from creating and reference-counting a view
# object per call, which costs more than the arithmetic in these small loops.

@njit(cache=True)
def xm(R, p, i, m, j, out, k):
    """out[k] = Xup_i m[j]  (motion from parent to child i coordinates)."""
    w0, w1, w2 = m[j, 0], m[j, 1], m[j, 2]
    l0 = m[j, 3] + w1 * p[i, 2] - w2 * p[i, 1]
    l1 = m[j, 4] + w2 * p[i, 0] - w0 * p[i, 2]
    l2 = m[j, 5] + w0 * p[i, 1] - w1 * p[i, 0]
    for r in range(3):
        out[k, r] = R[i, 0, r] * w0 + R[i, 1, r] * w1 + R[i, 2, r] * w2
        out[k, 3 + r] = R[i, 0, r] * l0 + R[i, 1, r] * l1 + R[i, 2, r] * l2


@njit(cache=True)
def xtf_add(R, p, i, f, j, out, k):
    """out[k] += Xup_iᵀ f[j]  (force from child i to parent coordinates)."""
    f0, f1, f2, f3, f4, f5 = f[j, 0], f[j, 1], f[j, 2], f[j, 3], f[j, 4], f[j, 5]
    g0 = R[i, 0, 0] * f3 + R[i, 0, 1] * f4 + R[i, 0, 2] * f5
    g1 = R[i, 1, 0] * f3 + R[i, 1, 1] * f4 + R[i, 1, 2] * f5
    g2 = R[i, 2, 0] * f3 + R[i, 2, 1] * f4 + R[i, 2, 2] * f5
    out[k, 0] += R[i, 0, 0] * f0 + R[i, 0, 1] * f1 + R[i, 0, 2] * f2 + p[i, 1] * g2 - p[i, 2] * g1
    out[k, 1] += R[i, 1, 0] * f0 + R[i, 1, 1] * f1 + R[i, 1, 2] * f2 + p[i, 2] * g0 - p[i, 0] * g2
    out[k, 2] += R[i, 2, 0] * f0 + R[i, 2, 1] * f1 + R[i, 2, 2] * f2 + p[i, 0] * g1 - p[i, 1] * g0
    out[k, 3] += g0
    out[k, 4] += g1
    out[k, 5] += g2


@njit(cache=True)
def crm_add(v, i, m, j, out, k):
    """out[k] += v[i] ×m m[j]."""
    out[k, 0] += v[i, 1] * m[j, 2] - v[i, 2] * m[j, 1]
    out[k, 1] += v[i, 2] * m[j, 0] - v[i, 0] * m[j, 2]
    out[k, 2] += v[i, 0] * m[j, 1] - v[i, 1] * m[j, 0]
    out[k, 3] += v[i, 1] * m[j, 5] - v[i, 2] * m[j, 4] + v[i, 4] * m[j, 2] - v[i, 5] * m[j, 1]
    out[k, 4] += v[i, 2] * m[j, 3] - v[i, 0] * m[j, 5] + v[i, 5] * m[j, 0] - v[i, 3] * m[j, 2]
    out[k, 5] += v[i, 0] * m[j, 4] - v[i, 1] * m[j, 3] + v[i, 3] * m[j, 1] - v[i, 4] * m[j, 0]


@njit(cache=True)
def crf_add(v, i, f, j, out, k):
    """out[k] += v[i] ×* f[j]."""
    out[k, 0] += v[i, 1] * f[j, 2] - v[i, 2] * f[j, 1] + v[i, 4] * f[j, 5] - v[i, 5] * f[j, 4]
    out[k, 1] += v[i, 2] * f[j, 0] - v[i, 0] * f[j, 2] + v[i, 5] * f[j, 3] - v[i, 3] * f[j, 5]
    out[k, 2] += v[i, 0] * f[j, 1] - v[i, 1] * f[j, 0] + v[i, 3] * f[j, 4] - v[i, 4] * f[j, 3]
    out[k, 3] += v[i, 1] * f[j, 5] - v[i, 2] * f[j, 4]
    out[k, 4] += v[i, 2] * f[j, 3] - v[i, 0] * f[j, 5]
    out[k, 5] += v[i, 0] * f[j, 4] - v[i, 1] * f[j, 3]


@njit(cache=True)
def inertia_mul(tf, i, v, j, out, k):
    """out[k] = I_i v[j] in rigid-body form (RBDA §2.13): [Ī ω + h × v; m v − h × ω], h = m c.

    Reads Ī, h and m out of the stored 6×6 mcI matrix: 5× cheaper than the dense product."""
    b = F_INERTIA
    m = tf[i, b + 35]
    h0 = tf[i, b + 16]  # I[2, 4]
    h1 = tf[i, b + 5]   # I[0, 5]
    h2 = tf[i, b + 9]   # I[1, 3]
    w0, w1, w2, l0, l1, l2 = v[j, 0], v[j, 1], v[j, 2], v[j, 3], v[j, 4], v[j, 5]
    out[k, 0] = tf[i, b] * w0 + tf[i, b + 1] * w1 + tf[i, b + 2] * w2 + h1 * l2 - h2 * l1
    out[k, 1] = tf[i, b + 6] * w0 + tf[i, b + 7] * w1 + tf[i, b + 8] * w2 + h2 * l0 - h0 * l2
    out[k, 2] = tf[i, b + 12] * w0 + tf[i, b + 13] * w1 + tf[i, b + 14] * w2 + h0 * l1 - h1 * l0
    out[k, 3] = m * l0 - (h1 * w2 - h2 * w1)
    out[k, 4] = m * l1 - (h2 * w0 - h0 * w2)
    out[k, 5] = m * l2 - (h0 * w1 - h1 * w0)


@njit(cache=True)
def first_error(status):
    for c in range(status.size):
        if status[c] != OK:
            return status[c]
    return OK


@njit(cache=True)
def check_rates(qd, x, bad_x, fext, use_fext):
    """Status of one state's velocity, its acceleration-or-force input x (code bad_x), and f_ext."""
    if not all_finite(qd):
        return BAD_QD
    if not all_finite(x):
        return bad_x
    if use_fext and not all_finite(fext):
        return BAD_FEXT
    return OK
