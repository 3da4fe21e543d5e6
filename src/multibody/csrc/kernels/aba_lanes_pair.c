/* aba_lanes_pair.c — aba_lanes.c on two lanes in AVX2 code, for the RK4 steps of a single run of a
 * planar tree (py_rollout.c, on CPUs that report AVX2).
 *
 * Such a run takes the lean step of rollout_lanes.h (its state held in lanes through the step),
 * where its planar FDab is small enough that the count of instructions decides: SSE2's two-operand
 * arithmetic spends about a third more of them on register copies than AVX's three-operand form,
 * and the wider lanes of aba_lanes_avx2.c spend theirs gathering and scattering idle lanes.  Two
 * lanes (the run and a copy) in AVX2 code do neither.  FMA stays off: bit for bit the scalar
 * kernel's, as every lanes build. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
#pragma GCC target("avx2")
#define MB_TWO_LANES 1
#define MB_LANES_IMPL mb_lanes_avx2_pair
#include "kernels/aba_lanes.c"
#endif

/* ISO C forbids an empty translation unit */
typedef int mb_aba_lanes_pair_unit;
