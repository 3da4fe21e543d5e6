/* lanes.h — the number type of the kernels: SIMD over states.
 *
 * The kernels that include this header are written in `real`.  In every translation unit it is
 * double, except in aba_lanes.c, which defines MB_LANE_BUILD and compiles aba.c, rnea.c, crba.c,
 * the joint poses and the workspace again with `real` a vector of MB_LANES doubles (GCC/Clang vector extensions:
 * SSE2 or NEON by default, AVX or AVX-512 with MULTIBODY_NATIVE=1; aba_lanes_avx2.c and
 * aba_lanes_avx512.c build 4 and 8 lanes for CPUs that have them, aba_lanes_pair.c 2 lanes in AVX2 code
 * for single planar runs): lane l carries state l of a group of
 * MB_LANES states, so one instruction advances them all.  Arithmetic on vectors is lane-wise IEEE
 * arithmetic in the same order as the scalar source, so every lane's result is the scalar
 * kernel's, bit for bit (tests/test_lanes.py checks) — as long as no a·b + c is contracted into
 * one fused multiply-add, which AVX-512 and FMA targets would allow: the package builds with
 * -ffp-contract=off (setup.py).  What differs between the two builds is
 * spelled with the helpers below: a constant broadcast to every lane, "every lane satisfies", and
 * square roots.
 */
#ifndef MULTIBODY_LANES_H
#define MULTIBODY_LANES_H

#include <math.h>

#ifdef MB_LANE_BUILD
#if defined(MB_TWO_LANES)
#define MB_LANES 2  /* aba_lanes_pair.c: two lanes in AVX's three-operand instructions */
typedef double real __attribute__((vector_size(16), aligned(16)));
typedef long long real_mask __attribute__((vector_size(16), aligned(16)));
#define MB_SPLAT(x) ((real){(x), (x)})
#elif defined(__AVX512F__)
#define MB_LANES 8
typedef double real __attribute__((vector_size(64), aligned(64)));
typedef long long real_mask __attribute__((vector_size(64), aligned(64)));
#define MB_SPLAT(x) ((real){(x), (x), (x), (x), (x), (x), (x), (x)})
#elif defined(__AVX__)
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
/* mb_all in one instruction where the vector unit has one (the lanes' sign bits or masks at once),
 * for the tests of every body (pivots); elsewhere mb_all. */
#if defined(__x86_64__) && (defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__))
#include <immintrin.h>
#endif
static inline int mb_every(real_mask t)
{
#if defined(__x86_64__) && MB_LANES == 8 && defined(__AVX512F__)
    return _mm512_test_epi64_mask((__m512i)t, (__m512i)t) == 0xFF;
#elif defined(__x86_64__) && MB_LANES == 4 && defined(__AVX__)
    return _mm256_movemask_pd((__m256d)t) == 0xF;
#elif defined(__x86_64__) && MB_LANES == 2 && defined(__SSE2__)
    return _mm_movemask_pd((__m128d)t) == 0x3;
#else
    return mb_all(t);
#endif
}
static inline real mb_sqrt(real x)
{
    real r = x;
    for (int l = 0; l < MB_LANES; l++)
        r[l] = sqrt(x[l]);
    return r;
}
/* Lane l of dst[k] = src[l][k] for k < n (a group of states into lanes), and back: the one
 * gather and scatter of every lanes build (aba_lanes.c, derivatives_lanes.c).  Two lanes: a vector
 * from two numbers (two instructions) and back, instead of a number at a time. */
static inline void gather(const double *const *src, int n, real *dst)
{
#if MB_LANES == 2
    const double *s0 = src[0], *s1 = src[1];
    for (int k = 0; k < n; k++)
        dst[k] = (real){s0[k], s1[k]};
#else
    for (int l = 0; l < MB_LANES; l++)
        for (int k = 0; k < n; k++)
            dst[k][l] = src[l][k];
#endif
}
#if MB_LANES == 8
/* Eight entries of a group (src[0…7], each a vector of lanes) as eight vectors of entries, one per
 * lane: out[l][i] = src[i][l], an 8 × 8 transpose in registers in three rounds of two-source
 * shuffles (pairs of rows, then pairs of pairs, then halves), instead of 64 single loads. */
