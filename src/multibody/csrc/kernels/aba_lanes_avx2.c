/* aba_lanes_avx2.c — aba_lanes.c for x86-64 CPUs with AVX2: 4 lanes of doubles per instruction.
 * Compiled for AVX2 by a target pragma (not -mavx2 for the whole package, which would then not run
 * on older CPUs); _core.c calls it only when the CPU reports AVX2.  FMA stays off, so results
 * stay the scalar kernel's bit for bit. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
#pragma GCC target("avx2")
#define MB_LANES_IMPL mb_lanes_avx2
#include "kernels/aba_lanes.c"
#endif

/* ISO C forbids an empty translation unit */
typedef int mb_aba_lanes_avx2_unit;
