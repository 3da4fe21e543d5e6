/* derivatives_lanes.h — ∂RNEA over SIMD lanes of states (rnea_derivatives_lanes.c), for the batches
 * of py_derivatives.c. */
#ifndef MULTIBODY_DERIVATIVES_LANES_H
#define MULTIBODY_DERIVATIVES_LANES_H

#include <stddef.h>

#include "model.h"

/* One build of rnea_derivatives_lanes.c: `group` runs the states q[l], qd[l], qdd[l] (l < width, no
 * f_ext) and writes ∂τ/∂q, ∂τ/∂q̇ and M of state l to dq[l], dqd[l], M[l], each lane's the scalar
 * mb_rnea_derivatives' bit for bit.  `scratch` is scratch_bytes(m) bytes aligned to 64. */
typedef struct mb_rnead_lanes_impl {
    int width;
    size_t (*scratch_bytes)(const mb_model *m);
    void (*group)(const mb_model *m, void *scratch, const double *const *q, const double *const *qd,
                  const double *const *qdd, double *const *dq, double *const *dqd, double *const *M);
} mb_rnead_lanes_impl;

extern const mb_rnead_lanes_impl mb_rnead_lanes_baseline;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
extern const mb_rnead_lanes_impl mb_rnead_lanes_avx2;
#endif

#endif