static inline void transpose8(const real *src, real *out)
{
    typedef long long pick __attribute__((vector_size(64)));
    const pick even = {0, 8, 2, 10, 4, 12, 6, 14}, odd = {1, 9, 3, 11, 5, 13, 7, 15};
    const pick low2 = {0, 1, 8, 9, 4, 5, 12, 13}, high2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const pick low4 = {0, 1, 2, 3, 8, 9, 10, 11}, high4 = {4, 5, 6, 7, 12, 13, 14, 15};
    real t[8], u[8];
    for (int i = 0; i < 8; i += 2)  /* t[i]: rows i, i+1 in the even lanes, t[i+1]: in the odd */
        t[i] = __builtin_shuffle(src[i], src[i + 1], even), t[i + 1] = __builtin_shuffle(src[i], src[i + 1], odd);
    for (int h = 0; h < 8; h += 4)  /* rows h…h+3: u[h + j] holds lanes j and j + 4 */
        for (int j = 0; j < 2; j++) {
            u[h + 2 * j] = __builtin_shuffle(t[h + j], t[h + j + 2], low2);
            u[h + 2 * j + 1] = __builtin_shuffle(t[h + j], t[h + j + 2], high2);
        }
    static const int lane_of[4] = {0, 2, 1, 3};  /* u's order: lanes 0|4, 2|6, 1|5, 3|7 */
    for (int j = 0; j < 4; j++) {
        out[lane_of[j]] = __builtin_shuffle(u[j], u[4 + j], low4);
        out[lane_of[j] + 4] = __builtin_shuffle(u[j], u[4 + j], high4);
    }
}
#endif
/* gather, eight entries at a time by transpose8 where there are 8 lanes (one load per lane and
 * entry block instead of one insert per number); the same numbers in the same places. */
static inline void gather_blocks(const double *const *src, int n, real *dst)
{
#if MB_LANES == 2
    gather(src, n, dst);
#else
    int k0 = 0;
#if MB_LANES == 8
    for (; k0 + 8 <= n; k0 += 8) {
        real row[8];
        for (int l = 0; l < 8; l++)
            __builtin_memcpy(&row[l], src[l] + k0, sizeof row[l]);
        transpose8(row, dst + k0);
    }
#endif
    for (int l = 0; l < MB_LANES; l++)
        for (int k = k0; k < n; k++)
            dst[k][l] = src[l][k];
#endif
}
static inline void scatter(const real *src, long n, double *const *dst)
{
#if MB_LANES == 2
    double *d0 = dst[0], *d1 = dst[1];  /* lane 1 last, as below, where d1 = d0 */
    for (long k = 0; k < n; k++)
        d0[k] = src[k][0], d1[k] = src[k][1];
#else
    long k0 = 0;
#if MB_LANES == 8
    for (; k0 + 8 <= n; k0 += 8) {  /* eight entries at a time: a transpose, one store per lane */
        real row[8];
        transpose8(src + k0, row);
        for (int l = 0; l < 8; l++)
            __builtin_memcpy(dst[l] + k0, &row[l], sizeof row[l]);
    }
#endif
    for (int l = 0; l < MB_LANES; l++)
        for (long k = k0; k < n; k++)
            dst[l][k] = src[k][l];
#endif
}
/* Large outputs (derivatives_lanes.c's matrices, aba_lanes.c's CRBA of big batches): written with
 * non-temporal stores, and checked for finite numbers while still in the caches. */
#include <stdint.h>
/* 1 if every entry of every lane of x[0..n) is finite: x·0 is 0 for finite x, NaN for inf and NaN,
 * and one NaN makes the sum NaN.  Checked here, where the group's results are still in the caches,
 * rather than by a pass over the whole batch's outputs afterwards (Talos, 10 000 states: 346 MB read
 * back from memory, a quarter of the batch's time). */
static inline int lanes_finite(const real *x, long n)
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

