/* trig.h — sine and cosine of joint angles, inlined into jcalc.c, poses.h and planar.c. */
#ifndef MULTIBODY_TRIG_H
#define MULTIBODY_TRIG_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/lanes.h"

/* sin x and cos x together, for joint angles.  glibc's sincos spends ~45 cycles per call — a
 * quarter of RNEA on a humanoid — on a reduction built for any argument.  Joint angles are small,
 * so: x = k·π/2 + r with |r| ≤ π/4 by Cody–Waite reduction (π/2 split into three parts, the first
 * two with 33 significant bits, so k·part is exact for |k| < 2²⁰), then the Taylor series of sin r
 * and cos r, which on |r| ≤ π/4 reach double precision by degree 17 and 18 (the next terms are
 * < 1e-19), evaluated by Estrin's scheme (short dependency chains) with no library call: k is
 * rounded by adding 1.5·2⁵².  Within a few ulp of libm (tests/test_core.py checks); arguments
 * beyond 10⁶ rad (and non-finite ones) go to libm.  The quadrant k mod 4 maps (sin r, cos r) to
 * (s, c) = (sr, cr), (cr, −sr), (−sr, −cr), (−cr, sr) by bit masks: a switch mispredicts when
 * angles jump between quadrants (random batches), ~15 cycles each.  k mod 4 is read from the bits
 * of k + 1.5·2⁵² (`k_bits`): their last bits are k's, two's complement (|k| < 2⁵¹), so no
 * conversion to an integer (which vectors of SSE2 or AVX2 lack: a store and a load a lane). */
/* One text for every vector width: mb_sincos_reduced on `real`, and on four doubles in the scalar
 * build (mb_sincos_joint4 below); the same IEEE operations in the same order, so every width gives
 * the scalar function's bits. */
#define MB_SINCOS_REDUCED(NAME, T)                                                                              \
static inline void NAME(T x, T *sr_out, T *cr_out, T *k_bits)                                                   \
{                                                                                                               \
    const double PIO2_1 = 1.5707963267341256, PIO2_2 = 6.077100506303966e-11, PIO2_3 = 2.0222662487959506e-21;  \
    const double ROUND = 6755399441055744.0;  /* 1.5·2⁵²: x + ROUND − ROUND rounds x to an integer */          \
    const T shifted = x * 0.6366197723675814 + ROUND;                                                          \
    const T k = shifted - ROUND;  /* nearest multiple of π/2 (× 2/π) */                                        \
    const T r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;                                                   \
    const T z = r * r, z2 = z * z, z4 = z2 * z2;                                                                \
    const T sa = -1.0 / 6 + z * (1.0 / 120), sb = -1.0 / 5040 + z * (1.0 / 362880);                            \
    const T sc = -1.0 / 39916800 + z * (1.0 / 6227020800), sd = -1.0 / 1307674368000 + z * (1.0 / 355687428096000); \
    const T ca = -1.0 / 2 + z * (1.0 / 24), cb = -1.0 / 720 + z * (1.0 / 40320);                               \
    const T cc = -1.0 / 3628800 + z * (1.0 / 479001600), cd = -1.0 / 87178291200 + z * (1.0 / 20922789888000); \
    *sr_out = r + (r * z) * ((sa + z2 * sb) + z4 * (sc + z2 * sd));                                            \
    *cr_out = 1.0 + z * ((ca + z2 * cb) + z4 * ((cc + z2 * cd) + z4 * (-1.0 / 6402373705728000)));             \
    *k_bits = shifted;                                                                                          \
}
MB_SINCOS_REDUCED(mb_sincos_reduced, real)

/* The vector form of mb_sincos_joint (NAME) on T = LANES doubles with mask type TM: the quadrant masks
 * lane by lane; a lane out of range is reduced as 0 (its k would not fit the bits of k + 1.5·2⁵²) and
 * then takes libm's values. */
#define MB_SINCOS_VECTOR(NAME, REDUCED, T, TM, LANES, EVERY)                                                    \
static inline void NAME(T x, T *s, T *c)                                                                        \
{                                                                                                               \
    const TM in_range = (x <= 1e6) & (x >= -1e6);  /* false for NaN */                                          \
    typedef unsigned long long bits __attribute__((vector_size(sizeof(T))));  /* shifts into the sign bit */   \
    T sr, cr, k_bits;                                                                                           \
    REDUCED((T)((TM)x & in_range), &sr, &cr, &k_bits);                                                          \
    const bits quadrant = (bits)k_bits & 3, swap = -(quadrant & 1);                                             \
    const bits bs = (bits)sr, bc = (bits)cr;                                                                    \
    bits out_s = (bs & ~swap) | (bc & swap), out_c = (bc & ~swap) | (bs & swap);                                \
    out_s ^= (quadrant >> 1) << 63;                                                                             \
    out_c ^= ((quadrant + 1) >> 1) << 63;                                                                       \
    *s = (T)out_s, *c = (T)out_c;                                                                               \
    if (!EVERY(in_range))                                                                                       \
        for (int l = 0; l < LANES; l++)                                                                         \
            if (!in_range[l])                                                                                   \
                (*s)[l] = sin(x[l]), (*c)[l] = cos(x[l]);                                                       \
}

#ifndef MB_LANE_BUILD
static inline void mb_sincos_joint(double x, double *s, double *c)
{
    if (!(fabs(x) <= 1e6)) {
        *s = sin(x), *c = cos(x);
        return;
    }
    double sr, cr, k_bits;
    mb_sincos_reduced(x, &sr, &cr, &k_bits);
    uint64_t quadrant, bs, bc;
    memcpy(&quadrant, &k_bits, sizeof quadrant);
    memcpy(&bs, &sr, sizeof bs);
    memcpy(&bc, &cr, sizeof bc);
    quadrant &= 3;
    const uint64_t swap = -(quadrant & 1);
    uint64_t out_s = (bs & ~swap) | (bc & swap), out_c = (bc & ~swap) | (bs & swap);
    out_s ^= (quadrant >> 1) << 63;  /* quadrants 2, 3: −sin */
    out_c ^= ((quadrant + 1) >> 1) << 63;  /* quadrants 1, 2: −cos (bit 1 of quadrant + 1 shifts out) */
    memcpy(s, &out_s, sizeof out_s);
    memcpy(c, &out_c, sizeof out_c);
}
/* Four joint angles at once in the scalar build (poses.h: the unit-axis revolute joints, in AVX2 code), each
 * lane mb_sincos_joint's result bit for bit: one AVX2 (or two SSE2) pass of the reduction and the
 * series in place of four. */
typedef double mb_sincos4 __attribute__((vector_size(32)));
typedef long long mb_sincos4_mask __attribute__((vector_size(32)));
static inline int mb_sincos4_every(mb_sincos4_mask t)
{
    return (t[0] & t[1] & t[2] & t[3]) != 0;
}
MB_SINCOS_REDUCED(mb_sincos_reduced4, mb_sincos4)
MB_SINCOS_VECTOR(mb_sincos_joint4, mb_sincos_reduced4, mb_sincos4, mb_sincos4_mask, 4, mb_sincos4_every)
#else
/* The same for a vector of angles (lanes.h's real). */
MB_SINCOS_VECTOR(mb_sincos_joint, mb_sincos_reduced, real, real_mask, MB_LANES, mb_every)
#endif

#endif
