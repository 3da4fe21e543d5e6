/* kinematics.c — forward kinematics, Jacobians and configuration integration.
 *
 *   body states (RBDA §4.4, spatial_v2 FK): poses R0_i = R0_λ R_i, p0_i = p0_λ + R0_λ p_i;
 *       v_i = Xup_i v_λ + S_i q̇_i;  a_i = Xup_i a_λ + S_i q̈_i + v_i ×m vJ   (no gravity)
 *   Jacobian of body b at point P (RBDA §8.1): column k of an ancestor j's dof:
 *       [ω_k; v_k] = [R0_j S_k^ω;  R0_j S_k^v + ω_k × (P − p0_j)]
 *   centre-of-mass Jacobian: Σ_i m_i J_i(c_i) (the Python face divides by the total mass)
 *   integrate: q ⊕ v·dt, exact for a constant body-frame twist (exponential map).
 */
#include <math.h>
#include <string.h>

#include "common/core.h"
#include "common/spatial.h"
#include "common/vec.h"

void mb_body_states(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *qdd,
                    double *R0, double *p0, double *V, double *A)
{
    double vJ[6];
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, R0, p0);
    if (!qd)
        return;
    for (int i = 0; i < m->nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const double *R = d->R + 9 * i, *p = d->p + 3 * i;
        double *v = V + 6 * i;
        memset(vJ, 0, sizeof vJ);
        for (int k = vs; k < vs + nj; k++)
            for (int r = 0; r < 6; r++)
                vJ[r] += m->S[6 * k + r] * qd[k];
        if (par < 0)
            memcpy(v, vJ, sizeof vJ);
        else {
            mb_motion_to_child(R, p, V + 6 * par, v);
            for (int r = 0; r < 6; r++)
                v[r] += vJ[r];
        }
        if (!qdd)
            continue;
        double *a = A + 6 * i;
        if (par < 0)
            memset(a, 0, 6 * sizeof(double));
        else {
            mb_motion_to_child(R, p, A + 6 * par, a);
            mb_crm_add(v, vJ, a);
        }
        for (int k = vs; k < vs + nj; k++)
            for (int r = 0; r < 6; r++)
                a[r] += m->S[6 * k + r] * qdd[k];
    }
}

/* dof k's axis in world coordinates on its body's world rotation Rj: w = Rj S_k^ω, u = Rj S_k^v */
static inline void dof_world_axis(const mb_model *m, const double *Rj, int k, double *w, double *u)
{
    const double *S = m->S + 6 * k;
    for (int r = 0; r < 3; r++) {
        w[r] = Rj[3 * r] * S[0] + Rj[3 * r + 1] * S[1] + Rj[3 * r + 2] * S[2];
        u[r] = Rj[3 * r] * S[3] + Rj[3 * r + 1] * S[4] + Rj[3 * r + 2] * S[5];
    }
}

/* The axis (w, u) at a point d from the body's origin: u + w × d */
static inline void axis_at(const double *w, const double *u, double d0, double d1, double d2, double *out)
{
    out[0] = u[0] + (w[1] * d2 - w[2] * d1);
    out[1] = u[1] + (w[2] * d0 - w[0] * d2);
    out[2] = u[2] + (w[0] * d1 - w[1] * d0);
}

/* Add w·(columns of body b's ancestors' dofs for point P, world coordinates) to J (rows 0-2 ω,
 * rows 3-5 v_P; J is 6×nv or, with rot_rows 0, 3×nv linear rows only).  frame: 0 world-aligned,
 * 1 local (rotated into body b's coordinates), 2 world (P = origin). */
static void add_columns(const mb_model *m, const double *R0, const double *p0, int b, const double *P, int frame,
                        double weight, int rot_rows, double *J)
{
    const int nv = m->nv;
    const double *Rb = R0 + 9 * b;
    for (int j = b; j >= 0; j = m->parent[j]) {
        const double *Rj = R0 + 9 * j, *pj = p0 + 3 * j;
        const double d0 = P[0] - pj[0], d1 = P[1] - pj[1], d2 = P[2] - pj[2];
        for (int k = m->v_start[j]; k < m->v_start[j] + m->nv_joint[j]; k++) {
            double w[3], u[3];
            dof_world_axis(m, Rj, k, w, u);
            axis_at(w, u, d0, d1, d2, u);
            if (frame == 1) {  /* into body coordinates: Rbᵀ x */
                double wl[3], ul[3];
                for (int r = 0; r < 3; r++) {
                    wl[r] = Rb[r] * w[0] + Rb[3 + r] * w[1] + Rb[6 + r] * w[2];
                    ul[r] = Rb[r] * u[0] + Rb[3 + r] * u[1] + Rb[6 + r] * u[2];
                }
                memcpy(w, wl, sizeof w);
                memcpy(u, ul, sizeof u);
            }
            const int o = rot_rows ? 3 : 0;
            for (int r = 0; r < 3; r++) {
                if (rot_rows)
                    J[nv * r + k] += weight * w[r];
                J[nv * (o + r) + k] += weight * u[r];
            }
        }
    }
}

