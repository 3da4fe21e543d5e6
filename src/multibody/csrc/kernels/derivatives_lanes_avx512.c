/* derivatives_lanes_avx512.c — derivatives_lanes.c for x86-64 CPUs with AVX-512F: 8 lanes of
 * doubles per instruction.  Compiled for AVX-512F by a target pragma (the package stays portable),
 * with no contraction into fused multiply-adds (setup.py: -ffp-contract=off); py_derivatives.c calls it
 * only with aba_lanes.c's AVX-512 build, i.e. when the CPU reports AVX-512F. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX512F__)
#pragma GCC target("avx512f")
#define MB_DERIV_LANES_IMPL mb_derivatives_lanes_avx512
#include "kernels/derivatives_lanes.c"
#endif

/* ISO C forbids an empty translation unit */
typedef int mb_derivatives_lanes_avx512_unit;
