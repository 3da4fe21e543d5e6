/* minv.c — the inverse of the joint-space inertia M⁻¹(q) without forming M
 * (Carpentier, "Analytical inverse of the joint space inertia matrix", 2018; the idea of
 * Pinocchio's computeMinverse): ABA run on all unit torques at once, with no velocity and no
 * gravity.  Column c of M⁻¹ is the q̈ that τ = e_c causes.
 *
 * World (base) coordinates throughout, so that nothing is carried from body to body: motion
 * subspaces J_k = X_0i⁻¹ S_k, articulated inertias IA_i (6×6), forces and accelerations add as
 * they are.
 *   backward, i = nb−1 … 0 (IA_i = Y_i plus its children's articulated inertias):
 *       U_i = IA_i J_i,  D_i = J_iᵀ U_i + armature_i
 *       row block i of M⁻¹, columns c of subtree(i):  D_i⁻¹ (e_c − J_iᵀ F[:, c])
 *           (F[:, c]: the bias force that τ = e_c in the subtree below leaves on body i)
 *       F[:, c] += U_i M⁻¹[i, c];   IA_λ += IA_i − U_i D_i⁻¹ U_iᵀ
 *   forward, i = 0 … nb−1, columns c ≥ v_start(i) (the upper triangle):
 *       M⁻¹[i, c] −= D_i⁻¹ U_iᵀ P_λ[:, c];   P_i[:, c] = P_λ[:, c] + J_i M⁻¹[i, c]
 *           (P_i[:, c]: body i's acceleration under τ = e_c)
 *   M⁻¹ is symmetric: the lower triangle is the upper's mirror.
 * F needs one 6-vector per column, not per body: in world coordinates a child's F[:, c] is its
 * parent's, and sibling subtrees have disjoint columns.  The columns of a subtree are a range of
 * `cols`, the columns in depth-first order of the bodies (the identity when the bodies are
 * numbered depth-first, as URDF and MJCF trees are).
 */
#include <string.h>

#include "core.h"
#include "spatial.h"

long mb_minv_world_scratch(const mb_model *m)
{
    return 6L * m->nv * (m->nb + 1) + (m->nv + 3L * m->nb) / 2 + 2;
}

long mb_minv_scratch(const mb_model *m)
{
    return 6L * m->nv + (long)MB_NI * m->nb + mb_minv_world_scratch(m);
}

/* cols: the columns in depth-first preorder of the bodies (children in index order); the subtree
 * of body i owns cols[first[i] … first[i] + count[i]).  slot: nb ints of room. */
void mb_subtree_columns(const mb_model *m, int *cols, int *first, int *count, int *slot)
{
    const int nb = m->nb;
    for (int i = 0; i < nb; i++)
        count[i] = m->nv_joint[i];
    for (int i = nb - 1; i >= 0; i--)
        if (m->parent[i] >= 0)
            count[m->parent[i]] += count[i];
    int next_root = 0;
    for (int i = 0; i < nb; i++) {  /* parents first: each child takes the next range of its parent */
        const int par = m->parent[i];
        if (par < 0)
            first[i] = next_root, next_root += count[i];
        else
            first[i] = slot[par], slot[par] += count[i];
        slot[i] = first[i] + m->nv_joint[i];
        for (int e = 0; e < m->nv_joint[i]; e++)
            cols[first[i] + e] = m->v_start[i] + e;
    }
}

int mb_minv(const mb_model *m, mb_data *d, double *scratch, const double *q, double *Minv)
{
    double *J = scratch, *Y = J + 6L * m->nv;
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    memset(Y, 0, sizeof(double) * MB_NI * m->nb);
    for (int i = 0; i < m->nb; i++) {
        mb_inertia_to_parent_add(d->R0 + 9 * i, d->p0 + 3 * i, m->inertia + MB_NI * i, Y + MB_NI * i);
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++)
            mb_motion_to_parent(d->R0 + 9 * i, d->p0 + 3 * i, m->S + 6 * k, J + 6 * k);
    }
    return mb_minv_world(m, d, Y + MB_NI * m->nb, J, Y, Minv);
}

