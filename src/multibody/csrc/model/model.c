/* model.c — workspace allocation (data.h). The model itself is filled by py_model.c from the Python
 * Model's arrays and completed by mb_model_compile (compile.c). */
#include <stdlib.h>
#include <string.h>

#include "model/data.h"

/* Numbers (`real`s) per workspace, in the order mb_data_new hands them out. */
MB_LANES_STATIC long mb_data_size(const mb_model *m)
{
    const long nb = m->nb, nv = m->nv;
    return nb * (9 + 3 + 9 + 3 + 6 + 6 + 6 + 6 + 36 + 6 + 36 + MB_NI) + nv * (6 + 1) + 2 * nv * nv + 4 * nv + m->nq + 64;
}

MB_LANES_STATIC mb_data *mb_data_new(const mb_model *m)
{
    mb_data *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    /* aligned for the vectors of the lanes build; C11 wants a multiple of the alignment */
    const size_t bytes = ((size_t)mb_data_size(m) * sizeof(real) + 63) / 64 * 64;
    void *block = aligned_alloc(64, bytes);
    if (!block) {
        free(d);
        return NULL;
    }
    d->block = memset(block, 0, bytes);
    const long nb = m->nb, nv = m->nv;
    real *x = d->block;
#define TAKE(field, count) (d->field = x, x += (count))
    TAKE(R, 9 * nb);
    TAKE(p, 3 * nb);
    TAKE(R0, 9 * nb);
    TAKE(p0, 3 * nb);
    TAKE(v, 6 * nb);
    TAKE(a, 6 * nb);
    TAKE(f, 6 * nb);
    TAKE(c, 6 * nb);
    TAKE(IA, 36 * nb);
    TAKE(pA, 6 * nb);
    TAKE(Dinv, 36 * nb);
    TAKE(Ic, MB_NI * nb);
    TAKE(U, 6 * nv);
    TAKE(u, nv);
    TAKE(H, nv * nv);
    TAKE(L, nv * nv);
    TAKE(tmp, 4 * nv + m->nq + 64);
#undef TAKE
    return d;
}

MB_LANES_STATIC void mb_data_free(mb_data *d)
{
    if (d) {
        free(d->block);
        free(d);
    }
}
