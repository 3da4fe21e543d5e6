/* aba_lanes.c — FDab (RBDA table 7.1; spatial_v2 FDab) on MB_LANES states at once: SIMD over
 * states.
 *
 * A batch of forward dynamics runs the same operations on every state, only on other numbers;
 * a vector register holds the same quantity of MB_LANES states, so one instruction advances them
 * all.  This file is not a second ABA: it compiles aba.c, the joint poses (poses.h) and the
 * workspace (model.c) once more with `real` a vector of doubles (lanes.h), and adds the gather of
 * a group of states into lanes and the scatter of their q̈.  Vector arithmetic is lane-wise IEEE
 * arithmetic in the scalar source's order (no contraction into FMA unless the whole build uses
 * it), so every lane's q̈ is mb_aba's bit for bit.
 *
 * It is built twice: as itself (the architecture's baseline vectors: SSE2 or NEON, 2 lanes;
 * MULTIBODY_NATIVE=1: AVX, 4 lanes) and by aba_lanes_avx2.c for x86-64 CPUs with AVX2 (4 lanes),
 * which _core.c picks at import when the CPU has it.  Each build exports one mb_lanes_impl.
 *
 * What the lanes leave out, the batch driver (_core.c) runs one state at a time: f_ext, planar
 * trees (planar.c has its own FDab) and joints of more than one dof other than a free root
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
#define MB_LANES_STATIC static /* model.c's and aba.c's functions: private to each build */

#include "model.c"
#include "aba.c"

static void *data_new(const mb_model *m)
{
    return lanes_data_new(m);
}

static void data_free(void *d)
{
    lanes_data_free(d);
}

static int aba_group(const mb_model *m, void *workspace, const double *const *q, const double *const *qd,
                     const double *const *tau, double *const *qdd)
{
    mb_data_lanes *d = workspace;
    real *ql = d->tmp, *qdl = ql + m->nq, *taul = qdl + m->nv, *qddl = taul + m->nv;  /* 3 nv + nq ≤ tmp */
    for (int l = 0; l < MB_LANES; l++) {
        for (int k = 0; k < m->nq; k++)
            ql[k][l] = q[l][k];
        for (int k = 0; k < m->nv; k++)
            qdl[k][l] = qd[l][k], taul[k][l] = tau[l][k];
    }
    const int st = MB_NAME(mb_aba)(m, d, ql, qdl, taul, NULL, qddl);
    if (st == MB_OK)
        for (int l = 0; l < MB_LANES; l++)
            for (int k = 0; k < m->nv; k++)
                qdd[l][k] = qddl[k][l];
    return st;
}

const mb_lanes_impl MB_LANES_IMPL = {MB_LANES, data_new, data_free, aba_group};