#if defined(__x86_64__) && defined(__GNUC__)
/* scatter with non-temporal stores, for outputs far larger than the caches: written once and not
 * read back here, so the stores skip reading each line in first (half the memory traffic) and
 * leave the caches to the kernel.  Returns lanes_finite of src (with whole lines: summed on the way;
 * the AVX2 branch may also return 0 for finite entries whose sum overflows: callers check exactly then).  SSE2 (every x86-64); 16-byte aligned pairs after one element
 * where a lane's row starts between two.  Unfenced: the caller ends its stores with stream_fence()
 * (scatter_streaming below does), so that a matrix written in pieces (derivatives_lanes.c's
 * M⁻¹, row by row) fences once. */
static inline void stream_fence(void)
{
    _mm_sfence();  /* the streamed lines are visible before the batch returns */
}

#if defined(__AVX512F__) && MB_LANES == 8
/* Where entry k of an n-entry matrix in lanes is kept: at k, or (sym_nv > 0) a symmetric sym_nv × sym_nv
 * matrix kept by its upper triangle, whose lower entries are read from their mirrors */
static inline const real *stored_entry(const real *src, long k, long sym_nv)
{
    if (!sym_nv)
        return src + k;
    const long r = k / sym_nv, c = k % sym_nv;
    return src + (r <= c ? k : c * sym_nv + r);
}

/* scatter_streaming_unfenced's AVX-512 branch, for a matrix kept whole (sym_nv = 0) or by its upper
 * triangle (stored_entry); -1 where the rows do not start on 8-byte boundaries (not written). */
static inline int scatter_lines_avx512(const real *src, long n, double *const *dst, long sym_nv)
{
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
        pick join[8] = {{0}};  /* entries off … 7 of the earlier block's row, then 0 … off − 1 of the next's */
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
        long r = 0, c = 0;  /* with sym_nv: the entry k's row and column */
        for (long b = 0; b < blocks; b++) {
            const long k = 8 * b;
            if (sym_nv) {  /* the block's entries, each from its place in the upper triangle */
                real v[8];
                for (int j = 0; j < 8; j++) {
                    v[j] = src[r <= c ? r * sym_nv + c : c * sym_nv + r];
                    if (++c == sym_nv)
                        c = 0, r++;
                }
                transpose8(v, row);
            } else
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
                dst[l][k] = (*stored_entry(src, k, sym_nv))[l];
            for (long k = hi[l]; k < n; k++)
                dst[l][k] = (*stored_entry(src, k, sym_nv))[l];
        }
        for (long k = 8 * blocks; k < n; k++)  /* the entries after the last block: the check */
            zero += *stored_entry(src, k, sym_nv) * 0.0;
        return mb_every(zero == 0.0);
    }
    return -1;
}
#endif

static inline int scatter_streaming_unfenced(const real *src, long n, double *const *dst)
{
#if defined(__AVX2__) && MB_LANES == 4
    /* four rows of lanes at a time, turned into four rows of states by a 4 × 4 transpose in
     * registers, when every state's row starts on a 16-byte boundary (nv² even: all or none); on
     * a 32-byte one (the outputs' blocks are 64-byte aligned: py_output.c), one 32-byte store a
     * row instead of two 16-byte ones and their extract (Talos M⁻¹: 2 900 instructions a group).
     * The finite check sums the rows just loaded, (r0 + r1) and (r2 + r3), two adds a row less
     * than x·0 summed: a NaN or inf makes the sum NaN or inf, and finite entries whose sum
     * overflows read as not finite, which only sends the caller to its exact check (derivatives:
     * outputs_finite; CRBA: the group state by state). */
    const uintptr_t align = (uintptr_t)dst[0] | (uintptr_t)dst[1] | (uintptr_t)dst[2] | (uintptr_t)dst[3];
    if (!(align & 15)) {
        long k = 0;
        real sum[2] = {MB_SPLAT(0.0), MB_SPLAT(0.0)};
        /* the rows' starts in registers: the stores (may_alias vectors) would make them reloaded */
        double *const row[4] = {dst[0], dst[1], dst[2], dst[3]};
#define MB_STREAM_ROWS4(STORE)                                                                              \
        for (; k + 4 <= n; k += 4) {                                                                        \
            const __m256d r0 = _mm256_load_pd((const double *)(src + k)),                                    \
                          r1 = _mm256_load_pd((const double *)(src + k + 1)),                                \
                          r2 = _mm256_load_pd((const double *)(src + k + 2)),                                \
                          r3 = _mm256_load_pd((const double *)(src + k + 3));                               \
            sum[0] += (real)r0 + (real)r1, sum[1] += (real)r2 + (real)r3;                                    \
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),                  \
                          t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);                  \
            const __m256d s[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20), \
                                  _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)}; \
            for (int l = 0; l < 4; l++)                                                                     \
                STORE;                                                                                      \
        }
        if (!(align & 31))
            MB_STREAM_ROWS4(_mm256_stream_pd(row[l] + k, s[l]))
        else
            MB_STREAM_ROWS4((_mm_stream_pd(row[l] + k, _mm256_castpd256_pd128(s[l])),
                             _mm_stream_pd(row[l] + k + 2, _mm256_extractf128_pd(s[l], 1))))
