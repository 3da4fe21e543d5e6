/* derivatives_lanes.c — the analytic derivatives (rnea_derivatives.c, minv.c, aba_derivatives.c) on
 * MB_LANES states at once: SIMD over states, for batches.
 *
 * Not a second algorithm: those files compiled again with `real` a vector of doubles (lanes.h),
 * from the world poses on (the joint poses are poses.h's), plus the gather of a group of states
 * into lanes and the scatter of the three matrices out of them.  Lane-wise IEEE arithmetic in the
 * scalar source's order, so every lane is the single call's result bit for bit
 * (tests/test_derivatives.py checks); the small pivoted inversions of M⁻¹ pick each lane's own
 * pivots (minv.c).  (No contraction into FMA: -std=c11 keeps every product rounded, in both builds.)
 * Built like aba_lanes.c: as itself (SSE2 or NEON, 2 lanes), by derivatives_lanes_avx2.c (4 lanes)
 * and by derivatives_lanes_avx512.c (8 lanes), picked by py_derivatives.c with aba_lanes.c's lanes.
 */
#ifndef MB_DERIV_LANES_IMPL
#define MB_DERIV_LANES_IMPL mb_derivatives_lanes_baseline
#endif
#define MB_LANE_BUILD 1

#include "common/core.h"
#include "kernels/derivatives_lanes.h"
#include "model/poses.h"

/* the scalar functions the lanes call (core.h shows the lanes build only its own) */
long mb_rnea_derivatives_scratch(const mb_model *m);
long mb_minv_world_scratch(const mb_model *m);
long mb_aba_derivatives_scratch(const mb_model *m);
void mb_subtree_columns(const mb_model *m, int *cols, int *first, int *count, int *slot);
int mb_invert_small(const double *D, int n, double *Dinv);

/* the part of the workspace (data.h) that mb_minv_world uses, in lanes */
typedef struct {
    real *IA, *Dinv, *U;
} minv_lanes_ws;
#define mb_data minv_lanes_ws

#include "kernels/rnea_derivatives.c"
#include "kernels/minv.c"
#include "kernels/aba_derivatives.c"

/* scratch: the algorithm's own (mb_aba_derivatives_scratch covers ∂RNEA's), IA, Dinv and U, the
 * poses (R, p, R0, p0), the inputs and the three matrices */
static long lane_count(const mb_model *m)
{
    return mb_aba_derivatives_scratch(m) + 72L * m->nb + 6L * m->nv + 24L * m->nb + m->nq + 2L * m->nv +
           3L * m->nv * m->nv;
}

/* minv_group's: mb_minv_world's, IA, Dinv and U, the poses, q, J, Y and M⁻¹ */
static long minv_count(const mb_model *m)
{
    return mb_minv_world_scratch(m) + 72L * m->nb + 6L * m->nv + 24L * m->nb + m->nq + 6L * m->nv +
           (long)MB_NI * m->nb + (long)m->nv * m->nv;
}

static size_t scratch_bytes(const mb_model *m)
{
    const long a = lane_count(m), b = minv_count(m);
    return sizeof(real) * (size_t)(a > b ? a : b);
}


#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* 1 if every entry of every lane of x[0..n) is finite: x·0 is 0 for finite x, NaN for inf and NaN,
 * and one NaN makes the sum NaN.  Checked here, where the group's results are still in the caches,
 * rather than by a pass over the whole batch's outputs afterwards (Talos, 10 000 states: 346 MB read
 * back from memory, a quarter of the batch's time). */
static int lanes_finite(const real *x, long n)
{
    real s[4] = {MB_SPLAT(0.0), MB_SPLAT(0.0), MB_SPLAT(0.0), MB_SPLAT(0.0)};
    long k = 0;
    for (; k + 4 <= n; k += 4)
        for (int e = 0; e < 4; e++)
            s[e] += x[k + e] * 0.0;
    for (; k < n; k++)
        s[0] += x[k] * 0.0;
    return mb_every((s[0] + s[1] + s[2] + s[3]) == 0.0);
}

