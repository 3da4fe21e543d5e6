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

#include "core.h"

#ifndef MB_LANE_BUILD
long mb_aba_derivatives_scratch(const mb_model *m)
{
    return mb_rnea_derivatives_scratch(m) + mb_minv_world_scratch(m) + 2L * m->nv * m->nv + 2L * m->nv +
           (m->nv + 3L * m->nb) / 2 + 2;
}
#endif

/* a1 −= x1 row, a2 −= x2 row */
static inline void axpy2(long n, real x1, real x2, const real *restrict row, real *restrict a1,
                         real *restrict a2)
{
    for (long r = 0; r < n; r++) {
        a1[r] -= x1 * row[r];
        a2[r] -= x2 * row[r];
    }
}

/* o1 = −Minv T1, o2 = −Minv T2 for nv × nv row-major matrices, Minv symmetric.  Column c of
 * ∂τ/∂q and ∂τ/∂q̇ is zero but for the joints on c's path to the root and in c's subtree
 * (rnea_derivatives.c), so row c of (Minv T)ᵀ = Σ_k T[k][c] Minv[k][:] sums only those rows
 * (named by the tree, not by testing for zeros); then one transpose each. */
#ifdef MB_LANE_BUILD
MB_LANES_FMA_TARGET
#else
MB_CLONES_AVX2  /* AVX2 + FMA where the CPU has them */
#endif
static void minus_products(const mb_model *m, const int *cols, const int *first, const int *count,
                           const real *Minv, const real *T1, const real *T2, real *o1, real *o2)
{
    const long n = m->nv;
    for (int b = 0; b < m->nb; b++)
        for (int c = m->v_start[b]; c < m->v_start[b] + m->nv_joint[b]; c++) {
            real *a1 = o1 + n * c, *a2 = o2 + n * c;
            memset(a1, 0, sizeof(real) * n);
            memset(a2, 0, sizeof(real) * n);
            for (int t = first[b]; t < first[b] + count[b]; t++) {
                const int k = cols[t];
                axpy2(n, T1[n * k + c], T2[n * k + c], Minv + n * k, a1, a2);
            }
            for (int p = m->parent[b]; p >= 0; p = m->parent[p])
                for (int k = m->v_start[p]; k < m->v_start[p] + m->nv_joint[p]; k++)
                    axpy2(n, T1[n * k + c], T2[n * k + c], Minv + n * k, a1, a2);
        }
    for (long r = 0; r < n; r++)
        for (long c = r + 1; c < n; c++) {
            real t = o1[n * r + c];
            o1[n * r + c] = o1[n * c + r], o1[n * c + r] = t;
            t = o2[n * r + c];
            o2[n * r + c] = o2[n * c + r], o2[n * c + r] = t;
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
    int *cols = (int *)(work + mb_minv_world_scratch(m)), *first = cols + nv, *count = first + m->nb;
    const int st = MB_NAME(mb_minv_world)(m, d, work, w->J, w->Yc, Minv);
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
    mb_subtree_columns(m, cols, first, count, count + m->nb);
    minus_products(m, cols, first, count, Minv, dtau_dq, dtau_dqd, dqdd_dq, dqdd_dqd);
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
