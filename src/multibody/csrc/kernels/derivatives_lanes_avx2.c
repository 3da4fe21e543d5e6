/* derivatives_lanes_avx2.c — derivatives_lanes.c for x86-64 CPUs with AVX2: 4 lanes of doubles per
 * instruction.  Compiled for AVX2 by a target pragma (the package stays portable); py_derivatives.c
 * calls it only with aba_lanes.c's AVX2 build, i.e. when the CPU reports AVX2. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
#pragma GCC target("avx2")
#define MB_DERIV_LANES_IMPL mb_derivatives_lanes_avx2
#include "kernels/derivatives_lanes.c"
#endif

/* ISO C forbids an empty translation unit */
typedef int mb_derivatives_lanes_avx2_unit;
