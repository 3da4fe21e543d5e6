/* rnea.c — inverse dynamics by the recursive Newton-Euler algorithm
 * (RBDA table 5.1; spatial_v2 ID).
 *
 *   forward, i = 0 … nb−1:   Xup_i = XJ(q_i) Xtree_i                 (jcalc)
 *                            vJ = S_i q̇_i
 *                            v_i = Xup_i v_λ(i) + vJ
 *                            a_i = Xup_i a_λ(i) + S_i q̈_i + v_i ×m vJ   (a_base = −a_grav)
 *                            f_i = I_i a_i + v_i ×* I_i v_i − X*_0i f_ext,i
 *   backward, i = nb−1 … 0:  τ_i = S_iᵀ f_i + armature_i q̈_i
 *                            f_λ(i) += Xup_iᵀ f_i
 *
 * A one-dof joint whose motion subspace is a coordinate axis, S = σ e_s (model.h: dof_axis; most
 * URDF joints), takes S's products as picks and sign flips: vJ = σ q̇ e_s, v ×m vJ is column s of
 * crm(v) times σ q̇ (four products), S q̈ and Sᵀ f are one entry each.  The products with S's zeros
 * that the general statements compute add only ±0, so the numbers are the same bit for bit.
 */
#include <string.h>

#include "common/core.h"
#include "model/poses.h"
#include "common/spatial.h"

/* σ x for S = σ e_s (σ = ±1): x or −x, exactly S_s x. */
static inline real rnea_axis_sign(const mb_model *m, int k, int s, real x)
{
    return m->S[6 * k + s] < 0.0 ? -x : x;
}

/* a += v ×m vJ for vJ = qd e_s: column s of crm(v) times qd; (x × e_k) has x_kb at ka and −x_ka at kb,
 * with ka, kb = k+1, k+2 (mod 3).  s a constant in each inlined copy (the switch below). */
MB_FOLD void crm_unit_add(const real *v, int s, real qd, real *a)
{
    const int k = s % 3, ka = (k + 1) % 3, kb = (k + 2) % 3;
    if (s < 3) {  /* [ω × e_k; v × e_k] qd */
        a[ka] += v[kb] * qd, a[kb] += -(v[ka] * qd);
        a[3 + ka] += v[3 + kb] * qd, a[3 + kb] += -(v[3 + ka] * qd);
    } else {      /* [0; ω × e_k] qd */
        a[3 + ka] += v[kb] * qd, a[3 + kb] += -(v[ka] * qd);
    }
}

/* mb_rnea on the poses at q already in d: the tree's d->R, d->p (mb_tree_poses), and with f_ext the world's
 * d->R0, d->p0 (mb_world_poses; mb_body_states computes both), so that a step that has posed the bodies for its
 * contacts does not pose them again (scene_contact.c's implicit step) */
