/* aba.c — forward dynamics by the articulated-body algorithm (RBDA table 7.1; spatial_v2 FDab).
 *
 *   pass 1, i = 0 … nb−1:     X_0i, S_i, vJ = S_i q̇_i, v_i = v_λ(i) + vJ, c_i = v_i ×m vJ,
 *                             IA_i = I_i, pA_i = v_i ×* I_i v_i − f_ext,i
 *   pass 2, i = nb−1 … 0:     U_i = IA_i S_i, D_i = S_iᵀ U_i + armature_i, u_i = τ_i − S_iᵀ pA_i
 *                             Ia = IA_i − U_i D_i⁻¹ U_iᵀ,  pa = pA_i + Ia c_i + U_i D_i⁻¹ u_i
 *                             IA_λ(i) += Ia,  pA_λ(i) += pa
 *   pass 3, i = 0 … nb−1:     a_i = a_λ(i) + c_i  (a_base = −a_grav)
 *                             q̈_i = D_i⁻¹ (u_i − U_iᵀ a_i),  a_i += S_i q̈_i
 *
 * Every spatial quantity is in base coordinates, as in Pinocchio's ABA: the book's recursion in
 * body coordinates carries each articulated inertia to its parent by the congruence Xupᵀ Ia Xup
 * (the costliest step), whereas in one common frame IA_λ(i) += Ia is an addition.  The price is
 * carrying I_i and S_i to the base once per body (X_0i), and with it S_i stops being a unit
 * vector; the base-frame bias term is still c_i = v_i ×m vJ because Ṡ_i = v_i ×m S_i there.
 *
 * The three passes are separate functions because hybrid dynamics (hybrid.c, HD) and the
 * floating base (floating.c, FDfb) run the same passes: a joint with fd[i] = 0 is an
 * inverse-dynamics joint whose q̈ is known (folded into c_i), and `first` lets FDfb start the
 * recursion below its floating base.
 */
#include <math.h>
#include <string.h>

#include "core.h"
#include "spatial.h"

/* Inverse of the small SPD block D (n×n, row-major, n ≤ 6) by Gauss-Jordan with partial pivoting;
 * 0 if D is (numerically) singular. */
int mb_invert_small(const double *D, int n, double *Dinv)
{
    if (n == 1) {
        if (!(D[0] > 0.0))
            return 0;
        Dinv[0] = 1.0 / D[0];
        return 1;
    }
    double A[6][12], scale = 0.0;
    for (int r = 0; r < n; r++) {
        scale = fmax(scale, fabs(D[n * r + r]));
        for (int c = 0; c < n; c++) {
            A[r][c] = D[n * r + c];
            A[r][n + c] = r == c ? 1.0 : 0.0;
        }
    }
    if (scale == 0.0)
        return 0;
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c]))
                piv = r;
        if (!(fabs(A[piv][c]) > 1e-14 * scale))
            return 0;
        if (piv != c)
            for (int k = 0; k < 2 * n; k++) {
                const double t = A[c][k];
                A[c][k] = A[piv][k];
                A[piv][k] = t;
            }
        const double dd = A[c][c];
        for (int k = 0; k < 2 * n; k++)
            A[c][k] /= dd;
        for (int r = 0; r < n; r++)
            if (r != c && A[r][c] != 0.0) {
                const double e = A[r][c];
                for (int k = 0; k < 2 * n; k++)
                    A[r][k] -= e * A[c][k];
            }
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            Dinv[n * r + c] = A[r][n + c];
    return 1;
}

/* A free joint at the root (parent: the fixed base) with no rotor inertia can exert any spatial
 * force, so its 6×6 D block need not be formed: with τ the body-coordinate force it transmits,
 * IA a_i + pA_i = X_0iᵀ* τ gives a_i by one 6×6 SPD solve and q̈_i = X_0i (a_i − a_base).  This
 * replaces U = IA S, D = Sᵀ U and D⁻¹ (~1000 flops) by ~250 on every floating-base robot. */
static int is_free_root(const mb_model *m, int i, const unsigned char *fd)
{
    if (m->jtype[i] != MB_FREE || m->parent[i] >= 0 || (fd && !fd[i]))
        return 0;
    for (int k = m->v_start[i]; k < m->v_start[i] + 6; k++)
        if (m->armature[k] != 0.0)
            return 0;
    return 1;
}

/* Pass 1 for bodies first … nb−1.  Parent-relative poses are in d->R, d->p; a body whose parent
 * is < 0 hangs from the base at rest, any other parent (≥ 0) must have its base pose (d->R0, d->p0)
 * and velocity (d->v) set — by this pass, or by the caller for FDfb's floating base.  External
 * forces f_ext (base coordinates, like everything here) enter pA directly. */
