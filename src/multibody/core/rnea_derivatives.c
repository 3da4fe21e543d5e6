/* rnea_derivatives.c — ∂τ/∂q, ∂τ/∂q̇ and M of inverse dynamics, analytically
 * (Carpentier & Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS 2018:
 * RNEA in the world frame, differentiated).
 *
 * Everything is in world (base) coordinates, where a joint's motion subspace J_k = X_0i⁻¹ S_k
 * moves with the body and everything else (gravity, f_ext, a_base) stays put.  ∂/∂q_k is the
 * tangent direction of mb.integrate: the body of joint k turns by exp(ε S_k) on the right (body
 * frame), i.e. its whole subtree by exp(ε J_k) in the world, so J_j, Y_i (world inertias) and the
 * part of v_i, a_i made by the joints k … i are carried along ("attached": ∂x = J_k × x).
 *
 *   forward, body i with parent λ, for each column k of joint i:
 *       v_i = v_λ + Σ J_k q̇_k,   a_i = a_λ + Σ J_k q̈_k + v_λ × Σ J_k q̇_k      (a_base = −a_grav)
 *       u_k    = v_λ × J_k                        ∂v_i/∂q_k = u_k + J_k × v_i (attached part)
 *       dAq_k  = a_λ × J_k + v_λ × u_k           ∂a_i/∂q_k = dAq_k + u_k × v_i + J_k × a_i
 *       dAv_k  = u_k + v_i × J_k                 ∂a_i/∂q̇_k = dAv_k + J_k × v_i
 *       Y_i = world inertia,  f_i = Y_i a_i + v_i ×* Y_i v_i   (f_ext kept apart: it does not turn)
 *       B_i u = Y_i (u × v_i) + u ×* (Y_i v_i) + v_i ×* (Y_i u)    (what v's part adds to ∂f)
 *   backward, sums over the subtree of i: Yc_i = Σ Y, Bc_i = Σ B, F_i = Σ f, Fx_i = Σ f_ext; then
 *       ∂f_subtree/∂q_k = J_k ×* F + Yc dAq_k + Bc u_k  (the J_k ×* F of an attached force cancels
 *       in J_jᵀ F for j below k; a world-fixed f_ext adds −J_j ×* Fx instead).  With τ_j = J_jᵀ(F − Fx):
 *     j at or below k (k in joint i or above, j in joint i):
 *       ∂τ_j/∂q_k = (Yc_i J_j)·dAq_k + (Bc_iᵀ J_j)·u_k − (J_j ×* Fx_i)·J_k
 *       ∂τ_j/∂q̇_k = (Yc_i J_j)·dAv_k + (Bc_iᵀ J_j)·J_k,      M_jk = (Yc_i J_j)·J_k
 *     j strictly above k (k in joint i):
 *       ∂τ_j/∂q_k = J_j·(J_k ×* F_i + Yc_i dAq_k + Bc_i u_k)
 *       ∂τ_j/∂q̇_k = J_j·(Yc_i dAv_k + Bc_i J_k)
 * Joints on different branches do not see each other: those entries are 0.  Armature adds to M's
 * diagonal only (∂τ/∂q, ∂τ/∂q̇ do not see it).  Cost O(nv · depth), like CRBA.
 */
#include <string.h>

#include "core.h"
#include "spatial.h"

enum { COLS = 4 * 6, BODY = 6 + 6 + 6 + 6 + MB_NI + 36 };

long mb_rnea_derivatives_scratch(const mb_model *m)
{
    return (long)COLS * m->nv + (long)BODY * m->nb + 1;
}

/* out = a × b (motion cross product) */
static inline void cross_m(const double *a, const double *b, double *out)
{
    memset(out, 0, 6 * sizeof(double));
    mb_crm_add(a, b, out);
}

/* B_i (6×6, row-major) for world inertia Y, velocity v, momentum h = Y v: column c is B e_c. */
static void coriolis_map(const double *Y, const double *v, const double *h, double *B)
{
    for (int c = 0; c < 6; c++) {
        double e[6] = {0}, t[6], col[6], Ye[6];
        e[c] = 1.0;
        cross_m(e, v, t);
        mb_inertia_mul(Y, t, col);
        mb_crf_add(e, h, col);
        mb_inertia_mul(Y, e, Ye);
        mb_crf_add(v, Ye, col);
        for (int r = 0; r < 6; r++)
            B[6 * r + c] = col[r];
    }
}

/* out = B x, out = Bᵀ x for a 6×6 row-major B */
static inline void mat6_mul(const double *B, const double *x, double *out)
{
    for (int r = 0; r < 6; r++)
        out[r] = mb_dot6(B + 6 * r, x);
}

static inline void mat6_tmul(const double *B, const double *x, double *out)
{
    for (int c = 0; c < 6; c++)
        out[c] = B[c] * x[0] + B[6 + c] * x[1] + B[12 + c] * x[2] + B[18 + c] * x[3] + B[24 + c] * x[4] +
                 B[30 + c] * x[5];
}

