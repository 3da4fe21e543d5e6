/* aba_derivatives.c — ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ of forward dynamics
 * (Carpentier & Mansard, RSS 2018, §IV-C).
 *
 * Differentiating ID(q, q̇, FD(q, q̇, τ)) = τ gives ∂FD/∂x = −M⁻¹ ∂ID/∂x at q̈ = FD(q, q̇, τ).
 * One set of world-frame quantities serves all of it:
 *   RNEA's forward pass at q̈ = 0 (rnea_derivatives.c): poses, J, v, world inertias Y, f at q̈ = 0
 *   M⁻¹(q) from J and Y                        (minv.c)
 *   C = τ at q̈ = 0 (the bias), q̈ = M⁻¹ (τ − C)   (forward dynamics without a second tree pass)
 *   the forward pass moved to q̈, then ∂τ/∂q, ∂τ/∂q̇ (rnea_derivatives.c)
 *   ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹.
 * ∂/∂q is in the tangent space of mb.integrate (rnea_derivatives.c).
 *
 * Written in `real` (lanes.h) from the forward pass on: derivatives_lanes.c compiles it again over
 * vector lanes of states for batches.
 */
#include <string.h>

#include "common/core.h"

#ifndef MB_LANE_BUILD
long mb_aba_derivatives_scratch(const mb_model *m)
{
    return mb_rnea_derivatives_scratch(m) + mb_minv_world_scratch(m) + 2L * m->nv * m->nv + 2L * m->nv +
           m->nv / 2 + 1;  /* the last: nv ints (ks; the subtree columns are the model's, compile.c) */
}
#endif

/* o1 = −Minv T1, o2 = −Minv T2 for nv × nv row-major matrices, Minv symmetric.  Column c of
 * ∂τ/∂q and ∂τ/∂q̇ is zero but for the joints on c's path to the root and in c's subtree
 * (rnea_derivatives.c), so column c of the products, Σ_k T[k][c] Minv[k][:], sums only those rows
 * of Minv (named by the tree, not by testing for zeros; `ks`: nv ints of room for their row offsets n·k).
 * Entries of a column are summed in registers over the whole list and stored once, so the sums
 * stay out of memory and each row of Minv read serves both products: eight entries at a time (in
 * lanes each a vector of states, 16 sums in registers; for one state two vectors of four along the
 * row); the rows left over go four, two, one at a time.  Not inlined: in its caller the sums would not all stay in
 * registers.  Every entry is
 * the same chain 0 − x·m − x·m … in the order of the list in both builds: the same bits.
 * In lanes o1, o2 may be T1, T2 themselves (a column of the products reads only that column of T):
 * a column is summed into `col` (2·nv of room) and then stored, so the group's workspace needs no
 * two more nv × nv matrices of lanes (it stays in the L2 cache). */
#ifndef MB_LANE_BUILD
typedef double v4 __attribute__((vector_size(32)));                 /* four entries along a row */
typedef double v4u __attribute__((vector_size(32), aligned(8)));    /* …read where a row has them */
typedef double v2 __attribute__((vector_size(16)));
typedef double v2u __attribute__((vector_size(16), aligned(8)));
MB_CLONES_AVX2  /* AVX2 where the CPU has it */
#else
/* rows r0 … r0 + w − 1 (w ≤ 8) of column c of both products: sums in registers, stored once in
 * col1, col2 (the column, entries r0 …) */