void mb_jacobian(const mb_model *m, mb_data *d, const double *q, int body, const double *point, int frame, double *J)
{
    double P[3] = {0.0, 0.0, 0.0};
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    memset(J, 0, sizeof(double) * 6 * m->nv);
    if (frame != 2) {
        const double *Rb = d->R0 + 9 * body, *pb = d->p0 + 3 * body;
        for (int r = 0; r < 3; r++)
            P[r] = pb[r] + Rb[3 * r] * point[0] + Rb[3 * r + 1] * point[1] + Rb[3 * r + 2] * point[2];
    }
    add_columns(m, d->R0, d->p0, body, P, frame, 1.0, 1, J);
}

/* J3 (3 × nv) += weight · the linear rows of body b's Jacobian at the world point P, world-aligned, from
 * the world poses R0, p0 (mb_body_states): a contact point's rows (sim/hard_contact.c) */
void mb_point_jacobian_add(const mb_model *m, const double *R0, const double *p0, int body, const double *P,
                           double weight, double *J3)
{
    add_columns(m, R0, p0, body, P, 0, weight, 0, J3);
}

/* ax (nv × 6): each dof's axis in world coordinates at the world poses R0 (mb_body_states), [R0_j S_k^ω; R0_j S_k^v]
 * with j the dof's body: add_columns's products, which do not depend on the point, once per configuration for
 * the many points of a contact step (dm_control's humanoid: ~10 contacts a step, each on ~12 dofs, each dof's
 * two rotations per contact were most of the contacts' Jacobians) */
void mb_dof_world_axes(const mb_model *m, const double *R0, double *ax)
{
    for (int j = 0; j < m->nb; j++) {
        const double *Rj = R0 + 9 * j;
        for (int k = m->v_start[j]; k < m->v_start[j] + m->nv_joint[j]; k++)
            dof_world_axis(m, Rj, k, ax + 6 * k, ax + 6 * k + 3);
    }
}

/* mb_point_jacobian_add from the dofs' world axes ax (mb_dof_world_axes at the same poses): the same numbers */
void mb_point_jacobian_axes_add(const mb_model *m, const double *ax, const double *p0, int body, const double *P,
                                double weight, double *J3)
{
    const int nv = m->nv;
    for (int j = body; j >= 0; j = m->parent[j]) {
        const double *pj = p0 + 3 * j;
        const double d0 = P[0] - pj[0], d1 = P[1] - pj[1], d2 = P[2] - pj[2];
        for (int k = m->v_start[j]; k < m->v_start[j] + m->nv_joint[j]; k++) {
            double c[3];
            axis_at(ax + 6 * k, ax + 6 * k + 3, d0, d1, d2, c);
            J3[k] += weight * c[0], J3[nv + k] += weight * c[1], J3[2 * nv + k] += weight * c[2];
        }
    }
}

/* The dofs the point Jacobians of bodies ba and bb (−1: the static world, none) have columns on, ascending into
 * cols (returns how many): their ancestors' dofs, a set closed under λ (dof_parent), so that L⁻ᵀ keeps a row on
 * it too (branch-induced sparsity, RBDA §6.5); a contact's rows share it (sim/hard_contact.c,
 * sim/scene_contact.c).  chain: 2 nv ints of scratch. */
int mb_contact_columns(const mb_model *m, int ba, int bb, int *chain, int *cols)
{
    int n[2] = {0, 0}, *c[2] = {chain, chain + m->nv};
    for (int s = 0; s < 2; s++) {  /* each body's chain from its (or its nearest moving ancestor's) last dof, descending */
        int j = s ? bb : ba;
        while (j >= 0 && m->nv_joint[j] == 0)
            j = m->parent[j];
        for (int k = j >= 0 ? m->v_start[j] + m->nv_joint[j] - 1 : -1; k >= 0; k = m->dof_parent[k])
            c[s][n[s]++] = k;
    }
    int a = n[0] - 1, b = n[1] - 1, p = 0;  /* the union, ascending (both end in the root's dofs) */
    while (a >= 0 || b >= 0) {
        const int ka = a >= 0 ? c[0][a] : m->nv, kb = b >= 0 ? c[1][b] : m->nv;
        cols[p++] = ka < kb ? ka : kb;
        a -= ka <= kb, b -= kb <= ka;
    }
    return p;
}

