/* py_derivatives.c — Entry points of the analytic derivatives: rnea_derivatives, aba_derivatives, minv
 * (rnea_derivatives.c, aba_derivatives.c, minv.c).  Same two layouts as the other entry points
 * (_core.c): 1-D single states or (N or 1, n) batches; None when the arrays are in neither.
 * The kernels allocate nothing: each thread keeps one scratch block for them (grown when a larger
 * model needs more, freed when the thread ends), so a batch's threads never share one and a
 * loop of single calls allocates once.  Batches of rnea_derivatives and aba_derivatives without
 * f_ext, and of minv, run groups of states in SIMD lanes (derivatives_lanes.c) with the lanes the other batches use. */
#include "py/py_boundary.h"
#include "kernels/derivatives_lanes.h"

#include <stdint.h>
#include <sys/mman.h>

/* A batch's outputs are nv² per state three times over (Talos, 10 000 states: 346 MB); first touch
 * of fresh 4 KiB pages then costs more than the derivatives.  Transparent huge pages (where the
 * kernel offers them on request) fault 2 MiB at a time. */
static void ask_for_huge_pages(PyArrayObject *a)
{
#ifdef MADV_HUGEPAGE
    const size_t bytes = (size_t)PyArray_NBYTES(a);
    if (bytes < ((size_t)8 << 20))
        return;
    const uintptr_t lo = ((uintptr_t)PyArray_DATA(a) + 4095) & ~(uintptr_t)4095;
    const uintptr_t hi = ((uintptr_t)PyArray_DATA(a) + bytes) & ~(uintptr_t)4095;
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);  /* advice only: failure changes nothing */
#else
    (void)a;
#endif
}

typedef struct {
    double *block;
    size_t size;
    unsigned long zeroed_for;  /* the lanes batch whose zero entries the block holds (0: none) */
} scratch_cache;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_ok;

static void scratch_free(void *p)
{
    scratch_cache *c = p;
    free(c->block);
    free(c);
}

static void scratch_key_make(void)
{
    scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

/* This thread's scratch cache with a block of at least n doubles, or NULL if out of memory. */
static scratch_cache *thread_cache(size_t n)
{
    pthread_once(&scratch_once, scratch_key_make);
    if (!scratch_key_ok)
        return NULL;
    scratch_cache *c = pthread_getspecific(scratch_key);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || pthread_setspecific(scratch_key, c) != 0) {
            free(c);
            return NULL;
        }
    }
    if (c->size < n) {  /* aligned for the vectors of the lanes */
        free(c->block);
        c->block = aligned_alloc(64, (sizeof(double) * n + 63) / 64 * 64);
        c->size = c->block ? n : 0;
        c->zeroed_for = 0;
        if (!c->block)
            return NULL;
    }
    return c;
}

/* This thread's scratch of at least n doubles, or NULL if out of memory. */
static double *thread_scratch(size_t n)
{
    scratch_cache *c = thread_cache(n);
    if (!c)
        return NULL;
    c->zeroed_for = 0;  /* a single state's scratch overwrites what the lanes left */
    return c->block;
}

enum { D_RNEA = 0, D_ABA = 1, D_MINV = 2 };

/* M⁻¹ and ∂FD run in world coordinates: with bodies far from the origin (1e100 m) their pivots lose
 * every digit and look singular while M is not.  The body-frame ABA decides: singular there too, or
 * MB_OVERFLOW (inputs too large for double precision) — never "a massless body" for a sound tree. */
static int confirm_singular(const mb_model *m, mb_data *d, const double *q)
{
    double *zero = calloc(2 * (size_t)m->nv + 1, sizeof(double));
    if (!zero)
        return MB_NO_MEMORY;
    const int st = mb_aba(m, d, q, zero, zero, NULL, zero + m->nv);
    free(zero);
    return st == MB_OK ? MB_OVERFLOW : st;
}

/* in = q, qd, x (q̈ or τ), f_ext; out = three nv × nv matrices (minv: in = q; out = M⁻¹) */
static int derivatives_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n, int which)
{
    const double *q = IN(j, 0, n), *qd = which == D_MINV ? NULL : IN(j, 1, n);
    const double *x = which == D_MINV ? NULL : IN(j, 2, n), *fe = j->use_fext ? IN(j, 3, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK && qd)
        st = check_rates(m, qd, x, which == D_RNEA ? MB_BAD_QDD : MB_BAD_TAU, fe);
    if (st != MB_OK)
        return st;
    const long size = which == D_RNEA ? mb_rnea_derivatives_scratch(m)
                      : which == D_ABA ? mb_aba_derivatives_scratch(m) : mb_minv_scratch(m);
    double *scratch = thread_scratch((size_t)size);
    if (!scratch)
        return MB_NO_MEMORY;
    if (which == D_RNEA)
        mb_rnea_derivatives(m, d, scratch, q, qd, x, fe, OUT(j, 0, n), OUT(j, 1, n), OUT(j, 2, n));
    else if (which == D_ABA)
        st = mb_aba_derivatives(m, d, scratch, q, qd, x, fe, OUT(j, 0, n), OUT(j, 1, n), OUT(j, 2, n));
    else
        st = mb_minv(m, d, scratch, q, OUT(j, 0, n));
    if (st == MB_SINGULAR)
        st = confirm_singular(m, d, q);
    return st;
}

