/* crba.c — joint-space inertia by the composite-rigid-body algorithm
 * (RBDA table 6.2; spatial_v2 HandC, the H half).
 *
 *   Ic_i = I_i;  for i = nb−1 … 0:  Ic_λ(i) += Ic_i            (composite inertia of subtree i)
 *   for each body i, each dof k of joint i:
 *       F = Ic_i S_k
 *       H_kj = S_jᵀ F   for j = k and every ancestor dof of k (the lower triangle; H_jk = H_kj)
 *   H_kk += armature_k
 *
 * H_jk = S_jᵀ Ic_i S_k does not depend on the coordinates it is evaluated in, so, as Pinocchio
 * does, everything here is in base coordinates: each I_i and S_k is carried to the base once
 * (X_0i), the composite inertias add without transforms, and an off-diagonal entry costs one
 * 6-vector dot product instead of carrying F through every joint on the way to the root
 * (the book's F = Xup_jᵀ F loop).  Inertias stay in 10-parameter form (RBDA §2.18).
 */
#include <string.h>

#include "core.h"
#include "spatial.h"

void mb_crba(const mb_model *m, mb_data *d, const double *q, double *H)
{
    const int nb = m->nb, nv = m->nv;
    double *Ic = d->Ic, *ST = d->U;  /* composite inertias; S in base coordinates, transposed (6 × nv) */
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    memset(Ic, 0, sizeof(double) * MB_NI * nb);
    for (int i = 0; i < nb; i++) {
        const double *R0 = d->R0 + 9 * i, *p0 = d->p0 + 3 * i;
        mb_inertia_to_parent_add(R0, p0, m->inertia + MB_NI * i, Ic + MB_NI * i);  /* I_i in base coords */
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            double s[6];
            mb_subspace_to_base(m, k, R0, p0, s);                                   /* S_k in base coords */
            for (int r = 0; r < 6; r++)
                ST[nv * r + k] = s[r];
        }
    }
    for (int i = nb - 1; i >= 0; i--)  /* composite inertias, leaves to root */
        if (m->parent[i] >= 0)
            for (int r = 0; r < MB_NI; r++)
                Ic[MB_NI * m->parent[i] + r] += Ic[MB_NI * i + r];

    /* Row k of the lower triangle: H_kj = S_jᵀ F for j = k and its ancestors, taken run by run of
     * consecutive dofs (dof_run_start) so the inner loop is a plain sweep over j; the entries
     * between runs are zero.  Every entry is written once (no memset: the output is fresh memory,
     * and for big batches writing it is a large share of the time). */
    for (int i = 0; i < nb; i++)
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            const double s[6] = {ST[k], ST[nv + k], ST[2 * nv + k], ST[3 * nv + k], ST[4 * nv + k], ST[5 * nv + k]};
            double F[6];
            mb_inertia_mul(Ic + MB_NI * i, s, F);  /* F = Ic_i S_k */
            double *row = H + (long)nv * k;
            int j = k;
            while (j >= 0) {
                const int lo = m->dof_run_start[j];
                for (int t = lo; t <= j; t++)
                    row[t] = F[0] * ST[t] + F[1] * ST[nv + t] + F[2] * ST[2 * nv + t] + F[3] * ST[3 * nv + t] +
                             F[4] * ST[4 * nv + t] + F[5] * ST[5 * nv + t];
                j = m->dof_parent[lo];
                for (int t = j + 1; t < lo; t++)
                    row[t] = 0.0;
            }
        }
    for (int k = 0; k < nv; k++) {  /* the upper triangle, and the rotors on the diagonal */
        for (int t = 0; t < k; t++)
            H[(long)nv * t + k] = H[(long)nv * k + t];
        H[(long)nv * k + k] += m->armature[k];
    }
}