void mb_aba_velocity_pass(const mb_model *m, mb_data *d, const double *qd, const double *fext, int first)
{
    double I0[MB_NI], Iv[6];
    for (int i = first; i < m->nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        double *R0 = d->R0 + 9 * i, *p0 = d->p0 + 3 * i;
        double *v = d->v + 6 * i, *c = d->c + 6 * i, *pA = d->pA + 6 * i;
        if (par < 0)
            mb_pose_copy(d->R + 9 * i, d->p + 3 * i, R0, p0);
        else
            mb_pose_compose(d->R0 + 9 * par, d->p0 + 3 * par, d->R + 9 * i, d->p + 3 * i, R0, p0);
        double vJ[6] = {0, 0, 0, 0, 0, 0};
        for (int k = vs; k < vs + nj; k++) {  /* vJ = S q̇ */
            double *S = d->Sw + 6 * k;
            mb_subspace_to_base(m, k, R0, p0, S);
            for (int r = 0; r < 6; r++)
                vJ[r] += S[r] * qd[k];
        }
        if (par < 0) {
            for (int r = 0; r < 6; r++)
                v[r] = vJ[r], c[r] = 0.0;
        } else {
            const double *vp = d->v + 6 * par;
            for (int r = 0; r < 6; r++)
                v[r] = vp[r] + vJ[r], c[r] = 0.0;
            mb_crm_add(v, vJ, c);
        }
        for (int r = 0; r < MB_NI; r++)
            I0[r] = 0.0;
        mb_inertia_to_parent_add(R0, p0, m->inertia + MB_NI * i, I0);  /* I_i in base coordinates */
        mb_inertia_to_matrix(I0, d->IA + 36 * i);
        mb_inertia_mul(I0, v, Iv);
        for (int r = 0; r < 6; r++)
            pA[r] = fext ? -fext[6 * i + r] : 0.0;
        mb_crf_add(v, Iv, pA);
    }
}

/* Pass 2 for bodies nb−1 … first.  Joints with fd[i] == 0 (fd may be NULL: all forward) are
 * inverse-dynamics joints: their known acceleration is already in c_i, and they pass the full
 * articulated inertia on.  Pass 3 needs U, D⁻¹ and u of forward joints and IA of the others, so
 * Ia is never stored: it goes straight into the parent.  Returns MB_SINGULAR if a D block cannot
 * be inverted. */
int mb_aba_articulated_pass(const mb_model *m, mb_data *d, const double *tau, const unsigned char *fd,
                            int first)
{
    double pa[6], D[36], Ia[36];
    for (int i = m->nb - 1; i >= first; i--) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const double *IA = d->IA + 36 * i, *pA = d->pA + 6 * i, *c = d->c + 6 * i;
        double *Dinv = d->Dinv + 36 * i;
        if (is_free_root(m, i, fd)) {  /* pass 3 solves it; keep τ for it */
            memcpy(d->u + vs, tau + vs, 6 * sizeof(double));
            continue;
        }
        const int forward = (!fd || fd[i]) && nj > 0;  /* (a fixed joint passes everything on) */
        if (forward) {
            for (int e = 0; e < nj; e++) {  /* U = IA S,  u = τ − Sᵀ pA */
                const int k = vs + e;
                const double *S = d->Sw + 6 * k;
                mb_mat6_mul(IA, S, d->U + 6 * k);
                d->u[k] = tau[k] - mb_dot6(S, pA);
            }
        }
        if (forward && nj == 1) {  /* the common case: D is a number */
            const double *U = d->U + 6 * vs;
            const double Dk = mb_dot6(d->Sw + 6 * vs, U) + m->armature[vs];
            if (!(Dk > 0.0))
                return MB_SINGULAR;
            Dinv[0] = 1.0 / Dk;
            if (par < 0)
                continue;
            /* IA_λ += IA − U Uᵀ/D;  pA_λ += pA + Ia c + U u/D = pA + IA c + U (u − Uᵀc)/D */
            double *IAp = d->IA + 36 * par, *pAp = d->pA + 6 * par;
            const double coef = (d->u[vs] - mb_dot6(U, c)) * Dinv[0];
            for (int r = 0; r < 6; r++) {
                const double *row = IA + 6 * r, ur = U[r] * Dinv[0];
                double *prow = IAp + 6 * r;
                pAp[r] += pA[r] + mb_dot6(row, c) + U[r] * coef;
                for (int cc = 0; cc < 6; cc++)
                    prow[cc] += row[cc] - ur * U[cc];
            }
            continue;
        }
        memcpy(Ia, IA, sizeof Ia);
        memcpy(pa, pA, sizeof pa);
        if (forward) {
            for (int e = 0; e < nj; e++)  /* D = Sᵀ U + armature */
                for (int g = 0; g < nj; g++)
                    D[nj * e + g] = mb_dot6(d->Sw + 6 * (vs + e), d->U + 6 * (vs + g)) +
                                    (e == g ? m->armature[vs + e] : 0.0);
            if (!mb_invert_small(D, nj, Dinv))
                return MB_SINGULAR;
            if (par < 0)
                continue;
            for (int e = 0; e < nj; e++)  /* Ia = IA − U D⁻¹ Uᵀ,  pa = pA + U D⁻¹ u */
                for (int g = 0; g < nj; g++) {
                    const double dd = Dinv[nj * e + g], ug = d->u[vs + g];
                    const double *Ue = d->U + 6 * (vs + e), *Ug = d->U + 6 * (vs + g);
                    for (int r = 0; r < 6; r++) {
                        const double ur = Ue[r] * dd;
                        for (int cc = 0; cc < 6; cc++)
                            Ia[6 * r + cc] -= ur * Ug[cc];
                        pa[r] += ur * ug;
                    }
                }
        }
        if (par < 0)
            continue;
        double *IAp = d->IA + 36 * par, *pAp = d->pA + 6 * par;
        for (int r = 0; r < 6; r++) {  /* IA_λ += Ia,  pA_λ += pa + Ia c */
            const double *row = Ia + 6 * r;
            pAp[r] += pa[r] + mb_dot6(row, c);
            for (int cc = 0; cc < 6; cc++)
                IAp[6 * r + cc] += row[cc];
        }
    }
    return MB_OK;
}

