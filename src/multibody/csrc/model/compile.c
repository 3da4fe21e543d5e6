/* compile.c — the model compile step: every derived table of the constant model (model.h),
 * computed once from the given ones, as MuJoCo's mj_setConst derives its constants.
 *
 *   given (the boundary copies them from the Python Model): parent, jtype, q/v starts and counts,
 *       tree_R, tree_p, axis, pitch, inertia, S, armature, dof_parent, a_grav, body_names
 *   derived here:
 *       inertia6        the 10-parameter inertia as a 6×6 matrix (mcI)
 *       axis_kind       joint axis exactly e_k (revolute, prismatic)
 *       pose_kind       Xup_i a turn about e_k only (revolute about e_k, no tree rotation)
 *       tree_R_exact    tree_R with a signed permutation's rounding residues (|x| ≤ 2⁻⁵², the cosine
 *                       of the double nearest π/2 is 6.1e-17) set to 0: URDF's rpy of π/2 multiples
 *       turn_code       pose_kind, or Xup_i a turn about e_k after such a permutation (revolute about e_k),
 *                       or a prismatic joint's tree rotation a turn about a coordinate axis
 *       unit_handover   which of aba.c's hand-over copies a one-dof unit-axis joint takes (+27: a
 *                       revolute joint whose p = tree_p is exactly 0)
 *       aba_tree        has a child / is its parent's child of largest index (aba.c pass 2: where IA
 *                       starts from the body's own inertia instead of a copy of it)
 *       dof_axis/unit   column k of S is ±e_s / e_s
 *       planar, plnr…   the planar tables (planar.c decides and fills them)
 *       sub_cols, sub_first, sub_count  the subtree columns of M⁻¹ (minv.c: mb_subtree_columns),
 *                       made here once instead of on every mb_minv call
 *       dfs_preorder, sub_slot, free_root  the tree's order and M⁻¹'s P blocks, a free root (minv.c),
 *                       once instead of on every call (Talos: ~600 instructions a call)
 *
 * Only exact tests (== 1.0, == 0.0) decide the kinds, so a kind never changes a result: it picks
 * the same product with fewer operations (aba.c, jcalc's elementary rotations).  The one rounding
 * decision is tree_R_exact's: a tree rotation whose entries are exactly ±1 or within 2⁻⁵² of 0, one
 * ±1 in each row and column, is taken as the signed permutation it rounds (every kernel's poses
 * use it, poses.h), so such joints' poses move by ≤ 2⁻⁵² — the rounding of the angle itself. */
#include <math.h>
#include <stdlib.h>

#include "common/core.h"
#include "common/spatial.h"

/* Is T a rotation that is a signed permutation once entries within 2⁻⁵² of 0 are 0 (every row and
 * column one entry exactly ±1, determinant +1)?  Out: that permutation, or T itself. */
static int signed_permutation(const double *T, double *out)
{
    int ones = 0;
    for (int r = 0; r < 9; r++) {
        out[r] = fabs(T[r]) <= 0x1p-52 ? 0.0 : T[r];
        ones += fabs(out[r]) == 1.0;
    }
    for (int r = 0; r < 3; r++) {  /* one ±1 per row and per column */
        int row = 0, col = 0;
        for (int c = 0; c < 3; c++)
            row += out[3 * r + c] != 0.0, col += out[3 * c + r] != 0.0;
        ones -= row != 1 || col != 1 ? 100 : 0;
    }
    const double det = out[0] * (out[4] * out[8] - out[5] * out[7]) - out[1] * (out[3] * out[8] - out[5] * out[6]) +
                       out[2] * (out[3] * out[7] - out[4] * out[6]);
    if (ones == 3 && det == 1.0)
        return 1;
    for (int r = 0; r < 9; r++)
        out[r] = T[r];
    return 0;
}

/* The row ρ of the signed permutation T whose entry in column k is ±1. */
static int row_of(const double *T, int k)
{
    return T[k] != 0.0 ? 0 : T[3 + k] != 0.0 ? 1 : 2;
}

/* A prismatic joint's R is its tree rotation T: 3 + 4t (turn_code's ρ = k = t) when row and column t
 * of T are ±e_t exactly (T a turn about e_t, or a signed permutation), −1 otherwise. */
static int constant_turn(const double *T)
{
    for (int t = 0; t < 3; t++) {
        const int a = (t + 1) % 3, b = (t + 2) % 3;
        if (fabs(T[4 * t]) == 1.0 && T[3 * t + a] == 0.0 && T[3 * t + b] == 0.0 && T[3 * a + t] == 0.0 &&
            T[3 * b + t] == 0.0)
            return 3 + 4 * t;
    }
    return -1;
}

