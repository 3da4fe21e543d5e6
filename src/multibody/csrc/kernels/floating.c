/* floating.c — singularity-free floating base (spatial_v2 FDfb, IDfb; RBDA §9.3, table 9.6).
 *
 * A floatbase model emulates the 6-DoF joint of its floating base (body FB = 5, spatial_v2's
 * body 6) by a chain of five massless bodies; these functions ignore the chain and read the
 * floating base's state from xfb = [qn (4); r (3); vfb (6)] (quaternion of the base in the fixed
 * frame, origin position, spatial velocity in fixed coordinates).  q, qd, tau, qdd are full-model
 * vectors whose six emulation entries are ignored.  xd = [rqd(ω, qn); Vpt(vfb, r); afb].
 *
 *   FDfb: ABA's passes (aba.c) over bodies FB+1 … nb−1 with body FB as a free 6-DoF root:
 *         a_FB = −IA_FB⁻¹ pA_FB, then pass 3 from FB+1.  Gravity enters as afb += a_grav.
 *   IDfb: RNEA's forward pass with a_FB = 0, composite inertias IC (10-parameter form) and
 *         forces pC to FB, a_FB = −IC_FB⁻¹ pC_FB, then τ_i = S_iᵀ (pC_i + IC_i a_i).
 */
#include <math.h>
#include <string.h>

#include "common/core.h"
#include "common/spatial.h"

enum { FB = 5 };

/* The floating base's pose, velocity and (when fext) world poses of the real bodies. */
static void base_state(const mb_model *m, mb_data *d, const double *x, const double *q, const double *fext)
{
    mb_tree_poses(m, q, d->R, d->p);
    mb_quat_to_rot(x[0], x[1], x[2], x[3], d->R + 9 * FB);  /* Xup_FB = plux(rq(qn), r) */
    d->p[3 * FB] = x[4], d->p[3 * FB + 1] = x[5], d->p[3 * FB + 2] = x[6];
    mb_motion_to_child(d->R + 9 * FB, d->p + 3 * FB, x + 7, d->v + 6 * FB);  /* v_FB = Xup_FB vfb */
    if (fext)
        mb_world_poses_from(m, d->R, d->p, d->R0, d->p0, FB);
}

/* xd = [rqd(ω, qn) with norm stabilisation; r' = v_O + ω × r; X_FB⁻¹ a_FB + a_grav]. */
static void xdfb(const mb_model *m, const double *x, const double *R6, const double *p6, const double *a6, double *xd)
{
    const double w0 = x[7], w1 = x[8], w2 = x[9], q0 = x[0], q1 = x[1], q2 = x[2], q3 = x[3];
    const double KSTAB = 0.1;  /* spatial_v2 rqd's stabilisation gain (multibody.spatial.rotations.KSTAB) */
    const double k = KSTAB * sqrt(w0 * w0 + w1 * w1 + w2 * w2) * (1.0 - sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3));
    xd[0] = 0.5 * (q0 * k - q1 * w0 - q2 * w1 - q3 * w2);
    xd[1] = 0.5 * (q1 * k + q0 * w0 - (q2 * w2 - q3 * w1));
    xd[2] = 0.5 * (q2 * k + q0 * w1 - (q3 * w0 - q1 * w2));
    xd[3] = 0.5 * (q3 * k + q0 * w2 - (q1 * w1 - q2 * w0));
    xd[4] = x[10] + w1 * x[6] - w2 * x[5];
    xd[5] = x[11] + w2 * x[4] - w0 * x[6];
    xd[6] = x[12] + w0 * x[5] - w1 * x[4];
    double afb[6];
    mb_motion_to_parent(R6, p6, a6, afb);
    for (int r = 0; r < 6; r++)
        xd[7 + r] = afb[r] + m->a_grav[r];
}

/* a = −M⁻¹ b for a 6×6 M: the floating base's acceleration; 0 if M is singular. */
static int base_acceleration(const double *M, const double *b, double *a)
{
    double Minv[36];
    if (!mb_invert_small(M, 6, Minv))
        return 0;
    for (int r = 0; r < 6; r++) {
        double s = 0.0;
        for (int c = 0; c < 6; c++)
            s -= Minv[6 * r + c] * b[c];
        a[r] = s;
    }
    return 1;
}