#ifndef MB_LANE_BUILD
MB_CLONES_AVX2
#endif
MB_LANES_STATIC void MB_NAME(mb_rnea_posed)(const mb_model *m, mb_data *d, const real *qd, const real *qdd,
                                            const double *fext, real *tau)
{
    real minus_grav[6], vJ[6], Iv[6];
    for (int r = 0; r < 6; r++)
        minus_grav[r] = MB_SPLAT(-m->a_grav[r]);
#ifdef MB_LANE_BUILD
    (void)fext;
#endif

    for (int i = 0; i < m->nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const real *R = d->R + 9 * i, *p = d->p + 3 * i;
        const double *Ib = m->inertia + MB_NI * i;
        real *v = d->v + 6 * i, *a = d->a + 6 * i, *f = d->f + 6 * i;
        const int s = nj == 1 ? m->dof_axis[vs] : -1;
        if (s >= 0) {  /* S = σ e_s */
            const real qdk = rnea_axis_sign(m, vs, s, qd[vs]);
            if (par < 0) {
                for (int r = 0; r < 6; r++)
                    v[r] = MB_SPLAT(0.0);
                v[s] = qdk;
                mb_motion_to_child_kind(m->pose_kind[i], R, p, minus_grav, a);
            } else {
                mb_motion_to_child_kind(m->pose_kind[i], R, p, d->v + 6 * par, v);
                v[s] += qdk;
                mb_motion_to_child_kind(m->pose_kind[i], R, p, d->a + 6 * par, a);
                switch (s) {  /* s a constant in each copy */
                case 0: crm_unit_add(v, 0, qdk, a); break;
                case 1: crm_unit_add(v, 1, qdk, a); break;
                case 2: crm_unit_add(v, 2, qdk, a); break;
                case 3: crm_unit_add(v, 3, qdk, a); break;
                case 4: crm_unit_add(v, 4, qdk, a); break;
                default: crm_unit_add(v, 5, qdk, a);
                }
            }
            a[s] += rnea_axis_sign(m, vs, s, qdd[vs]);
        } else {
            memset(vJ, 0, sizeof vJ);
            for (int k = vs; k < vs + nj; k++)
                for (int r = 0; r < 6; r++)
                    vJ[r] += m->S[6 * k + r] * qd[k];
            if (par < 0) {
                for (int r = 0; r < 6; r++)
                    v[r] = vJ[r];
                mb_motion_to_child_kind(m->pose_kind[i], R, p, minus_grav, a);   /* v_base = 0: no v ×m vJ term */
            } else {
                mb_motion_to_child_kind(m->pose_kind[i], R, p, d->v + 6 * par, v);
                for (int r = 0; r < 6; r++)
                    v[r] += vJ[r];
                mb_motion_to_child_kind(m->pose_kind[i], R, p, d->a + 6 * par, a);
                mb_crm_add(v, vJ, a);
            }
            for (int k = vs; k < vs + nj; k++)
                for (int r = 0; r < 6; r++)
                    a[r] += m->S[6 * k + r] * qdd[k];
        }
        mb_inertia_mul(Ib, a, f);
        mb_inertia_mul(Ib, v, Iv);
        mb_crf_add(v, Iv, f);
#ifndef MB_LANE_BUILD
        if (fext) {
            double fx[6];
            mb_force_to_child(d->R0 + 9 * i, d->p0 + 3 * i, fext + 6 * i, fx);
            for (int r = 0; r < 6; r++)
                f[r] -= fx[r];
        }
#endif
    }

    for (int i = m->nb - 1; i >= 0; i--) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const real *f = d->f + 6 * i;
        for (int k = vs; k < vs + nj; k++) {
            real s = m->armature[k] * qdd[k];
            const int e = m->dof_axis[k];
            if (e >= 0)  /* Sᵀ f = σ f_e */
                s += rnea_axis_sign(m, k, e, f[e]);
            else
                for (int r = 0; r < 6; r++)
                    s += m->S[6 * k + r] * f[r];
            tau[k] = s;
        }
        if (par >= 0)
            mb_force_to_parent_add_kind(m->pose_kind[i], d->R + 9 * i, d->p + 3 * i, f, d->f + 6 * par);
    }
}

MB_LANES_STATIC void MB_NAME(mb_rnea)(const mb_model *m, mb_data *d, const real *q, const real *qd,
                                      const real *qdd, const double *fext, real *tau)
{
    mb_tree_poses_inline(m, q, d->R, d->p);
#ifndef MB_LANE_BUILD
    if (fext)
        mb_world_poses(m, d->R, d->p, d->R0, d->p0);
#endif
    MB_NAME(mb_rnea_posed)(m, d, qd, qdd, fext, tau);
}

/* g(q) = RNEA(q, 0, 0): with q̇ = q̈ = 0 the forward pass is a_i = Xup_i a_λ(i), f_i = I_i a_i, and the
 * terms left out are exact zeros, so τ is mb_rnea's (up to the sign of a zero).  Its forward transform
 * skips the structural zeros of R as ABA's does (spatial.h: mb_motion_to_child_turn); the backward one
 * stays the pose_kind one mb_rnea shares: left to mb_rnea alone, GCC inlines it there and mb_rnea runs
 * 3-5 % slower on UR5, solo12 and Talos (kernels_harness).  The lanes build has
 * it too (a batch's recorded τ of a PD with g(q)), each lane this function's result bit for bit. */
MB_LANES_STATIC void MB_NAME(mb_gravity_torques)(const mb_model *m, mb_data *d, const real *q, int have_poses,
                                                 real *tau)
{
    real minus_grav[6];
    for (int r = 0; r < 6; r++)
        minus_grav[r] = MB_SPLAT(-m->a_grav[r]);
    if (!have_poses)
        mb_tree_poses_inline(m, q, d->R, d->p);
    for (int i = 0; i < m->nb; i++) {
        const int par = m->parent[i];
        real *a = d->a + 6 * i;
        mb_motion_to_child_turn(m->turn_code[i], d->R + 9 * i, d->p + 3 * i, par < 0 ? minus_grav : d->a + 6 * par, a);
        mb_inertia_mul(m->inertia + MB_NI * i, a, d->f + 6 * i);
    }
    for (int i = m->nb - 1; i >= 0; i--) {
        const int par = m->parent[i], vs = m->v_start[i];
        const real *f = d->f + 6 * i;
        for (int k = vs; k < vs + m->nv_joint[i]; k++) {
            const int s = m->dof_unit[k];
            const double *S = m->S + 6 * k;
            tau[k] = s >= 0 ? f[s] : S[0] * f[0] + S[1] * f[1] + S[2] * f[2] + S[3] * f[3] + S[4] * f[4] + S[5] * f[5];
        }
        if (par >= 0)
            mb_force_to_parent_add_kind(m->pose_kind[i], d->R + 9 * i, d->p + 3 * i, f, d->f + 6 * par);
    }
}
