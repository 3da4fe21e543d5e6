/* minv.c — the inverse of the joint-space inertia M⁻¹(q) without forming M
 * (Carpentier, "Analytical inverse of the joint space inertia matrix", 2018; the idea of
 * Pinocchio's computeMinverse): ABA run on all unit torques at once, with no velocity and no
 * gravity.  Column c of M⁻¹ is the q̈ that τ = e_c causes.
 *
 *   backward, i = nb−1 … 0 (IA_i = I_i plus its children's articulated inertias):
 *       U_i = IA_i S_i,  D_i = S_iᵀ U_i + armature_i
 *       row block i of M⁻¹, columns c of subtree(i):  D_i⁻¹ (e_c − S_iᵀ F_i[:, c])
 *           (F_i[:, c]: the bias force that τ = e_c in the children's subtrees leaves on body i)
 *       F_i += U_i M⁻¹[i, :];   F_λ += Xupᵀ F_i;   IA_λ += Xupᵀ (IA_i − U_i D_i⁻¹ U_iᵀ) Xup
 *   forward, i = 0 … nb−1, columns c ≥ v_start(i) (the upper triangle):
 *       M⁻¹[i, c] −= D_i⁻¹ U_iᵀ Xup P_λ[:, c];   P_i[:, c] = S_i M⁻¹[i, c] + Xup P_λ[:, c]
 *           (P_i[:, c]: body i's acceleration under τ = e_c)
 *   M⁻¹ is symmetric: the lower triangle is the upper's mirror.
 * Body frames; the subtree of i is the columns v_start(i) … cend(i) when the bodies are numbered
 * depth-first (a column in that range off the subtree has F = 0 and costs only time).
 */
#include <string.h>

#include "core.h"
#include "spatial.h"

long mb_minv_scratch(const mb_model *m)
{
    return 2L * 6 * m->nv * m->nb + m->nb + 1;
}

int mb_minv(const mb_model *m, mb_data *d, double *scratch, const double *q, double *Minv)
{
    const int nb = m->nb, nv = m->nv;
    double *F = scratch, *P = F + 6L * nv * nb;  /* per body: 6 rows × nv columns, column c at 6c */
    int *cend = (int *)(P + 6L * nv * nb);
    mb_tree_poses(m, q, d->R, d->p);
    memset(Minv, 0, sizeof(double) * nv * nv);
    for (int i = 0; i < nb; i++)
        cend[i] = m->v_start[i] + m->nv_joint[i];
    for (int i = nb - 1; i >= 0; i--)
        if (m->parent[i] >= 0 && cend[m->parent[i]] < cend[i])
            cend[m->parent[i]] = cend[i];
    for (int i = 0; i < nb; i++) {
        mb_copy36(m->inertia6 + 36 * i, d->IA + 36 * i);
        memset(F + 6L * nv * i + 6L * m->v_start[i], 0, sizeof(double) * 6 * (cend[i] - m->v_start[i]));
    }

    for (int i = nb - 1; i >= 0; i--) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i], ce = cend[i];
        const double *R = d->R + 9 * i, *p = d->p + 3 * i, *IA = d->IA + 36 * i;
        double *Fi = F + 6L * nv * i, *Dinv = d->Dinv + 36 * i, D[36];
        for (int k = vs; k < vs + nj; k++) {
            double *Uk = d->U + 6 * k;
            for (int r = 0; r < 6; r++)
                Uk[r] = mb_dot6(IA + 6 * r, m->S + 6 * k);
            for (int k2 = vs; k2 < vs + nj; k2++)
                D[nj * (k - vs) + (k2 - vs)] = mb_dot6(m->S + 6 * k2, Uk) + (k == k2 ? m->armature[k] : 0.0);
        }
        if (nj > 0 && !mb_invert_small(D, nj, Dinv))  /* a fixed joint has no block */
            return MB_SINGULAR;
        for (int e = 0; e < nj; e++) {
            double *row = Minv + (long)nv * (vs + e);
            for (int e2 = 0; e2 < nj; e2++)
                row[vs + e2] = Dinv[nj * e + e2];
            for (int c = vs + nj; c < ce; c++) {
                double s = 0.0;
                for (int e2 = 0; e2 < nj; e2++)
                    s += Dinv[nj * e + e2] * mb_dot6(m->S + 6 * (vs + e2), Fi + 6 * c);
                row[c] = -s;
            }
        }
        if (par < 0)
            continue;
        double *Fp = F + 6L * nv * par;
        for (int c = vs; c < ce; c++) {
            double *f = Fi + 6 * c;
            for (int e = 0; e < nj; e++) {
                const double x = Minv[(long)nv * (vs + e) + c];
                const double *Ue = d->U + 6 * (vs + e);
                for (int r = 0; r < 6; r++)
                    f[r] += Ue[r] * x;
            }
            mb_force_to_parent_add(R, p, f, Fp + 6 * c);
        }
        double Ia[36];
        memcpy(Ia, IA, sizeof Ia);
        for (int e = 0; e < nj; e++)
            for (int e2 = 0; e2 < nj; e2++) {
                const double w = Dinv[nj * e + e2];
                const double *Ue = d->U + 6 * (vs + e), *Ue2 = d->U + 6 * (vs + e2);
                for (int r = 0; r < 6; r++)
                    for (int c = 0; c < 6; c++)
                        Ia[6 * r + c] -= Ue[r] * w * Ue2[c];
            }
        mb_sym6_to_parent_add(R, p, Ia, d->IA + 36 * par);
    }

    for (int i = 0; i < nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const double *R = d->R + 9 * i, *p = d->p + 3 * i, *Dinv = d->Dinv + 36 * i;
        double *Pi = P + 6L * nv * i;
        for (int c = vs; c < nv; c++) {
            double x[6] = {0}, *pc = Pi + 6 * c;
            if (par >= 0) {
                mb_motion_to_child(R, p, P + 6L * nv * par + 6 * c, x);
                double Ux[6];
                for (int e = 0; e < nj; e++)
                    Ux[e] = mb_dot6(d->U + 6 * (vs + e), x);
                for (int e = 0; e < nj; e++) {
                    double s = 0.0;
                    for (int e2 = 0; e2 < nj; e2++)
                        s += Dinv[nj * e + e2] * Ux[e2];
                    Minv[(long)nv * (vs + e) + c] -= s;
                }
            }
            for (int r = 0; r < 6; r++)
                pc[r] = x[r];
            for (int e = 0; e < nj; e++) {
                const double y = Minv[(long)nv * (vs + e) + c];
                const double *S = m->S + 6 * (vs + e);
                for (int r = 0; r < 6; r++)
                    pc[r] += S[r] * y;
            }
        }
    }
    for (int r = 0; r < nv; r++)
        for (int c = 0; c < r; c++)
            Minv[(long)nv * r + c] = Minv[(long)nv * c + r];
    return MB_OK;
}
