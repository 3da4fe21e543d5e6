/* rnea_derivatives_lanes.c — ∂τ/∂q, ∂τ/∂q̇ and M (rnea_derivatives.c) on MB_LANES states at once:
 * SIMD over states, for batches.
 *
 * Not a second algorithm: rnea_derivatives.c's forward pass (from the world poses on) and backward
 * pass compiled again with `real` a vector of doubles (lanes.h), the joint poses of poses.h, and
 * the gather of a group of states into lanes and the scatter of the three matrices out of them.
 * Lane-wise IEEE arithmetic in the scalar source's order, so every lane is the single call's result
 * bit for bit (tests/test_derivatives.py checks).  Built twice, like aba_lanes.c: as itself (SSE2
 * or NEON, 2 lanes) and by rnea_derivatives_lanes_avx2.c (4 lanes; its backward pass with FMA, as
 * the scalar backward's AVX2 clone is), picked by py_derivatives.c with the lanes of aba_lanes.c.
 */
#ifndef MB_RNEAD_LANES_IMPL
#define MB_RNEAD_LANES_IMPL mb_rnead_lanes_baseline
#define MB_LANES_BACKWARD_TARGET
#endif
#define MB_LANE_BUILD 1

#include <stdint.h>

#include "derivatives_lanes.h"
#include "poses.h"
#include "rnea_derivatives.c"

/* scratch: the passes' pieces, the poses (R, p, R0, p0), the inputs and the three matrices */
static long lane_count(const mb_model *m)
{
    return mb_rnea_derivatives_scratch_lanes(m) + 24L * m->nb + m->nq + 2L * m->nv + 3L * m->nv * m->nv;
}

static size_t scratch_bytes(const mb_model *m)
{
    return sizeof(real) * (size_t)lane_count(m);
}

/* Lane l of dst[k] = src[l][k] for k < n, and back. */
static void gather(const double *const *src, int n, real *dst)
{
    for (int l = 0; l < MB_LANES; l++)
        for (int k = 0; k < n; k++)
            dst[k][l] = src[l][k];
}

static void scatter(const real *src, long n, double *const *dst)
{
    for (int l = 0; l < MB_LANES; l++)
        for (long k = 0; k < n; k++)
            dst[l][k] = src[k][l];
}

static void group(const mb_model *m, void *scratch, const double *const *q, const double *const *qd,
                  const double *const *qdd, double *const *dq, double *const *dqd, double *const *M)
{
    const int nb = m->nb, nv = m->nv;
    real *s = scratch;
    const rnead_lanes w = mb_rnead_layout_lanes(m, s);
    real *R = s + mb_rnea_derivatives_scratch_lanes(m), *p = R + 9 * nb, *R0 = p + 3 * nb, *p0 = R0 + 9 * nb;
    real *ql = p0 + 3 * nb, *qdl = ql + m->nq, *xl = qdl + nv, *D1 = xl + nv, *D2 = D1 + (long)nv * nv,
         *D3 = D2 + (long)nv * nv;
    gather(q, m->nq, ql);
    gather(qd, nv, qdl);
    gather(qdd, nv, xl);
    mb_tree_poses_inline(m, ql, R, p);
    for (int i = 0; i < nb; i++)  /* jcalc.c: mb_world_poses */
        if (m->parent[i] < 0)
            mb_pose_copy(R + 9 * i, p + 3 * i, R0 + 9 * i, p0 + 3 * i);
        else
            mb_pose_compose(R0 + 9 * m->parent[i], p0 + 3 * m->parent[i], R + 9 * i, p + 3 * i, R0 + 9 * i,
                            p0 + 3 * i);
    mb_rnead_forward_posed_lanes(m, &w, R0, p0, qdl, xl, NULL);
    mb_rnead_backward_lanes(m, &w, NULL, D1, D2, D3);
    scatter(D1, (long)nv * nv, dq);
    scatter(D2, (long)nv * nv, dqd);
    scatter(D3, (long)nv * nv, M);
}

const mb_rnead_lanes_impl MB_RNEAD_LANES_IMPL = {MB_LANES, scratch_bytes, group};
