/* kernels_harness.c — our C kernels timed with no Python in the way (bench.pinocchio_cpp).
 *
 * Compiled by bench/pinocchio_cpp.py together with the core's kernel sources (csrc/common, model,
 * kernels) under the extension's flags, and run as
 *
 *     kernels_harness MODEL STATES OUTDIR LOOPS [COUNT]
 *
 * MODEL: the tables of model.h that the Python Model hands to CModel (pinocchio_cpp.write_model);
 * STATES: n states (q, q̇, q̈, τ) in our conventions.  For each kernel (rnea, crba, aba, minv,
 * rnea_derivatives, aba_derivatives) it
 *   - writes its results on the first NCHECK states to OUTDIR/ours_KERNEL.bin (the Python side
 *     compares them with Pinocchio's C++ results, mapped to our order) and prints a checksum, the
 *     sum of |x| over them (the same for Pinocchio's, since the orders differ by a permutation);
 *   - timing mode (no COUNT, or 0): one untimed loop through the n states, then LOOPS timed loops,
 *     each one's CPU time per call printed.  LOOPS is one count for every kernel or six, comma-
 *     separated, in the order above: pinocchio_cpp.py gives both harnesses the same counts (more
 *     loops for the short kernels), so neither side gets more samples to take its best from;
 *   - counting mode (COUNT > 0, under valgrind --tool=callgrind): COUNT calls between a zeroing and a
 *     dump of callgrind's counters, named by the kernel, so the dump holds their instructions.
 * Two lines per kernel on stdout: "kernel NAME BEST_SECONDS_PER_CALL CHECKSUM" and "loops NAME T1 T2 …"
 * (every timed loop's CPU time per call; none in counting mode).  pinocchio_harness.cpp follows the
 * same rules line for line. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) (void)(name)
#endif

enum { NCHECK = 4, NKERNELS = 6, MAX_LOOPS = 100000 };

static void die(const char *what, const char *path)
{
    fprintf(stderr, "kernels_harness: %s %s\n", what, path);
    exit(2);
}

static void *read_exact(FILE *f, size_t size, size_t count, const char *path)
{
    void *p = malloc(size * (count ? count : 1));
    if (!p || fread(p, size, count, f) != count)
        die("cannot read", path);
    return p;
}

/* int32 counts and tables, then float64 tables, in the order of pinocchio_cpp.write_model */
static void read_model(const char *path, mb_model *m)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    int *head = read_exact(f, sizeof(int), 3, path);
    memset(m, 0, sizeof *m);
    m->nb = head[0], m->nq = head[1], m->nv = head[2];
    free(head);
    const size_t nb = (size_t)m->nb, nv = (size_t)m->nv;
    m->parent = read_exact(f, sizeof(int), nb, path);
    m->jtype = read_exact(f, sizeof(int), nb, path);
    m->q_start = read_exact(f, sizeof(int), nb, path);
    m->nq_joint = read_exact(f, sizeof(int), nb, path);
    m->v_start = read_exact(f, sizeof(int), nb, path);
    m->nv_joint = read_exact(f, sizeof(int), nb, path);
    m->dof_parent = read_exact(f, sizeof(int), nv, path);
    m->tree_R = read_exact(f, sizeof(double), 9 * nb, path);
    m->tree_p = read_exact(f, sizeof(double), 3 * nb, path);
    m->axis = read_exact(f, sizeof(double), 3 * nb, path);
    m->pitch = read_exact(f, sizeof(double), nb, path);
    m->inertia = read_exact(f, sizeof(double), MB_NI * nb, path);
    m->S = read_exact(f, sizeof(double), 6 * nv, path);
    m->armature = read_exact(f, sizeof(double), nv, path);
    double *g = read_exact(f, sizeof(double), 6, path);
    memcpy(m->a_grav, g, sizeof m->a_grav);
    free(g);
    fclose(f);
    for (int i = 0; i < m->nb; i++)
        if (m->nv_joint[i] > m->max_nvj)
            m->max_nvj = m->nv_joint[i];
    if (mb_model_compile(m) != MB_OK)
        die("mb_model_compile failed on", path);
}

/* the model's tables: read_model's and mb_model_compile's (all malloc'd, as py_model.c frees them) */
static void free_model(mb_model *m)
{
    free(m->parent), free(m->jtype), free(m->q_start), free(m->nq_joint), free(m->v_start);
    free(m->nv_joint), free(m->tree_R), free(m->tree_p), free(m->axis), free(m->pitch);
    free(m->inertia), free(m->inertia6), free(m->S), free(m->armature), free(m->dof_parent);
    free(m->axis_kind), free(m->pose_kind), free(m->dof_unit), free(m->dof_axis), free(m->plnr);
    free(m->sub_cols);
}

typedef struct states {
    int n, nq, nv;
    double *Q, *V, *A, *T;
} states;

static states read_states(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    int *head = read_exact(f, sizeof(int), 3, path);
    states s = {head[0], head[1], head[2], NULL, NULL, NULL, NULL};
    free(head);
    const size_t n = (size_t)s.n;
    s.Q = read_exact(f, sizeof(double), n * s.nq, path);
    s.V = read_exact(f, sizeof(double), n * s.nv, path);
    s.A = read_exact(f, sizeof(double), n * s.nv, path);
    s.T = read_exact(f, sizeof(double), n * s.nv, path);
    fclose(f);
    return s;
}

/* The kernels as one signature: state k in, `out` (out_size doubles) written. */
typedef struct bench {
    const mb_model *m;
    mb_data *d;
    double *scratch;
    const states *s;
} bench;

