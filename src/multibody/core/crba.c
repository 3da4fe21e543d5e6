/* crba.c — joint-space inertia by the composite-rigid-body algorithm
 * (RBDA table 6.2; spatial_v2 HandC, the H half).
 *
 *   Ic_i = I_i;  for i = nb−1 … 0:  Ic_λ(i) += Ic_i            (composite inertia of subtree i)
 *   for each body i, each dof k of joint i:
 *       F = Ic_i S_k
 *       H_jk = H_kj = S_jᵀ F   for the dofs j of joint i and of every ancestor of i
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
    double *Ic = d->Ic, *Sw = d->U;  /* composite inertias and motion subspaces, base coordinates */
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    memset(Ic, 0, sizeof(double) * MB_NI * nb);
    for (int i = 0; i < nb; i++) {
        const double *R0 = d->R0 + 9 * i, *p0 = d->p0 + 3 * i;
        mb_inertia_to_parent_add(R0, p0, m->inertia + MB_NI * i, Ic + MB_NI * i);  /* I_i in base coords */
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++)
            mb_motion_to_parent(R0, p0, m->S + 6 * k, Sw + 6 * k);                  /* S_k in base coords */
    }
    for (int i = nb - 1; i >= 0; i--)  /* composite inertias, leaves to root */
        if (m->parent[i] >= 0)
            for (int r = 0; r < MB_NI; r++)
                Ic[MB_NI * m->parent[i] + r] += Ic[MB_NI * i + r];

    memset(H, 0, sizeof(double) * nv * nv);
    for (int i = 0; i < nb; i++)
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            double F[6];
            mb_inertia_mul(Ic + MB_NI * i, Sw + 6 * k, F);  /* F = Ic_i S_k */
            for (int j = i; j >= 0; j = m->parent[j])      /* joint i and its ancestors */
                for (int k2 = m->v_start[j]; k2 < m->v_start[j] + m->nv_joint[j]; k2++) {
                    const double *S2 = Sw + 6 * k2;
                    const double s = S2[0] * F[0] + S2[1] * F[1] + S2[2] * F[2] + S2[3] * F[3] + S2[4] * F[4] +
                                     S2[5] * F[5];
                    H[nv * k2 + k] = s;
                    H[nv * k + k2] = s;
                }
        }
    for (int k = 0; k < nv; k++)
        H[nv * k + k] += m->armature[k];
}
