/* py_batch.c — Running a job: single states on the model's workspace with the GIL held, batches without it,
 * split across threads when large (each thread with its own workspace), groups of states in
 * SIMD lanes where the job has a lane kernel; the one place a status code becomes a Python error. */
#include "py/py_boundary.h"

/* Threads of a large batch: set at import to the number of CPUs and by set_num_threads (GIL
 * held), read by batches that run without the GIL, so atomic (no data race under TSan). */
static atomic_int num_threads = 1;

void set_threads(int n)
{
    atomic_store_explicit(&num_threads, n < 1 ? 1 : n > 256 ? 256 : n, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------------ */
/* Batches: the threads claim blocks of states in order from a shared counter (a thread slowed by
 * other work on the machine leaves its blocks to the others), each thread with its own workspace. */

/* The blocks of a batch: states next… are unclaimed; states from stop on need not run (a state
 * below failed, and the first failure is the one reported). */
typedef struct {
    atomic_ptrdiff_t next, stop;
    Py_ssize_t N, block;
} work_queue;

typedef struct {
    const mb_model *m;
    state_fn fn;
    const job *j;
    work_queue *queue;
    Py_ssize_t bad;   /* index of this thread's failing state, or N */
    int status;
    mb_singular_body singular;  /* where that state's MB_SINGULAR was found (the worker's record) */
} chunk;

/* The lanes batched ABA, RNEA and CRBA use: the widest this CPU runs (module init: AVX-512F's,
 * else AVX2's, else the baseline's); NULL: none (use_lanes). */
const mb_lanes_impl *lanes_active = &mb_lanes_baseline;

/* States n … n+W−1 (W ≤ 8) at once through the job's lane kernel (aba_lanes.c: ABA or RNEA with
 * inputs q, q̇ and x = τ or q̈; CRBA with q only) when every one of them passes the checks of its
 * state function and the lanes succeed; 0 leaves the group to the state function, state by state,
 * which then reports the first failure as a single call would. */
static int lanes_group(const job *j, const mb_model *m, void *dl, Py_ssize_t n, int W)
{
    const double *q[8], *qd[8], *x[8];
    double *out[8];
    for (int l = 0; l < W; l++) {
        q[l] = IN(j, 0, n + l), out[l] = OUT(j, 0, n + l);
        qd[l] = j->lanes_bad_x ? IN(j, 1, n + l) : NULL, x[l] = j->lanes_bad_x ? IN(j, 2, n + l) : NULL;
        if (mb_check_configuration(m, q[l]) != MB_OK ||
            (j->lanes_bad_x && check_rates(m, qd[l], x[l], j->lanes_bad_x, NULL) != MB_OK))
            return 0;
    }
    return j->lanes_group(m, dl, q, qd, x, out) == MB_OK;
}

/* States lo…hi−1 on the thread's workspaces; 0 at the first failing state (recorded in c). */
static int run_block(chunk *c, mb_data *d, void *dl, Py_ssize_t lo, Py_ssize_t hi)
{
    const int W = dl ? c->j->lanes->width : 1;
    for (Py_ssize_t n = lo; n < hi;) {
        if (dl && n + W <= hi && lanes_group(c->j, c->m, dl, n, W)) {
            n += W;
            continue;
        }
        const int st = c->fn(c->m, d, c->j, n);
        if (st != MB_OK) {
            c->status = st;
            c->bad = n;
            c->singular = mb_singular_take();
            return 0;
        }
        n++;
    }
    return 1;
}

/* State n failed: the blocks from there on need not run. */
static void stop_at(work_queue *w, Py_ssize_t n)
{
    ptrdiff_t stop = atomic_load(&w->stop);
    while (n < stop && !atomic_compare_exchange_weak(&w->stop, &stop, n))
        ;
}

static void *run_chunk(void *arg)
{
    chunk *c = arg;
    work_queue *w = c->queue;
    c->status = MB_OK;
    c->bad = w->N;
    c->singular = mb_singular_take();  /* forget what an earlier job left on this thread */
    c->singular.body = -1;
    mb_data *d = mb_data_new(c->m);
    const mb_lanes_impl *impl = c->j->lanes;
    void *dl = d && impl ? impl->data_new(c->m) : NULL;
    if (!d || (impl && !dl)) {  /* no workspace: the other threads run the blocks (or none does) */
        mb_data_free(d);
        return NULL;
    }
    for (;;) {
        const Py_ssize_t lo = atomic_fetch_add(&w->next, w->block);
        if (lo >= w->N || lo >= atomic_load(&w->stop))
            break;
        if (!run_block(c, d, dl, lo, lo + w->block < w->N ? lo + w->block : w->N)) {
            stop_at(w, c->bad);
            break;
        }
    }
    if (dl)
        impl->data_free(dl);
    mb_data_free(d);
    return NULL;
}

/* Run states 0…N−1; returns the status of the first failing state (lowest index) or MB_OK.
 * Called without the GIL.  The blocks are claimed in order, so every state below a failure runs
 * (its own failure would be the one reported); a block is a multiple of the lanes' width, about
 * 1/64 of a thread's share, at least one state. */
int run_batch_from(const mb_model *m, state_fn fn, const job *j, Py_ssize_t N, Py_ssize_t min_parallel)
{
    enum { MAX_THREADS = 256, BLOCKS_PER_THREAD = 64 };
    int T = atomic_load_explicit(&num_threads, memory_order_relaxed);
    if (N < min_parallel || T < 2)
        T = 1;
    if (T > MAX_THREADS)
        T = MAX_THREADS;
    if (T > N)
        T = (int)(N > 0 ? N : 1);
    const Py_ssize_t W = j->lanes ? j->lanes->width : 1;
    Py_ssize_t block = (N + (Py_ssize_t)T * BLOCKS_PER_THREAD - 1) / ((Py_ssize_t)T * BLOCKS_PER_THREAD);
    block = T == 1 ? (N > 0 ? N : 1) : (block + W - 1) / W * W;
    work_queue w = {0, N, N, block};
    chunk c[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 0; t < T; t++)
        c[t] = (chunk){m, fn, j, &w, N, MB_OK};
    for (int t = 1; t < T; t++)
        started[t] = pthread_create(&tid[t], NULL, run_chunk, &c[t]) == 0;
    run_chunk(&c[0]);  /* a thread that could not start leaves its blocks to the others */
    for (int t = 1; t < T; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
    const Py_ssize_t unclaimed = atomic_load(&w.next);
    if (unclaimed < N && unclaimed < atomic_load(&w.stop))  /* below every failure: no thread had a workspace */
        return MB_NO_MEMORY;
    int first = -1;
    for (int t = 0; t < T; t++)
        if (c[t].status != MB_OK && (first < 0 || c[t].bad < c[first].bad))
            first = t;
    if (first < 0)
        return MB_OK;
    mb_singular_put(&c[first].singular);  /* the caller's thread builds the message */
    return c[first].status;
}

int run_batch(const mb_model *m, state_fn fn, const job *j, Py_ssize_t N)
{
    return run_batch_from(m, fn, j, N, PARALLEL_MIN_BATCH);
}

/* The one place where a status code becomes a Python error. */
PyObject *raise_status(int status)
{
    if (status == STATUS_PY_ERROR)
        return NULL;
    if (status == MB_NO_MEMORY)
        return PyErr_NoMemory();
    PyErr_SetString(status == MB_OVERFLOW ? ResultOverflowError : PyExc_ValueError, mb_status_message(status));
    return NULL;
}

/* use_lanes(name): "baseline", "avx2" or "avx512" (where built and supported) for the lane groups
 * of batched ABA, RNEA and CRBA, "none" for one state at a time; returns the name in use before.
 * Tests run every implementation; the benchmark times the one-state kernel. */
static const char *lanes_name(const mb_lanes_impl *impl)
{
    if (!impl)
        return "none";
#ifdef MB_HAVE_LANES_AVX2
    if (impl == &mb_lanes_avx2)
        return "avx2";
#endif
#ifdef MB_HAVE_LANES_AVX512
    if (impl == &mb_lanes_avx512)
        return "avx512";
#endif
    return "baseline";
}

/* The widest lanes this CPU runs: AVX-512F (8 doubles), AVX2 (4) or the baseline (2, or the
 * native build's).  __builtin_cpu_supports also asks whether the OS saves the wide registers. */
void pick_lanes(void)
{
    lanes_active = &mb_lanes_baseline;
#if defined(MB_HAVE_LANES_AVX2) || defined(MB_HAVE_LANES_AVX512)
    __builtin_cpu_init();
#endif
#ifdef MB_HAVE_LANES_AVX2
    if (__builtin_cpu_supports("avx2"))
        lanes_active = &mb_lanes_avx2;
#endif
#ifdef MB_HAVE_LANES_AVX512
    if (__builtin_cpu_supports("avx512f"))
        lanes_active = &mb_lanes_avx512;
#endif
}

PyObject *py_use_lanes(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!name)
        return PyErr_Format(PyExc_TypeError, "use_lanes: expected a name, got %R", arg);
    const mb_lanes_impl *chosen = NULL;
    if (strcmp(name, "baseline") == 0)
        chosen = &mb_lanes_baseline;
#ifdef MB_HAVE_LANES_AVX2
    else if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2"))
        chosen = &mb_lanes_avx2;
#endif
#ifdef MB_HAVE_LANES_AVX512
    else if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("avx512f"))
        chosen = &mb_lanes_avx512;
#endif
    else if (strcmp(name, "none") != 0)
        return PyErr_Format(PyExc_ValueError, "use_lanes: %R is not built or not supported by this CPU", arg);
    const char *before = lanes_name(lanes_active);
    lanes_active = chosen;
    return PyUnicode_FromString(before);
}

PyObject *py_set_num_threads(PyObject *self, PyObject *arg)
{
    (void)self;
    const long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1) {
        PyErr_Format(PyExc_ValueError, "n: expected a number of threads >= 1, got %ld", n);
        return NULL;
    }
    set_threads(n > 256 ? 256 : (int)n);
    Py_RETURN_NONE;
}

PyObject *py_get_num_threads(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLong(atomic_load_explicit(&num_threads, memory_order_relaxed));
}
