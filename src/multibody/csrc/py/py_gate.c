/* py_gate.c — the arguments of the entry points: every array through the gate (gate.h), then its
 * shape; the batch layouts of the per-state jobs; scalar ranges.  Each error names the argument. */
#include "py/py_boundary.h"

PyObject *ResultOverflowError;  /* made at import (_core.c) */

PyArrayObject *hold_gate(gate_hold *h, PyObject *o, const char *name, int type, int flags)
{
    if (h->n == GATE_HOLD_MAX) {  /* a programming error: more arrays than an entry point declares */
        PyErr_Format(PyExc_RuntimeError, "%s: too many array arguments", name);
        return NULL;
    }
    PyArrayObject *a = mb_gate(o, name, type, flags);
    if (a)
        h->o[h->n++] = (PyObject *)a;
    return a;
}

void hold_release(gate_hold *h)
{
    while (h->n > 0)
        Py_DECREF(h->o[--h->n]);
}

/* Fill a job's inputs from specs through the gate: optional arguments given as NULL or None stay
 * absent (pointer NULL), a required one is a TypeError.  All inputs must have the trailing shape
 * of their spec after 0 (single state) or 1 (batch) leading dimensions, the same number for all,
 * and leading sizes 1 (shared) or N.  Returns 1 and N (1 in single mode), 0 for "not this layout"
 * (the caller returns None and the Python face reshapes), -1 with the error set.  The converted
 * arrays stay alive in h until hold_release. */
int bind_inputs(const arg_spec *specs, int count, job *j, gate_hold *h, Py_ssize_t *N, int *batch)
{
    npy_intp n = 1;
    int extra = -1;
    for (int k = 0; k < count; k++) {  /* j->in[k], j->step[k] are 0 (a new job) */
        const arg_spec *s = &specs[k];
        if (!s->obj || s->obj == Py_None) {
            if (s->optional)
                continue;
            PyErr_Format(PyExc_TypeError, "%s: expected an array of numbers, got None", s->name);
            return -1;
        }
        /* the single-call fast path: an argument the kernel reads as it is stays borrowed (the
         * caller holds it for the whole call); only a converted copy is held */
        PyArrayObject *a = mb_gate_ready(s->obj, NPY_DOUBLE, 0) ? (PyArrayObject *)s->obj
                                                                : hold_gate(h, s->obj, s->name, NPY_DOUBLE, 0);
        if (!a)
            return -1;
        const int e = PyArray_NDIM(a) - s->tail_nd;
        if (extra < 0)
            extra = e;
        const npy_intp *d = PyArray_DIMS(a);
        if ((e != 0 && e != 1) || e != extra || d[e] != s->t0 || (s->tail_nd == 2 && d[e + 1] != s->t1))
            return 0;
        j->in[k] = PyArray_DATA(a);
        const npy_intp lead = e ? d[0] : 1;
        if (lead != 1) {  /* leading size 1: shared by all states (step 0) */
            if (n != 1 && lead != n) {
                PyErr_Format(PyExc_ValueError, "%s: batch dimensions do not match: a batch of %zd states, but the "
                             "arguments before it have %zd (batched arguments need the same number of rows, or 1)", s->name,
                             (Py_ssize_t)lead, (Py_ssize_t)n);
                return -1;
            }
            n = lead;
            j->step[k] = s->t0 * (s->tail_nd == 2 ? s->t1 : 1);
        }
    }
    *batch = extra > 0;
    *N = extra > 0 ? n : 1;
    return 1;
}

int nargs_ok(Py_ssize_t nargs, Py_ssize_t want, const char *fn)
{
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", fn, want, nargs);
        return 0;
    }
    return 1;
}

/* The model of an entry point called with `want` arguments, the CModel first; NULL with the error set. */
CModel *entry_model(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *name)
{
    return nargs_ok(nargs, want, name) ? get_model(args[0]) : NULL;
}

/* An array argument of `type` with ndim dimensions, through the gate into h; dims[k] ≥ 0 must
 * match, −1 accepts any size (returned in dims).  MB_GATE_WRITABLE: an output the caller gives,
 * used in place. */
