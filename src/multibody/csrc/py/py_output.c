/* py_output.c — Output arrays of the entry points, large ones through a NumPy memory handler that reuses
 * the blocks freed last. */
#include "py/py_boundary.h"

/* ---- Reused memory for large outputs --------------------------------------------------------
 * A batch writes its result into new memory.  Above glibc's mmap threshold (32 MB at most) every
 * such allocation maps fresh pages, which the kernel zeroes on first touch and unmaps on free: a
 * sixth of a 10 000-state Talos CRBA (115 MB), every call, and more than the derivatives
 * themselves for their three nv × nv outputs per state.  Outputs of REUSE_MIN_BYTES or more are
 * therefore allocated through a NumPy memory handler (NEP 49, the mechanism NumPy provides for
 * caching allocators) that keeps the blocks freed last and hands each to the next output of its
 * size — the pattern of a loop over batches, for entry points of one output or several (the
 * derivatives' three).  At most REUSE_SLOTS blocks of REUSE_MAX_BYTES in all are held, and only
 * until an output of another size comes (release_output_memory() frees them at once).  The handler
 * is set only around our own allocations, so NumPy's other arrays are untouched. */
enum { REUSE_MIN_BYTES = 1 << 20, REUSE_SLOTS = 4 };
#define REUSE_MAX_BYTES ((size_t)512 << 20)

static struct {
    void *block[REUSE_SLOTS];   /* block[0 .. n): oldest first */
    size_t size[REUSE_SLOTS];
    int n;
    size_t held;
    pthread_mutex_t lock;  /* NumPy frees arrays wherever their last reference goes */
} reuse = {{NULL}, {0}, 0, 0, PTHREAD_MUTEX_INITIALIZER};

/* Take slot s out of the pool (lock held); returns its block. */
static void *reuse_take(int s)
{
    void *p = reuse.block[s];
    reuse.held -= reuse.size[s];
    for (int t = s; t + 1 < reuse.n; t++)
        reuse.block[t] = reuse.block[t + 1], reuse.size[t] = reuse.size[t + 1];
    reuse.n--;
    return p;
}

static void *reuse_malloc(void *ctx, size_t size)
{
    (void)ctx;
    void *p = NULL, *stale[REUSE_SLOTS];
    int n_stale = 0;
    pthread_mutex_lock(&reuse.lock);
    for (int s = reuse.n - 1; s >= 0 && !p; s--)  /* the newest of this size: likeliest still in cache */
        if (reuse.size[s] == size)
            p = reuse_take(s);
    if (!p)  /* no block of this size: not the loop the others wait for, so let them go */
        while (reuse.n > 0)
            stale[n_stale++] = reuse_take(reuse.n - 1);
    pthread_mutex_unlock(&reuse.lock);
    while (n_stale > 0)
        free(stale[--n_stale]);
    if (p)
        return p;
    /* 64-byte aligned (glibc's large blocks start 16 bytes into a page): the streamed batches write
     * whole 32-byte vectors and 64-byte lines where the states' rows start on them (lanes.h) */
    return posix_memalign(&p, 64, size ? size : 1) == 0 ? p : NULL;
}

static void *reuse_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    return calloc(nelem ? nelem : 1, elsize ? elsize : 1);
}

static void *reuse_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    return realloc(ptr, size ? size : 1);
}

static void reuse_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    if (size < REUSE_MIN_BYTES || size > REUSE_MAX_BYTES) {
        free(ptr);
        return;
    }
    void *stale[REUSE_SLOTS];
    int n_stale = 0;
    pthread_mutex_lock(&reuse.lock);
    while (reuse.n == REUSE_SLOTS || (reuse.n > 0 && reuse.held + size > REUSE_MAX_BYTES))
        stale[n_stale++] = reuse_take(0);  /* the oldest make room */
    reuse.block[reuse.n] = ptr, reuse.size[reuse.n] = size, reuse.n++;
    reuse.held += size;
    pthread_mutex_unlock(&reuse.lock);
    while (n_stale > 0)
        free(stale[--n_stale]);
}

PyDataMem_Handler reuse_handler = {
    "multibody_reuse_large_outputs", 1, {NULL, reuse_malloc, reuse_calloc, reuse_realloc, reuse_free}};
PyObject *reuse_capsule;  /* the handler as NumPy takes it, made at import */

static void free_list_clear(void);

PyObject *py_release_output_memory(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    free_list_clear();  /* the small outputs' free list too */
    void *stale[REUSE_SLOTS];
    int n_stale = 0;
    pthread_mutex_lock(&reuse.lock);
    while (reuse.n > 0)
        stale[n_stale++] = reuse_take(reuse.n - 1);
    pthread_mutex_unlock(&reuse.lock);
    while (n_stale > 0)
        free(stale[--n_stale]);
    Py_RETURN_NONE;
}

/* kept_output_bytes(): the bytes of the blocks kept for the next outputs (0: none) — what the tests
 * read instead of comparing addresses, which the allocator may reuse by chance. */
PyObject *py_kept_output_bytes(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    pthread_mutex_lock(&reuse.lock);
    const size_t kept = reuse.held;
    pthread_mutex_unlock(&reuse.lock);
    return PyLong_FromSize_t(kept);
}

