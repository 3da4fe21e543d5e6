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
 * A free joint at the only root (S = 1): J_0 = X_0⁻¹ has a closed-form inverse, and the root's rows
 * and accelerations come from its articulated inertia's inverse, P_0[:, c] = IA_0⁻¹ (J_0⁻ᵀ e_c − F[:, c]),
 * M⁻¹[0, c] = J_0⁻¹ P_0[:, c] (the same numbers to rounding; invert_spd6).  IA is symmetric and read
 * by its upper triangle only (SYM6): the lanes build updates only that (21 entries a row sweep, not 36).  Nothing is zeroed first
 * in depth-first trees: each entry's first write is its value or the start of its sum.
 * F needs one 6-vector per column, not per body: in world coordinates a child's F[:, c] is its
 * parent's, and sibling subtrees have disjoint columns.  The columns of a subtree are a range of
 * `cols`, the columns in depth-first order of the bodies (the identity when the bodies are
 * numbered depth-first, as URDF and MJCF trees are).
 *
 * mb_minv_world is written in `real` (lanes.h): derivatives_lanes.c compiles it again over vector
 * lanes of states for batches of aba_derivatives.
 */
#include <string.h>

#include "common/core.h"
#include "common/spatial.h"

#ifdef MB_LANE_BUILD
static inline real abs_lanes(real x)  /* fabs in every lane: the sign bit cleared */
{
    return (real)((real_mask)x & ~(real_mask)MB_SPLAT(-0.0));
}

static inline real select_lanes(real_mask t, real a, real b)  /* t ? a : b in every lane */
{
    return (real)(((real_mask)a & t) | ((real_mask)b & ~t));
}

/* mb_invert_small (aba.c: Gauss-Jordan with partial pivoting) on every lane at once: each lane
 * picks its own pivot row and swaps it in by selects, and a row that the scalar one skips (its entry
 * in the pivot column is 0) is kept by a select, so every lane does the scalar one's arithmetic in
 * its order.  1: done; 0: some lane's pivot is too small (the caller goes lane by lane, which
 * decides singularity). */
