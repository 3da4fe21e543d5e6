/* gate.h — the one array gate: every array argument of the C core (py_*.c) and of the modules
 * multibody.codegen.compile builds passes through mb_gate before a kernel reads it.
 *
 * Header-only (static inline), so that a generated module, compiled on the user's machine with
 * `-I` to this folder, applies the same rules as the core.  Include <Python.h> and
 * <numpy/arrayobject.h> first.
 *
 * The rules (tests/test_gate.py holds one test per rule):
 *   - None is not an array: TypeError naming the argument (optional arguments are the
 *     caller's business, before the gate);
 *   - numbers only: bool, integer and real arrays are converted; complex (the imaginary part
 *     would be dropped), object, string, date and structured arrays are a TypeError; masked
 *     arrays are a TypeError (the kernels would read the values under the mask);
 *   - what a kernel reads is native byte order, aligned and C-contiguous: anything else ('>f8',
 *     a field of a packed structured array, a strided view) is copied into such an array;
 *   - an output the caller gives (MB_GATE_WRITABLE) is never copied: it must already be a
 *     writable array as the kernel writes it, or it is a ValueError.
 * A float64 array that already is what the kernel reads passes with one type check and one
 * flag test (the single-call fast path).  Shapes are the caller's: the gate checks kinds and
 * layout, never sizes.  mb_gate_finite checks a result the same way everywhere. */
#ifndef MB_GATE_H
#define MB_GATE_H

#include <math.h>
#include <string.h>

enum { MB_GATE_WRITABLE = 1 };

/* Is o an exact ndarray of `type` the kernel can read (or write) in place? */
static inline int mb_gate_ready(PyObject *o, int type, int flags)
{
    if (!PyArray_CheckExact(o))
        return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    const int need = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | (flags & MB_GATE_WRITABLE ? NPY_ARRAY_WRITEABLE : 0);
    return PyArray_TYPE(a) == type && (PyArray_FLAGS(a) & need) == need && PyArray_ISNOTSWAPPED(a);
}

static inline const char *mb_gate_type_name(int type)
{
    return type == NPY_DOUBLE ? "float64" : type == NPY_INT64 ? "int64" : type == NPY_BOOL ? "bool" : "numeric";
}

/* numpy.ma.MaskedArray, looked up once (the GIL serialises the lookup). */
static inline int mb_gate_is_masked(PyObject *o)
{
    static PyObject *masked_type;
    if (!masked_type) {
        PyObject *ma = PyImport_ImportModule("numpy.ma");
        masked_type = ma ? PyObject_GetAttrString(ma, "MaskedArray") : NULL;
        Py_XDECREF(ma);
        if (!masked_type) {
            PyErr_Clear();
            return 0;
        }
    }
    const int is = PyObject_IsInstance(o, masked_type);
    if (is < 0)
        PyErr_Clear();
    return is > 0;
}

/* Does an array of kind `kind` ('b' bool, 'i'/'u' integers, 'f' reals, …) convert to `type`
 * without losing meaning?  Reals to integers would truncate; everything to bool would too. */
static inline int mb_gate_kind_ok(char kind, int type)
{
    if (type == NPY_BOOL)
        return kind == 'b';
    if (type == NPY_DOUBLE)
        return kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f';
    return kind == 'b' || kind == 'i' || kind == 'u';
}

/* The slow path: convert o (any array-like) to a native, aligned, C-contiguous array of `type`. */
static inline PyArrayObject *mb_gate_convert(PyObject *o, const char *name, int type, int flags)
{
    if (o == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: expected an array of numbers, got None", name);
        return NULL;
    }
    if (PyArray_Check(o) && !PyArray_CheckExact(o) && mb_gate_is_masked(o)) {
        PyErr_Format(PyExc_TypeError, "%s: masked arrays are not accepted (the kernels would read the masked "
                     "values); pass x.filled(value) or np.asarray(x)", name);
        return NULL;
    }
    if (flags & MB_GATE_WRITABLE) {
        PyErr_Format(PyExc_ValueError, "%s: expected a writable, aligned, C-contiguous %s array in native byte order",
                     name, mb_gate_type_name(type));
        return NULL;
    }
    PyArrayObject *natural = (PyArrayObject *)PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (!natural) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            return NULL;
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: expected an array of numbers (a rectangular nest of sequences)", name);
        return NULL;
    }
    const char kind = PyArray_DESCR(natural)->kind;
    if (!mb_gate_kind_ok(kind, type)) {
        if (kind == 'c')
            PyErr_Format(PyExc_TypeError, "%s: expected real numbers, got complex (the imaginary part would be "
                         "lost); pass x.real if that is meant", name);
        else if (kind == 'O')
            PyErr_Format(PyExc_TypeError, "%s: expected an array of numbers, got objects", name);
        else
            PyErr_Format(PyExc_TypeError, "%s: expected an array of %s, got dtype %S", name,
                         type == NPY_DOUBLE ? "numbers" : type == NPY_BOOL ? "booleans" : "integers",
                         (PyObject *)PyArray_DESCR(natural));
        Py_DECREF(natural);
        return NULL;
    }
    PyArray_Descr *want = PyArray_DescrFromType(type);  /* native byte order; stolen below */
    PyArrayObject *a = want ? (PyArrayObject *)PyArray_FromArray(natural, want, NPY_ARRAY_CARRAY_RO |
                                                                  NPY_ARRAY_FORCECAST) : NULL;
    Py_DECREF(natural);
    return a;
}

/* The gate: a new reference to o itself when the kernel can use it as it is, else to a converted
 * copy; NULL with a TypeError/ValueError naming the argument. */
static inline PyArrayObject *mb_gate(PyObject *o, const char *name, int type, int flags)
{
    if (mb_gate_ready(o, type, flags)) {
        Py_INCREF(o);
        return (PyArrayObject *)o;
    }
    return mb_gate_convert(o, name, type, flags);
}

/* 1 if every one of the n numbers is finite.  Sums them in eight vectors of two doubles (the
 * baseline vector of x86-64 and ARM, so no spill; eight independent sums keep both adders
 * busy): inf or NaN anywhere makes the sum non-finite; so may an overflow of the sum itself,
 * which the exact test below then tells apart.  A result check costs little next to the kernel
 * that wrote the result (a 39-joint CRBA: 1 521 numbers, about 0.1 µs). */
typedef double mb_gate_v2 __attribute__((vector_size(16)));

static inline int mb_gate_finite(const double *x, Py_ssize_t n)
{
    double sum = 0.0;
    Py_ssize_t k = 0;
    if (n >= 32) {
        mb_gate_v2 s[8] = {{0.0, 0.0}};
        for (; k + 16 <= n; k += 16)
            for (int l = 0; l < 8; l++) {
                mb_gate_v2 v;
                memcpy(&v, x + k + 2 * l, sizeof v);
                s[l] += v;
            }
        for (int l = 1; l < 8; l++)
            s[0] += s[l];
        sum = s[0][0] + s[0][1];
    }
    for (; k < n; k++)
        sum += x[k];
    if (isfinite(sum))
        return 1;
    for (k = 0; k < n; k++)  /* inf or NaN, or finite numbers whose sum overflowed */
        if (!isfinite(x[k]))
            return 0;
    return 1;
}

#endif
