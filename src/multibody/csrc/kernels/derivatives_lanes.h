/* derivatives_lanes.h — the analytic derivatives over SIMD lanes of states (derivatives_lanes.c), for
 * the batches of py_derivatives.c. */
#ifndef MULTIBODY_DERIVATIVES_LANES_H
#define MULTIBODY_DERIVATIVES_LANES_H

#include <stddef.h>

#include "model/model.h"

/* One build of derivatives_lanes.c: `rnea` runs the states q[l], qd[l], x[l] = q̈ (l < width, no
 * f_ext) and writes ∂τ/∂q, ∂τ/∂q̇ and M of state l to o1[l], o2[l], o3[l]; `aba`, with x[l] = τ,
 * ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ — each lane the scalar function's result bit for bit.  A status other than
 * MB_OK (a singular pivot in some lane) writes nothing: run those states one by one.  `scratch` is
 * scratch_bytes(m) bytes aligned to 64; `stream`: write the results with non-temporal stores (for
 * outputs much larger than the caches); `fresh`: scratch not yet used by a group of this model's
 * batch (its matrices are zeroed first; the groups after it write the same entries, the others
 * stay 0); `finite`: set to 0 when some result is inf or NaN (written all the same), else 1. */
typedef int (*mb_derivatives_group)(const mb_model *m, void *scratch, const double *const *q,
                                    const double *const *qd, const double *const *x, double *const *o1,
                                    double *const *o2, double *const *o3, int stream, int fresh, int *finite);
/* M⁻¹ of the states q[l] into Minv[l] (minv.c's mb_minv in lanes), with `scratch`, `stream` and
 * `finite` as above; the model's subtree columns (compile.c).  A status other than MB_OK writes nothing. */
typedef int (*mb_minv_group)(const mb_model *m, void *scratch, const double *const *q, double *const *Minv,
                             int stream, int *finite);
typedef struct mb_derivatives_lanes_impl {
    int width;
    size_t (*scratch_bytes)(const mb_model *m);
    mb_derivatives_group rnea, aba;
    mb_minv_group minv;
} mb_derivatives_lanes_impl;

extern const mb_derivatives_lanes_impl mb_derivatives_lanes_baseline;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
extern const mb_derivatives_lanes_impl mb_derivatives_lanes_avx2;
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX512F__)
extern const mb_derivatives_lanes_impl mb_derivatives_lanes_avx512;
#endif

#endif
