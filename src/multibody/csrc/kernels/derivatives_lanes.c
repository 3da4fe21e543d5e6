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
int mb_invert_small(const double *D, int n, double *Dinv);

/* the part of the workspace (data.h) that mb_minv_world uses, in lanes; and, for minv_group's
 * streamed batches, each lane's M⁻¹ (stream_to, else NULL), how many of its entries are written
 * there (`out`) and whether they were all finite */
typedef struct {
    real *IA, *Dinv, *U;
    double *const *stream_to;
    long out;
    int finite, upper_only;  /* upper_only: minv.c's MIRROR_ROWS off */
} minv_lanes_ws;
#define mb_data minv_lanes_ws

/* Rows … r_end − 1 of the group's M⁻¹ are final: out to each lane's matrix with non-temporal
 * stores now, while mb_minv_world goes on with the next rows (minv.c: MINV_ROWS_FINAL).  Written
 * all at the end, a group's M⁻¹ (Talos: 46 kB) waited for memory in one burst, 30 % of the
 * group's time on this machine; row by row the stores overlap the arithmetic (Talos group
 * 11.6 → 10.6 µs, best of 5 in 6 alternating runs, loaded machine).  Pieces end on a multiple of
 * 8 entries (a 64-byte line where the matrix starts on one) and are not fenced until the last:
 * a line left partly written and fenced is flushed half-empty (one fence per row: 4× slower). */
static void minv_stream_rows(minv_lanes_ws *ws, const real *Minv, int nv, int r_end)
{
    const long end = r_end < nv ? ((long)nv * r_end) & ~7L : (long)nv * nv;
    if (end > ws->out) {
        double *dst[MB_LANES];
        for (int l = 0; l < MB_LANES; l++)
            dst[l] = ws->stream_to[l] + ws->out;
        if (!scatter_streaming_unfenced(Minv + ws->out, end - ws->out, dst))
            ws->finite = 0;
        ws->out = end;
    }
    if (r_end == nv)
        stream_fence();
}

/* Rows out as they become final with 2 and 4 lanes; with 8 (AVX-512) the streamed scatter writes
 * whole 64-byte lines and the entries outside them one by one, which pieces of rows would multiply
 * (not measured: this machine has no AVX-512), so that build writes the matrix at the end as before. */
#define MINV_STREAM_EARLY (MB_LANES != 8)
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


/* lanes_finite and scatter_streaming: lanes.h */

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
    f.ws.stream_to = NULL, f.ws.out = 0, f.ws.finite = 1, f.ws.upper_only = 0;  /* ∂ABA keeps M⁻¹ in its lanes */
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
    /* Streamed with 2 and 4 lanes row by row, as final; with 8 (AVX-512) all at the end from the upper
     * triangle alone (minv.c: MIRROR_ROWS; Talos, 10 000 states: 6 % faster, medians of alternating runs) */
    const int upper_only = stream && !MINV_STREAM_EARLY;
    ws.stream_to = stream && !upper_only ? Minv : NULL, ws.out = 0, ws.finite = 1, ws.upper_only = upper_only;
    real *R = ws.U + 6L * nv, *p = R + 9 * nb, *R0 = p + 3 * nb, *p0 = R0 + 9 * nb, *ql = p0 + 3 * nb;
    real *J = ql + m->nq, *Y = J + 6L * nv, *out = Y + (long)MB_NI * nb;
    gather_blocks(q, m->nq, ql);
    mb_tree_poses_inline(m, ql, R, p);
    world_poses_turn(m, R, p, R0, p0);  /* minv.c: by the turn codes, as mb_minv */
    for (int i = 0; i < nb; i++) {
        /* the body's inertia in every lane; Y_i summed onto −0, which the compiler drops (x + −0 = x
         * for every x): the single call's bits (minv.c: mb_minv) */
        real In[MB_NI], Yi[MB_NI];
        for (int k = 0; k < MB_NI; k++)
            In[k] = MB_SPLAT(m->inertia[MB_NI * i + k]), Yi[k] = MB_SPLAT(-0.0);
        mb_inertia_to_parent_add(R0 + 9 * i, p0 + 3 * i, In, Yi);
        for (int k = 0; k < MB_NI; k++)
            Y[MB_NI * i + k] = Yi[k];
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
    if (upper_only)
        *finite = scatter_streaming_symmetric(out, nv, Minv);
    else if (stream)  /* every row is out (mb_minv_world's last rows at its end) */
        *finite = ws.finite;
    else {
        scatter(out, nv2, Minv);
        *finite = lanes_finite(out, nv2);
    }
    return MB_OK;
}

const mb_derivatives_lanes_impl MB_DERIV_LANES_IMPL = {MB_LANES, scratch_bytes, rnea_group, aba_group, minv_group};
