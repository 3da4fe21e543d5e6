/* py_gate.c — Arguments of the entry points: array layouts, shapes and scalar ranges, each error naming
 * the argument. */
#include "py_boundary.h"

/* ------------------------------------------------------------------------------------------ */
/* Argument layouts                                                                              */

/* Is o a float64, aligned C-contiguous array with `extra` leading dimensions (0 single, 1 batch)
 * and the trailing shape (t0[, t1])?  Sets *lead to the leading size (1 for single). */
int layout_ok(PyObject *o, int extra, int tail_nd, npy_intp t0, npy_intp t1, npy_intp *lead)
{
    if (!PyArray_Check(o))
        return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) ||
        PyArray_NDIM(a) != extra + tail_nd)
        return 0;
    const npy_intp *s = PyArray_DIMS(a);
    if (s[extra] != t0 || (tail_nd == 2 && s[extra + 1] != t1))
        return 0;
    *lead = extra ? s[0] : 1;
    return 1;
}

/* Fill a job's inputs from specs (obj NULL or None = absent, pointer left NULL).  Returns 1 and
 * the batch size N (0 in single mode), 0 for "not this layout" (caller returns None), -1 on error. */
int bind_inputs(arg_spec *specs, int count, job *j, Py_ssize_t *N, int *batch)
{
    if (!PyArray_Check(specs[0].obj))
        return 0;
    const int extra = PyArray_NDIM((PyArrayObject *)specs[0].obj) - specs[0].tail_nd;
    if (extra != 0 && extra != 1)
        return 0;
    npy_intp lead[MAX_IN], n = 1;
    for (int k = 0; k < count; k++) {
        if (!specs[k].obj || specs[k].obj == Py_None) {
            j->in[k] = NULL;
            lead[k] = 1;
            continue;
        }
        if (!layout_ok(specs[k].obj, extra, specs[k].tail_nd, specs[k].t0, specs[k].t1, &lead[k]))
            return 0;
        if (lead[k] != 1) {
            if (n != 1 && lead[k] != n) {
                PyErr_SetString(PyExc_ValueError, "batch dimensions do not match");
                return -1;
            }
            n = lead[k];
        }
    }
    for (int k = 0; k < count; k++) {
        if (!specs[k].obj || specs[k].obj == Py_None)
            continue;
        j->in[k] = PyArray_DATA((PyArrayObject *)specs[k].obj);
        j->step[k] = lead[k] == 1 ? 0 : specs[k].t0 * (specs[k].tail_nd == 2 ? specs[k].t1 : 1);
    }
    *batch = extra;
    *N = extra ? n : 1;
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

/* o must be a C-contiguous aligned array of `type` with ndim dims; dims[k] ≥ 0 must match, −1
 * accepts any size (returned in dims).  Writable when `out`. */
PyArrayObject *strict_array(PyObject *o, const char *name, int type, int ndim, npy_intp *dims, int out)
{
    if (!PyArray_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a NumPy array", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != type || PyArray_NDIM(a) != ndim || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) ||
        (out && !PyArray_ISWRITEABLE(a))) {
        PyErr_Format(PyExc_ValueError, "%s: expected a %s%s C-contiguous %d-D array", name, out ? "writable " : "",
                     type == NPY_DOUBLE ? "float64" : "int64", ndim);
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
int *lam_ints(PyObject *o, npy_intp n)
{
    npy_intp dims[1] = {n};
    PyArrayObject *a = strict_array(o, "lam", NPY_INT64, 1, dims, 0);
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
        PyErr_Format(PyExc_ValueError, "%s: expected a finite number %s %g", name, allow_lo ? ">=" : ">", lo);
        return 0;
    }
    *out = v;
    return 1;
}

int finite_array(PyArrayObject *a, const char *name)
{
    if (!all_finite(PyArray_DATA(a), PyArray_SIZE(a))) {
        PyErr_Format(PyExc_ValueError, "%s: contains NaN or inf", name);
        return 0;
    }
    return 1;
}

/* A float64 vector of length n from any array-like (new reference), or NULL with a named error. */
PyArrayObject *double_vector(PyObject *o, const char *name, npy_intp n)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: expected %zd numbers", name, (Py_ssize_t)n);
        return NULL;
    }
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd numbers (shape (%zd,)), got a %d-D array of size %zd", name,
                     (Py_ssize_t)n, (Py_ssize_t)n, PyArray_NDIM(a), (Py_ssize_t)PyArray_SIZE(a));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* A float64 C-contiguous array of ndim dims (−1: any) from any array-like (new reference). */
PyArrayObject *double_array(PyObject *o, const char *name, int ndim, npy_intp d0, npy_intp d1)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: expected an array of numbers", name);
        return NULL;
    }
    const npy_intp want[2] = {d0, d1};
    int ok = PyArray_NDIM(a) == ndim;
    for (int k = 0; ok && k < ndim; k++)
        ok = want[k] < 0 || PyArray_DIM(a, k) == want[k];
    if (!ok) {
        if (ndim == 1)
            PyErr_Format(PyExc_ValueError, "%s: expected shape (%zd,), got a %d-D array of size %zd", name,
                         (Py_ssize_t)d0, PyArray_NDIM(a), (Py_ssize_t)PyArray_SIZE(a));
        else
            PyErr_Format(PyExc_ValueError, "%s: expected a 2-D array with %zd rows and %zd columns (-1: any), got a "
                         "%d-D array", name, (Py_ssize_t)d0, (Py_ssize_t)d1, PyArray_NDIM(a));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}
