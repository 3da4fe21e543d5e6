/* crba.c — joint-space inertia by the composite-rigid-body algorithm
 * (RBDA table 6.2; spatial_v2 HandC, the H half).
 *
 *   Ic_i = I_i;  for i = nb−1 … 0:  Ic_λ(i) += Xup_iᵀ Ic_i Xup_i    (composite inertia of subtree i)
 *   for each body i, each dof k of joint i:
 *       F = Ic_i S_k;   H_kj = S_jᵀ F  for the dofs j ≤ k of joint i
 *       for j = i, λ(i), … until the root:  F = Xup_jᵀ F,  H_kj = S_jᵀ F  for the dofs j of λ(j)
 *   H_jk = H_kj;  H_kk += armature_k
 *
 * This is the book's recursion in body coordinates.  It beats the base-coordinate variant (every
 * I_i and S_k carried to the base, then one 6-vector dot product per entry, as Pinocchio does) on
 * the robots of bench.urdf — 13 % on the quadrupeds, within ±3 % elsewhere — because a joint axis
 * along a coordinate axis of its frame (model.h: dof_unit) makes S_jᵀ F a pick, and a free
 * joint's S is the identity: its six entries are F itself.  Inertias stay in 10-parameter form
 * (RBDA §2.18), so Xupᵀ Ic Xup costs ~90 flops, fewer for a turn about a coordinate axis
 * (spatial.h: mb_inertia_to_parent_add_kind).  Each entry below the diagonal is written
 * to its mirror image above it at once (only the structurally non-zero ones: a branched tree's H
 * is mostly zeros, which the memset provides).
 */
#include <string.h>

#include "common/core.h"
#include "model/poses.h"
#include "common/spatial.h"

/* S_kᵀ F: a pick when column k of S is a unit vector. */
static inline real subspace_dot(const mb_model *m, int k, const real *F)
{
    const int s = m->dof_unit[k];
    const double *S = m->S + 6 * k;
    return s >= 0 ? F[s] : S[0] * F[0] + S[1] * F[1] + S[2] * F[2] + S[3] * F[3] + S[4] * F[4] + S[5] * F[5];
}

MB_LANES_STATIC void MB_NAME(mb_crba)(const mb_model *m, mb_data *d, const real *q, real *H)
{
    const int nb = m->nb, nv = m->nv;
    real *Ic = d->Ic;
    mb_tree_poses_inline(m, q, d->R, d->p);
    for (int k = 0; k < MB_NI * nb; k++)
        Ic[k] = MB_SPLAT(m->inertia[k]);
    for (int i = nb - 1; i >= 0; i--)  /* composite inertias, leaves to root */
        if (m->parent[i] >= 0)
            mb_inertia_to_parent_add_kind(m->pose_kind[i], d->R + 9 * i, d->p + 3 * i, Ic + MB_NI * i,
                                          Ic + MB_NI * m->parent[i]);
    memset(H, 0, sizeof(real) * nv * nv);
    for (int i = 0; i < nb; i++)
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            real F[6];
            mb_composite_mul(Ic + MB_NI * i, m->S + 6 * k, F);  /* F = Ic_i S_k */
            real *row = H + (long)nv * k;                    /* row k, left of the diagonal */
            for (int k2 = m->v_start[i]; k2 <= k; k2++)
                row[k2] = H[(long)nv * k2 + k] = subspace_dot(m, k2, F);
            for (int j = i; m->parent[j] >= 0;) {  /* F = Xup_jᵀ F, one joint nearer the root */
                mb_force_to_parent(d->R + 9 * j, d->p + 3 * j, F, F);
                j = m->parent[j];
                for (int k2 = m->v_start[j]; k2 < m->v_start[j] + m->nv_joint[j]; k2++)
                    row[k2] = H[(long)nv * k2 + k] = subspace_dot(m, k2, F);
            }
        }
    for (int k = 0; k < nv; k++)  /* the rotors on the diagonal */
        H[(long)nv * k + k] += m->armature[k];
}
