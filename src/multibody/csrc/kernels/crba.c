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
 * is mostly zeros, which the memset provides, or in lanes the workspace's own H, zeroed once).
 */
#include <string.h>

#include "common/core.h"
#include "model/poses.h"
#include "common/spatial.h"

/* F = Ic e_s: column s of a 10-parameter inertia's 6×6 matrix (mb_inertia_mul's product with a unit
 * vector written out: copies and sign flips, the same values but for the sign of a zero).  For a
 * free joint these six columns are the floating base's whole 6×6 block of H. */
static inline void composite_column(const real *J, int s, real *F)
{
    const real m = J[0], h0 = J[1], h1 = J[2], h2 = J[3], z = MB_SPLAT(0.0);
    switch (s) {
    case 0: F[0] = J[4], F[1] = J[5], F[2] = J[6], F[3] = z, F[4] = -h2, F[5] = h1; break;
    case 1: F[0] = J[5], F[1] = J[7], F[2] = J[8], F[3] = h2, F[4] = z, F[5] = -h0; break;
    case 2: F[0] = J[6], F[1] = J[8], F[2] = J[9], F[3] = -h1, F[4] = h0, F[5] = z; break;
    case 3: F[0] = z, F[1] = h2, F[2] = -h1, F[3] = m, F[4] = z, F[5] = z; break;
    case 4: F[0] = -h2, F[1] = z, F[2] = h0, F[3] = z, F[4] = m, F[5] = z; break;
    default: F[0] = h1, F[1] = -h0, F[2] = z, F[3] = z, F[4] = z, F[5] = m;
    }
}

/* Ic_λ += Xup_iᵀ Ic_i Xup_i by the structure of Xup_i's R (turn_code): a turn about e_k as spatial.h's
 * mb_inertia_to_parent_add_kind; a permuted turn as mb_inertia_to_parent_add's sums (y = R h, R Ī Rᵀ
 * row by row) with R's structural zeros left out (mb_r_dot), the same numbers on the same R. */
#define CRBA_INERTIA_TO_PARENT(T)                                                                        \
    do {                                                                                                \
        const real Ib[3][3] = {{J[4], J[5], J[6]}, {J[5], J[7], J[8]}, {J[6], J[8], J[9]}};             \
        const real y[3] = {mb_r_dot(T, R, 0, J[1], J[2], J[3]), mb_r_dot(T, R, 1, J[1], J[2], J[3]),    \
                           mb_r_dot(T, R, 2, J[1], J[2], J[3])};                                        \
        real RIR[3][3];                                                                                 \
        MB_UNROLL for (int r = 0; r < 3; r++) {                                                         \
            real t[3];                                                                                  \
            MB_UNROLL for (int k = 0; k < 3; k++)                                                       \
                t[k] = mb_r_dot(T, R, r, Ib[0][k], Ib[1][k], Ib[2][k]);                                 \
            MB_UNROLL for (int c = r; c < 3; c++)                                                       \
                RIR[r][c] = mb_r_dot(T, R, c, t[0], t[1], t[2]);                                        \
        }                                                                                               \
        mb_inertia_shift_add(p, J[0], y, RIR, out);                                                     \
    } while (0)
/* (out of line: inlined, its nine copies slowed the quadrupeds' CRBA, which never take them, by a
 * quarter; measured, kernels_harness) */
static __attribute__((noinline)) void inertia_to_parent_add_perm(int code, const real *R, const real *p,
                                                                 const real *J, real *out)
{
    switch (code) {
    case 3: CRBA_INERTIA_TO_PARENT(3); break;
    case 4: CRBA_INERTIA_TO_PARENT(4); break;
    case 5: CRBA_INERTIA_TO_PARENT(5); break;
    case 6: CRBA_INERTIA_TO_PARENT(6); break;
    case 7: CRBA_INERTIA_TO_PARENT(7); break;
    case 8: CRBA_INERTIA_TO_PARENT(8); break;
    case 9: CRBA_INERTIA_TO_PARENT(9); break;
    case 10: CRBA_INERTIA_TO_PARENT(10); break;
    default: CRBA_INERTIA_TO_PARENT(11); break;
    }
}

static inline void inertia_to_parent_add_code(int code, const real *R, const real *p, const real *J, real *out)
{
    if (code >= 3 && code <= 11)
        inertia_to_parent_add_perm(code, R, p, J, out);
    else  /* 0…2: a turn about e_k; −1: general */
        mb_inertia_to_parent_add_kind(code, R, p, J, out);
}
#undef CRBA_INERTIA_TO_PARENT

/* S_kᵀ F: a pick when column k of S is a unit vector. */
static inline real subspace_dot(const mb_model *m, int k, const real *F)
{
    const int s = m->dof_unit[k];
    const double *S = m->S + 6 * k;
    return s >= 0 ? F[s] : S[0] * F[0] + S[1] * F[1] + S[2] * F[2] + S[3] * F[3] + S[4] * F[4] + S[5] * F[5];
}

/* mb_crba on the tree's poses at q already in d->R, d->p (mb_tree_poses, or mb_body_states) */
#ifndef MB_LANE_BUILD
MB_CLONES_AVX2
#endif
MB_LANES_STATIC void MB_NAME(mb_crba_posed)(const mb_model *m, mb_data *d, real *H)
{
    const int nb = m->nb, nv = m->nv;
    real *Ic = d->Ic;
    for (int k = 0; k < MB_NI * nb; k++)
        Ic[k] = MB_SPLAT(m->inertia[k]);
    for (int i = nb - 1; i >= 0; i--)  /* composite inertias, leaves to root */
        if (m->parent[i] >= 0)
            inertia_to_parent_add_code(m->turn_code[i], d->R + 9 * i, d->p + 3 * i, Ic + MB_NI * i,
                                       Ic + MB_NI * m->parent[i]);
#ifdef MB_LANE_BUILD
    /* the lanes' own H (aba_lanes.c: crba_group) was zeroed with its workspace, made for this model and
     * this batch, and no kernel writes its structural zeros: clearing it again for every group of states
     * was 8 % of a Talos batch (perf) */
    if (H != d->H)
#endif
        memset(H, 0, sizeof(real) * nv * nv);
    for (int i = 0; i < nb; i++)
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            real F[6];
            if (m->dof_unit[k] >= 0)  /* F = Ic_i S_k */
                composite_column(Ic + MB_NI * i, m->dof_unit[k], F);
            else
                mb_composite_mul(Ic + MB_NI * i, m->S + 6 * k, F);
            real *row = H + (long)nv * k;                    /* row k, left of the diagonal */
            for (int k2 = m->v_start[i]; k2 <= k; k2++)
                row[k2] = H[(long)nv * k2 + k] = subspace_dot(m, k2, F);
            for (int j = i; m->parent[j] >= 0;) {  /* F = Xup_jᵀ F, one joint nearer the root */
                mb_force_to_parent_turn(m->turn_code[j], 0, d->R + 9 * j, d->p + 3 * j, F, F);
                j = m->parent[j];
                for (int k2 = m->v_start[j]; k2 < m->v_start[j] + m->nv_joint[j]; k2++)
                    row[k2] = H[(long)nv * k2 + k] = subspace_dot(m, k2, F);
            }
        }
    for (int k = 0; k < nv; k++)  /* the rotors on the diagonal */
        H[(long)nv * k + k] += m->armature[k];
}

MB_LANES_STATIC void MB_NAME(mb_crba)(const mb_model *m, mb_data *d, const real *q, real *H)
{
    mb_tree_poses_inline(m, q, d->R, d->p);
    MB_NAME(mb_crba_posed)(m, d, H);
}
