/* poses.h — joint transforms (RBDA table 4.1; spatial_v2 jcalc) and the tree poses built on them,
 * in `real` (lanes.h): jcalc.c exports them for one state, aba_lanes.c runs them over lanes of
 * states.  Model quantities (axes, tree transforms) are double; everything that depends on q is
 * real. */
#ifndef MULTIBODY_POSES_H
#define MULTIBODY_POSES_H

#include "common/lanes.h"
#include "model/model.h"
#include "common/spatial.h"
#include "common/trig.h"

#ifdef MB_LANE_BUILD
#define MB_LANE(v, l) ((v)[l])
#else
#define MB_LANE(v, l) (v)
#endif

/* Scale [w, x, y, z] by the power of two that brings its largest entry into [0.5, 1).  The factor
 * is exact, so the normalised quaternion is unchanged, and its squared norm no longer overflows
 * (entries ~1e200) or underflows (entries ~1e-200). */
static inline void mb_quat_rescale(double *w, double *x, double *y, double *z)
{
    int e;
    (void)frexp(fmax(fmax(fabs(*w), fabs(*x)), fmax(fabs(*y), fabs(*z))), &e);
    *w = ldexp(*w, -e), *x = ldexp(*x, -e), *y = ldexp(*y, -e), *z = ldexp(*z, -e);
}

/* Squared norm of a quaternion, rescaled first (lane by lane) where it leaves [2^-900, 2^900]:
 * ordinary quaternions take the plain sum of squares, bit for bit as before. */
static inline real mb_quat_norm2(real *w, real *x, real *y, real *z)
{
    real n2 = *w * *w + *x * *x + *y * *y + *z * *z;
    if (!mb_all((n2 > MB_SPLAT(0x1p-900)) & (n2 < MB_SPLAT(0x1p900)))) {
        for (int l = 0; l < MB_LANES; l++)
            mb_quat_rescale(&MB_LANE(*w, l), &MB_LANE(*x, l), &MB_LANE(*y, l), &MB_LANE(*z, l));
        n2 = *w * *w + *x * *x + *y * *y + *z * *z;
    }
    return n2;
}