static int invert_small_all_lanes(const real *D, int n, real *Dinv)
{
    real A[6][12], scale = MB_SPLAT(0.0);
    for (int r = 0; r < n; r++) {
        const real a = abs_lanes(D[n * r + r]);
        scale = select_lanes(a > scale, a, scale);  /* fmax: a NaN leaves scale as it was */
        for (int c = 0; c < n; c++) {
            A[r][c] = D[n * r + c];
            A[r][n + c] = MB_SPLAT(r == c ? 1.0 : 0.0);
        }
    }
    for (int c = 0; c < n; c++) {
        real best = abs_lanes(A[c][c]);
        real_mask piv = {0};  /* each lane's pivot row: the first largest */
        piv += c;
        for (int r = c + 1; r < n; r++) {
            const real a = abs_lanes(A[r][c]);
            const real_mask more = a > best;
            best = select_lanes(more, a, best);
            piv = (piv & ~more) | ((piv * 0 + r) & more);
        }
        if (!mb_all(best > 1e-14 * scale))
            return 0;
        for (int r = c + 1; r < n; r++) {  /* swap rows c and piv, lane by lane */
            const real_mask here = piv == r;
            if (mb_all(here == 0))
                continue;
            for (int k = 0; k < 2 * n; k++) {
                const real t = A[c][k];
                A[c][k] = select_lanes(here, A[r][k], t);
                A[r][k] = select_lanes(here, t, A[r][k]);
            }
        }
        const real dd = A[c][c];
        for (int k = 0; k < 2 * n; k++)
            A[c][k] /= dd;
        for (int r = 0; r < n; r++)
            if (r != c) {
                const real e = A[r][c];
                const real_mask used = e != 0.0;
                for (int k = 0; k < 2 * n; k++)
                    A[r][k] = select_lanes(used, A[r][k] - e * A[c][k], A[r][k]);
            }
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            Dinv[n * r + c] = A[r][n + c];
    return 1;
}

/* D⁻¹ as the scalar inversion makes it in each lane: all lanes at once, or where a pivot is too
 * small lane by lane through it; 0 if any lane's block is singular (the group then runs state by state). */
static int invert_small_lanes(const real *D, int n, real *Dinv)
{
    if (n == 1 && mb_all(D[0] > 0.0)) {  /* mb_invert_small's own 1 × 1 case, in every lane at once */
        Dinv[0] = 1.0 / D[0];
        return 1;
    }
    if (n > 1 && invert_small_all_lanes(D, n, Dinv))
        return 1;
    for (int l = 0; l < MB_LANES; l++) {
        double Dl[36], Il[36];
        for (int k = 0; k < n * n; k++)
            Dl[k] = D[k][l];
        if (!mb_invert_small(Dl, n, Il))
            return 0;
        for (int k = 0; k < n * n; k++)
            Dinv[k][l] = Il[k];
    }
    return 1;
}
#define INVERT_SMALL invert_small_lanes
#define PIVOT_STATUS(D, n) MB_SINGULAR
#else
#define INVERT_SMALL mb_invert_small
#define PIVOT_STATUS mb_pivot_status
#endif

/* (Ro, po) = (Rp, pp) ∘ (R, p) (spatial.h: mb_pose_compose) for an R of the structure `turn` (model.h:
 * turn_code; a compile-time constant at each call): Ro's products with R's structural zeros left out
 * and a turn's R_kk = 1 not multiplied (spatial.h: mb_turn_zero, mb_r_times), the remaining terms
 * summed in mb_pose_compose's order: the same numbers (a left-out term only added ±0), 18 products
 * where it takes 27. */
MB_FOLD void pose_compose_pat(int turn, const real *Rp, const real *pp, const real *R, const real *p, real *Ro,
                              real *po)
{
    MB_UNROLL for (int r = 0; r < 3; r++) {
        const real a[3] = {Rp[3 * r], Rp[3 * r + 1], Rp[3 * r + 2]};
        po[r] = pp[r] + a[0] * p[0] + a[1] * p[1] + a[2] * p[2];
        MB_UNROLL for (int c = 0; c < 3; c++) {
            real t[3];
            int mask = 0;
            MB_UNROLL for (int j = 0; j < 3; j++) {
                const int zero = mb_turn_zero(turn, j, c);
                mask |= !zero << j;
                t[j] = zero ? MB_SPLAT(0.0) : mb_r_times(turn, R, j, c, a[j]);
            }
            Ro[3 * r + c] = mb_sum3(mask, t[0], t[1], t[2]);
        }
    }
}

/* The base-frame poses (R0, p0) of the bodies from their poses in their parents (R, p) (jcalc.c:
 * mb_world_poses), each composed by its turn_code's structure (pose_compose_pat; −1: in full) */
static inline void world_poses_turn(const mb_model *m, const real *R, const real *p, real *R0, real *p0)
{
    for (int i = 0; i < m->nb; i++) {
        const int par = m->parent[i];
        const real *Ri = R + 9 * i, *pi = p + 3 * i;
        real *Ro = R0 + 9 * i, *po = p0 + 3 * i;
        if (par < 0) {
            mb_pose_copy(Ri, pi, Ro, po);
            continue;
        }
        const real *Rp = R0 + 9 * par, *pp = p0 + 3 * par;
        switch (m->turn_code[i]) {
#define POSE_CASE(T)                                         \
    case T:                                                  \
        pose_compose_pat(T, Rp, pp, Ri, pi, Ro, po);         \
        break;
            POSE_CASE(0) POSE_CASE(1) POSE_CASE(2) POSE_CASE(3) POSE_CASE(4) POSE_CASE(5) POSE_CASE(6)
            POSE_CASE(7) POSE_CASE(8) POSE_CASE(9) POSE_CASE(10) POSE_CASE(11)
#undef POSE_CASE
        default:
            mb_pose_compose(Rp, pp, Ri, pi, Ro, po);
        }
    }
}

/* 6×6 spatial inertia (row-major) of a world inertia (spatial.h: mb_inertia_to_matrix, in real) */
static inline void world_inertia_to_matrix(const real *J, real *M)
{
    const real z = MB_SPLAT(0.0), m = J[0], h0 = J[1], h1 = J[2], h2 = J[3];
    const real B[6][6] = {
        {J[4], J[5], J[6], z, -h2, h1},
        {J[5], J[7], J[8], h2, z, -h0},
        {J[6], J[8], J[9], -h1, h0, z},
        {z, h2, -h1, m, z, z},
        {-h2, z, h0, z, m, z},
        {h1, -h0, z, z, z, m}};
#ifdef MB_LANE_BUILD
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++)  /* the upper triangle: all that is read (SYM6) or updated in lanes */
#pragma GCC unroll 6
        for (int c = r; c < 6; c++)
            M[6 * r + c] = B[r][c];
#else
    for (int r = 0; r < 6; r++)  /* all of it: add_minus_scaled6's vectors sweep whole rows */
        for (int c = 0; c < 6; c++)
            M[6 * r + c] = B[r][c];
#endif
}