/* Pass 3 for bodies first … nb−1: accelerations root to leaves.  a_root is the acceleration of
 * the base the roots hang from (−a_grav; FDfb passes none: its bodies' parents are set).  At
 * inverse-dynamics joints (fd[i] == 0) it writes τ_i = S_iᵀ (IA_i a_i + pA_i) + armature q̈_i.
 * Returns MB_SINGULAR if a free root's articulated inertia is not positive definite. */
int mb_aba_acceleration_pass(const mb_model *m, mb_data *d, const double *a_root, const unsigned char *fd,
                             double *qdd, double *tau_id, int first)
{
    for (int i = first; i < m->nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        double *a = d->a + 6 * i;
        const double *c = d->c + 6 * i, *ap = par < 0 ? a_root : d->a + 6 * par;
        if (is_free_root(m, i, fd)) {  /* IA a = X_0iᵀ* τ − pA;  q̈ = X_0i (a − a_base) */
            const double *R0 = d->R0 + 9 * i, *p0 = d->p0 + 3 * i;
            double rhs[6] = {0, 0, 0, 0, 0, 0}, L[36], rel[6];
            mb_force_to_parent_add(R0, p0, d->u + vs, rhs);
            for (int r = 0; r < 6; r++)
                rhs[r] -= d->pA[6 * i + r];
            if (!mb_cholesky_solve(6, d->IA + 36 * i, L, rhs, a))
                return MB_SINGULAR;
            for (int r = 0; r < 6; r++)
                rel[r] = a[r] - ap[r];
            mb_motion_to_child(R0, p0, rel, qdd + vs);
            continue;
        }
        for (int r = 0; r < 6; r++)
            a[r] = ap[r] + c[r];
        if (!fd || fd[i]) {
            const double *Dinv = d->Dinv + 36 * i;
            double w[6];
            for (int g = 0; g < nj; g++)  /* w = u − Uᵀ a */
                w[g] = d->u[vs + g] - mb_dot6(d->U + 6 * (vs + g), a);
            for (int e = 0; e < nj; e++) {  /* q̈ = D⁻¹ w */
                double s = 0.0;
                for (int g = 0; g < nj; g++)
                    s += Dinv[nj * e + g] * w[g];
                qdd[vs + e] = s;
            }
            for (int e = 0; e < nj; e++)
                for (int r = 0; r < 6; r++)
                    a[r] += d->Sw[6 * (vs + e) + r] * qdd[vs + e];
        } else {  /* τ = Sᵀ (IA a + pA) + armature q̈ */
            const double *IA = d->IA + 36 * i, *pA = d->pA + 6 * i;
            double F[6];
            mb_mat6_mul(IA, a, F);
            for (int r = 0; r < 6; r++)
                F[r] += pA[r];
            for (int k = vs; k < vs + nj; k++)
                tau_id[k] = m->armature[k] * qdd[k] + mb_dot6(d->Sw + 6 * k, F);
        }
    }
    return MB_OK;
}

int mb_aba(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
           const double *fext, double *qdd)
{
    if (m->planar && !fext)  /* the same algorithm in planar vectors (planar.c) */
        return mb_aba_planar(m, d, q, qd, tau, qdd);
    double minus_grav[6];
    for (int r = 0; r < 6; r++)
        minus_grav[r] = -m->a_grav[r];
    mb_tree_poses(m, q, d->R, d->p);
    mb_aba_velocity_pass(m, d, qd, fext, 0);
    const int st = mb_aba_articulated_pass(m, d, tau, NULL, 0);
    if (st != MB_OK)
        return st;
    return mb_aba_acceleration_pass(m, d, minus_grav, NULL, qdd, NULL, 0);
}