#undef MB_STREAM_ROWS4
        const long tail = k;
        for (; k < n; k++)
            for (int l = 0; l < 4; l++)
                dst[l][k] = src[k][l];
        return mb_every((sum[0] + sum[1]) * 0.0 == 0.0) && lanes_finite(src + tail, n - tail);
    }
#endif
#if defined(__AVX512F__) && MB_LANES == 8
    const int lines = scatter_lines_avx512(src, n, dst, 0);
    if (lines >= 0)
        return lines;
#endif
    if (((uintptr_t)dst[0] ^ (uintptr_t)dst[MB_LANES - 1]) & 15) {
        /* the states' rows start on both sides of 16-byte boundaries (an odd nv², the Panda's 81):
         * 16-byte non-temporal pieces of rows a few entries long leave partly written lines in the
         * write-combining buffers, each a read from memory (the Panda's ∂RNEA batch: 55 % of its
         * time); ordinary stores, whose lines the caches complete, cost half that (measured) */
        scatter(src, n, dst);
        return lanes_finite(src, n);
    }
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
    return lanes_finite(src, n);
}
#else
static inline void stream_fence(void) {}

static inline int scatter_streaming_unfenced(const real *src, long n, double *const *dst)
{
    scatter(src, n, dst);
    return lanes_finite(src, n);
}
#endif
/* scatter_streaming_unfenced, fenced */
static inline int scatter_streaming(const real *src, long n, double *const *dst)
{
    const int finite = scatter_streaming_unfenced(src, n, dst);
    stream_fence();
    return finite;
}

/* A symmetric nv × nv matrix in lanes kept by its upper triangle (minv.c: M⁻¹ in the AVX-512 lanes)
 * streamed out whole to each lane's matrix, the lower entries read from their mirrors, and fenced.
 * Returns 1 if every entry is finite (x·0 summed: 0 for finite x, NaN otherwise). */
static inline int scatter_streaming_symmetric(const real *src, int nv, double *const *dst)
{
#if defined(__x86_64__) && defined(__GNUC__) && defined(__AVX512F__) && MB_LANES == 8
    const int lines = scatter_lines_avx512(src, (long)nv * nv, dst, nv);
    if (lines >= 0) {
        stream_fence();
        return lines;
    }
#endif
    real zero = MB_SPLAT(0.0);
    for (int r = 0; r < nv; r++)
        for (int c = 0; c < nv; c++) {
            const real x = src[r <= c ? (long)nv * r + c : (long)nv * c + r];
            zero += x * 0.0;
            for (int l = 0; l < MB_LANES; l++)
                dst[l][(long)nv * r + c] = x[l];
        }
    return mb_every(zero == 0.0);
}

#else
#define MB_LANES 1
typedef double real;
#define MB_SPLAT(x) (x)
#define mb_all(t) (t)
#define mb_every(t) (t)
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