#define Q(k) (b->s->Q + (size_t)(k) * b->m->nq)
#define V(k) (b->s->V + (size_t)(k) * b->m->nv)
#define A(k) (b->s->A + (size_t)(k) * b->m->nv)
#define T(k) (b->s->T + (size_t)(k) * b->m->nv)

static void k_rnea(bench *b, int k, double *out) { mb_rnea(b->m, b->d, Q(k), V(k), A(k), NULL, out); }
static void k_crba(bench *b, int k, double *out) { mb_crba(b->m, b->d, Q(k), out); }
static void k_aba(bench *b, int k, double *out) { mb_aba(b->m, b->d, Q(k), V(k), T(k), NULL, out); }
static void k_minv(bench *b, int k, double *out) { mb_minv(b->m, b->d, b->scratch, Q(k), out); }
static void k_rnead(bench *b, int k, double *out)
{
    const size_t nn = (size_t)b->m->nv * b->m->nv;
    mb_rnea_derivatives(b->m, b->d, b->scratch, Q(k), V(k), A(k), NULL, out, out + nn, out + 2 * nn);
}
static void k_abad(bench *b, int k, double *out)
{
    const size_t nn = (size_t)b->m->nv * b->m->nv;
    mb_aba_derivatives(b->m, b->d, b->scratch, Q(k), V(k), T(k), NULL, out, out + nn, out + 2 * nn);
}

/* LOOPS: one count for every kernel, or NKERNELS comma-separated; each in 1 … MAX_LOOPS */
static void parse_loops(const char *arg, int *loops)
{
    const char *p = arg;
    int k = 0, ended = 0;
    while (k < NKERNELS && !ended) {
        char *end;
        const long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > MAX_LOOPS || (*end != ',' && *end != '\0'))
            break;
        loops[k++] = (int)v;
        ended = *end == '\0';
        p = end + 1;
    }
    if (!ended || (k != 1 && k != NKERNELS))
        die("LOOPS: expected 1 or 6 comma-separated counts in 1..100000, got", arg);
    for (int j = k; j < NKERNELS; j++)
        loops[j] = loops[0];
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Each kernel's loop in a function of its own, kept out of line so the timings and the counts
 * hold the calls alone. */
__attribute__((noinline)) static void run_loop(void (*kernel)(bench *, int, double *), bench *b, long calls,
                                              double *out)
{
    const int n = b->s->n;
    for (long c = 0; c < calls; c++)
        kernel(b, (int)(c % n), out);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: kernels_harness MODEL STATES OUTDIR LOOPS [COUNT]\n");
        return 2;
    }
    mb_model m;
    read_model(argv[1], &m);
    states s = read_states(argv[2]);
    if (s.nq != m.nq || s.nv != m.nv || s.n < 1)
        die("states do not fit the model:", argv[2]);
    int loops[NKERNELS];
    parse_loops(argv[4], loops);
    const long count = argc > 5 ? atol(argv[5]) : 0;
    long scratch_size = mb_rnea_derivatives_scratch(&m);
    if (mb_minv_scratch(&m) > scratch_size)
        scratch_size = mb_minv_scratch(&m);
    if (mb_aba_derivatives_scratch(&m) > scratch_size)
        scratch_size = mb_aba_derivatives_scratch(&m);
    bench b = {&m, mb_data_new(&m), calloc((size_t)scratch_size + 1, sizeof(double)), &s};
    if (!b.d || !b.scratch)
        die("out of memory for", argv[1]);
    const size_t nv = (size_t)m.nv, nn = nv * nv;
    struct { const char *name; void (*kernel)(bench *, int, double *); size_t size; } kernels[] = {
        {"rnea", k_rnea, nv}, {"crba", k_crba, nn}, {"aba", k_aba, nv}, {"minv", k_minv, nn},
        {"rnea_derivatives", k_rnead, 3 * nn}, {"aba_derivatives", k_abad, 3 * nn},
    };
    double *out = calloc(3 * nn + 1, sizeof(double));
    if (!out)
        die("out of memory for", argv[1]);
    for (size_t j = 0; j < sizeof kernels / sizeof kernels[0]; j++) {
        const int ncheck = s.n < NCHECK ? s.n : NCHECK;
        char path[4096];
        snprintf(path, sizeof path, "%s/ours_%s.bin", argv[3], kernels[j].name);
        FILE *f = fopen(path, "wb");
        if (!f)
            die("cannot write", path);
        double checksum = 0;
        for (int k = 0; k < ncheck; k++) {
            memset(out, 0, sizeof(double) * kernels[j].size);
            kernels[j].kernel(&b, k, out);
            for (size_t i = 0; i < kernels[j].size; i++)
                checksum += fabs(out[i]);
            fwrite(out, sizeof(double), kernels[j].size, f);
        }
        fclose(f);
        double best = INFINITY;
        if (count > 0) {
            CALLGRIND_ZERO_STATS;
            run_loop(kernels[j].kernel, &b, count, out);
            CALLGRIND_DUMP_STATS_AT(kernels[j].name);
            printf("kernel %s 0 %.17g\n", kernels[j].name, checksum);
            continue;
        }
        run_loop(kernels[j].kernel, &b, s.n, out);  /* warm-up */
        printf("loops %s", kernels[j].name);
        for (int r = 0; r < loops[j]; r++) {
            const double t0 = cpu_seconds();
            run_loop(kernels[j].kernel, &b, s.n, out);
            const double t = cpu_seconds() - t0;
            best = t < best ? t : best;
            printf(" %.6e", t / s.n);
        }
        printf("\nkernel %s %.6e %.17g\n", kernels[j].name, best / s.n, checksum);
    }
    free(out);
    mb_data_free(b.d);
    free(b.scratch);
    free(s.Q), free(s.V), free(s.A), free(s.T);
    free_model(&m);
    return 0;
}