PyArrayObject *gated_array(gate_hold *h, PyObject *o, const char *name, int type, int ndim, npy_intp *dims, int flags)
{
    PyArrayObject *a = hold_gate(h, o, name, type, flags);
    if (!a)
        return NULL;
    if (ndim == 1 && dims[0] >= 0 && (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != dims[0])) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd numbers (shape (%zd,)), got a %d-D array of size %zd", name,
                     (Py_ssize_t)dims[0], (Py_ssize_t)dims[0], PyArray_NDIM(a), (Py_ssize_t)PyArray_SIZE(a));
        return NULL;
    }
    if (PyArray_NDIM(a) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: expected a %d-D array, got %d-D", name, ndim, PyArray_NDIM(a));
        return NULL;
    }
    for (int k = 0; k < ndim; k++) {
        if (dims[k] >= 0 && PyArray_DIM(a, k) != dims[k]) {
            PyErr_Format(PyExc_ValueError, "%s: dimension %d is %zd, expected %zd", name, k,
                         (Py_ssize_t)PyArray_DIM(a, k), (Py_ssize_t)dims[k]);
            return NULL;
        }
        dims[k] = PyArray_DIM(a, k);
    }
    return a;
}

/* lam as C ints, checked: −1 ≤ lam[i] < i.  Caller frees. */
int *lam_ints(gate_hold *h, PyObject *o, npy_intp n)
{
    npy_intp dims[1] = {n};
    PyArrayObject *a = gated_array(h, o, "lam", NPY_INT64, 1, dims, 0);
    if (!a)
        return NULL;
    const npy_int64 *x = PyArray_DATA(a);
    int *lam = malloc(sizeof(int) * (n ? n : 1));
    if (!lam)
        return (int *)PyErr_NoMemory();
    for (npy_intp i = 0; i < n; i++) {
        if (x[i] < -1 || x[i] >= i) {
            free(lam);
            PyErr_Format(PyExc_ValueError, "lam: must satisfy -1 <= lam[i] < i, got lam[%zd] = %lld", (Py_ssize_t)i,
                         (long long)x[i]);
            return NULL;
        }
        lam[i] = (int)x[i];
    }
    return lam;
}

/* Leading size of a batched input: 1 or B. */
int lead_ok(PyArrayObject *a, npy_intp B, const char *name)
{
    const npy_intp b = PyArray_DIM(a, 0);
    if (b != 1 && b != B) {
        PyErr_Format(PyExc_ValueError, "%s: batch size %zd, expected 1 or %zd", name, (Py_ssize_t)b, (Py_ssize_t)B);
        return 0;
    }
    return 1;
}

/* The error of an output that overflowed (outputs_finite in py_boundary.h found one): a
 * ResultOverflowError naming the function, and the first such state of a batch. */
int outputs_overflowed(const job *j, int batch, Py_ssize_t N)
{
    Py_ssize_t n = 0;
    for (; n < N - 1; n++) {
        int ok = 1;
        for (int k = 0; k < j->n_out; k++)
            ok &= !j->out[k] || mb_gate_finite(OUT(j, k, n), j->ostep[k]);
        if (!ok)
            break;
    }
    if (batch)
        PyErr_Format(ResultOverflowError, "%s: the result overflowed (inf or NaN) from finite inputs at state %zd; "
                     "the inputs are too large (or a mass or inertia too small to divide by)", j->name, n);
    else
        PyErr_Format(ResultOverflowError, "%s: the result overflowed (inf or NaN) from finite inputs; the inputs "
                     "are too large (or a mass or inertia too small to divide by)", j->name);
    return 0;
}

/* gate(name, x) -> x as the kernels read it (the Python faces' conversion, _boundary.as_batch). */
PyObject *py_gate(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 2, "gate"))
        return NULL;
    const char *name = PyUnicode_AsUTF8(args[0]);
    return name ? (PyObject *)mb_gate(args[1], name, NPY_DOUBLE, 0) : NULL;
}

/* ---- scalars --------------------------------------------------------------------------------- */

int get_long(PyObject *o, const char *name, long lo, long hi, long *out)
{
    const long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return 0;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s: expected an integer in %ld..%ld, got %ld", name, lo, hi, v);
        return 0;
    }
    *out = v;
    return 1;
}

int get_double(PyObject *o, const char *name, double lo, int allow_lo, double *out)
{
    const double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return 0;
    if (!isfinite(v) || v < lo || (v == lo && !allow_lo)) {
        char bound[32];  /* (PyErr_Format has no %g: it printed "%g" itself) */
        snprintf(bound, sizeof bound, "%g", lo);
        PyErr_Format(PyExc_ValueError, "%s: expected a finite number %s %s", name, allow_lo ? ">=" : ">", bound);
        return 0;
    }
    *out = v;
    return 1;
}

int finite_array(PyArrayObject *a, const char *name)
{
    if (!mb_all_finite(PyArray_DATA(a), PyArray_SIZE(a))) {
        PyErr_Format(PyExc_ValueError, "%s: contains NaN or inf", name);
        return 0;
    }
    return 1;
}