/* scatter with non-temporal stores, for outputs far larger than the caches: written once and not
 * read back here, so the stores skip reading each line in first (half the memory traffic) and
 * leave the caches to the kernel.  Returns lanes_finite of src (with whole lines: summed on the way).  SSE2 (every x86-64); 16-byte aligned pairs after one element
 * where a lane's row starts between two. */
static int scatter_streaming(const real *src, long n, double *const *dst)
{
#if defined(__AVX2__) && MB_LANES == 4
    /* four rows of lanes at a time, turned into four rows of states by a 4 × 4 transpose in
     * registers, when every state's row starts on a 16-byte boundary (nv² even: all or none) */
    if (!(((uintptr_t)dst[0] | (uintptr_t)dst[1] | (uintptr_t)dst[2] | (uintptr_t)dst[3]) & 15)) {
        long k = 0;
        for (; k + 4 <= n; k += 4) {
            const __m256d r0 = _mm256_load_pd((const double *)(src + k)),
                          r1 = _mm256_load_pd((const double *)(src + k + 1)),
                          r2 = _mm256_load_pd((const double *)(src + k + 2)),
                          r3 = _mm256_load_pd((const double *)(src + k + 3));
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),
                          t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            const __m256d s[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                                  _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)};
            for (int l = 0; l < 4; l++) {
                _mm_stream_pd(dst[l] + k, _mm256_castpd256_pd128(s[l]));
                _mm_stream_pd(dst[l] + k + 2, _mm256_extractf128_pd(s[l], 1));
            }
        }
        for (; k < n; k++)
            for (int l = 0; l < 4; l++)
                dst[l][k] = src[k][l];
        _mm_sfence();
        return lanes_finite(src, n);
    }
#endif
#if defined(__AVX512F__) && MB_LANES == 8
    /* Whole cache lines, one 64-byte non-temporal store each: a partly written line in the
     * write-combining buffers costs a read of it from memory, and eight rows at a time written in
     * 16-byte pieces leave many such lines (3× slower, measured).  Each block of eight entries is
     * transposed once (lanes.h); lane l's row reaches a line boundary after off[l] entries, so its
     * lines are the end of one block's row and the start of the next's (one two-source shuffle),
     * or the row itself where off[l] = 0.  The entries before the first line and after the last go
     * one by one. */
    typedef long long pick __attribute__((vector_size(64)));
    if (!(((uintptr_t)dst[0] | (uintptr_t)dst[1] | (uintptr_t)dst[2] | (uintptr_t)dst[3] | (uintptr_t)dst[4] |
           (uintptr_t)dst[5] | (uintptr_t)dst[6] | (uintptr_t)dst[7]) & 7)) {
        int off[8];
        pick join[8];  /* entries off … 7 of the earlier block's row, then 0 … off − 1 of the next's */
        long lo[8], hi[8];  /* the entries [lo, hi) of each lane go in whole lines */
        const long blocks = n / 8;
        for (int l = 0; l < 8; l++) {
            off[l] = (int)((64 - ((uintptr_t)dst[l] & 63)) & 63) / 8;
            for (int e = 0; e < 8; e++)
                join[l][e] = off[l] + e;
            lo[l] = off[l] == 0 || blocks < 2 ? 0 : off[l];
            hi[l] = off[l] == 0 ? 8 * blocks : blocks >= 2 ? 8 * (blocks - 1) + off[l] : 0;
        }
        real prev[8] = {0}, row[8], zero = MB_SPLAT(0.0);
        for (long b = 0; b < blocks; b++) {
            const long k = 8 * b;
            transpose8(src + k, row);
            for (int l = 0; l < 8; l++)  /* lanes_finite's sum, on the numbers at hand */
                zero += row[l] * 0.0;
            for (int l = 0; l < 8; l++)
                if (off[l] == 0)
                    _mm512_stream_pd(dst[l] + k, (__m512d)row[l]);
                else if (b > 0)
                    _mm512_stream_pd(dst[l] + k - 8 + off[l], (__m512d)__builtin_shuffle(prev[l], row[l], join[l]));
            for (int l = 0; l < 8; l++)
                prev[l] = row[l];
        }
        for (int l = 0; l < 8; l++) {  /* the head before the first line, the tail after the last */
            for (long k = 0; k < lo[l]; k++)
                dst[l][k] = src[k][l];
            for (long k = hi[l]; k < n; k++)
                dst[l][k] = src[k][l];
        }
        _mm_sfence();
        return mb_every(zero == 0.0) && lanes_finite(src + 8 * blocks, n - 8 * blocks);
    }