/* 6-vectors for one-dof joints: dst = (dst + src) − s u (dst += u x: spatial.h).  For one state as a
 * vector of four and one of two (GCC keeps these short loops scalar); the same operations entry by
 * entry, so the same bits as in lanes. */
#ifndef MB_LANE_BUILD
typedef double v4u __attribute__((vector_size(32), aligned(8)));
typedef double v2u __attribute__((vector_size(16), aligned(8)));
#endif
static inline void add_minus_scaled6(real *restrict dst, const real *restrict src, real s, const real *restrict u,
                                     int r)
{
#ifndef MB_LANE_BUILD
    (void)r;  /* all six: two vector operations; the entries left of the diagonal are never read */
    *(v4u *)dst = (*(v4u *)dst + *(const v4u *)src) - s * *(const v4u *)u;
    *(v2u *)(dst + 4) = (*(v2u *)(dst + 4) + *(const v2u *)(src + 4)) - s * *(const v2u *)(u + 4);
#else
#pragma GCC unroll 6
    for (int c = r; c < 6; c++)  /* the upper triangle's part of row r: IA is read there only (SYM6) */
        dst[c] = (dst[c] + src[c]) - s * u[c];
#endif
}

/* Entry (r, c) of a symmetric 6×6 kept by its upper triangle (row-major: the entries left of the
 * diagonal are stale) */
#define SYM6(A, r, c) ((A)[(r) <= (c) ? 6 * (r) + (c) : 6 * (c) + (r)])

/* row r of the symmetric A (upper triangle) times x: mb_dot6's order */
static inline real sym_dot6(const real *A, int r, const real *x)
{
    return SYM6(A, r, 0) * x[0] + SYM6(A, r, 1) * x[1] + SYM6(A, r, 2) * x[2] + SYM6(A, r, 3) * x[3] +
           SYM6(A, r, 4) * x[4] + SYM6(A, r, 5) * x[5];
}

/* out = x + u y, 6 entries (out is not x: another body's P) */
static inline void sum_scaled6(real *restrict out, const real *restrict x, const real *restrict u, real y)
{
#ifndef MB_LANE_BUILD
    *(v4u *)out = *(const v4u *)x + *(const v4u *)u * y;
    *(v2u *)(out + 4) = *(const v2u *)(x + 4) + *(const v2u *)(u + 4) * y;
#else
    for (int r = 0; r < 6; r++)
        out[r] = x[r] + u[r] * y;
#endif
}

/* Rows … r_end − 1 of M⁻¹ are final: a streamed batch in lanes writes them out now
 * (derivatives_lanes.c: minv_stream_rows); nothing in the scalar build and in ∂ABA. */
#ifdef MB_LANE_BUILD
#define MINV_ROWS_FINAL(r_end)                          \
    do {                                                \
        if (d->stream_to)                               \
            minv_stream_rows(d, Minv, nv, (r_end));     \
    } while (0)
#else
#define MINV_ROWS_FINAL(r_end) ((void)0)
#endif
/* Whether the lower triangle is written (the mirror of the upper): always in the scalar build; in
 * lanes not where the caller reads it from the upper triangle (derivatives_lanes.c: upper_only, the
 * AVX-512 batches of M⁻¹, whose group then writes about half as much into its lanes, 92 → 47 kB
 * for Talos, and whose forward pass keeps its working set in the first-level cache) */
#ifdef MB_LANE_BUILD
#define MIRROR_ROWS (!d->upper_only)
#else
#define MIRROR_ROWS 1
#endif
#ifndef MINV_STREAM_EARLY  /* derivatives_lanes.c: rows out before the end (1) or all at the end (0) */
#define MINV_STREAM_EARLY 0
#endif

/* x > y in every lane (the scalar build: x > y), and the larger of x and y lane by lane */
#ifdef MB_LANE_BUILD
#define ALL_ABOVE(x, y) mb_all((x) > (y))
#define MAX_REAL(x, y) select_lanes((x) > (y), (x), (y))
#else
#define ALL_ABOVE(x, y) ((x) > (y))
#define MAX_REAL(x, y) ((x) > (y) ? (x) : (y))
#endif

