/* aba_lanes_avx512.c — aba_lanes.c for x86-64 CPUs with AVX-512F: 8 lanes of doubles per
 * instruction.  Compiled for AVX-512F by a target pragma (the package stays portable); _core.c
 * calls it only when the CPU reports AVX-512F.  That target has fused multiply-adds, which would
 * round a·b + c once instead of twice: the package builds with -ffp-contract=off (setup.py), so
 * every lane stays the scalar kernel's bit for bit (tests/test_lanes.py). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX512F__)
#pragma GCC target("avx512f")
#define MB_LANES_IMPL mb_lanes_avx512
#include "kernels/aba_lanes.c"
#endif

/* ISO C forbids an empty translation unit */
typedef int mb_aba_lanes_avx512_unit;
