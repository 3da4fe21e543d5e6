/* jcalc.c — joint transforms (RBDA table 4.1; spatial_v2 jcalc) and the tree poses built on them.
 *
 * One jcalc for every joint type.  It returns the pose of body i in its joint frame J as
 * (R_JB, J_r_JB); mb_tree_poses composes it with the tree transform (Xtree) into Xup_i, the pose
 * of body i in its parent.  Motion subspaces are constant in body coordinates (model.h: S), so
 * nothing else about a joint depends on q.
 */
#include <math.h>

#include "core.h"
#include "spatial.h"

/* Rotation of a quaternion [w, x, y, z] (normalised here): rotates body into parent coordinates. */
void mb_quat_to_rot(double w, double x, double y, double z, double *R)
{
    const double n = sqrt(w * w + x * x + y * y + z * z);
    w /= n, x /= n, y /= n, z /= n;
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* sin x and cos x together, for joint angles.  glibc's sincos spends ~45 cycles per call — a
 * quarter of RNEA on a humanoid — on a reduction built for any argument.  Joint angles are small,
 * so: x = k·π/2 + r with |r| ≤ π/4 by Cody–Waite reduction (π/2 split into three parts, the first
 * two with 33 significant bits, so k·part is exact for |k| < 2²⁰), then the Taylor series of sin r
 * and cos r, which on |r| ≤ π/4 reach double precision by degree 17 and 18 (the next terms are
 * < 1e-19), evaluated by Estrin's scheme (short dependency chains) with no library call: k is
 * rounded by adding 1.5·2⁵².  Within a few ulp of libm (tests/test_core.py checks); arguments
 * beyond 10⁶ rad (and non-finite ones) go to libm. */
static inline void sincos_joint(double x, double *s, double *c)
{
    if (!(fabs(x) <= 1e6)) {
        *s = sin(x), *c = cos(x);
        return;
    }
    const double PIO2_1 = 1.5707963267341256, PIO2_2 = 6.077100506303966e-11, PIO2_3 = 2.0222662487959506e-21;
    const double ROUND = 6755399441055744.0;  /* 1.5·2⁵²: x + ROUND − ROUND rounds x to an integer */
    const double k = (x * 0.6366197723675814 + ROUND) - ROUND;  /* nearest multiple of π/2 (× 2/π) */
    const double r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
    const double z = r * r, z2 = z * z, z4 = z2 * z2;
    const double sa = -1.0 / 6 + z * (1.0 / 120), sb = -1.0 / 5040 + z * (1.0 / 362880);
    const double sc = -1.0 / 39916800 + z * (1.0 / 6227020800), sd = -1.0 / 1307674368000 + z * (1.0 / 355687428096000);
    const double ca = -1.0 / 2 + z * (1.0 / 24), cb = -1.0 / 720 + z * (1.0 / 40320);
    const double cc = -1.0 / 3628800 + z * (1.0 / 479001600), cd = -1.0 / 87178291200 + z * (1.0 / 20922789888000);
    const double sr = r + (r * z) * ((sa + z2 * sb) + z4 * (sc + z2 * sd));
    const double cr = 1.0 + z * ((ca + z2 * cb) + z4 * ((cc + z2 * cd) + z4 * (-1.0 / 6402373705728000)));
    switch ((long)k & 3) {
    case 0: *s = sr, *c = cr; return;
    case 1: *s = cr, *c = -sr; return;
    case 2: *s = -sr, *c = -cr; return;
    default: *s = -cr, *c = sr; return;
    }
}

void mb_sincos(double x, double *s, double *c)
{
    sincos_joint(x, s, c);
}

/* Status of a configuration: non-finite entries, or quaternions too small to normalise. */
int mb_check_configuration(const mb_model *m, const double *q)
{
    for (int k = 0; k < m->nq; k++)
        if (!isfinite(q[k]))
            return MB_BAD_Q;
    for (int i = 0; i < m->nb; i++) {
        const int jt = m->jtype[i];
        if (jt == MB_SPHERICAL || jt == MB_FREE) {
            const double *e = q + m->q_start[i] + (jt == MB_FREE ? 3 : 0);
            if (e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] < 1e-24)
                return MB_ZERO_QUAT;
        }
    }
    return MB_OK;
}

