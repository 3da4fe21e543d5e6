/* crba.c — joint-space inertia by the composite-rigid-body algorithm
 * (RBDA table 6.2; spatial_v2 HandC, the H half).
 *
 *   Ic_i = I_i;  for i = nb−1 … 0:  Ic_λ(i) += Xup_iᵀ Ic_i Xup_i
 *   for each body i, each dof k of joint i:
 *       F = Ic_i S_k;  H_jk = S_jᵀ F for the dofs j of joint i
 *       j = i; while λ(j) ≥ 0:  F = Xup_jᵀ F;  j = λ(j);  H_jk = H_kj = S_jᵀ F
 *   H_kk += armature_k
 *
 * Composite inertias are rigid-body inertias, so they are kept in 10-parameter form (RBDA §2.18):
 * 10 numbers and ~70 flops per transform instead of a 6×6 congruence.
 */
#include <string.h>

#include "core.h"
#include "spatial.h"

void mb_crba(const mb_model *m, mb_data *d, const double *q, double *H)
{
    const int nb = m->nb, nv = m->nv;
    double *Ic = d->Ic;
    mb_tree_poses(m, q, d->R, d->p);
    memcpy(Ic, m->inertia, sizeof(double) * MB_NI * nb);
    for (int i = nb - 1; i >= 0; i--)  /* composite inertias, leaves to root */
        if (m->parent[i] >= 0)
            mb_inertia_to_parent_add(d->R + 9 * i, d->p + 3 * i, Ic + MB_NI * i, Ic + MB_NI * m->parent[i]);

    memset(H, 0, sizeof(double) * nv * nv);
    for (int i = 0; i < nb; i++) {
        const int vs = m->v_start[i], nj = m->nv_joint[i];
        for (int k = vs; k < vs + nj; k++) {
            double F[6], G[6];
            mb_inertia_mul(Ic + MB_NI * i, m->S + 6 * k, F);  /* F = Ic_i S_k */
            for (int k2 = vs; k2 < vs + nj; k2++) {
                double s = 0.0;
                for (int r = 0; r < 6; r++)
                    s += m->S[6 * k2 + r] * F[r];
                H[nv * k2 + k] = s;
            }
            for (int j = i; m->parent[j] >= 0;) {  /* carry F to the root: F = Xup_jᵀ F */
                memset(G, 0, sizeof G);
                mb_force_to_parent_add(d->R + 9 * j, d->p + 3 * j, F, G);
                memcpy(F, G, sizeof F);
                j = m->parent[j];
                for (int k2 = m->v_start[j]; k2 < m->v_start[j] + m->nv_joint[j]; k2++) {
                    double s = 0.0;
                    for (int r = 0; r < 6; r++)
                        s += m->S[6 * k2 + r] * F[r];
                    H[nv * k2 + k] = s;
                    H[nv * k + k2] = s;
                }
            }
        }
    }
    for (int k = 0; k < nv; k++)
        H[nv * k + k] += m->armature[k];
}
