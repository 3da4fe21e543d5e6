/* jcalc.c — joint transforms (RBDA table 4.1; spatial_v2 jcalc) and the tree poses built on them.
 *
 * One jcalc for every joint type.  It returns the pose of body i in its joint frame J as
 * (R_JB, J_r_JB); mb_tree_poses composes it with the tree transform (Xtree) into Xup_i, the pose
 * of body i in its parent.  Motion subspaces are constant in body coordinates (model.h: S), so
 * nothing else about a joint depends on q.
 */
#include <math.h>

#include "core.h"
#include "trig.h"
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

void mb_sincos(double x, double *s, double *c)
{
    mb_sincos_joint(x, s, c);
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
        mb_sincos_joint(th, &s, &c);
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
        mb_sincos_joint(qi[2], &s, &c);
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
                mb_sincos_joint(qi, &s, &c);
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
