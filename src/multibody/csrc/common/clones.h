/* clones.h — MB_CLONES_AVX2: on x86-64 (GCC, a portable build) a function so marked is compiled twice,
 * for the baseline and for x86-64-v3 (AVX2), and the loader picks the clone the CPU runs.  Elementwise
 * loops then run four doubles an instruction instead of two with the same operations on each element
 * (setup.py builds with -ffp-contract=off and no reassociation, so the two clones give the same bits). */
#ifndef MB_CLONES_H
#define MB_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
#define MB_CLONES_AVX2 __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define MB_CLONES_AVX2
#endif

#endif