static int rnea_derivatives_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    return derivatives_state(m, d, j, n, D_RNEA);
}

static int aba_derivatives_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    return derivatives_state(m, d, j, n, D_ABA);
}

static int minv_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    return derivatives_state(m, d, j, n, D_MINV);
}

/* ---- Batches in lanes ------------------------------------------------------------------------- */

/* The derivatives' lanes matching the lanes of the other batches (use_lanes): AVX-512F's, AVX2's,
 * the baseline's, or none. */
static const mb_derivatives_lanes_impl *derivatives_lanes(void)
{
    if (!lanes_active)
        return NULL;
#ifdef MB_HAVE_LANES_AVX2
    if (lanes_active == &mb_lanes_avx2)
        return &mb_derivatives_lanes_avx2;
#endif
#ifdef MB_HAVE_LANES_AVX512
    if (lanes_active == &mb_lanes_avx512)
        return &mb_derivatives_lanes_avx512;
#endif
    return &mb_derivatives_lanes_baseline;
}

typedef struct {
    job j;  /* first: the state function gets &j */
    Py_ssize_t N;
    const mb_derivatives_lanes_impl *lanes;
    int which;  /* D_RNEA, D_ABA or D_MINV */
    int stream; /* outputs far larger than the caches: non-temporal stores */
    unsigned long id;  /* this batch, for the zero entries its lanes leave in a thread's scratch */
    atomic_int *overflowed;  /* set by a group with an inf or NaN result: the batch's outputs get checked */
} group_job;

/* Are the results of state n finite (three, or M⁻¹ alone)? */
static int state_finite(const mb_model *m, const job *j, Py_ssize_t n, int which)
{
    const Py_ssize_t nv2 = (Py_ssize_t)m->nv * m->nv;
    if (which == D_MINV)
        return mb_gate_finite(OUT(j, 0, n), nv2);
    return mb_gate_finite(OUT(j, 0, n), nv2) && mb_gate_finite(OUT(j, 1, n), nv2) && mb_gate_finite(OUT(j, 2, n), nv2);
}

/* "State" g of a batch in groups: states g·W … g·W+W−1 in lanes when all W exist, pass the checks
 * of a single call and the lanes succeed; otherwise one by one, which reports a failure (or finds
 * the singular state) as a single call would. */
static int derivatives_group(const mb_model *m, mb_data *d, const job *jj, Py_ssize_t g)
{
    const group_job *G = (const group_job *)jj;
    const job *j = &G->j;
    const int W = G->lanes->width, bad_x = G->which == D_RNEA ? MB_BAD_QDD : MB_BAD_TAU;
    const Py_ssize_t n0 = g * W, n1 = n0 + W <= G->N ? n0 + W : G->N;
    int lanes = n1 - n0 == W;
    for (Py_ssize_t n = n0; n < n1 && lanes; n++)
        lanes = mb_check_configuration(m, IN(j, 0, n)) == MB_OK &&
                (G->which == D_MINV || check_rates(m, IN(j, 1, n), IN(j, 2, n), bad_x, NULL) == MB_OK);
    if (lanes) {
        scratch_cache *c = thread_cache((G->lanes->scratch_bytes(m) + sizeof(double) - 1) / sizeof(double));
        if (!c)
            return MB_NO_MEMORY;
        void *scratch = c->block;
        const int fresh = c->zeroed_for != G->id;
        c->zeroed_for = G->id;
        const double *q[8], *qd[8], *x[8];
        double *o1[8], *o2[8], *o3[8];
        int finite = 1, st;
        if (G->which == D_MINV) {  /* q in, M⁻¹ out */
            for (int l = 0; l < W; l++)
                q[l] = IN(j, 0, n0 + l), o1[l] = OUT(j, 0, n0 + l);
            st = G->lanes->minv(m, scratch, q, o1, G->stream, &finite);
        } else {
            for (int l = 0; l < W; l++)
                q[l] = IN(j, 0, n0 + l), qd[l] = IN(j, 1, n0 + l), x[l] = IN(j, 2, n0 + l),
                o1[l] = OUT(j, 0, n0 + l), o2[l] = OUT(j, 1, n0 + l), o3[l] = OUT(j, 2, n0 + l);
            st = (G->which == D_RNEA ? G->lanes->rnea : G->lanes->aba)(m, scratch, q, qd, x, o1, o2, o3, G->stream,
                                                                       fresh, &finite);
        }
        if (st == MB_OK) {
            if (!finite)
                atomic_store(G->overflowed, 1);
            return MB_OK;
        }
    }
    for (Py_ssize_t n = n0; n < n1; n++) {
        const int st = derivatives_state(m, d, j, n, G->which);
        if (st != MB_OK)
            return st;
        if (!state_finite(m, j, n, G->which))
            atomic_store(G->overflowed, 1);
    }
    return MB_OK;
}