int mb_model_compile(mb_model *m)
{
    const int nb = m->nb, nv = m->nv;
    m->inertia6 = malloc(sizeof(double) * 45 * (nb ? nb : 1));  /* and tree_R_exact */
    m->axis_kind = malloc(sizeof(int) * (nb ? nb : 1));
    m->pose_kind = malloc(sizeof(int) * 4 * (nb ? nb : 1));  /* and turn_code, unit_handover, aba_tree */
    m->dof_unit = malloc(sizeof(int) * (nv ? nv : 1));
    m->dof_axis = malloc(sizeof(int) * (nv ? nv : 1));
    m->sub_cols = malloc(sizeof(int) * ((size_t)nv + 3 * (size_t)nb + 1));
    int *slot = malloc(sizeof(int) * (nb ? nb : 1));  /* mb_subtree_columns' room, freed below */
    if (!m->inertia6 || !m->axis_kind || !m->pose_kind || !m->dof_unit || !m->dof_axis || !m->sub_cols || !slot) {
        free(slot);
        return MB_NO_MEMORY;
    }
    m->tree_R_exact = m->inertia6 + 36 * (nb ? nb : 1), m->turn_code = m->pose_kind + (nb ? nb : 1);
    m->unit_handover = m->turn_code + (nb ? nb : 1), m->aba_tree = m->unit_handover + (nb ? nb : 1);
    m->sub_first = m->sub_cols + nv, m->sub_count = m->sub_first + nb, m->sub_slot = m->sub_count + nb;
    mb_subtree_columns(m, m->sub_cols, m->sub_first, m->sub_count, slot);
    free(slot);
    m->dfs_preorder = 1;
    for (int i = 1; i < nb && m->dfs_preorder; i++) {
        int a = i - 1;  /* i's parent must be i − 1 or one of its ancestors */
        while (a >= 0 && a != m->parent[i])
            a = m->parent[a];
        m->dfs_preorder = m->parent[i] < 0 || a == m->parent[i];
    }
    for (int i = 0; i < nb; i++)  /* parents come first in either order */
        m->sub_slot[i] = !m->dfs_preorder ? i : m->parent[i] < 0 ? 0 : m->sub_slot[m->parent[i]] + 1;
    for (int i = 0; i < nb; i++) {
        mb_inertia_to_matrix(m->inertia + MB_NI * i, m->inertia6 + 36 * i);
        const double *a = m->axis + 3 * i;
        m->axis_kind[i] = -1;
        if (m->jtype[i] == MB_REVOLUTE || m->jtype[i] == MB_PRISMATIC)
            for (int k = 0; k < 3; k++)
                if (a[k] == 1.0 && a[(k + 1) % 3] == 0.0 && a[(k + 2) % 3] == 0.0)
                    m->axis_kind[i] = k;
        int tree_identity = 1;
        for (int r = 0; r < 9; r++)
            tree_identity &= m->tree_R[9 * i + r] == (r % 4 == 0 ? 1.0 : 0.0);
        m->pose_kind[i] = tree_identity && m->jtype[i] == MB_REVOLUTE ? m->axis_kind[i] : -1;
        const int perm = signed_permutation(m->tree_R + 9 * i, m->tree_R_exact + 9 * i);
        const int k = m->axis_kind[i];
        m->turn_code[i] = m->pose_kind[i] >= 0 ? m->pose_kind[i]
                          : perm && m->jtype[i] == MB_REVOLUTE && k >= 0 ? 3 + 3 * row_of(m->tree_R_exact + 9 * i, k) + k
                          : m->jtype[i] == MB_PRISMATIC ? constant_turn(m->tree_R_exact + 9 * i)
                                                        : -1;
    }
    for (int k = 0; k < nv; k++) {  /* is column k of S a unit vector e_s? */
        const double *S = m->S + 6 * k;
        int s = -1, nonzero = 0;
        for (int r = 0; r < 6; r++)
            if (S[r] != 0.0)
                nonzero++, s = fabs(S[r]) == 1.0 ? r : -2;
        m->dof_axis[k] = nonzero == 1 && s >= 0 ? s : -1;
        m->dof_unit[k] = m->dof_axis[k] >= 0 && S[s] == 1.0 ? s : -1;
    }
    m->free_root = nb > 0 && m->parent[0] < 0 && m->nv_joint[0] == 6;
    for (int i = 1; i < nb && m->free_root; i++)
        m->free_root = m->parent[i] >= 0;
    for (int e = 0; e < 6 && m->free_root; e++)
        m->free_root = m->dof_unit[m->v_start[0] + e] == e;
    for (int i = 0; i < nb; i++) {  /* ABA's hand-over of a one-dof joint with S = ±e_s (the rotor inertia is
        * tested where it is used: a run's implicit damping hands ABA this model with another armature) */
        const int vs = m->v_start[i], s = m->nv_joint[i] == 1 ? m->dof_axis[vs] : -1, code = m->turn_code[i];
        m->unit_handover[i] = s < 0 ? -1
                              : code < 3   ? (code == s ? s : 3 + s)  /* a turn about e_s, or a general pose */
                              : s < 3      ? 6 + code                 /* a permuted turn (its k is s) */
                                           : 18 + 3 * (s - 3) + (code - 3) / 4;  /* a slide under a turn */
        const double *t = m->tree_p + 3 * i;  /* a revolute joint's p is its tree_p (poses.h): exactly 0 here */
        if (m->jtype[i] == MB_REVOLUTE && s >= 0 && s < 3 && t[0] == 0.0 && t[1] == 0.0 && t[2] == 0.0)
            m->unit_handover[i] += 27;
    }
    for (int i = 0; i < nb; i++)
        m->aba_tree[i] = 0;
    for (int i = nb - 1; i >= 0; i--) {  /* children come after their parent: the first seen from the end is the last */
        const int par = m->parent[i];
        if (par >= 0 && !(m->aba_tree[par] & MB_ABA_HAS_CHILD))
            m->aba_tree[i] |= MB_ABA_FIRST_CHILD, m->aba_tree[par] |= MB_ABA_HAS_CHILD;
    }
    return mb_planar_setup(m) ? MB_OK : MB_NO_MEMORY;
}