int mb_fdfb(const mb_model *m, mb_data *d, const double *x, const double *q, const double *qd, const double *tau,
            const double *fext, double *xd, double *qdd)
{
    double Iv[6], fx[6];
    base_state(m, d, x, q, fext);
    double *v6 = d->v + 6 * FB, *pA6 = d->pA + 6 * FB;
    mb_copy36(m->inertia6 + 36 * FB, d->IA + 36 * FB);                    /* IA_FB = I_FB */
    memset(d->c + 6 * FB, 0, 6 * sizeof(double));
    mb_inertia_mul(m->inertia + MB_NI * FB, v6, Iv);
    memset(pA6, 0, 6 * sizeof(double));
    mb_crf_add(v6, Iv, pA6);                                               /* pA_FB = v ×* I v */
    if (fext) {
        mb_force_to_child(d->R0 + 9 * FB, d->p0 + 3 * FB, fext + 6 * FB, fx);
        for (int r = 0; r < 6; r++)
            pA6[r] -= fx[r];
    }
    mb_aba_velocity_pass(m, d, q, qd, fext, FB + 1);                        /* pass 1 */
    int st = mb_aba_articulated_pass(m, d, tau, NULL, FB + 1);               /* pass 2 */
    if (st != MB_OK)
        return st;
    if (!base_acceleration(d->IA + 36 * FB, pA6, d->a + 6 * FB))           /* a_FB = −IA⁻¹ pA */
        return mb_pivot_status(d->IA + 36 * FB, 36);
    st = mb_aba_acceleration_pass(m, d, NULL, NULL, qdd, NULL, FB + 1, tau);  /* pass 3 */
    if (st != MB_OK)
        return st;
    xdfb(m, x, d->R + 9 * FB, d->p + 3 * FB, d->a + 6 * FB, xd);
    return MB_OK;
}

int mb_idfb(const mb_model *m, mb_data *d, const double *x, const double *q, const double *qd, const double *qdd,
            const double *fext, double *xd, double *tau)
{
    double vJ[6], Iv[6], fx[6];
    base_state(m, d, x, q, fext);
    memset(d->a + 6 * FB, 0, 6 * sizeof(double));  /* a_FB = 0; its true value is found below */
    double *IC = d->Ic, *pC = d->f;
    for (int i = FB; i < m->nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        double *v = d->v + 6 * i, *a = d->a + 6 * i;
        if (i > FB) {  /* v_i = Xup v_λ + vJ;  a_i = Xup a_λ + S q̈ + v ×m vJ */
            memset(vJ, 0, sizeof vJ);
            for (int k = vs; k < vs + nj; k++)
                for (int r = 0; r < 6; r++)
                    vJ[r] += m->S[6 * k + r] * qd[k];
            mb_motion_to_child(d->R + 9 * i, d->p + 3 * i, d->v + 6 * par, v);
            for (int r = 0; r < 6; r++)
                v[r] += vJ[r];
            mb_motion_to_child(d->R + 9 * i, d->p + 3 * i, d->a + 6 * par, a);
            mb_crm_add(v, vJ, a);
            for (int k = vs; k < vs + nj; k++)
                for (int r = 0; r < 6; r++)
                    a[r] += m->S[6 * k + r] * qdd[k];
        }
        memcpy(IC + MB_NI * i, m->inertia + MB_NI * i, MB_NI * sizeof(double));  /* IC_i = I_i */
        mb_inertia_mul(m->inertia + MB_NI * i, a, pC + 6 * i);                  /* pC = I a + v ×* I v */
        mb_inertia_mul(m->inertia + MB_NI * i, v, Iv);
        mb_crf_add(v, Iv, pC + 6 * i);
        if (fext) {
            mb_force_to_child(d->R0 + 9 * i, d->p0 + 3 * i, fext + 6 * i, fx);
            for (int r = 0; r < 6; r++)
                pC[6 * i + r] -= fx[r];
        }
    }
    for (int i = m->nb - 1; i > FB; i--) {  /* IC_λ += Xupᵀ IC Xup;  pC_λ += Xupᵀ pC */
        const int par = m->parent[i];
        mb_inertia_to_parent_add(d->R + 9 * i, d->p + 3 * i, IC + MB_NI * i, IC + MB_NI * par);
        mb_force_to_parent_add(d->R + 9 * i, d->p + 3 * i, pC + 6 * i, pC + 6 * par);
    }
    double IC6[36];
    mb_inertia_to_matrix(IC + MB_NI * FB, IC6);
    if (!base_acceleration(IC6, pC + 6 * FB, d->a + 6 * FB))  /* a_FB = −IC_FB⁻¹ pC_FB */
        return mb_pivot_status(IC6, 36);
    for (int i = FB + 1; i < m->nb; i++) {  /* a_i = Xup a_λ;  τ = Sᵀ (pC + IC a) + armature q̈ */
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        double *a = d->a + 6 * i, F[6];
        mb_motion_to_child(d->R + 9 * i, d->p + 3 * i, d->a + 6 * par, a);
        mb_inertia_mul(IC + MB_NI * i, a, F);
        for (int k = vs; k < vs + nj; k++) {
            double s = m->armature[k] * qdd[k];
            for (int r = 0; r < 6; r++)
                s += m->S[6 * k + r] * (F[r] + pC[6 * i + r]);
            tau[k] = s;
        }
    }
    xdfb(m, x, d->R + 9 * FB, d->p + 3 * FB, d->a + 6 * FB, xd);
    return MB_OK;
}
