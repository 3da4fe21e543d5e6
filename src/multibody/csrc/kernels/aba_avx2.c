/* aba_avx2.c — aba.c's scalar FDab compiled once more in AVX2 code, for x86-64 CPUs that have it:
 * mb_aba calls mb_aba_avx2 where __builtin_cpu_supports("avx2") says so.
 *
 * ABA's straight-line hand-overs are scalar arithmetic whose SSE2 form is two-operand: about a fifth
 * of their instructions are register copies (callgrind on the Panda's handover_perm_12: 100 movapd of
 * 529), which AVX's three-operand form does without.  Measured on the Panda (kernels_harness, this
 * machine): 0.93 → 0.88 µs a call.  The operations are the same IEEE operations on the same numbers:
 * FMA stays off (a target of "avx2" alone does not enable it, and the build has -ffp-contract=off),
 * so results are the SSE2 build's bit for bit.  Compiled by a target pragma, as aba_lanes_avx2.c, so
 * the package still runs on CPUs without AVX2.  Every function of this copy carries the suffix _avx2. */
#include "common/core.h"

#ifdef MB_HAVE_ABA_AVX2
#pragma GCC target("avx2")
#define MB_ABA_AVX2 1
#undef MB_NAME
#define MB_NAME(name) name##_avx2
#include "kernels/aba.c"
#endif

/* ISO C forbids an empty translation unit */
typedef int mb_aba_avx2_unit;