#endif
    for (int l = 0; l < MB_LANES; l++) {
        double *d = dst[l];
        long k = 0;
        if ((uintptr_t)d & 15)
            d[0] = src[0][l], k = 1;
        for (; k + 1 < n; k += 2)
            _mm_stream_pd(d + k, _mm_set_pd(src[k + 1][l], src[k][l]));
        if (k < n)
            d[k] = src[k][l];
    }
    _mm_sfence();  /* the streamed lines are visible before the batch returns */
    return lanes_finite(src, n);
}
#else
static int scatter_streaming(const real *src, long n, double *const *dst)
{
    scatter(src, n, dst);
    return lanes_finite(src, n);
}
#endif

typedef struct {
    rnead_lanes w;
    minv_lanes_ws ws;
    real *x, *qdl, *D1, *D2, *D3;  /* x: q̈ or τ */
} lanes_frame;

/* Poses of the bodies in their parents (R, p) and in the base (R0, p0) from q in lanes: jcalc.c's
 * mb_tree_poses and mb_world_poses. */
static void world_poses(const mb_model *m, const real *ql, real *R, real *p, real *R0, real *p0)
{
    mb_tree_poses_inline(m, ql, R, p);
    for (int i = 0; i < m->nb; i++)  /* jcalc.c: mb_world_poses */
        if (m->parent[i] < 0)
            mb_pose_copy(R + 9 * i, p + 3 * i, R0 + 9 * i, p0 + 3 * i);
        else
            mb_pose_compose(R0 + 9 * m->parent[i], p0 + 3 * m->parent[i], R + 9 * i, p + 3 * i, R0 + 9 * i,
                            p0 + 3 * i);
}

/* Gather the group, the poses and RNEA's forward pass at q̈ (NULL: 0). */
static lanes_frame forward(const mb_model *m, real *s, const double *const *q, const double *const *qd,
                           const double *const *x, int with_qdd)
{
    const int nb = m->nb, nv = m->nv;
    lanes_frame f;
    f.w = mb_rnead_layout_lanes(m, s);
    f.ws.IA = s + mb_aba_derivatives_scratch(m), f.ws.Dinv = f.ws.IA + 36L * nb, f.ws.U = f.ws.Dinv + 36L * nb;
    real *R = f.ws.U + 6L * nv, *p = R + 9 * nb, *R0 = p + 3 * nb, *p0 = R0 + 9 * nb, *ql = p0 + 3 * nb;
    f.qdl = ql + m->nq, f.x = f.qdl + nv, f.D1 = f.x + nv, f.D2 = f.D1 + (long)nv * nv, f.D3 = f.D2 + (long)nv * nv;
    gather(q, m->nq, ql);
    gather(qd, nv, f.qdl);
    gather(x, nv, f.x);
    world_poses(m, ql, R, p, R0, p0);
    mb_rnead_forward_posed_lanes(m, &f.w, R0, p0, f.qdl, with_qdd ? f.x : NULL, NULL);
    return f;
}

/* Write the group's three matrices to the states' outputs; 1 if all are finite (written either way). */
static int scatter3(const mb_model *m, const lanes_frame *f, double *const *o1, double *const *o2,
                    double *const *o3, int stream)
{
    const long nv2 = (long)m->nv * m->nv;
    const real *src[3] = {f->D1, f->D2, f->D3};
    double *const *dst[3] = {o1, o2, o3};
    int finite = 1;
    for (int k = 0; k < 3; k++)
        if (stream)
            finite &= scatter_streaming(src[k], nv2, dst[k]);
        else {
            scatter(src[k], nv2, dst[k]);
            finite &= lanes_finite(src[k], nv2);
        }
    return finite;
}

