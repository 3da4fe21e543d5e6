/* lanes.h — the number type of the kernels: SIMD over states.
 *
 * The kernels that include this header are written in `real`.  In every translation unit it is
 * double, except in aba_lanes.c, which defines MB_LANE_BUILD and compiles aba.c, rnea.c, crba.c,
 * the joint poses and the workspace again with `real` a vector of MB_LANES doubles (GCC/Clang vector extensions:
 * SSE2 or NEON by default, AVX with MULTIBODY_NATIVE=1): lane l carries state l of a group of
 * MB_LANES states, so one instruction advances them all.  Arithmetic on vectors is lane-wise IEEE
 * arithmetic in the same order as the scalar source, so every lane's result is the scalar
 * kernel's, bit for bit (tests/test_lanes.py checks).  What differs between the two builds is
 * spelled with the helpers below: a constant broadcast to every lane, "every lane satisfies", and
 * square roots.
 */
#ifndef MULTIBODY_LANES_H
#define MULTIBODY_LANES_H

#include <math.h>

#ifdef MB_LANE_BUILD
#if defined(__AVX__)
#define MB_LANES 4
typedef double real __attribute__((vector_size(32), aligned(32)));
typedef long long real_mask __attribute__((vector_size(32), aligned(32)));
#define MB_SPLAT(x) ((real){(x), (x), (x), (x)})
#else
#define MB_LANES 2
typedef double real __attribute__((vector_size(16), aligned(16)));
typedef long long real_mask __attribute__((vector_size(16), aligned(16)));
#define MB_SPLAT(x) ((real){(x), (x)})
#endif
/* every lane of a comparison's result is true */
static inline int mb_all(real_mask t)
{
    for (int l = 0; l < MB_LANES; l++)
        if (!t[l])
            return 0;
    return 1;
}
static inline real mb_sqrt(real x)
{
    real r = x;
    for (int l = 0; l < MB_LANES; l++)
        r[l] = sqrt(x[l]);
    return r;
}
/* Lane l of dst[k] = src[l][k] for k < n (a group of states into lanes), and back: the one
 * gather and scatter of every lanes build (aba_lanes.c, derivatives_lanes.c). */
static inline void gather(const double *const *src, int n, real *dst)
{
    for (int l = 0; l < MB_LANES; l++)
        for (int k = 0; k < n; k++)
            dst[k][l] = src[l][k];
}
static inline void scatter(const real *src, long n, double *const *dst)
{
    for (int l = 0; l < MB_LANES; l++)
        for (long k = 0; k < n; k++)
            dst[l][k] = src[k][l];
}
#else
#define MB_LANES 1
typedef double real;
#define MB_SPLAT(x) (x)
#define mb_all(t) (t)
#define mb_sqrt(x) sqrt(x)
#endif

/* The lanes build compiles whole algorithm files again: their functions are private to it and
 * carry the suffix _lanes, the scalar build's are exported under their own names. */
#ifdef MB_LANE_BUILD
#define MB_NAME(name) name##_lanes
#define MB_LANES_STATIC static
#else
#define MB_NAME(name) name
#define MB_LANES_STATIC
#endif

#endif