void mb_com_jacobian(const mb_model *m, mb_data *d, const double *q, double *Jc)
{
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    memset(Jc, 0, sizeof(double) * 3 * m->nv);
    for (int i = 0; i < m->nb; i++) {
        const double *In = m->inertia + MB_NI * i;
        const double mass = In[MB_I_M];
        if (mass == 0.0)
            continue;
        const double c[3] = {In[1] / mass, In[2] / mass, In[3] / mass};  /* CoM = h / m */
        const double *Ri = d->R0 + 9 * i, *pi = d->p0 + 3 * i;
        double P[3];
        for (int r = 0; r < 3; r++)
            P[r] = pi[r] + Ri[3 * r] * c[0] + Ri[3 * r + 1] * c[1] + Ri[3 * r + 2] * c[2];
        add_columns(m, d->R0, d->p0, i, P, 0, mass, 0, Jc);
    }
}

/* ---- integrate ------------------------------------------------------------------------------ */

/* out = q ⊗ exp(w/2) for a body-frame angular displacement w (q normalised first). */
static void integrate_quat(const double *q, const double *w, double *out)
{
    const double th = mb_norm3(w);
    const double k = th < 1e-6 ? 0.5 - th * th / 48.0 : sin(th / 2) / th;
    double qn[4];
    mb_quat_normalise(q, qn);
    const double e[4] = {cos(th / 2), k * w[0], k * w[1], k * w[2]};
    mb_quat_mul(qn, e, out);  /* common/vec.h: the sums written out there, in that order */
}

/* out = V(w) u, V = 1 + (1−cos θ)/θ² [w]× + (θ − sin θ)/θ³ [w]×²  (SE(3) left Jacobian) */
static void se3_left_jacobian_times(const double *w, const double *u, double *out)
{
    const double th2 = mb_dot3(w, w), th = sqrt(th2);
    double b, c;
    if (th < 1e-6) {
        b = 0.5 - th2 / 24.0;
        c = 1.0 / 6.0 - th2 / 120.0;
    } else {
        b = (1.0 - cos(th)) / th2;
        c = (th - sin(th)) / (th2 * th);
    }
    double wx[3], ww[3];
    mb_cross3(w, u, wx);   /* w × u */
    mb_cross3(w, wx, ww);  /* w × (w × u) */
    for (int r = 0; r < 3; r++)
        out[r] = u[r] + b * wx[r] + c * ww[r];
}

void mb_integrate(const mb_model *m, const double *q, const double *v, double dt, double *out)
{
    memcpy(out, q, sizeof(double) * m->nq);
    for (int i = 0; i < m->nb; i++) {
        const int qs = m->q_start[i], vs = m->v_start[i];
        const double *qi = q + qs, *vi = v + vs;
        double *oi = out + qs;
        switch (m->jtype[i]) {
        case MB_SPHERICAL: {
            const double w[3] = {vi[0] * dt, vi[1] * dt, vi[2] * dt};
            integrate_quat(qi, w, oi);
            break;
        }
        case MB_FREE: {  /* position moves along the screw, in parent coordinates */
            const double w[3] = {vi[0] * dt, vi[1] * dt, vi[2] * dt}, u[3] = {vi[3] * dt, vi[4] * dt, vi[5] * dt};
            double t[3], R[9];
            se3_left_jacobian_times(w, u, t);
            mb_quat_to_rot(qi[3], qi[4], qi[5], qi[6], R);
            for (int r = 0; r < 3; r++)
                oi[r] = qi[r] + R[3 * r] * t[0] + R[3 * r + 1] * t[1] + R[3 * r + 2] * t[2];
            integrate_quat(qi + 3, w, oi + 3);
            break;
        }
        case MB_PLANAR: {
            const double th = qi[2], dth = vi[2] * dt, vx = vi[0] * dt, vy = vi[1] * dt;
            double a, b;
            if (fabs(dth) < 1e-8)
                a = 1.0 - dth * dth / 6.0, b = dth / 2.0;
            else
                a = sin(dth) / dth, b = (1.0 - cos(dth)) / dth;
            const double lx = a * vx - b * vy, ly = b * vx + a * vy;
            oi[0] = qi[0] + cos(th) * lx - sin(th) * ly;
            oi[1] = qi[1] + sin(th) * lx + cos(th) * ly;
            oi[2] = th + dth;
            break;
        }
        default:
            for (int k = 0; k < m->nv_joint[i]; k++)
                oi[k] = qi[k] + vi[k] * dt;
        }
    }
}