MB_CLONES_AVX2
int mb_minv_world(const mb_model *m, mb_data *d, double *scratch, const double *J, const double *Y, double *Minv)
{
    const int nb = m->nb, nv = m->nv;
    double *F = scratch, *P = F + 6L * nv;  /* P: per body, column c at 6c */
    int *cols = (int *)(P + 6L * nv * nb), *first = cols + nv, *count = first + nb;
    mb_subtree_columns(m, cols, first, count, count + nb);
    memset(Minv, 0, sizeof(double) * nv * nv);
    memset(F, 0, sizeof(double) * 6 * nv);
    for (int i = 0; i < nb; i++)
        mb_inertia_to_matrix(Y + MB_NI * i, d->IA + 36 * i);

    for (int i = nb - 1; i >= 0; i--) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const int *sub = cols + first[i], ns = count[i];  /* the subtree's columns, own ones first */
        double *IA = d->IA + 36 * i, *Dinv = d->Dinv + 36 * i, D[36];
        for (int k = vs; k < vs + nj; k++) {
            double *Uk = d->U + 6 * k;
            for (int r = 0; r < 6; r++)
                Uk[r] = mb_dot6(IA + 6 * r, J + 6 * k);
            for (int k2 = vs; k2 < vs + nj; k2++)
                D[nj * (k - vs) + (k2 - vs)] = mb_dot6(J + 6 * k2, Uk) + (k == k2 ? m->armature[k] : 0.0);
        }
        if (nj > 0 && !mb_invert_small(D, nj, Dinv))  /* a fixed joint has no block */
            return mb_pivot_status(D, nj * nj);
        for (int e = 0; e < nj; e++) {
            double *row = Minv + (long)nv * (vs + e);
            for (int e2 = 0; e2 < nj; e2++)
                row[vs + e2] = Dinv[nj * e + e2];
        }
        if (nj == 1) {  /* most joints: scalar, and no small array to store and reload */
            const double w = -Dinv[0];
            for (int t = 1; t < ns; t++)
                Minv[(long)nv * vs + sub[t]] = w * mb_dot6(J + 6 * vs, F + 6 * sub[t]);
        } else for (int t = nj; t < ns; t++) {
            const int c = sub[t];
            double JF[6];
            for (int e2 = 0; e2 < nj; e2++)
                JF[e2] = mb_dot6(J + 6 * (vs + e2), F + 6 * c);
            for (int e = 0; e < nj; e++) {
                double s = 0.0;
                for (int e2 = 0; e2 < nj; e2++)
                    s += Dinv[nj * e + e2] * JF[e2];
                Minv[(long)nv * (vs + e) + c] = -s;
            }
        }
        if (par < 0)
            continue;
        for (int t = 0; t < ns; t++) {
            const int c = sub[t];
            double *f = F + 6 * c;
            for (int e = 0; e < nj; e++) {
                const double x = Minv[(long)nv * (vs + e) + c];
                const double *Ue = d->U + 6 * (vs + e);
                for (int r = 0; r < 6; r++)
                    f[r] += Ue[r] * x;
            }
        }
        double *IAp = d->IA + 36 * par;
        for (int r = 0; r < 36; r++)
            IAp[r] += IA[r];
        for (int e = 0; e < nj; e++)
            for (int e2 = 0; e2 < nj; e2++) {
                const double w = Dinv[nj * e + e2];
                const double *Ue = d->U + 6 * (vs + e), *Ue2 = d->U + 6 * (vs + e2);
                for (int r = 0; r < 6; r++) {
                    const double x = Ue[r] * w;
                    for (int c = 0; c < 6; c++)
                        IAp[6 * r + c] -= x * Ue2[c];
                }
            }
    }

    for (int i = 0; i < nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const double *Dinv = d->Dinv + 36 * i, *Pp = P + 6L * nv * par;
        double *Pi = P + 6L * nv * i;
        if (count[i] == nj) {  /* no dofs below: P_i has no reader */
            if (par >= 0 && nj == 1)
                for (int c = vs; c < nv; c++)
                    Minv[(long)nv * vs + c] -= Dinv[0] * mb_dot6(d->U + 6 * vs, Pp + 6 * c);
            else if (par >= 0)
                for (int c = vs; c < nv; c++) {
                    double Ux[6];
                    for (int e = 0; e < nj; e++)
                        Ux[e] = mb_dot6(d->U + 6 * (vs + e), Pp + 6 * c);
                    for (int e = 0; e < nj; e++) {
                        double s = 0.0;
                        for (int e2 = 0; e2 < nj; e2++)
                            s += Dinv[nj * e + e2] * Ux[e2];
                        Minv[(long)nv * (vs + e) + c] -= s;
                    }
                }
            continue;
        }
        for (int c = vs; c < nv; c++) {
            double *pc = Pi + 6 * c;
            if (par >= 0 && nj == 1) {  /* one pass: M⁻¹[i, c], then P_i = P_λ + J_i M⁻¹[i, c] */
                const double *x = Pp + 6 * c, *Ji = J + 6 * vs;
                const double y = Minv[(long)nv * vs + c] - Dinv[0] * mb_dot6(d->U + 6 * vs, x);
                Minv[(long)nv * vs + c] = y;
                for (int r = 0; r < 6; r++)
                    pc[r] = x[r] + Ji[r] * y;
                continue;
            } else if (par >= 0) {
                const double *x = Pp + 6 * c;
                double Ux[6];
                for (int e = 0; e < nj; e++)
                    Ux[e] = mb_dot6(d->U + 6 * (vs + e), x);
                for (int e = 0; e < nj; e++) {
                    double s = 0.0;
                    for (int e2 = 0; e2 < nj; e2++)
                        s += Dinv[nj * e + e2] * Ux[e2];
                    Minv[(long)nv * (vs + e) + c] -= s;
                }
                for (int r = 0; r < 6; r++)
                    pc[r] = x[r];
            } else {
                for (int r = 0; r < 6; r++)
                    pc[r] = 0.0;
            }
            for (int e = 0; e < nj; e++) {
                const double y = Minv[(long)nv * (vs + e) + c];
                const double *Je = J + 6 * (vs + e);
                for (int r = 0; r < 6; r++)
                    pc[r] += Je[r] * y;
            }
        }
    }
    for (int r = 0; r < nv; r++)
        for (int c = 0; c < r; c++)
            Minv[(long)nv * r + c] = Minv[(long)nv * c + r];
    return MB_OK;
}