/* Rotation of a quaternion [w, x, y, z] (normalised here): rotates body into parent coordinates. */
static inline void mb_quat_to_rot_inline(real w, real x, real y, real z, real *R)
{
    const real n = mb_sqrt(mb_quat_norm2(&w, &x, &y, &z));
    w /= n, x /= n, y /= n, z /= n;
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

static inline void mb_rot_identity(real *R)
{
    const real one = MB_SPLAT(1.0), zero = MB_SPLAT(0.0);
    R[0] = one, R[1] = zero, R[2] = zero, R[3] = zero, R[4] = one, R[5] = zero, R[6] = zero, R[7] = zero, R[8] = one;
}

/* jcalc: pose (R = R_JB row-major, p = J_r_JB) of body i in its joint frame at configuration q. */
static inline void mb_jcalc_inline(const mb_model *m, int i, const real *q, real *R, real *p)
{
    const double *a = m->axis + 3 * i;
    const real *qi = q + m->q_start[i];
    p[0] = p[1] = p[2] = MB_SPLAT(0.0);
    switch (m->jtype[i]) {
    case MB_REVOLUTE:
    case MB_HELICAL: {  /* Rodrigues: rotation by θ about the unit axis a */
        const real th = qi[0];
        real c, s;
        mb_sincos_joint(th, &s, &c);
        const real t = 1.0 - c;
        R[0] = c + a[0] * a[0] * t, R[1] = a[0] * a[1] * t - a[2] * s, R[2] = a[0] * a[2] * t + a[1] * s;
        R[3] = a[1] * a[0] * t + a[2] * s, R[4] = c + a[1] * a[1] * t, R[5] = a[1] * a[2] * t - a[0] * s;
        R[6] = a[2] * a[0] * t - a[1] * s, R[7] = a[2] * a[1] * t + a[0] * s, R[8] = c + a[2] * a[2] * t;
        if (m->jtype[i] == MB_HELICAL) {
            const real d = m->pitch[i] * th;
            p[0] = a[0] * d, p[1] = a[1] * d, p[2] = a[2] * d;
        }
        return;
    }
    case MB_PRISMATIC:
        mb_rot_identity(R);
        p[0] = a[0] * qi[0], p[1] = a[1] * qi[0], p[2] = a[2] * qi[0];
        return;
    case MB_CYLINDRICAL: {  /* turn θ = q0 about a (Rodrigues), slide d = q1 along a: they commute */
        real c, s;
        mb_sincos_joint(qi[0], &s, &c);
        const real t = 1.0 - c, d = qi[1];
        R[0] = c + a[0] * a[0] * t, R[1] = a[0] * a[1] * t - a[2] * s, R[2] = a[0] * a[2] * t + a[1] * s;
        R[3] = a[1] * a[0] * t + a[2] * s, R[4] = c + a[1] * a[1] * t, R[5] = a[1] * a[2] * t - a[0] * s;
        R[6] = a[2] * a[0] * t - a[1] * s, R[7] = a[2] * a[1] * t + a[0] * s, R[8] = c + a[2] * a[2] * t;
        p[0] = a[0] * d, p[1] = a[1] * d, p[2] = a[2] * d;
        return;
    }
    case MB_SPHERICAL:
        mb_quat_to_rot_inline(qi[0], qi[1], qi[2], qi[3], R);
        return;
    case MB_FREE:
        mb_quat_to_rot_inline(qi[3], qi[4], qi[5], qi[6], R);
        p[0] = qi[0], p[1] = qi[1], p[2] = qi[2];
        return;
    case MB_PLANAR: {
        real c, s;
        mb_sincos_joint(qi[2], &s, &c);
        mb_rot_identity(R);
        R[0] = c, R[1] = -s, R[3] = s, R[4] = c;
        p[0] = qi[0], p[1] = qi[1];
        return;
    }
    default: /* MB_FIXED */
        mb_rot_identity(R);
        return;
    }
}

/* R = T·(turn by θ about e_k): column k of T, and columns a, b = k+1, k+2 (mod 3) turned by (c, s). */
MB_FOLD void mb_turn_columns(const double *T, int k, real c, real s, real *R)
{
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    for (int r = 0; r < 3; r++) {
        const double ta = T[3 * r + a], tb = T[3 * r + b];
        R[3 * r + k] = MB_SPLAT(T[3 * r + k]);
        R[3 * r + a] = c * ta + s * tb;
        R[3 * r + b] = c * tb - s * ta;
    }
}

/* Xup_i of a revolute joint about the coordinate axis e_k (axis_kind k ≥ 0) given (c, s) = cos, sin q_i. */
MB_FOLD void mb_turn_pose(const mb_model *m, int i, real c, real s, real *R, real *p)
{
    const double *T = m->tree_R_exact + 9 * i, *t = m->tree_p + 3 * i;  /* (compile.c) */
    real *Ri = R + 9 * i, *pi = p + 3 * i;
    pi[0] = MB_SPLAT(t[0]), pi[1] = MB_SPLAT(t[1]), pi[2] = MB_SPLAT(t[2]);
    switch (m->axis_kind[i]) {  /* k a constant in each copy */
    case 0: mb_turn_columns(T, 0, c, s, Ri); break;
    case 1: mb_turn_columns(T, 1, c, s, Ri); break;
    default: mb_turn_columns(T, 2, c, s, Ri);
    }
}

/* Four sines and cosines at once pay only in AVX2 code (aba_avx2.c's ABA: the Panda's 82 → 31
 * instructions a joint); in SSE2 code a four-double vector is two halves plus the masks, and UR5's
 * rnea + crba + aba took 3 % more instructions (callgrind), so the baseline build keeps one at a time. */
#if !defined(MB_LANE_BUILD) && defined(__AVX2__)
#define MB_POSES_SINCOS4 1
#else
#define MB_POSES_SINCOS4 0
#endif

#if MB_POSES_SINCOS4
/* The poses of the bodies turn[0 .. n), n ≤ 4, unit-axis revolute joints: their sines and cosines
 * in one call of trig.h's mb_sincos_joint4 (each lane mb_sincos_joint's bits), padded with angle 0. */
static inline void mb_turn_poses4(const mb_model *m, const int *turn, int n, const real *q, real *R, real *p)
{
    double x[4] = {0.0, 0.0, 0.0, 0.0};
    for (int j = 0; j < n; j++)
        x[j] = q[m->q_start[turn[j]]];
    mb_sincos4 xv, sv, cv;
    memcpy(&xv, x, sizeof xv);
    mb_sincos_joint4(xv, &sv, &cv);
    for (int j = 0; j < n; j++)
        mb_turn_pose(m, turn[j], cv[j], sv[j], R, p);
}
#endif

/* Xup_i = XJ(q_i) Xtree_i for every body, as poses of body i in its parent:
 * R_PB = A_PJ R_JB,  P_r_PB = P_r_PJ + A_PJ J_r_JB.  Each body's pose depends on its own q_i alone,
 * so in AVX2 code the unit-axis revolute ones wait in fours for their sines and cosines
 * (mb_turn_poses4): one at a time, mb_sincos_joint took ~80 instructions a joint, 45 % of the
 * Panda's poses (callgrind). */
static inline void mb_tree_poses_inline(const mb_model *m, const real *q, real *R, real *p)
{
#if MB_POSES_SINCOS4
    int turn[4], n_turn = 0;
#endif
    for (int i = 0; i < m->nb; i++) {
        real Rj[9], pj[3];
        const double *T = m->tree_R_exact + 9 * i, *t = m->tree_p + 3 * i;  /* (compile.c) */
        real *Ri = R + 9 * i, *pi = p + 3 * i;
        const int k = m->axis_kind[i];
        if (k >= 0) {  /* about the coordinate axis e_k: columns a, b of T turn, column k stays */
            const real qi = q[m->q_start[i]];
            if (m->jtype[i] == MB_REVOLUTE) {
#if MB_POSES_SINCOS4
                turn[n_turn++] = i;
                if (n_turn == 4)
                    mb_turn_poses4(m, turn, n_turn, q, R, p), n_turn = 0;
#else
                real c, s;
                mb_sincos_joint(qi, &s, &c);
                mb_turn_pose(m, i, c, s, R, p);
#endif
            } else {
                pi[0] = MB_SPLAT(t[0]), pi[1] = MB_SPLAT(t[1]), pi[2] = MB_SPLAT(t[2]);
                for (int r = 0; r < 9; r++)
                    Ri[r] = MB_SPLAT(T[r]);
                for (int r = 0; r < 3; r++)
                    pi[r] += T[3 * r + k] * qi;
            }
            continue;
        }
        mb_jcalc_inline(m, i, q, Rj, pj);
        for (int r = 0; r < 3; r++) {
            const double t0 = T[3 * r], t1 = T[3 * r + 1], t2 = T[3 * r + 2];
            Ri[3 * r] = t0 * Rj[0] + t1 * Rj[3] + t2 * Rj[6];
            Ri[3 * r + 1] = t0 * Rj[1] + t1 * Rj[4] + t2 * Rj[7];
            Ri[3 * r + 2] = t0 * Rj[2] + t1 * Rj[5] + t2 * Rj[8];
            pi[r] = t[r] + t0 * pj[0] + t1 * pj[1] + t2 * pj[2];
        }
    }
#if MB_POSES_SINCOS4
    if (n_turn)
        mb_turn_poses4(m, turn, n_turn, q, R, p);
#endif
}

#endif
