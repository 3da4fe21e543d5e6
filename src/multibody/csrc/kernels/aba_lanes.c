/* aba_lanes.c — FDab, ID and CRBA (RBDA tables 7.1, 5.1, 6.2; spatial_v2 FDab, ID, HandC) on
 * MB_LANES states at once: SIMD over states.
 *
 * A batch of forward dynamics runs the same operations on every state, only on other numbers;
 * a vector register holds the same quantity of MB_LANES states, so one instruction advances them
 * all.  This file is not a second ABA, RNEA or CRBA: it compiles aba.c, rnea.c, crba.c, the joint poses
 * (poses.h) and the workspace (model.c) once more with `real` a vector of doubles (lanes.h), and
 * adds the gather of a group of states into lanes and the scatter of their results.  Vector
 * arithmetic is lane-wise IEEE arithmetic in the scalar source's order (no contraction into FMA
 * unless the whole build uses it), so every lane's result is the scalar function's bit for bit.
 *
 * It is built three times: as itself (the architecture's baseline vectors: SSE2 or NEON, 2 lanes;
 * MULTIBODY_NATIVE=1: AVX or AVX-512, 4 or 8 lanes), by aba_lanes_avx2.c for x86-64 CPUs with AVX2
 * (4 lanes) and by aba_lanes_avx512.c for those with AVX-512F (8 lanes); py_batch.c picks the widest
 * the CPU runs at import.  Each build exports one mb_lanes_impl.
 *
 * What the lanes leave out, the batch driver (py_batch.c) runs one state at a time: f_ext, and for
 * FDab planar trees (planar.c has its own) and joints of more than one dof other than a free root
 * without rotor inertia (mb_lanes_supported, aba.c).
 */
#ifndef MB_LANES_IMPL
#define MB_LANES_IMPL mb_lanes_baseline
#endif
#define MB_LANE_BUILD 1
#define mb_data mb_data_lanes /* the workspace of data.h, in lanes (static to this file) */
#define mb_data_new lanes_data_new
#define mb_data_free lanes_data_free
#define mb_data_size lanes_data_size

#include "model/model.c"
#include "kernels/aba.c"
#include "kernels/planar.c"
#include "kernels/crba.c"
#include "kernels/rnea.c"
#include "sim/passive.c"   /* the passive laws the lanes' step carries (damping), in `real` */
#include "sim/rollout_lanes.h"

static void *data_new(const mb_model *m)
{
    return lanes_data_new(m);
}

static void data_free(void *d)
{
    lanes_data_free(d);
}


/* A group of states through a kernel (q, q̇, x) → out of nv numbers, all in lanes. */
typedef int (*lanes_kernel)(const mb_model *m, mb_data_lanes *d, const real *q, const real *qd, const real *x,
                            real *out);

static int run_group(const mb_model *m, mb_data_lanes *d, const double *const *q, const double *const *qd,
                     const double *const *x, double *const *out, lanes_kernel kernel)
{
    real *ql = d->tmp, *qdl = ql + m->nq, *xl = qdl + m->nv, *outl = xl + m->nv;  /* 3 nv + nq ≤ tmp */
    gather_blocks(q, m->nq, ql);
    gather_blocks(qd, m->nv, qdl);
    gather_blocks(x, m->nv, xl);
    const int st = kernel(m, d, ql, qdl, xl, outl);
    if (st == MB_OK)
        scatter(outl, m->nv, out);
    return st;
}

static int aba_kernel(const mb_model *m, mb_data_lanes *d, const real *q, const real *qd, const real *tau, real *qdd)
{
    return mb_aba_lanes(m, d, q, qd, tau, NULL, qdd);
}

static int rnea_kernel(const mb_model *m, mb_data_lanes *d, const real *q, const real *qd, const real *qdd, real *tau)
{
    mb_rnea_lanes(m, d, q, qd, qdd, NULL, tau);
    return MB_OK;
}

static int aba_group(const mb_model *m, void *d, const double *const *q, const double *const *qd,
                     const double *const *tau, double *const *qdd)
{
    return run_group(m, d, q, qd, tau, qdd, aba_kernel);
}

static int rnea_group(const mb_model *m, void *d, const double *const *q, const double *const *qd,
                      const double *const *qdd, double *const *tau)
{
    return run_group(m, d, q, qd, qdd, tau, rnea_kernel);
}

/* g(q) = RNEA(q, 0, 0) without the velocity terms (mb_gravity_torques) reads only q; `fresh` NULL
 * says the workspace holds these q's poses already (the last aba_group call, the same lanes). */
static int gravity_group(const mb_model *m, void *workspace, const double *const *q, const double *const *fresh,
                         const double *const *x, double *const *tau)
{
    (void)x;
    mb_data_lanes *d = workspace;
    real *ql = d->tmp, *taul = ql + m->nq;
    if (fresh)
        gather_blocks(q, m->nq, ql);
    mb_gravity_torques_lanes(m, d, ql, !fresh, taul);
    scatter(taul, m->nv, tau);
    return MB_OK;
}

/* CRBA reads only q; H is built in the workspace's H and scattered from there. */
static int crba_group(const mb_model *m, void *workspace, const double *const *q, const double *const *qd,
                      const double *const *x, double *const *H)
{
    (void)qd, (void)x;
    mb_data_lanes *d = workspace;
    gather(q, m->nq, d->tmp);
    mb_crba_lanes(m, d, d->tmp, d->H);
    scatter(d->H, (long)m->nv * m->nv, H);
    return MB_OK;
}

/* crba_group with non-temporal stores, for batches whose H's are far larger than the caches
 * (Talos, 10 000 states: 122 MB): each line written once without being read in first, and checked
 * for finite entries on the way, so the batch need not read its outputs back (py_dynamics.c). */
static int crba_stream_group(const mb_model *m, void *workspace, const double *const *q, const double *const *qd,
                             const double *const *x, double *const *H)
{
    (void)qd, (void)x;
    mb_data_lanes *d = workspace;
    gather(q, m->nq, d->tmp);
    mb_crba_lanes(m, d, d->tmp, d->H);
    return scatter_streaming(d->H, (long)m->nv * m->nv, H) ? MB_OK : MB_OVERFLOW;
}

const mb_lanes_impl MB_LANES_IMPL = {MB_LANES, data_new, data_free, aba_group, rnea_group, crba_group, crba_stream_group,
                                     gravity_group, rk4_group};