void mb_rnea_derivatives(const mb_model *m, mb_data *d, double *scratch, const double *q, const double *qd,
                         const double *qdd, const double *fext, double *dtau_dq, double *dtau_dqd, double *M)
{
    const int nb = m->nb, nv = m->nv;
    double *J = scratch, *U = J + 6 * nv, *dAq = U + 6 * nv, *dAv = dAq + 6 * nv;
    double *v = dAv + 6 * nv, *a = v + 6 * nb, *F = a + 6 * nb, *Fx = F + 6 * nb, *Yc = Fx + 6 * nb,
           *Bc = Yc + MB_NI * nb;
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    memset(dtau_dq, 0, sizeof(double) * nv * nv);
    memset(dtau_dqd, 0, sizeof(double) * nv * nv);
    if (M)
        memset(M, 0, sizeof(double) * nv * nv);

    for (int i = 0; i < nb; i++) {  /* forward: world-frame kinematics and per-column motions */
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const double *R0 = d->R0 + 9 * i, *p0 = d->p0 + 3 * i;
        double zero[6] = {0}, minus_grav[6], vJ[6] = {0}, aJ[6] = {0}, h[6];
        for (int r = 0; r < 6; r++)
            minus_grav[r] = -m->a_grav[r];
        const double *vp = par < 0 ? zero : v + 6 * par, *ap = par < 0 ? minus_grav : a + 6 * par;
        double *vi = v + 6 * i, *ai = a + 6 * i, *Y = Yc + MB_NI * i;
        for (int k = vs; k < vs + nj; k++) {
            double *Jk = J + 6 * k;
            mb_motion_to_parent(R0, p0, m->S + 6 * k, Jk);
            for (int r = 0; r < 6; r++)
                vJ[r] += Jk[r] * qd[k], aJ[r] += Jk[r] * qdd[k];
        }
        for (int r = 0; r < 6; r++)
            vi[r] = vp[r] + vJ[r], ai[r] = ap[r] + aJ[r];
        mb_crm_add(vp, vJ, ai);
        for (int k = vs; k < vs + nj; k++) {
            const double *Jk = J + 6 * k;
            double *Uk = U + 6 * k, *Aq = dAq + 6 * k, *Av = dAv + 6 * k;
            cross_m(vp, Jk, Uk);
            cross_m(ap, Jk, Aq);
            mb_crm_add(vp, Uk, Aq);
            cross_m(vi, Jk, Av);
            for (int r = 0; r < 6; r++)
                Av[r] += Uk[r];
        }
        memset(Y, 0, sizeof(double) * MB_NI);
        mb_inertia_to_parent_add(R0, p0, m->inertia + MB_NI * i, Y);
        mb_inertia_mul(Y, ai, F + 6 * i);
        mb_inertia_mul(Y, vi, h);
        mb_crf_add(vi, h, F + 6 * i);
        coriolis_map(Y, vi, h, Bc + 36 * i);
        if (fext)
            memcpy(Fx + 6 * i, fext + 6 * i, 6 * sizeof(double));
    }

    for (int i = nb - 1; i >= 0; i--) {  /* backward: subtree sums, then the entries of joint i */
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const double *Yi = Yc + MB_NI * i, *Bi = Bc + 36 * i, *Fi = F + 6 * i, *Fxi = Fx + 6 * i;
        for (int j = vs; j < vs + nj; j++) {
            const double *Jj = J + 6 * j;
            double r1[6], r2[6], r3[6] = {0}, psi_q[6], psi_v[6], t[6];
            mb_inertia_mul(Yi, Jj, r1);
            mat6_tmul(Bi, Jj, r2);
            if (fext) {  /* r3 = −J_j ×* Fx */
                double c[6] = {0};
                mb_crf_add(Jj, Fxi, c);
                for (int r = 0; r < 6; r++)
                    r3[r] = -c[r];
            }
            /* ψ: the subtree's ∂f for column j, seen by the joints above */
            memset(psi_q, 0, sizeof psi_q);
            mb_crf_add(Jj, Fi, psi_q);
            mb_inertia_mul(Yi, dAq + 6 * j, t);
            for (int r = 0; r < 6; r++)
                psi_q[r] += t[r];
            mat6_mul(Bi, U + 6 * j, t);
            for (int r = 0; r < 6; r++)
                psi_q[r] += t[r];
            mb_inertia_mul(Yi, dAv + 6 * j, psi_v);
            mat6_mul(Bi, Jj, t);
            for (int r = 0; r < 6; r++)
                psi_v[r] += t[r];
            double *rq = dtau_dq + (long)nv * j, *rv = dtau_dqd + (long)nv * j;
            for (int b = i; b >= 0; b = m->parent[b])
                for (int k = m->v_start[b]; k < m->v_start[b] + m->nv_joint[b]; k++) {
                    const double *Jk = J + 6 * k;
                    rq[k] = mb_dot6(r1, dAq + 6 * k) + mb_dot6(r2, U + 6 * k) + mb_dot6(r3, Jk);
                    rv[k] = mb_dot6(r1, dAv + 6 * k) + mb_dot6(r2, Jk);
                    if (M)
                        M[(long)nv * j + k] = M[(long)nv * k + j] = mb_dot6(r1, Jk);
                    if (b != i) {
                        dtau_dq[(long)nv * k + j] = mb_dot6(Jk, psi_q);
                        dtau_dqd[(long)nv * k + j] = mb_dot6(Jk, psi_v);
                    }
                }
        }
        if (par >= 0) {
            double *Yp = Yc + MB_NI * par, *Bp = Bc + 36 * par;
            for (int r = 0; r < MB_NI; r++)
                Yp[r] += Yi[r];
            for (int r = 0; r < 36; r++)
                Bp[r] += Bi[r];
            for (int r = 0; r < 6; r++)
                F[6 * par + r] += Fi[r];
            if (fext)
                for (int r = 0; r < 6; r++)
                    Fx[6 * par + r] += Fxi[r];
        }
    }
    if (M)
        for (int k = 0; k < nv; k++)
            M[(long)nv * k + k] += m->armature[k];
}