static inline __attribute__((always_inline)) void column_block_lanes(const int *ks, int nk, int c, long r0, int w,
                                                                     const real *Minv, const real *T1,
                                                                     const real *T2, real *col1, real *col2)
{
    real s1[8] = {0}, s2[8] = {0};
    for (int t = 0; t < nk; t++) {
        const long k = ks[t];
        const real x1 = T1[k + c], x2 = T2[k + c], *row = Minv + k + r0;
        for (int e = 0; e < w; e++) {
            s1[e] -= x1 * row[e];
            s2[e] -= x2 * row[e];
        }
    }
    for (int e = 0; e < w; e++)
        col1[r0 + e] = s1[e], col2[r0 + e] = s2[e];
}
#endif
__attribute__((noinline)) static void minus_products(const mb_model *m, const int *cols, const int *first, const int *count, int *ks,
                           const real *Minv, const real *T1, const real *T2, real *o1, real *o2, real *col)
{
    const long n = m->nv;
    for (int b = 0; b < m->nb; b++) {
        if (m->nv_joint[b] == 0)
            continue;
        /* the rows that column c of T reaches: b's subtree, then its ancestors (bounds in locals:
         * the stores to ks would make the compiler reload them from the model at every entry) */
        int nk = 0;
        for (int t = first[b], end = first[b] + count[b]; t < end; t++)
            ks[nk++] = (int)n * cols[t];
        for (int p = m->parent[b]; p >= 0; p = m->parent[p])
            for (int k = m->v_start[p], end = m->v_start[p] + m->nv_joint[p]; k < end; k++)
                ks[nk++] = (int)n * k;
        for (int c = m->v_start[b]; c < m->v_start[b] + m->nv_joint[b]; c++) {
#ifdef MB_LANE_BUILD
            long r0 = 0;
            for (; r0 + 8 <= n; r0 += 8)
                column_block_lanes(ks, nk, c, r0, 8, Minv, T1, T2, col, col + n);
            if (r0 + 4 <= n)
                column_block_lanes(ks, nk, c, r0, 4, Minv, T1, T2, col, col + n), r0 += 4;
            if (r0 + 2 <= n)
                column_block_lanes(ks, nk, c, r0, 2, Minv, T1, T2, col, col + n), r0 += 2;
            if (r0 < n)
                column_block_lanes(ks, nk, c, r0, 1, Minv, T1, T2, col, col + n);
            for (long r = 0; r < n; r++)
                o1[n * r + c] = col[r], o2[n * r + c] = col[n + r];
#else
            (void)col;
            long r0 = 0;
            for (; r0 + 8 <= n; r0 += 8) {
                v4 a_lo = {0}, a_hi = {0}, b_lo = {0}, b_hi = {0};
                for (int t = 0; t < nk; t++) {
                    const long k = ks[t];
                    const double x1 = T1[k + c], x2 = T2[k + c];
                    const v4 lo = *(const v4u *)(Minv + k + r0), hi = *(const v4u *)(Minv + k + r0 + 4);
                    a_lo -= x1 * lo, a_hi -= x1 * hi;
                    b_lo -= x2 * lo, b_hi -= x2 * hi;
                }
                for (int e = 0; e < 4; e++) {
                    o1[n * (r0 + e) + c] = a_lo[e], o1[n * (r0 + 4 + e) + c] = a_hi[e];
                    o2[n * (r0 + e) + c] = b_lo[e], o2[n * (r0 + 4 + e) + c] = b_hi[e];
                }
            }
            if (r0 + 4 <= n) {  /* the rows left: four, two, one at a time (a scalar tail costs as much as the rest) */
                v4 a = {0}, b = {0};
                for (int t = 0; t < nk; t++) {
                    const long k = ks[t];
                    const v4 row = *(const v4u *)(Minv + k + r0);
                    a -= T1[k + c] * row, b -= T2[k + c] * row;
                }
                for (int e = 0; e < 4; e++)
                    o1[n * (r0 + e) + c] = a[e], o2[n * (r0 + e) + c] = b[e];
                r0 += 4;
            }
            if (r0 + 2 <= n) {
                v2 a = {0}, b = {0};
                for (int t = 0; t < nk; t++) {
                    const long k = ks[t];
                    const v2 row = *(const v2u *)(Minv + k + r0);
                    a -= T1[k + c] * row, b -= T2[k + c] * row;
                }
                for (int e = 0; e < 2; e++)
                    o1[n * (r0 + e) + c] = a[e], o2[n * (r0 + e) + c] = b[e];
                r0 += 2;
            }
            if (r0 < n) {
                double s1 = 0.0, s2 = 0.0;
                for (int t = 0; t < nk; t++) {
                    const long k = ks[t];
                    s1 -= T1[k + c] * Minv[k + r0];
                    s2 -= T2[k + c] * Minv[k + r0];
                }
                o1[n * r0 + c] = s1, o2[n * r0 + c] = s2;
            }
#endif
        }
    }
}

/* Everything after RNEA's forward pass at q̈ = 0 (the top); scratch laid out as mb_aba_derivatives_scratch. */
static int MB_NAME(mb_aba_derivatives_after_forward)(const mb_model *m, mb_data *d, real *scratch,
                                                              const mb_rnead *w, const real *tau,
                                                              const real *fext, real *dqdd_dq, real *dqdd_dqd,
                                                              real *Minv)
{
    const int nv = m->nv;
    real *dtau_dq = scratch + mb_rnea_derivatives_scratch(m), *dtau_dqd = dtau_dq + (long)nv * nv;
    real *qdd = dtau_dqd + (long)nv * nv, *rhs = qdd + nv, *work = rhs + nv;
    int *ks = (int *)(work + mb_minv_world_scratch(m));  /* minus_products' row offsets */
    /* the subtree columns, for M⁻¹ and the products: made once by mb_model_compile (compile.c) */
    const int *cols = m->sub_cols, *first = m->sub_first, *count = m->sub_count;
    const int st = MB_NAME(mb_minv_world)(m, d, work, w->J, w->Yc, cols, first, count, Minv);
    if (st != MB_OK)
        return st;
    MB_NAME(mb_rnead_bias)(m, w, fext, rhs);
    for (int k = 0; k < nv; k++)
        rhs[k] = tau[k] - rhs[k];
    for (int r = 0; r < nv; r++) {
        real s = MB_SPLAT(0.0);
        for (int c = 0; c < nv; c++)
            s += Minv[(long)nv * r + c] * rhs[c];
        qdd[r] = s;
    }
    MB_NAME(mb_rnead_add_qdd)(m, w, qdd);
    MB_NAME(mb_rnead_backward)(m, w, fext, dtau_dq, dtau_dqd, NULL);
    minus_products(m, cols, first, count, ks, Minv, dtau_dq, dtau_dqd, dqdd_dq, dqdd_dqd,
                   qdd);  /* q̈ and rhs, used up: the room for a column */
    return MB_OK;
}

#ifndef MB_LANE_BUILD
int mb_aba_derivatives(const mb_model *m, mb_data *d, double *scratch, const double *q, const double *qd,
                       const double *tau, const double *fext, double *dqdd_dq, double *dqdd_dqd, double *Minv)
{
    const mb_rnead w = mb_rnead_layout(m, scratch);
    mb_rnead_forward(m, d, &w, q, qd, NULL, fext);
    return mb_aba_derivatives_after_forward(m, d, scratch, &w, tau, fext, dqdd_dq, dqdd_dqd, Minv);
}
#endif