/* A = IA⁻¹ for a symmetric positive definite 6×6 IA (row-major, read by its upper triangle), by IA = L D Lᵀ (L unit lower
 * triangular) and A = L⁻ᵀ D⁻¹ L⁻¹: about 150 products where Gauss-Jordan on the 6×12 block takes
 * 430, and no pivot search (a positive definite matrix needs none).  0 when a pivot is not above
 * 1e-14 times the largest diagonal entry (mb_invert_small's test), in any lane. */
static int invert_spd6(const real *IA, real *A)
{
    real L[6][6], W[6][6], dinv[6], scale = IA[0];  /* W[r][k] = L[r][k] d_k */
    for (int k = 1; k < 6; k++)
        scale = MAX_REAL(IA[7 * k], scale);
    for (int j = 0; j < 6; j++) {
        real dj = IA[7 * j];
        for (int k = 0; k < j; k++)
            dj -= L[j][k] * W[j][k];
        if (!ALL_ABOVE(dj, 1e-14 * scale))  /* a NaN fails too */
            return 0;
        dinv[j] = 1.0 / dj;
        for (int r = j + 1; r < 6; r++) {
            real w = IA[6 * j + r];  /* (r, j) of the upper triangle */
            for (int k = 0; k < j; k++)
                w -= L[r][k] * W[j][k];
            W[r][j] = w, L[r][j] = w * dinv[j];
        }
    }
    real Li[6][6];  /* L⁻¹, unit lower triangular: column c by forward substitution */
    for (int c = 0; c < 6; c++) {
        Li[c][c] = MB_SPLAT(1.0);
        for (int r = c + 1; r < 6; r++) {
            real s = -L[r][c];
            for (int k = c + 1; k < r; k++)
                s -= L[r][k] * Li[k][c];
            Li[r][c] = s;
        }
    }
    for (int r = 0; r < 6; r++)  /* A_rc = Σ_{k ≥ max(r, c)} L⁻¹_kr d_k⁻¹ L⁻¹_kc, the upper half mirrored */
        for (int c = r; c < 6; c++) {
            real s = Li[c][r] * dinv[c];
            for (int k = c + 1; k < 6; k++)
                s += Li[k][r] * dinv[k] * Li[k][c];
            A[6 * r + c] = A[6 * c + r] = s;
        }
    return 1;
}

#ifndef MB_LANE_BUILD

long mb_minv_world_scratch(const mb_model *m)
{
    return 6L * m->nv * (m->nb + 1);
}

long mb_minv_scratch(const mb_model *m)  /* J, Y, mb_minv_world's */
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
    world_poses_turn(m, d->R, d->p, d->R0, d->p0);
    for (int i = 0; i < m->nb; i++) {
        /* Y_i summed onto −0 (x + −0 = x for every x, so the compiler drops the sums): no memset and
         * no adds, the same numbers as onto 0 but for the sign of an exact zero */
        double *Yi = Y + MB_NI * i;
        for (int k = 0; k < MB_NI; k++)
            Yi[k] = -0.0;
        mb_inertia_to_parent_add(d->R0 + 9 * i, d->p0 + 3 * i, m->inertia + MB_NI * i, Yi);
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            const int s = m->dof_axis[k];  /* J_k = X_0i⁻¹ S_k: a signed column of X_0i⁻¹ for S_k = ±e_s */
            if (s >= 0)
                mb_unit_motion_to_parent(d->R0 + 9 * i, d->p0 + 3 * i, s, m->S[6 * k + s] < 0.0, J + 6 * k);
            else
                mb_motion_to_parent(d->R0 + 9 * i, d->p0 + 3 * i, m->S + 6 * k, J + 6 * k);
        }
    }
    /* the subtree columns are the model's (compile.c), not rebuilt on every call */
    return mb_minv_world(m, d, Y + MB_NI * m->nb, J, Y, m->sub_cols, m->sub_first, m->sub_count, Minv);
}
#endif