static int rnea_group(const mb_model *m, void *scratch, const double *const *q, const double *const *qd,
                      const double *const *qdd, double *const *dq, double *const *dqd, double *const *M,
                      int stream, int fresh, int *finite)
{
    const lanes_frame f = forward(m, scratch, q, qd, qdd, 1);
    if (fresh)  /* the backward pass writes the same entries for every state: the rest stays 0 */
        memset(f.D1, 0, sizeof(real) * 3 * m->nv * m->nv);
    mb_rnead_backward_lanes(m, &f.w, NULL, f.D1, f.D2, f.D3);
    *finite = scatter3(m, &f, dq, dqd, M, stream);
    return MB_OK;
}

static int aba_group(const mb_model *m, void *scratch, const double *const *q, const double *const *qd,
                     const double *const *tau, double *const *dq, double *const *dqd, double *const *Minv,
                     int stream, int fresh, int *finite)
{
    (void)fresh;  /* the products read only the entries of ∂τ that the backward pass writes */
    lanes_frame f = forward(m, scratch, q, qd, tau, 0);
    /* ∂q̈/∂q and ∂q̈/∂q̇ in place of ∂τ/∂q and ∂τ/∂q̇ (aba_derivatives.c's scratch): D1 and D2
     * stay untouched, out of the caches */
    f.D1 = (real *)scratch + mb_rnea_derivatives_scratch(m), f.D2 = f.D1 + (long)m->nv * m->nv;
    const int st = mb_aba_derivatives_after_forward_lanes(m, &f.ws, scratch, &f.w, f.x, NULL, f.D1, f.D2, f.D3);
    if (st == MB_OK)
        *finite = scatter3(m, &f, dq, dqd, Minv, stream);
    return st;
}

/* M⁻¹ of the group: minv.c's mb_minv in lanes (the world motion subspaces J_k = X_0i⁻¹ S_k and
 * inertias Y_i in the base, then mb_minv_world on the model's subtree columns), the same operations
 * in the same order, so each lane is the single call's M⁻¹ bit for bit. */
static int minv_group(const mb_model *m, void *scratch, const double *const *q, double *const *Minv, int stream,
                      int *finite)
{
    const int nb = m->nb, nv = m->nv;
    real *work = scratch;
    minv_lanes_ws ws;
    ws.IA = work + mb_minv_world_scratch(m), ws.Dinv = ws.IA + 36L * nb, ws.U = ws.Dinv + 36L * nb;
    real *R = ws.U + 6L * nv, *p = R + 9 * nb, *R0 = p + 3 * nb, *p0 = R0 + 9 * nb, *ql = p0 + 3 * nb;
    real *J = ql + m->nq, *Y = J + 6L * nv, *out = Y + (long)MB_NI * nb;
    gather_blocks(q, m->nq, ql);
    world_poses(m, ql, R, p, R0, p0);
    for (int i = 0; i < nb; i++) {
        real In[MB_NI];  /* the body's inertia in every lane */
        for (int k = 0; k < MB_NI; k++)
            In[k] = MB_SPLAT(m->inertia[MB_NI * i + k]), Y[MB_NI * i + k] = MB_SPLAT(0.0);
        mb_inertia_to_parent_add(R0 + 9 * i, p0 + 3 * i, In, Y + MB_NI * i);
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            const int s = m->dof_axis[k];
            if (s >= 0)
                mb_unit_motion_to_parent(R0 + 9 * i, p0 + 3 * i, s, m->S[6 * k + s] < 0.0, J + 6 * k);
            else {
                real Sk[6];
                for (int r = 0; r < 6; r++)
                    Sk[r] = MB_SPLAT(m->S[6 * k + r]);
                mb_motion_to_parent(R0 + 9 * i, p0 + 3 * i, Sk, J + 6 * k);
            }
        }
    }
    const int st = mb_minv_world_lanes(m, &ws, work, J, Y, m->sub_cols, m->sub_first, m->sub_count, out);
    if (st != MB_OK)
        return st;
    const long nv2 = (long)nv * nv;
    if (stream)
        *finite = scatter_streaming(out, nv2, Minv);
    else {
        scatter(out, nv2, Minv);
        *finite = lanes_finite(out, nv2);
    }
    return MB_OK;
}

const mb_derivatives_lanes_impl MB_DERIV_LANES_IMPL = {MB_LANES, scratch_bytes, rnea_group, aba_group, minv_group};