/* ---- Small outputs: a free list of the arrays returned last ------------------------------------
 * Making a small ndarray costs ~650 instructions (NumPy's descriptor, strides, memory-handler
 * lookup, two mallocs): a tenth of a UR5 CRBA call through Python.  The free list keeps the last
 * FREE_SLOTS small outputs (a strong reference each); one whose only reference is the list's (its
 * caller dropped it: `for q in Q: mb.crba(model, q)[0, 0]`) is handed out again when an output of
 * its shape is asked for — as CPython's own free lists reuse floats and tuples, invisible to any
 * holder, since there is none: no view (a base), no weak reference, no other reference.  It must
 * still be the C-contiguous, aligned, writeable, owning float64 array it was made (a holder may
 * have changed its flags or shape in place before letting it go).  Every kernel writes its whole
 * output (NumPy's own outputs start uninitialised too).  Only with the GIL held, as all of this file. */
enum { FREE_SLOTS = 8, FREE_MAX_BYTES = 32 << 10 };
static PyArrayObject *free_list[FREE_SLOTS];
static int free_next;

static int reusable(PyArrayObject *a, int k, const npy_intp *dims)
{
    enum { FLAGS = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE | NPY_ARRAY_OWNDATA };
    if (Py_REFCNT(a) != 1 || PyArray_NDIM(a) != k || (PyArray_FLAGS(a) & FLAGS) != FLAGS ||
        PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a) || PyArray_BASE(a) != NULL ||
        ((PyArrayObject_fields *)a)->weakreflist != NULL)
        return 0;
    for (int t = 0; t < k; t++)
        if (PyArray_DIM(a, t) != dims[t])
            return 0;
    return 1;
}

/* A small output from the free list, or a new one that joins it (in a free slot, else the oldest's). */
static PyArrayObject *small_array(int k, npy_intp *dims)
{
    for (int s = 0; s < FREE_SLOTS; s++)
        if (free_list[s] && reusable(free_list[s], k, dims))
            return (PyArrayObject *)Py_NewRef(free_list[s]);
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(k, dims, NPY_DOUBLE);
    if (!a)
        return NULL;
    int s = 0;
    while (s < FREE_SLOTS && free_list[s] && Py_REFCNT(free_list[s]) != 1)
        s++;
    if (s == FREE_SLOTS)
        s = free_next, free_next = (free_next + 1) % FREE_SLOTS;
    Py_XSETREF(free_list[s], (PyArrayObject *)Py_NewRef(a));
    return a;
}

static void free_list_clear(void)
{
    for (int s = 0; s < FREE_SLOTS; s++)
        Py_CLEAR(free_list[s]);
}

/* A new float64 output array of shape dims[0..k); small ones from the free list, large ones
 * through the reuse handler. */
PyArrayObject *new_array(int k, npy_intp *dims)
{
    size_t bytes = sizeof(double);
    for (int t = 0; t < k; t++)
        bytes *= (size_t)dims[t];
    if (bytes <= FREE_MAX_BYTES && k >= 1)
        return small_array(k, dims);
    if (bytes < REUSE_MIN_BYTES)
        return (PyArrayObject *)PyArray_SimpleNew(k, dims, NPY_DOUBLE);
    PyObject *previous = PyDataMem_SetHandler(reuse_capsule);
    if (!previous)
        return NULL;
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(k, dims, NPY_DOUBLE);
    PyObject *ours = PyDataMem_SetHandler(previous);
    Py_DECREF(previous);
    if (!ours) {
        Py_XDECREF(a);
        return NULL;
    }
    Py_DECREF(ours);
    return a;
}

/* output_array(shape) -> a new float64 array, uninitialised, made as new_array makes the entry points'
 * outputs: for outputs the caller passes in (rollout's records), so that they too are reused blocks
 * with no huge-page advice (NumPy's own allocator advises it: on a VM whose freed memory goes back
 * to the host, first-touching a batch's 300 MB in 2 MB pages cost 0.3–0.6 s more than in 4 kB). */
PyObject *py_output_array(PyObject *self, PyObject *shape)
{
    (void)self;
    npy_intp dims[NPY_MAXDIMS];
    const Py_ssize_t k = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -1;
    if (k < 0 || k > NPY_MAXDIMS)
        return PyErr_Format(PyExc_TypeError, "shape: expected a tuple of at most %d sizes, got %R", NPY_MAXDIMS, shape);
    for (Py_ssize_t t = 0; t < k; t++) {
        PyObject *size = PyTuple_GET_ITEM(shape, t);
        dims[t] = PyLong_Check(size) ? (npy_intp)PyLong_AsSsize_t(size) : -1;
        if (dims[t] < 0) {
            PyErr_Clear();
            return PyErr_Format(PyExc_ValueError, "shape: expected sizes >= 0, got %R", shape);
        }
    }
    return (PyObject *)new_array((int)k, dims);
}

/* New output array: (N, t0[, t1]) in batch mode, (t0[, t1]) single (t0 = 0: scalar per state). */
PyArrayObject *new_output(int batch, Py_ssize_t N, int nd, npy_intp t0, npy_intp t1)
{
    npy_intp dims[3];
    int k = 0;
    if (batch)
        dims[k++] = N;
    if (nd >= 1)
        dims[k++] = t0;
    if (nd >= 2)
        dims[k++] = t1;
    return new_array(k, dims);
}

/* New output array with up to three trailing dimensions. */
PyArrayObject *new_output_dims(int batch, Py_ssize_t N, int nd, const npy_intp *tail)
{
    npy_intp dims[4];
    int k = 0;
    if (batch)
        dims[k++] = N;
    for (int t = 0; t < nd; t++)
        dims[k++] = tail[t];
    return new_array(k, dims);
}

void bind_output(job *j, int k, PyArrayObject *a, Py_ssize_t per_state)
{
    j->out[k] = PyArray_DATA(a);
    j->ostep[k] = per_state;
    if (j->n_out <= k)
        j->n_out = k + 1;
}