/* A batch of rnea_derivatives or aba_derivatives in lanes into out[0..2], of minv into out[0]
 * (execute's work, counted in groups): a tuple of the three, or M⁻¹ itself. */
static PyObject *run_in_lanes(CModel *cm, group_job *G, PyArrayObject **out)
{
    const int n_out = G->which == D_MINV ? 1 : 3;
    int st = MB_OK;
    for (int k = 0; k < n_out; k++)
        if (!out[k])
            st = STATUS_PY_ERROR;  /* the error is set */
    if (st == MB_OK) {
        const Py_ssize_t nv2 = (Py_ssize_t)cm->m.nv * cm->m.nv, W = G->lanes->width;
        for (int k = 0; k < n_out; k++)
            bind_output(&G->j, k, out[k], nv2);
        Py_BEGIN_ALLOW_THREADS
        st = run_batch(&cm->m, derivatives_group, &G->j, (G->N + W - 1) / W);
        Py_END_ALLOW_THREADS
        /* the groups checked their own results (in the caches): the whole batch only if one failed */
        if (st == MB_OK && atomic_load(G->overflowed) && !outputs_finite(&G->j, 1, G->N))
            st = STATUS_PY_ERROR;
    }
    if (n_out == 1) {
        if (st == MB_OK)
            return (PyObject *)out[0];
        Py_XDECREF(out[0]);
        return st == STATUS_PY_ERROR ? NULL : raise_status(st);
    }
    PyObject *results = st == MB_OK ? PyTuple_New(3) : NULL;
    for (int k = 0; k < 3; k++) {
        if (results)
            PyTuple_SET_ITEM(results, k, (PyObject *)out[k]);
        else
            Py_XDECREF(out[k]);
    }
    return st == MB_OK || st == STATUS_PY_ERROR ? results : raise_status(st);
}

/* (cmodel, q, qd, x, f_ext) -> three (…, nv, nv) matrices; (cmodel, q) -> one for minv.  Every
 * array through the gate (py_gate.c): None for a required one is a TypeError naming it. */
static PyObject *derivatives_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held, const char *name,
                                   int which)
{
    const int n_in = which == D_MINV ? 1 : 4, n_out = which == D_MINV ? 1 : 3;
    CModel *cm = entry_model(args, nargs, n_in + 1, name);
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const char *third = which == D_RNEA ? "qdd" : "tau";
    arg_spec specs[4] = {{"q", args[1], 1, m->nq, 0, 0}, {"qd", NULL, 1, m->nv, 0, 0},
                         {third, NULL, 1, m->nv, 0, 0}, {"f_ext", NULL, 2, m->nb, 6, 1}};
    if (which != D_MINV)
        specs[1].obj = args[2], specs[2].obj = args[3], specs[3].obj = args[4];
    job j = {.name = name};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, n_in, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = which != D_MINV && j.in[3] != NULL;
    PyArrayObject *out[3] = {NULL, NULL, NULL};
    Py_ssize_t per_state[3];
    for (int k = 0; k < n_out; k++) {
        out[k] = new_output(batch, N, 2, m->nv, m->nv);
        per_state[k] = (Py_ssize_t)m->nv * m->nv;
        if (out[k] && batch)
            ask_for_huge_pages(out[k]);
    }
    if (batch && !j.use_fext && derivatives_lanes() && m->nv > 0) {
        /* beyond a core's share of the last-level cache: on a loaded 2-core VM (32 MB L3 shared with the
     * host) 8 MB of H's streamed took 0.55 µs a solo12 state against 0.9–1.2 cached (crba, 10 000 states) */
    enum { STREAM_MIN_BYTES = 8 << 20 };
        static atomic_ulong batches;
        atomic_int overflowed = 0;
        group_job G = {j, N, derivatives_lanes(), which,
                       (double)n_out * sizeof(double) * (double)N * m->nv * m->nv >= STREAM_MIN_BYTES,
                       atomic_fetch_add(&batches, 1) + 1, &overflowed};
        return run_in_lanes(cm, &G, out);
    }
    if (which == D_MINV) {  /* the matrix itself, with no tuple made and taken apart around it */
        if (!out[0])
            return NULL;
        bind_output(&j, 0, out[0], per_state[0]);
        const int st = execute(cm, minv_state, &j, batch, N);
        if (st == MB_OK)
            return (PyObject *)out[0];
        Py_DECREF(out[0]);
        return raise_status(st);
    }
    return run_into_outputs(cm, which == D_RNEA ? rnea_derivatives_state : aba_derivatives_state, &j, batch, N,
                            n_out, out, per_state);
}

static PyObject *rnea_derivatives_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return derivatives_entry(args, nargs, held, "rnea_derivatives", D_RNEA);
}

static PyObject *aba_derivatives_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return derivatives_entry(args, nargs, held, "aba_derivatives", D_ABA);
}

static PyObject *minv_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return derivatives_entry(args, nargs, held, "minv", D_MINV);
}

GATED_ENTRY(py_rnea_derivatives, rnea_derivatives_entry)
GATED_ENTRY(py_aba_derivatives, aba_derivatives_entry)
GATED_ENTRY(py_minv, minv_entry)