#ifndef MB_LANE_BUILD
MB_CLONES_AVX2
#endif
MB_LANES_STATIC int MB_NAME(mb_minv_world)(const mb_model *m, mb_data *d, real *scratch, const real *J,
                                           const real *Y, const int *cols, const int *first,
                                           const int *count, real *Minv)
{
    const int nb = m->nb, nv = m->nv;
    real *F = scratch, *P = F + 6L * nv;  /* P: per slot (below), column c at 6c */
    /* P_i is read by i's children only.  With the bodies in depth-first order (URDF and MJCF trees),
     * every body between i and a descendant of i is below i: one P per depth serves, which keeps the
     * forward pass's P in the caches (Talos: 11 depths, not 33 bodies); any other order, one per body.
     * The order and the slots are the model's (compile.c: dfs_preorder, sub_slot). */
    const int preorder = m->dfs_preorder, *slot = m->sub_slot;
    /* Nothing is zeroed first.  M⁻¹: in depth-first order the subtree of body i owns the columns
     * vs … vs + count − 1, which the backward pass writes in i's rows; the forward pass writes the
     * rest of the upper triangle (its "M⁻¹ −= …" starts from 0 there) and the mirror the lower.  In
     * any other order the columns are scattered: all of M⁻¹ starts at 0, as it used to.  F: a
     * column's F starts at the body that owns the column (below). */
    if (!preorder)
        memset(Minv, 0, sizeof(real) * nv * nv);
    /* A tree with a free joint at its root and no other root (floating robots): S = 1 there, so J
     * (6 × 6) is X_0⁻¹ = [R 0; [p]R R], invertible in closed form, and with D = Jᵀ IA J the root's
     * rows D⁻¹ (e_c − Jᵀ F_c) are J⁻¹ P_c with P_c = IA⁻¹ (J⁻ᵀ e_c − F_c): the root's
     * acceleration under τ = e_c, which the forward pass needs anyway.  One symmetric 6×6 inverse
     * (invert_spd6) instead of D's Gauss-Jordan, and per column 63 products instead of 108. */
    int free_root = m->free_root;  /* the structure is the model's (compile.c); the armature a run may change */
    for (int e = 0; e < 6 && free_root; e++)
        free_root = m->armature[m->v_start[0] + e] == 0.0;
    /* IA_i is made from Y_i where it is first needed: by the first hand-over into it (its child of
     * largest index, model.h: aba_tree), or at i itself if it has no child; and one IA per depth
     * serves as one P does (a body's IA is live from its first child's hand-over until its own
     * turn, when only its descendants run): Talos 11 blocks written just before use, not 33 up front */
#define IA_OF(i) (d->IA + 36 * (preorder ? slot[i] : (i)))

    for (int i = nb - 1; i >= 0; i--) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const int *sub = cols + first[i], ns = count[i];  /* the subtree's columns, own ones first */
        real *IA = IA_OF(i), *Dinv = d->Dinv + 36 * i, D[36];
        if (!(m->aba_tree[i] & MB_ABA_HAS_CHILD))
            world_inertia_to_matrix(Y + MB_NI * i, IA);
        if (i == 0 && free_root) {
            real A[36];
            if (!invert_spd6(IA, A))
                return PIVOT_STATUS(IA, 36);
            const real *Jr = J + 6 * vs;  /* J_k = [R_k; (p × R)_k], J_{3+k} = [0; R_k] */
            real *P0 = P + 6L * nv * slot[0];
            for (int t = 0; t < ns; t++) {
                const int c = sub[t];
                real x[6], *pc = P0 + 6 * c;
                if (t < 3)  /* J⁻ᵀ e_k = [R_k; 0] */
                    for (int r = 0; r < 3; r++)
                        x[r] = Jr[6 * (3 + t) + 3 + r], x[3 + r] = MB_SPLAT(0.0);
                else if (t < 6)  /* J⁻ᵀ e_{3+k} = [(p × R)_k; R_k] */
                    for (int r = 0; r < 3; r++)
                        x[r] = Jr[6 * (t - 3) + 3 + r], x[3 + r] = Jr[6 * t + 3 + r];
                else
                    for (int r = 0; r < 6; r++)
                        x[r] = -F[6 * c + r];
                for (int r = 0; r < 6; r++)
                    pc[r] = A[6 * r] * x[0] + A[6 * r + 1] * x[1] + A[6 * r + 2] * x[2] + A[6 * r + 3] * x[3] +
                            A[6 * r + 4] * x[4] + A[6 * r + 5] * x[5];
                for (int k = 0; k < 3; k++) {  /* J⁻¹ = [Rᵀ 0; (p × R)ᵀ Rᵀ] */
                    const real *Rk = Jr + 6 * (3 + k) + 3, *PRk = Jr + 6 * k + 3;
                    const real w = Rk[0] * pc[0] + Rk[1] * pc[1] + Rk[2] * pc[2];
                    const real w3 = (Rk[0] * pc[3] + Rk[1] * pc[4] + Rk[2] * pc[5]) +
                                    (PRk[0] * pc[0] + PRk[1] * pc[1] + PRk[2] * pc[2]);
                    /* final numbers: the mirror entry too (in the root's own block the later of the
                     * two writes wins in both places) */
                    Minv[(long)nv * (vs + k) + c] = w, Minv[(long)nv * (vs + 3 + k) + c] = w3;
                    if (MIRROR_ROWS)
                        Minv[(long)nv * c + vs + k] = w, Minv[(long)nv * c + vs + 3 + k] = w3;
                }
            }
            continue;
        }
        for (int k = vs; k < vs + nj; k++) {
            real *Uk = d->U + 6 * k;
            for (int r = 0; r < 6; r++)
                Uk[r] = sym_dot6(IA, r, J + 6 * k);
            for (int k2 = vs; k2 < vs + nj; k2++)
            {
                real e = mb_dot6(J + 6 * k2, Uk);
                if (k == k2)
                    e += m->armature[k];
                D[nj * (k - vs) + (k2 - vs)] = e;
            }
        }
#ifndef MB_LANE_BUILD
        if (nj == 1 && D[0] > 0.0)  /* mb_invert_small's 1 × 1 case without the call */
            Dinv[0] = 1.0 / D[0];
        else
#endif
        if (nj > 0 && !INVERT_SMALL(D, nj, Dinv))  /* a fixed joint has no block */
            return PIVOT_STATUS(D, nj * nj);
        for (int e = 0; e < nj; e++) {
            real *row = Minv + (long)nv * (vs + e);
            for (int e2 = 0; e2 < nj; e2++)
                row[vs + e2] = Dinv[nj * e + e2];
        }
        if (nj == 1 && par >= 0) {  /* most joints: the row's entries and F's update in one sweep over the
                                     * subtree's columns (F[:, c] += U_i M⁻¹[i, c] below, here while F[:, c]
                                     * is at hand: the same operations, the same bits) */
            const real w = -Dinv[0];
            real u[6];
            for (int r = 0; r < 6; r++)
                u[r] = d->U[6 * vs + r];
#ifdef MB_LANE_BUILD  /* (in the single call GCC's code for this split took more instructions on solo12) */
            if (preorder)  /* the subtree's columns are vs … vs + ns − 1 (mb_subtree_columns): no index loads */
                for (int c = vs + 1; c < vs + ns; c++) {
                    real *f = F + 6 * c;
                    const real x = w * mb_dot6(J + 6 * vs, f);
                    Minv[(long)nv * vs + c] = x;
                    mb_add_scaled6(f, u, x);
                }
            else
#endif
                for (int t = 1; t < ns; t++) {
                    real *f = F + 6 * sub[t];
                    const real x = w * mb_dot6(J + 6 * vs, f);
                    Minv[(long)nv * vs + sub[t]] = x;
                    mb_add_scaled6(f, u, x);
                }
        } else if (nj == 1) {  /* a root: no F to hand on */
            const real w = -Dinv[0];
            for (int t = 1; t < ns; t++)
                Minv[(long)nv * vs + sub[t]] = w * mb_dot6(J + 6 * vs, F + 6 * sub[t]);
        } else for (int t = nj; t < ns; t++) {
            const int c = sub[t];
            real JF[6];
            for (int e2 = 0; e2 < nj; e2++)
                JF[e2] = mb_dot6(J + 6 * (vs + e2), F + 6 * c);
            for (int e = 0; e < nj; e++) {
                real s = MB_SPLAT(0.0);
                for (int e2 = 0; e2 < nj; e2++)
                    s += Dinv[nj * e + e2] * JF[e2];
                Minv[(long)nv * (vs + e) + c] = -s;
            }
        }
        if (par < 0)
            continue;
        if (nj == 1) {  /* most joints: U_i and D⁻¹ in registers, IA_λ += IA_i − U_i D⁻¹ U_iᵀ in one sweep
                         * (the same operations as the general case below, in its order: the same bits) */
            const real w = Dinv[0];
            real u[6], uw[6];
            for (int r = 0; r < 6; r++)
                u[r] = d->U[6 * vs + r], uw[r] = u[r] * w;
            const real x0 = Minv[(long)nv * vs + sub[0]];
            for (int r = 0; r < 6; r++)  /* the joint's own column: F starts here (0 + u x: its bits) */
                F[6 * sub[0] + r] = MB_SPLAT(0.0) + u[r] * x0;
            /* (the subtree's other columns took U_i M⁻¹[i, c] in the sweep above) */
            real *IAp = IA_OF(par);
            if (m->aba_tree[i] & MB_ABA_FIRST_CHILD)
                world_inertia_to_matrix(Y + MB_NI * par, IAp);
#pragma GCC unroll 6
            for (int r = 0; r < 6; r++)  /* unrolled: each row's columns r … 5 a constant count */
                add_minus_scaled6(IAp + 6 * r, IA + 6 * r, uw[r], u, r);
            continue;
        }
        for (int t = 0; t < nj; t++)  /* the joint's own columns: F starts here */
            for (int r = 0; r < 6; r++)
                F[6 * sub[t] + r] = MB_SPLAT(0.0);
        for (int t = 0; t < ns; t++) {
            const int c = sub[t];
            real *f = F + 6 * c;
            for (int e = 0; e < nj; e++) {
                const real x = Minv[(long)nv * (vs + e) + c];
                const real *Ue = d->U + 6 * (vs + e);
                for (int r = 0; r < 6; r++)
                    f[r] += Ue[r] * x;
            }
        }
        real *IAp = IA_OF(par);
        if (m->aba_tree[i] & MB_ABA_FIRST_CHILD)
            world_inertia_to_matrix(Y + MB_NI * par, IAp);
#ifdef MB_LANE_BUILD
        const int lower = 0;  /* the upper triangle only: the lanes never write the rest (SYM6) */
#else
        const int lower = 1;
#endif
        for (int r = 0; r < 6; r++)
            for (int c = lower ? 0 : r; c < 6; c++)
                IAp[6 * r + c] += IA[6 * r + c];
        for (int e = 0; e < nj; e++)
            for (int e2 = 0; e2 < nj; e2++) {
                const real w = Dinv[nj * e + e2];
                const real *Ue = d->U + 6 * (vs + e), *Ue2 = d->U + 6 * (vs + e2);
                for (int r = 0; r < 6; r++) {
                    const real x = Ue[r] * w;
                    for (int c = lower ? 0 : r; c < 6; c++)
                        IAp[6 * r + c] -= x * Ue2[c];
                }
            }
    }

    /* Rows final before the end: in depth-first order, with one-dof joints below a free root or a
     * parent, the rows of body i are final once i's forward step is done (the later bodies write
     * rows further down, the mirror loop at the end has nothing to do), the free root's after the
     * backward pass. */
    int rows_early = preorder && MINV_STREAM_EARLY;
    for (int i = 0; i < nb && rows_early; i++)
        rows_early = (i == 0 && free_root) || (m->nv_joint[i] == 1 && m->parent[i] >= 0);
    for (int i = free_root; i < nb; i++) {  /* a free root's rows and P are made */
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        if (rows_early)
            MINV_ROWS_FINAL(vs);  /* the rows of the bodies before i */
        const real *Dinv = d->Dinv + 36 * i, *Pp = P + 6L * nv * (par < 0 ? 0 : slot[par]);
        real *Pi = P + 6L * nv * slot[i];
        /* columns vs … c_end − 1 of i's rows hold the backward pass's numbers, the others 0 (not stored) */
        const int c_end = preorder ? vs + count[i] : nv;
#define MINV_START(e, c) ((c) < c_end ? Minv[(long)nv * (vs + (e)) + (c)] : MB_SPLAT(0.0))
        if (par < 0)  /* a root: its rows beyond its tree are 0 (other trees') */
            for (int e = 0; e < nj; e++)
                for (int c = c_end; c < nv; c++)
                    Minv[(long)nv * (vs + e) + c] = MB_SPLAT(0.0);
        /* a one-dof joint's U, J and D⁻¹ in registers for the sweep over the columns (the stores to
         * M⁻¹ and P would make the compiler reload them) */
        real U1[6] = {0}, J1[6] = {0}, Dinv1 = MB_SPLAT(0.0);
        if (nj == 1) {
            Dinv1 = Dinv[0];
            for (int r = 0; r < 6; r++)
                U1[r] = d->U[6 * vs + r], J1[r] = J[6 * vs + r];
        }
        if (par >= 0 && nj == 1) {  /* most joints: two sweeps, from the backward pass's numbers and from 0 */
            real *row = Minv + (long)nv * vs;
            /* the row's numbers are final here: each goes to its mirror entry (column vs) at once */
            if (count[i] == nj) {  /* no dofs below: P_i has no reader */
                for (int c = vs; c < c_end; c++) {
                    row[c] = row[c] - Dinv1 * mb_dot6(U1, Pp + 6 * c);
                    if (MIRROR_ROWS)
                        Minv[(long)nv * c + vs] = row[c];
                }
                for (int c = c_end; c < nv; c++) {
                    row[c] = MB_SPLAT(0.0) - Dinv1 * mb_dot6(U1, Pp + 6 * c);
                    if (MIRROR_ROWS)
                        Minv[(long)nv * c + vs] = row[c];
                }
                continue;
            }
            /* column vs (the joint's own): its P_i has no reader (i's children read columns past their
             * own, which are past vs) */
            row[vs] = row[vs] - Dinv1 * mb_dot6(U1, Pp + 6 * vs);
            for (int c = vs + 1; c < c_end; c++) {  /* one pass: M⁻¹[i, c], then P_i = P_λ + J_i M⁻¹[i, c] */
                const real *x = Pp + 6 * c;
                const real y = row[c] - Dinv1 * mb_dot6(U1, x);
                row[c] = y;
                if (MIRROR_ROWS)
                    Minv[(long)nv * c + vs] = y;
                sum_scaled6(Pi + 6 * c, x, J1, y);
            }
            for (int c = c_end; c < nv; c++) {
                const real *x = Pp + 6 * c;
                const real y = MB_SPLAT(0.0) - Dinv1 * mb_dot6(U1, x);
                row[c] = y;
                if (MIRROR_ROWS)
                    Minv[(long)nv * c + vs] = y;
                sum_scaled6(Pi + 6 * c, x, J1, y);
            }
            continue;
        }
        if (count[i] == nj) {  /* no dofs below: P_i has no reader */
            if (par >= 0)
                for (int c = vs; c < nv; c++) {
                    real Ux[6];
                    for (int e = 0; e < nj; e++)
                        Ux[e] = mb_dot6(d->U + 6 * (vs + e), Pp + 6 * c);
                    for (int e = 0; e < nj; e++) {
                        real s = MB_SPLAT(0.0);
                        for (int e2 = 0; e2 < nj; e2++)
                            s += Dinv[nj * e + e2] * Ux[e2];
                        Minv[(long)nv * (vs + e) + c] = MINV_START(e, c) - s;
                    }
                }
            continue;
        }
        for (int c = vs; c < nv; c++) {
            real *pc = Pi + 6 * c;
            if (par >= 0) {
                const real *x = Pp + 6 * c;
                real Ux[6];
                for (int e = 0; e < nj; e++)
                    Ux[e] = mb_dot6(d->U + 6 * (vs + e), x);
                for (int e = 0; e < nj; e++) {
                    real s = MB_SPLAT(0.0);
                    for (int e2 = 0; e2 < nj; e2++)
                        s += Dinv[nj * e + e2] * Ux[e2];
                    Minv[(long)nv * (vs + e) + c] = MINV_START(e, c) - s;
                }
                for (int r = 0; r < 6; r++)
                    pc[r] = x[r];
            } else {
                for (int r = 0; r < 6; r++)
                    pc[r] = MB_SPLAT(0.0);
            }
            for (int e = 0; e < nj; e++) {
                const real y = Minv[(long)nv * (vs + e) + c];
                const real *Je = J + 6 * (vs + e);
                for (int r = 0; r < 6; r++)
                    pc[r] += Je[r] * y;
            }
        }
#undef MINV_START
    }
    /* M⁻¹ is symmetric: the lower triangle is the upper's mirror (one-dof joints below a parent and
     * a free root wrote theirs with the rows) */
    for (int i = 0; i < nb && MIRROR_ROWS; i++) {
        const int vs = m->v_start[i];
        if ((m->nv_joint[i] == 1 && m->parent[i] >= 0) || (i == 0 && free_root))
            continue;
        for (int r = vs; r < vs + m->nv_joint[i]; r++)
            for (int c = r + 1; c < nv; c++)
                Minv[(long)nv * c + r] = Minv[(long)nv * r + c];
    }
    MINV_ROWS_FINAL(nv);
    return MB_OK;
}