/* jcalc: pose (R = R_JB row-major, p = J_r_JB) of body i in its joint frame at configuration q. */
void mb_jcalc(const mb_model *m, int i, const double *q, double *R, double *p)
{
    const double *a = m->axis + 3 * i;
    const double *qi = q + m->q_start[i];
    p[0] = p[1] = p[2] = 0.0;
    switch (m->jtype[i]) {
    case MB_REVOLUTE:
    case MB_HELICAL: {  /* Rodrigues: rotation by θ about the unit axis a */
        const double th = qi[0];
        double c, s;
        sincos_joint(th, &s, &c);
        const double t = 1.0 - c;
        R[0] = c + a[0] * a[0] * t, R[1] = a[0] * a[1] * t - a[2] * s, R[2] = a[0] * a[2] * t + a[1] * s;
        R[3] = a[1] * a[0] * t + a[2] * s, R[4] = c + a[1] * a[1] * t, R[5] = a[1] * a[2] * t - a[0] * s;
        R[6] = a[2] * a[0] * t - a[1] * s, R[7] = a[2] * a[1] * t + a[0] * s, R[8] = c + a[2] * a[2] * t;
        if (m->jtype[i] == MB_HELICAL) {
            const double d = m->pitch[i] * th;
            p[0] = a[0] * d, p[1] = a[1] * d, p[2] = a[2] * d;
        }
        return;
    }
    case MB_PRISMATIC:
        R[0] = 1, R[1] = 0, R[2] = 0, R[3] = 0, R[4] = 1, R[5] = 0, R[6] = 0, R[7] = 0, R[8] = 1;
        p[0] = a[0] * qi[0], p[1] = a[1] * qi[0], p[2] = a[2] * qi[0];
        return;
    case MB_SPHERICAL:
        mb_quat_to_rot(qi[0], qi[1], qi[2], qi[3], R);
        return;
    case MB_FREE:
        mb_quat_to_rot(qi[3], qi[4], qi[5], qi[6], R);
        p[0] = qi[0], p[1] = qi[1], p[2] = qi[2];
        return;
    case MB_PLANAR: {
        double c, s;
        sincos_joint(qi[2], &s, &c);
        R[0] = c, R[1] = -s, R[2] = 0, R[3] = s, R[4] = c, R[5] = 0, R[6] = 0, R[7] = 0, R[8] = 1;
        p[0] = qi[0], p[1] = qi[1];
        return;
    }
    default: /* MB_FIXED */
        R[0] = 1, R[1] = 0, R[2] = 0, R[3] = 0, R[4] = 1, R[5] = 0, R[6] = 0, R[7] = 0, R[8] = 1;
        return;
    }
}

/* Xup_i = XJ(q_i) Xtree_i for every body, as poses of body i in its parent:
 * R_PB = A_PJ R_JB,  P_r_PB = P_r_PJ + A_PJ J_r_JB. */
void mb_tree_poses(const mb_model *m, const double *q, double *R, double *p)
{
    for (int i = 0; i < m->nb; i++) {
        double Rj[9], pj[3];
        const double *T = m->tree_R + 9 * i, *t = m->tree_p + 3 * i;
        double *Ri = R + 9 * i, *pi = p + 3 * i;
        const int k = m->axis_kind[i];
        if (k >= 0) {  /* about the coordinate axis e_k: columns a, b of T turn, column k stays */
            const double qi = q[m->q_start[i]];
            for (int r = 0; r < 9; r++)
                Ri[r] = T[r];
            pi[0] = t[0], pi[1] = t[1], pi[2] = t[2];
            if (m->jtype[i] == MB_REVOLUTE) {
                const int a = (k + 1) % 3, b = (k + 2) % 3;
                double c, s;
                sincos_joint(qi, &s, &c);
                for (int r = 0; r < 3; r++) {
                    const double ta = T[3 * r + a], tb = T[3 * r + b];
                    Ri[3 * r + a] = c * ta + s * tb;
                    Ri[3 * r + b] = c * tb - s * ta;
                }
            } else {
                for (int r = 0; r < 3; r++)
                    pi[r] += T[3 * r + k] * qi;
            }
            continue;
        }
        mb_jcalc(m, i, q, Rj, pj);
        for (int r = 0; r < 3; r++) {
            const double t0 = T[3 * r], t1 = T[3 * r + 1], t2 = T[3 * r + 2];
            Ri[3 * r] = t0 * Rj[0] + t1 * Rj[3] + t2 * Rj[6];
            Ri[3 * r + 1] = t0 * Rj[1] + t1 * Rj[4] + t2 * Rj[7];
            Ri[3 * r + 2] = t0 * Rj[2] + t1 * Rj[5] + t2 * Rj[8];
            pi[r] = t[r] + t0 * pj[0] + t1 * pj[1] + t2 * pj[2];
        }
    }
}

/* Base-frame poses of bodies first … nb−1 from parent-relative ones (bodies are numbered parents
 * first); a body whose parent is before `first` is taken to hang from the base. */
void mb_world_poses_from(const mb_model *m, const double *R, const double *p, double *R0, double *p0, int first)
{
    for (int i = first; i < m->nb; i++) {
        const int par = m->parent[i];
        const double *Ri = R + 9 * i, *pi = p + 3 * i;
        double *Ro = R0 + 9 * i, *po = p0 + 3 * i;
        if (par < first)
            mb_pose_copy(Ri, pi, Ro, po);
        else
            mb_pose_compose(R0 + 9 * par, p0 + 3 * par, Ri, pi, Ro, po);
    }
}

void mb_world_poses(const mb_model *m, const double *R, const double *p, double *R0, double *p0)
{
    mb_world_poses_from(m, R, p, R0, p0, 0);
}
